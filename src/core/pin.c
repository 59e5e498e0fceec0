/* SPDX-License-Identifier: Apache-2.0 */
/* Where a rank runs when ranks outnumber the CPUs this process may use.
 *
 * Oversubscribed, every wait hands the core to another rank (sched_yield).
 * Left to the scheduler, the ranks migrate between CPUs, so a yield often
 * finds nobody useful on its own run queue and the rank it waits for is
 * queued behind others elsewhere. Pinned round-robin, rank r always shares
 * CPU (r mod n) with the same few ranks and a yield hands the CPU straight to
 * one of them. Measured on 2 CPUs, 4 KiB, medians of 4-6 interleaved runs:
 * P=4 allgather 3.5 -> 2.6 us, reduce_scatter 6.1 -> 5.1, allreduce 7.9 -> 7.2;
 * P=8 allgather 11.2 -> 7.9, reduce_scatter 16.0 -> 12.3, allreduce 28.5 -> 18.3.
 * With a CPU per rank it stays off. The steady state is the same either
 * way (P=2), and pinned, a spinning rank cannot leave a CPU that another
 * process holds: tried as the default at P=2, runs started right after
 * mpirun jobs took 60-1150 us per call instead of ~0.5. Other programs
 * sharing the machine keep the scheduler's freedom. */
#include <sched.h>
#include <unistd.h>

#include "core/internal.h"

int pld__cpus_allowed(void)
{
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int pld__pin_rank(int rank)
{
#if defined(__linux__)
    cpu_set_t set, one;
    if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) == 0)
        return -1;
    int k = rank % CPU_COUNT(&set);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &set) || k-- > 0)
            continue;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        /* 0 = the calling thread: a rank thread, or a rank process's only one */
        return sched_setaffinity(0, sizeof one, &one) == 0 ? cpu : -1;
    }
#else
    (void)rank;
#endif
    return -1;
}
