/* SPDX-License-Identifier: Apache-2.0 */
/* MPI's own collectives, called and timed: see mpi_ref.h. */
#include "mpi_ref.h"

int bench_mpi_call(bench_coll c, const bench_mpi_bufs *b, MPI_Comm comm)
{
    int s = (int)b->sh.cols, n = (int)b->sh.count;
    switch (c) {
    case BENCH_BARRIER:
        return MPI_Barrier(comm);
    case BENCH_BROADCAST:
        return MPI_Bcast(b->out, n, b->type, b->root, comm);
    case BENCH_ALLGATHER:
        return MPI_Allgather(b->inplace ? MPI_IN_PLACE : b->in, s, b->type, b->out, s, b->type,
                             comm);
    case BENCH_REDUCE_SCATTER:
        return MPI_Reduce_scatter_block(MPI_IN_PLACE, b->out, s, b->type, b->op, comm);
    case BENCH_ALLREDUCE:
        return MPI_Allreduce(MPI_IN_PLACE, b->out, n, b->type, b->op, comm);
    case BENCH_ALL_TO_ALL:
        return MPI_Alltoall(b->in, s, b->type, b->out, s, b->type, comm);
    case BENCH_ALL_TO_ALL_V:
        return MPI_Alltoallv(b->in, b->scount, b->sdispl, b->type, b->out, b->rcount, b->rdispl,
                             b->type, comm);
    default:
        return MPI_ERR_OTHER;
    }
}

/* all_to_all_v: rows rank s sends to rank d in checked iteration it, 0..M
 * (the same rule as pld bench's kernel). */
static int a2av_rows(int64_t m, int s, int d, int64_t it)
{
    return (int)(((int64_t)s * 3 + d + it) % (m + 1));
}

void bench_mpi_counts(bench_mpi_bufs *b, int rank, int nranks, int64_t it)
{
    int64_t m = b->sh.m, s = b->sh.cols;
    for (int d = 0; d < nranks; d++) {
        b->sdispl[d] = b->rdispl[d] = (int)(d * m * s);
        b->scount[d] = (int)((it < 0 ? m : a2av_rows(m, rank, d, it)) * s);
        b->rcount[d] = (int)((it < 0 ? m : a2av_rows(m, d, rank, it)) * s);
    }
}

double bench_mpi_time(bench_coll c, const bench_mpi_bufs *b, int64_t iters, int64_t warmup,
                      uint64_t warmup_ns, MPI_Comm comm)
{
    int rc = MPI_SUCCESS;
    double w0 = MPI_Wtime();
    for (int64_t i = 0; i < warmup && rc == MPI_SUCCESS; i++)
        rc = bench_mpi_call(c, b, comm);
    while (rc == MPI_SUCCESS) {
        int done = MPI_Wtime() - w0 >= (double)warmup_ns * 1e-9;
        rc = MPI_Bcast(&done, 1, MPI_INT, 0, comm);
        if (done || rc != MPI_SUCCESS)
            break;
        rc = bench_mpi_call(c, b, comm);
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    for (int64_t i = 0; i < iters && rc == MPI_SUCCESS; i++)
        rc = bench_mpi_call(c, b, comm);
    double t = (MPI_Wtime() - t0) * 1e9 / (double)(iters > 0 ? iters : 1), tmax = -1;
    int ok = rc == MPI_SUCCESS, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, comm);
    return all_ok ? tmax : -1;
}

const char *bench_mpi_name(bench_coll c)
{
    static const char *const names[BENCH_NCOLL] = {
        [BENCH_BARRIER] = "MPI_Barrier",        [BENCH_BROADCAST] = "MPI_Bcast",
        [BENCH_ALLGATHER] = "MPI_Allgather",    [BENCH_REDUCE_SCATTER] = "MPI_Reduce_scatter_block",
        [BENCH_ALLREDUCE] = "MPI_Allreduce",    [BENCH_ALL_TO_ALL] = "MPI_Alltoall",
        [BENCH_ALL_TO_ALL_V] = "MPI_Alltoallv",
    };
    return (unsigned)c < BENCH_NCOLL && names[c] ? names[c] : "?";
}
