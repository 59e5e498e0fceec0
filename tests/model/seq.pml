/* SPDX-License-Identifier: Apache-2.0 */
/* The call sequences: back-to-back builtins on ONE signal, every rank
 * calling them in the same order. Pick one with -DSEQ_<name>. Call k of a
 * sequence writes and expects data version k (V(k, n) in coll.pml).
 *
 * Each builtin kind works on its own windows, and no kind runs twice in a
 * row: the caller's side of the ordering guarantee (a window written by
 * call k+1 must not be one the caller still reads from call k). Every rank
 * reads each result right after its call returns (but the first one of
 * agd_ag: the next call writes the window it delivered, so the caller may
 * not rely on it), and rewrites every window that peers read during a call
 * (pull sources) right after that call (in rab_rsag the next call's staging
 * is that rewrite).
 *
 * do_ll_* are the one-round path of the same builtins (ll.pml): they write
 * no peer's user window, so the same one-round kind may run twice in a row;
 * a credit call of a kind must still not follow a call of the same kind. */

#if defined(SEQ_bar_bc_ag)
/* barrier -> broadcast(root 0) -> allgather */
#define USE_BCAST
#define USE_AG
#define SEQUENCE do_barrier(1); do_bcast(2, 0); do_allgather(3)

#elif defined(SEQ_bar_bar)
/* two barriers: the synchronisation forms alone, at P = 8 */
#define SEQUENCE do_barrier(1); do_barrier(2)

#elif defined(SEQ_ag_bar_ag)
/* allgather -> barrier -> allgather: two pushes into one target window
 * around a barrier, at P = 8 */
#define USE_AG
#define SEQUENCE do_allgather(1); do_barrier(2); do_allgather(3)

#elif defined(SEQ_bc_a2a_bc)
/* broadcast(root 0) -> all_to_all -> broadcast(root 1): the root rotates */
#define USE_BCAST
#define USE_A2A
#define SEQUENCE do_bcast(1, 0); do_a2a(2); do_bcast(3, 1)

#elif defined(SEQ_bc_a2a_bc_a2a)
/* the same, one all_to_all further: a push after the second broadcast into
 * a window the first all_to_all delivered */
#define USE_BCAST
#define USE_A2A
#define SEQUENCE do_bcast(1, 0); do_a2a(2); do_bcast(3, 1); do_a2a(4)

#elif defined(SEQ_a2a_bc_a2a)
/* all_to_all -> broadcast(root P-1) -> all_to_all: a push after a broadcast
 * into a window the previous all_to_all delivered */
#define USE_BCAST
#define USE_A2A
#define SEQUENCE do_a2a(1); do_bcast(2, P - 1); do_a2a(3)

#elif defined(SEQ_ag_rs_agi)
/* allgather -> reduce_scatter -> allgather_inplace (same target window) */
#define USE_AG
#define USE_RS
#define SEQUENCE do_allgather(1); do_rs(2); do_allgather_inplace(3)

#elif defined(SEQ_mesh_a2a)
/* allreduce mesh (2 chunks) -> all_to_all */
#define USE_MESH
#define USE_A2A
#define SEQUENCE do_mesh(1); do_a2a(2)

#elif defined(SEQ_rsag_a2a_rsag)
/* allreduce rs_ag -> all_to_all -> allreduce rs_ag: the second rs_ag stages
 * the window the first one's peers pulled from, one call later */
#define USE_RSAG
#define USE_A2A
#define SEQUENCE do_rsag(1); do_a2a(2); do_rsag(3)

#elif defined(SEQ_a2av_a2a)
/* all_to_all_v -> all_to_all */
#define USE_A2AV
#define USE_A2A
#define SEQUENCE do_a2av(1); do_a2a(2)

#elif defined(SEQ_a2av_a2a_a2av)
/* all_to_all_v -> all_to_all -> all_to_all_v: the second all_to_all_v
 * reuses the count lines of the first (the same parity here, with one call
 * between; the library alternates them by call) */
#define USE_A2AV
#define USE_A2A
#define SEQUENCE do_a2av(1); do_a2a(2); do_a2av(3)

