/* SPDX-License-Identifier: Apache-2.0 */
/* PLD_TRACE / cfg.trace_path: a Chrome trace with one track per rank (and
 * per core), one slice per primitive, builtins as enclosing slices. */
#include <criterion/criterion.h>
#include <pld/pld.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

typedef struct targs {
    pld_dtensor sig, data;
} targs;

static void kernel(pld_ctx *c, void *p)
{
    targs *a = p;
    pld_barrier(c, a->sig);
    pld_allreduce_cores(c, a->data, a->sig, PLD_SUM, PLD_MESH, pld_nranks(c) == 3 ? 2 : 1);
}

static void run(const char *transport)
{
    char path[] = "/tmp/pld-trace-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    pld_config cfg = {.devices = "0-2", .transport = transport, .trace_path = path};
    pld_world *w;
    cr_assert_eq(pld_world_init(&w, &cfg), PLD_OK, "%s", pld_last_error());
    targs *a = pld_host_alloc(w, sizeof *a);
    pld_window_buffer *sb, *db;
    cr_assert_eq(pld_alloc_window_buffer(w, 3 * 2 * 4, "sig", &sb), PLD_OK);
    cr_assert_eq(pld_window(sb, PLD_INT32, 2, PLD_IDX(3, 2), &a->sig), PLD_OK);
    cr_assert_eq(pld_alloc_window_buffer(w, 4096 * 4, "data", &db), PLD_OK);
    cr_assert_eq(pld_window(db, PLD_FP32, 1, PLD_IDX(4096), &a->data), PLD_OK);
    cr_assert_eq(pld_launch(w, kernel, a), PLD_OK, "%s", pld_world_error(w));
    cr_assert_eq(pld_launch(w, kernel, a), PLD_OK, "%s", pld_world_error(w));
    char *s = tu_slurp(path, "trace");
    cr_assert(strncmp(s, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", 38) == 0, "%.80s", s);
    cr_assert(strstr(s, "\"name\":\"rank 2 (device 2)\""), "track names");
    /* builtins enclose their primitives; every rank and the second core have a track */
    for (int tid = 0; tid < 3; tid++) {
        char want[96];
        snprintf(want, sizeof want, "\"name\":\"pld_barrier\",\"ph\":\"X\",\"pid\":0,\"tid\":%d,",
                 tid * 1000);
        cr_assert(strstr(s, want), "no barrier slice for rank %d", tid);
        snprintf(want, sizeof want,
                 "\"name\":\"pld_remote_reduce\",\"ph\":\"X\",\"pid\":0,\"tid\":%d,",
                 tid * 1000 + 1);
        cr_assert(strstr(s, want), "no remote_reduce slice on core 1 of rank %d", tid);
    }
    cr_assert(strstr(s, "\"args\":{\"bytes\":"), "transfers carry their bytes");
    /* two launches: both are in the file */
    int barriers = 0;
    for (const char *p = s; (p = strstr(p, "\"name\":\"pld_barrier\"")); p++)
        barriers++;
    cr_assert_eq(barriers, 2 * 3, "one barrier per rank per launch, got %d", barriers);
    cr_assert(strcmp(s + strlen(s) - 4, "\n]}\n") == 0, "the JSON is closed");
    free(s);
    pld_world_finalize(w);
    char part[600];
    snprintf(part, sizeof part, "%s.part.0.0", path);
    cr_assert_neq(access(part, F_OK), 0, "part files are removed");
    unlink(path);
}

Test(trace, thread_transport, .timeout = 60)
{
    run("thread");
}
Test(trace, process_transport, .timeout = 60)
{
    run("process");
}

/* The URMA queue model appears in the trace: one urma.send slice per peer. */
typedef struct dargs {
    pld_dtensor target, sig, counts;
    float input[2][26 * 4];
    int32_t index[2][2 * 26], recv[2][2];
} dargs;

static void dispatch(pld_ctx *c, void *p)
{
    dargs *a = p;
    int r = pld_rank(c);
    pld_indexed_all_to_all_v(c, pld_tensor_make(a->input[r], PLD_FP32, 2, PLD_IDX(26, 4)),
                             a->target, a->sig, a->counts,
                             pld_tensor_make(a->recv[r], PLD_INT32, 2, PLD_IDX(2, 1)),
                             pld_tensor_make(a->index[r], PLD_INT32, 2, PLD_IDX(2, 26)), 1);
}

Test(trace, urma_sends, .timeout = 60)
{
    char path[] = "/tmp/pld-trace-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    pld_config cfg = {.devices = "0,1", .platform = "a5sim", .trace_path = path};
    pld_world *w;
    cr_assert_eq(pld_world_init(&w, &cfg), PLD_OK, "%s", pld_last_error());
    dargs *a = pld_host_alloc(w, sizeof *a);
    pld_window_buffer *tb, *sb, *cb;
    cr_assert_eq(pld_alloc_window_buffer(w, 2 * 26 * 4 * 4, "target", &tb), PLD_OK);
    cr_assert_eq(pld_window(tb, PLD_FP32, 2, PLD_IDX(52, 4), &a->target), PLD_OK);
    cr_assert_eq(pld_alloc_window_buffer(w, 8, "sig", &sb), PLD_OK);
    cr_assert_eq(pld_window(sb, PLD_INT32, 2, PLD_IDX(2, 1), &a->sig), PLD_OK);
    cr_assert_eq(pld_alloc_window_buffer(w, 8, "counts", &cb), PLD_OK);
    cr_assert_eq(pld_window(cb, PLD_INT32, 2, PLD_IDX(2, 1), &a->counts), PLD_OK);
    for (int r = 0; r < 2; r++) {
        pld_tensor t;
        cr_assert_eq(pld_window_host_view(w, a->counts, r, &t), PLD_OK);
        ((int32_t *)t.data)[1 - r] = 25; /* 25 rows to the peer: 3 SQEs */
        for (int j = 0; j < 25; j++)
            a->index[r][(1 - r) * 26 + j] = j;
    }
    cr_assert_eq(pld_launch(w, dispatch, a), PLD_OK, "%s", pld_world_error(w));
    char *s = tu_slurp(path, "trace");
    cr_assert(strstr(s, "\"name\":\"urma.send\"") &&
                  strstr(s, "\"args\":{\"peer\":1,\"rows\":25,\"sqes\":3,\"wqebbs\":12,\"nops\":3,"
                            "\"doorbells\":1,\"cqes\":1}"),
              "%s", s);
    free(s);
    pld_world_finalize(w);
    unlink(path);
}
