/* SPDX-License-Identifier: Apache-2.0 */
/* Ranks as user-level contexts (PLD_FIBERS): a carrier thread runs several
 * ranks, each on its own stack, and a rank that waits hands the carrier to
 * the next one with a context switch instead of a trip through the kernel's
 * scheduler. See fiber.c. */
#ifndef PLD_TRANSPORT_THREAD_FIBER_H
#define PLD_TRANSPORT_THREAD_FIBER_H

#include <stddef.h>

typedef struct pld__carrier pld__carrier;

/* What a carrier runs once per rank and launch. */
typedef void (*pld__fiber_fn)(void *arg, int rank);

/* A carrier for the `n` ranks first, first + stride, ..., each with a
 * stack of `stack_bytes` behind a guard page; NULL when out of memory. */
pld__carrier *pld__carrier_new(int first, int stride, int n, size_t stack_bytes);
void pld__carrier_free(pld__carrier *k);

/* Runs fn(arg, rank) for every rank of the carrier, each on its own stack,
 * switching between them whenever one waits (pld__fiber_yield); returns
 * when all have returned. Called on the carrier's own thread. */
void pld__carrier_run(pld__carrier *k, pld__fiber_fn fn, void *arg);

/* 1 on a thread that is running a carrier's ranks right now. */
int pld__fiber_running(void);

/* 1 when the running rank is the only one of its carrier that has not
 * returned from this launch: it may wait as a thread does (spin, sleep),
 * since nobody else needs the carrier until it returns. */
int pld__fiber_alone(void);

/* Hands the carrier to its next rank that has not returned. `idle`: the
 * caller's wait has not been met since its last yield. When every rank of
 * the carrier yielded idle in a row, the carrier backs off (a sched_yield,
 * then naps that grow), so that waiting ranks leave the CPU to others. */
void pld__fiber_yield(int idle);

#endif
