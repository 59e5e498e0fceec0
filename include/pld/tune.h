/* SPDX-License-Identifier: Apache-2.0 */
/** @file
 * The cost model PLD_AUTO chooses with, and its parameters as measured on
 * this machine.
 *
 * A call's predicted time is
 *
 *     rounds x round(P)  +  f(P) x (copied x copy(ws) + pulled x pull(ws) + reduced x reduce(ws))
 *
 * plus, where a caller knows them (pld_tune_transfers_us), f(P) x
 * transfers x transfer_us: what each transfer costs whatever its size, which
 * counts where a call moves many small runs (the indexed dispatch's runs of
 * token rows: one put each); plus, for an algorithm that waits in a chain
 * of one-partner steps, each step's wait (pld_tune_chain_us).
 *
 * where round(P) is one full credit round of P ranks (round_us while every
 * rank has a CPU, plus peer_us per rank beyond two; plus handover_us per
 * rank beyond the CPUs, because then a round passes the CPUs from rank to
 * rank), f(P) = max(1, P / cpus) (ranks that share a CPU take turns), the
 * bytes are those of the busiest rank (its cost card: copied = pushed into
 * peers' windows or copied to itself, pulled = read whole from a peer,
 * reduced = read from a peer and combined), and copy/pull/reduce are
 * nanoseconds per byte at the call's working set ws (bytes touched over all
 * ranks), interpolated between the three measured points (log scale: in the
 * caches, in the last-level cache, in memory).
 *
 * The parameters are measured with pld's own builtins the first time a world
 * is created without a parameter file (about half a second, once per
 * machine), and cached in a text file: PLD_TUNE_FILE, else
 * $XDG_CACHE_HOME/pld/tune.txt, else $HOME/.cache/pld/tune.txt. `pld tune`
 * measures again, more thoroughly, and rewrites it. Every process of an mpi
 * job decides with rank 0's parameters. */
#ifndef PLD_TUNE_H
#define PLD_TUNE_H

#include <stddef.h>
#include <stdint.h>

#include "pld/coll.h"
#include "pld/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PLD_TUNE_POINTS 3 /**< working-set points of the byte rates */

/** The machine's cost-model parameters. */
typedef struct pld_tune {
    int cpus;           /**< CPUs the ranks ran on when measured */
    double round_us;    /**< one full credit round of 2 ranks, each on its own CPU */
    double peer_us;     /**< per rank beyond 2 in a round, while every rank has a CPU */
    double handover_us; /**< per rank beyond the CPUs, per round */
    double transfer_us; /**< one small transfer of one rank (a 64 B put: checks, hooks, copy) */
    double ws_bytes[PLD_TUNE_POINTS];  /**< working sets of the rate points, ascending */
    double copy_ns[PLD_TUNE_POINTS];   /**< ns per byte a rank pushes or copies, at each point */
    double pull_ns[PLD_TUNE_POINTS];   /**< ns per byte a rank pulls from a peer */
    double reduce_ns[PLD_TUNE_POINTS]; /**< ns per byte a rank reduces (read, combine, write) */
    int measured;                      /**< 1: measured on a machine; 0: pld's built-in defaults */
} pld_tune;

/** The parameter file in use: PLD_TUNE_FILE, else the cache path above
 * (never NULL; "" when no path can be formed: no HOME). */
PLD_API const char *pld_tune_path(void);
/** Reads a parameter file (path NULL: pld_tune_path()). PLD_ERR_ARG names
 * the line and the value when the file is not one pld wrote;
 * PLD_ERR_UNSUPPORTED when another version of pld wrote it in another
 * format (a world then measures again and rewrites it); PLD_ERR_SYSTEM
 * when it cannot be read. */
PLD_API pld_status pld_tune_load(const char *path, pld_tune *out);
/** Writes t to path (NULL: pld_tune_path()), creating its directory;
 * atomically (a reader sees the old or the new file, never half). */
PLD_API pld_status pld_tune_save(const char *path, const pld_tune *t);
/** Measures the parameters now with the thread transport (thorough = 0:
 * about half a second, as at first use; 1: repeats each point more, as
 * `pld tune`). Ignores the PLD_* environment while it measures. */
PLD_API pld_status pld_tune_measure(pld_tune *out, int thorough);
/** The parameters a world decides with (loaded or measured at its init). */
PLD_API pld_status pld_world_tune(const pld_world *w, pld_tune *out);

/** The predicted time in microseconds of a call on nranks ranks with this
 * many full rounds, bytes copied (pushed or self), pulled and reduced by
 * its busiest rank, and working set (bytes over all ranks). */
PLD_API double pld_tune_predict_us(const pld_tune *t, int nranks, int rounds, double copied,
                                   double pulled, double reduced, double working_set);
/** The time in microseconds the busiest rank of nranks spends on this many
 * transfers beyond their bytes (transfers as pld_counters counts them): the
 * term to add to pld_tune_predict_us for a call of many small transfers. */
