/* SPDX-License-Identifier: Apache-2.0 */
/* Bulk copies for the shared-memory transports' put/get. */
#ifndef PLD_SHM_COPY_H
#define PLD_SHM_COPY_H

#include <stddef.h>

/* Copies below this many bytes are plain memcpy: the destination of a
 * smaller copy is likely read again while it is still in a cache (measured
 * crossover on the development machine: streaming a 256 KiB allgather row
 * doubled the call's time, from 1 MiB rows on it wins). */
#define PLD__SHM_STREAM_MIN ((size_t)1024 * 1024)

/* Smaller copies stream too when nranks x nranks of them -- what a
 * collective moving pieces this size between nranks ranks writes at once --
 * would not fit half the L3 either. P=8 at 4 MiB (512 KiB pieces), medians
 * of 5: allgather 2.14 -> 1.11 ms, all_to_all 2.85 -> 2.37, all_to_all_v
 * 2.83 -> 2.28; P=16 all_to_all 5.96 -> 5.16 ms. Lowering the plain
 * threshold to 256 KiB instead made 1 MiB allgathers at P=2 and 4 20-28 %
 * slower: there the data fits the cache. */
#define PLD__SHM_STREAM_MIN_SHARED ((size_t)256 * 1024)

/* memcpy(dst, src, bytes) for non-overlapping buffers, between the windows
 * of nranks ranks. Large copies bypass the caches on the store side; every
 * store is globally visible when this returns, so a signal released
 * afterwards still orders after the data. */
void pld__shm_copy(void *dst, const void *src, size_t bytes, int nranks);

#endif
