#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/tools/usage_check.sh PLD
# Bad arguments are usage errors: exit status 2 and a message on stderr
# naming the problem (nothing on stdout). Help exits 0.
set -u
pld=$1
fail=0
err=$(mktemp)
trap 'rm -f "$err"' EXIT

expect() { # expect STATUS WORD... : runs pld WORD...
    want=$1
    shift
    got_out=$("$pld" "$@" 2>"$err")
    rc=$?
    if [ "$rc" != "$want" ]; then
        echo "FAIL: pld $*: exit status $rc, expected $want"
        cat "$err"
        fail=1
    elif [ "$want" = 2 ] && { [ ! -s "$err" ] || [ -n "$got_out" ]; }; then
        echo "FAIL: pld $*: a usage error must explain itself on stderr only"
        fail=1
    else
        echo "ok ($rc): pld $*  -> $(head -1 "$err")"
    fi
}

expect 2
expect 2 frobnicate
expect 2 bench
expect 2 bench allgatherer
expect 2 bench allgather allreduce
expect 2 bench allgather -b 1X
expect 2 bench allgather -b 64K -e 8
expect 2 bench allgather -e
expect 2 bench allgather -f 1
expect 2 bench allgather -n 0
expect 2 bench allgather -w -1
expect 2 bench allgather -c -1
expect 2 bench allgather -a 4
expect 2 bench allgather --datatype fp8
expect 2 bench allreduce -o avg
expect 2 bench allgather -r none
expect 2 bench allgather --dtype fp8
expect 2 bench allgather --op sum
expect 2 bench allgather --mode ring
expect 2 bench allreduce --mode inplace
expect 2 bench allgather --mode bruck
expect 2 bench all_to_all --mode doubling
grep -qF "(modes: auto|push|bruck)" "$err" || { echo "FAIL: all_to_all's modes not named"; fail=1; }
expect 2 bench all_to_all_v --mode bruck
expect 2 bench allreduce --op avg
expect 2 bench allreduce --dtype int8
expect 2 bench reduce_scatter --op max
expect 2 bench broadcast -d 0,1 --root 2
expect 2 bench allgather --no-such-option
expect 2 bench allgather -d 0,0
expect 2 bench allgather -d 0,1 --transport carrier-pigeon
# outside mpirun: a usage error whether or not MPI is built in (built in,
# MPI starts as a singleton of one process, which two devices do not fit).
# MPI keeps memory until exit in modules it unloads, which LeakSanitizer
# cannot name: no leak check for this one run.
saved_asan=${ASAN_OPTIONS:-}
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
expect 2 bench allgather -d 0,1 --transport mpi
grep -q "mpirun\|not built into" "$err" || { echo "FAIL: --transport mpi: no hint"; fail=1; }
export ASAN_OPTIONS="$saved_asan"
expect 2 bench allgather -d 0,1 --vs-mpi
expect 2 bench allgather -p a5
expect 2 cost
expect 2 cost allgather
expect 2 cost allgather -s 1M --mode mesh
expect 2 cost allreduce -s 1M --mode bruck
expect 2 cost allgather -s lots
expect 2 cost allgather all_to_all -s 1M
expect 2 cost broadcast -d 0-3 -s 1K --root 4
expect 2 info --verbose
# sizes are whole numbers of elements: 0 or a part of an element is an
# error naming the value and the dtype, never a silent 4 bytes
expect_says() { # expect_says WORDS: the last run's stderr holds WORDS
    grep -qF -- "$1" "$err" || { echo "FAIL: expected \"$1\" in:"; cat "$err"; fail=1; }
}
expect 2 bench allgather -b 0
expect_says "-b 0: a size is at least one fp32 element (4 bytes)"
expect 2 bench allgather -b 7
expect_says "-b 7: not a whole number of fp32 elements (4 bytes each); use a multiple of 4, e.g. 8"
expect 2 bench allreduce -b 4 -e 64 --dtype fp64
expect_says "-b 4: not a whole number of fp64 elements (8 bytes each)"
expect 2 bench allgather -b 8 -e 64 -i 6
expect_says "-i 6: not a whole number of fp32 elements"
expect 2 cost allgather -s 0
expect_says "-s 0: a size is at least one fp32 element"
expect 2 cost allgather -s 6
expect_says "-s 6: not a whole number of fp32 elements (4 bytes each)"
expect 0 cost allgather -s 6 --dtype int16
expect 0 --help
expect 0 bench --help
expect 0 cost --help
expect 0 info
[ "$fail" = 0 ] && echo "PASS"
exit "$fail"
