#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# PLD_TRACE under mpirun: besides the per-rank files <trace>.rank<r>, rank 0
# merges them into <trace> at finalize (the files share a filesystem here):
# one process per rank, named "rank r (host)", each rank's track named, and
# flow arrows from a notify on one rank to the wait it released on another.
# `pld trace merge` on the per-rank files gives the same file byte for byte.
# usage: trace_merge_mpi.sh <mpiexec> <13_allgather binary> <pld tool> <np>
set -u
mpiexec=$1 bin=$2 pld=$3 np=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
PLD_TRACE=$dir/t.json "$mpiexec" -n "$np" --oversubscribe "$bin" --transport mpi --mode hand ||
    { echo "FAIL: the run failed"; exit 1; }
fail=0
t=$dir/t.json
[ -s "$t" ] || { echo "FAIL: rank 0 did not merge the ranks into $t: $(ls "$dir")"; exit 1; }
head -c 40 "$t" | grep -q '^{"displayTimeUnit":"ns","traceEvents":\[' ||
    { echo "FAIL: $t is not a trace"; fail=1; }
tail -c 4 "$t" | grep -q ']}' || { echo "FAIL: $t is not closed"; fail=1; }
for ((r = 0; r < np; r++)); do
    grep -q "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":$r,\"args\":{\"name\":\"rank $r (" "$t" ||
        { echo "FAIL: no process for rank $r"; fail=1; }
    grep -q "\"pid\":$r,\"tid\":$((r * 1000)),\"args\":{\"name\":\"rank $r (device $r)\"}" "$t" ||
        { echo "FAIL: rank $r's track is not named"; fail=1; }
    grep -q "\"name\":\"pld_notify\",\"ph\":\"X\",\"pid\":$r,\|\"name\":\"pld_put\",\"ph\":\"X\",\"pid\":$r," "$t" ||
        { echo "FAIL: no slices of rank $r in its process"; fail=1; }
done
# an arrow between two processes: its start and end share an id
cross=0
while read -r id spid; do
    fpid=$(grep -o "\"ph\":\"f\",\"bp\":\"e\",\"id\":$id,\"pid\":[0-9]*" "$t" | sed 's/.*"pid"://')
    [ -n "$fpid" ] || { echo "FAIL: flow $id has no end"; fail=1; continue; }
    [ "$fpid" != "$spid" ] && cross=$((cross + 1))
done < <(grep -o '"ph":"s","id":[0-9]*,"pid":[0-9]*' "$t" | sed 's/.*"id":\([0-9]*\),"pid":\([0-9]*\)/\1 \2/')
[ "$cross" -gt 0 ] || { echo "FAIL: no flow arrow from one rank to another"; fail=1; }
# the tool merges the same files into the same trace
files=()
for ((r = 0; r < np; r++)); do files+=("$dir/t.json.rank$r"); done
"$pld" trace merge "$dir/m.json" "${files[@]}" || { echo "FAIL: pld trace merge failed"; fail=1; }
cmp -s "$t" "$dir/m.json" || { echo "FAIL: pld trace merge differs from rank 0's merge"; fail=1; }
ls "$dir" | grep -q part && { echo "FAIL: part files left: $(ls "$dir")"; fail=1; }
[ "$fail" = 0 ] && echo "OK ($cross arrows across ranks)"
exit $fail
