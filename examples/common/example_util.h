/* SPDX-License-Identifier: Apache-2.0 */
/* Small helpers shared by the tutorial examples: command line, golden checks,
 * and the common ending (print OK or the failure, finalize, exit code).
 *
 * They are deliberately tiny so that every example still reads top to bottom
 * on its own; nothing here hides a pld call that the tutorial is about. */
#ifndef PLD_EXAMPLE_UTIL_H
#define PLD_EXAMPLE_UTIL_H

#include <stdint.h>

#include <pld/pld.h>

/* ex_setup's "keep going" answer; any other value is the exit code. */
#define EX_RUN (-1)

/* Call right after pld_world_init_from_args failed: prints the reason.
 * Returns the exit code (2 for a bad command line, 1 otherwise). */
int ex_init_failed(const char *prog, pld_status st);

/* Parses what pld left on the command line. `modes` is a NULL-terminated list
 * ("hand", "builtin", NULL) for examples with `--mode X`, or NULL for none;
 * *mode_out becomes the index of the chosen mode (0 when --mode is absent).
 * Also enforces the tutorial's P >= 2. Returns EX_RUN, or the exit code
 * (2 after a usage error, 0 after --help). */
int ex_setup(pld_world *w, int argc, char **argv, const char *const *modes, int *mode_out);

/* The golden value of element [i,j] of a block owned (produced) by `owner`. */
typedef int32_t (*ex_golden_fn)(int owner, int64_t i, int64_t j);

/* Kernel side: fails the kernel (PLD_ERR_CHECK) when got != want, naming what
 * was checked, the index and both values; pld prefixes the rank and device:
 *   rank 1 (device 1): pld_fail: golden mismatch: data[0,3] got 3 want 1003 */
void ex_check_i32(pld_ctx *c, const char *what, int64_t i, int64_t j, int32_t got, int32_t want);

/* Kernel side: checks a row-major rows x cols INT32 block against
 * golden(owner, i, j) and fails on the first mismatch. */
void ex_check_block(pld_ctx *c, const char *what, const int32_t *got, int64_t rows, int64_t cols,
                    ex_golden_fn golden, int owner);

/* Host side twin of ex_check_block: prints the first mismatch to stderr
 * (naming `rank`, whose memory was read) and returns 0; 1 when all match. */
int ex_host_check_block(const char *what, int rank, const int32_t *got, int64_t rows, int64_t cols,
                        ex_golden_fn golden, int owner);

/* Host side: a zeroed window buffer holding a rows x cols `dtype` view, and
 * that view (steps 03 and 06 spell the two calls out). On failure nothing is
 * left allocated and the outputs are untouched. */
pld_status ex_alloc_window_2d(pld_world *w, const char *name, pld_dtype dtype, int64_t rows,
                              int64_t cols, pld_window_buffer **buf_out, pld_dtensor *view_out);

/* First element of segment k when n elements are split over p ranks:
 * segment k is [ex_seg_begin(n,p,k), ex_seg_begin(n,p,k+1)). Lengths differ
 * by at most one (n = 1001 over 3 ranks: 333, 334, 334), so a split that
 * does not divide evenly still covers every element exactly once. */
int64_t ex_seg_begin(int64_t n, int p, int k);

/* Ends the example: prints OK (root process only) when st is PLD_OK, else
 * the status name and pld's message on stderr; finalizes the world.
 * Returns the exit code (0 or 1). */
int ex_finish(pld_world *w, pld_status st);

#endif /* PLD_EXAMPLE_UTIL_H */
