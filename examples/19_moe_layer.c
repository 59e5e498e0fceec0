/* SPDX-License-Identifier: Apache-2.0 */
/* Step 19 — moe_layer: a DeepSeek-style mixture-of-experts layer, one
 * expert-parallel group of P ranks.
 *
 * Every rank holds T tokens of hidden size H and E experts; expert e of
 * rank d is global expert d*E + e, with its own weight W_{d,e} [H,H]. The
 * layer, for every token x of every rank:
 *
 *   1. route:    a fixed gate matrix G [H, P*E] scores x against every
 *                expert; x goes to its top-k experts, weighted by a softmax
 *                over those k scores;
 *   2. dispatch: each of the k copies travels to its expert's rank;
 *   3. experts:  expert (d,e) multiplies every row it received by W_{d,e};
 *   4. combine:  the rows travel back, and the token's output is
 *                  y = sum over its choices i of w_i * W_{d_i,e_i} x.
 *
 * top-k is 6 once there are at least 16 experts (P >= 8 at E = 2: a few
 * experts out of many, as DeepSeek routes) and 2 below that (at P = 4, 6 of
 * 8 experts would be nearly all of them).
 *
 * --mode picks how steps 2 and 4 move the rows:
 *   packed   (default) pld_moe_dispatch and pld_moe_combine: counts per
 *            (rank, expert), only the counted rows move, and each expert's
 *            rows arrive as one contiguous run;
 *   blocks   pld_all_to_all_v there and back, once per local expert (it has
 *            one count per destination rank, so an expert is one call):
 *            whole M-row blocks move, and an expert's rows sit in P blocks;
 *   indexed  pld_indexed_all_to_all_v and pld_indexed_combine, once per
 *            local expert as well; they model the URMA queues: -p a5sim.
 * --stats    afterwards, print the counters summed over the ranks.
 *
 *   build/examples/19_moe_layer -p a2a3sim -d 0-7 [--mode packed|blocks] [--stats] [--ir]
 *   build/examples/19_moe_layer -p a5sim -d 0-7 --mode indexed [--stats]
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_util.h"

#define T 16     /* tokens per rank */
#define H 32     /* hidden size */
#define E 2      /* experts per rank */
#define M T      /* rows per (rank, expert) block: a block can hold every token */
#define MAX_P 16 /* the largest group this example sizes its arrays for */
#define MAX_K 6  /* the largest top-k */

enum { MODE_PACKED, MODE_BLOCKS, MODE_INDEXED };
static const char *const modes[] = {"packed", "blocks", "indexed", NULL};

/* One of a token's k choices: expert e of rank d, the gate weight, and the
 * row j of block (d, e) that carries the copy. */
typedef struct choice {
    int d, e, j;
    float w;
} choice;

/* What one rank works on, touched by that rank only. Plain tensors that a
 * builtin reads must still be memory the host shares with the ranks (on
 * the process transport every rank is a process of its own), so main
 * allocates it with pld_host_alloc. */
typedef struct rank_data {
    float x[T][H];                 /* the tokens */
    choice route[T][MAX_K];        /* their choices */
    int32_t send_counts[MAX_P][E]; /* [P,E]: rows in block (d, e) */
    float input[MAX_P * E * M][H]; /* [P*E*M, H]: block (d, e) at rows (d*E+e)*M */
    int32_t offsets[E + 1];        /* packed: expert e's rows in target */
    float blk[E][MAX_P * M][H];    /* blocks: [P*M, H] send buffers, one per expert */
    int32_t blk_counts[E][MAX_P];  /* blocks: [P] counts of one expert's call */
    int32_t index[E][MAX_P * T];   /* indexed: [P,T] token of row j of block (d, e) */
    float gate[E][MAX_P * T];      /* indexed: [P,T] its gate weight */
    int32_t recv[E][MAX_P];        /* indexed: [P,1] recv_counts */
    float combined[E][T][H];       /* indexed: each expert's weighted sums */
    float y[T][H];                 /* the layer's output */
} rank_data;

