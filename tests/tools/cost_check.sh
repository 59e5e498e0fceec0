#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/tools/cost_check.sh PLD [TRANSPORT]
# `pld cost` agrees with a measured run: for every collective, the card
# printed by `pld cost X -d 0-3 -s 1M` equals (a) the counters of the same
# call run once by `pld cost --measure` ("agrees", exit 0), and (b) the
# "peer bytes" and "self bytes" the bench measures at that size. Then
# Bruck's all-to-all where its steps are uneven (P = 3, 5, 13): the card,
# its notifies and waits included, equals the counters.
set -u
pld=$1
transport=${2:-thread}
fail=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
die() { echo "FAIL: $*"; fail=1; }

for spec in barrier broadcast "broadcast -r 3" "broadcast -r 1 --mode binomial" allgather \
    "allgather --mode inplace" "allgather --mode doubling" reduce_scatter allreduce \
    "allreduce --mode ring" \
    "allreduce --mode rs_ag" "allreduce --mode rabenseifner" all_to_all \
    "all_to_all --mode push" "all_to_all --mode bruck" all_to_all_v; do
    # shellcheck disable=SC2086
    "$pld" cost $spec -d 0-3 -s 1M --measure --transport "$transport" >"$out" 2>&1
    rc=$?
    cat "$out"
    [ "$rc" = 0 ] || die "pld cost $spec --measure: exit status $rc"
    grep -q DIFFERS "$out" && die "pld cost $spec: counters differ from the card"
    grep -q agrees "$out" || die "pld cost $spec: no measured rows"
    # card rows: ranks to_peers from_peers self rounds
    card=$(grep -v '^#' "$out" | awk '{ m = $2 + $3; if (m > max) max = m; if ($4 > s) s = $4 } END { print max + 0, s + 0 }')
    # shellcheck disable=SC2086
    "$pld" bench $spec -d 0-3 -b 1M -e 1M -n 2 -w 1 --transport "$transport" >"$out" 2>&1 ||
        die "pld bench $spec: exit status $?"
    bench=$(grep -v '^#' "$out" | awk '{ print $17 + 0, $19 + 0 }')
    [ "$card" = "$bench" ] || die "pld cost $spec card (peer, self) = $card, pld bench measured $bench"
done

# Bruck at P = 3, 5 and 13: B = 2, 5 and 22 chunks to peers, B + P self,
# 2 ceil(log2 P) = 4, 6 and 8 flags sent and waited for, then one full
# round in the full form (forced: the form auto picks for P = 13 depends
# on the machine's parameters): P-1 notifies, P-1 epilogue credits and P-1
# waits more
for pb in "3 2 4" "5 5 6" "13 22 8"; do
    # shellcheck disable=SC2086
    set -- $pb
    PLD_SYNC=full "$pld" cost all_to_all --mode bruck -d 0-$(($1 - 1)) -s $(($1 * 256)) --measure \
        --transport "$transport" >"$out" 2>&1
    rc=$?
    cat "$out"
    [ "$rc" = 0 ] || die "pld cost all_to_all --mode bruck P=$1 --measure: exit status $rc"
    want=$(printf ' 0-%d %d 0 %d 1 %d %d agrees' $(($1 - 1)) $(($2 * 256)) $((($2 + $1) * 256)) \
        $(($3 + 2 * ($1 - 1))) $(($3 + $1 - 1)))
    got=$(grep -v '^#' "$out" | awk '{ printf " %s %s %s %s %s %s %s %s", $1, $2, $3, $4, $5, $6, $7, $8 }')
    [ "$got" = "$want" ] || die "bruck P=$1: card and counters '$got', worked out '$want'"
done
"$pld" bench all_to_all --mode bruck -d 0-12 -b 8 -e 1M -f 16 -n 1 -w 0 --warmup-ms 0 \
    --transport "$transport" >"$out" 2>&1 || die "pld bench all_to_all --mode bruck P=13: exit status $?"
grep -q '^# total #wrong: 0, cost card = byte counters: yes' "$out" ||
    { cat "$out"; die "pld bench all_to_all --mode bruck P=13: wrong elements or card mismatch"; }

[ "$fail" = 0 ] && echo "PASS"
exit "$fail"
