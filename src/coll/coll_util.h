/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the builtin collectives. */
#ifndef PLD_COLL_UTIL_H
#define PLD_COLL_UTIL_H

#include "hook/hook.h"
#include "coll/credit.h"
#include "coll/mutant.h"

/* Elements per chunk so that `tiles` staging tiles of one chunk each fit the
 * rank's free UB (a multiple of 64 elements when the budget allows). */
int64_t pld__coll_chunk_elems(pld_ctx *c, const char *api, size_t esz, int tiles);

/* 1 if the tensor's bytes lie inside any rank's slice of buf. */
int pld__tensor_in_window(pld_ctx *c, pld_tensor t, const pld_window_buffer *buf);

/* The window seen as one row [1, numel] (same buffer, same bytes). */
pld_dtensor pld__dtensor_flat(pld_dtensor t);
int64_t pld__dtensor_numel(pld_dtensor t);

/* Enter/leave a builtin: the listing line, the scope for messages, and in
 * checked mode (PLD_CHECK_SIGNALS) the all-zero check of its signal. */
/* fp describes the call for the agreement check (published here, compared
 * after the first round). */
void pld__coll_enter(pld_ctx *c, const char *api, pld_dtensor signal, const pld__coll_fp *fp,
                     const char *fmt, ...) PLD__PRINTF(5, 6);
void pld__coll_leave(pld_ctx *c, pld_dtensor signal);

/* Checks a reduce op and the dtype it applies to. */
void pld__coll_check_reduce(pld_ctx *c, const char *api, pld_dtype dtype, pld_reduce_op op);

/* Puts rows [src_row, src_row+rows) x all cols of local 2-D tensor src into
 * rows [dst_row, ...) of window dst at peer, chunked (pipelined) through UB
 * staging when the block does not fit at once. */
void pld__coll_put_rows(pld_ctx *c, const char *api, pld_dtensor dst, int peer, int64_t dst_row,
                        pld_tensor src, int64_t src_row, int64_t rows);
/* Puts row src_row of the local 2-D tensor src into row dst_row of window
 * dst at every rank, starting with the right neighbour (this rank too when
 * with_self). Counts, traces and lists as one pld__coll_put_rows per rank. */
void pld__coll_put_row_to_all(pld_ctx *c, const char *api, pld_dtensor dst, int64_t dst_row,
                              pld_tensor src, int64_t src_row, int with_self);
/* The same for pld_get: rows of window src at peer into local dst. */
void pld__coll_get_rows(pld_ctx *c, const char *api, pld_tensor dst, int64_t dst_row,
                        pld_dtensor src, int peer, int64_t src_row, int64_t rows);
/* A plain 2-D [rows, cols] view of a tensor (same data). */
pld_tensor pld__tensor_2d(pld_tensor t, int64_t rows, int64_t cols);
pld_dtensor pld__dtensor_2d(pld_dtensor t, int64_t rows, int64_t cols);

/* Staging tiles for walking a row of `total` elements in UB-sized chunks:
 * `ntiles` tiles [1, width]; the last chunk gets exact-width tiles, so a
 * ragged tail is neither read nor written past its end. */
typedef struct pld__stage {
    pld_tile *t[2];
    int ntiles;
    int64_t width;
    pld_dtype dtype;
} pld__stage;
void pld__stage_begin(pld_ctx *c, const char *api, pld__stage *st, pld_dtype dtype, int64_t total,
                      int ntiles);
/* Width of the chunk starting `left` elements before the end (re-sizes the
 * tiles for the tail). */
int64_t pld__stage_fit(pld_ctx *c, pld__stage *st, int64_t left);
void pld__stage_end(pld_ctx *c, pld__stage *st);

/* acc = my tile at (row, col) op the right neighbour's (rank + 1): the load
 * and the first remote_reduce of a pull reduction; just the load when P = 1. */
void pld__load_reduce_first(pld_ctx *c, pld_tile *acc, pld_tensor mine, pld_dtensor src,
                            int64_t row, int64_t col, pld_reduce_op op);

/* Elements [e0, e1) of the peer's flat window f into the same elements
 * of the local row mine: reduced into them (reduce) or copied, through
 * UB-sized staging tiles (a copy goes straight in when nothing observes). */
void pld__coll_pull_range(pld_ctx *c, const char *api, pld_dtensor f, pld_tensor mine, int peer,
                          int64_t e0, int64_t e1, int reduce, pld_reduce_op op);

