/* SPDX-License-Identifier: Apache-2.0 */
/* Barrier: one round of the self-clearing credit barrier.
 *
 * Cost card: 0 payload bytes; P-1 notifies out, P-1 waits, P-1 epilogue
 * notifies to self; 1 round.
 * Signal: INT32 [P,1] or [P], all-zero before and after the call. */
#include "coll/coll_util.h"

void pld_barrier(pld_ctx *c, pld_dtensor signal)
{
    PLD__CTX_CHECK(c, "pld_barrier");
    static const char api[] = "pld_barrier";
    pld__check_live(c);
    pld__coll_check_signal(c, api, signal, 1);
    pld__coll_fp fp;
    pld__fp_init(&fp, PLD__K_BARRIER, api, signal);
    pld__coll_enter(c, api, signal, &fp, "%s", signal.buf->name);
    /* step 1: arrive at every peer, wait for every peer's arrival */
    pld__credit_barrier(c, signal, 0, 1);
    /* step 2: take this call's credits back out (self-clearing) */
    pld__credit_epilogue(c, signal, 0, 1);
    pld__coll_leave(c, signal);
}
