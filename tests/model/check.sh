#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks the protocol model (pld.pml) exhaustively with spin:
#   1. every configuration (P x call sequence) must pass with zero errors:
#      no assertion violation (wrong data version, agreement slot, non-zero
#      signal or flag at the end, a flag of another call at a binomial
#      broadcast's, doubling allgather's, Rabenseifner allreduce's or Bruck
#      all_to_all's wait,
#      the ordering guarantee) and no invalid end state (deadlock);
#   2. every planted mutant must be rejected in at least one configuration
#      it applies to -- except ring_skip_right_wait, which the model proves
#      harmless (see docs/dev/model.md) and which must therefore pass.
# Prints one line per configuration and per mutant, then the total time;
# exits non-zero on any unexpected result.
#
# Usage: tests/model/check.sh [path-to-spin]
#   JOBS=n      parallel spin runs (default: number of CPUs, at most 4)
#   KEEP=1      keep the work directory (pan sources, trails) and print it
#   FULL=1      try every mutant on every configuration it applies to
#   EXTRA=...   more spin -D flags for every run (-DNOARGS: no agreement check;
#               -DNOG: no assertion of the ordering guarantee)
set -uo pipefail

SPIN=${1:-${SPIN:-spin}}
CC=${CC:-gcc}
HERE=$(cd "$(dirname "$0")" && pwd)
MODEL=$HERE/pld.pml
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
[ "$JOBS" -gt 4 ] && JOBS=4

if ! command -v "$SPIN" >/dev/null 2>&1; then
    echo "check.sh: spin not found ('$SPIN'); install the Debian package 'spin'" >&2
    exit 2
fi
if ! command -v "$CC" >/dev/null 2>&1; then
    echo "check.sh: C compiler '$CC' not found" >&2
    exit 2
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/pld-model.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
    echo "work directory: $WORK"
else
    trap 'rm -rf "$WORK"' EXIT
fi
T0=$(date +%s.%N)

# ---- the configurations ---------------------------------------------------
# Sequences (seq.pml), each at P = 2 and P = 3; a few more at P = 4, where
# ring neighbours are no longer all of a rank's peers.
SEQS="bar_bc_ag bc_a2a_bc bc_a2a_bc_a2a a2a_bc_a2a ag_rs_agi mesh_a2a a2av_a2a a2av_a2a_a2av
      disp_comb mx_mx_comb_a2a ring_ag ag_ring_ag rsag_a2a_rsag mix"
# With one-round calls (ll.pml): mixed with credit calls, and one-round only.
LL_MIXED="llbc_a2a_llag_llag llar_mesh_llrs a2a_llbc_a2a rsag_llbc_mesh_rsag llmix"
LL_SEQS="ll_a2a_bc_rs_bar $LL_MIXED"
# With the binomial-tree broadcast (the one-round path's flags and epochs).
BCB_SEQS="bcb_a2a_bcb bcb_llbc_bcb bcb_bc_ag"
CONFIGS=""
for s in $SEQS $LL_SEQS $BCB_SEQS; do
    CONFIGS="$CONFIGS 2:$s 3:$s"
done
CONFIGS="$CONFIGS 4:a2a_bc_a2a 4:ag_ring_ag 4:ll_a2a_bc_rs_bar 4:rsag_a2a_rsag"
# The binomial tree at P = 4, where rank 3 pulls from rank 1, not from the
# root; under the log-depth forms at P = 3, and at P = 4 with two trees and
# a push; and at P = 5 (the root has three children) in the tree form, the
# only one whose search there fits the test suite.
for s in $BCB_SEQS; do
    CONFIGS="$CONFIGS 4:$s 3:$s:SYNC_DISSEM 3:$s:SYNC_TREE"
