/* SPDX-License-Identifier: Apache-2.0 */
/* The column groups of pld bench: see place.h. */
#include "place.h"

void bench_places(bench_coll c, bench_mode req, bench_mode modes[2])
{
    bench_mode m = bench_mode_resolve(c, req);
    if (m == BENCH_NMODE) /* 'all' with a mode that fits other collectives */
        m = bench_mode_resolve(c, BENCH_MODE_DEFAULT);
    modes[BENCH_OUT_OF_PLACE] = modes[BENCH_IN_PLACE] = BENCH_NMODE;
    switch (c) {
    case BENCH_ALLGATHER:
        if (m == BENCH_MODE_DOUBLING || m == BENCH_MODE_PUSH) { /* forced: out of place only */
            modes[BENCH_OUT_OF_PLACE] = m;
            break;
        }
        if (m != BENCH_MODE_INPLACE) /* auto, and the in-place form beside it */
            modes[BENCH_OUT_OF_PLACE] = BENCH_MODE_AUTO;
        modes[BENCH_IN_PLACE] = BENCH_MODE_INPLACE;
        break;
    case BENCH_BARRIER:
    case BENCH_ALL_TO_ALL:
    case BENCH_ALL_TO_ALL_V:
        modes[BENCH_OUT_OF_PLACE] = m;
        break;
    default: /* broadcast, reduce_scatter, allreduce: the window is input and output */
        modes[BENCH_IN_PLACE] = m;
        break;
    }
}

const char *bench_place_note(bench_coll c)
{
    switch (c) {
    case BENCH_BARRIER:
        return "no buffers: the time is in the out-of-place group";
    case BENCH_BROADCAST:
        return "in-place only: the root's slice of the window is the source, every rank's "
               "slice the destination";
    case BENCH_ALLGATHER:
        return "out-of-place: pld_allgather from a separate input row; in-place: "
               "pld_allgather_inplace, the row already in its slot of the output";
    case BENCH_REDUCE_SCATTER:
        return "in-place only: the [P,S] input is the window, rank r's result lands in its "
               "row r";
    case BENCH_ALLREDUCE:
        return "in-place only: the result replaces the input in the window";
    case BENCH_ALL_TO_ALL:
    case BENCH_ALL_TO_ALL_V:
        return "out-of-place only: from a separate input into the window";
    default:
        return "";
    }
}
