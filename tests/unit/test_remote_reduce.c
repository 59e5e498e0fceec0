/* SPDX-License-Identifier: Apache-2.0 */
/* pld_remote_reduce: acc = acc op (a region of a peer's window), in one pass. */
#include <criterion/criterion.h>
#include <pld/pld.h>
#include <string.h>

typedef struct rr {
    pld_dtensor data, sig;
    int kind;
    pld_reduce_op op;
} rr;

static float val(int r, int j)
{
    return (float)((r * 5 + j) % 7 - 3);
}

static void kernel(pld_ctx *c, void *p)
{
    rr *a = p;
    int me = pld_rank(c), n = pld_nranks(c);
    float *mine = pld_local(c, a->data).data;
    for (int j = 0; j < 32; j++)
        mine[me * 32 + j] = val(me, j);
    pld_barrier(c, a->sig);
    pld_tile *acc = pld_tile_create(c, PLD_FP32, 1, 32);
    float *v = pld_tile_data(acc);
    switch (a->kind) {
    case 0: { /* reduce every rank's row (mine included) with op */
        for (int j = 0; j < 32; j++)
            v[j] = val(0, j);
        for (int peer = 1; peer < n; peer++)
            pld_remote_reduce(c, acc, a->data, peer, PLD_IDX(peer, 0), a->op);
        for (int j = 0; j < 32; j++) {
            float e = val(0, j);
            for (int r = 1; r < n; r++) {
                float x = val(r, j);
                e = a->op == PLD_SUM   ? e + x
                    : a->op == PLD_MAX ? (x > e ? x : e)
                    : a->op == PLD_MIN ? (x < e ? x : e)
                                       : e * x;
            }
            if (v[j] != e)
                pld_fail(c, "op %d col %d: got %g want %g", (int)a->op, j, v[j], e);
        }
        /* rows 1..n-1 were reduced; the one that is this rank's own is a self read */
        pld_counters k = pld_ctx_counters(c);
        uint64_t others = (uint64_t)(n - 1 - (me != 0));
        if (k.bytes_from_peers != others * 32 * 4 || k.bytes_self != (me != 0) * 32u * 4u)
            pld_fail(c, "bytes_from_peers %llu, bytes_self %llu",
                     (unsigned long long)k.bytes_from_peers, (unsigned long long)k.bytes_self);
        break;
    }
    case 1: /* outside the window */
        pld_remote_reduce(c, acc, a->data, (me + 1) % n, PLD_IDX(n, 0), PLD_SUM);
        break;
    case 2: /* not a reduce op */
        pld_remote_reduce(c, acc, a->data, 0, PLD_IDX(0, 0), (pld_reduce_op)9);
        break;
    case 3: /* tile dtype differs from the window's */
        pld_remote_reduce(c, pld_tile_create(c, PLD_INT32, 1, 32), a->data, 0, PLD_IDX(0, 0),
                          PLD_SUM);
        break;
    }
    pld_barrier(c, a->sig);
}

static pld_status run(int kind, pld_reduce_op op, pld_world **out)
{
    pld_config cfg = {.devices = "0-3"};
    pld_world *w;
    cr_assert_eq(pld_world_init(&w, &cfg), PLD_OK);
    rr *a = pld_host_alloc(w, sizeof *a);
    pld_window_buffer *db, *sb;
    cr_assert_eq(pld_alloc_window_buffer(w, 4 * 32 * 4, "data", &db), PLD_OK);
    cr_assert_eq(pld_window(db, PLD_FP32, 2, PLD_IDX(4, 32), &a->data), PLD_OK);
    cr_assert_eq(pld_alloc_window_buffer(w, 16, "sig", &sb), PLD_OK);
    cr_assert_eq(pld_window(sb, PLD_INT32, 2, PLD_IDX(4, 1), &a->sig), PLD_OK);
    a->kind = kind;
    a->op = op;
    *out = w;
    return pld_launch(w, kernel, a);
}

Test(remote_reduce, every_op, .timeout = 30)
{
    for (int op = PLD_SUM; op <= PLD_PROD; op++) {
        pld_world *w;
        pld_status st = run(0, (pld_reduce_op)op, &w);
        cr_assert_eq(st, PLD_OK, "op %d: %s", op, pld_world_error(w));
        pld_world_finalize(w);
    }
}

static void expect(int kind, pld_status want, const char *needle)
{
    pld_world *w;
    pld_status st = run(kind, PLD_SUM, &w);
    cr_assert_eq(st, want, "%s: %s", pld_status_name(st), pld_world_error(w));
    cr_assert(strstr(pld_world_error(w), needle), "%s", pld_world_error(w));
    pld_world_finalize(w);
}

Test(remote_reduce, outside_the_window)
{
    expect(1, PLD_ERR_BOUNDS,
           "pld_remote_reduce: src region [4,0]+[1,32] is outside window 'data' [4,32]");
}
Test(remote_reduce, bad_op)
{
    expect(2, PLD_ERR_ARG, "op 9 is not a pld_reduce_op");
}
Test(remote_reduce, dtype_mismatch)
{
    expect(3, PLD_ERR_ARG, "is int32 but window 'data' is fp32");
}
