/* SPDX-License-Identifier: Apache-2.0 */
/* Step 18 — comm_domains: a tensor-parallel x data-parallel layer on teams.
 *
 * The P ranks form a grid of TP x DP ranks (pld_team_split_2d): each row
 * of TP consecutive ranks is a tensor-parallel group, each column (ranks
 * equal mod TP) a data-parallel group. Row d is replica d of the model and
 * works on its own activation x_d [K] (K = TP*S); TP rank t of every
 * replica holds column block t of the weight W [K, TP*N].
 *
 * One kernel, three steps, each in the group it belongs to:
 *   1. allgather in the TP group: TP rank t holds shard t of x_d [1,S];
 *      afterwards every TP rank has all of x_d (window `act` [TP,S]);
 *   2. local compute, plain C: y = x_d . W_t [N], and the gradient of the
 *      loss |y|^2 / 2 with respect to the shard, dW_t = outer(x_d, y) [K,N];
 *   3. allreduce in the DP group: the replicas' dW_t are summed, so every
 *      copy of shard t gets the same gradient (window `grad` [K,N]).
 *
 * Inside a team's view pld_rank / pld_nranks are the group rank and size
 * and every peer is a group rank, so steps 1 and 3 are the code of steps 13
 * and 08 handed a view. Each team has its own signal: a rank hears from its
 * TP peers and from its DP peers, and both number them 0, 1, ...
 *
 * --mode hand:    the gather and the reduce with remote_load/notify/wait;
 * --mode builtin: pld_allgather on the TP view, pld_allreduce on the DP view.
 * --tp K:         TP group size; K must divide P. Default: the smallest
 *                 divisor of P above 1 (2 for every even P: 2x2 at P=4, 2x3
 *                 at P=6, 2x4 at P=8; a prime P is one row of P ranks).
 *
 *   build/examples/18_comm_domains -p a2a3sim -d 0-7 [--tp 4] [--mode hand|builtin] [--ir]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_util.h"

#define S 8 /* activation elements per TP rank */
#define N 4 /* output features per TP rank */

enum { MODE_HAND, MODE_BUILTIN };
static const char *const modes[] = {"hand", "builtin", NULL};

typedef struct layer_args {
    int mode;
    const pld_team *tp, *dp;
    int32_t *x;         /* [P][1,S]: world rank r's activation shard at r */
    int32_t *w;         /* [TP][K,N]: weight shard t at t */
    int32_t *ref_act;   /* [DP][K]: the reference activation of each replica */
    int32_t *ref_grad;  /* [K, TP*N]: the reference gradient of the whole W */
    pld_dtensor act;    /* [TP,S]: row t = TP rank t's shard, then all of x_d */
    pld_dtensor grad;   /* [K,N]: this rank's dW_t, then the DP sum */
    pld_dtensor sig_tp; /* [TP,1]: the TP team's signal */
    pld_dtensor sig_dp; /* [DP,1]: the DP team's signal, never the TP one */
} layer_args;

/* Element k of replica d's activation: names the replica and the position. */
static int32_t act_value(int d, int64_t k) {
    return d * 100 + (int32_t)k;
}

/* Element [k,c] of the full weight: -1, 0 or 1, so sums stay small. */
static int32_t weight_value(int64_t k, int64_t c) {
    return (int32_t)((k + 2 * c) % 3) - 1;
}

/* The hand-written barrier of step 04, in whatever context it is given:
 * in a view, `me`, `peer` and the signal's cells are group ranks. */
