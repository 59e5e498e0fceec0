/* SPDX-License-Identifier: Apache-2.0 */
/* Step 12 — broadcast: one root's data on every rank; reveal pld_broadcast.
 *
 * The root stages its block in its window; a barrier says "staged"; every
 * other rank pulls the block from the root's window into its own with
 * pld_get. Every rank takes a turn as root, one round each, so a program
 * that assumes root 0 fails.
 *
 * --mode hand:    stage, hand-written barrier (round k waits for >= k: the
 *                 counters are monotonic), pull.
 * --mode builtin: stage, pld_broadcast. It adds a second, "read done",
 *                 barrier so that the root may restage as soon as the call
 *                 returns, and takes its credits back (self-clearing).
 *
 *   build/examples/12_broadcast -p a2a3sim -d 0,1,2 [--mode hand|builtin]
 */
#include "example_util.h"

#define ROWS 4
#define COLS 64

enum { MODE_HAND, MODE_BUILTIN };
static const char *const modes[] = {"hand", "builtin", NULL};

typedef struct bcast_args {
    int mode;
    pld_dtensor data;   /* [ROWS, COLS] INT32: the root's block, then everyone's copy */
    pld_dtensor signal; /* [P, 1] INT32 */
} bcast_args;

/* Element [i,j] of root r's block: names the root (and so the round). */
static int32_t golden(int root, int64_t i, int64_t j) {
    return root * 1000 + (int32_t)(i * 100 + j);
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

static void bcast_kernel(pld_ctx *ctx, void *arg) {
    bcast_args *a = arg;
    int me = pld_rank(ctx);
    int nranks = pld_nranks(ctx);
    pld_tensor mine = pld_local(ctx, a->data);
    pld_tile *block = pld_tile_create(ctx, PLD_INT32, ROWS, COLS);
    int32_t *v = pld_tile_data(block);

    for (int root = 0; root < nranks; root++) {
        /* 1. The root stages its block in its own window. */
        if (me == root) {
            for (int64_t i = 0; i < ROWS; i++)
                for (int64_t j = 0; j < COLS; j++)
                    v[i * COLS + j] = golden(root, i, j);
            pld_store(ctx, block, mine, PLD_IDX(0, 0));
        }

        if (a->mode == MODE_HAND) {
            /* 2. Ready barrier, round root+1. */
            hand_barrier(ctx, a->signal, root + 1);
            /* 3. Everyone else pulls the whole window from the root. */
            if (me != root) pld_get(ctx, mine, root, a->data, NULL);
        } else {
            pld_broadcast(ctx, a->data, a->signal, root);
        }

        ex_check_block(ctx, "data", mine.data, ROWS, COLS, golden, root);
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
    bcast_args *a = pld_host_alloc(w, sizeof *a);
    if (!a) {
        st = PLD_ERR_NOMEM;
        goto out;
    }
    a->mode = mode;

    st = ex_alloc_window_2d(w, "data", PLD_INT32, ROWS, COLS, &data_buf, &a->data);
    if (st == PLD_OK)
        st = ex_alloc_window_2d(w, "signal", PLD_INT32, nranks, 1, &signal_buf, &a->signal);
    if (st == PLD_OK) st = pld_launch(w, bcast_kernel, a);

out:
    if (signal_buf) pld_free_window_buffer(w, signal_buf);
    if (data_buf) pld_free_window_buffer(w, data_buf);
    pld_host_free(w, a);
    return ex_finish(w, st);
}
