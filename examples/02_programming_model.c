/* SPDX-License-Identifier: Apache-2.0 */
/* Step 02 — programming_model: host orchestrator -> per-rank launch -> kernel.
 *
 * The host owns the program: it creates the world, prepares inputs, launches
 * a kernel on every rank, and looks at the results between launches.
 * pld_launch returns only when every rank's kernel has returned, so the host
 * never sees a half-finished result.
 *
 * Here rank r sums row r of an input table the host filled; the host then
 * doubles the table and launches again. Nothing is exchanged between ranks
 * yet: that starts with windows (step 03).
 *
 *   build/examples/02_programming_model -p a2a3sim -d 0,1
 */
#include <stdio.h>

#include "example_util.h"

#define COLS 64

typedef struct sum_args {
    int nranks;
    int32_t scale;        /* what the host multiplied the inputs by */
    const int32_t *input; /* [nranks, COLS], written by the host */
    int32_t *sums;        /* [nranks], one result per rank */
} sum_args;

static int32_t input_value(int rank, int64_t j) {
    return rank * 1000 + (int32_t)j;
}

/* The expected sum, from a closed formula rather than the same loop the
 * kernel runs, so the check does not share the kernel's mistakes. */
static int32_t golden_sum(int rank, int32_t scale) {
    return scale * (COLS * rank * 1000 + COLS * (COLS - 1) / 2);
}

static void sum_kernel(pld_ctx *ctx, void *arg) {
    sum_args *a = arg;
    int me = pld_rank(ctx);

    /* SPMD: every rank runs this same code; pld_rank picks its share. */
    const int32_t *row = a->input + (int64_t)me * COLS;
    int32_t sum = 0;
    for (int64_t j = 0; j < COLS; j++)
        sum += row[j];

    ex_check_i32(ctx, "sum", me, 0, sum, golden_sum(me, a->scale));
    a->sums[me] = sum; /* own slot only: ranks never write the same memory */
}

/* Launches the kernel once and checks, from the host, the result of every
 * rank this process hosts (under mpi, its own). */
static pld_status run_once(pld_world *w, sum_args *a) {
    pld_status st = pld_launch(w, sum_kernel, a);
    if (st != PLD_OK) return st;
    for (int r = 0; r < a->nranks; r++) {
        if (pld_world_hosts_rank(w, r) && a->sums[r] != golden_sum(r, a->scale)) {
            fprintf(stderr, "host check: rank %d: sum got %d want %d\n", r, (int)a->sums[r],
                    (int)golden_sum(r, a->scale));
            return PLD_ERR_CHECK;
        }
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

    int nranks = pld_world_size(w);

    /* Everything the kernel reads or writes lives in pld_host_alloc memory,
     * which every rank can reach on every transport that shares memory with
     * the host (a plain malloc would be private to the host process). */
    sum_args *a = pld_host_alloc(w, sizeof *a);
    int32_t *input = pld_host_alloc(w, (size_t)nranks * COLS * sizeof *input);
    int32_t *sums = pld_host_alloc(w, (size_t)nranks * sizeof *sums);
    if (!a || !input || !sums) {
        st = PLD_ERR_NOMEM;
        goto out;
    }
    a->nranks = nranks;
    a->input = input;
    a->sums = sums;

    /* 1. The host prepares the inputs. */
    for (int r = 0; r < nranks; r++)
        for (int64_t j = 0; j < COLS; j++)
            input[r * COLS + j] = input_value(r, j);
    a->scale = 1;

    /* 2. One launch = the kernel on every rank; returns when all are done. */
    st = run_once(w, a);
    if (st != PLD_OK) goto out;

    /* 3. Between launches the host may change anything; the next launch
     *    sees it. */
    for (int64_t k = 0; k < (int64_t)nranks * COLS; k++)
        input[k] *= 2;
    a->scale = 2;
    st = run_once(w, a);

out:
    pld_host_free(w, sums);
    pld_host_free(w, input);
    pld_host_free(w, a);
    return ex_finish(w, st);
}
