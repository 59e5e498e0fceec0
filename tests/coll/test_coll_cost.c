/* SPDX-License-Identifier: Apache-2.0 */
/* Cost cards: per rank, bytes_to_peers + bytes_from_peers of one
 * builtin call equal the card exactly at P = 2, 3, 4 and 8 (and are 0 at
 * P = 1), on several dtypes and a ragged row; all_to_all_v moves
 * (P-1)*M*S*elt whatever the counts; allgather_inplace skips the self copy
 * (bytes_self == 0) while allgather copies its own row (bytes_self = S*elt).
 * pld_barrier issues 2(P-1) notifies (P-1 credits out, P-1 epilogue
 * notifies to itself) and P-1 waits; one-round builtins wait P-1 times.
 * These are the credit rounds' cards: ctest runs the suite with
 * PLD_LL_BYTES=0 (test_coll.c checks both paths' cards). */
#include <stdio.h>
#include <stdlib.h>

#include "coll_util.h"

enum { AG, AG_INPLACE, A2A, A2AV, BCAST, RS, MESH, RING, BARRIER, NKIND };
static const char *const names[] = {"allgather",      "allgather_inplace", "all_to_all",
                                    "all_to_all_v",   "broadcast",         "reduce_scatter",
                                    "allreduce mesh", "allreduce ring",    "barrier"};

#define M 3

typedef struct cost {
    pld_dtensor rows, data, sig, ring, rc; /* rows: [P,S] (or [P*M,S]); data: flat [P*S] */
    int which;
    int64_t s;
    pld_dtype dt;
    int32_t counts[8];
    /* a rank's input, P*M*S elements at in + rank * stride: pld_host_alloc
     * memory (on the process transport a kernel's malloc is not a tensor) */
    unsigned char *in;
    size_t stride;
} cost;

static void k_cost(pld_ctx *c, void *arg)
{
    cost *a = arg;
    int p = pld_nranks(c);
    void *in = a->in + (size_t)pld_rank(c) * a->stride;
    switch (a->which) {
    case AG:
        pld_allgather(c, pld_tensor_make(in, a->dt, 2, PLD_IDX(1, a->s)), a->rows, a->sig);
        break;
    case AG_INPLACE:
        pld_allgather_inplace(c, a->rows, a->sig);
        break;
    case A2A:
        pld_all_to_all(c, pld_tensor_make(in, a->dt, 2, PLD_IDX(p, a->s)), a->rows, a->sig);
        break;
    case A2AV:
        pld_all_to_all_v(c, pld_tensor_make(in, a->dt, 2, PLD_IDX(p * M, a->s)), a->rows, a->sig,
                         pld_tensor_make(a->counts, PLD_INT32, 1, PLD_IDX(p)), a->rc);
        break;
    case BCAST:
        pld_broadcast(c, a->data, a->sig, p - 1);
        break;
    case RS:
        pld_reduce_scatter(c, a->rows, a->sig, PLD_SUM);
        break;
    case MESH:
        pld_allreduce(c, a->data, a->sig, PLD_SUM, PLD_MESH);
        break;
    case RING:
        pld_allreduce(c, a->data, a->ring, PLD_SUM, PLD_RING);
        break;
    case BARRIER:
        pld_barrier(c, a->sig);
        break;
    }
}