PLD_API double pld_tune_transfers_us(const pld_tune *t, int nranks, double transfers);
/** The time in microseconds of a chain of `steps` waits on nranks ranks,
 * each for one partner that itself waited for the step before (a tree's
 * levels, recursive doubling's or halving's steps): a round of two ranks
 * per step, and, with ranks sharing CPUs, a turn of every rank beyond the
 * CPUs, since the partner runs only after the ranks queued before it. The
 * term to add to pld_tune_predict_us for a log-depth algorithm. */
PLD_API double pld_tune_chain_us(const pld_tune *t, int nranks, int steps);
/** The smallest segment, in bytes, of the two-phase allreduce (PLD_RS_AG)
 * when the data is at least this large. Each owner of a segment costs
 * every rank a transfer and a wait per call (with ranks sharing a CPU, a
 * wake-up of a few microseconds), while reducing 4 KiB from a peer takes
 * about a quarter of a microsecond: measured on a 2-core machine, 4 KiB
 * segments made the two-phase allreduce faster than 256-byte ones at
 * every P from 8 to 1024 (docs/performance.md). A constant, not a
 * measured figure, so that every rank of every machine splits the same
 * data alike (results, listings, cost cards). */
#define PLD_RS_AG_MIN_SEGMENT 4096
/** How many ranks own a segment in the two-phase allreduce (PLD_RS_AG) of
 * `bytes` of data on nranks ranks: min(nranks, bytes /
 * PLD_RS_AG_MIN_SEGMENT), at least 1. The first this-many ranks reduce one
 * segment each; every rank then copies the segments it does not own. So a
 * small allreduce in a large group costs O(P) transfers, not P(P-1)
 * transfers of a few bytes. 0 when nranks < 1. */
PLD_API int pld_tune_rs_ag_owners(int nranks, size_t bytes);
/** The most owners for which the two-phase allreduce (PLD_RS_AG)
 * synchronises through its owners alone when some ranks own no segment:
 * every rank tells each owner it is ready, each owner tells every rank its
 * segment is final, every rank tells each owner it has read. A rank that
 * owns nothing then waits only for the owners, once per call, instead of
 * taking part in three rounds of the whole group. With more owners the
 * owners' notifies to every rank, and a non-owner's wake-ups (one per
 * owner, at worst), cost more than the rounds they replace. */
#define PLD_RS_AG_OWNER_ROUNDS_MAX 16
/** The owners through which the two-phase allreduce (PLD_RS_AG) of
 * `bytes` of data on nranks ranks synchronises: its
 * pld_tune_rs_ag_owners(nranks, bytes) when some rank owns no segment and
 * they are at most PLD_RS_AG_OWNER_ROUNDS_MAX, else 0 (three rounds of the
 * whole group). */
PLD_API int pld_tune_rs_ag_owner_rounds(int nranks, size_t bytes);
/** How many predictions pld_tune_allreduce_auto writes: mesh, ring, rs_ag
 * and Rabenseifner's, in that order. */
#define PLD_TUNE_ALLREDUCE_PREDICTIONS 4
/** The allreduce algorithm PLD_AUTO takes above the one-round size for
 * `bytes` of data with `elt_size`-byte elements on nranks ranks (ub_bytes:
 * the profile's UB per core, which sets the mesh's chunks): PLD_MESH,
 * PLD_RS_AG or PLD_RABENSEIFNER, whichever is predicted fastest; a tie
 * keeps the mesh, then rs_ag. Rabenseifner's 2 log2 Q steps are a chain
 * (pld_tune_chain_us): it wins where a step with one partner costs much
 * less than a round of the whole group, not where ranks share CPUs. The
 * ring is no candidate (it needs a signal of its own shape).
 * predicted_us[0..PLD_TUNE_ALLREDUCE_PREDICTIONS-1], when not NULL,
 * receives the predictions of mesh, ring, rs_ag and Rabenseifner. */
PLD_API pld_allreduce_mode
pld_tune_allreduce_auto(const pld_tune *t, int nranks, size_t bytes, size_t elt_size,
                        size_t ub_bytes, double predicted_us[PLD_TUNE_ALLREDUCE_PREDICTIONS]);
/** How many predictions pld_tune_allgather_auto writes: the push's and
 * recursive doubling's, in that order. */
#define PLD_TUNE_ALLGATHER_PREDICTIONS 2
/** The links of the chain pld_tune_allgather_auto counts for each step of
 * recursive doubling: a step waits for one flag, but its partner sends it
 * only once woken for its own previous step (2.6-2.9 links a step measured
 * on two CPUs at P = 1024-4096). */