done
CONFIGS="$CONFIGS 4:bcb_a2a_bcb:SYNC_DISSEM 4:bcb_a2a_bcb:SYNC_TREE 5:bcb_a2a_bcb:SYNC_TREE"
# With the allgather by recursive doubling (the one-round path's flags and
# epochs too), smallest first: at P = 2 and 3 (at P = 3 the last step is a
# partial one, n = P - h) in every form; at P = 4, the first P where a rank
# forwards a row it received (step h = 2 forwards row me+1): the doubling
# followed at once by a push into its window in every form, two doubling
# calls around a push in the full form, and the mix with a one-round
# allgather (the second doubling call reusing the first one's flag cells)
# in the tree form, the cheapest. LONG=1 adds the other two at P = 4 in the
# full form (4.5 M and 9 M states) and the doubling's three steps at P = 5
# in the tree form (21 M states, about 50 s and 1.2 GB).
AGD_SEQS="agd_ag agd_a2a_agd agd_bc_ag agd_llag_a2a_agd"
for s in $AGD_SEQS; do
    CONFIGS="$CONFIGS 2:$s 3:$s 3:$s:SYNC_DISSEM 3:$s:SYNC_TREE"
done
CONFIGS="$CONFIGS 4:agd_ag 4:agd_ag:SYNC_DISSEM 4:agd_ag:SYNC_TREE 4:agd_a2a_agd
         4:agd_llag_a2a_agd:SYNC_TREE"
[ "${LONG:-0}" = 1 ] && CONFIGS="$CONFIGS 4:agd_bc_ag 4:agd_llag_a2a_agd 5:agd_ag:SYNC_TREE"
# With the Rabenseifner allreduce (two epochs per call on the same flags):
# at P = 2 (one halving and one doubling step) and P = 3 (an extra rank
# folds into rank 1) in every form; at P = 4 (two steps each way, the
# second halving step reads what the first one reduced): the allreduce
# followed at once by an rs_ag on the same data in every form, two calls
# around a push in the full form, and the mix with a one-round allreduce
# in the tree form; and at P = 5 (a fold, then two steps each way) the
# two calls around a push in the tree form (12.4 M states, about 15 s and
# 0.8 GB). At P = 3 and 5 the rs_ag of rab_rsag has fewer owners than
# ranks (Q), so it takes the owner rounds. LONG=1 adds the other two at
# P = 4 in the other forms, and rab_rsag at P = 5 in the tree form: its
# owner rounds (four owners of five ranks) take it from 14.5 M states
# in the tree's three rounds to 101 M (about 200 s and 5.3 GB).
RAB_SEQS="rab_rsag rab_a2a_rab rab_llar_rab"
for s in $RAB_SEQS; do
    CONFIGS="$CONFIGS 2:$s 3:$s 3:$s:SYNC_DISSEM 3:$s:SYNC_TREE"
done
CONFIGS="$CONFIGS 4:rab_rsag 4:rab_rsag:SYNC_DISSEM 4:rab_rsag:SYNC_TREE 4:rab_a2a_rab
         4:rab_llar_rab:SYNC_TREE 5:rab_a2a_rab:SYNC_TREE"
[ "${LONG:-0}" = 1 ] && CONFIGS="$CONFIGS 4:rab_a2a_rab:SYNC_DISSEM 4:rab_a2a_rab:SYNC_TREE
                                 4:rab_llar_rab 4:rab_llar_rab:SYNC_DISSEM 5:rab_rsag:SYNC_TREE"
# With Bruck's all_to_all (two epochs per call on the flags, its landing
# areas in the target window, then the done round on the signal): two
# calls back to back on one target, a push before it and after a call
# between, a one-round all_to_all between two calls on the target, a push
# into the target right after it (its result unread), and that push
# between two calls, at P = 2 and 3 in every form (at P = 3 the steps
# carry one chunk each); at P = 4 (two steps of two chunks; the push lands
# in a landing area if a rank may leave while its partner still reads)
# the push right after it in every form, two calls and the one-round mix
# in the full form, and the push before it and the push between two calls
# in the tree form; and two calls at P = 5 in the tree form, where step 2
# lands in the area step 0 used, freed by the ready sent after step 0's
# unpacking (4.0 M states). LONG=1 adds the push before it at P = 4 and
# two calls at P = 5 in the full form (48 M states, about 180 s and 3 GB).
BRUCK_SEQS="bruck_bruck a2a_bruck_bc_a2a bruck_lla2a_bruck bruck_a2a bruck_a2a_bruck"
for s in $BRUCK_SEQS; do
    CONFIGS="$CONFIGS 2:$s 3:$s 3:$s:SYNC_DISSEM 3:$s:SYNC_TREE"
