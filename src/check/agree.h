/* SPDX-License-Identifier: Apache-2.0 */
/* Agreement check: every rank must call the same builtin with agreeing
 * arguments. Each builtin describes its call in a fingerprint (which
 * builtin, windows, dtypes, shapes, op, mode, root, M, core_num); the rank
 * publishes it in its slot of a world-internal window before its first
 * notify, and after the call's first round -- when its left neighbour has
 * provably published (it notified us after writing) -- compares it with the
 * left neighbour's. If any two ranks differ, some pair of neighbours does,
 * so one comparison per rank per call finds every disagreement.
 *
 * Two slots per rank, by call parity: a neighbour can be at most one call
 * ahead (it cannot leave call k+1 before this rank entered it), so the slot
 * of call k is intact while this rank reads it.
 *
 * Off with PLD_CHECK=noargs. */
#ifndef PLD_AGREE_H
#define PLD_AGREE_H

#include "hook/hook.h"

/* The first line of a rank's slot: which call it describes and a hash of
 * its description, all a neighbour reads when the calls agree. The tag --
 * the launch in the high 32 bits, the call number in the low ones -- is
 * stored last, with release ordering, where the slot is mapped: a
 * neighbour that reads it (acquire) equal to its own call's can read the
 * hash at any time, even before the call's first round (pld__agree_differs). */
typedef struct pld__agree_head {
    uint64_t tag;
    uint64_t hash;
} pld__agree_head;

/* A rank's side of the check (pld_ctx.agree). */
typedef struct pld__agree_ctx {
    const char *api;           /* the current call */
    pld__fp_wire wire;         /* its description as published */
    pld__agree_head head;      /* the slot's first line, as published */
    unsigned char *mine;       /* this rank's slots, when mapped here */
    const unsigned char *left; /* the left neighbour's */
    pld_window_buffer *buf;    /* the slots: the world's, or the context's team's */
    int me, left_rank;         /* world ranks: this rank and its left neighbour in
                                  the group (the world, or the view's group) */
} pld__agree_ctx;

/* Allocates the fingerprint window at world init (unless PLD_CHECK=noargs). */
pld_status pld__agree_init(pld_world *w);

/* A rank's kernel starts / ends (its call numbering starts at 0). */
void pld__agree_rank_begin(pld_ctx *c);
void pld__agree_rank_end(pld_ctx *c);
/* A team's fingerprint window, made with the team (none when the check is
 * off): a team's calls are numbered and compared apart from the world's
 * and other teams', since a rank interleaves them freely. */
pld_status pld__agree_team_init(pld_world *w, struct pld_team *t);
/* A team view starts (its numbering starts at 0) / is retired. */
void pld__agree_view_begin(pld_ctx *v);
void pld__agree_view_end(pld_ctx *v);
/* Builtin entry: numbers the call and publishes its fingerprint. */
void pld__agree_publish(pld_ctx *c, const pld__coll_fp *fp);
/* After the call's first round: compares with the left neighbour (once). */
void pld__agree_verify(pld_ctx *c);
/* While a call waits for its first round: 1 when the left neighbour has
 * already published this call and its description differs (then
 * pld__agree_verify names the difference). Ranks whose calls disagree may
 * take different protocols -- one waits for credits, the other for an
 * inbox flag -- and never complete a round; this finds them without one.
 * Only where the neighbour's slot is mapped; cheap: one load. */
int pld__agree_differs(const pld_ctx *c);
/* Builtin return: the call is no longer in flight. */
void pld__agree_leave(pld_ctx *c);

/* Deadlock / timeout: if the blocked ranks' current calls disagree, writes
 * the mismatch ("rank 1: pld_allgather ... differs from rank 0's ...") into
 * out and returns 1. all_blocked: every rank is known to wait (a
 * deadlock), so ranks in different calls disagree too; 0 after a timeout,
 * when a rank in an earlier call may only be slow: then only ranks in the
 * same call are compared. */
int pld__agree_explain(pld_world *w, int all_blocked, char *out, size_t n);

/* After an aborted launch (host): clears the signal of every builtin that
 * was in flight, so the next launch does not take its leftover credits for
 * arrivals. Writes the cleared windows' names into out; returns how many. */
int pld__agree_after_abort(pld_world *w, char *out, size_t n);

#endif
