/* SPDX-License-Identifier: Apache-2.0 */
/* The agreement check of builtin arguments, one field at a time.
 *
 * Every rank must call the same builtin with agreeing arguments; pld
 * compares each call's fingerprint with the left neighbour's after the
 * call's first round and ends a mismatch with PLD_ERR_ARG, naming both
 * ranks, the builtin, the field and both values:
 *
 *   rank 1 (device 1): pld_allreduce: data dtype int32 differs from rank 0's fp32
 *
 * Each case below launches kernels in which rank 1 disagrees with the others
 * in exactly one field, and checks the status and the whole sentence. The
 * sentence may come from either side of the disagreement (rank 1 against
 * rank 0, or rank 2 against rank 1; at P = 2 rank 0 against rank 1 too), so
 * every such pair is accepted, with the values in the matching order.
 *
 *   kind      allreduce vs allgather on one signal; barrier vs broadcast
 *   dtype     allreduce on fp32 vs int32 views of one window
 *   shape     allreduce [4,8] vs [4,9]; broadcast [4,8] vs [2,8]
 *   op        allreduce sum vs max
 *   mode      allreduce mesh (signal [P,1]) vs ring ([2(P-1),P] view of the
 *             same buffer: row 0 of the ring's cells is the mesh's column, so
 *             both sides finish a first round and compare)
 *   root      broadcast root 1 vs root 0
 *   m         all_to_all_v M = 2 vs M = 4 (two views of one target: [2P,2S]
 *             and [4P,S], so that the blocks pushed before the first round,
 *             and so before the check, land on distinct bytes)
 *   core_num  allreduce_cores 2 vs 1 on a [P,2] signal; indexed dispatch
 *             core_num 2 vs 1 (needs -p a5sim)
 *   signal    allreduce on two signal windows: no round ever completes, the
 *             deadlock is reported as the disagreement
 *   data      allreduce on two data windows of one shape
 *   order     rank 1 calls one extra pld_barrier before the others' allgather
 *   noargs    run with PLD_CHECK=noargs: the dtype mismatch is not PLD_ERR_ARG
 *   agree     48 mixed builtins with agreeing arguments and per-rank data
 *             (indexed dispatch with a different Nmax per rank): PLD_OK
 *
 * Plain C rather than Criterion, so that it runs under mpirun too:
 *
 *   agree_cases --case NAME [-p a5sim] [-d 0-2] [--transport thread|process|mpi]
 *
 * Prints OK from the root process when the case behaved as expected; else
 * says what was wrong and exits 1. */
#include <pld/pld.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ODD 1   /* the rank that disagrees */
#define S 8     /* row length of the gathered / exchanged rows */
#define MOE_C 4 /* dispatch slots per source */
#define MOE_H 4
#define MOE_NMAX 8 /* largest per-rank token count (4 + rank, at most P = 4 of them) */
#define MAXP 16

/* ---- the windows and what each launch runs --------------------------------------------- */

enum sub {
    SUB_ALLREDUCE_VS_ALLGATHER,
    SUB_BARRIER_VS_BROADCAST,
    SUB_DTYPE,
    SUB_SHAPE_ALLREDUCE,
    SUB_SHAPE_BROADCAST,
    SUB_OP,
    SUB_MODE,
    SUB_BCAST_MODE,
    SUB_AG_MODE,
    SUB_A2A_MODE,
    SUB_RAB_MODE,
    SUB_ROOT,
    SUB_M,
    SUB_CORES_ALLREDUCE,
    SUB_CORES_DISPATCH,
    SUB_SIGNAL,
    SUB_DATA,
    SUB_ORDER,
    SUB_AGREE,
    SUB_AFTER, /* everyone agrees: the world still works after the case */
};

typedef struct args {
    enum sub sub;
    int urma;                           /* the profile models URMA: indexed dispatch runs */
    pld_dtensor sig, ring, sig_b, sig2; /* sig [P,1] and ring [2(P-1),P] view one buffer */
    pld_dtensor data, data_i32, data_4x9, data_2x8, data2; /* data: fp32 [4,8] */
    pld_dtensor gather, a2a, rs;                           /* [P,S] */
    pld_dtensor a2av4, a2av2, a2av2_wide, recv_counts;     /* [4P,S], [2P,S], [2P,2S]; [P,1] */
    pld_dtensor moe_target, moe_send;                      /* [P*C,H]; [P,1] */
} args;

