/* SPDX-License-Identifier: Apache-2.0 */
/* The self-clearing credit barrier every builtin synchronises with
 * (the ordering guarantee G). Cell of rank r on lane l: [r, l] of a [P, S] signal (or [r]
 * of a [P] signal).
 *
 *   barrier(g): for peer != me: notify(signal, peer, cell(me), +1, AtomicAdd)
 *               for src  != me: wait(signal, cell(src), g, Ge)
 *   epilogue:   for src  != me: notify(signal, me, cell(src), -N, AtomicAdd)
 *
 * A fast peer may already have added credits for the next call when this
 * rank subtracts, which is why waits use Ge and never Eq.
 *
 * That is the full form. Large groups take a log-depth one instead
 * (PLD_SYNC, coll/sync.h): dissemination (round j: notify me + 2^j, wait
 * for me - 2^j) or a gather-release tree (arrivals summed in the parent's
 * own cell, the release in the child's cell of its parent). The same two
 * functions run whichever form the group uses; each form is self-clearing
 * under the same two rules, and keeps the ordering guarantee through
 * chains of notifies. */
#ifndef PLD_CREDIT_H
#define PLD_CREDIT_H

#include "hook/hook.h"
#include "coll/mutant.h"
#include "prim/prim.h"

/* Checks a builtin's signal: INT32, [P] or [P,S] with S >= lanes. */
void pld__coll_check_signal(pld_ctx *c, const char *api, pld_dtensor sig, int lanes);
void pld__credit_barrier(pld_ctx *c, pld_dtensor sig, int lane, int32_t g);
void pld__credit_epilogue(pld_ctx *c, pld_dtensor sig, int lane, int32_t n);

#endif
