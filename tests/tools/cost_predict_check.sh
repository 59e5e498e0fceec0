#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/tools/cost_predict_check.sh PLD CHEAP_STEPS COSTLY_TRANSFERS
# `pld cost --predict` on one machine, with a parameter file of known
# numbers (PLD_TUNE_FILE), every prediction worked out by hand:
#   2 CPUs, round_us 1, peer_us 0, handover_us 2 per rank beyond the CPUs:
#   a full round of P = 8 ranks is 1 + 2 x 6 = 13 us, a step of a chain
#   (one partner) the same 13 us; copying and pulling cost nothing,
#   reducing 1 ns per byte.
#  1. a chain of steps counts: Rabenseifner's 2 log2 Q steps (and its fold
#     and unfold where P is no power of two) on top of its one round;
#  2. rs_ag with one owner (4 KiB, P = 8) counts two rounds through the
#     owner, and the owner's reduction of 7 copies is not shared out as if
#     every rank did as much: 2 x 13 + 7 x 4096 ns;
#  3. where every rank does alike the bytes are shared by the CPUs: the
#     mesh's 7 x 4096 reduced bytes, 8 ranks on 2 CPUs, 4 times one rank's.
#  4. with CHEAP_STEPS (tests/tune/cheap_steps.txt: rounds of many ranks
#     dear, steps with one partner cheap) auto picks Rabenseifner at P = 5,
#     and a measured call's counters equal that algorithm's card.
#  5. all_to_all: the push's and Bruck's rows are the times the library's
#     choice weighs (pld_tune_all_to_all_auto), every term worked out by
#     hand at P = 5 (uneven steps); with COSTLY_TRANSFERS
#     (tests/tune/costly_transfers.txt: 20 us per transfer) auto picks
#     Bruck for small chunks at P = 8 and 12 and the push for large ones,
#     and the counters of measured calls equal the card of the pick; with
#     CHEAP_STEPS it keeps the push (Bruck's round costs the push's).
#  6. allgather: the push's and recursive doubling's rows are the times
#     the library's choice weighs (pld_tune_allgather_auto), worked out by
#     hand at P = 5; with COSTLY_TRANSFERS auto picks doubling at P = 8
#     and 12 whatever the row size (the bytes are the same), in place too,
#     and the counters of measured calls equal the card of the pick.
#  7. under PLD_RULES the pick line names the rule, the --predict table
#     marks the rule's pick (not the faster prediction) and the counters
#     equal its card, for every collective auto chooses for; the rounds
#     line names the sync rule, and not under PLD_SYNC set to a form.
set -u
pld=$1
cheap=$2
costly=$3
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
die() { echo "FAIL: $*"; fail=1; }
cat >"$tmp/tune.txt" <<'TUNE'
pld_tune 4
cpus 2
round_us 1
peer_us 0
handover_us 2
transfer_us 0
ws_bytes 262144 8388608 67108864
copy_ns 0 0 0
pull_ns 0 0 0
reduce_ns 1 1 1
measured 1
TUNE
export PLD_TUNE_FILE="$tmp/tune.txt"
unset PLD_LL_BYTES

# predicted ALGORITHM ARGS...: the predicted us of ALGORITHM's row
predicted() {
    alg=$1
    shift
    "$pld" cost "$@" --predict >"$tmp/out" 2>&1 || die "pld cost $*: exit status $?"
    grep -v '^#' "$tmp/out" | awk -v a="$alg" '$1 == a { for (i = NF; i > 0; i--)
        if ($i ~ /^[0-9]+\.[0-9]+$/) { print $i; exit } }'
}
expect() { # expect WHAT GOT WANT
    awk -v g="$2" -v w="$3" 'BEGIN { exit !(g != "" && g - w < 0.01 && w - g < 0.01) }' ||
        die "$1: predicted '$2' us, worked out $3 us"
}

