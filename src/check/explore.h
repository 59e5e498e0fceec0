/* SPDX-License-Identifier: Apache-2.0 */
/* The schedule explorer (PLD_SCHED=<seed>).
 *
 * Thread transport, serial mode: exactly one agent (a core of a rank) runs
 * at a time. At every primitive boundary (notify, wait, each data transfer)
 * the running agent asks the scheduler who runs next; the choice comes from
 * a generator seeded with the seed, and nothing else decides it, so the
 * same seed replays the same interleaving. An agent whose wait is not
 * satisfied does not run; when no agent can run the launch is a deadlock,
 * found at once.
 *
 * Process transport: every rank draws from the seed (and its rank) whether
 * to yield its CPU or sleep a few microseconds at each boundary. That
 * perturbs the interleaving the OS would pick; it cannot replay it.
 *
 * A failed launch under the explorer says which seed to rerun. */
#ifndef PLD_EXPLORE_H
#define PLD_EXPLORE_H

#include "core/internal.h"

/* World init: reads PLD_SCHED; sets up the scheduler (or nothing). */
pld_status pld__sched_init(pld_world *w);
void pld__sched_fini(pld_world *w);

/* Host, before / after the transport runs a launch. */
void pld__sched_launch_begin(pld_world *w);
void pld__sched_launch_end(pld_world *w, pld_status st);

/* An agent starts (rank main, or a core thread: ready once its creator
 * registered it) and ends. */
void pld__sched_agent_begin(pld_ctx *c);
void pld__sched_agent_end(pld_ctx *c);
/* Core 0 registers core b before starting its thread. */
void pld__sched_core_ready(pld_ctx *c, int core);
/* Core 0 waits for its cores: runs again once they are all done. */
void pld__sched_join_begin(pld_ctx *c);

/* A primitive boundary. */
void pld__sched_step(pld_ctx *c);
static inline void pld__sched_point(pld_ctx *c)
{
    if (PLD__UNLIKELY(c->sched_on))
        pld__sched_step(c);
}

/* Serial mode's wait (the wait policy, src/prim/wait.c, hands waits to it):
 * returns PLD_OK when the cell satisfies wd, or PLD_ERR_PEER once the group
 * aborted (a deadlock found here included). */
int pld__sched_serial(const pld_ctx *c);
pld_status pld__sched_wait(pld_ctx *c, const pld__wait_desc *wd);

#endif