done
CONFIGS="$CONFIGS 4:bruck_a2a 4:bruck_a2a:SYNC_DISSEM 4:bruck_a2a:SYNC_TREE 4:bruck_bruck
         4:bruck_lla2a_bruck 4:a2a_bruck_bc_a2a:SYNC_TREE 4:bruck_a2a_bruck:SYNC_TREE
         5:bruck_bruck:SYNC_TREE"
[ "${LONG:-0}" = 1 ] && CONFIGS="$CONFIGS 4:a2a_bruck_bc_a2a 5:bruck_bruck"
# The log-depth forms of the credit rounds (PLD_SYNC; signal.pml), written
# P:sequence:FORM: every builtin kind again with each form at P = 3 (three
# ranks: dissemination's non-power of two, a tree with one full level) and
# the heavier mixes at P = 4 (two dissemination rounds; a tree of depth 2 at
# FAN = 2, where a leaf's release passes through its parent), and two
# barriers at P = 8 (a tree of depth 3). LONG=1 adds the P = 8 runs that
# take minutes and gigabytes: dissemination's three rounds, and pushes
# around a barrier in the tree.
FORM_SEQS="bar_bc_ag ag_rs_agi mesh_a2a a2av_a2a_a2av disp_comb mx_mx_comb_a2a ag_ring_ag
           rsag_a2a_rsag mix llbc_a2a_llag_llag llmix"
FORM_SEQS4="bar_bc_ag a2a_bc_a2a ag_ring_ag rsag_a2a_rsag ll_a2a_bc_rs_bar"
for f in SYNC_DISSEM SYNC_TREE; do
    for s in $FORM_SEQS; do CONFIGS="$CONFIGS 3:$s:$f"; done
    for s in $FORM_SEQS4; do CONFIGS="$CONFIGS 4:$s:$f"; done
done
CONFIGS="$CONFIGS 8:bar_bar:SYNC_TREE"
# The two-phase allreduce with fewer segment owners than ranks (small data:
# pld_tune_rs_ag_owners), which synchronises through its owners (the owner
# rounds) whatever the form of the calls around it: one owner at P = 2, 3
# and 4, two at P = 3 and 4, the calls around it in every form; between a
# one-round call and a mesh (the ordering guarantee asserted at each
# call's entry) at P = 2 and 3, and at P = 4 under the tree; in the mix,
# on the ring's signal, at P = 3; and once in the three full rounds the C
# keeps for more than PLD_RS_AG_OWNER_ROUNDS_MAX owners (RSAG_FULL_ROUNDS).
CONFIGS="$CONFIGS 2:rsag_a2a_rsag:RSAG_OWNERS=1 3:rsag_a2a_rsag:RSAG_OWNERS=1
         3:rsag_a2a_rsag:RSAG_OWNERS=2 3:rsag_a2a_rsag:RSAG_OWNERS=1,SYNC_TREE
         3:rsag_a2a_rsag:RSAG_OWNERS=2,SYNC_DISSEM 4:rsag_a2a_rsag:RSAG_OWNERS=2
         4:rsag_a2a_rsag:RSAG_OWNERS=2,SYNC_TREE 4:rsag_a2a_rsag:RSAG_OWNERS=1,SYNC_DISSEM
         2:rsag_llbc_mesh_rsag:RSAG_OWNERS=1 3:rsag_llbc_mesh_rsag:RSAG_OWNERS=1
         3:rsag_llbc_mesh_rsag:RSAG_OWNERS=2 4:rsag_llbc_mesh_rsag:RSAG_OWNERS=1,SYNC_TREE
         3:mix:RSAG_OWNERS=2 3:rsag_a2a_rsag:RSAG_OWNERS=1,RSAG_FULL_ROUNDS"
