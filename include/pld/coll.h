/* SPDX-License-Identifier: Apache-2.0 */
/** @file
 * pld — builtin collectives.
 *
 * Kernel-side builtins: every rank calls the same collective in the same
 * order with identically shaped arguments. They synchronise through one
 * self-clearing credit barrier on their INT32 signal (one cell per rank), so
 * the signal is all-zero again after every call and one signal serves any
 * number of back-to-back builtin calls.
 *
 * What a program may rely on:
 *
 * Ordering. Every builtin call contains at least one round in which every
 *   rank hears from every other rank, directly or through a chain of
 *   notifies (the log-depth forms of large groups: pld_sync_form). So when
 *   any rank starts builtin k+1 on a signal, every rank has entered builtin
 *   k on it (on one signal no rank is more than one builtin ahead). Calls on
 *   different signals are not ordered against each other.
 *
 * Results. The outputs builtin k leaves in a rank's windows stay intact until
 *   that rank enters builtin k+1 on the same signal -- unless builtin k+1
 *   writes the same window: then a peer may already be writing it. Pull
 *   builtins (broadcast, reduce_scatter, allreduce, indexed_combine) write
 *   only the caller's windows: read the result before the next call. Push
 *   builtins (allgather, all_to_all, all_to_all_v, indexed_all_to_all_v)
 *   write into peers' target windows before their own barrier, possibly
 *   before this rank returned from the previous call: read, then
 *   pld_barrier, then push into that window again -- or use another window.
 *
 * Inputs. A plain-tensor input may be reused as soon as the call returns, and
 *   so may a window that peers read during the call: a builtin never returns
 *   on a rank while a peer may still read that rank's windows for it.
 *
 * Agreement. Every rank calls the same builtin with agreeing arguments: the
 *   same builtin, signal and data windows, dtype, shapes, op, mode, root, M
 *   and core_num (the row count of the MoE dispatch's input and the combine's
 *   output may differ per rank). pld checks every call: each rank publishes
 *   a fingerprint of its call and compares it with its neighbour's after the
 *   first round. A mismatch is PLD_ERR_ARG naming both ranks, the call, the
 *   field and both values ("rank 1 (device 1): pld_allreduce: data shape
 *   [4,9] differs from rank 0's [4,8]"); ranks stuck in disagreeing calls
 *   (e.g. on different signals) are reported as that disagreement, not as a
 *   deadlock. PLD_CHECK=noargs (PLD_CHECK_NOARGS) turns the check off.
 *
 * Host-side twins (pld_host_*) launch the builtin on every rank and return a
 * status. Included by <pld/pld.h>. */
#ifndef PLD_COLL_H
#define PLD_COLL_H

#include "pld/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Barrier on signal [P,1] (or [P]).
 *   for peer != me: notify(signal, peer, [me], +1, AtomicAdd)
 *   for src  != me: wait(signal, [src], 1, Ge)
 *   for src  != me: notify(signal, me, [src], -1, AtomicAdd)   (self-clearing epilogue) */
PLD_API void pld_barrier(pld_ctx *c, pld_dtensor signal);

/** Broadcast: the root has staged `data`; every rank's data becomes the
 * root's. Pull form between two full credit
 * rounds (ready, read done): every rank hears from every other rank, so the
 * signal and the other builtins' windows stay safe to reuse. Signal [P,1]. */
PLD_API void pld_broadcast(pld_ctx *c, pld_dtensor data, pld_dtensor signal, int root);

/** The algorithm of pld_broadcast_with. */
typedef enum pld_broadcast_mode {
    PLD_BCAST_AUTO = 0,    /**< what pld_broadcast does: one round through pld's own
                               inboxes when the data fits pld_world_ll_bytes, else
                               PLD_BCAST_PULL, or the binomial tree where a
                               PLD_RULES rule (pld_world_rule) names it */
    PLD_BCAST_PULL = 1,    /**< every non-root pulls the whole data from the root,
                               between two credit rounds (ready, read done) */
    PLD_BCAST_BINOMIAL = 2 /**< down a binomial tree between the same two rounds: a
                               rank pulls from its parent once the parent has the
                               data, then tells its children; the root serves
                               ceil(log2 P) ranks instead of P-1, in as many
                               steps */
} pld_broadcast_mode;
/** pld_broadcast with a chosen algorithm (signal [P,1]). Every rank must
 * pass the same mode (checked, as the other arguments). The byte counters
 * are the same for both: N bytes read by every non-root (from the root, or
 * from its parent in the tree). */
