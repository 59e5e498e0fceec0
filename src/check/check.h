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

/* The hardware-hazard lints (src/check/hazards.c, PLD_CHECK=hazards): what
 * runs on a CPU but breaks on the NPU fails the launch with PLD_ERR_CHECK.
 * The table of signal cells lives in a world-internal window, cleared at
 * each launch's start. */
pld_status pld__hazard_init(pld_world *w);
void pld__hazard_launch_begin(pld_world *w);
/* A notify of `op` to the cell at byte offset off of world rank wpeer's
 * slice of sig (before the cell changes). */
void pld__hazard_notify(pld_ctx *c, pld_dtensor sig, int wpeer, size_t off, pld_notify_op op);
/* An Eq wait on this rank's cell at byte offset off of sig. */
void pld__hazard_wait_eq(pld_ctx *c, pld_dtensor sig, size_t off, int32_t expected);
/* Profile limits: `need` of a resource this world's limits allowed; the
 * lints compare it with the stock limits of every profile. what: which
 * tile, transfer or send, for the message. */
typedef enum pld__hazard_limit {
    PLD__HZ_UB,    /* bytes of UB in use, need included */
    PLD__HZ_SQ,    /* WQEBBs of one peer's URMA send */
    PLD__HZ_CORES, /* core_num of a multi-core call */
} pld__hazard_limit;
void pld__hazard_limit_check(pld_ctx *c, const char *api, pld__hazard_limit kind, uint64_t need,
                             const char *what);

#endif