static void card(int p, int which, pld_dtype dt, int64_t s)
{
    pld_world *w = cu_world(p);
    cost *a = cu_alloc(w, sizeof *a);
    a->which = which;
    a->dt = dt;
    a->s = s;
    a->stride = (size_t)(p * M * s) * pld_dtype_size(dt);
    a->in = cu_alloc(w, a->stride * (size_t)p);
    int64_t rows = which == A2AV ? p * M : p;
    a->rows = tu_window(w, "rows", dt, 2, PLD_IDX(rows, s));
    a->data = tu_window(w, "data", dt, 1, PLD_IDX(p * s));
    a->rc = tu_window(w, "recv_counts", PLD_INT32, 2, PLD_IDX(p, 1));
    int64_t rr = p > 1 ? 2 * (p - 1) : 1;
    a->ring = tu_window(w, "sig", PLD_INT32, 2, PLD_IDX(rr, p));
    cr_assert_eq(pld_window(a->ring.buf, PLD_INT32, 2, PLD_IDX(p, 1), &a->sig), PLD_OK);
    if (p == 1)
        a->ring = a->sig;
    for (int d = 0; d < p; d++) /* counts: 0 .. M+1, the card does not depend on them */
        a->counts[d] = d % (M + 2);
    TU_LAUNCH_OK(w, k_cost, a);
    uint64_t elt = pld_dtype_size(dt), P = (uint64_t)p, row = (uint64_t)s * elt;
    uint64_t n = P * row; /* total payload N of a [P,S] window */
    uint64_t bmoved[8] = {0};
    for (int r = 0; r < p; r++) {
        pld_counters k;
        TU_ASSERT_STATUS(pld_rank_counters(w, r, &k), PLD_OK);
        uint64_t moved = k.bytes_to_peers + k.bytes_from_peers, want = 0;
        const char *card_text = "";
        switch (which) {
        case AG:
        case AG_INPLACE:
        case A2A:
        case RS:
            want = (P - 1) * n / P;
            card_text = "(P-1)/P*N";
            break;
        case A2AV:
            want = (P - 1) * M * row;
            card_text = "(P-1)*M*S*elt";
            break;
        case MESH:
            want = (P - 1) * n;
            card_text = "(P-1)*N";
            break;
        case RING:
            want = 2 * (P - 1) * n / P;
            card_text = "2(P-1)/P*N";
            break;
        case BARRIER:
            want = 0;
            card_text = "0";
            break;
        case BCAST: /* checked below, over all ranks */
            bmoved[r] = moved;
            want = moved;
            break;
        }
        cr_expect_eq(moved, want,
                     "%s %s S=%lld P=%d rank %d: bytes_to_peers %llu + bytes_from_peers %llu = "
                     "%llu, card %s = %llu",
                     names[which], pld_dtype_name(dt), (long long)s, p, r,
                     (unsigned long long)k.bytes_to_peers, (unsigned long long)k.bytes_from_peers,
                     (unsigned long long)moved, card_text, (unsigned long long)want);
        /* self copies are counted separately */
        if (which == AG || which == A2A)
            cr_expect_eq(k.bytes_self, row, "%s P=%d rank %d: bytes_self %llu, expected S*elt %llu",
                         names[which], p, r, (unsigned long long)k.bytes_self,
                         (unsigned long long)row);
        if (which == AG_INPLACE || which == BARRIER)
            cr_expect_eq(k.bytes_self, 0, "%s P=%d rank %d: bytes_self %llu, expected 0",
                         names[which], p, r, (unsigned long long)k.bytes_self);
        /* synchronisation: one round = P-1 waits; the barrier's notifies */
        if (which == BARRIER)
            cr_expect_eq(k.notifies, 2 * (P - 1),
                         "barrier P=%d rank %d: %llu notifies, expected 2(P-1) = %llu", p, r,
                         (unsigned long long)k.notifies, (unsigned long long)(2 * (P - 1)));
        if (which == BARRIER || which == AG || which == AG_INPLACE || which == A2A || which == A2AV)
            cr_expect_eq(k.waits, P - 1, "%s P=%d rank %d: %llu waits, expected P-1 = %llu",
                         names[which], p, r, (unsigned long long)k.waits,
                         (unsigned long long)(P - 1));
        if (which == BCAST || which == RS)
            cr_expect_leq(k.waits, 2 * (P - 1), "%s P=%d rank %d: %llu waits, at most 2 rounds",
                          names[which], p, r, (unsigned long long)k.waits);
        if (which == AG || which == AG_INPLACE || which == A2A || which == BARRIER)
            cr_expect_eq(k.notifies, 2 * (P - 1),
                         "%s P=%d rank %d: %llu notifies, expected P-1 credits + P-1 epilogue",
                         names[which], p, r, (unsigned long long)k.notifies);
    }
    if (which == BCAST && p > 1) {
        /* root p-1: pull = N per non-root, 0 at the root; push = (P-1)*N at the root */
        int pull = bmoved[p - 1] == 0, push = bmoved[p - 1] == (P - 1) * n;
        for (int r = 0; r < p - 1; r++) {
            pull = pull && bmoved[r] == n;
            push = push && bmoved[r] == 0;
        }
        for (int r = 0; r < p; r++)
            cr_expect(pull || push,
                      "broadcast %s P=%d N=%llu root %d: rank %d moved %llu bytes; the card is N "
                      "per non-root and 0 at the root (pull) or (P-1)*N at the root (push)",
                      pld_dtype_name(dt), p, (unsigned long long)n, p - 1, r,
                      (unsigned long long)bmoved[r]);
    }
    cu_assert_signal_zero(w, a->ring);
    cu_finalize(w);
}

static void cards(int p)
{
    static const pld_dtype dts[] = {PLD_FP32, PLD_BF16, PLD_INT8, PLD_INT64};
    for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++)
        for (int which = 0; which < NKIND; which++) {
            int reduces = which == RS || which == MESH || which == RING;
            if (reduces && (dts[k] == PLD_INT8 || dts[k] == PLD_INT64))
                continue; /* reductions are fp32/fp16/bf16/int32 only */
            card(p, which, dts[k], 24);
            card(p, which, dts[k], 1001); /* ragged, and chunked for int64 */
        }
}

Test(cost_card, every_builtin_p1_moves_nothing, .timeout = 60)
{
    cards(1);
}
Test(cost_card, every_builtin_p2, .timeout = 60)
{
    cards(2);
}
Test(cost_card, every_builtin_p3, .timeout = 60)
{
    cards(3);
}
Test(cost_card, every_builtin_p4, .timeout = 60)
{
    cards(4);
}
Test(cost_card, every_builtin_p8, .timeout = 60)
{
    cards(8);
}

/* A row larger than the UB is chunked; the card does not change. */
Test(cost_card, chunked_rows_keep_the_card, .timeout = 60)
{
    for (int which = 0; which < NKIND; which++)
        card(3, which, PLD_FP32, 100003);
}