PLD_API void pld_broadcast_with(pld_ctx *c, pld_dtensor data, pld_dtensor signal, int root,
                                pld_broadcast_mode mode);

/** Allgather: local [1,S] (plain tensor, not inside target), target
 * [P,S]: row s of target = rank s's local, on every rank (PLD_AG_AUTO). */
PLD_API void pld_allgather(pld_ctx *c, pld_tensor local, pld_dtensor target, pld_dtensor signal);
/** The algorithm of pld_allgather_with. */
typedef enum pld_allgather_mode {
    PLD_AG_AUTO = 0,    /**< what pld_allgather does: one round through pld's own
                            inboxes when a row fits pld_world_ll_bytes, else
                            PLD_AG_PUSH or PLD_AG_DOUBLING, whichever a PLD_RULES
                            rule names (pld_world_rule), else the one the cost
                            model (pld/tune.h) predicts faster */
    PLD_AG_PUSH = 1,    /**< every rank puts its row into every rank's target, then
                            one credit round: P-1 puts per rank */
    PLD_AG_DOUBLING = 2 /**< recursive doubling: in step k a rank forwards the 2^k
                            rows it holds to rank - 2^k and receives as many from
                            rank + 2^k (any P: ceil(log2 P) steps, the last one
                            partial), then one credit round; the same bytes as the
                            push in ceil(log2 P) puts per rank instead of P-1 */
} pld_allgather_mode;
/** pld_allgather with a chosen algorithm (signal [P,1]). Every rank must
 * pass the same mode (checked, as the other arguments). The byte counters
 * of PLD_AG_PUSH and PLD_AG_DOUBLING are the same: P-1 rows to peers and
 * 1 row to itself. */
PLD_API void pld_allgather_with(pld_ctx *c, pld_tensor local, pld_dtensor target,
                                pld_dtensor signal, pld_allgather_mode mode);
/** In-place allgather (MPI_IN_PLACE): this rank's row is already staged in
 * row `me` of target; the self copy is skipped. The algorithm is chosen as
 * PLD_AG_AUTO's: one round when small, else the push or recursive
 * doubling. */
PLD_API void pld_allgather_inplace(pld_ctx *c, pld_dtensor target, pld_dtensor signal);

/** Reduce-scatter: data [P,S], every rank staged all rows; afterwards row
 * `me` = Sum over ranks of their row `me`. Other ops: PLD_ERR_UNSUPPORTED. */
PLD_API void pld_reduce_scatter(pld_ctx *c, pld_dtensor data, pld_dtensor signal, pld_reduce_op op);

/** The algorithm of pld_allreduce. */
typedef enum pld_allreduce_mode {
    PLD_MESH = 0, /**< every rank reduces from every peer; signal [P,1] */
    PLD_RING = 1, /**< reduce-scatter then allgather around the ring; signal [2(P-1), P] */
    /* 2..15 stay unused: a wrong integer cast into the mode keeps failing
       with PLD_ERR_ARG as it always did */
    PLD_AUTO = 16,        /**< pld chooses: one round through its own inboxes when the data fits
                              pld_world_ll_bytes (PLD_LL_BYTES), else the mesh, PLD_RS_AG or
                              PLD_RABENSEIFNER, whichever a PLD_RULES rule names
                              (pld_world_rule), else the one the cost model (pld/tune.h)
                              predicts fastest with the parameters measured on this machine;
                              signal [P,1] */
    PLD_RS_AG = 17,       /**< reduce-scatter then allgather, both as a mesh: each rank reduces
                             its 1/P segment from every peer, then pulls the other segments
                             from their owners (about 2(P-1)/P of the data read, 3 rounds);
                             segments are at least PLD_RS_AG_MIN_SEGMENT bytes, so small
                             data has fewer owners (pld_tune_rs_ag_owners); with at most
                             PLD_RS_AG_OWNER_ROUNDS_MAX of them the rounds go through the
                             owners alone; signal [P,1] */
    PLD_RABENSEIFNER = 18 /**< reduce-scatter by recursive halving, then allgather by
                              recursive doubling (Rabenseifner): 2 log2 Q steps with one
                              partner each (Q the largest power of two <= P; the other
                              P - Q ranks first fold into a neighbour), about 2(Q-1)/Q of
                              the data read, then one round; for groups that span
                              machines, where each message costs; signal [P,1] */
} pld_allreduce_mode;
/** Allreduce: data of any shape; afterwards every rank's data = op over
 * ranks (Sum, Max, Min, Prod on fp32, fp16, bf16, int32).
 * PLD_MESH, PLD_RS_AG, PLD_RABENSEIFNER and PLD_AUTO: signal [P,1]; PLD_RING: signal
 * [2(P-1), P]. The
 * listing (--ir) says which algorithm PLD_AUTO chose and why. */
