/* SPDX-License-Identifier: Apache-2.0 */
/* Handle lifetime: which worlds are alive, which thread runs a kernel, and
 * the guards that turn a call on a dead or busy handle into PLD_ERR_ARG
 * instead of a crash, a hang or a write into a newer object.
 *
 * C hands out pointers, and a pointer freed and handed out again is the
 * same pointer. pld keeps freed handles' memory aside (quarantine) for a
 * while before reusing it, so a stale handle still lands on memory that
 * says "freed": worlds (the last 64 finalized), window descriptors (4096
 * slots, taken round robin), tiles (1024 freed tiles per rank) and host
 * blocks (the last 16, up to 64 MiB). Each carries a generation (a serial
 * number) that messages print. A handle older than its quarantine is
 * reported only if its memory did not go to a new object of the same kind. */
#ifndef PLD_CORE_HANDLES_H
#define PLD_CORE_HANDLES_H

#include "core/internal.h"

/* ---- worlds ---------------------------------------------------------- */

/* A new world joins the registry (before its transport starts); a
 * finalized one leaves it and its memory enters the quarantine, which
 * frees the oldest. */
pld_status pld__world_register(pld_world *w);
void pld__world_retire(pld_world *w);
/* Leaves the registry without quarantine (a world init that failed). */
void pld__world_unregister(pld_world *w);
int pld__world_is_live(const pld_world *w);
/* Leaves the registry for good and is never freed (a rank thread that
 * never returned may still use it). */
void pld__world_abandon(pld_world *w);

/* PLD_OK when w is a live world; else PLD_ERR_ARG with pld_last_error()
 * saying why ("was finalized", "is not a world", NULL). */
pld_status pld__world_check(const pld_world *w, const char *api);

/* The live world whose window descriptors hold buf, or NULL (NULL, not a
 * window, or its world finalized). Reads nothing through buf. */
pld_world *pld__buffer_world(const pld_window_buffer *buf);
/* The live world that made team t, or NULL. Reads nothing through t. */
pld_world *pld__team_world(const pld_team *t);

/* A host call that changes the world's objects (alloc, free, reset,
 * finalize) may not run inside a kernel, nor while a launch or another
 * such call runs on another host thread. Inside a kernel the call raises a
 * kernel error (PLD_ERR_ARG) and does not return; on another thread's
 * launch it returns PLD_ERR_ARG with the world's message set. On PLD_OK the
 * caller holds the world until pld__host_leave. */
pld_status pld__host_enter(pld_world *w, const char *api, const char *what);
void pld__host_leave(pld_world *w);

/* Holds the world for a launch (PLD_ERR_ARG if a host call or another
 * launch holds it); pld__host_leave lets it go. */
pld_status pld__launch_claim(pld_world *w);

/* ---- kernels --------------------------------------------------------- */

/* The context of the kernel (or core) running on this thread, NULL on a
 * host thread. */
pld_ctx *pld__current_ctx(void);
void pld__set_current_ctx(pld_ctx *c);

/* ---- host blocks (pld_host_alloc) ------------------------------------ */

void *pld__host_block_alloc(pld_world *w, size_t bytes);
/* PLD_ERR_ARG, with the world's message set, when p is not a live block. */
pld_status pld__host_block_free(pld_world *w, void *p);
/* Frees every block (world finalize). */
void pld__host_blocks_release(pld_world *w);

#endif
