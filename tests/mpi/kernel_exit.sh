#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A rank of the mpi transport calls exit(3) inside a kernel while its peers
# wait for it (PLD_WAIT_TIMEOUT_MS=2000). The job must end within the wait
# timeout with a non-zero status (the rank's 3), leaving no process and none
# of the shared-memory files its processes mapped. Once with MPI initialised
# by pld, once by the program (which also finalizes it at exit). Then the
# rank loops for ever in its own code instead (--stuck): a single MPI
# process cannot be stopped on its own, so once its peers have timed out
# and it has not left within the grace period, pld aborts the job.
# usage: kernel_exit.sh <mpiexec> <exit_kernel binary> <np>
set -u
mpiexec=$1 bin=$2 np=$3
timeout_ms=2000
fail=0
for mode in pld --user-mpi --stuck; do
    out=$(mktemp)
    start=$(date +%s%N)
    PLD_WAIT_TIMEOUT_MS=$timeout_ms timeout 60 "$mpiexec" -n "$np" --oversubscribe "$bin" \
        $([ "$mode" = pld ] || echo "$mode") >"$out" 2>&1
    rc=$?
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    echo "[$mode] job ended with status $rc in $ms ms (wait timeout $timeout_ms ms)"
    if [ "$rc" -eq 0 ]; then echo "FAIL [$mode]: the job exited 0"; fail=1; fi
    if [ "$rc" -eq 124 ]; then echo "FAIL [$mode]: the job hung (killed after 60 s)"; fail=1; fi
    # the whole job, start-up included: the wait timeout plus 3 s of slack
    # for the launcher on a loaded machine (it ends in ~0.5 s when idle)
    if [ "$ms" -ge $((timeout_ms + 3000)) ]; then
        echo "FAIL [$mode]: the job took $ms ms, more than the wait timeout + 3 s"; fail=1
    fi
    want="exit(3) was called inside a kernel"
    [ "$mode" = --stuck ] && want="did not leave its kernel within 500 ms"
    if ! grep -q "$want" "$out"; then
        echo "FAIL [$mode]: no message saying '$want'"; fail=1
    fi
    sleep 0.5
    if pgrep -f -- "^$bin" >/dev/null; then
        echo "FAIL [$mode]: processes left behind:"; pgrep -af -- "^$bin"
        pkill -9 -f -- "^$bin"; fail=1
    fi
    files=$(sed -n 's/^shm: //p' "$out" | sort -u)
    if [ -z "$files" ]; then echo "note [$mode]: the processes mapped no /dev/shm file"; fi
    for f in $files; do
        if [ -e "$f" ]; then echo "FAIL [$mode]: $f left behind"; fail=1; fi
    done
    [ "$fail" -eq 0 ] || { echo "--- output"; cat "$out"; }
    rm -f "$out"
done
[ "$fail" -eq 0 ] && echo OK
exit "$fail"