/* ---- kernels: one disagreeing field ----------------------------------------------------- */

static void dispatch_simple(pld_ctx *c, const args *a, int core_num)
{
    int n = pld_nranks(c);
    float in[4 * MOE_H] = {0};
    int32_t index[MAXP * MOE_C], recv[MAXP];
    int32_t *cnt = pld_local(c, a->moe_send).data;
    for (int d = 0; d < n; d++) {
        cnt[d] = 1;
        for (int j = 0; j < MOE_C; j++)
            index[d * MOE_C + j] = j;
    }
    pld_indexed_all_to_all_v(c, pld_tensor_make(in, PLD_FP32, 2, PLD_IDX(4, MOE_H)), a->moe_target,
                             a->sig2, a->moe_send,
                             pld_tensor_make(recv, PLD_INT32, 2, PLD_IDX(n, 1)),
                             pld_tensor_make(index, PLD_INT32, 2, PLD_IDX(n, MOE_C)), core_num);
}

static void mismatch_kernel(pld_ctx *c, void *p)
{
    const args *a = p;
    int me = pld_rank(c), n = pld_nranks(c), odd = me == ODD;
    float local[S] = {0};
    pld_tensor loc = pld_tensor_make(local, PLD_FP32, 2, PLD_IDX(1, S));
    switch (a->sub) {
    case SUB_ALLREDUCE_VS_ALLGATHER:
        if (odd)
            pld_allgather(c, loc, a->gather, a->sig);
        else
            pld_allreduce(c, a->data, a->sig, PLD_SUM, PLD_MESH);
        break;
    case SUB_BARRIER_VS_BROADCAST:
        if (odd)
            pld_barrier(c, a->sig);
        else
            pld_broadcast(c, a->data, a->sig, 0);
        break;
    case SUB_DTYPE:
        pld_allreduce(c, odd ? a->data_i32 : a->data, a->sig, PLD_SUM, PLD_MESH);
        break;
    case SUB_SHAPE_ALLREDUCE:
        pld_allreduce(c, odd ? a->data_4x9 : a->data, a->sig, PLD_SUM, PLD_MESH);
        break;
    case SUB_SHAPE_BROADCAST:
        pld_broadcast(c, odd ? a->data_2x8 : a->data, a->sig, 0);
        break;
    case SUB_OP:
        pld_allreduce(c, a->data, a->sig, odd ? PLD_MAX : PLD_SUM, PLD_MESH);
        break;
    case SUB_MODE:
        if (odd)
            pld_allreduce(c, a->data, a->ring, PLD_SUM, PLD_RING);
        else
            pld_allreduce(c, a->data, a->sig, PLD_SUM, PLD_MESH);
        break;
    case SUB_BCAST_MODE:
        pld_broadcast_with(c, a->data, a->sig, 0, odd ? PLD_BCAST_BINOMIAL : PLD_BCAST_PULL);
        break;
    case SUB_RAB_MODE: /* the halving rank waits for a flag nobody sends */
        pld_allreduce(c, a->data, a->sig, PLD_SUM, odd ? PLD_RABENSEIFNER : PLD_RS_AG);
        break;
    case SUB_AG_MODE: /* the doubling rank waits for a flag nobody sends */
        pld_allgather_with(c, loc, a->gather, a->sig, odd ? PLD_AG_DOUBLING : PLD_AG_PUSH);
        break;
    case SUB_A2A_MODE: { /* the Bruck rank waits for a flag nobody sends */
        float in[MAXP * S] = {0};
        pld_all_to_all_with(c, pld_tensor_make(in, PLD_FP32, 2, PLD_IDX(n, S)), a->a2a, a->sig,
                            odd ? PLD_A2A_BRUCK : PLD_A2A_PUSH);
        break;
    }
    case SUB_ROOT:
        pld_broadcast(c, a->data, a->sig, odd ? 1 : 0);
        break;
    case SUB_M: {
        /* [4P,S] and [2P,2S]: M = 4 and 2 with the same bytes per block, so
         * the blocks pushed before the first round do not overlap */
        int64_t m = odd ? 2 : 4, w = odd ? 2 * S : S;
        float in[4 * MAXP * S] = {0};
        int32_t counts[MAXP] = {0};
        pld_all_to_all_v(c, pld_tensor_make(in, PLD_FP32, 2, PLD_IDX(m * n, w)),
                         odd ? a->a2av2_wide : a->a2av4, a->sig,
                         pld_tensor_make(counts, PLD_INT32, 1, PLD_IDX(n)), a->recv_counts);
        break;
    }
    case SUB_CORES_ALLREDUCE:
        pld_allreduce_cores(c, a->data, a->sig2, PLD_SUM, PLD_MESH, odd ? 2 : 1);
        break;
    case SUB_CORES_DISPATCH:
        dispatch_simple(c, a, odd ? 2 : 1);
        break;
    case SUB_SIGNAL:
        pld_allreduce(c, a->data, odd ? a->sig_b : a->sig, PLD_SUM, PLD_MESH);
        break;
    case SUB_DATA:
        pld_allreduce(c, odd ? a->data2 : a->data, a->sig, PLD_SUM, PLD_MESH);
        break;
    case SUB_ORDER:
        pld_allreduce(c, a->data, a->sig, PLD_SUM, PLD_MESH); /* call 1 agrees */
        if (odd)
            pld_barrier(c, a->sig); /* the extra call */
        pld_allgather(c, loc, a->gather, a->sig);
        break;
    case SUB_AFTER:
        pld_allreduce(c, a->data, a->sig, PLD_SUM, PLD_MESH);
        pld_allreduce(c, a->data, a->ring, PLD_SUM, PLD_RING);
        pld_allreduce_cores(c, a->data, a->sig2, PLD_SUM, PLD_MESH, 2);
        pld_broadcast(c, a->data, a->sig_b, 0);
        pld_allgather(c, loc, a->gather, a->sig);
        if (a->urma)
            dispatch_simple(c, a, 2);
        break;
    case SUB_AGREE:
        break;
    }
}

