#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# PLD_DEBUG under mpirun with PLD_DEBUG_FILE=<dir>/log.%h.%p: one file per
# process, named with its host and pid; every line in NCCL_DEBUG's shape
# "host:pid:tid [rank N] pld LEVEL ...", naming the process's own host and
# pid, and the host side of each process speaking as its rank, not [host].
# usage: debug_mpi.sh <mpiexec> <13_allgather binary> <np>
set -u
mpiexec=$1 bin=$2 np=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
PLD_DEBUG=TRACE PLD_DEBUG_FILE="$dir/log.%h.%p" "$mpiexec" -n "$np" --oversubscribe "$bin" \
    --transport mpi --mode builtin >/dev/null || { echo "FAIL: the run failed"; exit 1; }
host=$(hostname)
fail=0
files=$(ls "$dir" | wc -l)
[ "$files" = "$np" ] || { echo "FAIL: $files log files for $np processes: $(ls "$dir")"; fail=1; }
seen=""
for f in "$dir"/log.*; do
    name=${f##*/}
    pid=${name##*.}
    [ "$name" = "log.$host.$pid" ] || { echo "FAIL: '$name' is not log.<host>.<pid>"; fail=1; }
    bad=$(grep -Ev "^$host:$pid:[0-9]+ \[rank [0-9]+\] pld (WARN|INFO|TRACE) " "$f")
    [ -z "$bad" ] || { echo "FAIL: $name: lines not 'host:pid:tid [rank N] pld LEVEL':"; echo "$bad"; fail=1; }
    r=$(sed -n 's/.*\[rank \([0-9]*\)\] pld INFO world: .*/\1/p' "$f" | head -1)
    [ -n "$r" ] || { echo "FAIL: $name: the host side does not speak as its rank"; fail=1; continue; }
    grep -q "\[rank $r\] pld TRACE pld_allgather called from " "$f" ||
        { echo "FAIL: $name: no TRACE line of rank $r's call"; fail=1; }
    grep -q "\[rank $r\] pld INFO mpi: $np processes" "$f" ||
        { echo "FAIL: $name: no TRANSPORT line"; fail=1; }
    seen="$seen $r"
done
[ "$(echo $seen | tr ' ' '\n' | sort -n | tr '\n' ' ')" = "$(seq 0 $((np - 1)) | tr '\n' ' ')" ] ||
    { echo "FAIL: ranks seen:$seen"; fail=1; }
[ "$fail" = 0 ] && echo OK
exit $fail
