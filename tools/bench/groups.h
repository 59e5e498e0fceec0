/* SPDX-License-Identifier: Apache-2.0 */
/* `pld bench --team x=K|y=K`: the option, the split it makes and the
 * groups it yields.
 *
 * The world is split 2-D with pld_team_split_2d(xrange K): x=K runs the
 * collective in every row of K consecutive ranks (the last row may be
 * short), y=K in every column (ranks equal mod K). Every group runs at
 * once, in one launch; a group of T ranks is measured as nccl-tests
 * measures a world of T (size, busbw factor, cost card with P = T).
 *
 * Groups of one size T form a class: a split yields at most two (the full
 * rows and the short one; the tall columns and the short ones). */
#ifndef PLD_TOOLS_GROUPS_H
#define PLD_TOOLS_GROUPS_H

#include <stdint.h>
#include <stdio.h>

#include "pld/pld.h"

/* The option as written. */
typedef struct bench_team_opt {
    char axis; /* 'x' or 'y'; 0: no --team (the world) */
    int64_t k; /* the xrange of the split */
    const char *text;
} bench_team_opt;

/* "x=4" -> axis 'x', k 4. 0 on success; -1 after writing why into why
 * (naming the value and how to write it). K <= P is checked by
 * bench_team_make, once the world exists. */
int bench_team_parse(const char *s, bench_team_opt *out, char *why, size_t n);

/* The split of w for o: *team is the x or the y team (the other is freed).
 * PLD_ERR_ARG with a message in why when K exceeds the world (as a usage
 * message: the value and the range); other failures are the library's
 * (pld_world_error). */
pld_status bench_team_make(pld_world *w, const bench_team_opt *o, pld_team **team, char *why,
                           size_t n);

/* The smallest and the largest group of t (every group has the broadcast
 * roots 0 .. min-1). */
void bench_team_extent(const pld_world *w, const pld_team *t, int *min, int *max);

/* The header lines of a team run: the split, the groups with their
 * members (the first 16) and what the columns mean. */
void bench_team_describe(FILE *out, const pld_world *w, const bench_team_opt *o, const pld_team *t);

#endif
