/* SPDX-License-Identifier: Apache-2.0 */
/* Step 05 — remote_load_store: tile-level RMA, a one-step ring shift.
 *
 * A tile is a small 2-D scratch buffer in the rank's on-core memory (UB).
 * pld_remote_store writes a tile into a region of a peer's window;
 * pld_remote_load reads a region of a peer's window into a tile. pld_load /
 * pld_store do the same with this rank's own memory.
 *
 * Every rank stores its block into its right neighbour's window, crosses a
 * barrier, and then finds its left neighbour's block in its own window.
 *
 *   build/examples/05_remote_load_store -p a2a3sim -d 0,1
 */
#include "example_util.h"

#define ROWS 4
#define COLS 64

typedef struct shift_args {
    pld_dtensor data;   /* [ROWS, COLS] INT32: receives the left neighbour's block */
    pld_dtensor signal; /* [P, 1] INT32 barrier signal */
} shift_args;

/* Element [i,j] of rank r's block: names owner, row and column. */
static int32_t golden(int rank, int64_t i, int64_t j) {
    return rank * 1000 + (int32_t)(i * 100 + j);
}

static void shift_kernel(pld_ctx *ctx, void *arg) {
    shift_args *a = arg;
    int me = pld_rank(ctx);
    int nranks = pld_nranks(ctx);
    /* Ring neighbours; "+ nranks" keeps the left one non-negative at rank 0. */
    int right = (me + 1) % nranks;
    int left = (me - 1 + nranks) % nranks;

    pld_tile *out = pld_tile_create(ctx, PLD_INT32, ROWS, COLS);
    pld_tile *in = pld_tile_create(ctx, PLD_INT32, ROWS, COLS);
    int32_t *v = pld_tile_data(out);
    for (int64_t i = 0; i < ROWS; i++)
        for (int64_t j = 0; j < COLS; j++)
            v[i * COLS + j] = golden(me, i, j);

    /* 1. Push: my block lands in my right neighbour's window. */
    pld_remote_store(ctx, out, a->data, right, PLD_IDX(0, 0), PLD_ATOMIC_NONE);

    /* 2. Without this barrier a rank could read its window before its left
     *    neighbour's store has arrived (stale zeros). */
    pld_barrier(ctx, a->signal);

    /* 3. My own window now holds my left neighbour's block. */
    pld_load(ctx, in, pld_local(ctx, a->data), PLD_IDX(0, 0));
    ex_check_block(ctx, "data", pld_tile_data(in), ROWS, COLS, golden, left);

    /* 4. And my right neighbour's window holds mine: read it back remotely. */
    pld_remote_load(ctx, in, a->data, right, PLD_IDX(0, 0));
    ex_check_block(ctx, "data@right", pld_tile_data(in), ROWS, COLS, golden, me);
}

int main(int argc, char **argv) {
    pld_world *w;
    pld_status st = pld_world_init_from_args(&w, &argc, &argv);
    if (st != PLD_OK) return ex_init_failed(argv[0], st);
    int mode;
    int rc = ex_setup(w, argc, argv, NULL, &mode);
    if (rc != EX_RUN) {
        pld_world_finalize(w);
        return rc;
    }

    int nranks = pld_world_size(w);
    pld_window_buffer *data_buf = NULL, *signal_buf = NULL;
    shift_args *a = pld_host_alloc(w, sizeof *a);
    if (!a) {
        st = PLD_ERR_NOMEM;
        goto out;
    }

    st = pld_alloc_window_buffer(w, ROWS * COLS * sizeof(int32_t), "data", &data_buf);
    if (st == PLD_OK) st = pld_window(data_buf, PLD_INT32, 2, PLD_IDX(ROWS, COLS), &a->data);
    if (st == PLD_OK)
        st = pld_alloc_window_buffer(w, (size_t)nranks * sizeof(int32_t), "signal", &signal_buf);
    if (st == PLD_OK) st = pld_window(signal_buf, PLD_INT32, 2, PLD_IDX(nranks, 1), &a->signal);
    if (st == PLD_OK) st = pld_launch(w, shift_kernel, a);

    /* The host sees the same result: rank r's window holds rank r-1's block
     * (each process checks the ranks it hosts). */
    for (int r = 0; st == PLD_OK && r < nranks; r++) {
        if (!pld_world_hosts_rank(w, r)) continue;
        pld_tensor view;
        st = pld_window_host_view(w, a->data, r, &view);
        if (st == PLD_OK && !ex_host_check_block("data", r, view.data, ROWS, COLS, golden,
                                                 (r - 1 + nranks) % nranks))
            st = PLD_ERR_CHECK;
    }

out:
    if (signal_buf) pld_free_window_buffer(w, signal_buf);
    if (data_buf) pld_free_window_buffer(w, data_buf);
    pld_host_free(w, a);
    return ex_finish(w, st);
}
