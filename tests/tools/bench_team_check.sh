#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/tools/bench_team_check.sh PLD [TRANSPORT]
# `pld bench --team`: every group runs the collective at once, measured as
# a world of T ranks. Checked: exit status 0, one row per size, #wrong 0 in
# every row, the byte counters equal to the cost card for T (and, without
# trusting the card, the peer bytes of T = 2: half the size for allgather,
# the size for allreduce), the header naming the team, its groups and T,
# the CSV's team columns; a short last row reported under every row; a
# spoiled element counted; bad --team values refused as usage errors that
# name the value and say how to write it.
set -u
pld=$1
transport=${2:-thread}
fail=0
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err" "$out.csv"' EXIT

die() { echo "FAIL: $*"; fail=1; }
# columns: size count type redop root, time algbw busbw #wrong out-of-place, the
# same in-place (N/A where the collective has no such form), %peak out, %peak
# in, memcpy, peer card self
rows_ok() { # rows_ok WHAT ROWS PEER_DIVISOR: the table of the last run
    rows=$(grep -v '^#' "$out" | grep -c .)
    [ "$rows" = "$2" ] || die "$1: $rows table rows, expected $2"
    bad=$(grep -v '^#' "$out" |
        awk '($9 != "0" && $9 != "N/A") || ($13 != "0" && $13 != "N/A") || $6 $10 == "N/AN/A" || NF != 19' |
        wc -l)
    [ "$bad" = 0 ] || die "$1: $bad rows with a non-zero #wrong or a malformed row"
    grep -v '^#' "$out" | awk -v d="$3" '$17 != $1 / d { exit 1 }' ||
        die "$1: peer bytes per rank are not size/$3 (the card of T = 2)"
    grep -q '!' "$out" && die "$1: byte counters differ from the cost card"
    grep -q '^# total #wrong: 0, cost card = byte counters: yes' "$out" ||
        die "$1: no clean '# total' line"
}

# allgather in the rows {0,1} {2,3}: 8 B .. 64 KiB, x2 = 14 sizes
"$pld" bench allgather -d 0-3 --team x=2 -b 8 -e 64K -c 1 -n 3 -w 1 --warmup-ms 5 \
    --transport "$transport" --csv "$out.csv" >"$out" 2>&1
rc=$?
cat "$out"
[ "$rc" = 0 ] || die "allgather x=2: exit status $rc, expected 0"
rows_ok "allgather x=2" 14 2
grep -q '^# team x=2: .* 2 groups, .*: 2 of T=2$' "$out" || die "allgather x=2: no team line"
grep -q '^# groups (world ranks): {0,1} {2,3}$' "$out" || die "allgather x=2: groups not listed"
[ "$(grep -c '^pld,allgather,auto,[a-z]*,2,.*,x=2,2,out$' "$out.csv")" = 14 ] ||
    die "allgather x=2: CSV rows without P = T = 2 and the team columns"

# allreduce in the columns {0,2} {1,3}
"$pld" bench allreduce -d 0-3 --team y=2 -b 8 -e 64K -c 1 -n 3 -w 1 --warmup-ms 5 \
    --transport "$transport" >"$out" 2>&1
rc=$?
cat "$out"
[ "$rc" = 0 ] || die "allreduce y=2: exit status $rc, expected 0"
rows_ok "allreduce y=2" 14 1
grep -q '^# team y=2: .* 2 groups, .*: 2 of T=2$' "$out" || die "allreduce y=2: no team line"
grep -q '^# groups (world ranks): {0,2} {1,3}$' "$out" || die "allreduce y=2: groups not listed"

# a short last row: {0,1,2} and {3,4}; its line under every row
"$pld" bench allgather -d 0-4 --team x=3 -b 6K -e 24K -c 1 -n 2 -w 1 --warmup-ms 5 \
    --transport "$transport" >"$out" 2>&1
rc=$?
[ "$rc" = 0 ] || { cat "$out"; die "allgather x=3, P=5: exit status $rc"; }
[ "$(grep -v '^#' "$out" | grep -c .)" = 3 ] || { cat "$out"; die "x=3: not 3 rows"; }
[ "$(grep -c '^# .* 0 .*(T=2: 1 group)$' "$out")" = 3 ] || { cat "$out"; die "x=3: no T=2 lines"; }
grep -q '^# total #wrong: 0, cost card = byte counters: yes' "$out" ||
    { cat "$out"; die "x=3: wrong elements or card mismatch"; }

# the checker counts a spoiled element in a group and fails the run
"$pld" bench allreduce -d 0-3 --team x=2 -b 4K -e 4K -c 1 -n 2 -w 0 --inject-error \
    --transport "$transport" >"$out" 2>&1
rc=$?
[ "$rc" = 1 ] || { cat "$out"; die "--inject-error: exit status $rc, expected 1"; }
grep -v '^#' "$out" | awk '$13 == "0"' | grep -q . && die "--inject-error: #wrong stayed 0"

# usage errors: status 2, nothing on stdout, the value and the way to write it
bad() { # bad SAYS WORDS...: pld bench WORDS is a usage error whose stderr says SAYS
    says=$1
    shift
    got=$("$pld" bench --transport "$transport" "$@" 2>"$err")
    rc=$?
    if [ "$rc" != 2 ] || [ -n "$got" ] || ! grep -qF -- "$says" "$err"; then
        echo "FAIL: pld bench $*: status $rc (expected 2), stderr:"
        cat "$err"
        fail=1
    else
        echo "ok: pld bench $*  -> $(head -1 "$err")"
    fi
}
how="write --team x=K (rows of K consecutive ranks) or --team y=K (columns: ranks equal mod K)"
bad "--team x=0: K is a number of ranks from 1 to P, not '0'; $how" allgather -d 0-3 --team x=0
bad "--team y=-2: K is a number of ranks from 1 to P, not '-2'" allgather -d 0-3 --team y=-2
bad "--team x=two: K is a number of ranks from 1 to P, not 'two'" allgather -d 0-3 --team x=two
bad "--team x=5: K = 5 is more ranks than the world has (P=4); K is 1..4" allgather -d 0-3 --team x=5
bad "--team z=2: the team is x (rows) or y (columns), not 'z'; $how" allgather -d 0-3 --team z=2
bad "--team x2: no '=K'; $how" allgather -d 0-3 --team x2
bad "option --team needs a value" allgather -d 0-3 --team
bad "--root 2 is not a rank of every group of --team x=2 (the smallest has T=2" \
    broadcast -d 0-3 --team x=2 --root 2

[ "$fail" = 0 ] && echo "PASS"
exit "$fail"