#define PLD_TUNE_DOUBLING_LINKS_PER_STEP 3
/** The allgather algorithm PLD_AG_AUTO takes above the one-round size for
 * rows of row_bytes on nranks ranks: PLD_AG_PUSH or PLD_AG_DOUBLING,
 * whichever is predicted faster; a tie keeps the push. Both move the same
 * bytes and end in one round. The push makes P transfers per rank;
 * recursive doubling about 2 ceil(log2 P) (a put per step, two where its
 * rows wrap past the last rank) and waits in a chain of ceil(log2 P) steps
 * with one partner each (pld_tune_chain_us, PLD_TUNE_DOUBLING_LINKS_PER_STEP
 * links a step). It wins where a transfer costs
 * more than a step of the chain: between machines, not where ranks share
 * CPUs. predicted_us[0..PLD_TUNE_ALLGATHER_PREDICTIONS-1], when not NULL,
 * receives the predictions of the push and of recursive doubling. */
PLD_API pld_allgather_mode
pld_tune_allgather_auto(const pld_tune *t, int nranks, size_t row_bytes,
                        double predicted_us[PLD_TUNE_ALLGATHER_PREDICTIONS]);
/** How many chunks each rank sends in Bruck's all-to-all (PLD_A2A_BRUCK)
 * on nranks ranks: in step k (k = 0 .. ceil(log2 P) - 1) the chunks whose
 * index in [0, P) has bit k set; (P/2) log2 P for a power of two. It
 * unpacks as many. 0 when nranks < 2. */
PLD_API int64_t pld_tune_bruck_chunks(int nranks);
/** How many predictions pld_tune_all_to_all_auto writes: the push's and
 * Bruck's, in that order. */
#define PLD_TUNE_ALL_TO_ALL_PREDICTIONS 2
/** The all-to-all algorithm PLD_A2A_AUTO takes above the one-round size
 * for chunks of chunk_bytes on nranks ranks: PLD_A2A_PUSH or
 * PLD_A2A_BRUCK, whichever is predicted faster; a tie keeps the push.
 * The push costs P transfers per rank and one round; Bruck's algorithm
 * ceil(log2 P) puts and as many gets, a chain of steps with one partner
 * each (pld_tune_chain_us), one round, and about (log2 P)/2 times the bytes, copied
 * four times (pack, put, get, unpack). It wins for small chunks in large
 * groups, where the push's P transfers cost more than the chain.
 * predicted_us[0..PLD_TUNE_ALL_TO_ALL_PREDICTIONS-1], when not NULL,
 * receives the predictions of the push and of Bruck's algorithm. */
PLD_API pld_all_to_all_mode
pld_tune_all_to_all_auto(const pld_tune *t, int nranks, size_t chunk_bytes,
                         double predicted_us[PLD_TUNE_ALL_TO_ALL_PREDICTIONS]);

/** What a rule of a PLD_RULES file decides, and what its bytes measure. */
typedef enum pld_rule_coll {
    PLD_RULE_BROADCAST,  /**< pld_broadcast_mode: pull, binomial; bytes: the data */
    PLD_RULE_ALLGATHER,  /**< pld_allgather_mode: push, doubling; bytes: one rank's row */
    PLD_RULE_ALLREDUCE,  /**< pld_allreduce_mode: mesh, rs_ag, rabenseifner; bytes: the data */
    PLD_RULE_ALL_TO_ALL, /**< pld_all_to_all_mode: push, bruck; bytes: one chunk */
    PLD_RULE_SYNC,       /**< pld_sync_form of the credit rounds: full, dissemination, tree */
    PLD_RULE_NCOLL
} pld_rule_coll;

/** The rule of the world's PLD_RULES file that decides a call of `coll` on
 * a group of nranks ranks with `bytes` (as pld_rule_coll says; 0 for
 * PLD_RULE_SYNC): its line number in the file (>= 1), the mode or form it
 * picks in *choice_out; 0 when no rule matches (PLD_AUTO then asks the
 * cost model).
 *
 * The file is text: a first line `pld_rules 1`, then one rule per line,
 *
 *     collective  ranks  bytes  choice     # a comment
 *     broadcast   33-*   *      binomial
 *     allreduce   13-*   0-8K   rabenseifner
 *     sync        9-*    *      dissemination
 *
 * with ranks and bytes each `*`, `N`, `N-M` or `N-*` (bytes may end in K,
 * M or G: KiB, MiB, GiB), and the first matching rule deciding. Rules
 * decide only what PLD_AUTO would: the one-round path for small calls
 * comes first, and a mode a call names (pld_broadcast_with, ...) or
 * PLD_SYNC other than auto is never overridden. Every process of an mpi
 * job decides with rank 0's file. */
PLD_API int pld_world_rule(const pld_world *w, pld_rule_coll coll, int nranks, uint64_t bytes,
                           int *choice_out);
/** How many rules the world's PLD_RULES file holds (0: none, or no file),
 * and, when path_out is not NULL and there are rules, the file's path as
 * rank 0's process named it. */
PLD_API int pld_world_rules(const pld_world *w, const char **path_out);

#ifdef __cplusplus
}
#endif

#endif /* PLD_TUNE_H */