# 1. P = 8: one round (13) and 6 steps (78); each rank reduces half the
#    4096 B, then a quarter, an eighth: 3584 B, 3.584 us, and 8 ranks alike
#    on 2 CPUs take 4 times that
got=$(predicted rabenseifner allreduce -d 0-7 -s 4K)
expect "rabenseifner P=8 4K" "$got" "$(awk 'BEGIN { print 13 + 6 * 13 + 4 * 3.584 }')"
#    P = 6: Q = 4, its 4 steps plus the fold and the unfold, each
#    1 + 2 x 4 = 9 us, and one round of 9 us. Ranks 1 and 3 reduce their
#    extra neighbour's 4096 B and then 2048 + 1024, ranks 4 and 5 the
#    3072 B of the steps, ranks 0 and 2 nothing: 20480 B over 2 CPUs,
#    10.24 us, more than the busiest rank's own 7.168
got=$(predicted rabenseifner allreduce -d 0-5 -s 4K)
expect "rabenseifner P=6 4K" "$got" "$(awk 'BEGIN { print 9 + 6 * 9 + 10.24 }')"
# 2. one owner: 2 rounds, the owner's 7 x 4096 B
got=$(predicted rs_ag allreduce -d 0-7 -s 4K)
expect "rs_ag P=8 4K, one owner" "$got" 54.672
#    every rank an owner (64 KiB, 8 KiB segments): 3 rounds, 7 x 8192 B
#    each, 8 ranks alike on 2 CPUs
got=$(predicted rs_ag allreduce -d 0-7 -s 64K)
expect "rs_ag P=8 64K, every rank" "$got" "$(awk 'BEGIN { print 3 * 13 + 4 * 7 * 8.192 }')"
# 3. the mesh: 2 rounds, 7 x 4096 B reduced by each of 8 ranks on 2 CPUs
got=$(predicted mesh allreduce -d 0-7 -s 4K)
expect "mesh P=8 4K" "$got" "$(awk 'BEGIN { print 2 * 13 + 4 * 28.672 }')"
#    no chain where an algorithm has none: the barrier is one round
got=$(predicted "credit" barrier -d 0-7)
expect "barrier P=8" "$got" 13

# 4. auto's pick, predicted and run
PLD_TUNE_FILE=$cheap "$pld" cost allreduce -d 0-4 -s 64K --predict >"$tmp/out" 2>&1
grep -q '^ rabenseifner (auto.s pick) .*<- this call$' "$tmp/out" ||
    die "cheap steps, P=5 64K: auto does not pick rabenseifner: $(grep "this call" "$tmp/out")"
PLD_TUNE_FILE=$cheap "$pld" cost allreduce -d 0-4 -s 64K --measure >"$tmp/out" 2>&1 ||
    die "cheap steps, P=5 64K, measured: exit status $? ($(tail -3 "$tmp/out"))"

# 5. all_to_all, P = 5, 640 B (chunks of 128 B): copying 1 ns per byte,
#    1 us per transfer, 5 ranks on 2 CPUs take 2.5 times one rank's work.
#    Bruck: B = 2 + 2 + 1 = 5 chunks in 3 steps; its rows staged, packed,
#    put, got back and unpacked (4 x 5) and put in order and stored (3 x 5):
#    35 x 128 B = 4.48 us x 2.5; a chain of 6 flags of 1 + 2 x 3 = 7 us
#    and the done round, 7 us more; 2 x 3 + 1 = 7 transfers x 2.5. The push: one round of 7 us, 5 rows
#    (0.64 us) x 2.5 and 5 transfers x 2.5.
sed -e 's/^transfer_us 0$/transfer_us 1/' -e 's/^copy_ns 0 0 0$/copy_ns 1 1 1/' \
    "$tmp/tune.txt" >"$tmp/copy.txt"
got=$(PLD_TUNE_FILE="$tmp/copy.txt" predicted bruck all_to_all -d 0-4 -s 640)
expect "bruck P=5 640 B" "$got" "$(awk 'BEGIN { print 2.5 * 4.48 + 6 * 7 + 7 + 2.5 * 7 }')"
got=$(PLD_TUNE_FILE="$tmp/copy.txt" predicted push all_to_all -d 0-4 -s 640)
expect "push P=5 640 B" "$got" "$(awk 'BEGIN { print 7 + 2.5 * 0.64 + 2.5 * 5 }')"
grep -Eq '^ push \(auto.s pick\) +1 +0 .*<- this call$' "$tmp/out" ||
    die "P=5 640 B, dear transfers: auto's pick is not the push: $(grep "this call" "$tmp/out")"
