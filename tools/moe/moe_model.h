/* SPDX-License-Identifier: Apache-2.0 */
/* `pld moe`'s model: a routed MoE layer (P ranks, E experts per rank, T
 * tokens per rank, top-k, hidden size H) and what each of three ways to
 * dispatch it costs per rank: bytes, padding, rounds, the a5sim URMA queue
 * use and the cost model's predicted time.
 *
 *   blocks   pld_all_to_all of the [P,E] counts, then pld_all_to_all_v with
 *            whole blocks of B = min(k,E)*T rows per destination (the most
 *            rows one source can send one rank), each block's rows sorted
 *            by expert;
 *   indexed  pld_indexed_all_to_all_v: C = B slots per source, the counted
 *            rows gathered by index from the [T,H] tokens (a5sim only);
 *   packed   pld_moe_dispatch: M = T rows per (destination, expert) block,
 *            only the counted rows moved, packed per expert.
 * The capacities are the smallest that hold any routing (a layer sizes its
 * buffers before it knows the router's choice). */
#ifndef PLD_TOOLS_MOE_MODEL_H
#define PLD_TOOLS_MOE_MODEL_H

#include <stdint.h>

#include "pld/pld.h"

typedef struct moe_shape {
    int p, e, k;
    int64_t t, h; /* tokens per rank, hidden size */
    pld_dtype dtype;
    double zipf; /* 0: uniform routing; > 0: expert popularity ~ 1/rank^zipf */
    uint64_t seed;
} moe_shape;

/* The routing: for every rank s and token t its k distinct global experts
 * g = d*E + e, in choice order. */
typedef struct moe_routing {
    moe_shape sh;
    int32_t *choice; /* [P, T, k] */
    int32_t *cnt;    /* [P, P, E]: cnt[(s*P + d)*E + e] = tokens of s routed to (d, e) */
} moe_routing;

/* 0, or -1 when out of memory. Deterministic in the seed. */
int moe_route(const moe_shape *sh, moe_routing *out);
void moe_routing_free(moe_routing *r);

enum { MOE_BLOCKS, MOE_INDEXED, MOE_PACKED, MOE_NFORMS };
const char *moe_form_name(int form);

/* The a5sim URMA queue use of one rank's remote sends. */
typedef struct moe_urma {
    uint64_t sqes, wqebbs, nops, doorbells, cqes;
} moe_urma;

/* One rank's card for a form. */
typedef struct moe_card {
    uint64_t to_peers, from_peers, self; /* bytes, as the counters count them */
    uint64_t padding;                    /* bytes moved to peers beyond the counted rows */
    uint64_t notifies;                   /* count-carrying notifies (blocks: Set counts) */
    uint64_t transfers;                  /* puts and gets, as the counters count them */
    int rounds;                          /* full rounds */
    moe_urma urma;                       /* remote sends on a5sim (indexed and packed) */
    uint64_t target_bytes;               /* the target window of one rank */
} moe_card;

/* Rows per destination block of the blocks form, and slots per source of
 * the indexed form: min(k, E) * T. */
int64_t moe_block_rows(const moe_shape *sh);
void moe_card_make(const moe_routing *r, int form, int rank, moe_card *out);
/* The cost model's time for the form: its slowest rank. */
double moe_predict_us(const moe_routing *r, int form, const pld_tune *tune);

#endif
