/* SPDX-License-Identifier: Apache-2.0 */
/* The one-round path of the builtins: a small call in one eager round
 * through pld's own inboxes instead of data movement plus credit rounds.
 *
 * Every group (the world, each team's groups) has two internal windows:
 *   box   per rank, 2 x cap slots of `slot` bytes: slot (q, src) holds what
 *         rank src sent this rank in a one-round call of parity q;
 *   flags per rank, 2 x cap INT32 cells, one 64-byte line each: cell
 *         (q, src) is written by rank src only, with Set.
 * A context counts its one-round calls in the launch (epoch e = 1, 2, ...;
 * q = e mod 2); every rank of a group makes the same calls, so they agree.
 *
 *   round:    for peer != me: put my payload for peer into its slot (q, me)
 *                             (nothing when I have none), then notify its
 *                             flag (q, me) Set e  -- data before flag
 *             for src  != me: wait my flag (q, src) >= e
 *   copy-out: from my own slots (q, src) into the call's output
 *
 * Every rank hears from every peer in the round (an empty flag when there
 * is no payload), so the ordering guarantee holds as for the credit rounds,
 * and nothing touches the user's signal. Two slots per pair suffice: a
 * writer in call e finished call e-1, so it heard from this rank in e-1,
 * which this rank sends only after it copied out call e-2 (the slot e
 * reuses). Flags are cleared before every launch that follows one in
 * which a one-round call ran (pld__ll_launch_begin), and epochs restart.
 *
 * Sizes: slot = min(PLD_LL_BYTES rounded up to 64, 256 KiB / (2 cap))
 * rounded down to 64; so a rank's inbox is at most 256 KiB of slots plus
 * 2 cap x 64 bytes of flags. Groups of more than 64 ranks have no slots;
 * every group of two or more ranks has the flags (see pld__ll_count_line). */
#ifndef PLD_COLL_LL_H
#define PLD_COLL_LL_H

#include "coll/coll_util.h"

/* The world's inboxes (world init) and a team's (sized for its largest
 * group); PLD_OK and no windows when the path is off. */
pld_status pld__ll_world_init(pld_world *w);
struct pld_team;
pld_status pld__ll_team_init(pld_world *w, struct pld_team *t);
/* Frees a team's inboxes (the world's go with its other windows). */
void pld__ll_team_free(pld_world *w, struct pld_team *t);
/* Host, before a launch: clears every flag if a one-round call ran since
 * they were last cleared (an aborted call may have left any of them set). */
void pld__ll_launch_begin(pld_world *w);
/* Host, after a launch: a failed one may have left flags set in the inbox
 * of a rank that ran no one-round call itself (under mpi, another process
 * wrote them), so the next launch clears them all. */
void pld__ll_launch_end(pld_world *w, pld_status st);

/* all_to_all_v's counts (one call): the group's flags window as *lines
 * and the first row of this call's parity; a sender Sets its count into
 * cell [*row + its rank, 1] of the receiver, its own line (cell 0 is the
 * one-round flag). The call takes an epoch as a one-round call does, so
 * a line is reused two such calls later, when the receiver has read it.
 * 0 for a group of one rank. */
int pld__ll_count_line(pld_ctx *c, pld_dtensor *lines, int64_t *row);

/* One call on the one-round path. */
typedef struct pld__ll {
    pld_window_buffer *box;
    pld_dtensor flags; /* INT32 [2 cap, 16] */
    size_t slot;       /* bytes per slot */
    int cap;           /* slots per parity */
    int q;             /* this call's parity */
    int32_t epoch;
} pld__ll;

/* What a builtin's one-round form costs beyond its payload, for the
 * choice of path (measured: docs/performance.md, "Small calls in one
 * round"):
 *   PLD__LL_COPY    a copy-out: one round instead of two or more
 *   PLD__LL_PUSH    a copy-out, where the credit form (a push) is a single
 *                   round already: no faster, so only when PLD_LL_BYTES is
 *                   set in the environment
 *   PLD__LL_REDUCE  the reduction of P-1 copies: also (P-1) x per_peer <=
 *                   4 x the slot, the local work measured to pay */
typedef enum pld__ll_form { PLD__LL_COPY, PLD__LL_PUSH, PLD__LL_REDUCE } pld__ll_form;

/* Decides the path of a builtin call that moves `per_peer` bytes to each
 * peer, and says which and why in the listing. 1 (and *ll set up): the
 * one-round path. The choice depends only on arguments every rank agrees
 * on and the group's slot size. Call after pld__coll_enter. */
int pld__ll_begin(pld_ctx *c, size_t per_peer, pld__ll_form form, pld__ll *ll);
/* Sends n bytes at src (n = 0: nothing) to peer's slot, then its flag. */
void pld__ll_send(pld_ctx *c, const pld__ll *ll, int peer, const void *src, size_t n,
                  pld_dtype dtype);
/* Waits for every peer's flag: the round (the agreement check compares
 * after it). */
void pld__ll_wait_all(pld_ctx *c, const pld__ll *ll);
/* Waits for src's flag only (the planted bug ll_no_wait). */
void pld__ll_wait_from(pld_ctx *c, const pld__ll *ll, int src);
/* Copies `cols` elements of slot (q, src) into row `row` of the 2-D
 * window dst on this rank. */
void pld__ll_copy_out(pld_ctx *c, const char *api, const pld__ll *ll, int src, pld_dtensor dst,
                      int64_t row, int64_t cols);
/* out[0, n) at column `col` of the local [1, *] tensor mine = op over the
 * group's contributions in rank order (0 first): this rank's own at that
 * column of mine (the window mine_win, seen flat), every peer's in its
 * slot. The same order on every rank: every rank gets the same bits. */
void pld__ll_reduce(pld_ctx *c, const char *api, const pld__ll *ll, pld_tensor mine,
                    pld_dtensor mine_win, int64_t col, int64_t n, pld_reduce_op op);

/* The builtins' one-round forms (ll_coll.c). Each is called right after
 * pld__coll_enter and returns 1 when it ran the whole call (the caller
 * only leaves), 0 when the call takes the credit rounds. Windows and
 * tensors come as the builtin shaped them: [P, S] (2-D), or flat. */
int pld__ll_allgather(pld_ctx *c, const char *api, pld_dtensor t2, pld_tensor l2, int inplace);
int pld__ll_all_to_all(pld_ctx *c, const char *api, pld_dtensor t2, pld_tensor in2);
int pld__ll_broadcast(pld_ctx *c, const char *api, pld_dtensor data, int root);
int pld__ll_reduce_scatter(pld_ctx *c, const char *api, pld_dtensor d2, pld_reduce_op op);
int pld__ll_allreduce(pld_ctx *c, const char *api, pld_dtensor data, pld_reduce_op op);

#endif
