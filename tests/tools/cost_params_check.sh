#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/tools/cost_params_check.sh PLD EXAMPLE_PARAMS
# `pld cost --predict --params FILE`: the projection onto a machine described
# by a parameter file, without a world.
#  1. barrier, allgather and allreduce at P = 10000 from the example file
#     succeed within seconds (no 10 000 rank threads) and print every
#     algorithm in the three synchronisation forms, one row marked fastest;
#     the one-round path appears at P = 8 (it fits) and not at P = 10000.
#  2. the numbers follow the formula: a file of known parameters gives a
#     barrier whose every term can be worked out by hand, and Bruck's
#     all-to-all: its messages, its chain and the chunks that cross nodes.
#  3. a file with an unknown key, a missing key, a bad number, a wrong format
#     tag: exit status 2, nothing on stdout, a message naming the file and
#     the line; --params without --predict and with --measure are usage
#     errors.
set -u
pld=$1
example=$2
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
die() { echo "FAIL: $*"; fail=1; }

# rows of the table: algorithm form rounds hops messages intra_B inter_B us [<- fastest]
rows() { grep -v '^#' "$tmp/out"; }

project() { # project WHAT ARGS...: runs pld cost ARGS --predict --params EXAMPLE
    what=$1
    shift
    start=$(date +%s)
    "$pld" cost "$@" --predict --params "$example" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    took=$(($(date +%s) - start))
    cat "$tmp/out" "$tmp/err"
    [ "$rc" = 0 ] || die "$what: exit status $rc"
    [ "$took" -le 20 ] || die "$what: took $took s (a world of P ranks?)"
    [ "$(rows | grep -c '<- fastest$')" = 1 ] || die "$what: not exactly one row marked fastest"
    rows | awk '{ if (NF < 8 || $8 + 0 <= 0) bad = 1 } END { exit bad }' ||
        die "$what: a row without a positive prediction"
}

has_forms() { # has_forms WHAT ALGORITHM: the algorithm in the three forms
    for form in full dissemination tree; do
        rows | grep -Eq "^ $2 +$form " || die "$1: no row '$2 $form'"
    done
}

project "barrier P=10000" barrier -d 0-9999
has_forms "barrier P=10000" barrier
grep -q '^# pld cost: barrier, P=10000, projected' "$tmp/out" || die "barrier: no P=10000 header"

project "allgather P=10000" allgather -d 0-9999 -s 64K
has_forms "allgather P=10000" push
has_forms "allgather P=10000" inplace

project "allreduce P=10000" allreduce -d 0-9999 -s 4K
for alg in mesh rs_ag rabenseifner; do has_forms "allreduce P=10000" $alg; done
rows | grep -Eq '^ ring +neighbour ' || die "allreduce P=10000: no ring row"
rows | grep -q '^ one_round ' && die "allreduce P=10000: a one-round row beyond 64 ranks"

project "allreduce P=8 1K" allreduce -d 0-7 -s 1K
rows | grep -Eq '^ one_round +flags ' || die "allreduce P=8 1K: no one-round row"

project "all_to_all P=10000" all_to_all -d 0-9999 -s 64K
for alg in push bruck; do has_forms "all_to_all P=10000" $alg; done

for spec in "broadcast -s 1M -r 9" "reduce_scatter -s 1M" "all_to_all -s 1M" "all_to_all_v -s 1M"; do
    # shellcheck disable=SC2086
    project "$spec P=100" $spec -d 0-99
done

# 2. by hand: 4 ranks per node, 8 ranks = 2 nodes, alpha 1 us within and
# 10 us between nodes, 0.5 us per message. A full barrier: 1 round x 1 hop
# x 10 us + (7 notifies + 7 epilogue) x 0.5 us = 17 us; dissemination: 3
# hops x 10 + (3 + 3) x 0.5 = 33 us; tree (fanout 16: rank 0 gathers the 7
# others): 2 hops x 10 + (7 + 1) x 0.5 = 24 us.
cat >"$tmp/known.txt" <<'PARAMS'
pld_params 1
ranks_per_node 4
intra_alpha_us 1
inter_alpha_us 10   # a trailing comment
intra_beta_ns_per_byte 0
inter_beta_ns_per_byte 0
message_overhead_us 0.5
PARAMS
"$pld" cost barrier -d 0-7 --predict --params "$tmp/known.txt" >"$tmp/out" 2>&1 ||
    die "known parameters: exit status $?"
cat "$tmp/out"
got=$(rows | awk '{ printf "%s=%s ", $2, $8 }')
[ "$got" = "full=17.000 dissemination=33.000 tree=24.000 " ] ||
    die "known parameters: predicted $got, worked out full=17 dissemination=33 tree=24"
# within one node (P = 4) the hops cost 1 us: full 1 + 6 x 0.5 = 4 us
"$pld" cost barrier -d 0-3 --predict --params "$tmp/known.txt" >"$tmp/out" 2>&1
rows | grep -Eq '^ barrier +full +1 +1 +6 +0 +0 +4\.000' ||
    die "known parameters, one node: $(rows | head -1)"
# bytes: a P=8 allgather of 8 x 1 KiB pushes 7 rows; 4 of them to the other node
sed 's/^inter_beta_ns_per_byte 0$/inter_beta_ns_per_byte 1/' "$tmp/known.txt" >"$tmp/beta.txt"
"$pld" cost allgather -d 0-7 -s 8K --predict --params "$tmp/beta.txt" >"$tmp/out" 2>&1
rows | grep -Eq '^ push +full +1 +1 +[0-9]+ +4096 +4096 ' ||
    die "known parameters, allgather bytes: $(rows | head -1)"