/* The windows of the layer; each mode allocates only its own. */
typedef struct layer_args {
    int mode;
    pld_dtensor signal; /* [P,1]: every exchange of the layer, one after another */
    /* packed */
    pld_dtensor target;      /* [P*E*M, H]: the rows of expert 0, then expert 1 */
    pld_dtensor expert_out;  /* [P*E*M, H]: the experts' results, same layout */
    pld_dtensor out;         /* [P*E*M, H]: the results back home, in the input's slots */
    pld_dtensor recv_counts; /* [P,E] */
    /* blocks and indexed: one exchange per local expert e */
    pld_dtensor to_expert[E]; /* [P*M, H]: source s's rows for expert e at s*M */
    pld_dtensor back[E];      /* blocks: [P*M, H]: expert rank d's results at d*M */
    pld_dtensor recv[E];      /* blocks: [P,1]: rows each source sent expert e */
    pld_dtensor recv_back[E]; /* blocks: [P,1]: rows each expert rank sent back */
    pld_dtensor counts[E];    /* indexed: [P,1] send_counts, read by the peers */
    rank_data *data[MAX_P];   /* each rank's scratch */
} layer_args;

/* 6 once there are 16 experts or more, else 2 (see the top of the file). */
static int top_k(int p) {
    return p * E >= 16 ? 6 : 2;
}

/* A deterministic value in [-1, 1) for entry (i, j) of table `kind`: every
 * rank and the reference compute the same tokens, gate and weights. */
static float value(uint32_t kind, uint32_t i, uint32_t j) {
    uint32_t h = kind * 0x9E3779B9u ^ (i + 1) * 0x85EBCA6Bu ^ (j + 1) * 0xC2B2AE35u;
    h ^= h >> 16;
    h *= 0x7FEB352Du;
    h ^= h >> 15;
    h *= 0x846CA68Bu;
    h ^= h >> 16;
    return (float)(h >> 8) / 8388608.0f - 1.0f;
}

static float token(int rank, int t, int col) {
    return value(1, (uint32_t)(rank * T + t), (uint32_t)col);
}

/* W_{d,e}[i][j], scaled so that a row of W x stays of order 1. */
static float weight(int d, int e, int i, int j) {
    return 0.25f * value(3 + (uint32_t)(d * E + e), (uint32_t)i, (uint32_t)j);
}

/* Expert (d, e) on n rows: out[r] = W_{d,e} in[r]. Row by row through a
 * scratch row, so out may be in. */
static void expert(int d, int e, const float *in, float *out, int64_t n) {
    for (int64_t r = 0; r < n; r++) {
        float row[H];
        for (int i = 0; i < H; i++) {
            float acc = 0.0f;
            for (int j = 0; j < H; j++)
                acc += weight(d, e, i, j) * in[r * H + j];
            row[i] = acc;
        }
        memcpy(out + r * H, row, sizeof row);
    }
}

/* The router: scores x . G[:, g] for every global expert g < P*E, keeps the
 * k best (the lower g on a tie, in score order) and weights them with a
 * softmax over those k. Fills d, e and w of c[0..k). */
static void route(const float *x, int p, int k, choice *c) {
    float score[MAX_P * E];
    int taken[MAX_P * E] = {0};
    for (int g = 0; g < p * E; g++) {
        score[g] = 0.0f;
        for (int i = 0; i < H; i++)
            score[g] += x[i] * value(2, (uint32_t)i, (uint32_t)g);
    }
    float sum = 0.0f;
    for (int i = 0; i < k; i++) {
        int best = -1;
        for (int g = 0; g < p * E; g++)
            if (!taken[g] && (best < 0 || score[g] > score[best])) best = g;
        taken[best] = 1;
        c[i] = (choice){.d = best / E, .e = best % E, .j = -1};
        /* the best score first: every exponent is <= 0 and cannot overflow */
        c[i].w = expf(score[best] - score[c[0].d * E + c[0].e]);
        sum += c[i].w;
    }
    for (int i = 0; i < k; i++)
        c[i].w /= sum;
}

/* y += w * row, one returned row of a token. */
static void accumulate(float *y, float w, const float *row) {
    for (int col = 0; col < H; col++)
        y[col] += w * row[col];
}

