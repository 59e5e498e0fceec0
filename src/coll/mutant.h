/* SPDX-License-Identifier: Apache-2.0 */
/* Planted protocol bugs, for proving that the schedule explorer and the
 * protocol model find them. They exist only in the test library built with
 * PLD_MUTANTS (CMake target pld_mutants); the library users link has none:
 * PLD__MUTANT(x) is the constant 0 there and the compiler drops the branch.
 *
 * In the test library PLD_MUTANT=<name> switches one on for the process:
 *   rooted_bcast        broadcast: non-roots hear only from the root
 *   no_epilogue         credit barrier: the self-clearing epilogue dropped
 *   eq_wait             credit barrier: waits with Eq instead of Ge
 *   push_after_barrier  allgather, all_to_all: push after the barrier
 *   mesh_no_readdone    allreduce mesh: store without the read-done barrier
 *   ring_drop_progress  allreduce ring: the progress credit of step 0 to the
 *                       right neighbour is dropped
 *   a2av_count_first    all_to_all_v: count Set and barrier before the rows
 *   combine_early       indexed combine: pull before the experts finished
 *   rsag_no_round2      allreduce rs_ag: the allgather starts without round 2
 *   rsag_no_readdone    allreduce rs_ag: returns without the read-done round
 *   ll_one_slot         one-round path: one inbox slot per pair (no parity)
 *   ll_no_wait          one-round broadcast: ranks wait only for the root's
 *                       payload, not for the empty flags of the others
 *   ll_flag_before_data one-round path: the flag is set before the payload
 *   moe_recv_early      moe dispatch: recv_counts takes what arrived before the
 *                       data round's barrier, while peers may still read the
 *                       staged counts
 *   moe_combine_no_done moe combine: returns without the read-done round
 *   binomial_no_wait    binomial broadcast: a rank pulls from its parent
 *                       without waiting for the parent's flag
 *   doubling_no_wait    doubling allgather: the first step's flag is not
 *                       waited for, so the second step may forward a row
 *                       that has not arrived
 *   doubling_flag_first doubling allgather: each step's flag is Set before
 *                       its rows are put
 *   doubling_no_done    doubling allgather: returns without the done round
 *   rab_no_wait         Rabenseifner allreduce: the first halving step reads
 *                       its partner's half without waiting for its flag
 *   rab_gather_no_wait  Rabenseifner allreduce: the first doubling step
 *                       copies its partner's segment without waiting for it
 *                       to be final
 *   rab_no_fold_wait    Rabenseifner allreduce (P not a power of two): the
 *                       fold reads the extra rank's data without its flag
 *   rab_no_done         Rabenseifner allreduce: returns without the done
 *                       round
 *   bruck_no_ready      Bruck all-to-all: the first step puts into its
 *                       partner's landing rows without waiting for its
 *                       ready flag
 *   bruck_flag_first    Bruck all-to-all: each step's data flag is Set
 *                       before its chunks are put
 *   bruck_no_done       Bruck all-to-all: returns without the done round
 * While a mutant of the credit rounds is planted, every builtin takes the
 * credit rounds (PLD__MUTANT_CREDIT), so the planted bug runs. */
#ifndef PLD_MUTANT_H
#define PLD_MUTANT_H

#ifdef PLD_MUTANTS
int pld__mutant(const char *name);
int pld__mutant_credit(void);
#define PLD__MUTANT(name) pld__mutant(#name)
#define PLD__MUTANT_CREDIT() pld__mutant_credit()
#else
#define PLD__MUTANT(name) 0
#define PLD__MUTANT_CREDIT() 0
#endif

#endif
