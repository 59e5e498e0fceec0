#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every process of an mpi job decides with rank 0's PLD_RULES file: the
# processes get different files (and the others a file that is not one),
# and each must see rank 0's rule (rules_rank0 checks it, then runs the
# allreduce the rule picks and checks every element). A file of rank 0's
# that is not one stops world init in every process, the root naming the
# line. Prints OK when every case holds.
# usage: rules_rank0.sh <mpiexec> <rules_rank0 binary>
set -u
mpiexec=$1 bin=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf 'pld_rules 1\n# rank 0 in the first case\nallreduce 2-* 8K-* rabenseifner\n' >"$dir/halving.txt"
printf 'pld_rules 1\nallreduce 2-* * mesh\n' >"$dir/mesh.txt"
printf 'pld_rules 1\nallreduce 2-* * ring\n' >"$dir/bad.txt"
fail=0
# the environment of a process given <file>: PLD_RULES unset for "none"
envof() { [ "$1" = "$dir/none.txt" ] && echo "-u PLD_RULES" || echo "PLD_RULES=$1"; }
# run <rank 0's file> <the others' file> <expected line> <expected mode>: the job's output
run() {
    timeout 60 "$mpiexec" --oversubscribe -n 1 env $(envof "$1") "$bin" "$3" "$4" : \
        -n 2 env $(envof "$2") "$bin" "$3" "$4" 2>&1
}
# rank 0's rule everywhere: whatever file the others name, a bad one, or
# none (they still take part in receiving rank 0's); none at rank 0: the
# cost model everywhere (line 0)
for c in "halving mesh 3 rabenseifner" "mesh bad 2 mesh" "halving none 3 rabenseifner" \
    "none halving 0 mesh"; do
    set -- $c
    out=$(run "$dir/$1.txt" "$dir/$2.txt" "$3" "$4")
    if ! grep -qx OK <<<"$out" || grep -q FAIL <<<"$out"; then
        echo "FAIL: rank 0 with $1.txt, the others with $2.txt: not rank 0's rule everywhere:"
        echo "$out"
        fail=1
    fi
done
out=$(run "$dir/bad.txt" "$dir/halving.txt" 3 rabenseifner)
if grep -qx OK <<<"$out" ||
    ! grep -q "PLD_RULES $dir/bad.txt:2: 'ring' is no allreduce choice" <<<"$out" ||
    ! grep -q "rank 0 refused its rules file" <<<"$out"; then
    echo "FAIL: rank 0's bad file did not stop every process, naming the line:"
    echo "$out"
    fail=1
fi
[ "$fail" = 0 ] && echo OK
exit "$fail"