/* --mode packed: one dispatch, the experts on contiguous runs, one combine. */
static void packed_layer(pld_ctx *ctx, const layer_args *a, rank_data *r, int k) {
    int me = pld_rank(ctx), p = pld_nranks(ctx);
    pld_moe_layout l = {0};
    l.experts_per_rank = E;
    l.max_rows = M;
    pld_tensor input = pld_tensor_make(r->input, PLD_FP32, 2, PLD_IDX((int64_t)p * E * M, H));
    pld_tensor counts = pld_tensor_make(r->send_counts, PLD_INT32, 2, PLD_IDX(p, E));
    pld_tensor offsets = pld_tensor_make(r->offsets, PLD_INT32, 1, PLD_IDX(E + 1));

    pld_moe_dispatch(ctx, &l, input, a->target, a->signal, counts, a->recv_counts, offsets);

    /* My experts: expert e's rows are target[offsets[e] .. offsets[e+1]),
     * from every source, one run that a single matrix product could take. */
    const float *rows = pld_local(ctx, a->target).data;
    float *done = pld_local(ctx, a->expert_out).data;
    for (int e = 0; e < E; e++)
        expert(me, e, rows + (int64_t)r->offsets[e] * H, done + (int64_t)r->offsets[e] * H,
               r->offsets[e + 1] - r->offsets[e]);

    pld_moe_combine(ctx, &l, a->expert_out, a->out, a->signal, counts, a->recv_counts);

    /* Every row came back to the slot it left from. */
    const float *back = pld_local(ctx, a->out).data;
    for (int t = 0; t < T; t++)
        for (int i = 0; i < k; i++) {
            const choice *c = &r->route[t][i];
            accumulate(r->y[t], c->w, back + ((int64_t)(c->d * E + c->e) * M + c->j) * H);
        }
}

/* --mode blocks: per local expert e, an all-to-all-v of the blocks (d, e)
 * there, the expert on P blocks, an all-to-all-v back. Every call has its
 * own target and recv_counts windows: a push builtin may write a peer's
 * windows before that peer has left the previous call on the signal. */
static void blocks_layer(pld_ctx *ctx, const layer_args *a, rank_data *r, int k) {
    int me = pld_rank(ctx), p = pld_nranks(ctx);
    int64_t rows = (int64_t)p * M;
    for (int e = 0; e < E; e++) {
        /* Block d of expert e's send buffer is block (d, e) of the input. */
        for (int d = 0; d < p; d++) {
            r->blk_counts[e][d] = r->send_counts[d][e];
            memcpy(r->blk[e][d * M], r->input[(d * E + e) * M],
                   sizeof(float) * H * (size_t)r->send_counts[d][e]);
        }
        pld_all_to_all_v(ctx, pld_tensor_make(r->blk[e], PLD_FP32, 2, PLD_IDX(rows, H)),
                         a->to_expert[e], a->signal,
                         pld_tensor_make(r->blk_counts[e], PLD_INT32, 1, PLD_IDX(p)), a->recv[e]);
    }

    /* My experts: source s's rows are to_expert[e][s*M .. s*M + recv[s]),
     * P runs with gaps between them. The results go into the send buffer,
     * at the same places, for the way back. */
    for (int e = 0; e < E; e++) {
        const float *rows_in = pld_local(ctx, a->to_expert[e]).data;
        const int32_t *recv = pld_local(ctx, a->recv[e]).data;
        for (int s = 0; s < p; s++)
            expert(me, e, rows_in + (int64_t)s * M * H, r->blk[e][s * M], recv[s]);
    }

    /* Back: to source s go as many rows as it sent, so my recv_counts are
     * the send counts of the return trip. */
    for (int e = 0; e < E; e++)
        pld_all_to_all_v(ctx, pld_tensor_make(r->blk[e], PLD_FP32, 2, PLD_IDX(rows, H)), a->back[e],
                         a->signal, pld_local(ctx, a->recv[e]), a->recv_back[e]);

    for (int t = 0; t < T; t++)
        for (int i = 0; i < k; i++) {
            const choice *c = &r->route[t][i];
            const float *back = pld_local(ctx, a->back[c->e]).data;
            accumulate(r->y[t], c->w, back + ((int64_t)c->d * M + c->j) * H);
        }
}

/* --mode indexed: per local expert e, the tokens go out through an index
 * (no send buffer), the expert works in place, and the combine brings the
 * rows home already weighted and summed per token. */
