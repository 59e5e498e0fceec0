/* SPDX-License-Identifier: Apache-2.0 */
/* `pld cost --predict --params FILE`: a machine described by a parameter
 * file, and the projection of a collective's cost cards onto it, for any
 * number of ranks and without a world (no rank threads, no measurement).
 *
 * The parameter file is line-based text:
 *
 *     pld_params 1                  the first line: format tag and version
 *     # a comment                   '#' starts a comment, anywhere on a line
 *     ranks_per_node 8              ranks that share a node's memory
 *     cpus_per_node 8               optional; default ranks_per_node
 *     intra_alpha_us 0.5            latency of one notify hop within a node
 *     inter_alpha_us 3              the same between nodes
 *     intra_beta_ns_per_byte 0.1    inverse bandwidth within a node
 *     inter_beta_ns_per_byte 0.08   the same between nodes
 *     message_overhead_us 0.2       what a rank spends issuing one notify
 *                                   or one transfer
 *
 * One `key value` per line. An unknown key, a key given twice, a missing
 * required key, a value that is not a number in range or a wrong first
 * line is an error naming the file and the line.
 *
 * The model (proj_predict), for one algorithm of the collective and one
 * synchronisation form of its credit rounds, on P ranks of
 * ceil(P / ranks_per_node) nodes (ranks numbered node by node):
 *
 *   predicted_us = rounds x hops x alpha(level)
 *                + f x ( messages x message_overhead_us
 *                      + (intra_bytes x intra_beta + inter_bytes x inter_beta) / 1000 )
 *
 *   rounds, hops   the card's rounds; hops of the form per round
 *                  (pld_sync_plan: 1 full, ceil(log2 P) dissemination,
 *                  2 x depth tree); 1 for the one-round path and for each
 *                  step of the ring, which keep their own flags; Bruck's
 *                  all-to-all has no round, only its chain of steps
 *   level          between nodes as soon as the group spans two nodes:
 *                  with ranks numbered node by node, every round of the
 *                  full and dissemination forms, of the ring and of the
 *                  one-round path has a pair of ranks on different nodes
 *                  (rank R-1 and rank R-1+d for a distance d below R), and
 *                  a round ends with its slowest pair; the tree's levels
 *                  near the root may stay within a node when
 *                  ranks_per_node exceeds the fanout, which this
 *                  overestimates (simple: one alpha per projection)
 *   messages       the rank's notifies (rounds x the form's notifies per
 *                  round + its epilogue, as the cost card counts them)
 *                  plus one per put or get to a peer (Bruck's all-to-all:
 *                  one packed put per step, 2 flags per step, against the
 *                  push's P-1 puts and its round's notifies)
 *   intra, inter   the card's bytes to and from peers, split by where the
 *                  peers are (the share of its peers on other nodes for
 *                  the all-to-all patterns; the root's node for the
 *                  broadcast's pull; the left neighbour's for the ring;
 *                  for Bruck's all-to-all the chunks of each step whose
 *                  partner rank + 2^k is on another node),
 *                  plus its self copies as within-node bytes
 *   f              max(1, ranks_per_node / cpus_per_node): ranks sharing
 *                  a CPU take turns (the f(P) of pld/tune.h)
 *
 * with messages and bytes those of the busiest rank: the one whose
 * bracket is largest (the latency term is the group's, the same on every
 * rank). Reductions are counted as the bytes they read; their arithmetic
 * is not modelled. */
#ifndef PLD_TOOLS_PARAMS_H
#define PLD_TOOLS_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "cost.h"
#include "pld/pld.h"
#include "sweep.h"

enum { PROJ_INTRA, PROJ_INTER, PROJ_NLEVELS };

typedef struct proj_params {
    int ranks_per_node;
    int cpus_per_node;
    double alpha_us[PROJ_NLEVELS]; /* latency of one notify hop */
    double beta_ns[PROJ_NLEVELS];  /* ns per byte */
    double overhead_us;            /* per message the rank issues */
} proj_params;

/* Reads a parameter file: 0 and *out, or -1 and a message naming the file,
 * the line and the value in msg. */
int proj_params_load(const char *path, proj_params *out, char *msg, size_t msgsz);

/* The number of ranks of a device list ("0-9999", "0,1,4-7"), as a world
 * would count them, up to 65536 (the most PLD_MAX_RANKS allows): 0 and *n,
 * or -1 and a message. */
int proj_devices_count(const char *list, int *n, char *msg, size_t msgsz);

/* The UB bytes per core of a platform profile without a world (the
 * profile's own size; PLD_UB_BYTES is not read); 0 for an unknown name. */
size_t proj_ub_bytes(const char *platform);

/* The payload per peer up to which a group of p ranks takes the one-round
 * path, as a world sizes it (PLD_LL_BYTES, else 4 KiB; 0 beyond 64 ranks):
 * 0 and *out, or -1 and a message for a bad PLD_LL_BYTES. */
int proj_ll_bytes(int p, size_t *out, char *msg, size_t msgsz);

/* Tree fanout as PLD_TREE_FANOUT=auto takes it: 16 while every rank has a
 * CPU of its own, else one level (P-1 children of rank 0). */
int proj_fanout(const proj_params *pp, int p);

/* One algorithm of a collective: its mode (resolved) and path. */
typedef struct proj_alg {
    const char *name; /* "push", "mesh", "one_round", ... */
    bench_mode mode;
    int one_round; /* 1: the one-round path (own flags, no form) */
} proj_alg;

/* 1 when the algorithm keeps its own synchronisation (the one-round
 * path's flags, the ring's neighbour credits): the
 * form does not change it, and it is projected once. */
int proj_alg_own_sync(bench_coll c, const proj_alg *a);

typedef struct proj_result {
    int rounds, hops;
    int chain;         /* hops beyond the rounds': the binomial tree's depth, the doubling
                          allgather's steps, the Rabenseifner allreduce's steps (and its fold
                          and unfold when P is not a power of two), Bruck's all-to-all's two
                          flags per step */
    uint64_t messages; /* busiest rank */
    uint64_t bytes[PROJ_NLEVELS]; /* busiest rank, within node and between nodes: what it
                                   * receives, or what peers read from it where more */
    double us;                    /* predicted time of the call */
} proj_result;

/* The projection of algorithm a of collective c on p ranks with the credit
 * rounds in `form` (ignored where proj_alg_own_sync). */
void proj_predict(const proj_params *pp, bench_coll c, const proj_alg *a, pld_sync_form form, int p,
                  int root, const bench_shape *sh, size_t elt, size_t ub_bytes, proj_result *out);

#endif
