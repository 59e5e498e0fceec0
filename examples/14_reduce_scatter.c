/* SPDX-License-Identifier: Apache-2.0 */
/* Step 14 — reduce_scatter: the other half of step 09; reveal
 * pld_reduce_scatter.
 *
 * Every rank stages P rows, one per destination: row d of rank r is r's
 * contribution to rank d. Afterwards row `me` of my window holds the sum over
 * ranks of their row `me`; the other rows are left as staged.
 *
 * --mode hand:    ready barrier; add row `me` of every peer into an
 *                 accumulator tile; store it into my row `me`; read-done
 *                 barrier (peers are done with my other rows).
 * --mode builtin: pld_reduce_scatter does the same, credits self-clearing.
 *
 * Two rounds restage different data into the same window: the read-done
 * barrier is what makes restaging safe, and the hand barriers show the
 * monotonic thresholds (round k uses 2k-1 and 2k).
 *
 *   build/examples/14_reduce_scatter -p a2a3sim -d 0,1,2 [--mode hand|builtin]
 */
#include "example_util.h"

#define ROUNDS 2
#define SIZE 64

enum { MODE_HAND, MODE_BUILTIN };
static const char *const modes[] = {"hand", "builtin", NULL};

typedef struct rs_args {
    int mode;
    pld_dtensor data;   /* [P, SIZE] INT32: row d = my contribution to rank d */
    pld_dtensor signal; /* [P, 1] INT32 */
} rs_args;

/* Element j of rank r's row d in round k: names source, destination, element. */
static int32_t input_value(int round, int rank, int64_t d, int64_t j) {
    return round * (rank * 1000 + (int32_t)(d * 100 + j));
}

/* Row d after the call, in round k: sum over r < P of input_value(k, r, d, j)
 * = k * (1000 * P(P-1)/2 + P*(d*100 + j)). */
static int32_t golden_sum(int round, int nranks, int64_t d, int64_t j) {
    return round * (1000 * (nranks * (nranks - 1) / 2) + nranks * (int32_t)(d * 100 + j));
}

/* The hand-written barrier of step 04: round `round` waits for >= round. */
static void hand_barrier(pld_ctx *ctx, pld_dtensor signal, int32_t round) {
    int me = pld_rank(ctx);
    int nranks = pld_nranks(ctx);
    for (int peer = 0; peer < nranks; peer++)
        if (peer != me) pld_notify(ctx, signal, peer, PLD_IDX(me, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
    for (int src = 0; src < nranks; src++)
        if (src != me) pld_wait(ctx, signal, PLD_IDX(src, 0), round, PLD_WAIT_GE);
}

static void hand_reduce_scatter(pld_ctx *ctx, rs_args *a, int round) {
    int me = pld_rank(ctx);
    int nranks = pld_nranks(ctx);
    pld_tensor mine = pld_local(ctx, a->data);
    pld_tile *acc = pld_tile_create(ctx, PLD_INT32, 1, SIZE);
    pld_tile *tmp = pld_tile_create(ctx, PLD_INT32, 1, SIZE);

    /* 1. Ready: every rank has staged all its rows. */
    hand_barrier(ctx, a->signal, 2 * round - 1);

    /* 2. My row, plus row `me` of every peer. */
    pld_load(ctx, acc, mine, PLD_IDX(me, 0));
    for (int i = 1; i < nranks; i++) {
        int peer = (me + i) % nranks;
        pld_remote_load(ctx, tmp, a->data, peer, PLD_IDX(me, 0));
        pld_tile_reduce(ctx, acc, tmp, PLD_SUM);
    }
    /* 3. Into my row `me`: no peer reads it, so no barrier is needed first. */
    pld_store(ctx, acc, mine, PLD_IDX(me, 0));

    /* 4. Read done: every peer has finished reading my other rows, so I may
     *    restage them. */
    hand_barrier(ctx, a->signal, 2 * round);

    pld_tile_free(ctx, tmp);
    pld_tile_free(ctx, acc);
}

static void rs_kernel(pld_ctx *ctx, void *arg) {
    rs_args *a = arg;
    int me = pld_rank(ctx);
    int nranks = pld_nranks(ctx);
    pld_tensor mine = pld_local(ctx, a->data);
    int32_t *v = mine.data;

    for (int round = 1; round <= ROUNDS; round++) {
        /* Stage one row per destination, my own row included. */
        for (int64_t d = 0; d < nranks; d++)
            for (int64_t j = 0; j < SIZE; j++)
                v[d * SIZE + j] = input_value(round, me, d, j);

        if (a->mode == MODE_HAND)
            hand_reduce_scatter(ctx, a, round);
        else
            pld_reduce_scatter(ctx, a->data, a->signal, PLD_SUM);

        /* Row `me` is the sum; check it in place. */
        for (int64_t j = 0; j < SIZE; j++)
            ex_check_i32(ctx, "data", me, j, v[me * SIZE + j], golden_sum(round, nranks, me, j));
    }
}

int main(int argc, char **argv) {
    pld_world *w;
    pld_status st = pld_world_init_from_args(&w, &argc, &argv);
    if (st != PLD_OK) return ex_init_failed(argv[0], st);
    int mode;
    int rc = ex_setup(w, argc, argv, modes, &mode);
    if (rc != EX_RUN) {
        pld_world_finalize(w);
        return rc;
    }

    int nranks = pld_world_size(w);
    pld_window_buffer *data_buf = NULL, *signal_buf = NULL;
    rs_args *a = pld_host_alloc(w, sizeof *a);
    if (!a) {
        st = PLD_ERR_NOMEM;
        goto out;
    }
    a->mode = mode;

    st = ex_alloc_window_2d(w, "data", PLD_INT32, nranks, SIZE, &data_buf, &a->data);
    if (st == PLD_OK)
        st = ex_alloc_window_2d(w, "signal", PLD_INT32, nranks, 1, &signal_buf, &a->signal);
    if (st == PLD_OK) st = pld_launch(w, rs_kernel, a);

out:
    if (signal_buf) pld_free_window_buffer(w, signal_buf);
    if (data_buf) pld_free_window_buffer(w, data_buf);
    pld_host_free(w, a);
    return ex_finish(w, st);
}