#elif defined(SEQ_disp_comb)
/* indexed dispatch -> local expert step -> indexed combine */
#define USE_MOE
#define SEQUENCE do_dispatch(1); do_expert(1, 2); do_combine(2)

#elif defined(SEQ_mx_mx_comb_a2a)
/* MoE exchange: two dispatches back to back (no barrier between: a peer
 * writes a target only after its owner entered the call), the experts, the
 * combine, and a push into other windows right after it */
#define USE_MX
#define USE_A2A
#define SEQUENCE do_mx_dispatch(1); do_mx_dispatch(2); do_mx_expert(2, 3); do_mx_combine(2, 3); \
    do_a2a(4)

#elif defined(SEQ_ring_ag)
/* allreduce ring -> allgather, the allgather's [P,1] signal being row 0 of
 * the ring's [2(P-1),P] signal */
#define HAS_RING
#define USE_RING
#define USE_AG
#define SEQUENCE do_ring(1); do_allgather(2)

#elif defined(SEQ_ag_ring_ag)
/* allgather -> allreduce ring -> allgather, shared cells as above */
#define HAS_RING
#define USE_RING
#define USE_AG
#define SEQUENCE do_allgather(1); do_ring(2); do_allgather(3)

#elif defined(SEQ_mix)
/* every builtin once (broadcast and allgather twice; allreduce in all three
 * forms), 13 calls */
#define HAS_RING
#define USE_RING
#define USE_BCAST
#define USE_AG
#define USE_RS
#define USE_MESH
#define USE_RSAG
#define USE_A2A
#define USE_A2AV
#define USE_MOE
#define USE_MX
#define SEQUENCE do_ring(1); do_bcast(2, 0); do_allgather(3); do_rs(4); do_mesh(5); \
    do_rsag(6); do_a2a(7); do_a2av(8); do_bcast(9, P - 1); do_allgather_inplace(10); \
    do_dispatch(11); do_expert(11, 12); do_combine(12); do_mx_dispatch(13); \
    do_mx_expert(13, 14); do_mx_combine(13, 14); do_barrier(15)

#elif defined(SEQ_llbc_a2a_llag_llag)
/* one-round broadcast(root 0) -> all_to_all -> one-round allgather, twice:
 * the one-round calls are epochs 1, 2, 3, so epoch 3 reuses the broadcast's
 * slots (parity 1) */
#define USE_LL
#define USE_BCAST
#define USE_A2A
#define USE_AG
#define SEQUENCE do_ll_bcast(1, 0); do_a2a(2); do_ll_allgather(3); do_ll_allgather(4)

#elif defined(SEQ_llar_mesh_llrs)
/* one-round allreduce -> allreduce mesh (2 chunks) -> one-round
 * reduce_scatter */
#define USE_LL
#define USE_LLAR
#define USE_MESH
#define USE_RS
#define SEQUENCE do_ll_allreduce(1); do_mesh(2); do_ll_rs(3)

#elif defined(SEQ_a2a_llbc_a2a)
/* all_to_all -> one-round broadcast(root P-1) -> all_to_all: a push after a
 * one-round call into a window the all_to_all before it delivered */
#define USE_LL
#define USE_BCAST
#define USE_A2A
#define SEQUENCE do_a2a(1); do_ll_bcast(2, P - 1); do_a2a(3)

#elif defined(SEQ_rsag_llbc_mesh_rsag)
/* allreduce rs_ag -> one-round broadcast(root P-1) -> allreduce mesh (2
 * chunks) -> allreduce rs_ag: the two allreduce forms back to back, and two
 * rs_ag calls with a one-round call and a credit call between them */
#define USE_LL
#define USE_RSAG
#define USE_BCAST
#define USE_MESH
#define SEQUENCE do_rsag(1); do_ll_bcast(2, P - 1); do_mesh(3); do_rsag(4)

#elif defined(SEQ_ll_a2a_bc_rs_bar)
/* one-round only: all_to_all -> broadcast(root P-1) -> reduce_scatter ->
 * barrier; epochs 3 and 4 reuse the slots of epochs 1 and 2 */
