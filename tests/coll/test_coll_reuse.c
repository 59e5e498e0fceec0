/* SPDX-License-Identifier: Apache-2.0 */
/* Back-to-back reuse (the ordering guarantee G): one signal buffer -- seen as [P,1] for the
 * credit barrier and [2(P-1),P] for the ring -- serves 1000 mixed builtin
 * calls at P = 3 (bf16 reductions, allreduce ring included), every result is
 * checked against a plain C reference, and the signal is all-zero on every
 * rank afterwards.
 *
 * No pld_barrier between the calls: the ordering guarantee (G) says that
 * when a rank starts call k+1, every rank has entered call k, so each rank
 * reads the results of a call right after it returns and then restages for
 * the next one. That holds because every kind writes windows of its own and
 * no kind runs twice in a row. The schedule puts a broadcast between two
 * calls of each push builtin (allgather, in place, all_to_all, all_to_all_v),
 * where a rank that left the broadcast early would push its next rows into
 * a window a slower peer still checks. */
#define _POSIX_C_SOURCE 200809L /* sched_yield */

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "coll_util.h"

#define S 67 /* odd */
#define M 3

enum { C_BARRIER, C_BCAST, C_AG, C_AG_INPLACE, C_RS, C_MESH, C_RING, C_A2A, C_A2AV, C_N };
static const char *const cname[] = {"barrier",           "broadcast",      "allgather",
                                    "allgather_inplace", "reduce_scatter", "allreduce mesh",
                                    "allreduce ring",    "all_to_all",     "all_to_all_v"};

/* One cycle of the call sequence: every kind, never the same twice in a row
 * (the last entry differs from the first too). */
static const int sched[] = {C_AG,      C_BCAST, C_AG,   C_AG_INPLACE, C_BCAST, C_AG_INPLACE,
                            C_A2A,     C_BCAST, C_A2A,  C_A2AV,       C_BCAST, C_A2AV,
                            C_BARRIER, C_RS,    C_MESH, C_RING};
#define NSCHED ((int)(sizeof sched / sizeof sched[0]))

typedef struct mix {
    pld_dtensor sig, ring;           /* two views of one buffer */
    pld_dtensor rs, mesh, ring_data; /* bf16 [P,S], one window per kind */
    pld_dtensor ag, agi, a2a;        /* int8 [P,S], one window per kind */
    pld_dtensor a2av;                /* int8 [P*M,S] */
    pld_dtensor bdata;               /* fp32 [S]: broadcast */
    pld_dtensor rc;                  /* recv_counts [P,1] */
    int iters;
} mix;

static void check_bf16(pld_ctx *c, int it, const char *what, const void *d, int64_t i, double want)
{
    double got = tu_get(PLD_BF16, d, i);
    if (got != want)
        pld_fail(c, "golden mismatch: call %d %s: rank %d element %lld = %g, expected %g", it, what,
                 pld_rank(c), (long long)i, got, want);
}