/* ---- the agreeing sequence ---------------------------------------------------------------
 * Every result is checked right after its call, before the next call, and no
 * call writes the windows the call before it wrote: a peer that ran ahead
 * into the next call cannot touch what this rank still checks. */

static void want(pld_ctx *c, int it, const char *call, const char *where, long i, double got,
                 double exp)
{
    if (got != exp)
        pld_fail(c, "iteration %d, %s: %s[%ld] = %g, want %g", it, call, where, i, got, exp);
}

static int32_t moe_count(int s, int d, int it)
{
    return (s + 2 * d + it) % (MOE_C + 1);
}

static int moe_nmax(int s)
{
    return 4 + s % 5; /* Nmax differs between ranks */
}

static int32_t moe_index(int s, int d, int j, int it)
{
    return (j * 3 + d + it + s) % moe_nmax(s);
}

static float moe_in(int s, int64_t row, int k, int it)
{
    return (float)(s * 1000 + row * 10 + k + it);
}

static void agree_kernel(pld_ctx *c, void *p)
{
    const args *a = p;
    int me = pld_rank(c), n = pld_nranks(c);
    float *data = pld_local(c, a->data).data;
    float sum_r = (float)(n * (n - 1) / 2);
    for (int it = 0; it < 4; it++) {
        /* 1: allreduce mesh sum */
        for (int e = 0; e < 32; e++)
            data[e] = (float)(me * 10 + e % 7 + it);
        pld_allreduce(c, a->data, a->sig, PLD_SUM, PLD_MESH);
        for (int e = 0; e < 32; e++)
            want(c, it, "allreduce mesh", "data", e, data[e], 10 * sum_r + n * (e % 7 + it));

        /* 2: allgather */
        float local[S];
        for (int k = 0; k < S; k++)
            local[k] = (float)(me * 100 + k + it);
        pld_allgather(c, pld_tensor_make(local, PLD_FP32, 2, PLD_IDX(1, S)), a->gather, a->sig);
        const float *g = pld_local(c, a->gather).data;
        for (int i = 0; i < n * S; i++)
            want(c, it, "allgather", "gather", i, g[i], (i / S) * 100 + i % S + it);

        /* 3: broadcast from a root that moves */
        int root = it % n;
        if (me == root)
            for (int e = 0; e < 32; e++)
                data[e] = (float)(1000 + e + 3 * it);
        pld_broadcast(c, a->data, a->sig, root);
        for (int e = 0; e < 32; e++)
            want(c, it, "broadcast", "data", e, data[e], 1000 + e + 3 * it);

        /* 4: barrier */
        pld_barrier(c, a->sig);

        /* 5: allreduce ring max */
        for (int e = 0; e < 32; e++)
            data[e] = (float)(me * 5 + e % 3 + it);
        pld_allreduce(c, a->data, a->ring, PLD_MAX, PLD_RING);
        for (int e = 0; e < 32; e++)
            want(c, it, "allreduce ring", "data", e, data[e], (n - 1) * 5 + e % 3 + it);

        /* 6: all_to_all */
        float in[MAXP * S];
        for (int i = 0; i < n * S; i++)
            in[i] = (float)(me * 100 + (i / S) * 10 + i % S + it);
        pld_all_to_all(c, pld_tensor_make(in, PLD_FP32, 2, PLD_IDX(n, S)), a->a2a, a->sig);
        const float *t = pld_local(c, a->a2a).data;
        for (int i = 0; i < n * S; i++)
            want(c, it, "all_to_all", "a2a", i, t[i], (i / S) * 100 + me * 10 + i % S + it);

        /* 7: reduce_scatter sum */
        float *rs = pld_local(c, a->rs).data;
        for (int i = 0; i < n * S; i++)
            rs[i] = (float)(me + (i / S) * 10 + i % S + it);
        pld_reduce_scatter(c, a->rs, a->sig, PLD_SUM);
        for (int k = 0; k < S; k++)
            want(c, it, "reduce_scatter", "rs", me * S + k, rs[me * S + k],
                 sum_r + n * (me * 10 + k + it));

        /* 8: all_to_all_v, M = 2, counts 0..2 */
        float vin[2 * MAXP * S];
        int32_t cnt[MAXP];
        for (int i = 0; i < 2 * n * S; i++)
            vin[i] = (float)(me * 1000 + (i / S) * 10 + i % S + it);
        for (int d = 0; d < n; d++)
            cnt[d] = (me + d + it) % 3;
        pld_all_to_all_v(c, pld_tensor_make(vin, PLD_FP32, 2, PLD_IDX(2 * n, S)), a->a2av2, a->sig,
                         pld_tensor_make(cnt, PLD_INT32, 1, PLD_IDX(n)), a->recv_counts);
        const float *vt = pld_local(c, a->a2av2).data;
        const int32_t *rc = pld_local(c, a->recv_counts).data;
        for (int s = 0; s < n; s++) {
            want(c, it, "all_to_all_v", "recv_counts", s, rc[s], (s + me + it) % 3);
            for (int j = 0; j < rc[s] && j < 2; j++)
                for (int k = 0; k < S; k++)
                    want(c, it, "all_to_all_v", "a2av", (s * 2 + j) * S + k,
                         vt[(s * 2 + j) * S + k], s * 1000 + (me * 2 + j) * 10 + k + it);
        }

        /* 9: allreduce on two cores */
        for (int e = 0; e < 32; e++)
            data[e] = (float)(me + e + it);
        pld_allreduce_cores(c, a->data, a->sig2, PLD_SUM, PLD_MESH, 2);
        for (int e = 0; e < 32; e++)
            want(c, it, "allreduce_cores", "data", e, data[e], sum_r + n * (e + it));

        if (a->urma) {
            /* 10: indexed dispatch; Nmax = 4 + rank, core_num agreed per call */
            int nmax = moe_nmax(me), core_num = it % 2 + 1;
            float min[MOE_NMAX * MOE_H];
            int32_t index[MAXP * MOE_C], recv[MAXP];
            int32_t *send = pld_local(c, a->moe_send).data;
            for (int64_t r = 0; r < nmax; r++)
                for (int k = 0; k < MOE_H; k++)
                    min[r * MOE_H + k] = moe_in(me, r, k, it);
            for (int d = 0; d < n; d++) {
                send[d] = moe_count(me, d, it);
                for (int j = 0; j < MOE_C; j++)
                    index[d * MOE_C + j] = moe_index(me, d, j, it);
            }
            pld_tensor idx = pld_tensor_make(index, PLD_INT32, 2, PLD_IDX(n, MOE_C));
            pld_indexed_all_to_all_v(
                c, pld_tensor_make(min, PLD_FP32, 2, PLD_IDX(nmax, MOE_H)), a->moe_target, a->sig2,
                a->moe_send, pld_tensor_make(recv, PLD_INT32, 2, PLD_IDX(n, 1)), idx, core_num);
            const float *mt = pld_local(c, a->moe_target).data;
            for (int s = 0; s < n; s++) {
                want(c, it, "indexed_all_to_all_v", "recv_counts", s, recv[s],
                     moe_count(s, me, it));
                for (int j = 0; j < recv[s]; j++)
                    for (int k = 0; k < MOE_H; k++)
                        want(c, it, "indexed_all_to_all_v", "target", (s * MOE_C + j) * MOE_H + k,
                             mt[(s * MOE_C + j) * MOE_H + k],
                             moe_in(s, moe_index(s, me, j, it), k, it));
            }

            /* 11: indexed combine of the rows just dispatched, weights 1 */
            float out[MOE_NMAX * MOE_H], wts[MAXP * MOE_C];
            for (int i = 0; i < n * MOE_C; i++)
                wts[i] = 1.0f;
            pld_indexed_combine(c, a->moe_target,
                                pld_tensor_make(out, PLD_FP32, 2, PLD_IDX(nmax, MOE_H)), a->sig2,
                                a->moe_send, idx,
                                pld_tensor_make(wts, PLD_FP32, 2, PLD_IDX(n, MOE_C)), 3 - core_num);
            for (int r = 0; r < nmax; r++) {
                int hits = 0;
                for (int d = 0; d < n; d++)
                    for (int j = 0; j < send[d]; j++)
                        hits += index[d * MOE_C + j] == r;
                for (int k = 0; k < MOE_H; k++)
                    want(c, it, "indexed_combine", "output", r * MOE_H + k, out[r * MOE_H + k],
                         (double)hits * moe_in(me, r, k, it));
            }
        }

        /* 12: allgather in place into the window of call 2 */
        float *gi = pld_local(c, a->gather).data;
        for (int k = 0; k < S; k++)
            gi[me * S + k] = (float)(me * 100 + k + it + 50);
        pld_allgather_inplace(c, a->gather, a->sig);
        for (int i = 0; i < n * S; i++)
            want(c, it, "allgather_inplace", "gather", i, gi[i], (i / S) * 100 + i % S + it + 50);
    }
}

