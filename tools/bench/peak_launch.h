/* SPDX-License-Identifier: Apache-2.0 */
/* The memcpy peaks of `pld bench`, measured inside one pld_launch: rank 0
 * copies while every other rank waits in a pld_barrier (asleep after a
 * moment), so nothing else competes for the cores -- not the other ranks'
 * threads, nor, under mpi, other processes polling inside MPI. */
#ifndef PLD_TOOLS_PEAK_LAUNCH_H
#define PLD_TOOLS_PEAK_LAUNCH_H

#include <stdint.h>

#include "pld/pld.h"

/* out[t * nsizes + i] = bench_memcpy_gbs(t, sizes[i]) for t = 1..max_threads
 * (out has (max_threads + 1) * nsizes entries; row 0 is left alone). The
 * values are valid in the process that hosts rank 0. */
pld_status bench_peak_measure(pld_world *w, int max_threads, const int64_t *sizes, int nsizes,
                              double *out);

#endif
