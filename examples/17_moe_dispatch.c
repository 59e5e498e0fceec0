/* SPDX-License-Identifier: Apache-2.0 */
/* Step 17 — MoE token dispatch and combine with pld_indexed_all_to_all_v.
 *
 * Each rank holds T tokens of hidden size H and one expert. A toy router
 * picks TOPK = 2 distinct experts per token with gate weights 0.75 / 0.25.
 * The dispatch sends every token to the ranks of its experts (the rows come
 * straight from the input through an index, no send buffer is packed); each
 * expert transforms the rows it received; the combine brings them home and
 * sums them with the gate weights:
 *
 *   out[t] = 0.75 * expert_e0(x[t]) + 0.25 * expert_e1(x[t])
 *
 * The toy expert of rank e is x -> (e + 1) * x, so the golden is exact.
 * The URMA queue model needs the a5sim profile; `--cores B` runs the
 * dispatch and the combine on B cores per rank.
 *
 *   build/examples/17_moe_dispatch -p a5sim -d 0,1,2,3 [--cores 2] [--ir]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_util.h"

#define T 48 /* tokens per rank */
#define H 16 /* hidden size */
#define TOPK 2

typedef struct moe_args {
    int cores;
    float *x[64];       /* [T, H] per rank: the tokens */
    float *out[64];     /* [T, H] per rank: the combined result */
    int32_t *index[64]; /* [P, C=T] per rank: which token goes to slot j of expert d */
    float *gate[64];    /* [P, C] per rank: the weight of that slot */
    int32_t *recv[64];  /* [P, 1] per rank */
    pld_dtensor target; /* [P*C, H] fp32: dispatched rows, transformed in place */
    pld_dtensor signal; /* [P, cores] INT32 */
    pld_dtensor counts; /* [P, 1] INT32: send_counts, read by the peers */
} moe_args;

static float token(int rank, int t, int k) {
    return (float)(rank * 100 + t) + (float)k / 16.0f;
}

/* The router: token t of rank r goes to experts e0 = (r + t) % P and
 * e1 = (r + 3t + 1) % P (the next one when they collide). */
static void route(int r, int t, int p, int e[TOPK]) {
    e[0] = (r + t) % p;
    e[1] = (r + 3 * t + 1) % p;
    if (e[1] == e[0]) e[1] = (e[0] + 1) % p;
}

static void moe_kernel(pld_ctx *ctx, void *arg) {
    moe_args *a = arg;
    int me = pld_rank(ctx), p = pld_nranks(ctx);
    pld_tensor index = pld_tensor_make(a->index[me], PLD_INT32, 2, PLD_IDX(p, T));

    /* 1. dispatch: target_d[me*T + j] = x[index[d][j]] for j < send_counts[d] */
    pld_indexed_all_to_all_v(
        ctx, pld_tensor_make(a->x[me], PLD_FP32, 2, PLD_IDX(T, H)), a->target, a->signal, a->counts,
        pld_tensor_make(a->recv[me], PLD_INT32, 2, PLD_IDX(p, 1)), index, a->cores);

    /* 2. the expert of this rank: rows s*T .. s*T + recv[s] - 1 came from s */
    float *rows = pld_local(ctx, a->target).data;
    for (int s = 0; s < p; s++)
        for (int j = 0; j < a->recv[me][s]; j++)
            for (int k = 0; k < H; k++)
                rows[(s * T + j) * H + k] *= (float)(me + 1);

    /* 3. combine: the rows come home, weighted by the gate, summed per token */
    pld_indexed_combine(ctx, a->target, pld_tensor_make(a->out[me], PLD_FP32, 2, PLD_IDX(T, H)),
                        a->signal, a->counts, index,
                        pld_tensor_make(a->gate[me], PLD_FP32, 2, PLD_IDX(p, T)), a->cores);

    /* golden: 0.75 * (e0 + 1) * x + 0.25 * (e1 + 1) * x */
    for (int t = 0; t < T; t++) {
        int e[TOPK];
        route(me, t, p, e);
        for (int k = 0; k < H; k++) {
            float want = (0.75f * (float)(e[0] + 1) + 0.25f * (float)(e[1] + 1)) * token(me, t, k);
            float got = a->out[me][t * H + k];
            if (got != want)
                pld_fail(ctx, "token %d col %d: got %g want %g (experts %d, %d)", t, k, got, want,
                         e[0], e[1]);
        }
    }
}

