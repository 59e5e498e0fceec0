/* The memcpy bandwidth %peak is measured against: T threads (pld bench uses
 * T = min(P, online cores), or fewer when fewer ranks copy anything) copy,
 * concurrently, a private buffer of the same size each (both buffers
 * touched beforehand), either with one memcpy(dst_t, src_t, bytes) or in
 * 64 KiB memcpy pieces -- trials alternate, and the faster way counts: glibc
 * switches large copies to non-temporal stores (here from ~0.7 MiB on),
 * which pieces avoid, and pld's own copies are pieces of at most a row or a
 * UB chunk. A trial times `reps` copies per thread between two barriers
 * (reps grows until a trial takes ~2 ms); the result is the best of
 * BENCH_PEAK_TRIALS trials, as aggregate GB/s over the T threads. Best, not
 * median: a peak, so that noise on this machine lowers %peak rather than
 * flattering it. */
#ifndef PLD_TOOLS_PEAK_H
#define PLD_TOOLS_PEAK_H

#include <stdint.h>

#define BENCH_PEAK_TRIALS 10

/* Online cores (sysconf). */
int bench_online_cores(void);
/* Aggregate memcpy GB/s of `threads` threads copying `bytes` each; 0 if a
 * thread or buffer could not be created. */
double bench_memcpy_gbs(int threads, int64_t bytes);

#endif
