#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A rank of the mpi transport dies (abort) inside a launch while its peers
# wait for it: the MPI launcher must end the whole job with a non-zero status
# within a few seconds and leave no process behind.
# usage: rank_death.sh <mpiexec> <test_mpi binary> <np>
set -u
mpiexec=$1 bin=$2 np=$3
start=$(date +%s%N)
timeout 30 "$mpiexec" -n "$np" --oversubscribe "$bin" --die >/dev/null 2>&1
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
if [ "$rc" -eq 0 ]; then echo "FAIL: the job exited 0 after a rank died"; exit 1; fi
if [ "$rc" -eq 124 ]; then echo "FAIL: the job hung after a rank died (killed after 30 s)"; exit 1; fi
sleep 0.5
if pgrep -f -- "$bin --die" >/dev/null; then
    echo "FAIL: processes left behind:"; pgrep -af -- "$bin --die"; exit 1
fi
echo "job ended with status $rc in $ms ms, no process left"
echo OK
