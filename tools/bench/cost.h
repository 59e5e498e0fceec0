/* SPDX-License-Identifier: Apache-2.0 */
/* Algorithm variants and their cost cards, per rank, for the
 * buffers bench_shape_make() describes. `pld cost` prints them, `pld bench`
 * prints them next to the byte counters it measured, and
 * tests/tools/test_cost checks them against pld_rank_counters(). */
#ifndef PLD_TOOLS_COST_H
#define PLD_TOOLS_COST_H

#include <stddef.h>
#include <stdint.h>

#include "pld/pld.h"
#include "sweep.h"

typedef enum bench_mode {
    BENCH_MODE_DEFAULT,      /* the collective's own default */
    BENCH_MODE_PUSH,         /* allgather (PLD_AG_PUSH), all_to_all (PLD_A2A_PUSH), all_to_all_v */
    BENCH_MODE_INPLACE,      /* allgather with this rank's row already in place */
    BENCH_MODE_PULL,         /* broadcast, reduce_scatter */
    BENCH_MODE_MESH,         /* allreduce */
    BENCH_MODE_RING,         /* allreduce */
    BENCH_MODE_AUTO,         /* allreduce (PLD_AUTO), allgather (PLD_AG_AUTO), all_to_all
                                (PLD_A2A_AUTO): one round when small, else the cost model's pick */
    BENCH_MODE_RS_AG,        /* allreduce: reduce-scatter then allgather, as a mesh */
    BENCH_MODE_BINOMIAL,     /* broadcast: down a binomial tree (PLD_BCAST_BINOMIAL) */
    BENCH_MODE_DOUBLING,     /* allgather: recursive doubling (PLD_AG_DOUBLING) */
    BENCH_MODE_RABENSEIFNER, /* allreduce: recursive halving, then doubling (PLD_RABENSEIFNER) */
    BENCH_MODE_BRUCK,        /* all_to_all: Bruck's algorithm (PLD_A2A_BRUCK) */
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
    uint64_t reduced;    /* of those bytes, the ones combined with the op, and */
    uint64_t staged;     /* the results stored from the UB into the window (neither
                            is a counter: the cost model's work, not the card's) */
    int rounds;          /* synchronisation rounds */
    uint64_t waits;      /* pld_waits of one call on this rank: rounds x (P-1) for every
                            algorithm built from full credit rounds (bench_card_sync:
                            in the group's synchronisation form) */
    uint64_t notifies;   /* pld_notifies of one call on this rank (bench_card_sync; 0
                            until then), BENCH_CARD_UNCOUNTED where the card has none */
    int owners;          /* rs_ag's owner rounds: its m owners (0: not those rounds) */
    int rab;             /* 1: Rabenseifner's allreduce (forced or auto's pick), whose
                            steps bench_card_sync counts */
    int bruck;           /* 1: Bruck's all-to-all (forced or auto's pick): no round, a
                            ready and a data flag per step */
    int doubling;        /* 1: the doubling allgather (forced or auto's pick): a flag
                            per step beside its round */
    int binomial;        /* 1: the binomial broadcast (forced, or a PLD_RULES rule's pick
                            for auto): a flag per child and one from the parent */
} bench_card;

#define BENCH_CARD_UNCOUNTED UINT64_MAX

/* Fills the card of `rank` with its waits and notifies for the
 * synchronisation form of its group (pld_world_sync for this rank): rounds
 * x the form's per-round counts, plus its epilogue; the one-round path's
 * P-1 flags; the binomial broadcast's flags to its children and from its
 * parent; the doubling allgather's flag per step, sent and waited for;
 * Bruck's all-to-all's ready and data flag per step, sent and waited for,
 * whatever the form (no round, no epilogue: bench_bruck_steps);
 * the Rabenseifner allreduce's flag per step, its fold's and its unfold's
 * (bench_rab_steps); rs_ag's owner rounds, whatever the form (an owner
 * 2(m-1) + 2(P-1) notifies and 2(P-1) + m-1 waits, a non-owner 3m and m);
 * the ring's own protocol is not counted
 * (BENCH_CARD_UNCOUNTED). */
void bench_card_sync(bench_coll c, bench_mode mode, int p, int rank, int root, int one_round,
                     const pld_sync_info *si, bench_card *k);
/* The binomial broadcast's tree (src/coll/broadcast_binomial.c): the
 * children of `rank` (v + 2^k for 2^k > v, v = rank - root mod p), its
 * parent (-1 for the root), and the tree's depth, ceil(log2 p). */
int bench_binomial_children(int p, int rank, int root);
int bench_binomial_parent(int p, int rank, int root);
int bench_binomial_depth(int p);

/* One step of the Rabenseifner allreduce on a rank
 * (src/coll/allreduce_rabenseifner.c): the rank it reads from, and how
 * many elements (0 where the range is empty: the flags still pass). */
typedef struct bench_rab_step {
    int peer;
    int64_t elems;
    int reduce; /* 1: reduced into mine (fold, halving), 0: copied */
} bench_rab_step;

/* The most steps of one rank: a fold, then 2 log2 Q with Q <= 65536. */
#define BENCH_RAB_MAX_STEPS 34