PLD_API void pld_allreduce(pld_ctx *c, pld_dtensor data, pld_dtensor signal, pld_reduce_op op,
                           pld_allreduce_mode mode);

/** Allreduce on core_num cores per rank (1 <= core_num <= the profile's AIV
 * cores): 256-element tiles dealt block-cyclically to the cores, core b
 * synchronising on lane b of a signal [P, S >= core_num]. PLD_MESH (or
 * PLD_AUTO, which is the mesh there) only for core_num > 1. core_num = 1 is pld_allreduce. */
PLD_API void pld_allreduce_cores(pld_ctx *c, pld_dtensor data, pld_dtensor signal, pld_reduce_op op,
                                 pld_allreduce_mode mode, int core_num);

/** All-to-all (push): input [P,S] (row d = chunk for rank d, a plain tensor
 * separate from target), target [P,S]: row s of target = the chunk rank s
 * made for this rank. The caller reads the rows. */
PLD_API void pld_all_to_all(pld_ctx *c, pld_tensor input, pld_dtensor target, pld_dtensor signal);
/** The algorithm of pld_all_to_all_with. */
typedef enum pld_all_to_all_mode {
    PLD_A2A_AUTO = 0, /**< what pld_all_to_all does: one round through pld's own
                          inboxes when a chunk fits pld_world_ll_bytes, else
                          PLD_A2A_BRUCK or PLD_A2A_PUSH, whichever a PLD_RULES
                          rule names (pld_world_rule), else the one the cost
                          model (pld/tune.h) predicts faster */
    PLD_A2A_PUSH = 1, /**< every rank puts each chunk straight into its
                          destination's target, then one credit round: P-1 puts
                          per rank */
    PLD_A2A_BRUCK = 2 /**< Bruck's algorithm: in step k a rank sends, packed in one
                          put, every chunk whose index (counted from itself) has
                          bit k set to rank + 2^k, which lands it in its target
                          and unpacks it (any P: ceil(log2 P) steps), then one
                          credit round. About (P/2) log2 P chunks per rank travel
                          instead of P-1, in ceil(log2 P) puts; for small chunks
                          and many ranks. Needs 2 x P x S elements of host memory
                          per rank during the call */
} pld_all_to_all_mode;
/** pld_all_to_all with a chosen algorithm (signal [P,1]). Every rank must
 * pass the same mode (checked, as the other arguments). */
PLD_API void pld_all_to_all_with(pld_ctx *c, pld_tensor input, pld_dtensor target,
                                 pld_dtensor signal, pld_all_to_all_mode mode);

/** All-to-all-v: input/target [P*M,S], send_counts INT32 [P] or [P,1],
 * recv_counts window INT32 [P,1]. Rows s*M .. s*M+recv_counts[s]-1 of target
 * hold what rank s sent; counts are clamped to M. */
PLD_API void pld_all_to_all_v(pld_ctx *c, pld_tensor input, pld_dtensor target, pld_dtensor signal,
                              pld_tensor send_counts, pld_dtensor recv_counts);

/** Indexed all-to-all-v (MoE token dispatch; a5sim URMA model only, else
 * PLD_ERR_UNSUPPORTED). input [Nmax,H] fp32 or int8 (plain tensor); index
 * INT32 [P,C]; target window [P*C,H]. Source s writes input_s[index_s[d][j]]
 * into target_d[s*C + j] for j < send_counts_s[d]; rows at and beyond the
 * count keep their contents; index entries past the count are never read.
 * send_counts: window INT32 [P,1] (peers read it); recv_counts: INT32 [P,1],
 * written by this rank only: recv_counts[s] = send_counts_s[me].
 * signal INT32 [P, S >= core_num]; signal, send_counts and recv_counts are
 * distinct. Counts outside [0,C], read indices outside [0,Nmax) and a send
 * that overflows the peer's SQ (ceil(count/12)*4 > depth) are PLD_ERR_DATA.
 * core_num: 1 .. the profile's AIV cores; core b sends to peers b, b+B, ... */
