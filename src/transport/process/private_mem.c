/* Which memory may a rank of the process transport use as a plain tensor?
 *
 * Shared memory (the arena) always: the caller checks that first. Host
 * memory allocated after the fork (by malloc, new mappings) is not mapped in
 * the rank at all: using it is the "private host tensor" mistake, reported
 * as PLD_ERR_ARG instead of a crash. Memory the rank can address is taken as
 * its own (its stack, its malloc).
 *
 * What this cannot see: host memory that existed at fork time (or a heap
 * chunk reused by the host afterwards) is present in the rank as a stale
 * copy-on-write snapshot. The address alone does not tell it from the rank's
 * own allocations (both come from the same inherited heap), so such use is
 * not detected: writes to it never reach the host. */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "transport/process/private_mem.h"

int pld__private_mem_rank_ok(const void *p, size_t bytes)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = (uintptr_t)p, hi = lo + (bytes ? bytes : 1);
    unsigned char vec[1];
    for (uintptr_t a = lo & ~(page - 1); a < hi; a += page)
        if (mincore((void *)a, page, vec) != 0 && errno == ENOMEM)
            return 0;
    return 1;
}
