/* SPDX-License-Identifier: Apache-2.0 */
/* A plain (non-Criterion) stress program for the thread transport, so the
 * sanitizer builds can run it: Criterion's process arena cannot start under
 * ThreadSanitizer. Exercises every primitive, every builtin back to back on
 * one signal, kernel errors that abort a blocked group, and deadlock
 * detection, all on one world. Exits non-zero on any failure. */
#include <pld/pld.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct args {
    pld_dtensor sig, ring, data, tgt, lanes;
    int64_t s;
    int rounds;
} args;

static int val(int r, int64_t i)
{
    return (int)((r * 7 + i * 3) % 11) - 3;
}

static void expect(pld_ctx *c, int ok, const char *what, int64_t i)
{
    if (!ok)
        pld_fail(c, "%s: mismatch at %lld", what, (long long)i);
}

static void mixed(pld_ctx *c, void *p)
{
    args *a = p;
    int me = pld_rank(c), n = pld_nranks(c);
    int64_t s = a->s;
    float *in = calloc((size_t)(n * s), sizeof *in);
    float *d = pld_local(c, a->data).data, *t = pld_local(c, a->tgt).data;
    for (int it = 0; it < a->rounds; it++) {
        /* tile RMA: ring shift with an atomic add on top */
        pld_tile *tile = pld_tile_create(c, PLD_FP32, 1, s);
        float *tv = pld_tile_data(tile);
        for (int64_t j = 0; j < s; j++)
            tv[j] = (float)val(me, j);
        pld_remote_store(c, tile, a->tgt, (me + 1) % n, PLD_IDX(me, 0), PLD_ATOMIC_NONE);
        pld_barrier(c, a->sig);
        for (int64_t j = 0; j < s; j++)
            expect(c, t[((me + n - 1) % n) * s + j] == (float)val((me + n - 1) % n, j), "shift", j);
        pld_barrier(c, a->sig);
        pld_tile_free(c, tile);
        /* chunked, pipelined put of my row into every peer */
        for (int64_t j = 0; j < s; j++)
            in[j] = (float)(me * 100 + j % 50);
        for (int q = 0; q < n; q++) {
            pld_xfer x = {.dst_offsets = PLD_IDX(me, 0),
                          .src_offsets = PLD_IDX(0, 0),
                          .shape = PLD_IDX(1, s),
                          .chunk_rows = 1,
                          .chunk_cols = 7,
                          .pipeline = 1};
            pld_put(c, a->tgt, q, pld_tensor_make(in, PLD_FP32, 2, PLD_IDX(1, s)), &x);
        }
        pld_barrier(c, a->sig);
        for (int r = 0; r < n; r++)
            for (int64_t j = 0; j < s; j++)
                expect(c, t[r * s + j] == (float)(r * 100 + j % 50), "put", j);
        pld_barrier(c, a->sig);
        /* builtins */
        for (int64_t j = 0; j < n * s; j++)
            d[j] = (float)val(me, j);
        pld_allreduce(c, a->data, it % 2 ? a->ring : a->sig, PLD_SUM, it % 2 ? PLD_RING : PLD_MESH);
        for (int64_t j = 0; j < n * s; j++) {
            float e = 0;
            for (int r = 0; r < n; r++)
                e += (float)val(r, j);
            expect(c, d[j] == e, "allreduce", j);
        }
        pld_barrier(c, a->sig);
        for (int64_t j = 0; j < s; j++)
            in[j] = (float)(val(me, j) + it);
        pld_allgather(c, pld_tensor_make(in, PLD_FP32, 2, PLD_IDX(1, s)), a->tgt, a->sig);
        for (int r = 0; r < n; r++)
            for (int64_t j = 0; j < s; j++)
                expect(c, t[r * s + j] == (float)(val(r, j) + it), "allgather", j);
        pld_barrier(c, a->sig);
        for (int64_t j = 0; j < n * s; j++)
            d[j] = (float)val(me, j);
        /* the same on 3 cores per rank (threads of their own) */
        for (int64_t j = 0; j < n * s; j++)
            d[j] = (float)val(me, j);
        pld_allreduce_cores(c, a->data, a->lanes, PLD_SUM, PLD_MESH, 3);
        for (int64_t j = 0; j < n * s; j++) {
            float e = 0;
            for (int r = 0; r < n; r++)
                e += (float)val(r, j);
            expect(c, d[j] == e, "allreduce on 3 cores", j);
        }
        pld_barrier(c, a->sig);
        for (int64_t j = 0; j < n * s; j++)
            d[j] = (float)val(me, j);
        pld_reduce_scatter(c, a->data, a->sig, PLD_SUM);
        pld_broadcast(c, a->tgt, a->sig, it % n);
        pld_barrier(c, a->sig);
    }
    free(in);
}