[ "${LONG:-0}" = 1 ] && CONFIGS="$CONFIGS 8:bar_bar:SYNC_DISSEM 8:ag_bar_ag:SYNC_TREE"

# Mutants and the sequences whose code they change (smallest first).
WITH_BCAST="bar_bc_ag bc_a2a_bc bc_a2a_bc_a2a a2a_bc_a2a mix llmix"
WITH_PUSH="bar_bc_ag bc_a2a_bc bc_a2a_bc_a2a a2a_bc_a2a ag_rs_agi mesh_a2a a2av_a2a a2av_a2a_a2av ring_ag
           ag_ring_ag rsag_a2a_rsag mix llbc_a2a_llag_llag a2a_llbc_a2a llmix"
WITH_RING="ring_ag ag_ring_ag mix"
WITH_LL_BCAST="ll_a2a_bc_rs_bar a2a_llbc_a2a llbc_a2a_llag_llag rsag_llbc_mesh_rsag llmix"
WITH_RSAG="rsag_a2a_rsag rsag_llbc_mesh_rsag mix"
# the same with the owner rounds (at P = 2 and 3 with one owner, 3 and 4
# with two)
OWNER_RSAG="rsag_a2a_rsag:RSAG_OWNERS=1 rsag_llbc_mesh_rsag:RSAG_OWNERS=1
            rsag_a2a_rsag:RSAG_OWNERS=2 rsag_llbc_mesh_rsag:RSAG_OWNERS=2"
declare -A APPLIES=(
    [rooted_bcast]=$WITH_BCAST
    [no_epilogue]="$SEQS $LL_MIXED"
    [eq_wait]="$SEQS $LL_MIXED"
    [push_after_barrier]=$WITH_PUSH
    [mesh_no_readdone]="mesh_a2a mix llar_mesh_llrs rsag_llbc_mesh_rsag"
    [ring_drop_progress]=$WITH_RING
    [ring_skip_right_wait]=$WITH_RING
    [a2av_count_first]="a2av_a2a a2av_a2a_a2av mix"
    [combine_early]="disp_comb mix"
    [moe_recv_early]="mx_mx_comb_a2a mix"
    [moe_combine_no_done]="mx_mx_comb_a2a mix"
    [rsag_no_round2]=$WITH_RSAG
    [rsag_no_readdone]=$WITH_RSAG
    [rsag_no_round2_owners]=$OWNER_RSAG
    [rsag_no_readdone_owners]=$OWNER_RSAG
    [no_epilogue_owners]=$OWNER_RSAG
    [ring_no_done]=$WITH_RING
    [bcast_no_readdone]=$WITH_BCAST
    [ll_one_slot]=$LL_SEQS
    [ll_no_wait]=$WITH_LL_BCAST
    [ll_flag_before_data]=$LL_SEQS
    [dissem_one_round]="bar_bc_ag:SYNC_DISSEM a2a_bc_a2a:SYNC_DISSEM"
    [tree_no_gather]="bar_bc_ag:SYNC_TREE a2a_bc_a2a:SYNC_TREE"
    [no_epilogue_forms]="bar_bc_ag:SYNC_DISSEM bar_bc_ag:SYNC_TREE"
    [eq_wait_forms]="bar_bc_ag:SYNC_DISSEM bar_bc_ag:SYNC_TREE"
    [binomial_no_wait]=$BCB_SEQS
    [binomial_flag_first]=$BCB_SEQS
    [binomial_no_readdone]=$BCB_SEQS
    [doubling_no_wait]=$AGD_SEQS
    [doubling_flag_first]=$AGD_SEQS
    [doubling_no_done]=$AGD_SEQS
    [rab_no_wait]=$RAB_SEQS
    [rab_gather_no_wait]=$RAB_SEQS
    [rab_no_fold_wait]=$RAB_SEQS
    [rab_no_done]=$RAB_SEQS
    [bruck_no_ready]="bruck_bruck a2a_bruck_bc_a2a bruck_lla2a_bruck"
    [bruck_flag_first]=$BRUCK_SEQS
    [bruck_no_done]="bruck_a2a bruck_a2a_bruck"
)
# The first twelve are the planted bugs of src/coll/mutant.h (same names,
# same changes); the next three exist only in the model; the next three
# are the one-round path's (ll.pml), planted in src/coll/mutant.h too; then
# the forms' (signal.pml); the rs_ag's owner rounds under the three general
# ones that change them (*_owners); the binomial broadcast's: binomial_no_wait
# of src/coll/mutant.h and two of the model's own; the doubling
# allgather's: doubling_no_wait and doubling_no_done of src/coll/mutant.h
# and the model's own doubling_flag_first; the Rabenseifner allreduce's
# four, all of src/coll/mutant.h; and Bruck's all_to_all's three, of
# src/coll/mutant.h too (bruck_no_done only where a push follows the call
# into its target: any other next call writes a rank's target only after
# that rank entered it, or has a round of its own first).
MUTANTS="rooted_bcast no_epilogue eq_wait push_after_barrier mesh_no_readdone
         ring_drop_progress a2av_count_first combine_early
         rsag_no_round2 rsag_no_readdone moe_recv_early moe_combine_no_done
         ring_no_done bcast_no_readdone ring_skip_right_wait
         ll_one_slot ll_no_wait ll_flag_before_data
         dissem_one_round tree_no_gather no_epilogue_forms eq_wait_forms
         rsag_no_round2_owners rsag_no_readdone_owners no_epilogue_owners
         binomial_no_wait binomial_flag_first binomial_no_readdone
         doubling_no_wait doubling_flag_first doubling_no_done
         rab_no_wait rab_gather_no_wait rab_no_fold_wait rab_no_done
         bruck_no_ready bruck_flag_first bruck_no_done"
