/* SPDX-License-Identifier: Apache-2.0 */
/* One collective, one size, one pld_launch: the measuring kernel of
 * `pld bench` (also used by `pld cost --measure` and tests/tools).
 *
 * Per size the host allocates the windows and inputs once (windows with
 * pld_alloc_window_buffer, inputs and the kernel argument with
 * pld_host_alloc, so the process transport works) and launches one kernel
 * that runs on every rank:
 *
 *   pld_barrier (after each rank wrote every page of its slice and inputs)
 *   warmup calls back to back, then more (one per pld_barrier) until rank 0
 *     has spent warmup_ns warming up  (same signal: builtins self-clear)
 *   pld_barrier
 *   t0; iters calls back to back; t1 (each rank times itself)
 *   with check N: pld_barrier, then N more calls, each one
 *     fill inputs for iteration it -> call -> verify every element -> pld_barrier
 *   its report (time, wrong elements, warmup calls, byte counters) stored
 *     into every rank's results window, pld_barrier
 *
 * The time per call of a rank is (t1 - t0) / iters; the result has the
 * maximum, minimum and mean over ranks and the first rank's (pld bench -a).
 * The host reads the reports from the results window of a rank it hosts
 * (its own one under mpi, where each process hosts one rank). Byte counters
 * are each rank's pld_ctx_counters just before its report, and cover
 * every call of it (warmup + iters + checked iters; barriers move no data).
 *
 * Teams (spec.team): every rank runs the collective in its group's view
 * (pld_team_ctx), all groups at once; the set-up barrier, the end of the
 * warmup and the report are world-wide, on a world signal of their own,
 * so that every group starts its timed loop together and each process can
 * read every rank's report. The checked calls are filled with values that
 * also name the group, so data that crosses groups is counted as wrong.
 * Groups of one size T share a shape: the collective's buffers for a world
 * of T (a class, bench_class; one class of T = P without a team).
 *
 * Why a warmup time: on a machine with few cores the scheduler can start
 * two rank threads on one core, and a waiting rank that spins keeps its peer
 * off the core; the placement settles within tens of milliseconds. A count
 * alone (5 calls of 1 us) measures that transient, not the collective. */
#ifndef PLD_TOOLS_RUN_H
#define PLD_TOOLS_RUN_H

#include <stdint.h>

#include "cost.h"
#include "pld/pld.h"
#include "sweep.h"

typedef struct bench_spec {
    bench_coll coll;
    bench_mode mode; /* resolved (bench_mode_resolve) */
    pld_dtype dtype;
    pld_reduce_op op;
    int root;
    int64_t iters, warmup; /* timed calls; minimum warmup calls */
    uint64_t warmup_ns;    /* and minimum warmup time (0: the count only) */
    int64_t check;         /* checked calls after the timed loop (0: none) */
    int inject; /* test hook: corrupt one result element on rank 0 in the first checked call */
    const pld_team *team; /* NULL: the world; else every group of it at once */
} bench_spec;

/* The groups of one size T, and what they measured. */
#define BENCH_MAX_CLASSES 4
typedef struct bench_class {
    int t;             /* group size */
    int ngroups;       /* groups of that size */
    bench_shape shape; /* bench_shape_make for P = t */
    double time_ns;    /* per call: max over the ranks of these groups */
    double time_ns_min;
    double time_ns_avg;   /* mean over them */
    double time_ns_first; /* of the lowest world rank of them (a group's rank 0) */
    int64_t wrong;        /* -1 unchecked */
} bench_class;

typedef struct bench_result {
    bench_shape shape;
    double time_ns;         /* per call: max over ranks */
    double time_ns_min;     /* per call: min over ranks */
    int64_t wrong;          /* wrong elements over every rank and checked call; -1 unchecked */
    uint64_t ncalls;        /* collective calls the counters cover */
    int64_t warmup_calls;   /* warmup calls made (>= spec.warmup) */
    int64_t barriers;       /* pld_barrier calls of the kernel itself, same signal:
                               2(P-1) notifies and P-1 waits each */
    pld_counters *counters; /* per rank, whole launch (P entries, owned by the runner) */
    /* per size class of groups, largest T first; without a team one class
     * (T = P) whose shape, time and wrong are the fields above */
    int nclass;
    bench_class cls[BENCH_MAX_CLASSES];
    const int *rank_class; /* world rank -> its class (P entries, owned by the runner) */
    const int *group_rank; /* world rank -> its rank in its group */
} bench_result;

typedef struct bench_runner bench_runner;

/* What this process's rank worked on in the last size, for a comparison on
 * the very same memory (pld bench --vs-mpi). */
typedef struct bench_bufs {
    const bench_shape *sh;
    int rank, p;
    void *in;   /* its input (allgather, all_to_all, all_to_all_v), else NULL */
    void *data; /* its slice of the collective's window */
} bench_bufs;
typedef void (*bench_after_fn)(void *ctx, const bench_bufs *b);

/* Signals and the kernel argument for one collective on world w. Fails
 * with PLD_ERR_ARG when spec->team leaves a rank in no group or has more
 * than BENCH_MAX_CLASSES group sizes. */
pld_status bench_runner_open(pld_world *w, const bench_spec *spec, bench_runner **out);
/* Why the last bench_runner_open or bench_runner_size failed when the
 * runner itself found the fault (the team above; a rank whose group view
 * is not the group the team says); "" when the library did: then
 * pld_world_error says why. */
const char *bench_runner_error(void);
/* Runs one size (req bytes, see bench_shape_make, per class with P = T);
 * on failure the message is bench_runner_error() or pld_world_error(w). */
pld_status bench_runner_size(bench_runner *r, int64_t req, bench_result *out);
void bench_runner_close(bench_runner *r);
/* fn(ctx, ...) runs after each size's launch, before its buffers are freed,
 * on a rank this process hosts (the first one). */
void bench_runner_after(bench_runner *r, bench_after_fn fn, void *ctx);

#endif
