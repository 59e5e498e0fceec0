/* SPDX-License-Identifier: Apache-2.0 */
/* Step 09 — allreduce_two_phase: reduce-scatter, then allgather, by hand.
 *
 * The mesh of step 08 makes every rank read all P-1 peer vectors in full.
 * Splitting the vector into P segments halves the problem twice over:
 *   phase 1, reduce-scatter: rank r sums only segment r, reading segment r
 *            of every peer;
 *   phase 2, allgather:      rank r copies every other segment k from its
 *            owner, rank k, which now holds the final sum of it.
 * Each phase moves about (P-1)/P of the vector per rank instead of (P-1)
 * whole vectors.
 *
 * The vector (1001 elements) does not divide evenly by P: segment k is
 * [1001*k/P, 1001*(k+1)/P), so lengths differ by one and every element is
 * covered exactly once.
 *
 *   build/examples/09_allreduce_two_phase -p a2a3sim -d 0,1,2 [--mode hand]
 */
#include "example_util.h"

#define N 1001

enum { MODE_HAND };
static const char *const modes[] = {"hand", NULL};

typedef struct two_phase_args {
    pld_dtensor data;   /* [1, N] INT32: my vector, then the sum */
    pld_dtensor signal; /* [P, 1] INT32 */
} two_phase_args;

static int32_t input_value(int rank, int64_t j) {
    return rank * 10000 + (int32_t)j;
}

/* Sum over r < P of (r*10000 + j); the owner argument carries P. */
static int32_t golden_sum(int nranks, int64_t i, int64_t j) {
    (void)i;
    return 10000 * (nranks * (nranks - 1) / 2) + nranks * (int32_t)j;
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

static void two_phase_kernel(pld_ctx *ctx, void *arg) {
    two_phase_args *a = arg;
    int me = pld_rank(ctx);
    int nranks = pld_nranks(ctx);
    pld_tensor mine = pld_local(ctx, a->data);

    /* 0. Stage my whole vector. */
    int32_t *v = mine.data;
    for (int64_t j = 0; j < N; j++)
        v[j] = input_value(me, j);
    hand_barrier(ctx, a->signal, 1); /* ready: every vector is staged */

    /* Phase 1 — reduce-scatter: my segment, summed over every rank. */
    int64_t b = ex_seg_begin(N, nranks, me);
    int64_t len = ex_seg_begin(N, nranks, me + 1) - b;
    pld_tile *acc = pld_tile_create(ctx, PLD_INT32, 1, len);
    pld_tile *tmp = pld_tile_create(ctx, PLD_INT32, 1, len);
    pld_load(ctx, acc, mine, PLD_IDX(0, b));
    for (int i = 1; i < nranks; i++) {
        int peer = (me + i) % nranks;
        pld_remote_load(ctx, tmp, a->data, peer, PLD_IDX(0, b));
        pld_tile_reduce(ctx, acc, tmp, PLD_SUM);
    }
    /* Safe without another barrier: peers read their own segment of my
     * vector, never segment `me`. */
    pld_store(ctx, acc, mine, PLD_IDX(0, b));
    pld_tile_free(ctx, tmp);
    pld_tile_free(ctx, acc);

    /* Between the phases: every segment is reduced, and every peer has
     * finished reading my vector, so phase 2 may overwrite it. Same signal,
     * monotonic counters: >= 2. */
    hand_barrier(ctx, a->signal, 2);

    /* Phase 2 — allgather: segment k from its owner, rank k. */
    for (int i = 1; i < nranks; i++) {
        int k = (me + i) % nranks;
        int64_t kb = ex_seg_begin(N, nranks, k);
        int64_t klen = ex_seg_begin(N, nranks, k + 1) - kb;
        pld_tile *seg = pld_tile_create(ctx, PLD_INT32, 1, klen); /* segments differ by one */
        pld_remote_load(ctx, seg, a->data, k, PLD_IDX(0, kb));
        pld_store(ctx, seg, mine, PLD_IDX(0, kb));
        pld_tile_free(ctx, seg);
    }

    ex_check_block(ctx, "data", mine.data, 1, N, golden_sum, nranks);
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
    two_phase_args *a = pld_host_alloc(w, sizeof *a);
    if (!a) {
        st = PLD_ERR_NOMEM;
        goto out;
    }

    st = ex_alloc_window_2d(w, "data", PLD_INT32, 1, N, &data_buf, &a->data);
    if (st == PLD_OK)
        st = ex_alloc_window_2d(w, "signal", PLD_INT32, nranks, 1, &signal_buf, &a->signal);
    if (st == PLD_OK) st = pld_launch(w, two_phase_kernel, a);

out:
    if (signal_buf) pld_free_window_buffer(w, signal_buf);
    if (data_buf) pld_free_window_buffer(w, data_buf);
    pld_host_free(w, a);
    return ex_finish(w, st);
}
