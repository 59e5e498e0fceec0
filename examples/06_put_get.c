/* SPDX-License-Identifier: Apache-2.0 */
/* Step 06 — put_get: push vs pull with tensor-level transfers.
 *
 * pld_put copies a plain tensor (or a region of it) into a peer's window;
 * pld_get copies a region of a peer's window into a plain tensor. A pld_xfer
 * says which region: src_offsets, dst_offsets and shape go together, and
 * chunk_rows/chunk_cols/pipeline split a transfer too big for the UB.
 *
 * Both modes do the same ring shift, to the same final layout:
 *   - a small block lands in slot `left` of the receiver's inbox [P*ROWS, COLS];
 *   - a big block (larger than the UB) moves in chunks into bigdst.
 * --mode put: the sender pushes, then a barrier says "it has landed".
 * --mode get: the owner stages its data in a window, a barrier says "it is
 *             ready", then the receiver pulls.
 *
 *   build/examples/06_put_get -p a2a3sim -d 0,1 [--mode put|get]
 */
#include "example_util.h"

#define ROWS 4
#define COLS 64
#define BIG_ROWS 256 /* 256 x 256 INT32 = 256 KiB: more than the 192 KiB UB */
#define BIG_COLS 256
#define CHUNK_ROWS 64
#define CHUNK_COLS 128

enum { MODE_PUT, MODE_GET };
static const char *const modes[] = {"put", "get", NULL};

typedef struct xfer_args {
    int mode;
    int32_t *input;     /* [P, ROWS, COLS] host-prepared: rank r's block at r */
    pld_dtensor outbox; /* [ROWS, COLS]: get mode stages the block here for peers */
    pld_dtensor inbox;  /* [P*ROWS, COLS]: slot s (rows s*ROWS..) holds rank s's block */
    pld_dtensor bigsrc; /* [BIG_ROWS, BIG_COLS]: this rank's big block */
    pld_dtensor bigdst; /* [BIG_ROWS, BIG_COLS]: receives the left neighbour's big block */
    pld_dtensor signal; /* [P, 1] */
} xfer_args;

static int32_t golden(int rank, int64_t i, int64_t j) {
    return rank * 1000 + (int32_t)(i * 100 + j);
}

static int32_t golden_big(int rank, int64_t i, int64_t j) {
    return rank * 1000000 + (int32_t)(i * 1000 + j);
}

/* The whole inbox after the shift: slot `left` holds the left neighbour's
 * block, every other slot is still zero. */
static int32_t golden_inbox(int left, int64_t i, int64_t j) {
    return i / ROWS == left ? golden(left, i % ROWS, j) : 0;
}

