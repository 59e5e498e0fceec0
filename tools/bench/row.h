/* SPDX-License-Identifier: Apache-2.0 */
/* One row of pld bench's table from one launch: the columns of one class
 * of groups (the whole world without --team) and its ranks' byte counters
 * against their cost cards. */
#ifndef PLD_TOOLS_ROW_H
#define PLD_TOOLS_ROW_H

#include "cost.h"
#include "run.h"
#include "sweep.h"

/* What the row needs besides the result. */
typedef struct bench_row_spec {
    bench_coll coll;
    bench_mode mode; /* resolved */
    pld_dtype dtype;
    pld_reduce_op op;
    int root;        /* broadcast: a group rank */
    int p;           /* world size */
    size_t ub_bytes; /* the profile's UB per core (mesh allreduce chunks) */
    size_t ll_bytes; /* the one-round threshold of the groups (pld_world_ll_bytes) */
    pld_tune tune;   /* the world's cost model (allreduce auto's choice) */
    int average;     /* the time column (nccl-tests' -a): 0 the first rank's (rank 0
                        without a team), 1 the mean over ranks, 2 the minimum, 3 the maximum */
} bench_row_spec;

/* Row of class k of res: size, count, time (over the ranks of the class
 * as rs->average says), algbw and busbw from it with n = the class's T, #wrong, the largest
 * per-rank peer and self bytes and card, card_ok (every rank of the class equals its card, from its
 * group rank in a world of T). *moved: bytes the ranks of the class copied in the whole launch
 * (res->ncalls calls); *copiers: how many of them copy at all (for %peak, which the caller adds).
 */
/* The time of class cl that `average` (as above) picks, ns per call. */
double bench_row_time_ns(const bench_class *cl, int average);

void bench_row_make(const bench_row_spec *rs, const bench_result *res, int k, bench_row *row,
                    uint64_t *moved, int *copiers);

#endif