# Mutants the model proves equivalent to the real protocol: they must pass.
EQUIVALENT="ring_skip_right_wait"

# ---- one spin run ---------------------------------------------------------
# run_one ID P SEQ[:FORM[,FORM...]] [MUTANT]: writes $WORK/ID.res:
#   status(pass|fail|broken) states depth seconds what
# Each FORM is a -D flag (SYNC_TREE, RSAG_OWNERS=2).
# A mutant NAME_forms is NAME under the form its sequence names, and
# NAME_owners is NAME with the owners its sequence names.
run_one() {
    local id=$1 p=$2 seq=${3%%:*} mut=${4:-} d="$WORK/$1" f
    local defs=(-DP="$p" -DSEQ_"$seq")
    if [ "$seq" != "$3" ]; then
        local forms=${3#*:}
        for f in ${forms//,/ }; do defs+=(-D"$f"); done
    fi
    mut=${mut%_forms}
    [ -n "$mut" ] && defs+=(-D"${mut%_owners}")
    # shellcheck disable=SC2206
    [ -n "${EXTRA:-}" ] && defs+=($EXTRA)
    mkdir -p "$d" && cd "$d" || return
    # small state spaces: compiling dominates, so no optimisation
    local opt=-O0 hash=-w20
    # larger ones: -O1 searches as fast as -O2 here and compiles in 60%
    [ "$p" -ge 4 ] && opt=-O1 hash=-w24
    [ "$p" -ge 8 ] && hash=-w27
    if ! "$SPIN" -a "${defs[@]}" "$MODEL" >spin.out 2>&1; then
        echo "broken 0 0 0 spin -a failed: $(grep -m1 -i error spin.out)" >"$WORK/$id.res"
        return
    fi
    if ! "$CC" $opt -DSAFETY -DCOLLAPSE -DVECTORSZ=2048 -o pan pan.c >cc.out 2>&1; then
        echo "broken 0 0 0 gcc failed: $(head -1 cc.out)" >"$WORK/$id.res"
        return
    fi
    local t0 t1
    t0=$(date +%s.%N)
    ./pan -m100000 $hash >pan.out 2>&1
    t1=$(date +%s.%N)
    local states depth errors secs what status
    states=$(awk '/states, stored/ {print $1; exit}' pan.out)
    depth=$(sed -n 's/.*depth reached \([0-9]*\).*/\1/p' pan.out | head -1)
    errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.out | head -1)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')
    if [ -z "$errors" ] || grep -q "max search depth too small" pan.out; then
        status=broken
        what="pan did not finish a full search: $(grep -m1 -i 'error\|too small' pan.out)"
    elif [ "$errors" = 0 ]; then
        status=pass
        what=""
    else
        status=fail
        local first edepth
        first=$(grep -m1 '^pan:1:' pan.out)
        edepth=$(echo "$first" | sed -n 's/.*(at depth \([0-9]*\)).*/\1/p')
        [ -n "$edepth" ] && depth=$edepth
        case "$first" in
        *"invalid end state"*) what="deadlock (invalid end state)" ;;
        *"(sig["*) what="signal not zero at quiescence" ;;
        *"(flag[n]"*) what="flag not zero at quiescence" ;;
        *"(flag["*) what="a flag wait (binomial broadcast, doubling allgather, Rabenseifner allreduce, Bruck all_to_all) saw another call's flag" ;;
        *"(agr["*) what="agreement slot holds another call's fingerprint" ;;
        *"(ent["*) what="ordering guarantee broken: a rank started a call before every rank entered the one before" ;;
        *"assertion violated"*)
            local arr
            arr=$(echo "$first" | sed 's/.*assertion violated //; s/^(*//; s/\[.*//')
            what="wrong data version read in '${arr:-?}'" ;;
        *) what="$first" ;;
        esac
    fi
    echo "$status ${states:-0} ${depth:-0} $secs $what" >"$WORK/$id.res"
    [ "${KEEP:-0}" = 1 ] || rm -f pan pan.c pan.b pan.h pan.m pan.p pan.t
}

