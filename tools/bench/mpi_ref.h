/* SPDX-License-Identifier: Apache-2.0 */
/* MPI's own collectives on given buffers, timed the way `pld bench` times
 * pld's: shared by `pld bench --vs-mpi` (on pld's own buffers, in the same
 * job) and bench/mpi_coll (on its own buffers). Built only with MPI. */
#ifndef PLD_TOOLS_MPI_REF_H
#define PLD_TOOLS_MPI_REF_H

#include <mpi.h>
#include <stdint.h>

#include "sweep.h"

typedef struct bench_mpi_bufs {
    bench_shape sh;
    MPI_Datatype type;
    MPI_Op op;
    int root;
    int inplace;    /* allgather: this rank's row is already in out (MPI_IN_PLACE) */
    void *in, *out; /* the pld collective's input and window slice */
    int *scount, *sdispl, *rcount, *rdispl; /* all_to_all_v, P each */
} bench_mpi_bufs;

/* The MPI call standing for collective c:
 *   barrier MPI_Barrier; broadcast MPI_Bcast(out); allgather MPI_Allgather(in
 *   or MPI_IN_PLACE, out); reduce_scatter MPI_Reduce_scatter_block in place
 *   (out is [P,S] like pld's, the result lands in its first row);
 *   allreduce MPI_Allreduce in place; all_to_all MPI_Alltoall(in, out);
 *   all_to_all_v MPI_Alltoallv(in, out) with the counts of b. */
int bench_mpi_call(bench_coll c, const bench_mpi_bufs *b, MPI_Comm comm);

/* Full M-row blocks (it < 0) or the row counts of checked iteration it. */
void bench_mpi_counts(bench_mpi_bufs *b, int rank, int nranks, int64_t it);

/* pld bench's timing: `warmup` calls, then one call per decision of rank 0
 * until it warmed up for warmup_ns, MPI_Barrier, `iters` calls timed by
 * every rank; returns the maximum over ranks in ns per call (negative if an
 * MPI call failed). */
double bench_mpi_time(bench_coll c, const bench_mpi_bufs *b, int64_t iters, int64_t warmup,
                      uint64_t warmup_ns, MPI_Comm comm);

/* The MPI function's name, for tables ("MPI_Allgather"). */
const char *bench_mpi_name(bench_coll c);

#endif