static void k_mix(pld_ctx *c, void *arg)
{
    mix *a = arg;
    int me = pld_rank(c), p = pld_nranks(c);
    char what[96];
    int8_t in[8 * M * S];
    int32_t counts[8];
    for (int it = 0; it < a->iters; it++) {
        int which = sched[it % NSCHED];
        pld_reduce_op op = (pld_reduce_op)((it / NSCHED) % 4);
        int salt = it + 1;
        switch (which) {
        case C_BARRIER:
            pld_barrier(c, a->sig);
            break;
        case C_BCAST: {
            int root = (it + it / NSCHED) % p;
            void *d = pld_local(c, a->bdata).data;
            uint32_t tag = cu_tag(root, CU_ALL, salt);
            if (me == root)
                cu_fill(d, S * 4, tag, 0);
            pld_broadcast(c, a->bdata, a->sig, root);
            cu_kcheck_bytes(c, "broadcast", d, S * 4, tag, 0);
            break;
        }
        case C_AG:
        case C_AG_INPLACE: {
            pld_dtensor t = which == C_AG ? a->ag : a->agi;
            char *rows = pld_local(c, t).data;
            if (which == C_AG) {
                cu_fill(in, S, cu_tag(me, CU_ALL, salt), 0);
                pld_allgather(c, pld_tensor_make(in, PLD_INT8, 2, PLD_IDX(1, S)), t, a->sig);
            } else {
                cu_fill(rows + me * S, S, cu_tag(me, CU_ALL, salt), 0);
                pld_allgather_inplace(c, t, a->sig);
            }
            if ((it + me) % 3 == 0)
                sched_yield(); /* a slower reader */
            for (int r = 0; r < p; r++) {
                snprintf(what, sizeof what, "call %d %s row %d", it, cname[which], r);
                cu_kcheck_bytes(c, what, rows + r * S, S, cu_tag(r, CU_ALL, salt), 0);
            }
            break;
        }
        case C_RS: {
            void *red = pld_local(c, a->rs).data;
            for (int64_t i = 0; i < p * S; i++)
                tu_set(PLD_BF16, red, i, cu_rval(me, i + it, PLD_SUM, p));
            pld_reduce_scatter(c, a->rs, a->sig, PLD_SUM);
            for (int64_t j = 0; j < S; j++)
                check_bf16(c, it, cname[which], red, me * S + j,
                           cu_ref(p, me * S + j + it, PLD_SUM));
            break;
        }
        case C_MESH:
        case C_RING: {
            pld_dtensor t = which == C_MESH ? a->mesh : a->ring_data;
            void *red = pld_local(c, t).data;
            for (int64_t i = 0; i < p * S; i++)
                tu_set(PLD_BF16, red, i, cu_rval(me, i + it, op, p));
            pld_allreduce(c, t, which == C_MESH ? a->sig : a->ring, op,
                          which == C_MESH ? PLD_MESH : PLD_RING);
            for (int64_t i = 0; i < p * S; i++)
                check_bf16(c, it, cname[which], red, i, cu_ref(p, i + it, op));
            break;
        }
        case C_A2A: {
            char *rows = pld_local(c, a->a2a).data;
            for (int d = 0; d < p; d++)
                cu_fill(in + d * S, S, cu_tag(me, d, salt), 0);
            pld_all_to_all(c, pld_tensor_make(in, PLD_INT8, 2, PLD_IDX(p, S)), a->a2a, a->sig);
            if ((it + me) % 3 == 0)
                sched_yield();
            for (int s = 0; s < p; s++) {
                snprintf(what, sizeof what, "call %d all_to_all row %d", it, s);
                cu_kcheck_bytes(c, what, rows + s * S, S, cu_tag(s, me, salt), 0);
            }
            break;
        }
        case C_A2AV: {
            char *rows = pld_local(c, a->a2av).data;
            int32_t *rc = pld_local(c, a->rc).data;
            for (int d = 0; d < p; d++) {
                cu_fill(in + d * M * S, M * S, cu_tag(me, d, salt), 0);
                counts[d] = (me + d + it) % (M + 2);
            }
            pld_all_to_all_v(c, pld_tensor_make(in, PLD_INT8, 2, PLD_IDX(p * M, S)), a->a2av,
                             a->sig, pld_tensor_make(counts, PLD_INT32, 1, PLD_IDX(p)), a->rc);
            if ((it + me) % 3 == 0)
                sched_yield();
            for (int s = 0; s < p; s++) {
                int want = (s + me + it) % (M + 2);
                want = want > M ? M : want;
                if (rc[s] != want)
                    pld_fail(c, "call %d all_to_all_v: rank %d recv_counts[%d] = %d, expected %d",
                             it, me, s, rc[s], want);
                snprintf(what, sizeof what, "call %d all_to_all_v block %d", it, s);
                cu_kcheck_bytes(c, what, rows + s * M * S, (size_t)want * S, cu_tag(s, me, salt),
                                0);
            }
            break;
        }
        }
        /* no barrier: the next call restages right away */
    }
}

static void reuse(int p, int iters, unsigned check)
{
    pld_config cfg;
    memset(&cfg, 0, sizeof cfg);
    char devices[16];
    snprintf(devices, sizeof devices, p == 1 ? "0" : "0-%d", p - 1);
    cfg.devices = devices;
    cfg.check = check;
    pld_world *w = tu_world_cfg(&cfg);
    mix *a = cu_alloc(w, sizeof *a);
    int64_t rr = p > 1 ? 2 * (p - 1) : 1;
    pld_dtensor whole = tu_window(w, "sig", PLD_INT32, 2, PLD_IDX(rr, p));
    cr_assert_eq(pld_window(whole.buf, PLD_INT32, 2, PLD_IDX(p, 1), &a->sig), PLD_OK);
    a->ring = p > 1 ? whole : a->sig;
    a->rs = tu_window(w, "reduce_scatter", PLD_BF16, 2, PLD_IDX(p, S));
    a->mesh = tu_window(w, "allreduce_mesh", PLD_BF16, 2, PLD_IDX(p, S));
    a->ring_data = tu_window(w, "allreduce_ring", PLD_BF16, 2, PLD_IDX(p, S));
    a->ag = tu_window(w, "allgather", PLD_INT8, 2, PLD_IDX(p, S));
    a->agi = tu_window(w, "allgather_inplace", PLD_INT8, 2, PLD_IDX(p, S));
    a->a2a = tu_window(w, "all_to_all", PLD_INT8, 2, PLD_IDX(p, S));
    a->a2av = tu_window(w, "all_to_all_v", PLD_INT8, 2, PLD_IDX(p * M, S));
    a->bdata = tu_window(w, "bdata", PLD_FP32, 1, PLD_IDX(S));
    a->rc = tu_window(w, "recv_counts", PLD_INT32, 2, PLD_IDX(p, 1));
    a->iters = iters;
    pld_status st = pld_launch(w, k_mix, a);
    cr_assert_eq(st, PLD_OK, "P=%d, %d mixed calls on one signal: %s: %s", p, iters,
                 pld_status_name(st), pld_world_error(w));
    cu_assert_signal_zero(w, whole);
    /* and again in a second launch: nothing leaked across launches either */
    a->iters = NSCHED * 3;
    TU_LAUNCH_OK(w, k_mix, a);
    cu_assert_signal_zero(w, whole);
    cu_finalize(w);
}

Test(reuse, thousand_mixed_calls_one_signal_bf16_ring_p3, .timeout = 120)
{
    reuse(3, 1000, 0);
}
Test(reuse, mixed_calls_one_signal_p1, .timeout = 60)
{
    reuse(1, 2 * NSCHED, 0);
}
Test(reuse, mixed_calls_signal_checked_p4, .timeout = 120)
{
    reuse(4, 20 * NSCHED, PLD_CHECK_SIGNALS);
}
