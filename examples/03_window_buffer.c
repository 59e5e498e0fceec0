/* SPDX-License-Identifier: Apache-2.0 */
/* Step 03 — window_buffer: symmetric memory, own slice only.
 *
 * pld_alloc_window_buffer gives every rank a buffer of the same size, zeroed,
 * that peers will later be able to reach. pld_window puts a typed, shaped
 * view (a DistributedTensor) on it; the view is the same on every rank.
 * Inside a kernel, pld_local turns the view into this rank's slice as a
 * plain tensor.
 *
 * Each rank fills only its own slice; the host then reads every rank's slice
 * with pld_window_host_view and checks it.
 *
 *   build/examples/03_window_buffer -p a2a3sim -d 0,1
 */
#include <stdio.h>

#include "example_util.h"

#define ROWS 4
#define COLS 64

/* Element [i,j] of rank r's slice. The value names its owner and position,
 * so a slice read from the wrong rank or at the wrong place is visible. */
static int32_t golden(int rank, int64_t i, int64_t j) {
    return rank * 1000 + (int32_t)(i * 100 + j);
}

static int32_t zero(int rank, int64_t i, int64_t j) {
    (void)rank, (void)i, (void)j;
    return 0;
}

/* golden() read through the flat view: index j of row 0 is [j/COLS, j%COLS]. */
static int32_t golden_flat(int rank, int64_t i, int64_t j) {
    (void)i;
    return golden(rank, j / COLS, j % COLS);
}

typedef struct fill_args {
    pld_dtensor data; /* [ROWS, COLS] INT32 */
    pld_dtensor flat; /* [ROWS*COLS] INT32: a second view of the same bytes */
} fill_args;

static void fill_kernel(pld_ctx *ctx, void *arg) {
    fill_args *a = arg;
    int me = pld_rank(ctx);

    /* This rank's slice: plain memory, written with plain C. */
    pld_tensor mine = pld_local(ctx, a->data);
    if (mine.ndim != 2 || mine.shape[0] != ROWS || mine.shape[1] != COLS)
        pld_fail(ctx, "pld_local gave a %d-d slice, want [%d,%d]", mine.ndim, ROWS, COLS);
    int32_t *v = mine.data;
    for (int64_t i = 0; i < ROWS; i++)
        for (int64_t j = 0; j < COLS; j++)
            v[i * COLS + j] = golden(me, i, j);

    /* A view is only a type and a shape over the buffer's bytes: the 1-D
     * view sees what the 2-D view wrote, in row-major order. */
    const int32_t *flat = pld_local(ctx, a->flat).data;
    ex_check_block(ctx, "flat", flat, 1, ROWS * COLS, golden_flat, me);
}

/* Checks every rank's slice this process hosts (all of them, except under
 * mpi where each process hosts one) against `want`. */
static pld_status host_check(pld_world *w, pld_dtensor t, ex_golden_fn want) {
    for (int r = 0; r < pld_world_size(w); r++) {
        if (!pld_world_hosts_rank(w, r)) continue;
        pld_tensor view;
        pld_status st = pld_window_host_view(w, t, r, &view);
        if (st != PLD_OK) return st;
        if (!ex_host_check_block(pld_window_buffer_name(t.buf), r, view.data, ROWS, COLS, want, r))
            return PLD_ERR_CHECK;
    }
    return PLD_OK;
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

    pld_window_buffer *buf = NULL;
    fill_args *a = pld_host_alloc(w, sizeof *a);
    if (!a) {
        st = PLD_ERR_NOMEM;
        goto out;
    }

    /* The same number of bytes on every rank: that is what "symmetric" means. */
    st = pld_alloc_window_buffer(w, ROWS * COLS * sizeof(int32_t), "data", &buf);
    if (st != PLD_OK) goto out;
    st = pld_window(buf, PLD_INT32, 2, PLD_IDX(ROWS, COLS), &a->data);
    if (st != PLD_OK) goto out;
    st = pld_window(buf, PLD_INT32, 1, PLD_IDX(ROWS * COLS), &a->flat);
    if (st != PLD_OK) goto out;

    /* A view must fit its buffer; pld refuses one that does not. */
    pld_dtensor too_big;
    if (pld_window(buf, PLD_INT32, 2, PLD_IDX(ROWS + 1, COLS), &too_big) == PLD_OK) {
        fprintf(stderr, "host check: a [%d,%d] view of a [%d,%d] buffer was accepted\n", ROWS + 1,
                COLS, ROWS, COLS);
        st = PLD_ERR_CHECK;
        goto out;
    }

    /* Window buffers start zeroed on every rank; the kernel is about to
     * change that. */
    st = host_check(w, a->data, zero);
    if (st != PLD_OK) goto out;

    st = pld_launch(w, fill_kernel, a);
    if (st != PLD_OK) goto out;

    st = host_check(w, a->data, golden);

out:
    if (buf) pld_free_window_buffer(w, buf);
    pld_host_free(w, a);
    return ex_finish(w, st);
}
