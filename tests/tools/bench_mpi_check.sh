#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/tools/bench_mpi_check.sh MPIEXEC PLD
# `pld bench` on the mpi transport under mpirun: every collective at P=3,
# checked, with --vs-mpi. The table is printed once (by the root process),
# every pld row is followed by MPI's time on the same buffers and the
# ratio, the byte counters equal the cost card, the CSV holds both pld and
# mpi rows; a spoiled element is counted (exit 1); --vs-mpi refuses dtypes
# MPI has no type for, and the thread transport (exit 2).
set -u
mpiexec=$1
pld=$2
fail=0
out=$(mktemp)
trap 'rm -f "$out" "$out.csv"' EXIT
die() { echo "FAIL: $*"; fail=1; }


np=3
"$mpiexec" -n $np --oversubscribe "$pld" bench all --transport mpi --vs-mpi -b 8 -e 256K -f 32 \
    -c 1 -n 3 -w 1 --warmup-ms 0 --csv "$out.csv" >"$out" 2>&1
rc=$?
cat "$out"
[ "$rc" = 0 ] || die "exit status $rc, expected 0"
grep -q '^# total #wrong: 0, cost card = byte counters: yes' "$out" ||
    die "not every row was right and equal to its cost card"
[ "$(grep -c '^# pld bench 0' "$out")" = 7 ] || die "expected 7 tables printed once each"
grep -q "transport mpi, platform a2a3sim, P=$np" "$out" || die "no 'transport mpi, P=$np' header"
rows=$(grep -v '^#' "$out" | grep -c .)
mpi_rows=$(grep -c '^#   MPI_[A-Za-z_]* .* us   pld/MPI time ' "$out")
[ "$rows" -gt 0 ] && [ "$rows" = "$mpi_rows" ] ||
    die "$rows pld rows but $mpi_rows MPI comparison lines"
for f in MPI_Barrier MPI_Bcast MPI_Allgather MPI_Reduce_scatter_block MPI_Allreduce \
         MPI_Alltoall MPI_Alltoallv; do
    grep -q "^#   $f " "$out" || die "no $f line"
done
# a CSV line per column group measured (allgather: out-of-place and in-place)
cells=$(grep -v '^#' "$out" | awk '{ n += ($6 != "N/A") + ($10 != "N/A") } END { print n }')
[ "$(grep -c '^pld,' "$out.csv")" = "$cells" ] || die "CSV: pld rows missing"
[ "$(grep -c '^mpi,' "$out.csv")" = "$rows" ] || die "CSV: mpi rows missing"

# the checker counts a spoiled element on the mpi transport too
"$mpiexec" -n 2 --oversubscribe "$pld" bench allgather --transport mpi -b 1K -e 1K -c 1 -n 2 \
    --warmup-ms 0 --inject-error >"$out" 2>&1
rc=$?
[ "$rc" = 1 ] || { cat "$out"; die "--inject-error: exit status $rc, expected 1"; }
grep -q 'allgather: #wrong [1-9]' "$out" || { cat "$out"; die "--inject-error: no wrong count"; }

# refusals
"$mpiexec" -n 2 --oversubscribe "$pld" bench allreduce --transport mpi --vs-mpi --dtype fp16 \
    >"$out" 2>&1
rc=$?
[ "$rc" = 2 ] && grep -q 'MPI has no fp16 type' "$out" ||
    { cat "$out"; die "--vs-mpi --dtype fp16: status $rc"; }
"$pld" bench allgather --vs-mpi >"$out" 2>&1
rc=$?
[ "$rc" = 2 ] && grep -q 'needs --transport mpi under mpirun' "$out" ||
    { cat "$out"; die "--vs-mpi on the thread transport: status $rc"; }

[ "$fail" = 0 ] && echo "bench_mpi_check: OK"
exit $fail