PLD_API void pld_indexed_all_to_all_v(pld_ctx *c, pld_tensor input, pld_dtensor target,
                                      pld_dtensor signal, pld_dtensor send_counts,
                                      pld_tensor recv_counts, pld_tensor index, int core_num);

/** Indexed combine: the reverse of pld_indexed_all_to_all_v, run after the
 * experts processed the dispatched rows in place. With the same
 * send_counts window and index as the dispatch, on rank s:
 *   output[t] = sum over (d, j < send_counts_s[d]) with index_s[d][j] == t
 *               of weights[d][j] * expert_out_d[s*C + j]      (fp32)
 * and 0 for rows nothing was dispatched from. expert_out: window fp32
 * [P*C,H] (the dispatch target, or a window of the same shape); output:
 * fp32 [Nmax,H]; weights: fp32 [P,C] like index (e.g. the router's gate
 * values). signal INT32 [P, S >= core_num]. Results do not depend on
 * core_num. Any profile. */
PLD_API void pld_indexed_combine(pld_ctx *c, pld_dtensor expert_out, pld_tensor output,
                                 pld_dtensor signal, pld_dtensor send_counts, pld_tensor index,
                                 pld_tensor weights, int core_num);

/** The layout of an MoE exchange (zero-initialise, then set both fields). */
typedef struct pld_moe_layout {
    int experts_per_rank; /**< E >= 1 local experts per rank */
    int64_t max_rows;     /**< M >= 1: capacity of one (destination, expert) block */
} pld_moe_layout;

/** MoE dispatch with per-expert counts, moving only the counted rows and
 * packing them per local expert (P ranks, E = experts_per_rank, M =
 * max_rows, any dtype).
 *
 * input [P*E*M, H] (plain tensor): block (d, e) is rows (d*E+e)*M ..
 *   (d*E+e)*M + send_counts[d][e] - 1, the rows for local expert e of rank d.
 * send_counts INT32 [P,E] (plain tensor): 0 <= count <= M, else PLD_ERR_DATA
 *   naming the rank, destination, expert and value (never clamped).
 * recv_counts window INT32 [P,E]: afterwards recv_counts[s][e] = the rows
 *   rank s sent to this rank's expert e.
 * target window [P*E*M, H], same dtype: expert e's rows start at row
 *   expert_offsets[e], ordered by source rank, then by row; rows past
 *   expert_offsets[E] are not written.
 * expert_offsets INT32 [E+1] (plain tensor, written): last entry = total.
 * signal INT32 [P,1]; signal, recv_counts and target are distinct windows.
 *
 * Two full credit rounds: the counts round (each rank copies send_counts
 * into its own recv_counts window, then every rank pulls every peer's
 * counts -- no rank writes another rank's count cells) and the data round
 * (each rank puts its counted rows straight to their packed place, then
 * the completion barrier). A rank's target is written only after that rank
 * entered the call, so dispatches may follow each other on one signal with
 * no barrier between. Bytes to peers = the counted rows x H x elt. */
PLD_API void pld_moe_dispatch(pld_ctx *c, const pld_moe_layout *l, pld_tensor input,
                              pld_dtensor target, pld_dtensor signal, pld_tensor send_counts,
                              pld_dtensor recv_counts, pld_tensor expert_offsets);

/** The reverse of pld_moe_dispatch: every packed row of expert_out (a
 * window laid out like the dispatch's target) returns to the rank and the
 * row of input it came from: out_s[(d*E+e)*M + j] = the row j that rank s
 * sent rank d's expert e, for j < send_counts_s[d][e]; other rows of out
 * are not written. send_counts and recv_counts are the dispatch's (rank d
 * keeps its recv_counts window intact until the combine): a send_counts
 * entry that does not match the receiver's recv_counts is PLD_ERR_DATA.
 * out: window [P*E*M, H], same dtype, distinct from expert_out.
 * Pull form between two full rounds: each rank reads its rows from the
 * experts' windows and writes only its own out; after the call every peer
 * is done reading this rank's expert_out and recv_counts. */
PLD_API void pld_moe_combine(pld_ctx *c, const pld_moe_layout *l, pld_dtensor expert_out,
                             pld_dtensor out, pld_dtensor signal, pld_tensor send_counts,
                             pld_dtensor recv_counts);