# ---- run everything, JOBS at a time ---------------------------------------
# A mutant is tried on its configurations in order (smallest first) until
# one rejects it; FULL=1 tries them all (the numbers in docs/dev/model.md).
# An equivalent mutant is always tried on all of them.
# The P a mutant is tried at: 2 and 3; 3 and 4 under a log-depth form
# (at P = 2 each form is one notify each way, as the full form); 4 for the
# binomial tree's wait and flag order (below P = 4 every parent is the
# root, which staged before round 1: both changes are harmless there), and
# 4 for the doubling allgather's (below P = 4 no rank forwards a row it
# received: every step puts the rank's own row only, and the done round
# orders everything else); 3 for the Rabenseifner allreduce's fold (at
# P = 2 no rank folds); for the owner rounds, 2 and 3 with one owner, 3
# and 4 with two (at P = 2 two owners take the full rounds).
mutant_ps() {
    case $1 in
    binomial_no_wait | binomial_flag_first | doubling_*) echo 4; return ;;
    rab_no_fold_wait) echo 3; return ;;
    *_owners)
        case $2 in *RSAG_OWNERS=1*) echo "2 3" ;; *) echo "3 4" ;; esac
        return ;;
    esac
    case $2 in *:*) echo "3 4" ;; *) echo "2 3" ;; esac
}

run_mutant() {
    local m=$1 s p st
    for s in ${APPLIES[$m]}; do
        for p in $(mutant_ps "$m" "$s"); do
            run_one "mut.$m.$p.$s" "$p" "$s" "$m"
            read -r st _ <"$WORK/mut.$m.$p.$s.res"
            if [ "$st" != pass ] && [ "${FULL:-0}" != 1 ] &&
                [[ " $EQUIVALENT " != *" $m "* ]]; then
                return
            fi
        done
    done
}