/* ---- host side ------------------------------------------------------------------------- */

static pld_world *world;
static int failures;

static void need(pld_status st, const char *what)
{
    if (st != PLD_OK) {
        fprintf(stderr, "agree_cases: %s: %s: %s\n", what, pld_status_name(st),
                pld_world_error(world));
        exit(1);
    }
}

static pld_window_buffer *buffer(size_t bytes, const char *name)
{
    pld_window_buffer *b;
    need(pld_alloc_window_buffer(world, bytes, name, &b), name);
    return b;
}

static pld_dtensor view(pld_window_buffer *b, pld_dtype t, int ndim, const int64_t *shape)
{
    pld_dtensor d;
    need(pld_window(b, t, ndim, shape, &d), "pld_window");
    return d;
}

/* What a launch with one disagreeing field must report. `field` NULL: the
 * builtins themselves differ, at builtin call `call`. */
typedef struct expect {
    const char *what; /* shown in the report */
    enum sub sub;
    const char *api_odd, *api_norm; /* the builtin each side called */
    const char *field;              /* "data dtype", "M =", ... */
    const char *val_odd, *val_norm;
    const char *unit; /* after the value: " rows per block" */
    int call;
    int deadlock; /* no round completes: on mpi, the wait timeout ends it */
} expect;

