/* SPDX-License-Identifier: Apache-2.0 */
/* nccl-tests' two column groups, out-of-place and in-place, for pld's
 * builtins: which of them a collective has, the mode each runs in, and
 * what "in place" means for it.
 *
 * nccl-tests calls a collective in place when its output buffer holds its
 * input (recvbuff == sendbuff, or the send buffer at the rank's offset in
 * the receive buffer). pld's builtins work on windows:
 *   allgather       out-of-place pld_allgather (a separate input row),
 *                   in-place pld_allgather_inplace (the row already in its
 *                   slot of the output window)
 *   broadcast       in-place only: the root's slice of the window is the
 *                   source and every rank's slice the destination
 *   reduce_scatter  in-place only: the [P,S] input is the window and rank
 *                   r's result lands in its row r (nccl-tests' offset)
 *   allreduce       in-place only: the result replaces the input
 *   all_to_all(_v)  out-of-place only: a separate input into the window
 *   barrier         no buffers; its time is in the out-of-place group
 * A group a collective does not have prints N/A: measuring the other form
 * under its heading would report a call pld does not make. */
#ifndef PLD_TOOLS_PLACE_H
#define PLD_TOOLS_PLACE_H

#include "cost.h"
#include "sweep.h"

/* modes[BENCH_OUT_OF_PLACE], modes[BENCH_IN_PLACE]: the mode each group
 * runs in, BENCH_NMODE for a group the collective does not have. `req` is
 * --mode (BENCH_MODE_DEFAULT: none); allgather's push and inplace pick one
 * group, other modes (mesh, ring) the algorithm of the one group. */
void bench_places(bench_coll c, bench_mode req, bench_mode modes[2]);

/* One line saying what the two groups hold for c. */
const char *bench_place_note(bench_coll c);

#endif