int main(int argc, char **argv) {
    pld_world *w;
    pld_status st = pld_world_init_from_args(&w, &argc, &argv);
    if (st != PLD_OK) return ex_init_failed(argv[0], st);
    /* --cores B: strip it before ex_setup sees the rest */
    int cores = 1, keep = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cores") && i + 1 < argc)
            cores = atoi(argv[++i]);
        else
            argv[keep++] = argv[i];
    }
    argc = keep;
    argv[argc] = NULL;
    int unused_mode;
    int rc = ex_setup(w, argc, argv, NULL, &unused_mode);
    if (rc != EX_RUN) {
        pld_world_finalize(w);
        return rc;
    }
    int p = pld_world_size(w);
    if (p > 64) {
        fprintf(stderr, "17_moe_dispatch: at most 64 ranks\n");
        pld_world_finalize(w);
        return 2;
    }

    /* kernel arguments and per-rank data in memory every rank can see */
    moe_args *a = pld_host_alloc(w, sizeof *a);
    a->cores = cores;
    pld_window_buffer *tb, *sb, *cb;
    st = ex_alloc_window_2d(w, "target", PLD_FP32, (int64_t)p * T, H, &tb, &a->target);
    if (st == PLD_OK)
        st = ex_alloc_window_2d(w, "signal", PLD_INT32, p, cores > 0 ? cores : 1, &sb, &a->signal);
    if (st == PLD_OK) st = ex_alloc_window_2d(w, "send_counts", PLD_INT32, p, 1, &cb, &a->counts);
    if (st != PLD_OK) return ex_finish(w, st);

    /* the router, on the host: for each rank, the slots of each expert */
    for (int r = 0; r < p; r++) {
        a->x[r] = pld_host_alloc(w, sizeof(float) * T * H);
        a->out[r] = pld_host_alloc(w, sizeof(float) * T * H);
        a->index[r] = pld_host_alloc(w, sizeof(int32_t) * (size_t)p * T);
        a->gate[r] = pld_host_alloc(w, sizeof(float) * (size_t)p * T);
        a->recv[r] = pld_host_alloc(w, sizeof(int32_t) * (size_t)p);
        for (int t = 0; t < T; t++)
            for (int k = 0; k < H; k++)
                a->x[r][t * H + k] = token(r, t, k);
        int32_t cnt[64];
        for (int d = 0; d < p; d++) {
            cnt[d] = 0;
            for (int j = 0; j < T; j++)
                a->index[r][d * T + j] = -1; /* past the count: never read */
        }
        for (int t = 0; t < T; t++) {
            int e[TOPK];
            route(r, t, p, e);
            for (int k = 0; k < TOPK; k++) {
                int slot = cnt[e[k]]++;
                a->index[r][e[k] * T + slot] = t;
                a->gate[r][e[k] * T + slot] = k == 0 ? 0.75f : 0.25f;
            }
        }
        /* the counts live in rank r's window: written by the process that
         * hosts it (all of them, except under mpi) */
        if (!pld_world_hosts_rank(w, r)) continue;
        pld_tensor counts;
        st = pld_window_host_view(w, a->counts, r, &counts);
        if (st != PLD_OK) return ex_finish(w, st);
        memcpy(counts.data, cnt, sizeof(int32_t) * (size_t)p);
    }
    return ex_finish(w, pld_launch(w, moe_kernel, a));
}
