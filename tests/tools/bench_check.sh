#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/tools/bench_check.sh PLD [TRANSPORT]
# `pld bench allgather -d 0,1 -b 8 -e 64K -c 1 -n 5 -w 1` exits 0 and prints
# the nccl-tests table: one row per size (8 B .. 64 KiB x2 = 14 rows), #wrong 0
# in both column groups (out-of-place, in-place) of every row, the byte
# counters equal to the cost card (no '!'), and nccl-tests' footer. Then: every collective at an odd P with -c 1, and
# the checker itself: a spoiled element (--inject-error) is counted and makes
# the exit status 1.
set -u
pld=$1
transport=${2:-thread}
fail=0
out=$(mktemp)
trap 'rm -f "$out" "$out.csv"' EXIT

die() { echo "FAIL: $*"; fail=1; }

"$pld" bench allgather -d 0,1 -b 8 -e 64K -c 1 -n 5 -w 1 --transport "$transport" \
    --csv "$out.csv" >"$out" 2>&1
rc=$?
cat "$out"
[ "$rc" = 0 ] || die "exit status $rc, expected 0"
rows=$(grep -v '^#' "$out" | grep -c .)
[ "$rows" = 14 ] || die "$rows table rows, expected 14 (8 B .. 64 KiB)"
# columns: size count type redop root, time algbw busbw #wrong out-of-place, the
# same in-place, %peak out, %peak in, memcpy, peer card self
bad=$(grep -v '^#' "$out" | awk '$9 != "0" || $13 != "0" || $3 != "fp32" || $4 != "none" || $5 != "-1" || NF != 19' | wc -l)
[ "$bad" = 0 ] || die "$bad rows with a non-zero #wrong or a malformed row"
grep -v '^#' "$out" | awk '{ if ($1 != prev * 2 && NR > 1) exit 1; prev = $1 }' ||
    die "sizes do not double from 8 B"
grep -q '!' "$out" && die "byte counters differ from the cost card"
grep -q '^# Out of bounds values : 0 OK$' "$out" || die "no '# Out of bounds values : 0 OK' line"
grep -q '^# Avg bus bandwidth    : [0-9.e+-]* $' "$out" || die "no '# Avg bus bandwidth' line"
grep -q '^#  *size  *count  *type  *redop  *root  *time  *algbw  *busbw  *#wrong  *time  *algbw  *busbw  *#wrong  *%peak' "$out" ||
    die "no nccl-tests header"
[ "$(grep -c '^pld,allgather,auto,.*,out$' "$out.csv")" = 14 ] || die "CSV out-of-place rows missing"
[ "$(grep -c '^pld,allgather,inplace,.*,in$' "$out.csv")" = 14 ] || die "CSV in-place rows missing"

# every collective, odd P, checked
"$pld" bench all -d 0-2 -b 8 -e 1M -f 32 -c 1 -n 3 -w 1 --transport "$transport" >"$out" 2>&1
rc=$?
[ "$rc" = 0 ] || { cat "$out"; die "bench all P=3: exit status $rc"; }
grep -q '^# total #wrong: 0, cost card = byte counters: yes' "$out" ||
    { cat "$out"; die "bench all P=3: wrong elements or card mismatch"; }
for c in barrier broadcast allgather reduce_scatter allreduce all_to_all all_to_all_v; do
    grep -q "^# pld bench .*: $c (" "$out" || die "bench all: no table for $c"
done

# the checker counts a spoiled element and fails the run
"$pld" bench allreduce -d 0-3 -b 4K -e 4K -c 1 -n 2 -w 0 --inject-error \
    --transport "$transport" >"$out" 2>&1
rc=$?
[ "$rc" = 1 ] || { cat "$out"; die "--inject-error: exit status $rc, expected 1"; }
grep -v '^#' "$out" | awk '$13 == "0"' | grep -q . && die "--inject-error: #wrong stayed 0"
grep -q '^# Out of bounds values : 1 FAILED$' "$out" || die "--inject-error: footer not FAILED"

# P = 40: each reduction's expected values come from one period of the
# source values, scaled (more than two periods of 16 sources); a spoiled
# element is still counted
"$pld" bench allreduce -d 0-39 -b 4K -e 4K -o sum -c 1 -n 2 -w 0 --inject-error \
    --transport "$transport" >"$out" 2>&1
rc=$?
[ "$rc" = 1 ] || { cat "$out"; die "--inject-error P=40: exit status $rc, expected 1"; }
grep -q '^# Out of bounds values : 1 FAILED$' "$out" || die "--inject-error P=40: footer not FAILED"

# the ranks on two carrier threads (thread transport only): every
# collective checked, the header says so
if [ "$transport" = thread ]; then
    PLD_FIBERS=2 "$pld" bench all -d 0-39 -b 8 -e 64K -f 64 -c 1 -n 3 -w 1 >"$out" 2>&1
    rc=$?
    [ "$rc" = 0 ] || { cat "$out"; die "PLD_FIBERS=2 bench all P=40: exit status $rc"; }
    grep -q '^# total #wrong: 0, cost card = byte counters: yes' "$out" ||
        { cat "$out"; die "PLD_FIBERS=2 bench all P=40: wrong elements or card mismatch"; }
    grep -q '^# pld bench .*, transport thread (ranks on 2 carrier threads, PLD_FIBERS), ' "$out" ||
        die "PLD_FIBERS=2: the header does not name the carriers"
fi

# a PLD_RULES file: the header names it, and auto follows its rules with
# every element checked and the cards (made with the same rules) equal to
# the counters
printf 'pld_rules 1\nbroadcast 2-* 8K-* binomial\nallgather 2-* 1K-* doubling\nallreduce 2-* 8K-* rabenseifner\nall_to_all 2-* 0-64 bruck\nsync 2-* * dissemination\n' >"$out.rules"
PLD_RULES="$out.rules" "$pld" bench all -d 0-6 -b 8 -e 256K -f 16 -c 1 -n 2 -w 1 \
    --transport "$transport" >"$out" 2>&1
rc=$?
[ "$rc" = 0 ] || { cat "$out"; die "PLD_RULES bench all P=7: exit status $rc"; }
grep -q '^# total #wrong: 0, cost card = byte counters: yes' "$out" ||
    { cat "$out"; die "PLD_RULES bench all P=7: wrong elements or card mismatch"; }
grep -q "^# PLD_RULES $out.rules: 5 rules decide auto's choices" "$out" ||
    die "PLD_RULES: the header does not name the rules"
rm -f "$out.rules"

[ "$fail" = 0 ] && echo "PASS"
exit "$fail"
