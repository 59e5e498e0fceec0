/* Telling a rank's own memory from the host's private memory (process
 * transport): see private_mem.c. */
#ifndef PLD_PRIVATE_MEM_H
#define PLD_PRIVATE_MEM_H

#include <stddef.h>

/* 1 if the calling rank may use [p, p+bytes) (shared memory excluded: the
 * caller checks it first). */
int pld__private_mem_rank_ok(const void *p, size_t bytes);

#endif