# the Rabenseifner allreduce's chain: P = 6 (two nodes, 4 + 2) folds ranks
# 0 and 2 into 1 and 3 (Q = 4), so fold, 2 halving steps, 2 doubling steps
# and the unfold: 6 hops beside the full round's 1, at 10 us. A folding
# rank issues 5 + 5 notifies for the round and its epilogue, 4 step flags
# and the unfold's, and 5 gets (the fold, 4 steps): 20 messages.
# (1 + 6) x 10 + 20 x 0.5 = 80 us.
"$pld" cost allreduce -d 0-5 -s 4K --predict --params "$tmp/known.txt" >"$tmp/out" 2>&1
rows | grep -Eq '^ rabenseifner +full +1 +1 +20 +[0-9]+ +[0-9]+ +80\.000' ||
    die "known parameters, rabenseifner chain: $(rows | grep rabenseifner | head -1)"

# Bruck's all-to-all, P = 8 on 2 nodes, 8 KiB (chunks of 1 KiB): 3 steps
# of 4 chunks to rank + 1, + 2, + 4; 6 flags and 3 puts, then the full
# round's 7 notifies and 7 epilogue credits: 23 messages; a chain of 6
# flags and the round's hop at 10 us. Rank 3 crosses to the other node at
# every step (to 4, 5 and 7): 12 KiB between nodes; its 12 + 8 chunks self
# within. (6 + 1) x 10 + 23 x 0.5 + 12288 x 1 ns = 93.788 us.
"$pld" cost all_to_all -d 0-7 -s 8K --predict --params "$tmp/beta.txt" >"$tmp/out" 2>&1
rows | grep -Eq '^ bruck +full +1 +1 +23 +20480 +12288 +93\.788' ||
    die "known parameters, bruck: $(rows | grep bruck)"
#    P = 5 on 2 nodes (4 + 1): steps to + 1 (2 chunks), + 2 (2), + 4 (1);
#    rank 4, alone on its node, crosses at all three (to 0, 1 and 3): 5
#    chunks of 256 B; the round's 4 + 4 messages more:
#    (6 + 1) x 10 + 17 x 0.5 + 1280 x 1 ns = 79.78 us
"$pld" cost all_to_all -d 0-4 -s 1280 --predict --params "$tmp/beta.txt" >"$tmp/out" 2>&1
rows | grep -Eq '^ bruck +full +1 +1 +17 +[0-9]+ +1280 +79\.780' ||
    die "known parameters, bruck P=5: $(rows | grep bruck)"

# 3. bad parameter files: status 2, stderr only, naming the file and line
keys='ranks_per_node 8
intra_alpha_us 0.5
inter_alpha_us 2
intra_beta_ns_per_byte 0.1
inter_beta_ns_per_byte 0.6
message_overhead_us 0.2'
bad() { # bad NAME PATTERN CONTENT: the file NAME with CONTENT fails with PATTERN
    printf '%s\n' "$3" >"$tmp/$1"
    "$pld" cost barrier -d 0-9999 --predict --params "$tmp/$1" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    echo "$1: exit status $rc: $(cat "$tmp/err")"
    [ "$rc" = 2 ] || die "$1: exit status $rc, expected 2"
    [ -s "$tmp/out" ] && die "$1: printed on stdout"
    grep -q -- "$2" "$tmp/err" || die "$1: the message does not say '$2'"
}
bad unknown.txt "unknown.txt:8: unknown key 'colour' (value 'blue')" "pld_params 1
$keys
colour blue"
bad missing.txt "missing.txt:6: end of file, and no message_overhead_us" "pld_params 1
$(printf '%s\n' "$keys" | grep -v message_overhead_us)"
bad number.txt "number.txt:4: inter_alpha_us '2us' is not a number" "pld_params 1
$(printf '%s\n' "$keys" | sed 's/^inter_alpha_us 2$/inter_alpha_us 2us/')"
bad negative.txt "negative.txt:5: intra_beta_ns_per_byte '-0.1' is not a number" "pld_params 1
$(printf '%s\n' "$keys" | sed 's/^intra_beta_ns_per_byte 0.1$/intra_beta_ns_per_byte -0.1/')"
bad fraction.txt "fraction.txt:2: ranks_per_node '8.5' is not a whole number" "pld_params 1
$(printf '%s\n' "$keys" | sed 's/^ranks_per_node 8$/ranks_per_node 8.5/')"
bad twice.txt "twice.txt:8: ranks_per_node '4': given twice (first on line 2)" "pld_params 1
$keys
ranks_per_node 4"
bad tag.txt "tag.txt:1: the first line is 'pld_parameters 1'" "pld_parameters 1
$keys"
bad version.txt "version.txt:1: format version '2'" "pld_params 2
$keys"
bad notag.txt "notag.txt:1: the first line is 'ranks_per_node 8'" "$keys"

"$pld" cost barrier --params "$example" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 2 ] && grep -q -- "--params .* needs --predict" "$tmp/err" ||
    die "--params without --predict: exit status $rc, $(cat "$tmp/err")"
"$pld" cost barrier --params "$example" --predict --measure >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 2 ] || die "--params with --measure: exit status $rc"
"$pld" cost barrier --predict --params "$tmp/absent.txt" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 2 ] && grep -q "absent.txt" "$tmp/err" || die "absent file: exit status $rc"

[ "$fail" = 0 ] && echo "PASS"
exit "$fail"
