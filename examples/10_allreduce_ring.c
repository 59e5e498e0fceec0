/* SPDX-License-Identifier: Apache-2.0 */
/* Step 10 — allreduce_ring: the two phases of step 09, around a ring.
 *
 * The vector is split into P segments (ragged: lengths differ by one). Every
 * rank only ever talks to its neighbours: it pulls one segment per step from
 * its left neighbour L, and tells its right neighbour R when it has finished
 * a step. 2(P-1) steps:
 *   reduce-scatter step g (0..P-2): pull segment (me-1-g) of L, add it into
 *       mine. Afterwards I hold the full sum of segment (me+1).
 *   allgather step t (0..P-2): pull segment (me-t) of L, copy it into mine.
 *
 * There is no global barrier. Each rank counts its left neighbour's progress
 * in one signal cell (monotonic "milestones": 1 = staged, 2+g = finished step
 * g) and waits before step g for milestone g+1: L's segment is ready.
 *
 * Write-after-read: allgather step t overwrites my segment (me-t), which R
 * read in its reduce-scatter step t. No extra wait is needed for that: each
 * rank is at most one step ahead of its left neighbour, so at most P-1 steps
 * ahead of R (R is P-1 hops to my left), and allgather step t is exactly P-1
 * steps after reduce-scatter step t. The chain of "L is ready" waits already
 * holds me back. It does not protect anything after the last step: running
 * the ring again on the same window needs a "done" handshake first.
 *
 *   build/examples/10_allreduce_ring -p a2a3sim -d 0,1,2 [--mode hand]
 */
#include "example_util.h"

#define N 1001

enum { MODE_HAND };
static const char *const modes[] = {"hand", NULL};

typedef struct ring_args {
    pld_dtensor data;   /* [1, N] INT32: my vector, then the sum */
    pld_dtensor signal; /* [P, 1] INT32: cell [L,0] counts my left neighbour's milestones */
} ring_args;

static int32_t input_value(int rank, int64_t j) {
    return rank * 10000 + (int32_t)j;
}

/* Sum over r < P of (r*10000 + j); the owner argument carries P. */
static int32_t golden_sum(int nranks, int64_t i, int64_t j) {
    (void)i;
    return 10000 * (nranks * (nranks - 1) / 2) + nranks * (int32_t)j;
}

/* One more milestone of mine, counted on my right neighbour, the only rank
 * that reads my window. */
static void progress(pld_ctx *ctx, pld_dtensor signal, int right) {
    pld_notify(ctx, signal, right, PLD_IDX(pld_rank(ctx), 0), 1, PLD_NOTIFY_ATOMIC_ADD);
}

/* Pulls segment k of `peer`'s vector; adds it into mine or copies it. */
static void pull_segment(pld_ctx *ctx, pld_dtensor data, int peer, int k, int reduce) {
    int nranks = pld_nranks(ctx);
    pld_tensor mine = pld_local(ctx, data);
    int64_t b = ex_seg_begin(N, nranks, k);
    int64_t len = ex_seg_begin(N, nranks, k + 1) - b;
    pld_tile *in = pld_tile_create(ctx, PLD_INT32, 1, len);
    pld_remote_load(ctx, in, data, peer, PLD_IDX(0, b));
    if (reduce) {
        pld_tile *acc = pld_tile_create(ctx, PLD_INT32, 1, len);
        pld_load(ctx, acc, mine, PLD_IDX(0, b));
        pld_tile_reduce(ctx, acc, in, PLD_SUM);
        pld_store(ctx, acc, mine, PLD_IDX(0, b));
        pld_tile_free(ctx, acc);
    } else {
        pld_store(ctx, in, mine, PLD_IDX(0, b));
    }
    pld_tile_free(ctx, in);
}

static void ring_kernel(pld_ctx *ctx, void *arg) {
    ring_args *a = arg;
    int me = pld_rank(ctx);
    int nranks = pld_nranks(ctx);
    int left = (me - 1 + nranks) % nranks;
    int right = (me + 1) % nranks;
    pld_tensor mine = pld_local(ctx, a->data);

    /* Stage my vector; milestone 1 tells my right neighbour. */
    int32_t *v = mine.data;
    for (int64_t j = 0; j < N; j++)
        v[j] = input_value(me, j);
    progress(ctx, a->signal, right);

    for (int g = 0; g < 2 * (nranks - 1); g++) {
        /* L finished step g-1 (milestone g+1): the segment I pull is ready. */
        pld_wait(ctx, a->signal, PLD_IDX(left, 0), g + 1, PLD_WAIT_GE);
        if (g < nranks - 1) {
            /* Reduce-scatter step g: add L's partial sum of segment me-1-g.
             * "+ nranks" keeps the segment index non-negative. */
            pull_segment(ctx, a->data, left, ((me - 1 - g) % nranks + nranks) % nranks, 1);
        } else {
            /* Allgather step t: copy L's final segment me-t. */
            int t = g - (nranks - 1);
            pull_segment(ctx, a->data, left, ((me - t) % nranks + nranks) % nranks, 0);
        }
        progress(ctx, a->signal, right); /* milestone g+2 */
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
    ring_args *a = pld_host_alloc(w, sizeof *a);
    if (!a) {
        st = PLD_ERR_NOMEM;
        goto out;
    }

    st = ex_alloc_window_2d(w, "data", PLD_INT32, 1, N, &data_buf, &a->data);
    if (st == PLD_OK)
        st = ex_alloc_window_2d(w, "signal", PLD_INT32, nranks, 1, &signal_buf, &a->signal);
    if (st == PLD_OK) st = pld_launch(w, ring_kernel, a);

out:
    if (signal_buf) pld_free_window_buffer(w, signal_buf);
    if (data_buf) pld_free_window_buffer(w, data_buf);
    pld_host_free(w, a);
    return ex_finish(w, st);
}
