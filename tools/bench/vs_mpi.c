/* SPDX-License-Identifier: Apache-2.0 */
/* pld bench --vs-mpi: see vs_mpi.h. */
#include "vs_mpi.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_ref.h"

static MPI_Datatype mpi_type(pld_dtype t)
{
    switch (t) {
    case PLD_FP32:
        return MPI_FLOAT;
    case PLD_INT32:
        return MPI_INT32_T;
    case PLD_INT16:
        return MPI_INT16_T;
    case PLD_INT8:
        return MPI_INT8_T;
    default:
        return MPI_DATATYPE_NULL; /* fp16, bf16: MPI has no such type */
    }
}

static MPI_Op mpi_op(pld_reduce_op op)
{
    switch (op) {
    case PLD_MAX:
        return MPI_MAX;
    case PLD_MIN:
        return MPI_MIN;
    case PLD_PROD:
        return MPI_PROD;
    default:
        return MPI_SUM;
    }
}

int bench_vs_mpi_check(pld_dtype dtype, char *why, size_t n)
{
    if (mpi_type(dtype) != MPI_DATATYPE_NULL)
        return 0;
    snprintf(why, n, "MPI has no %s type to compare with (use --dtype fp32 or int32)",
             pld_dtype_name(dtype));
    return -1;
}

void bench_vs_mpi_after(void *ctx, const bench_bufs *b)
{
    bench_vs_mpi *v = ctx;
    v->ns = -1;
    if (b->sh->count > INT_MAX)
        return; /* MPI counts are ints */
    int *counts = calloc(4 * (size_t)b->p, sizeof *counts);
    if (!counts)
        return;
    bench_mpi_bufs mb = {.sh = *b->sh,
                         .type = mpi_type(v->dtype),
                         .op = mpi_op(v->op),
                         .root = v->root,
                         .inplace = v->inplace,
                         .in = b->in,
                         .out = b->data,
                         .scount = counts,
                         .sdispl = counts + b->p,
                         .rcount = counts + 2 * b->p,
                         .rdispl = counts + 3 * b->p};
    bench_mpi_counts(&mb, b->rank, b->p, -1); /* full blocks, like pld's timed calls */
    v->ns = bench_mpi_time(v->coll, &mb, v->iters, v->warmup, v->warmup_ns, MPI_COMM_WORLD);
    free(counts);
}

const char *bench_vs_mpi_name(bench_coll c)
{
    return bench_mpi_name(c);
}

const char *bench_vs_mpi_library(void)
{
    static char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, ",\n")] = '\0';
    return lib;
}
