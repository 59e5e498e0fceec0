/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the builtin-collective tests under tests/coll/.
 *
 * Builds on tests/unit/test_util.h (worlds, windows, fp16/bf16 converters,
 * KCHECK). The references here are plain C, computed from the same input
 * generators the kernels use and never from pld's own code:
 *
 *   - data movement (broadcast, allgather, all_to_all, all_to_all_v) is
 *     checked byte for byte against a hash pattern keyed by a tag that names
 *     the chunk's source, destination and call (cu_tag), so a chunk that
 *     lands in the wrong row, the wrong rank or at an offset never matches;
 *   - reductions use small integers (cu_rval), so fp32/fp16/bf16 results are
 *     exact whatever the order of the reduction, and cu_ref folds them. */
#ifndef PLD_TESTS_COLL_UTIL_H
#define PLD_TESTS_COLL_UTIL_H

#include "test_util.h"

/* A world of P ranks on devices 0..P-1 (asserts on failure). */
pld_world *cu_world(int p);
/* Same on a given platform profile ("a2a3sim", "a5sim"). */
pld_world *cu_world_on(int p, const char *platform);
/* Host memory visible to kernels (zeroed, asserts on failure), freed by
 * cu_finalize. */
void *cu_alloc(pld_world *w, size_t bytes);
/* Frees what cu_alloc gave for w, then finalizes w. */
void cu_finalize(pld_world *w);
/* Frees a window buffer made by tu_window (or any view of it). */
void cu_free(pld_world *w, pld_dtensor t);

/* ---- byte patterns for data movement ------------------------------------ */

#define CU_ALL 0xff     /* destination "every rank" (allgather, broadcast) */
#define CU_GARBAGE 0xfe /* source of the garbage a target is pre-filled with */

/* The tag of the chunk `src` makes for `dst` in call `salt`. */
uint32_t cu_tag(int src, int dst, int salt);
/* Byte k of the pattern of `tag`. */
uint8_t cu_byte(uint32_t tag, uint64_t k);
/* Writes bytes [first, first+n) of the pattern of `tag` to p. */
void cu_fill(void *p, size_t n, uint32_t tag, uint64_t first);
/* Index (from p) of the first byte that differs from the pattern, or -1. */
int64_t cu_mismatch(const void *p, size_t n, uint32_t tag, uint64_t first);
/* Kernel side: pld_fail with a readable message when p does not hold the
 * pattern. `what` says which row/rank is checked. */
void cu_kcheck_bytes(pld_ctx *c, const char *what, const void *p, size_t n, uint32_t tag,
                     uint64_t first);

/* ---- reductions --------------------------------------------------------- */

/* Input of rank r at flat index i for op: integers exact in fp16 and bf16
 * through every partial result at up to 32 ranks.
 *   Sum:      values in [-3, 7] that vary with rank and index;
 *   Max/Min:  a permutation of the ranks per index (unique winner that moves
 *             with i), centred on 0;
 *   Prod:     +-1 with at most eight factors of 2 (|product| <= 256). */
double cu_rval(int r, int64_t i, pld_reduce_op op, int p);
double cu_fold(pld_reduce_op op, double acc, double x);
/* The reference: op over ranks 0..p-1 of cu_rval(r, i). */
double cu_ref(int p, int64_t i, pld_reduce_op op);
/* Host-allocated array of cu_ref for i in [0, n). Free with free(). */
double *cu_ref_array(int p, int64_t n, pld_reduce_op op);
const char *cu_op_name(pld_reduce_op op);

/* ---- sizes -------------------------------------------------------------- */

/* An odd element count per row so that rows * count * elt is about
 * total_bytes (at least 1): ragged against every chunk width. */
int64_t cu_ragged(size_t total_bytes, int64_t rows, size_t elt);

/* ---- signals ------------------------------------------------------------ */

/* Host side: asserts that every cell of signal `sig` is zero on every rank. */
void cu_assert_signal_zero(pld_world *w, pld_dtensor sig);

#endif /* PLD_TESTS_COLL_UTIL_H */
