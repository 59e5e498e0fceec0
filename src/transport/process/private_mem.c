/* SPDX-License-Identifier: Apache-2.0 */
/* Which memory may a rank of the process transport use as a plain tensor?
 *
 * The arena (pld_host_alloc memory and windows) always: the caller checks
 * that first. Besides it, only memory that is provably the rank's own: the
 * stack frames the worker pushed after the fork (a kernel's local arrays)
 * and the stacks of the core threads it started. Everything else is
 * refused, and the caller says to use pld_host_alloc.
 *
 * Why not "whatever the rank can address": the worker inherits a
 * copy-on-write snapshot of the host's whole address space. A host buffer
 * that existed at fork time -- a global, a stack array of main(), a heap
 * chunk, or a chunk the host freed and malloc'ed again later -- is mapped
 * in the rank too, but as a stale private copy: what the kernel writes
 * there never reaches the host, what the host writes later is never seen.
 * By address alone such a chunk cannot be told from a malloc the kernel
 * made itself (both come from the same inherited heap), so the rank's own
 * heap is refused as well. */
#include <pthread.h>
#include <stdint.h>

#include "transport/process/private_mem.h"

/* The worker's main thread: the frame address where it started. Frames
 * below it (deeper) were pushed after the fork; the frames above it are the
 * host's, copied by the fork. 0 on any other thread. */
static _Thread_local uintptr_t own_stack_top;

void pld__private_mem_worker_begin(void)
{
    own_stack_top = (uintptr_t)__builtin_frame_address(0);
}

/* The calling thread's stack, when the whole of it belongs to the rank (a
 * thread created after the fork). */
static int thread_stack(uintptr_t *lo, uintptr_t *hi)
{
    pthread_attr_t at;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &at) != 0)
        return 0;
    int ok = pthread_attr_getstack(&at, &addr, &size) == 0;
    pthread_attr_destroy(&at);
    *lo = (uintptr_t)addr;
    *hi = (uintptr_t)addr + size;
    return ok;
}

int pld__private_mem_rank_ok(const void *p, size_t bytes)
{
    uintptr_t lo = (uintptr_t)p, hi = lo + (bytes ? bytes : 1);
    if (hi < lo)
        return 0;
    uintptr_t s_lo, s_hi;
    if (own_stack_top) {
        /* this function's frame is below every caller's: a kernel's local
         * array lies between it and the worker's first frame */
        s_lo = (uintptr_t)__builtin_frame_address(0);
        s_hi = own_stack_top;
    } else if (!thread_stack(&s_lo, &s_hi)) {
        return 0;
    }
    return lo >= s_lo && hi <= s_hi;
}
