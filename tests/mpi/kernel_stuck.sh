#!/usr/bin/env bash
# A rank of the mpi transport loops for ever in its own code inside a
# kernel while its peers wait for it (PLD_WAIT_TIMEOUT_MS=2000). A single
# MPI process cannot be stopped on its own, so once the peers have timed
# out and the stuck rank has not left within the grace period, pld aborts
# the job: it must end within the wait timeout + 1 s (+ launcher slack)
# with a non-zero status, saying why, and leave no process behind.
# usage: kernel_stuck.sh <mpiexec> <exit_kernel binary> <np>
set -u
mpiexec=$1 bin=$2 np=$3
timeout_ms=2000
fail=0
out=$(mktemp)
start=$(date +%s%N)
PLD_WAIT_TIMEOUT_MS=$timeout_ms timeout 60 "$mpiexec" -n "$np" --oversubscribe "$bin" --stuck \
    >"$out" 2>&1
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "job ended with status $rc in $ms ms (wait timeout $timeout_ms ms)"
if [ "$rc" -eq 0 ]; then echo "FAIL: the job exited 0"; fail=1; fi
if [ "$rc" -eq 124 ]; then echo "FAIL: the job hung (killed after 60 s)"; fail=1; fi
if [ "$ms" -ge $((timeout_ms + 4000)) ]; then
    echo "FAIL: the job took $ms ms, more than the wait timeout + 4 s"; fail=1
fi
if ! grep -q "did not leave its kernel within 500 ms" "$out"; then
    echo "FAIL: no message naming the stuck peer"; fail=1
fi
sleep 0.5
if pgrep -f -- "^$bin" >/dev/null; then
    echo "FAIL: processes left behind:"; pgrep -af -- "^$bin"; pkill -9 -f -- "^$bin"; fail=1
fi
[ "$fail" -eq 0 ] || { echo "--- output"; cat "$out"; }
rm -f "$out"
[ "$fail" -eq 0 ] && echo OK
exit "$fail"
