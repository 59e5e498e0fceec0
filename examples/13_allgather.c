/* SPDX-License-Identifier: Apache-2.0 */
/* Step 13 — allgather: every rank's slice, on every rank, in rank order.
 *
 * Every rank is both a producer and a consumer: rank r contributes a slice
 * x [1, SIZE]; afterwards every rank holds y = [x_0, x_1, ..., x_{P-1}]
 * [1, P*SIZE]. Both modes share one [P, SIZE] window: row s is rank s's slot.
 *
 * --mode hand (pull):  stage x in my row `me`, barrier (notify AtomicAdd /
 *                      wait Ge), then remote_load every rank's row, my own
 *                      included, into y at offset peer*SIZE.
 * --mode builtin (push): pld_allgather puts x into row `me` of every rank's
 *                      window (mine included) and then crosses the barrier;
 *                      I read the rows of my own window into y.
 *
 *   build/examples/13_allgather -p a2a3sim -d 0,1 [--mode hand|builtin] [--ir]
 */
#include "example_util.h"

#define SIZE 64

enum { MODE_HAND, MODE_BUILTIN };
static const char *const modes[] = {"hand", "builtin", NULL};

typedef struct allgather_args {
    int mode;
    int32_t *x;         /* [P][1, SIZE] host-prepared: rank r's slice at r */
    int32_t *y;         /* [P][1, P*SIZE]: rank r's output at r */
    pld_dtensor data;   /* [P, SIZE] INT32: row s = rank s's slice */
    pld_dtensor signal; /* [P, 1] INT32 */
} allgather_args;

/* Element j of rank r's slice. */
static int32_t slice_value(int rank, int64_t j) {
    return rank * 1000 + (int32_t)j;
}

/* The output: the rank-ordered concatenation, identical on every rank.
 * Element j of y comes from rank j / SIZE. */
static int32_t golden_concat(int unused, int64_t i, int64_t j) {
    (void)unused, (void)i;
    return slice_value((int)(j / SIZE), j % SIZE);
}

static void hand_step(pld_ctx *ctx, allgather_args *a, pld_tensor x, pld_tensor y) {
    int me = pld_rank(ctx);
    int nranks = pld_nranks(ctx);
    pld_tile *row = pld_tile_create(ctx, PLD_INT32, 1, SIZE);

    /* Phase 1 — stage this rank's slice into its own row. */
    pld_load(ctx, row, x, PLD_IDX(0, 0));
    pld_store(ctx, row, pld_local(ctx, a->data), PLD_IDX(me, 0));

    /* Phase 2 — barrier: notify every peer, wait on every peer's cell. */
    for (int peer = 0; peer < nranks; peer++)
        if (peer != me) pld_notify(ctx, a->signal, peer, PLD_IDX(me, 0), 1, PLD_NOTIFY_ATOMIC_ADD);
    for (int src = 0; src < nranks; src++)
        if (src != me) pld_wait(ctx, a->signal, PLD_IDX(src, 0), 1, PLD_WAIT_GE);

    /* Phase 3 — gather: pull every rank's row (mine too) to offset peer*SIZE. */
    for (int peer = 0; peer < nranks; peer++) {
        pld_remote_load(ctx, row, a->data, peer, PLD_IDX(peer, 0));
        pld_store(ctx, row, y, PLD_IDX(0, peer * SIZE));
    }
}

static void builtin_step(pld_ctx *ctx, allgather_args *a, pld_tensor x, pld_tensor y) {
    int nranks = pld_nranks(ctx);
    pld_tile *row = pld_tile_create(ctx, PLD_INT32, 1, SIZE);

    /* Stage + barrier + gather in one call. The source is my plain x, not
     * a window; afterwards the window is the result. */
    pld_allgather(ctx, x, a->data, a->signal);

    /* Row src of my own window = rank src's slice: local reads only. */
    for (int src = 0; src < nranks; src++) {
        pld_load(ctx, row, pld_local(ctx, a->data), PLD_IDX(src, 0));
        pld_store(ctx, row, y, PLD_IDX(0, src * SIZE));
    }
}

static void allgather_kernel(pld_ctx *ctx, void *arg) {
    allgather_args *a = arg;
    int me = pld_rank(ctx);
    int nranks = pld_nranks(ctx);
    pld_tensor x = pld_tensor_make(a->x + (int64_t)me * SIZE, PLD_INT32, 2, PLD_IDX(1, SIZE));
    int32_t *out = a->y + (int64_t)me * nranks * SIZE;
    pld_tensor y = pld_tensor_make(out, PLD_INT32, 2, PLD_IDX(1, (int64_t)nranks * SIZE));

    if (a->mode == MODE_HAND)
        hand_step(ctx, a, x, y);
    else
        builtin_step(ctx, a, x, y);

    /* The order is the contract: slot p must hold rank p's slice. */
    ex_check_block(ctx, "y", out, 1, (int64_t)nranks * SIZE, golden_concat, 0);
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
    allgather_args *a = pld_host_alloc(w, sizeof *a);
    int32_t *x = pld_host_alloc(w, (size_t)nranks * SIZE * sizeof *x);
    int32_t *y = pld_host_alloc(w, (size_t)nranks * nranks * SIZE * sizeof *y);
    if (!a || !x || !y) {
        st = PLD_ERR_NOMEM;
        goto out;
    }
    a->mode = mode;
    a->x = x;
    a->y = y;
    for (int r = 0; r < nranks; r++)
        for (int64_t j = 0; j < SIZE; j++)
            x[(int64_t)r * SIZE + j] = slice_value(r, j);

    st = ex_alloc_window_2d(w, "data", PLD_INT32, nranks, SIZE, &data_buf, &a->data);
    if (st == PLD_OK)
        st = ex_alloc_window_2d(w, "signal", PLD_INT32, nranks, 1, &signal_buf, &a->signal);
    if (st == PLD_OK) st = pld_launch(w, allgather_kernel, a);

out:
    if (signal_buf) pld_free_window_buffer(w, signal_buf);
    if (data_buf) pld_free_window_buffer(w, data_buf);
    pld_host_free(w, y);
    pld_host_free(w, x);
    pld_host_free(w, a);
    return ex_finish(w, st);
}