static void indexed_layer(pld_ctx *ctx, const layer_args *a, rank_data *r, int k) {
    int me = pld_rank(ctx), p = pld_nranks(ctx);
    for (int e = 0; e < E; e++)
        for (int j = 0; j < p * T; j++)
            r->index[e][j] = -1; /* past the count: never read */
    for (int t = 0; t < T; t++)
        for (int i = 0; i < k; i++) {
            const choice *c = &r->route[t][i];
            r->index[c->e][c->d * T + c->j] = t;
            r->gate[c->e][c->d * T + c->j] = c->w;
        }
    pld_tensor x = pld_tensor_make(r->x, PLD_FP32, 2, PLD_IDX(T, H));
    for (int e = 0; e < E; e++) {
        /* Peers read my counts from this window during the call. */
        int32_t *counts = pld_local(ctx, a->counts[e]).data;
        for (int d = 0; d < p; d++)
            counts[d] = r->send_counts[d][e];
        pld_indexed_all_to_all_v(ctx, x, a->to_expert[e], a->signal, a->counts[e],
                                 pld_tensor_make(r->recv[e], PLD_INT32, 2, PLD_IDX(p, 1)),
                                 pld_tensor_make(r->index[e], PLD_INT32, 2, PLD_IDX(p, T)), 1);
    }

    /* My experts, in place: source s's rows at s*T, P runs as in blocks. */
    for (int e = 0; e < E; e++) {
        float *rows = pld_local(ctx, a->to_expert[e]).data;
        for (int s = 0; s < p; s++)
            expert(me, e, rows + (int64_t)s * T * H, rows + (int64_t)s * T * H, r->recv[e][s]);
    }

    for (int e = 0; e < E; e++)
        pld_indexed_combine(ctx, a->to_expert[e],
                            pld_tensor_make(r->combined[e], PLD_FP32, 2, PLD_IDX(T, H)), a->signal,
                            a->counts[e], pld_tensor_make(r->index[e], PLD_INT32, 2, PLD_IDX(p, T)),
                            pld_tensor_make(r->gate[e], PLD_FP32, 2, PLD_IDX(p, T)), 1);
    for (int t = 0; t < T; t++)
        for (int e = 0; e < E; e++)
            accumulate(r->y[t], 1.0f, r->combined[e][t]);
}

/* The golden: the same layer for token t of `rank`, on one rank, with no
 * exchange: route, every chosen expert on the token, the weighted sum.
 * scale[col] = sum of |w_i * row_i[col]|, for the tolerance. */
static void reference(int rank, int t, int p, int k, float *want, float *scale) {
    float x[H], row[H];
    choice c[MAX_K];
    for (int col = 0; col < H; col++) {
        x[col] = token(rank, t, col);
        want[col] = scale[col] = 0.0f;
    }
    route(x, p, k, c);
    for (int i = 0; i < k; i++) {
        expert(c[i].d, c[i].e, x, row, 1);
        for (int col = 0; col < H; col++) {
            want[col] += c[i].w * row[col];
            scale[col] += fabsf(c[i].w * row[col]);
        }
    }
}

static void layer_kernel(pld_ctx *ctx, void *arg) {
    const layer_args *a = arg;
    int me = pld_rank(ctx), p = pld_nranks(ctx), k = top_k(p);
    rank_data *r = a->data[me];

    /* 1. Route, and copy each token into the next free row of the block
     * (d, e) of every choice: rows (d*E+e)*M + j, j counting up from 0. */
    for (int t = 0; t < T; t++) {
        for (int col = 0; col < H; col++)
            r->x[t][col] = token(me, t, col);
        route(r->x[t], p, k, r->route[t]);
        for (int i = 0; i < k; i++) {
            choice *c = &r->route[t][i];
            c->j = r->send_counts[c->d][c->e]++;
            memcpy(r->input[(c->d * E + c->e) * M + c->j], r->x[t], sizeof r->x[t]);
        }
    }

    /* 2-4. Dispatch, experts, combine: y[t] = sum of w_i * W_i x[t]. */
    if (a->mode == MODE_PACKED)
        packed_layer(ctx, a, r, k);
    else if (a->mode == MODE_BLOCKS)
        blocks_layer(ctx, a, r, k);
    else
        indexed_layer(ctx, a, r, k);

    /* Golden. The reference adds a token's k terms in choice order; packed
     * and blocks do the same, but the indexed combine sums per local
     * expert first, so the order may differ: a tolerance of 2(k+1) ulps of
     * the sum of |terms| bounds any reordering of k fp32 products. */
    for (int t = 0; t < T; t++) {
        float want[H], scale[H];
        reference(me, t, p, k, want, scale);
        for (int col = 0; col < H; col++) {
            float got = r->y[t][col];
            if (!(fabsf(got - want[col]) <= 2.0f * (float)(k + 1) * FLT_EPSILON * scale[col])) {
                const choice *c = r->route[t];
                pld_fail(ctx,
                         "token %d col %d: got %.9g want %.9g (first choice: expert %d of rank %d, "
                         "w %.4f)",
                         t, col, (double)got, (double)want[col], c->e, c->d, (double)c->w);
            }
        }
    }
}