static void xfer_kernel(pld_ctx *ctx, void *arg) {
    xfer_args *a = arg;
    int me = pld_rank(ctx);
    int nranks = pld_nranks(ctx);
    int right = (me + 1) % nranks;
    int left = (me - 1 + nranks) % nranks;

    pld_tensor mine =
        pld_tensor_make(a->input + (int64_t)me * ROWS * COLS, PLD_INT32, 2, PLD_IDX(ROWS, COLS));

    /* The big block is filled in place in my own window slice. */
    pld_tensor bigsrc = pld_local(ctx, a->bigsrc);
    int32_t *big = bigsrc.data;
    for (int64_t i = 0; i < BIG_ROWS; i++)
        for (int64_t j = 0; j < BIG_COLS; j++)
            big[i * BIG_COLS + j] = golden_big(me, i, j);

    /* In chunks of 64 x 128 (32 KiB), double-buffered. Without chunk sizes
     * the whole 256 KiB would be staged at once: PLD_ERR_NOMEM. */
    pld_xfer chunked = {.chunk_rows = CHUNK_ROWS, .chunk_cols = CHUNK_COLS, .pipeline = 1};

    if (a->mode == MODE_PUT) {
        /* Push: the sender names the peer and where the data lands there,
         * slot `me` of the right neighbour's inbox. */
        pld_xfer slot = {.dst_offsets = PLD_IDX(me * ROWS, 0),
                         .src_offsets = PLD_IDX(0, 0),
                         .shape = PLD_IDX(ROWS, COLS)};
        pld_put(ctx, a->inbox, right, mine, &slot);
        pld_put(ctx, a->bigdst, right, bigsrc, &chunked);

        /* Completion barrier: after it, my left neighbour's puts have landed. */
        pld_barrier(ctx, a->signal);
    } else {
        /* Pull reads from windows only, so the owner first stages its block
         * in its own window: a put to itself. */
        pld_put(ctx, a->outbox, me, mine, NULL);

        /* Ready barrier: after it, every rank's outbox and bigsrc are staged. */
        pld_barrier(ctx, a->signal);

        /* Pull: the receiver names the peer and where the data lands here. */
        pld_xfer slot = {.dst_offsets = PLD_IDX(left * ROWS, 0),
                         .src_offsets = PLD_IDX(0, 0),
                         .shape = PLD_IDX(ROWS, COLS)};
        pld_get(ctx, pld_local(ctx, a->inbox), left, a->outbox, &slot);
        pld_get(ctx, pld_local(ctx, a->bigdst), left, a->bigsrc, &chunked);
    }

    /* Same result in both modes. */
    ex_check_block(ctx, "inbox", pld_local(ctx, a->inbox).data, (int64_t)nranks * ROWS, COLS,
                   golden_inbox, left);
    ex_check_block(ctx, "bigdst", pld_local(ctx, a->bigdst).data, BIG_ROWS, BIG_COLS, golden_big,
                   left);
}

/* Allocates a zeroed window buffer of rows x cols INT32 and its 2-D view. */
static pld_status alloc_2d(pld_world *w, const char *name, int64_t rows, int64_t cols,
                           pld_window_buffer **buf_out, pld_dtensor *view_out) {
    pld_status st =
        pld_alloc_window_buffer(w, (size_t)(rows * cols) * sizeof(int32_t), name, buf_out);
    if (st != PLD_OK) return st;
    return pld_window(*buf_out, PLD_INT32, 2, PLD_IDX(rows, cols), view_out);
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
    pld_window_buffer *bufs[5] = {NULL};
    xfer_args *a = pld_host_alloc(w, sizeof *a);
    int32_t *input = pld_host_alloc(w, (size_t)nranks * ROWS * COLS * sizeof *input);
    if (!a || !input) {
        st = PLD_ERR_NOMEM;
        goto out;
    }
    a->mode = mode;
    a->input = input;
    for (int r = 0; r < nranks; r++)
        for (int64_t i = 0; i < ROWS; i++)
            for (int64_t j = 0; j < COLS; j++)
                input[((int64_t)r * ROWS + i) * COLS + j] = golden(r, i, j);

    st = alloc_2d(w, "outbox", ROWS, COLS, &bufs[0], &a->outbox);
    if (st == PLD_OK) st = alloc_2d(w, "inbox", (int64_t)nranks * ROWS, COLS, &bufs[1], &a->inbox);
    if (st == PLD_OK) st = alloc_2d(w, "bigsrc", BIG_ROWS, BIG_COLS, &bufs[2], &a->bigsrc);
    if (st == PLD_OK) st = alloc_2d(w, "bigdst", BIG_ROWS, BIG_COLS, &bufs[3], &a->bigdst);
    if (st == PLD_OK) st = alloc_2d(w, "signal", nranks, 1, &bufs[4], &a->signal);
    if (st == PLD_OK) st = pld_launch(w, xfer_kernel, a);

out:
    for (int k = 4; k >= 0; k--)
        if (bufs[k]) pld_free_window_buffer(w, bufs[k]);
    pld_host_free(w, input);
    pld_host_free(w, a);
    return ex_finish(w, st);
}