TASKS=()
for c in $CONFIGS; do # the P >= 4 ones first: they take longest
    [ "${c%%:*}" -ge 8 ] && TASKS+=("run_one cfg.${c%%:*}.${c#*:} ${c%%:*} ${c#*:}")
done
for c in $CONFIGS; do
    [ "${c%%:*}" -ge 5 ] && [ "${c%%:*}" -lt 8 ] &&
        TASKS+=("run_one cfg.${c%%:*}.${c#*:} ${c%%:*} ${c#*:}")
done
for c in $CONFIGS; do
    [ "${c%%:*}" = 4 ] && TASKS+=("run_one cfg.${c%%:*}.${c#*:} ${c%%:*} ${c#*:}")
done
for c in $CONFIGS; do
    [ "${c%%:*}" -lt 4 ] && TASKS+=("run_one cfg.${c%%:*}.${c#*:} ${c%%:*} ${c#*:}")
done
for m in $MUTANTS; do
    TASKS+=("run_mutant $m")
done

running=0
for t in "${TASKS[@]}"; do
    # shellcheck disable=SC2086
    ($t) &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then
        wait -n
        running=$((running - 1))
    fi
done
wait

# ---- report ---------------------------------------------------------------
bad=0
echo "== configurations (must pass)"
printf '%-3s %-43s %10s %7s %7s  %s\n' P sequence states depth time result
for c in $CONFIGS; do
    p=${c%%:*} s=${c#*:}
    read -r status states depth secs what <"$WORK/cfg.$p.$s.res"
    if [ "$status" = pass ]; then
        res=ok
    else
        res="FAILED: $status $what"
        bad=1
    fi
    printf '%-3s %-43s %10s %7s %6ss  %s\n' "$p" "$s" "$states" "$depth" "$secs" "$res"
done

echo "== mutants (must be rejected)"
for m in $MUTANTS; do
    total=0 rejected=0 first="" broken="" detail=""
    for s in ${APPLIES[$m]}; do
        for p in $(mutant_ps "$m" "$s"); do
            [ -f "$WORK/mut.$m.$p.$s.res" ] || continue
            read -r status states depth secs what <"$WORK/mut.$m.$p.$s.res"
            total=$((total + 1))
            if [ "${FULL:-0}" = 1 ]; then
                detail="$detail$(printf '    P=%s %-19s %-6s %s depth %s, %s states' "$p" "$s" \
                    "$status" "${what:+$what,}" "$depth" "$states")"$'\n'
            fi
            case $status in
            fail)
                rejected=$((rejected + 1))
                [ -z "$first" ] &&
                    first="P=$p $s: $what, depth $depth, $states states" ;;
            broken) broken="P=$p $s: $what" ;;
            esac
        done
    done
    if [ -n "$broken" ]; then
        printf '%-23s BROKEN RUN %s\n' "$m" "$broken"
        bad=1
    elif [[ " $EQUIVALENT " == *" $m "* ]]; then
        if [ "$rejected" = 0 ]; then
            printf '%-23s equivalent, as expected: passes all %d configurations\n' "$m" "$total"
        else
            printf '%-23s UNEXPECTED: rejected in %d/%d (%s); update the docs\n' "$m" \
                "$rejected" "$total" "$first"
            bad=1
        fi
    elif [ "$rejected" -gt 0 ]; then
        printf '%-23s rejected in %2d/%-2d tried; first: %s\n' "$m" "$rejected" "$total" "$first"
    else
        printf '%-23s NOT REJECTED in any of %d configurations\n' "$m" "$total"
        bad=1
    fi
    printf '%s' "$detail"
done

T1=$(date +%s.%N)
runs=$(find "$WORK" -maxdepth 1 -name '*.res' | wc -l)
awk -v a="$T0" -v b="$T1" -v n="$runs" -v j="$JOBS" \
    'BEGIN {printf "== %d spin runs, %d at a time, %.1f s\n", n, j, b - a}'
if [ "$bad" != 0 ]; then
    echo "model check FAILED"
    exit 1
fi
echo "model check OK"