/* The allreduce algorithms (allreduce_mesh.c, allreduce_ring.c,
 * allreduce_rs_ag.c). */
void pld__allreduce_mesh(pld_ctx *c, const char *api, pld_dtensor data, pld_dtensor signal,
                         pld_reduce_op op);
void pld__allreduce_mesh_cores(pld_ctx *c, const char *api, pld_dtensor data, pld_dtensor signal,
                               pld_reduce_op op, int core_num);
void pld__allreduce_ring_check_signal(pld_ctx *c, const char *api, pld_dtensor signal);
void pld__allreduce_ring(pld_ctx *c, const char *api, pld_dtensor data, pld_dtensor signal,
                         pld_reduce_op op);
void pld__allreduce_rs_ag(pld_ctx *c, const char *api, pld_dtensor data, pld_dtensor signal,
                          pld_reduce_op op);
/* The allreduce by recursive halving and doubling
 * (allreduce_rabenseifner.c), after pld__coll_enter; and "mesh" / "ring" /
 * "auto" / "rs_ag" / "rabenseifner" ("?" for any other value), the names
 * the listing and the agreement check use. */
void pld__allreduce_rabenseifner(pld_ctx *c, const char *api, pld_dtensor data, pld_dtensor signal,
                                 pld_reduce_op op);
const char *pld__allreduce_mode_name(int32_t mode);
/* PLD_AUTO above the one-round size: PLD_MESH, PLD_RS_AG or
 * PLD_RABENSEIFNER, as the cost model predicts fastest (says which in the
 * listing and the trace). */
pld_allreduce_mode pld__allreduce_auto_pick(pld_ctx *c, pld_dtensor data);

/* The broadcast down a binomial tree (broadcast_binomial.c), after
 * pld__coll_enter; and "auto" / "pull" / "binomial" ("?" for any other
 * value), the names the listing and the agreement check use. */
void pld__broadcast_binomial(pld_ctx *c, const char *api, pld_dtensor data, pld_dtensor signal,
                             int root);
const char *pld__broadcast_mode_name(int32_t mode);

/* The allgather by recursive doubling (allgather_doubling.c), after
 * pld__coll_enter: t2 the target [P, S], l2 the local row [1, S] (NULL:
 * in place, the row already in row `me` of the target); and
 * "auto" / "push" / "doubling" ("?" for any other value). */
void pld__allgather_doubling(pld_ctx *c, const char *api, pld_dtensor t2, const pld_tensor *l2,
                             pld_dtensor signal);
const char *pld__allgather_mode_name(int32_t mode);
/* Says in the listing and the trace what an auto choice between the push
 * and one other algorithm took (other: 1 for `name`; trace_name: the
 * literal "auto: <name>"): both predictions, pred[0] the push's, and the
 * size of a row or chunk. */
void pld__coll_note_push_or(pld_ctx *c, int other, const char *name, const char *trace_name,
                            const double pred[2], size_t bytes, const char *unit, int ruled);
/* The PLD_RULES rule for an auto call of this group with `bytes`
 * (pld_world_rule): its line, the choice in *choice_out, and a note
 * naming the choice (name_of) and the rule; 0 when none matches. */
int pld__coll_rule(pld_ctx *c, pld_rule_coll coll, uint64_t bytes, const char *(*name_of)(int32_t),
                   int *choice_out);
/* What PLD_AG_AUTO takes above the one-round size: PLD_AG_PUSH or
 * PLD_AG_DOUBLING, as the cost model predicts faster (says which in the
 * listing and the trace). */
pld_allgather_mode pld__allgather_auto_pick(pld_ctx *c, pld_dtensor t2);

/* The all-to-all by Bruck's algorithm (all_to_all_bruck.c), after
 * pld__coll_enter: t2 the target [P, S], in2 the input [P, S]; "auto" /
 * "push" / "bruck" ("?" for any other value); and what PLD_A2A_AUTO takes
 * above the one-round size (says which in the listing and the trace). */
void pld__all_to_all_bruck(pld_ctx *c, const char *api, pld_dtensor t2, pld_tensor in2,
                           pld_dtensor signal);
const char *pld__all_to_all_mode_name(int32_t mode);
pld_all_to_all_mode pld__all_to_all_auto_pick(pld_ctx *c, pld_dtensor t2);

#endif