static void hand_barrier(pld_ctx *c, pld_dtensor signal, int32_t round) {
    int me = pld_rank(c), n = pld_nranks(c);
    for (int peer = 0; peer < n; peer++)
        if (peer != me) pld_notify(c, signal, peer, PLD_IDX(me, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
    for (int src = 0; src < n; src++)
        if (src != me) pld_wait(c, signal, PLD_IDX(src, 0), round, PLD_WAIT_GE);
}

/* Step 13's pull allgather: stage my shard in my row, barrier, then copy
 * every peer's row into the same row of my window. */
static void hand_allgather(pld_ctx *tp, pld_tensor shard, pld_dtensor act, pld_dtensor sig) {
    int me = pld_rank(tp), n = pld_nranks(tp);
    pld_tensor mine = pld_local(tp, act);
    pld_tile *row = pld_tile_create(tp, PLD_INT32, 1, S);
    pld_load(tp, row, shard, PLD_IDX(0, 0));
    pld_store(tp, row, mine, PLD_IDX(me, 0));
    hand_barrier(tp, sig, 1);
    /* Peers read only row `peer` of their peers: my other rows are mine. */
    for (int peer = 0; peer < n; peer++) {
        if (peer == me) continue;
        pld_remote_load(tp, row, act, peer, PLD_IDX(peer, 0));
        pld_store(tp, row, mine, PLD_IDX(peer, 0));
    }
}

/* Step 08's mesh allreduce: barrier, add every peer's data, barrier (a
 * slow peer may still read mine), write the sum back. */
static void hand_allreduce(pld_ctx *dp, pld_dtensor data, pld_dtensor sig) {
    int me = pld_rank(dp), n = pld_nranks(dp);
    pld_tensor mine = pld_local(dp, data);
    int64_t rows = data.shape[0], cols = data.shape[1];
    pld_tile *acc = pld_tile_create(dp, PLD_INT32, rows, cols);
    pld_tile *tmp = pld_tile_create(dp, PLD_INT32, rows, cols);
    pld_load(dp, acc, mine, PLD_IDX(0, 0));
    hand_barrier(dp, sig, 1);
    for (int i = 1; i < n; i++) {
        pld_remote_load(dp, tmp, data, (me + i) % n, PLD_IDX(0, 0));
        pld_tile_reduce(dp, acc, tmp, PLD_SUM);
    }
    hand_barrier(dp, sig, 2);
    pld_store(dp, acc, mine, PLD_IDX(0, 0));
}

static void layer_kernel(pld_ctx *ctx, void *arg) {
    layer_args *a = arg;
    pld_ctx *tp = pld_team_ctx(ctx, a->tp);
    pld_ctx *dp = pld_team_ctx(ctx, a->dp);
    if (!tp || !dp) pld_fail(ctx, "not in the grid: TP must divide P");
    int t = pld_rank(tp), ntp = pld_nranks(tp);
    int d = pld_rank(dp);
    int64_t k_len = (int64_t)ntp * S;
    pld_tensor shard =
        pld_tensor_make(a->x + (int64_t)pld_rank(ctx) * S, PLD_INT32, 2, PLD_IDX(1, S));

    /* 1. The activation: from my shard to all of x_d, inside my row. */
    if (a->mode == MODE_HAND)
        hand_allgather(tp, shard, a->act, a->sig_tp);
    else
        pld_allgather(tp, shard, a->act, a->sig_tp);
    const int32_t *x = pld_local(tp, a->act).data;
    for (int64_t k = 0; k < k_len; k++)
        ex_check_i32(tp, "act", k / S, k % S, x[k], a->ref_act[(int64_t)d * k_len + k]);

    /* 2. Local compute: y = x . W_t, dW_t = outer(x, y), into my grad. */
    const int32_t *wt = a->w + (int64_t)t * k_len * N;
    int32_t *g = pld_local(ctx, a->grad).data;
    int32_t y[N] = {0};
    for (int64_t k = 0; k < k_len; k++)
        for (int n = 0; n < N; n++)
            y[n] += x[k] * wt[k * N + n];
    for (int64_t k = 0; k < k_len; k++)
        for (int n = 0; n < N; n++)
            g[k * N + n] = x[k] * y[n];

    /* 3. The gradient: summed over the replicas, inside my column. */
    if (a->mode == MODE_HAND)
        hand_allreduce(dp, a->grad, a->sig_dp);
    else
        pld_allreduce(dp, a->grad, a->sig_dp, PLD_SUM, PLD_MESH);
    for (int64_t k = 0; k < k_len; k++)
        for (int n = 0; n < N; n++)
            ex_check_i32(dp, "grad", k, n, g[k * N + n],
                         a->ref_grad[k * ntp * N + (int64_t)t * N + n]);
}

/* The whole grid in one process, from the full matrices: no teams, no
 * shards. ref_act[d] = x_d; ref_grad = sum over d of outer(x_d, x_d . W). */
static void reference(int ntp, int ndp, int32_t *ref_act, int32_t *ref_grad) {
    int64_t k_len = (int64_t)ntp * S, cols = (int64_t)ntp * N;
    for (int64_t i = 0; i < k_len * cols; i++)
        ref_grad[i] = 0;
    for (int d = 0; d < ndp; d++) {
        int32_t *x = ref_act + d * k_len;
        for (int64_t k = 0; k < k_len; k++)
            x[k] = act_value(d, k);
        for (int64_t c = 0; c < cols; c++) {
            int32_t y = 0;
            for (int64_t k = 0; k < k_len; k++)
                y += x[k] * weight_value(k, c);
            for (int64_t k = 0; k < k_len; k++)
                ref_grad[k * cols + c] += x[k] * y;
        }
    }
}

/* --tp K (or --tp=K), taken out of argv before ex_setup sees the rest.
 * Returns K, 0 when absent, -1 when the value is not a positive number. */
static int take_tp(int *argc, char **argv) {
    int tp = 0, keep = 1;
    for (int i = 1; i < *argc; i++) {
        const char *v = NULL;
        if (strcmp(argv[i], "--tp") == 0 && i + 1 < *argc)
            v = argv[++i];
        else if (strncmp(argv[i], "--tp=", 5) == 0)
            v = argv[i] + 5;
        else {
            argv[keep++] = argv[i];
            continue;
        }
        char *end;
        long k = strtol(v, &end, 10);
        tp = (*end || k < 1 || k > 1 << 20) ? -1 : (int)k;
        if (tp < 0) break;
    }
    *argc = keep;
    argv[keep] = NULL;
    return tp;
}

/* The default TP size: the smallest divisor of P above 1. */
static int default_tp(int p) {
    for (int k = 2; k < p; k++)
        if (p % k == 0) return k;
    return p;
}

int main(int argc, char **argv) {
    pld_world *w;
    pld_status st = pld_world_init_from_args(&w, &argc, &argv);
    if (st != PLD_OK) return ex_init_failed(argv[0], st);
    int ntp = take_tp(&argc, argv);
    int mode;
    int rc = ex_setup(w, argc, argv, modes, &mode);
    if (rc == 0)
        printf("  --tp K  TP group size, a divisor of P (default: its smallest above 1)\n");
    int p = pld_world_size(w);
    if (rc == EX_RUN && ntp == 0) ntp = default_tp(p);
    if (rc == EX_RUN && (ntp < 0 || p % ntp != 0)) {
        fprintf(stderr, "18_comm_domains: --tp must be a divisor of P=%d\n", p);
        rc = 2;
    }
    if (rc != EX_RUN) {
        pld_world_finalize(w);
        return rc;
    }

    int ndp = p / ntp;
    int64_t k_len = (int64_t)ntp * S;
    pld_team *tp = NULL, *dp = NULL;
    pld_window_buffer *bufs[4] = {NULL};
    layer_args *a = pld_host_alloc(w, sizeof *a);
    int32_t *x = pld_host_alloc(w, (size_t)p * S * sizeof *x);
    int32_t *wt = pld_host_alloc(w, (size_t)(k_len * ntp * N) * sizeof *wt);
    int32_t *ref_act = pld_host_alloc(w, (size_t)(ndp * k_len) * sizeof *ref_act);
    int32_t *ref_grad = pld_host_alloc(w, (size_t)(k_len * ntp * N) * sizeof *ref_grad);
    if (!a || !x || !wt || !ref_act || !ref_grad) {
        st = PLD_ERR_NOMEM;
        goto out;
    }

    /* Rows of ntp consecutive ranks are the TP groups, columns the DP ones. */
    st = pld_team_split_2d(w, NULL, ntp, "tp", &tp, "dp", &dp);
    if (st != PLD_OK) goto out;
    a->mode = mode;
    a->tp = tp;
    a->dp = dp;
    a->x = x;
    a->w = wt;
    a->ref_act = ref_act;
    a->ref_grad = ref_grad;
    reference(ntp, ndp, ref_act, ref_grad);

    /* What each rank holds: its replica's activation shard (replica = DP
     * rank, shard = TP rank) and its TP rank's column block of W. */
    for (int r = 0; r < p; r++) {
        int t = pld_team_rank_of(tp, r), d = pld_team_rank_of(dp, r);
        for (int j = 0; j < S; j++)
            x[r * S + j] = act_value(d, (int64_t)t * S + j);
    }
    for (int t = 0; t < ntp; t++)
        for (int64_t k = 0; k < k_len; k++)
            for (int n = 0; n < N; n++)
                wt[(t * k_len + k) * N + n] = weight_value(k, (int64_t)t * N + n);

    st = ex_alloc_window_2d(w, "act", PLD_INT32, ntp, S, &bufs[0], &a->act);
    if (st == PLD_OK) st = ex_alloc_window_2d(w, "grad", PLD_INT32, k_len, N, &bufs[1], &a->grad);
    if (st == PLD_OK) st = ex_alloc_window_2d(w, "sig_tp", PLD_INT32, ntp, 1, &bufs[2], &a->sig_tp);
    if (st == PLD_OK) st = ex_alloc_window_2d(w, "sig_dp", PLD_INT32, ndp, 1, &bufs[3], &a->sig_dp);
    if (st == PLD_OK) st = pld_launch(w, layer_kernel, a);

out:
    for (int i = 3; i >= 0; i--)
        if (bufs[i]) pld_free_window_buffer(w, bufs[i]);
    if (dp) pld_team_free(w, dp);
    if (tp) pld_team_free(w, tp);
    pld_host_free(w, ref_grad);
    pld_host_free(w, ref_act);
    pld_host_free(w, wt);
    pld_host_free(w, x);
    pld_host_free(w, a);
    return ex_finish(w, st);
}
