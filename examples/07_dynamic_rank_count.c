/* SPDX-License-Identifier: Apache-2.0 */
/* Step 07 — dynamic_rank_count: one source, any P.
 *
 * Nothing in this file knows how many ranks there are. The host sizes the
 * windows from pld_world_size; the kernel sizes its loops from pld_nranks;
 * the golden is a formula in P. The same binary runs at -d 0,1, at
 * -d 0,1,2 (odd P) and at -d 0-15.
 *
 * Every rank contributes one row: it stores the row into slot `me` of every
 * rank's table, and atomically adds it into every rank's running sum. After
 * a barrier each rank holds all P rows and their sum.
 *
 *   build/examples/07_dynamic_rank_count -p a2a3sim -d 0,1,2,3
 */
#include "example_util.h"

#define COLS 64

typedef struct count_args {
    pld_dtensor table;  /* [P, COLS] INT32: row s = rank s's contribution */
    pld_dtensor sum;    /* [1, COLS] INT32: sum over ranks of the rows */
    pld_dtensor signal; /* [P, 1] */
} count_args;

/* Rank r's row: the value names its owner and column. */
static int32_t row_value(int rank, int64_t j) {
    return rank * 1000 + (int32_t)j;
}

/* The whole table: row i belongs to rank i, so the owner argument that
 * ex_check_block passes is not needed. */
static int32_t golden_table(int unused, int64_t i, int64_t j) {
    (void)unused;
    return row_value((int)i, j);
}

/* Sum over r < P of (r*1000 + j) = 1000 * P(P-1)/2 + P*j. */
static int32_t golden_sum(int nranks, int64_t j) {
    return 1000 * (nranks * (nranks - 1) / 2) + nranks * (int32_t)j;
}

static void count_kernel(pld_ctx *ctx, void *arg) {
    count_args *a = arg;
    int me = pld_rank(ctx);
    int nranks = pld_nranks(ctx); /* the only source of P in the kernel */

    pld_tile *row = pld_tile_create(ctx, PLD_INT32, 1, COLS);
    int32_t *v = pld_tile_data(row);
    for (int64_t j = 0; j < COLS; j++)
        v[j] = row_value(me, j);

    /* Every destination, myself included: the self store goes through the
     * same path, so there is no special case to get wrong. */
    for (int dst = 0; dst < nranks; dst++) {
        pld_remote_store(ctx, row, a->table, dst, PLD_IDX(me, 0), PLD_ATOMIC_NONE);
        /* Many writers, one cell: only an atomic add keeps every contribution. */
        pld_remote_store(ctx, row, a->sum, dst, PLD_IDX(0, 0), PLD_ATOMIC_ADD);
    }

    pld_barrier(ctx, a->signal);

    ex_check_block(ctx, "table", pld_local(ctx, a->table).data, nranks, COLS, golden_table, 0);
    const int32_t *sum = pld_local(ctx, a->sum).data;
    for (int64_t j = 0; j < COLS; j++)
        ex_check_i32(ctx, "sum", 0, j, sum[j], golden_sum(nranks, j));
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

    /* The host's only source of P. */
    int nranks = pld_world_size(w);
    pld_window_buffer *table_buf = NULL, *sum_buf = NULL, *signal_buf = NULL;
    count_args *a = pld_host_alloc(w, sizeof *a);
    if (!a) {
        st = PLD_ERR_NOMEM;
        goto out;
    }

    st = pld_alloc_window_buffer(w, (size_t)nranks * COLS * sizeof(int32_t), "table", &table_buf);
    if (st == PLD_OK) st = pld_window(table_buf, PLD_INT32, 2, PLD_IDX(nranks, COLS), &a->table);
    if (st == PLD_OK) st = pld_alloc_window_buffer(w, COLS * sizeof(int32_t), "sum", &sum_buf);
    if (st == PLD_OK) st = pld_window(sum_buf, PLD_INT32, 2, PLD_IDX(1, COLS), &a->sum);
    if (st == PLD_OK)
        st = pld_alloc_window_buffer(w, (size_t)nranks * sizeof(int32_t), "signal", &signal_buf);
    if (st == PLD_OK) st = pld_window(signal_buf, PLD_INT32, 2, PLD_IDX(nranks, 1), &a->signal);
    if (st == PLD_OK) st = pld_launch(w, count_kernel, a);

out:
    if (signal_buf) pld_free_window_buffer(w, signal_buf);
    if (sum_buf) pld_free_window_buffer(w, sum_buf);
    if (table_buf) pld_free_window_buffer(w, table_buf);
    pld_host_free(w, a);
    return ex_finish(w, st);
}
