/* Bulk copies for the shared-memory transports' put/get. */
#ifndef PLD_SHM_COPY_H
#define PLD_SHM_COPY_H

#include <stddef.h>

/* Copies below this many bytes are plain memcpy: the destination of a
 * smaller copy is likely read again while it is still in a cache (measured
 * crossover on the development machine: streaming a 256 KiB allgather row
 * doubled the call's time, from 1 MiB rows on it wins). */
#define PLD__SHM_STREAM_MIN ((size_t)1024 * 1024)

/* memcpy(dst, src, bytes) for non-overlapping buffers. Large copies bypass
 * the caches on the store side; every store is globally visible when this
 * returns, so a signal released afterwards still orders after the data. */
void pld__shm_copy(void *dst, const void *src, size_t bytes);

#endif
