/* SPDX-License-Identifier: Apache-2.0 */
/* Data for `pld bench -c 1`: every element of every iteration gets a value
 * that names its source rank, destination, iteration and index, so a stale,
 * misplaced or missing element is counted as wrong.
 *
 * Values are small integers (0..15), exact in every dtype. Reductions stay
 * exact too: Sum on bf16 uses 0/1 values (sums up to 256 are exact in bf16),
 * Prod gives the value 2 to exactly one source per element and 1 to the
 * others. Elements are compared bit for bit with the encoded expectation. */
#ifndef PLD_TOOLS_VALUES_H
#define PLD_TOOLS_VALUES_H

#include <stdint.h>

#include "pld/pld.h"

typedef struct bench_vals {
    pld_dtype dt;
    pld_reduce_op op;
    int p;          /* ranks */
    unsigned range; /* values are 0 .. range-1 */
} bench_vals;

/* range from dtype and op (for reductions; 16 for data movement). */
void bench_vals_init(bench_vals *v, pld_dtype dt, pld_reduce_op op, int reduces, int p);
/* Element i of what `src` sends to `dst` in iteration `it`. */
double bench_val(const bench_vals *v, int src, int dst, int64_t it, int64_t i);
/* Writes n elements i0 .. i0+n-1 of that block at base. */
void bench_fill(const bench_vals *v, void *base, int64_t n, int src, int dst, int64_t it,
                int64_t i0);
/* Writes n copies of x (a sentinel) at base. */
void bench_fill_const(pld_dtype dt, void *base, int64_t n, double x);
/* Counts the elements at base that differ from bench_fill's. */
int64_t bench_verify(const bench_vals *v, const void *base, int64_t n, int src, int dst, int64_t it,
                     int64_t i0);
/* Counts the elements at base that differ from op over every source s of
 * bench_val(s, dst, it, i0 + i). */
int64_t bench_verify_reduced(const bench_vals *v, const void *base, int64_t n, int dst, int64_t it,
                             int64_t i0);

#endif