#define USE_LL
#define USE_BCAST
#define USE_A2A
#define USE_RS
#define SEQUENCE do_ll_a2a(1); do_ll_bcast(2, P - 1); do_ll_rs(3); do_ll_barrier(4)

#elif defined(SEQ_llmix)
/* both paths, 11 calls, every one-round builtin but allgather (which
 * llbc_a2a_llag_llag has): a one-round call after a credit push into the same
 * window, a credit push after a one-round copy-out into the same window;
 * one-round epochs 1..6 */
#define USE_LL
#define USE_LLAR
#define USE_BCAST
#define USE_AG
#define USE_A2A
#define USE_RS
#define SEQUENCE do_ll_barrier(1); do_a2a(2); do_ll_a2a(3); do_ll_bcast(4, P - 1); do_a2a(5); \
    do_ll_allgather_inplace(6); do_bcast(7, 0); do_ll_allreduce(8); do_allgather(9); do_ll_rs(10); \
    do_barrier(11)

#elif defined(SEQ_bcb_a2a_bcb)
/* binomial broadcast(root 0) -> all_to_all -> binomial broadcast(root P-1):
 * two trees on one signal, a push between them; epochs 1 and 2 */
#define USE_BCAST
#define USE_BCAST_BINOMIAL
#define USE_A2A
#define SEQUENCE do_bcast_binomial(1, 0); do_a2a(2); do_bcast_binomial(3, P - 1)

#elif defined(SEQ_bcb_llbc_bcb)
/* binomial broadcast(root 0) -> one-round broadcast(root P-1) -> binomial
 * broadcast(root 0): one epoch count and one set of flags for both paths
 * (epochs 1, 2, 3: parities 1, 0, 1), so the second tree Sets the cells
 * the first one did, over their epoch 1; and one data window for all three */
#define USE_LL
#define USE_BCAST
#define USE_BCAST_BINOMIAL
#define SEQUENCE do_bcast_binomial(1, 0); do_ll_bcast(2, P - 1); do_bcast_binomial(3, 0)

#elif defined(SEQ_bcb_bc_ag)
/* binomial broadcast(root 1) -> pull broadcast(root 0) -> allgather: the two
 * credit broadcasts back to back on one data window (both forms only pull
 * into the caller's own window, and every rank reads its result before the
 * next call), then a push */
#define USE_BCAST
#define USE_BCAST_BINOMIAL
#define USE_AG
#define SEQUENCE do_bcast_binomial(1, 1); do_bcast(2, 0); do_allgather(3)

#elif defined(SEQ_agd_a2a_agd)
/* doubling allgather -> all_to_all -> doubling allgather: two doubling calls
 * on one target window and one signal, a push between them; epochs 1, 2 */
#define USE_AG
#define USE_AG_DOUBLING
#define USE_A2A
#define SEQUENCE do_allgather_doubling(1); do_a2a(2); do_allgather_doubling(3)

#elif defined(SEQ_agd_bc_ag)
/* doubling allgather -> pull broadcast(root 0) -> push allgather: the two
 * allgather forms on one target window, a call between them */
#define USE_AG
#define USE_AG_DOUBLING
#define USE_BCAST
#define SEQUENCE do_allgather_doubling(1); do_bcast(2, 0); do_allgather(3)

#elif defined(SEQ_agd_ag)
/* doubling allgather -> push allgather into the same target window at once.
 * The second call writes the window the first one delivered, so the caller
 * may not rely on the first call's result (the reuse contract): it is not
 * read, only the second one's is. What the doubling's done round is for: a
 * rank that left the doubling call pushes its new row into a peer that may
 * still forward rows of the old call */
#define USE_AG
#define USE_AG_DOUBLING
#define SEQUENCE ag_doubling(1); do_allgather(2)

#elif defined(SEQ_agd_llag_a2a_agd)
/* doubling allgather -> one-round allgather -> all_to_all -> doubling
 * allgather: a one-round copy-out into the window a doubling call just
 * delivered, and one epoch count for both paths (epochs 1, 2, 3: the second
 * doubling Sets the cells of the first, over their epoch 1) */
#define USE_LL
#define USE_AG
#define USE_AG_DOUBLING
#define USE_A2A
#define SEQUENCE do_allgather_doubling(1); do_ll_allgather(2); do_a2a(3); do_allgather_doubling(4)

