/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the MoE exchange (pld_moe_dispatch, pld_moe_combine): the
 * argument checks and the count matrices both directions read.
 *
 * Counts never travel by one rank writing another rank's count cells: a
 * rank keeps what it sends in its own recv_counts window (dispatch) or
 * already holds what it received there (combine), and peers pull it. */
#ifndef PLD_MOE_H
#define PLD_MOE_H

#include "coll/coll_util.h"

/* One MoE call on this rank, validated. */
typedef struct pld__moe {
    int p, e;            /* ranks, experts per rank */
    int64_t m, h;        /* rows per (destination, expert) block, hidden size */
    const int32_t *send; /* this rank's send_counts [P, E] */
    pld_tensor send2;    /* the same as a [P, E] tensor */
    pld_dtensor recv2;   /* recv_counts as [P, E] */
    pld_dtensor data2;   /* the [P*E*M, H] window (target, expert_out) */
} pld__moe;

/* Checks the layout, the signal [P,1], the window `data` [P*E*M, H]
 * (target or expert_out), send_counts INT32 [P,E] with every count in
 * [0, M] (PLD_ERR_DATA), recv_counts window INT32 [P,E], and that signal,
 * recv_counts and data are distinct windows and send_counts lies in none
 * of them. Fills *out. */
void pld__moe_check(pld_ctx *c, const char *api, const pld_moe_layout *l, pld_dtensor data,
                    const char *data_name, pld_dtensor signal, pld_tensor send_counts,
                    pld_dtensor recv_counts, pld__moe *out);

/* Checks a plain [P*E*M, H] tensor of the data's dtype (the dispatch's
 * input); `what` names it. */
void pld__moe_check_rows(pld_ctx *c, const char *api, const pld__moe *m, pld_dtype dtype,
                         const char *what, pld_tensor t, int64_t rows, int64_t cols);

/* A [P, E] INT32 tile for a count matrix (freed with the kernel if an
 * error leaves early). */
pld_tile *pld__moe_counts_tile(pld_ctx *c, const char *api, const pld__moe *m);

/* peer's recv_counts [P, E] into the matrix at dst (a counts tile's data). */
void pld__moe_pull_counts(pld_ctx *c, const char *api, const pld__moe *m, int peer, int32_t *dst);

/* Where source s's blocks start in a destination's packed target, for
 * every expert: place[e] = sum over e' < e of tot[e'] + before[e], with
 * tot[e] = the rows every source sends that expert and before[e] = the
 * rows the sources ranked before s send it (expert-major, then source). */
void pld__moe_places(const int64_t *tot, const int64_t *before, int ne, int64_t *place);

#endif