static void fail_midway(pld_ctx *c, void *p)
{
    args *a = p;
    if (pld_rank(c) == pld_nranks(c) - 1)
        pld_notify(c, a->sig, pld_nranks(c), PLD_IDX(0, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
    pld_wait(c, a->sig, PLD_IDX(pld_rank(c), 0), 1, PLD_WAIT_GE); /* released by the abort */
}

static void deadlock(pld_ctx *c, void *p)
{
    args *a = p;
    pld_wait(c, a->sig, PLD_IDX(pld_rank(c), 0), 1, PLD_WAIT_EQ);
}

static int run(const char *devices, int rounds)
{
    pld_world *w;
    pld_config cfg = {.devices = devices};
    if (pld_world_init(&w, &cfg) != PLD_OK) {
        fprintf(stderr, "init: %s\n", pld_last_error());
        return 1;
    }
    int n = pld_world_size(w), bad = 0;
    int64_t rows = 2 * (n - 1) > n ? 2 * (n - 1) : n, s = 37;
    pld_window_buffer *sb, *db, *tb, *lb;
    args a = {.s = s, .rounds = rounds};
    pld_alloc_window_buffer(w, sizeof(int32_t) * (size_t)(rows * n), "sig", &sb);
    pld_window(sb, PLD_INT32, 2, PLD_IDX(n, 1), &a.sig);
    a.ring = a.sig;
    if (n > 1)
        pld_window(sb, PLD_INT32, 2, PLD_IDX(2 * (n - 1), n), &a.ring);
    pld_alloc_window_buffer(w, sizeof(int32_t) * (size_t)(n * 3), "lanes", &lb);
    pld_window(lb, PLD_INT32, 2, PLD_IDX(n, 3), &a.lanes);
    pld_alloc_window_buffer(w, sizeof(float) * (size_t)(n * s), "data", &db);
    pld_window(db, PLD_FP32, 2, PLD_IDX(n, s), &a.data);
    pld_alloc_window_buffer(w, sizeof(float) * (size_t)(n * s), "tgt", &tb);
    pld_window(tb, PLD_FP32, 2, PLD_IDX(n, s), &a.tgt);

    pld_status st = pld_launch(w, mixed, &a);
    if (st != PLD_OK) {
        fprintf(stderr, "P=%d mixed: %s: %s\n", n, pld_status_name(st), pld_world_error(w));
        bad = 1;
    }
    if (n > 1) {
        st = pld_launch(w, fail_midway, &a);
        if (st != PLD_ERR_ARG || !strstr(pld_world_error(w), "pld_notify")) {
            fprintf(stderr, "P=%d abort: %s: %s\n", n, pld_status_name(st), pld_world_error(w));
            bad = 1;
        }
        pld_window_buffer_reset(w, sb);
        st = pld_launch(w, deadlock, &a);
        if (st != PLD_ERR_DEADLOCK) {
            fprintf(stderr, "P=%d deadlock: %s: %s\n", n, pld_status_name(st), pld_world_error(w));
            bad = 1;
        }
        pld_window_buffer_reset(w, sb);
    }
    st = pld_launch(w, mixed, &a); /* the world still works */
    if (st != PLD_OK) {
        fprintf(stderr, "P=%d after failures: %s: %s\n", n, pld_status_name(st),
                pld_world_error(w));
        bad = 1;
    }
    pld_world_finalize(w);
    return bad;
}

int main(void)
{
    int bad = 0;
    bad |= run("0", 3);
    bad |= run("0,1", 20);
    bad |= run("0-2", 10);
    bad |= run("0-3", 10);
    bad |= run("0-7", 3);
    bad |= run("0-15", 2);
    printf(bad ? "FAILED\n" : "OK\n");
    return bad;
}
