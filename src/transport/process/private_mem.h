/* SPDX-License-Identifier: Apache-2.0 */
/* Telling a rank's own memory from the host's private memory (process
 * transport): see private_mem.c. */
#ifndef PLD_PRIVATE_MEM_H
#define PLD_PRIVATE_MEM_H

#include <stddef.h>

/* Called by a worker's main thread right after the fork, before it runs any
 * kernel: marks where the rank's own stack begins. */
void pld__private_mem_worker_begin(void);

/* 1 if the calling rank may use [p, p+bytes) besides shared memory (the
 * caller checks the arena first): its own stack frames only. */
int pld__private_mem_rank_ok(const void *p, size_t bytes);

#endif
