/* SPDX-License-Identifier: Apache-2.0 */
/* One shared-memory arena per process world: a memfd mapped before the
 * workers are forked, so every address in it is the same in the host and in
 * every rank. Windows, host allocations and the control block all live here.
 * Only the host allocates (first fit over a free list kept in host memory);
 * freed memory is zeroed so every allocation starts zeroed. A memfd has no
 * name in /dev/shm: nothing is left behind when the last process exits. */
#ifndef PLD_ARENA_H
#define PLD_ARENA_H

#include <stddef.h>

typedef struct pld__arena_span {
    size_t off, len;
} pld__arena_span;

typedef struct pld__arena {
    int fd;
    unsigned char *base;
    size_t size;
    pld__arena_span *free; /* sorted by offset, coalesced */
    int nfree, cap;
    char why[256]; /* why pld__arena_open failed */
} pld__arena;

/* An arena of `size` bytes, or of the file size limit (RLIMIT_FSIZE: a
 * memfd is a file) when that is smaller but still at least `need` bytes.
 * -1 with a->why set otherwise. */
int pld__arena_open(pld__arena *a, size_t size, size_t need);
void pld__arena_close(pld__arena *a);
/* Zeroed memory aligned to 64 bytes, or NULL. A 64-byte header in front
 * remembers the size. */
void *pld__arena_alloc(pld__arena *a, size_t bytes);
void pld__arena_free(pld__arena *a, void *p);
int pld__arena_contains(const pld__arena *a, const void *p, size_t bytes);

#endif
