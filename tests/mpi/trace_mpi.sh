#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# PLD_TRACE on the mpi transport: every process writes the events of its rank
# to <trace>.rank<r> (processes on other machines cannot share one file),
# each a complete JSON document holding the builtin and its primitives, and
# no part file is left behind (rank 0's merge of them into <trace> is
# trace_merge_mpi.sh's).
# usage: trace_mpi.sh <mpiexec> <13_allgather binary> <np>
set -u
mpiexec=$1 bin=$2 np=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
PLD_TRACE=$dir/t.json "$mpiexec" -n "$np" --oversubscribe "$bin" --transport mpi --mode builtin ||
    { echo "FAIL: the run failed"; exit 1; }
fail=0
for ((r = 0; r < np; r++)); do
    f=$dir/t.json.rank$r
    [ -s "$f" ] || { echo "FAIL: no $f"; fail=1; continue; }
    head -c 40 "$f" | grep -q '^{"displayTimeUnit":"ns","traceEvents":\[' ||
        { echo "FAIL: $f is not a trace"; fail=1; }
    tail -c 4 "$f" | grep -q ']}' || { echo "FAIL: $f is not closed"; fail=1; }
    for ev in pld_allgather pld_put pld_notify "rank $r (device $r)"; do
        grep -q "\"$ev\"\|$ev" "$f" || { echo "FAIL: $f lacks $ev"; fail=1; }
    done
done
ls "$dir" | grep -q part && { echo "FAIL: part files left: $(ls "$dir")"; fail=1; }
[ "$fail" = 0 ] && echo OK
exit $fail