grep -Eq '^ bruck +1 +6 ' "$tmp/out" || die "P=5: bruck's row has not 1 round and a chain of 6"

# auto's pick under COSTLY_TRANSFERS: Bruck for small chunks, the push for
# large ones, at P = 8 and P = 12; predicted, and measured by pld cost
# (bytes, notifies and waits) and pld bench (every size of a sweep across
# the switch); under CHEAP_STEPS the push
PLD_TUNE_FILE=$cheap "$pld" cost all_to_all -d 0-12 -s $((13 * 256)) --predict >"$tmp/out" 2>&1
grep -q '^ push (auto.s pick) .*<- this call$' "$tmp/out" ||
    die "cheap steps, all_to_all P=13, 256 B chunks: auto does not keep the push"
for p in 8 12; do
    PLD_TUNE_FILE=$costly "$pld" cost all_to_all -d 0-$((p - 1)) -s $((p * 256)) --predict \
        --measure >"$tmp/out" 2>&1 || die "cheap steps, all_to_all P=$p: exit status $?"
    grep -q '^ bruck (auto.s pick) .*<- this call$' "$tmp/out" ||
        die "costly transfers, all_to_all P=$p, 256 B chunks: auto does not pick bruck: $(grep "this call" "$tmp/out")"
    grep -q "^# auto's pick: bruck " "$tmp/out" || die "costly transfers, P=$p: no auto's pick line"
    grep -q ' agrees' "$tmp/out" && ! grep -q DIFFERS "$tmp/out" ||
        die "costly transfers, all_to_all P=$p: counters differ from bruck's card"
    PLD_TUNE_FILE=$costly "$pld" cost all_to_all -d 0-$((p - 1)) -s $((p * 1024 * 1024)) \
        --predict >"$tmp/out" 2>&1
    grep -q '^ push (auto.s pick) .*<- this call$' "$tmp/out" ||
        die "costly transfers, all_to_all P=$p, 1 MiB chunks: auto does not pick the push"
done
PLD_TUNE_FILE=$costly "$pld" bench all_to_all -d 0-11 -b 8 -e 4M -f 8 -n 1 -w 0 --warmup-ms 0 \
    >"$tmp/out" 2>&1 || die "costly transfers, pld bench all_to_all P=12: exit status $?"
grep -q '^# total #wrong: 0, cost card = byte counters: yes' "$tmp/out" ||
    die "costly transfers, pld bench all_to_all P=12: $(grep 'total #wrong' "$tmp/out")"

# 6. allgather, P = 5, 640 B (rows of 128 B), the same parameters: both
#    one round of 7 us and 5 rows (0.64 us) x 2.5; the push 5 transfers
#    x 2.5; doubling 3 steps of three links of 7 us each (the chain
#    column shows the steps) and 2 x 3 + 1 = 7 transfers x 2.5
got=$(PLD_TUNE_FILE="$tmp/copy.txt" predicted doubling allgather -d 0-4 -s 640)
expect "doubling P=5 640 B" "$got" "$(awk 'BEGIN { print 7 + 2.5 * 0.64 + 9 * 7 + 2.5 * 7 }')"
got=$(PLD_TUNE_FILE="$tmp/copy.txt" predicted push allgather -d 0-4 -s 640)
expect "allgather push P=5 640 B" "$got" "$(awk 'BEGIN { print 7 + 2.5 * 0.64 + 2.5 * 5 }')"
grep -Eq '^ push \(auto.s pick\) +1 +0 .*<- this call$' "$tmp/out" ||
    die "allgather P=5 640 B: auto's pick is not the push: $(grep "this call" "$tmp/out")"
