/* SPDX-License-Identifier: Apache-2.0 */
/* pld bench --vs-mpi: after pld's collective, MPI's own one on the same
 * buffers in the same job (mpi transport only), timed the same way. */
#ifndef PLD_TOOLS_VS_MPI_H
#define PLD_TOOLS_VS_MPI_H

#include <stddef.h>

#include "run.h"

typedef struct bench_vs_mpi {
    bench_coll coll;
    pld_dtype dtype;
    pld_reduce_op op;
    int root, inplace;
    int64_t iters, warmup;
    uint64_t warmup_ns;
    double ns; /* MPI's time per call of the last size; < 0 if it failed */
} bench_vs_mpi;

/* 0 if MPI has a type for dtype (fp32, int32, int16, int8); else writes why. */
int bench_vs_mpi_check(pld_dtype dtype, char *why, size_t n);
/* A bench_after_fn: ctx is a bench_vs_mpi. */
void bench_vs_mpi_after(void *ctx, const bench_bufs *b);
/* "MPI_Allgather" for the table. */
const char *bench_vs_mpi_name(bench_coll c);
/* "Open MPI v4.1.4" */
const char *bench_vs_mpi_library(void);

#endif
