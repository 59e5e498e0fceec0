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
} pld__arena;

int pld__arena_open(pld__arena *a, size_t size);
void pld__arena_close(pld__arena *a);
/* Zeroed memory aligned to 64 bytes, or NULL. A 64-byte header in front
 * remembers the size. */
void *pld__arena_alloc(pld__arena *a, size_t bytes);
void pld__arena_free(pld__arena *a, void *p);
int pld__arena_contains(const pld__arena *a, const void *p, size_t bytes);

#endif
