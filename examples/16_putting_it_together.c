/* SPDX-License-Identifier: Apache-2.0 */
/* Step 16 — putting_it_together: broadcast + allreduce + allgather in one
 * kernel, with ONE signal, in a loop.
 *
 * Each iteration:
 *   1. a root (a different one each time) broadcasts a parameter row;
 *   2. every rank's contribution is the row plus its rank; the contributions
 *      are summed (allreduce) ...
 *   3. ... and gathered, so every rank also sees who contributed what;
 *   4. every rank tags the sum with its rank and the tagged rows are
 *      gathered into the same window.
 *
 * Every builtin, and the pld_barrier between the two allgathers, uses the
 * same [P, 1] signal. That works because every builtin takes back the
 * credits it added (self-clearing): the signal is all-zero between calls. A
 * hand-rolled barrier would leave monotonic counts behind that the next
 * builtin would mistake for arrivals.
 *
 * The pld_barrier is there because pld_allgather pushes into the peers'
 * windows: without it, a fast rank's second allgather could overwrite the
 * contributions a slow rank is still reading. Across iterations no extra
 * barrier is needed: the next pld_broadcast starts with a barrier that every
 * rank reaches only after reading.
 *
 *   build/examples/16_putting_it_together -p a2a3sim -d 0,1,2
 */
#include "example_util.h"

#define ITERS 3
#define COLS 64

typedef struct together_args {
    int32_t *rows;        /* [P][1, COLS]: rank r's allgather input at r */
    pld_dtensor params;   /* [1, COLS]: the broadcast row */
    pld_dtensor acc;      /* [1, COLS]: my contribution, then the sum */
    pld_dtensor gathered; /* [P, COLS]: row s = from rank s (contribution, then tagged sum) */
    pld_dtensor signal;   /* [P, 1]: shared by every collective */
} together_args;

/* The parameter row the root of iteration `it` broadcasts. */
static int32_t param_value(int root, int it, int64_t j) {
    return root * 1000 + it * 100 + (int32_t)j;
}

/* After the allreduce: sum over r < P of (param + r). */
static int32_t sum_value(int nranks, int root, int it, int64_t j) {
    return nranks * param_value(root, it, j) + nranks * (nranks - 1) / 2;
}

/* Row s of `gathered` after step 4: rank s's tag on top of the sum. */
static int32_t tagged_value(int nranks, int root, int it, int64_t s, int64_t j) {
    return (int32_t)s * 1000000 + sum_value(nranks, root, it, j);
}

static void together_kernel(pld_ctx *ctx, void *arg) {
    together_args *a = arg;
    int me = pld_rank(ctx);
    int nranks = pld_nranks(ctx);
    int32_t *params = pld_local(ctx, a->params).data;
    int32_t *acc = pld_local(ctx, a->acc).data;
    int32_t *gathered = pld_local(ctx, a->gathered).data;
    int32_t *row = a->rows + (int64_t)me * COLS;
    pld_tensor row_t = pld_tensor_make(row, PLD_INT32, 2, PLD_IDX(1, COLS));

    for (int it = 1; it <= ITERS; it++) {
        int root = (it - 1) % nranks;

        /* 1. Broadcast: the root stages, everyone gets its row. */
        if (me == root)
            for (int64_t j = 0; j < COLS; j++)
                params[j] = param_value(root, it, j);
        pld_broadcast(ctx, a->params, a->signal, root);
        for (int64_t j = 0; j < COLS; j++)
            ex_check_i32(ctx, "params", 0, j, params[j], param_value(root, it, j));

        /* 2. Allreduce: my contribution is the row plus my rank. */
        for (int64_t j = 0; j < COLS; j++)
            row[j] = acc[j] = params[j] + me;
        pld_allreduce(ctx, a->acc, a->signal, PLD_SUM, PLD_MESH);
        for (int64_t j = 0; j < COLS; j++)
            ex_check_i32(ctx, "acc", 0, j, acc[j], sum_value(nranks, root, it, j));

        /* 3. Allgather the contributions, from a plain tensor. */
        pld_allgather(ctx, row_t, a->gathered, a->signal);
        for (int64_t s = 0; s < nranks; s++)
            for (int64_t j = 0; j < COLS; j++)
                ex_check_i32(ctx, "gathered", s, j, gathered[s * COLS + j],
                             param_value(root, it, j) + (int32_t)s);

        /* Everyone has read `gathered`: only now may the next push overwrite it. */
        pld_barrier(ctx, a->signal);

        /* 4. Allgather the sum, tagged with my rank, into the same window. */
        for (int64_t j = 0; j < COLS; j++)
            row[j] = me * 1000000 + acc[j];
        pld_allgather(ctx, row_t, a->gathered, a->signal);
        for (int64_t s = 0; s < nranks; s++)
            for (int64_t j = 0; j < COLS; j++)
                ex_check_i32(ctx, "gathered", s, j, gathered[s * COLS + j],
                             tagged_value(nranks, root, it, s, j));
    }

    /* One signal, 5 * ITERS builtin calls, and it is all-zero again. */
    for (int src = 0; src < nranks; src++)
        ex_check_i32(ctx, "signal", src, 0, pld_signal_read(ctx, a->signal, PLD_IDX(src, 0)), 0);
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
    pld_window_buffer *bufs[4] = {NULL};
    together_args *a = pld_host_alloc(w, sizeof *a);
    int32_t *rows = pld_host_alloc(w, (size_t)nranks * COLS * sizeof *rows);
    if (!a || !rows) {
        st = PLD_ERR_NOMEM;
        goto out;
    }
    a->rows = rows;

    st = ex_alloc_window_2d(w, "params", PLD_INT32, 1, COLS, &bufs[0], &a->params);
    if (st == PLD_OK) st = ex_alloc_window_2d(w, "acc", PLD_INT32, 1, COLS, &bufs[1], &a->acc);
    if (st == PLD_OK)
        st = ex_alloc_window_2d(w, "gathered", PLD_INT32, nranks, COLS, &bufs[2], &a->gathered);
    if (st == PLD_OK)
        st = ex_alloc_window_2d(w, "signal", PLD_INT32, nranks, 1, &bufs[3], &a->signal);
    if (st == PLD_OK) st = pld_launch(w, together_kernel, a);

out:
    for (int k = 3; k >= 0; k--)
        if (bufs[k]) pld_free_window_buffer(w, bufs[k]);
    pld_host_free(w, rows);
    pld_host_free(w, a);
    return ex_finish(w, st);
}