grep -Eq '^ doubling +1 +3 ' "$tmp/out" || die "P=5: doubling's row has not 1 round and a chain of 3"
for p in 8 12; do
    for row in 256 1048576; do
        PLD_TUNE_FILE=$costly "$pld" cost allgather -d 0-$((p - 1)) -s $((p * row)) --predict \
            --measure >"$tmp/out" 2>&1 || die "costly transfers, allgather P=$p: exit status $?"
        grep -q '^ doubling (auto.s pick) .*<- this call$' "$tmp/out" ||
            die "costly transfers, allgather P=$p, $row B rows: auto does not pick doubling: $(grep "this call" "$tmp/out")"
        grep -q "^# auto's pick: doubling " "$tmp/out" ||
            die "costly transfers, allgather P=$p: no auto's pick line"
        grep -q ' agrees' "$tmp/out" && ! grep -q DIFFERS "$tmp/out" ||
            die "costly transfers, allgather P=$p: counters differ from doubling's card"
    done
    # in place: the same choice, its own card (no self copy)
    PLD_TUNE_FILE=$costly "$pld" cost allgather --mode inplace -d 0-$((p - 1)) -s $((p * 256)) \
        --predict --measure >"$tmp/out" 2>&1 || die "costly transfers, inplace P=$p: exit status $?"
    grep -q '^ doubling (pick) .*<- this call$' "$tmp/out" ||
        die "costly transfers, inplace P=$p: doubling is not the pick: $(grep "this call" "$tmp/out")"
    grep -q ' agrees' "$tmp/out" && ! grep -q DIFFERS "$tmp/out" ||
        die "costly transfers, inplace P=$p: counters differ from the card"
done
PLD_TUNE_FILE=$costly "$pld" bench allgather -d 0-11 -b 8 -e 4M -f 8 -n 1 -w 0 --warmup-ms 0 \
    >"$tmp/out" 2>&1 || die "costly transfers, pld bench allgather P=12: exit status $?"
grep -q '^# total #wrong: 0, cost card = byte counters: yes' "$tmp/out" ||
    die "costly transfers, pld bench allgather P=12: $(grep 'total #wrong' "$tmp/out")"

# 7. PLD_RULES: each rule picks what the parameters above would not
cat >"$tmp/rules.txt" <<'RULES'
pld_rules 1
allgather  8 * doubling
allreduce  8 * rabenseifner
all_to_all 8 * bruck
broadcast  8 * binomial
sync       8 * dissemination
RULES
for call in "allgather doubling" "allreduce rabenseifner" "all_to_all bruck" \
    "broadcast binomial"; do
    set -- $call
    PLD_RULES="$tmp/rules.txt" "$pld" cost "$1" -d 0-7 -s 1M --predict --measure \
        >"$tmp/out" 2>&1 || die "rules, $1: exit status $?"
    grep -q "^# auto's pick: $2 (rule $tmp/rules.txt:[0-9]*; " "$tmp/out" ||
        die "rules, $1: the pick line does not name the rule: $(grep "pick" "$tmp/out")"
    grep -q ' agrees' "$tmp/out" && ! grep -q DIFFERS "$tmp/out" ||
        die "rules, $1: counters differ from $2's card"
    if [ "$1" != broadcast ]; then
        grep -q "^ $2 (auto.s pick) .*<- this call$" "$tmp/out" ||
            die "rules, $1: --predict does not mark $2: $(grep "this call" "$tmp/out")"
    fi
done
"$pld" cost broadcast -d 0-7 -s 1M >"$tmp/out" 2>&1
grep -q "^# auto's pick: pull (no PLD_RULES rule" "$tmp/out" ||
    die "broadcast without rules: $(grep "pick" "$tmp/out")"
# the rounds' form: the rule's, named; PLD_SYNC set to a form keeps it
PLD_RULES="$tmp/rules.txt" "$pld" cost barrier -d 0-7 --measure >"$tmp/out" 2>&1
grep -q "^# rounds: dissemination, 3 hops, 24 notifies a round over 8 ranks; rule $tmp/rules.txt:6$" \
    "$tmp/out" || die "rules, barrier: $(grep "rounds:" "$tmp/out")"
grep -q ' agrees' "$tmp/out" && ! grep -q DIFFERS "$tmp/out" ||
    die "rules, barrier: counters differ from dissemination's card"
PLD_RULES="$tmp/rules.txt" PLD_SYNC=tree "$pld" cost barrier -d 0-7 >"$tmp/out" 2>&1
grep -q "^# rounds: tree (.*ranks$" "$tmp/out" ||
    die "rules under PLD_SYNC=tree, barrier: $(grep "rounds:" "$tmp/out")"

[ "$fail" = 0 ] && echo "cost_predict_check: OK"
exit "$fail"
