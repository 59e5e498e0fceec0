/* SPDX-License-Identifier: Apache-2.0 */
/* The checkers: deadlock detection, signal hygiene, the race checker's
 * life cycle (its per-access hooks are in prim/prim.h). */
#ifndef PLD_CHECK_H
#define PLD_CHECK_H

#include "core/internal.h"

/* Deadlock check (src/check/deadlock.c): if every live rank is blocked on an
 * unsatisfied wait and no notify ran meanwhile, records PLD_ERR_DEADLOCK with
 * the wait-for report and returns 1. */
int pld__deadlock_check(pld_world *w);
/* One line describing agent (r, core)'s blocked wait (for reports). */
void pld__describe_wait(pld_world *w, int r, int core, int32_t current, char *out, size_t n);

/* PLD_CHECK_SIGNALS (src/check/signal_check.c): verifies this rank's slice
 * of a builtin's signal is all-zero (on entry, or after the call). */
void pld__signal_check(pld_ctx *c, pld_dtensor sig, int after);
/* The checker's own signal for a team's groups (made with the team when
 * the check is on): a rank interleaves calls of several teams, and one
 * shared checker signal would let one team's credits pass for another's. */
pld_status pld__signal_check_team_init(pld_world *w, struct pld_team *t);
/* Launch start: the checker signals of the world and of every team may
 * hold credits of an aborted launch; no rank runs, so they are cleared. */
void pld__signal_check_clear(pld_world *w);
/* The same for every builtin signal of a finished launch, from the host
 * (under the schedule explorer, whose runs the per-call check would order). */
pld_status pld__signal_check_launch(pld_world *w);

/* The race checker (src/check/race.c, PLD_CHECK=race, thread transport). */
pld__race *pld__race_new(int nranks);
void pld__race_reset(pld__race *r);
void pld__race_free(pld__race *r);

#endif