/* The sentence rank `from` writes about rank `other` (one of them is ODD). */
static void sentence(const expect *e, int from, int other, char *out, size_t n)
{
    int from_odd = from == ODD;
    const char *api_from = from_odd ? e->api_odd : e->api_norm;
    const char *api_other = from_odd ? e->api_norm : e->api_odd;
    int k =
        snprintf(out, n, "rank %d (device %d): %s: ", from, pld_device_id(world, from), api_from);
    if (!e->field)
        snprintf(out + k, n - (size_t)k, "call %d is %s here but %s on rank %d (device %d)",
                 e->call, api_from, api_other, other, pld_device_id(world, other));
    else
        snprintf(out + k, n - (size_t)k, "%s %s%s differs from rank %d's %s", e->field,
                 from_odd ? e->val_odd : e->val_norm, e->unit ? e->unit : "", other,
                 from_odd ? e->val_norm : e->val_odd);
}

static void report(const char *fmt, const char *what, pld_status st)
{
    fprintf(stderr, fmt, what, pld_status_name(st), pld_world_error(world));
    failures++;
}

static void reset_signals(const args *a)
{
    need(pld_window_buffer_reset(world, a->sig.buf), "pld_window_buffer_reset");
    need(pld_window_buffer_reset(world, a->sig_b.buf), "pld_window_buffer_reset");
    need(pld_window_buffer_reset(world, a->sig2.buf), "pld_window_buffer_reset");
}

