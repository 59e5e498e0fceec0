/* SPDX-License-Identifier: Apache-2.0 */
/* Step 15 — all_to_all: a different slice for every peer.
 *
 * Rank r has P chunks, one per destination: row d of its input x [P, SIZE]
 * is the chunk for rank d. Afterwards row s of rank d's output holds the
 * chunk rank s made for d. No two ranks receive the same bytes: this is the
 * personalised exchange behind MoE dispatch/combine.
 *
 * Both modes share one [P, SIZE] window: rank r's chunk for d lands in row r
 * of d's window.
 * --mode hand:    pld_put row d of x into row `me` of rank d's window, for
 *                 every d (me included); barrier with notify Set / wait
 *                 Ge(1) (every cell has a single writer); read the rows of
 *                 my own window back into y.
 * --mode builtin: pld_all_to_all does the puts and the barrier, and stops
 *                 there: the window is the result, reading it back stays
 *                 in my code.
 * --mode hand_lines: the hand kernel with its barrier on a [P, 16] signal,
 *                 one 64-byte line per writer. On the NPU a Set is a cached
 *                 store that writes its whole line back, so the [P, 1] cells
 *                 of several writers on one line (the seed's form, --mode
 *                 hand) can undo each other; PLD_CHECK=hazards reports it.
 *
 *   build/examples/15_all_to_all -p a2a3sim -d 0,1 [--mode hand|builtin|hand_lines] [--ir]
 */
#include "example_util.h"

#define SIZE 64

enum { MODE_HAND, MODE_BUILTIN, MODE_HAND_LINES };
static const char *const modes[] = {"hand", "builtin", "hand_lines", NULL};

/* INT32 cells per 64-byte line: --mode hand_lines gives each writer one */
#define LINE_CELLS 16

typedef struct a2a_args {
    int mode;
    int32_t *x;         /* [P][P, SIZE] host-prepared: rank r's input at r */
    int32_t *y;         /* [P][P, SIZE]: rank r's output at r */
    pld_dtensor data;   /* [P, SIZE] INT32: row s = the chunk rank s sent me */
    pld_dtensor signal; /* [P, 1] INT32 ([P, 16] in --mode hand_lines) */
} a2a_args;

/* input[r][d][j]: the chunk rank r makes for rank d. Source, destination
 * and element are all in the value. */
static int32_t input_value(int rank, int64_t d, int64_t j) {
    return rank * 1000 + (int32_t)(d * 100 + j);
}

/* My output row s holds input[s][me][j]: the owner argument is me. */
static int32_t golden_out(int me, int64_t s, int64_t j) {
    return input_value((int)s, me, j);
}

static void hand_step(pld_ctx *ctx, a2a_args *a, pld_tensor x, pld_tensor y) {
    int me = pld_rank(ctx);
    int nranks = pld_nranks(ctx);
    pld_tile *row = pld_tile_create(ctx, PLD_INT32, 1, SIZE);

    /* Phase 1 — push: row dest of x lands in dest's window at row me. */
    for (int dest = 0; dest < nranks; dest++) {
        pld_xfer chunk = {.dst_offsets = PLD_IDX(me, 0),
                          .src_offsets = PLD_IDX(dest, 0),
                          .shape = PLD_IDX(1, SIZE)};
        pld_put(ctx, a->data, dest, x, &chunk);
    }

    /* Phase 2 — barrier. I am the only writer of cell [me,0] on each peer,
     * so Set is enough: Set 1 / wait Ge 1. With a [P, 1] signal the cells
     * of all writers share one 64-byte line of the receiver, which the NPU
     * does not survive (PLD_CHECK=hazards says so); --mode hand_lines
     * passes a [P, 16] signal: row me is my own line. */
    for (int peer = 0; peer < nranks; peer++)
        if (peer != me) pld_notify(ctx, a->signal, peer, PLD_IDX(me, 0), 1, PLD_NOTIFY_SET);
    for (int src = 0; src < nranks; src++)
        if (src != me) pld_wait(ctx, a->signal, PLD_IDX(src, 0), 1, PLD_WAIT_GE);

    /* Phase 3 — read back: row src of my window holds src's chunk for me. */
    for (int src = 0; src < nranks; src++) {
        pld_load(ctx, row, pld_local(ctx, a->data), PLD_IDX(src, 0));
        pld_store(ctx, row, y, PLD_IDX(src, 0));
    }
}

static void builtin_step(pld_ctx *ctx, a2a_args *a, pld_tensor x, pld_tensor y) {
    int nranks = pld_nranks(ctx);
    pld_tile *row = pld_tile_create(ctx, PLD_INT32, 1, SIZE);

    /* Phases 1-2 in one call; x stays a plain tensor, separate from data. */
    pld_all_to_all(ctx, x, a->data, a->signal);

    /* Phase 3 is still mine: the window is the result. */
    for (int src = 0; src < nranks; src++) {
        pld_load(ctx, row, pld_local(ctx, a->data), PLD_IDX(src, 0));
        pld_store(ctx, row, y, PLD_IDX(src, 0));
    }
}

static void a2a_kernel(pld_ctx *ctx, void *arg) {
    a2a_args *a = arg;
    int me = pld_rank(ctx);
    int nranks = pld_nranks(ctx);
    int64_t block = (int64_t)nranks * SIZE;
    pld_tensor x = pld_tensor_make(a->x + me * block, PLD_INT32, 2, PLD_IDX(nranks, SIZE));
    pld_tensor y = pld_tensor_make(a->y + me * block, PLD_INT32, 2, PLD_IDX(nranks, SIZE));

    if (a->mode != MODE_BUILTIN)
        hand_step(ctx, a, x, y); /* the signal's shape makes the difference */
    else
        builtin_step(ctx, a, x, y);

    ex_check_block(ctx, "y", y.data, nranks, SIZE, golden_out, me);
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
    int64_t block = (int64_t)nranks * SIZE;
    pld_window_buffer *data_buf = NULL, *signal_buf = NULL;
    a2a_args *a = pld_host_alloc(w, sizeof *a);
    int32_t *x = pld_host_alloc(w, (size_t)(nranks * block) * sizeof *x);
    int32_t *y = pld_host_alloc(w, (size_t)(nranks * block) * sizeof *y);
    if (!a || !x || !y) {
        st = PLD_ERR_NOMEM;
        goto out;
    }
    a->mode = mode;
    a->x = x;
    a->y = y;
    for (int r = 0; r < nranks; r++)
        for (int64_t d = 0; d < nranks; d++)
            for (int64_t j = 0; j < SIZE; j++)
                x[r * block + d * SIZE + j] = input_value(r, d, j);

    st = ex_alloc_window_2d(w, "data", PLD_INT32, nranks, SIZE, &data_buf, &a->data);
    if (st == PLD_OK)
        st = ex_alloc_window_2d(w, "signal", PLD_INT32, nranks,
                                mode == MODE_HAND_LINES ? LINE_CELLS : 1, &signal_buf, &a->signal);
    if (st == PLD_OK) st = pld_launch(w, a2a_kernel, a);

out:
    if (signal_buf) pld_free_window_buffer(w, signal_buf);
    if (data_buf) pld_free_window_buffer(w, data_buf);
    pld_host_free(w, y);
    pld_host_free(w, x);
    pld_host_free(w, a);
    return ex_finish(w, st);
}
