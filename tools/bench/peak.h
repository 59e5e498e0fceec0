/* SPDX-License-Identifier: Apache-2.0 */
/* The memcpy bandwidth %peak is measured against: T threads (pld bench uses
 * T = min(P, online cores), or fewer when fewer ranks copy anything) copy,
 * concurrently, a private buffer of the same size each, either with one memcpy(dst_t, src_t, bytes)
 * or in 64 KiB memcpy pieces -- trials alternate, and the faster way counts: glibc switches large
 * copies to non-temporal stores (here from ~0.7 MiB on), which pieces avoid, and pld's own copies
 * are pieces of at most a row or a UB chunk. A trial times `reps` copies per thread between two
 * barriers (reps grows until a trial takes ~2 ms); the result is the best of BENCH_PEAK_TRIALS
 * trials, as aggregate GB/s over the T threads. Best, not median: a peak, so that noise on this
 * machine lowers %peak rather than flattering it.
 *
 * Each source and destination is a mapping of its own (bench_peak_buffers):
 * page-aligned, whole pages, written before any trial. Two malloc'ed
 * buffers below the mmap threshold sit back to back in the heap, so the
 * destination starts a few bytes past a multiple of 4 KiB from the source;
 * every load of the copy then matches a just-issued store in the low 12
 * address bits (4 KiB aliasing), the core stalls the load, and the
 * reference measured 1.7-3.8 GB/s from 4 KiB to 256 KiB -- a tenth of a
 * cached copy, which made small collectives show several hundred %peak. */
#ifndef PLD_TOOLS_PEAK_H
#define PLD_TOOLS_PEAK_H

#include <stdint.h>

#define BENCH_PEAK_TRIALS 10

/* Online cores (sysconf). */
int bench_online_cores(void);
/* A source and a destination of `bytes` each for one measuring thread:
 * separate anonymous mappings (page-aligned, never sharing a page, so the
 * destination is a whole number of pages away from the source), the source
 * filled with a pattern and the destination zeroed (every page faulted in).
 * 0 on success, -1 if a mapping failed (nothing left mapped). */
int bench_peak_buffers(int64_t bytes, unsigned char **src, unsigned char **dst);
void bench_peak_buffers_free(int64_t bytes, unsigned char *src, unsigned char *dst);

/* Aggregate memcpy GB/s of `threads` threads copying `bytes` each; 0 if a
 * thread or buffer could not be created. */
double bench_memcpy_gbs(int threads, int64_t bytes);

#endif