static void run_mismatch(args *a, const expect *e)
{
    int np = pld_world_size(world);
    a->sub = e->sub;
    pld_status st = pld_launch(world, mismatch_kernel, a);
    const char *msg = pld_world_error(world);
    if (st != PLD_OK)
        reset_signals(a);
    if (pld_is_root_process(world))
        printf("%s: %s: %s\n", e->what, pld_status_name(st), msg);
    /* mpi has no deadlock detector: a deadlock ends in the wait timeout
     * (PLD_WAIT_TIMEOUT_MS, set small for this test), which names the
     * disagreement where the ranks' call descriptions are shared memory and
     * says only what timed out over MPI RMA (PLD_MPI_SHM=0) */
    if (e->deadlock && !strcmp(pld_world_transport(world), "mpi") && st == PLD_ERR_TIMEOUT) {
        if (!strstr(msg, "timed out"))
            report("%s: %s, but the message does not say what timed out: %s\n", e->what, st);
        return;
    }
    if (st != PLD_ERR_ARG) {
        report("%s: pld_launch returned %s, want PLD_ERR_ARG: %s\n", e->what, st);
        return;
    }
    char s[512];
    for (int from = 0; from < np; from++)
        for (int other = 0; other < np; other++) {
            if (from == other || (from == ODD) == (other == ODD))
                continue;
            sentence(e, from, other, s, sizeof s);
            if (strstr(msg, s))
                return;
        }
    sentence(e, ODD, 0, s, sizeof s);
    fprintf(stderr, "%s: the message\n  %s\nnames neither side like\n  %s\n", e->what, msg, s);
    failures++;
}

static const expect mismatches[] = {
    {"kind/allreduce-allgather", SUB_ALLREDUCE_VS_ALLGATHER, "pld_allgather", "pld_allreduce", NULL,
     NULL, NULL, NULL, 1, 0},
    {"kind/barrier-broadcast", SUB_BARRIER_VS_BROADCAST, "pld_barrier", "pld_broadcast", NULL, NULL,
     NULL, NULL, 1, 0},
    {"dtype/allreduce", SUB_DTYPE, "pld_allreduce", "pld_allreduce", "data dtype", "int32", "fp32",
     NULL, 0, 0},
    {"shape/allreduce", SUB_SHAPE_ALLREDUCE, "pld_allreduce", "pld_allreduce", "data shape",
     "[4,9]", "[4,8]", NULL, 0, 0},
    {"shape/broadcast", SUB_SHAPE_BROADCAST, "pld_broadcast", "pld_broadcast", "data shape",
     "[2,8]", "[4,8]", NULL, 0, 0},
    {"op/allreduce", SUB_OP, "pld_allreduce", "pld_allreduce", "op", "max", "sum", NULL, 0, 0},
    {"mode/allreduce", SUB_MODE, "pld_allreduce", "pld_allreduce", "mode", "ring", "mesh", NULL, 0,
     0},
    {"mode/broadcast", SUB_BCAST_MODE, "pld_broadcast", "pld_broadcast", "mode", "binomial", "pull",
     NULL, 0, 0},
    {"mode/allreduce_rabenseifner", SUB_RAB_MODE, "pld_allreduce", "pld_allreduce", "mode",
     "rabenseifner", "rs_ag", NULL, 0, 0},
    {"mode/allgather", SUB_AG_MODE, "pld_allgather", "pld_allgather", "mode", "doubling", "push",
     NULL, 0, 0},
    {"mode/all_to_all", SUB_A2A_MODE, "pld_all_to_all", "pld_all_to_all", "mode", "bruck", "push",
     NULL, 0, 0},
    {"root/broadcast", SUB_ROOT, "pld_broadcast", "pld_broadcast", "root", "1", "0", NULL, 0, 0},
    {"m/all_to_all_v", SUB_M, "pld_all_to_all_v", "pld_all_to_all_v", "M =", "2", "4",
     " rows per block", 0, 0},
    {"core_num/allreduce_cores", SUB_CORES_ALLREDUCE, "pld_allreduce", "pld_allreduce", "core_num",
     "2", "1", NULL, 0, 0},
    {"core_num/indexed_all_to_all_v", SUB_CORES_DISPATCH, "pld_indexed_all_to_all_v",
     "pld_indexed_all_to_all_v", "core_num", "2", "1", NULL, 0, 0},
    {"signal/allreduce", SUB_SIGNAL, "pld_allreduce", "pld_allreduce", "signal window", "'sig_b'",
     "'sig'", NULL, 0, 1},
    {"data/allreduce", SUB_DATA, "pld_allreduce", "pld_allreduce", "data window", "'data2'",
     "'data'", NULL, 0, 0},
    {"order/barrier-allgather", SUB_ORDER, "pld_barrier", "pld_allgather", NULL, NULL, NULL, NULL,
     2, 0},
};
#define NMISMATCHES ((int)(sizeof mismatches / sizeof mismatches[0]))