/* Removes `flag` from argv; returns 1 when it was there. */
static int take_flag(int *argc, char **argv, const char *flag) {
    int found = 0, keep = 1;
    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], flag) == 0)
            found = 1;
        else
            argv[keep++] = argv[i];
    }
    *argc = keep;
    argv[keep] = NULL;
    return found;
}

/* --stats: what moved, from the counters of the ranks this process hosts
 * (the launch runs nothing but the layer), next to the token copies the
 * router made: packed and indexed move exactly the copies that leave
 * their rank, H * 4 bytes each, there and back. */
static void print_stats(pld_world *w, int mode, int on_a5) {
    int p = pld_world_size(w), k = top_k(p), n = 0;
    long copies = 0, remote = 0;
    pld_counters sum = {0};
    for (int rank = 0; rank < p; rank++) {
        pld_counters c;
        if (!pld_world_hosts_rank(w, rank) || pld_rank_counters(w, rank, &c) != PLD_OK) continue;
        n++;
        sum.bytes_to_peers += c.bytes_to_peers;
        sum.bytes_from_peers += c.bytes_from_peers;
        sum.bytes_self += c.bytes_self;
        sum.waits += c.waits;
        sum.urma_sqes += c.urma_sqes;
        sum.urma_wqebbs += c.urma_wqebbs;
        sum.urma_nops += c.urma_nops;
        sum.urma_doorbells += c.urma_doorbells;
        sum.urma_cqes += c.urma_cqes;
        for (int t = 0; t < T; t++) {
            float x[H];
            choice ch[MAX_K];
            for (int col = 0; col < H; col++)
                x[col] = token(rank, t, col);
            route(x, p, k, ch);
            for (int i = 0; i < k; i++) {
                copies++;
                remote += ch[i].d != rank;
            }
        }
    }
    if (!pld_is_root_process(w) || n == 0) return;
    printf("%s at P=%d, top-%d of %d experts, summed over %d of %d ranks:\n", modes[mode], p, k,
           p * E, n, p);
    printf("  token copies      %ld, %ld to other ranks (%d B each)\n", copies, remote,
           H * (int)sizeof(float));
    printf("  bytes to peers    %llu\n", (unsigned long long)sum.bytes_to_peers);
    printf("  bytes from peers  %llu\n", (unsigned long long)sum.bytes_from_peers);
    printf("  bytes self        %llu\n", (unsigned long long)sum.bytes_self);
    /* every wait of these builtins is a rank waiting for one peer in a
     * round all ranks take part in */
    printf("  rounds            %.4g (waits per rank / (P-1))\n", (double)sum.waits / n / (p - 1));
    if (on_a5) {
        printf("  urma SQEs         %llu\n", (unsigned long long)sum.urma_sqes);
        printf("  urma WQEBBs       %llu, %llu of them NOPs\n", (unsigned long long)sum.urma_wqebbs,
               (unsigned long long)sum.urma_nops);
        printf("  urma doorbells    %llu\n", (unsigned long long)sum.urma_doorbells);
        printf("  urma CQEs         %llu\n", (unsigned long long)sum.urma_cqes);
    }
}

/* A window for the layer, remembered in bufs[] to be freed at the end. */
static pld_status add_window(pld_world *w, pld_window_buffer **bufs, int *n, const char *name,
                             pld_dtype dtype, int64_t rows, int64_t cols, pld_dtensor *view) {
    pld_window_buffer *b;
    pld_status st = ex_alloc_window_2d(w, name, dtype, rows, cols, &b, view);
    if (st == PLD_OK) bufs[(*n)++] = b;
    return st;
}