/* The steps of `rank` in a Rabenseifner allreduce of `count` elements over
 * p ranks, in order, into steps[] (BENCH_RAB_MAX_STEPS at most); returns
 * how many: with Q the largest power of two <= p and X = p - Q, an extra
 * rank (even, below 2X) reads the whole result from rank + 1 (1 step); a
 * folding rank (odd, below 2X) first reduces rank - 1's whole data into
 * its own (1 + 2 log2 Q steps); then log2 Q halving steps (the half of the
 * block that holds me, segment edges count*s/Q) and log2 Q doubling steps
 * (the partner's block). Each step is one flag sent and one waited for,
 * except that a folding rank sends the unfold's flag after its steps
 * instead of a fold flag, and waits for the fold's flag before them. */
int bench_rab_steps(int p, int rank, int64_t count, bench_rab_step *steps);
/* Halving and doubling steps of a stepping rank: 2 log2 Q. */
int bench_rab_depth(int p);
/* The steps of Bruck's all-to-all (src/coll/all_to_all_bruck.c),
 * ceil(log2 p), and the chunks step k sends from every rank to rank +
 * 2^k: the indices in [0, p) with bit k set. Their sum over the steps is
 * pld_tune_bruck_chunks(p). */
int bench_bruck_steps(int p);
int64_t bench_bruck_step_chunks(int p, int k);
/* The cards of auto calls follow the PLD_RULES rules of world w (NULL:
 * none), as the world's calls do (pld_world_rule); set by the commands
 * that make a world. Without one, the cost model's choice. */
void bench_card_rules(const pld_world *w);
/* The all-to-all algorithm PLD_A2A_AUTO takes above the one-round size
 * for chunks of chunk_bytes on p ranks (the rule of bench_card_rules'
 * world, else pld_tune_all_to_all_auto: the library's own choice):
 * BENCH_MODE_PUSH or BENCH_MODE_BRUCK. */
bench_mode bench_all_to_all_pick(const pld_tune *tune, int p, size_t chunk_bytes);
/* The allgather algorithm PLD_AG_AUTO takes above the one-round size for
 * rows of row_bytes on p ranks (a rule, else pld_tune_allgather_auto):
 * BENCH_MODE_PUSH or BENCH_MODE_DOUBLING. */
bench_mode bench_allgather_pick(const pld_tune *tune, int p, size_t row_bytes);
/* The allreduce algorithm PLD_AUTO takes above the one-round size for
 * `bytes` of elt-byte elements on p ranks (a rule, else
 * pld_tune_allreduce_auto): PLD_MESH, PLD_RS_AG or PLD_RABENSEIFNER. */
pld_allreduce_mode bench_allreduce_pick(const pld_tune *tune, int p, size_t bytes, size_t elt,
                                        size_t ub_bytes);
/* The chain of one-partner waits an algorithm adds to its rounds: the
 * binomial broadcast's levels (not on the one-round path) and the doubling
 * allgather's steps, ceil(log2 p); the Rabenseifner allreduce's 2 log2 Q
 * steps, and its fold and unfold where p is not a power of two; Bruck's
 * all-to-all's 2 ceil(log2 p) flags (a ready and a data flag per step,
 * each a link, as pld_tune_all_to_all_auto counts them); 0 for every
 * other algorithm. */
int bench_chain(bench_coll c, bench_mode mode, int p, int one_round);

/* 1 when the call has a one-round form: its payload per peer in
 * *per_peer. */
int bench_card_ll_need(bench_coll c, bench_mode mode, const bench_shape *sh, size_t elt,
                       uint64_t *per_peer);
/* 1 when the call runs in one round through pld's inboxes (the rule of
 * src/coll/ll.c): its payload per peer fits ll_bytes (pld_world_ll_bytes,
 * or pld_team_ll_bytes for a group; 0: never); for the reductions the
 * P-1 copies it reduces stay within 4 x ll_bytes; allgather and all_to_all
 * only when PLD_LL_BYTES is set in the environment (their push is one
 * round already). */
int bench_card_one_round(bench_coll c, bench_mode mode, int p, const bench_shape *sh, size_t elt,
                         size_t ll_bytes);
/* The card of one call on `rank` (mode already resolved; root for
 * broadcast; ub_bytes = the profile's UB per core, which sets the chunk
 * count of the mesh allreduce; ll_bytes as for bench_card_one_round; tune:
 * the world's cost model, whose choice allreduce and all_to_all auto
 * follow). */
void bench_card_make(bench_coll c, bench_mode mode, int p, int rank, int root,
                     const bench_shape *sh, size_t elt, size_t ub_bytes, size_t ll_bytes,
                     const pld_tune *tune, bench_card *out);
/* As bench_card_make, on the path one_round says (1: the one-round path,
 * which the caller knows the call has: bench_card_ll_need). */
void bench_card_make_path(bench_coll c, bench_mode mode, int p, int rank, int root,
                          const bench_shape *sh, size_t elt, size_t ub_bytes, int one_round,
                          const pld_tune *tune, bench_card *out);
/* The time the cost model predicts for a call with these cards (one per
 * rank) and this chain of steps (bench_chain): the rounds of the rank with
 * the most, the chain (pld_tune_chain_us), and the longer of the busiest
 * rank's bytes and all ranks' bytes shared by the CPUs; working set p x
 * the buffer's size. */
double bench_card_predict_us(const pld_tune *tune, int p, const bench_shape *sh,
                             const bench_card *cards, int chain);
/* 1 when PLD_LL_BYTES is set in the environment. */
int bench_ll_explicit(void);
/* The card as a formula: "(P-1)/P*N to peers, N/P self"; one_round: the
 * card of the one-round path. */
const char *bench_card_formula(bench_coll c, bench_mode mode, int one_round);

#endif