/* ---- host twins: launch the builtin on every rank ----------------------- */
/** Launches pld_barrier on every rank. */
PLD_API pld_status pld_host_barrier(pld_world *w, const pld_dtensor *signal);
/** Launches pld_broadcast on every rank. */
PLD_API pld_status pld_host_broadcast(pld_world *w, pld_dtensor data, const pld_dtensor *signal,
                                      int root);
/** Launches pld_allgather on every rank.
 * stage: window [1,S] whose slice on each rank is that rank's input. */
PLD_API pld_status pld_host_allgather(pld_world *w, pld_dtensor stage, pld_dtensor target,
                                      const pld_dtensor *signal);
/** Launches pld_reduce_scatter on every rank. */
PLD_API pld_status pld_host_reduce_scatter(pld_world *w, pld_dtensor data,
                                           const pld_dtensor *signal, pld_reduce_op op);
/** Launches pld_allreduce on every rank.
 * signal may be NULL: pld allocates a private one (once per world).
 * core_num > 1 runs pld_allreduce_cores (mesh; signal [P, S >= core_num]). */
PLD_API pld_status pld_host_allreduce(pld_world *w, pld_dtensor data, const pld_dtensor *signal,
                                      pld_reduce_op op, pld_allreduce_mode mode, int core_num);
/** Launches pld_all_to_all on every rank (input: a window). */
PLD_API pld_status pld_host_all_to_all(pld_world *w, pld_dtensor input, pld_dtensor target,
                                       const pld_dtensor *signal);
/** Launches pld_all_to_all_v on every rank (input, send_counts: windows). */
PLD_API pld_status pld_host_all_to_all_v(pld_world *w, pld_dtensor input, pld_dtensor target,
                                         const pld_dtensor *signal, pld_dtensor send_counts,
                                         pld_dtensor recv_counts);

/** How the builtins of a group synchronise: the form of every credit round
 * (PLD_SYNC; the same choice for every builtin of a group). Every form is
 * self-clearing on the signal's cells and keeps the ordering guarantee. */
typedef enum pld_sync_form {
    PLD_SYNC_AUTO = 0, /**< the cost model picks by group size (PLD_SYNC=auto, the default) */
    PLD_SYNC_FULL = 1, /**< every rank notifies every rank and waits for each: one hop,
                            P(P-1) notifies; what small groups favour */
    PLD_SYNC_DISSEMINATION = 2, /**< ceil(log2 P) rounds: in round j rank r notifies
                                     r + 2^j and waits for r - 2^j (mod P); P ceil(log2 P)
                                     notifies, each rank waits ceil(log2 P) times */
    PLD_SYNC_TREE = 3,          /**< arrivals up a tree of `fanout` children per rank to rank 0,
                                     then a release down it: 2(P-1) notifies, each rank waits at
                                     most twice; what ranks sharing few CPUs favour */
} pld_sync_form;

/** One credit round of a group, as one of its ranks sees it. */
typedef struct pld_sync_info {
    pld_sync_form form;       /**< never PLD_SYNC_AUTO: the form chosen */
    int fanout;               /**< children per rank of the tree form (PLD_TREE_FANOUT) */
    int hops;                 /**< notifies in a row from the last arrival to the last departure:
                                   1 (full), ceil(log2 P) (dissemination), 2 x depth (tree) */
    int notifies;             /**< notifies this rank issues in one round */
    int waits;                /**< waits this rank issues in one round */
    int epilogue;             /**< notifies this rank issues to take a call's credits back */
    long long group_notifies; /**< notifies of one round summed over the group */
} pld_sync_info;

/** The synchronisation of the builtins of a group of nranks ranks of w
 * (the world: pld_world_size; a team's group: its size), seen from group
 * rank `rank`. PLD_ERR_ARG for a bad world, size or rank. */
PLD_API pld_status pld_world_sync(const pld_world *w, int nranks, int rank, pld_sync_info *out);
/** One round of `form` on rank `rank` of a group of nranks, with `fanout`
 * children per rank in the tree form: what pld_world_sync returns for a
 * world that uses that form, for any group size (no world needed: cost
 * projections). PLD_ERR_ARG for PLD_SYNC_AUTO, a bad size, rank or fanout. */
PLD_API pld_status pld_sync_plan(pld_sync_form form, int nranks, int rank, int fanout,
                                 pld_sync_info *out);
/** "full", "dissemination", "tree" ("auto" for PLD_SYNC_AUTO). */
PLD_API const char *pld_sync_form_name(pld_sync_form form);

#ifdef __cplusplus
}
#endif
#endif /* PLD_COLL_H */