int main(int argc, char **argv) {
    pld_world *w;
    pld_status st = pld_world_init_from_args(&w, &argc, &argv);
    if (st != PLD_OK) return ex_init_failed(argv[0], st);
    int stats = take_flag(&argc, argv, "--stats");
    int mode;
    int rc = ex_setup(w, argc, argv, modes, &mode);
    if (rc == 0) printf("  --stats  print the layer's counters, summed over the ranks\n");
    int p = pld_world_size(w);
    int on_a5 = strcmp(pld_world_platform(w), "a5sim") == 0;
    if (rc == EX_RUN && p > MAX_P) {
        fprintf(stderr, "19_moe_layer: at most %d ranks (got %d)\n", MAX_P, p);
        rc = 2;
    }
    if (rc == EX_RUN && mode == MODE_INDEXED && !on_a5) {
        fprintf(stderr, "19_moe_layer: --mode indexed needs -p a5sim: pld_indexed_all_to_all_v "
                        "sends through the a5sim URMA queue model\n");
        rc = 2;
    }
    if (rc != EX_RUN) {
        pld_world_finalize(w);
        return rc;
    }

    layer_args *a = pld_host_alloc(w, sizeof *a);
    pld_window_buffer *bufs[1 + 5 * E + 4];
    int nbufs = 0;
    if (!a) return ex_finish(w, PLD_ERR_NOMEM);
    a->mode = mode;
    for (int rank = 0; rank < p; rank++)
        if (pld_world_hosts_rank(w, rank) &&
            !(a->data[rank] = pld_host_alloc(w, sizeof(rank_data))))
            return ex_finish(w, PLD_ERR_NOMEM);
    int64_t rows = (int64_t)p * E * M;
    st = add_window(w, bufs, &nbufs, "signal", PLD_INT32, p, 1, &a->signal);
    if (mode == MODE_PACKED) {
        if (st == PLD_OK) st = add_window(w, bufs, &nbufs, "target", PLD_FP32, rows, H, &a->target);
        if (st == PLD_OK)
            st = add_window(w, bufs, &nbufs, "expert_out", PLD_FP32, rows, H, &a->expert_out);
        if (st == PLD_OK) st = add_window(w, bufs, &nbufs, "out", PLD_FP32, rows, H, &a->out);
        if (st == PLD_OK)
            st = add_window(w, bufs, &nbufs, "recv_counts", PLD_INT32, p, E, &a->recv_counts);
    }
    for (int e = 0; e < E && mode != MODE_PACKED; e++) {
        char name[32];
        snprintf(name, sizeof name, "to_expert%d", e);
        if (st == PLD_OK)
            st = add_window(w, bufs, &nbufs, name, PLD_FP32, (int64_t)p * M, H, &a->to_expert[e]);
        if (mode == MODE_BLOCKS) {
            snprintf(name, sizeof name, "back%d", e);
            if (st == PLD_OK)
                st = add_window(w, bufs, &nbufs, name, PLD_FP32, (int64_t)p * M, H, &a->back[e]);
            snprintf(name, sizeof name, "recv%d", e);
            if (st == PLD_OK) st = add_window(w, bufs, &nbufs, name, PLD_INT32, p, 1, &a->recv[e]);
            snprintf(name, sizeof name, "recv_back%d", e);
            if (st == PLD_OK)
                st = add_window(w, bufs, &nbufs, name, PLD_INT32, p, 1, &a->recv_back[e]);
        } else {
            snprintf(name, sizeof name, "send_counts%d", e);
            if (st == PLD_OK)
                st = add_window(w, bufs, &nbufs, name, PLD_INT32, p, 1, &a->counts[e]);
        }
    }
    if (st == PLD_OK) st = pld_launch(w, layer_kernel, a);
    if (st == PLD_OK && stats) print_stats(w, mode, on_a5);

    while (nbufs > 0)
        pld_free_window_buffer(w, bufs[--nbufs]);
    for (int rank = 0; rank < p; rank++)
        pld_host_free(w, a->data[rank]);
    pld_host_free(w, a);
    return ex_finish(w, st);
}
