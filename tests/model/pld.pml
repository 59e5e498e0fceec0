/* SPDX-License-Identifier: Apache-2.0 */
/* pld protocol model: the self-clearing credit barrier and the signal
 * protocol of every builtin collective, as Promela for the spin model
 * checker.
 *
 * What is modelled. P ranks (P = 2, 3; 4, 5 or 8 for a few sequences) run
 * the same sequence of back-to-back builtin calls on ONE signal (seq.pml: 2
 * to 4 calls, and two of 11 and 13). Each builtin follows its C
 * implementation step by step (src/coll/credit.c and the algorithm files;
 * coll.pml), with the agreement check's fingerprint exchange and the
 * caller's staging, result reads and window reuse around it: every notify,
 * wait, put and get is its own step, so spin explores every interleaving
 * of the ranks. The one-round path of the small builtins (src/coll/ll.c;
 * ll.pml) runs in sequences of its own, alone and mixed with credit calls
 * on the signal; so do the binomial-tree broadcast
 * (src/coll/broadcast_binomial.c; coll.pml), the allgather by recursive
 * doubling (src/coll/allgather_doubling.c; coll.pml), the allreduce by
 * recursive halving and doubling (src/coll/allreduce_rabenseifner.c;
 * coll.pml) and the all_to_all by Bruck's algorithm
 * (src/coll/all_to_all_bruck.c; coll.pml), which wait on the one-round
 * path's flags.
 *
 * Abstraction. Signal cells are ints updated indivisibly (AtomicAdd, Set);
 * a wait is a blocking expression (cell >= g). Data is reduced to versions:
 * each window slice holds which call wrote it (coll.pml), writers store
 * their call's version and readers assert the version their call needs.
 * Memory is sequentially consistent, which is what release/acquire on
 * notify -> wait gives the protocol: data written before a notify is seen
 * by whoever observed that notify.
 *
 * Properties, checked exhaustively:
 *   1. no rank overwrites a slice a peer may still read, and every read
 *      (inside a builtin, or the caller's read of a result) sees the data
 *      of the right call -- the version assertions;
 *   2. no deadlock -- spin's end-state check: every rank finishes;
 *   3. every signal cell is zero once all ranks finished -- the assertion
 *      at the end of init; so is every flag (one-round calls, binomial
 *      broadcasts, doubling allgathers, Rabenseifner allreduces, Bruck
 *      all_to_alls), which each rank clears at kernel end;
 *   4. with one-round calls, binomial broadcasts, doubling allgathers,
 *      Rabenseifner allreduces or Bruck all_to_alls in the sequence: the
 *      ordering guarantee --
 *      when a rank enters call k, every rank has entered call k-1
 *      (coll.pml).
 *
 * Planted mutants (-D<name>), the protocol bugs of src/coll/mutant.h:
 * rooted_bcast, no_epilogue, eq_wait, push_after_barrier, mesh_no_readdone,
 * ring_drop_progress, a2av_count_first, combine_early, rsag_no_round2,
 * rsag_no_readdone; and three of the model's own: ring_no_done,
 * bcast_no_readdone (a dropped read-done round) and ring_skip_right_wait (a
 * wait the model proves redundant); the one-round path's ll_one_slot,
 * ll_no_wait, ll_flag_before_data (ll.pml); and the binomial broadcast's
 * binomial_no_wait, with two of the model's own, binomial_flag_first and
 * binomial_no_readdone (coll.pml); the doubling allgather's
 * doubling_no_wait and doubling_no_done, with the model's own
 * doubling_flag_first (coll.pml); and the Rabenseifner allreduce's
 * rab_no_wait, rab_gather_no_wait, rab_no_fold_wait and rab_no_done
 * (coll.pml); and Bruck's all_to_all's bruck_no_ready, bruck_flag_first
 * and bruck_no_done (coll.pml).
 * check.sh requires every bug to be rejected in some configuration and the
 * redundant wait's removal to pass everywhere.
 *
 * Options: -DNOARGS leaves the agreement check out (PLD_CHECK=noargs);
 * -DNOG leaves out the assertion of the ordering guarantee.
 *
 * Run one configuration by hand, in a scratch directory:
 *   spin -a -DP=3 -DSEQ_bc_a2a_bc path/to/pld.pml
 *   gcc -O2 -DSAFETY -DCOLLAPSE -o pan pan.c && ./pan -m100000
 * and replay a failure step by step with
 *   spin -t -k pld.pml.trail -p -DP=3 -DSEQ_bc_a2a_bc path/to/pld.pml
 * check.sh runs every configuration and every mutant; docs/dev/model.md
 * has the results. */

#ifndef P
#define P 3
#endif

#include "seq.pml"
/* the group's flag lines and the epoch count (coll.pml) */
#if defined(USE_LL) || defined(USE_BCAST_BINOMIAL) || defined(USE_AG_DOUBLING) || \
    defined(USE_RAB) || defined(USE_BRUCK)
#define USE_FLAGS
#endif
#include "signal.pml"
#include "coll.pml"
#ifdef USE_LL
#include "ll.pml"
#endif

byte ndone;

proctype rank(byte me)
{
    byte i, j, q, g;
    byte L = (me + P - 1) % P;    /* ring neighbours */
    byte R = (me + 1) % P;
#ifdef USE_FLAGS
    byte ep, pq;                  /* flags: epoch, parity (ll.pml, coll.pml) */
#endif

    SEQUENCE;
#ifdef USE_FLAGS
    ll_kernel_end();
#endif
    ndone++
}

init
{
    byte n;
    atomic {
        for (n : 0 .. P - 1) {
            run rank(n)
        }
    };
    (ndone == P);
    /* quiescence: the signal is all-zero again */
    for (n : 0 .. P * NCELL - 1) {
        assert(sig[n] == 0)
    }
#ifdef USE_FLAGS
    ;
    /* and so are the flags: nobody wrote one after its owner cleared it at
     * kernel end (pld clears them before the next launch, later still) */
    for (n : 0 .. P * 2 * P - 1) {
        assert(flag[n] == 0)
    }
#endif
}
