/* SPDX-License-Identifier: Apache-2.0 */
/* Algorithm variants and their cost cards, per rank, for the
 * buffers bench_shape_make() describes. `pld cost` prints them, `pld bench`
 * prints them next to the byte counters it measured, and
 * tests/tools/test_cost checks them against pld_rank_counters(). */
#ifndef PLD_TOOLS_COST_H
#define PLD_TOOLS_COST_H

#include <stddef.h>
#include <stdint.h>

#include "sweep.h"

typedef enum bench_mode {
    BENCH_MODE_DEFAULT, /* the collective's own default */
    BENCH_MODE_PUSH,    /* allgather, all_to_all, all_to_all_v */
    BENCH_MODE_INPLACE, /* allgather with this rank's row already in place */
    BENCH_MODE_PULL,    /* broadcast, reduce_scatter */
    BENCH_MODE_MESH,    /* allreduce */
    BENCH_MODE_RING,    /* allreduce */
    BENCH_NMODE
} bench_mode;

/* "mesh"; "default" for BENCH_MODE_DEFAULT. */
const char *bench_mode_name(bench_mode m);
/* 0 and *out on success, -1 for an unknown name. */
int bench_mode_parse(const char *s, bench_mode *out);
/* The mode a collective runs in when asked for `m` (DEFAULT resolves to the
 * collective's default); BENCH_NMODE when the collective has no such
 * variant. */
bench_mode bench_mode_resolve(bench_coll c, bench_mode m);
/* "push|inplace" — the modes a collective accepts. */
const char *bench_mode_choices(bench_coll c);

typedef struct bench_card {
    uint64_t to_peers;   /* bytes written into other ranks' windows */
    uint64_t from_peers; /* bytes read from other ranks' windows */
    uint64_t self;       /* the same paths with peer == this rank */
    int rounds;          /* synchronisation rounds */
    uint64_t waits;      /* pld_waits of one call on this rank: rounds x (P-1) for every
                            algorithm built from full credit rounds */
} bench_card;

/* The card of one call on `rank` (mode already resolved; root for
 * broadcast; ub_bytes = the profile's UB per core, which sets the chunk
 * count of the mesh allreduce). */
void bench_card_make(bench_coll c, bench_mode mode, int p, int rank, int root,
                     const bench_shape *sh, size_t elt, size_t ub_bytes, bench_card *out);
/* The card as a formula: "(P-1)/P*N to peers, N/P self". */
const char *bench_card_formula(bench_coll c, bench_mode mode);

#endif
