/* pld — builtin collectives.
 *
 * Kernel-side builtins: every rank calls the same collective in the same
 * order with identically shaped arguments. They synchronise through one
 * self-clearing credit barrier on their INT32 signal (one cell per rank), so
 * the signal is all-zero again after every call and one signal serves any
 * number of back-to-back builtin calls.
 *
 * Host-side twins (pld_host_*) launch the builtin on every rank and return a
 * status. Included by <pld/pld.h>. */
#ifndef PLD_COLL_H
#define PLD_COLL_H

#include "pld/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Barrier on signal [P,1] (or [P]).
 *   for peer != me: notify(signal, peer, [me], +1, AtomicAdd)
 *   for src  != me: wait(signal, [src], 1, Ge)
 *   for src  != me: notify(signal, me, [src], -1, AtomicAdd)   (self-clearing epilogue) */
void pld_barrier(pld_ctx *c, pld_dtensor signal);

pld_status pld_host_barrier(pld_world *w, const pld_dtensor *signal);

#ifdef __cplusplus
}
#endif
#endif /* PLD_COLL_H */