#elif defined(SEQ_rab_rsag)
/* Rabenseifner allreduce -> rs_ag allreduce on the same data at once: the
 * rs_ag with Q segment owners (RSAG_OWNERS = Q: the Rabenseifner cuts the
 * data into Q segments, this rs_ag the same way), whose caller stages the
 * data the Rabenseifner call's peers read, right after reading its result.
 * What the done round is for: a rank that left the Rabenseifner call
 * rewrites data its last partners may still copy */
#define USE_RAB
#define USE_RSAG
#define RSAG_OWNERS RQ
#define SEQUENCE rab_stage(1); rab(1); rab_read(1); do_rsag(2)

#elif defined(SEQ_rab_a2a_rab)
/* Rabenseifner allreduce -> all_to_all -> Rabenseifner allreduce: two calls
 * on one data window and one signal, a push between them; epochs 1-2 and
 * 3-4, so the second call's flags of each kind land over the first one's */
#define USE_RAB
#define USE_A2A
#define SEQUENCE do_rab(1); do_a2a(2); do_rab(3)

#elif defined(SEQ_rab_llar_rab)
/* Rabenseifner allreduce -> one-round allreduce -> Rabenseifner allreduce:
 * one epoch count for both paths (epochs 1-2, 3, 4-5), so the second call's
 * halving flags (epoch 4) land in the cells of the first one's doubling
 * flags (epoch 2), and its doubling flags (5) over the one-round call's and
 * the first halving's (3, 1) */
#define USE_LL
#define USE_LLAR
#define USE_RAB
#define SEQUENCE do_rab(1); do_ll_allreduce(2); do_rab(3)

#elif defined(SEQ_bruck_bruck)
/* Bruck all_to_all twice into one target at once: a peer writes a landing
 * area only after the ready its owner sends on entering the call (epochs
 * 1-2 and 3-4: the second call's ready and data flags land in the first
 * one's cells) */
#define USE_A2A
#define USE_BRUCK
#define SEQUENCE do_bruck(1); do_bruck(2)

#elif defined(SEQ_a2a_bruck_bc_a2a)
/* push all_to_all -> Bruck all_to_all -> pull broadcast(root 0) -> push
 * all_to_all, all four on one target but the broadcast: Bruck's first
 * puts land in a window whose owner read the push's rows only once it
 * returned; the push after a call between */
#define USE_A2A
#define USE_BRUCK
#define USE_BCAST
#define SEQUENCE do_a2a(1); do_bruck(2); do_bcast(3, 0); do_a2a(4)

#elif defined(SEQ_bruck_lla2a_bruck)
/* Bruck all_to_all -> one-round all_to_all -> Bruck all_to_all on one
 * target: one epoch count for both paths (epochs 1-2, 3, 4-5), so the
 * second call's ready flags (epoch 4) land over the first one's data flags
 * (2), its data flags (5) over the one-round call's and the first ready
 * flags (3, 1); the one-round copy-out writes the window the first call
 * delivered */
#define USE_LL
#define USE_A2A
#define USE_BRUCK
#define SEQUENCE do_bruck(1); do_ll_a2a(2); do_bruck(3)

#elif defined(SEQ_bruck_a2a)
/* Bruck all_to_all -> push all_to_all into the same target at once. The
 * push writes the window the first call delivered, so the caller may not
 * rely on the first call's result (the reuse contract): it is not read,
 * only the push's is. G alone lets a rank that left the Bruck call push
 * into a peer still in it; the Bruck call's done round keeps the push out
 * until every rank has read its landing rows and written its final ones */
#define USE_A2A
#define USE_BRUCK
#define SEQUENCE bruck(1); do_a2a(2)

#elif defined(SEQ_bruck_a2a_bruck)
/* Bruck all_to_all -> push all_to_all -> Bruck all_to_all on one target,
 * the first call's result unread (see bruck_a2a) */
#define USE_A2A
#define USE_BRUCK
#define SEQUENCE bruck(1); do_a2a(2); do_bruck(3)

#else
#error "pick a sequence: -DSEQ_<name> (see seq.pml)"
#endif