static int usage(void)
{
    fprintf(stderr, "usage: agree_cases --case "
                    "kind|dtype|shape|op|mode|root|m|core_num|signal|data|order|noargs|agree\n"
                    "                   [-p a5sim] [-d 0-2] [--transport thread|process|mpi]\n");
    return 2;
}

/* PLD_CHECK holds "noargs" as one of its comma-separated words. */
static int check_off(void)
{
    const char *env = getenv("PLD_CHECK");
    char buf[256];
    if (!env)
        return 0;
    snprintf(buf, sizeof buf, "%s", env);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ","))
        if (!strcmp(tok, "noargs"))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    pld_status st = pld_world_init_from_args(&world, &argc, &argv);
    if (st != PLD_OK) {
        fprintf(stderr, "agree_cases: %s: %s\n", pld_status_name(st), pld_last_error());
        return 1;
    }
    const char *name = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--case") && i + 1 < argc)
            name = argv[++i];
        else {
            pld_world_finalize(world);
            return usage();
        }
    }
    if (!name) {
        pld_world_finalize(world);
        return usage();
    }
    int np = pld_world_size(world);
    if (np < 2 || np > MAXP) {
        fprintf(stderr, "agree_cases: needs 2 to %d ranks (got %d)\n", MAXP, np);
        pld_world_finalize(world);
        return 1;
    }

    int64_t p = np, rr = 2 * (p - 1);
    args *a = pld_host_alloc(world, sizeof *a);
    if (!a)
        need(PLD_ERR_NOMEM, "pld_host_alloc");
    memset(a, 0, sizeof *a);
    pld_info_limits lim;
    pld_world_limits(world, &lim);
    a->urma = lim.urma;

    pld_window_buffer *sb = buffer(4 * (size_t)(rr * p), "sig");
    a->sig = view(sb, PLD_INT32, 2, PLD_IDX(p, 1));
    a->ring = view(sb, PLD_INT32, 2, PLD_IDX(rr, p));
    a->sig_b = view(buffer(4 * (size_t)p, "sig_b"), PLD_INT32, 2, PLD_IDX(p, 1));
    a->sig2 = view(buffer(4 * (size_t)p * 2, "sig2"), PLD_INT32, 2, PLD_IDX(p, 2));
    pld_window_buffer *db = buffer(4 * 64, "data");
    a->data = view(db, PLD_FP32, 2, PLD_IDX(4, 8));
    a->data_i32 = view(db, PLD_INT32, 2, PLD_IDX(4, 8));
    a->data_4x9 = view(db, PLD_FP32, 2, PLD_IDX(4, 9));
    a->data_2x8 = view(db, PLD_FP32, 2, PLD_IDX(2, 8));
    a->data2 = view(buffer(4 * 64, "data2"), PLD_FP32, 2, PLD_IDX(4, 8));
    a->gather = view(buffer(4 * (size_t)(p * S), "gather"), PLD_FP32, 2, PLD_IDX(p, S));
    a->a2a = view(buffer(4 * (size_t)(p * S), "a2a"), PLD_FP32, 2, PLD_IDX(p, S));
    a->rs = view(buffer(4 * (size_t)(p * S), "rs"), PLD_FP32, 2, PLD_IDX(p, S));
    pld_window_buffer *vb = buffer(4 * (size_t)(4 * p * S), "a2av");
    a->a2av4 = view(vb, PLD_FP32, 2, PLD_IDX(4 * p, S));
    a->a2av2 = view(vb, PLD_FP32, 2, PLD_IDX(2 * p, S));
    a->a2av2_wide = view(vb, PLD_FP32, 2, PLD_IDX(2 * p, 2 * S));
    a->recv_counts = view(buffer(4 * (size_t)p, "recv_counts"), PLD_INT32, 2, PLD_IDX(p, 1));
    a->moe_target = view(buffer(4 * (size_t)(p * MOE_C * MOE_H), "moe_target"), PLD_FP32, 2,
                         PLD_IDX(p * MOE_C, MOE_H));
    a->moe_send = view(buffer(4 * (size_t)p, "moe_send"), PLD_INT32, 2, PLD_IDX(p, 1));

    int known = 0;
    if (!strcmp(name, "agree")) {
        known = 1;
        if (check_off()) {
            fprintf(stderr, "agree: PLD_CHECK=noargs is set: the check would not run\n");
            failures++;
        }
        if (!a->urma && pld_is_root_process(world))
            printf("agree: no URMA model on '%s': indexed dispatch and combine left out "
                   "(run with -p a5sim)\n",
                   pld_world_platform(world));
        a->sub = SUB_AGREE;
        st = pld_launch(world, agree_kernel, a);
        if (pld_is_root_process(world))
            printf("agree: %s %s\n", pld_status_name(st), pld_world_error(world));
        if (st != PLD_OK)
            report("%s: pld_launch returned %s, want PLD_OK: %s\n", "agree", st);
    } else if (!strcmp(name, "noargs")) {
        known = 1;
        if (!check_off()) {
            fprintf(stderr, "noargs: run it with PLD_CHECK=noargs\n");
            failures++;
        }
        a->sub = SUB_DTYPE; /* fp32 and int32 views: the same bytes, no error but the check's */
        st = pld_launch(world, mismatch_kernel, a);
        if (st != PLD_OK)
            reset_signals(a);
        if (pld_is_root_process(world))
            printf("noargs: dtype mismatch with the check off: %s %s\n", pld_status_name(st),
                   pld_world_error(world));
        if (st == PLD_ERR_ARG)
            report("%s: pld_launch returned %s with the check off: %s\n", "noargs", st);
    } else {
        if (check_off()) {
            fprintf(stderr, "%s: PLD_CHECK=noargs is set: the check would not run\n", name);
            failures++;
        }
        size_t len = strlen(name);
        for (int i = 0; i < NMISMATCHES; i++) {
            const expect *e = &mismatches[i];
            if (strncmp(e->what, name, len) || e->what[len] != '/')
                continue;
            known = 1;
            if (e->sub == SUB_CORES_DISPATCH && !a->urma) {
                fprintf(stderr, "%s: the profile '%s' has no URMA model: run with -p a5sim\n",
                        e->what, pld_world_platform(world));
                failures++;
                continue;
            }
            run_mismatch(a, e);
        }
    }
    if (!known) {
        pld_world_finalize(world);
        return usage();
    }
    /* the world is still usable, and the signals were reset: agreeing calls
     * (the case's builtins, on the same signals) run */
    a->sub = SUB_AFTER;
    st = pld_launch(world, mismatch_kernel, a);
    if (st != PLD_OK)
        report("%s: the agreeing launch after the case returned %s: %s\n", name, st);
    if (failures == 0 && pld_is_root_process(world))
        printf("OK\n");
    pld_world_finalize(world);
    return failures != 0;
}
