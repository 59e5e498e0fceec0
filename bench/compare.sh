#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench/compare.sh - pld against MPI's own collectives, same sweep, one table.
#
# For every repeat and every P, back to back:
#   pld bench all --transport thread   -d 0-(P-1) ...  (one launch per size
#   and column group: allgather runs out-of-place and in-place)
#   (and the variant allreduce --mode ring)
#   pld bench all --transport process  -d 0-(P-1) ...  (and the variants)
#   with -T "... mpi": mpirun -np P pld bench all --transport mpi ...
#   mpirun -np P --oversubscribe --allow-run-as-root bench/mpi_coll all ...
# then the median time of each (collective, P, size) over the repeats, and the
# ratios pld time / MPI time (< 1: pld is faster). The variants appear as
# allreduce_ring and allgather_inplace, against MPI_Allreduce / MPI_Allgather. The table goes to stdout,
# the same rows as CSV to -o (default compare.csv), every raw run is kept in
# the work directory (-k keeps it, printed at the end).
#
# The default sweep (16 B .. 16 MiB x4, 10 timed calls after at least 3
# warmup calls and 50 ms of warmup, 3 repeats, P = 2 4 8) takes about 5
# minutes on a 2-core machine. Widen it with e.g.
#   bench/compare.sh -b 8 -e 64M -f 2 -n 20 -w 5 -r 5
# Environment: MPIRUN (default mpirun), MPIRUN_FLAGS (extra mpirun options).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
build="$here/../build"
plist="2 4 8"
b=16
e=16M
f=4
n=10
w=3
reps=3
colls=all
transports="thread process"
out=compare.csv
keep=0

usage() {
    cat <<EOF
usage: bench/compare.sh [options]
  -B DIR     build directory with pld and bench/mpi_coll (default: $build)
  -P LIST    rank counts (default "$plist")
  -b SIZE    smallest size (default $b)      -e SIZE  largest size (default $e)
  -f F       size factor (default $f)        -n N     timed calls per size (default $n)
  -w N       warmup calls (default $w)       -r N     repeats, median taken (default $reps)
  -C COLL    one collective or all (default $colls)
  -T LIST    pld transports (default "$transports"; add mpi for pld's mpi
             transport under mpirun)
  -o FILE    CSV of the ratio table (default $out)
  -k         keep the raw runs (work directory printed at the end)
EOF
    exit "$1"
}

while getopts "B:P:b:e:f:n:w:r:C:T:o:kh" opt; do
    case $opt in
    B) build=$OPTARG ;;
    P) plist=$OPTARG ;;
    b) b=$OPTARG ;;
    e) e=$OPTARG ;;
    f) f=$OPTARG ;;
    n) n=$OPTARG ;;
    w) w=$OPTARG ;;
    r) reps=$OPTARG ;;
    C) colls=$OPTARG ;;
    T) transports=$OPTARG ;;
    o) out=$OPTARG ;;
    k) keep=1 ;;
    h) usage 0 ;;
    *) usage 2 ;;
    esac
done

pld="$build/pld"
mpi="$build/bench/mpi_coll"
[ -x "$pld" ] || { echo "compare.sh: $pld not found (build first, or pass -B)" >&2; exit 2; }
have_mpi=1
if [ ! -x "$mpi" ]; then
    echo "compare.sh: $mpi not found (CMake did not find MPI?): pld only, no ratios" >&2
    have_mpi=0
elif ! command -v "${MPIRUN:-mpirun}" >/dev/null 2>&1; then
    echo "compare.sh: ${MPIRUN:-mpirun} not found: pld only, no ratios" >&2
    have_mpi=0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/pld-compare.XXXXXX")
[ "$keep" = 1 ] || trap 'rm -rf "$work"' EXIT
sweep="-b $b -e $e -f $f -n $n -w $w"
start=$(date +%s)

echo "# compare.sh: pld $("$pld" info | head -1 | cut -d' ' -f2), sweep $sweep, P = $plist, $reps repeats, $(nproc) cores" >&2
r=1
while [ "$r" -le "$reps" ]; do
    for p in $plist; do
        devs="0-$((p - 1))"
        for t in $transports; do
            echo "# [$(($(date +%s) - start)) s] repeat $r/$reps P=$p pld $t" >&2
            # the default algorithms (allgather: out-of-place and in-place, the
            # CSV's mode push and inplace), then the ring allreduce
            for v in default allreduce:ring; do
                case $v in
                default) args="$colls" ;;
                *) [ "$colls" = all ] || [ "$colls" = "${v%%:*}" ] || continue
                   args="${v%%:*} --mode ${v#*:}" ;;
                esac
                tag="$t-$(echo "$v" | tr : -)-$p-$r"
                if [ "$t" = mpi ]; then # one process per rank
                    launch="${MPIRUN:-mpirun} -np $p --oversubscribe --allow-run-as-root ${MPIRUN_FLAGS:-} $pld"
                    where=""
                else
                    launch=$pld
                    where="-d $devs"
                fi
                # shellcheck disable=SC2086
                $launch bench $args $where --transport "$t" $sweep \
                    --csv "$work/pld-$tag.csv" >"$work/pld-$tag.txt" 2>&1 ||
                    echo "compare.sh: pld bench $args ($t, P=$p) failed, see $work/pld-$tag.txt" >&2
            done
        done
        if [ "$have_mpi" = 1 ]; then
            echo "# [$(($(date +%s) - start)) s] repeat $r/$reps P=$p mpi" >&2
            # shellcheck disable=SC2086
            "${MPIRUN:-mpirun}" -np "$p" --oversubscribe --allow-run-as-root ${MPIRUN_FLAGS:-} \
                "$mpi" "$colls" $sweep --csv "$work/mpi-$p-$r.csv" >"$work/mpi-$p-$r.txt" 2>&1 ||
                echo "compare.sh: mpi_coll P=$p failed, see $work/mpi-$p-$r.txt" >&2
        fi
    done
    r=$((r + 1))
done
echo "# [$(($(date +%s) - start)) s] done" >&2

# Medians per (implementation, collective, P, size); implementation = the
# transport for pld, "mpi" for MPI. One row per (collective, P, size), sorted
# by collective (pld bench's order), P and size; the table to stdout, the CSV
# to $out.
tab=$(printf '\t')
cat "$work"/*.csv 2>/dev/null | awk -F, -v transports="$transports" '
function median(key,    n, i, j, v, a) {
    n = cnt[key]
    if (n == 0) return ""
    for (i = 1; i <= n; i++) a[i] = vals[key, i]
    for (i = 2; i <= n; i++) { v = a[i]; for (j = i - 1; j > 0 && a[j] > v; j--) a[j + 1] = a[j]; a[j + 1] = v }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function ratio(x, y) { return (x == "" || y == "" || y <= 0) ? "" : sprintf("%.2f", x / y) }
function show(x) { return x == "" ? "-" : x }
function add(impl, name,    row) {
    row = name SUBSEP $5 SUBSEP $6
    vals[impl, row, ++cnt[impl, row]] = $11
    if (!(row in seen)) { seen[row] = 1; rows[++nrows] = row; coll[row] = name; np[row] = $5; sz[row] = $6 }
}
BEGIN {
    split("barrier broadcast allgather allgather_inplace reduce_scatter allreduce allreduce_ring all_to_all all_to_all_v", names, " ")
    for (i in names) rank_of[names[i]] = i
}
$1 == "tool" { next }
$1 == "mpi" {
    add("ref", $2)
    # the pld variants are compared with the same MPI collective
    if ($2 == "allreduce") add("ref", "allreduce_ring")
    if ($2 == "allgather") add("ref", "allgather_inplace")
    next
}
{ add("pld-" $4, ($3 == "ring" || $3 == "inplace") ? $2 "_" $3 : $2) }
END {
    nt = split(transports, t, " ")
    for (i = 1; i <= nrows; i++) {
        row = rows[i]
        m = median("ref" SUBSEP row)
        line = sprintf(" %-17s %3d %10d", coll[row], np[row], sz[row])
        c = coll[row] "," np[row] "," sz[row]
        for (k = 1; k <= nt; k++) {
            x[k] = median("pld-" t[k] SUBSEP row)
            line = line sprintf(" %12s", show(x[k] == "" ? "" : sprintf("%.2f", x[k])))
            c = c "," x[k]
        }
        line = line sprintf(" %12s", show(m == "" ? "" : sprintf("%.2f", m)))
        c = c "," m
        for (k = 1; k <= nt; k++) {
            q = ratio(x[k], m)
            line = line sprintf(" %12s", show(q))
            c = c "," q
        }
        printf("%d\t%d\t%d\t%s\t%s\n", rank_of[coll[row]] + 0, np[row], sz[row], line, c)
    }
}' | sort -t "$tab" -k1,1n -k2,2n -k3,3n | awk -F '\t' -v transports="$transports" -v out="$out" '
BEGIN {
    nt = split(transports, t, " ")
    hdr = sprintf("%-17s %3s %10s", "collective", "P", "size(B)")
    csv = "collective,P,size"
    # pld on its mpi transport is "pld_mpi"; "mpi" is the MPI library collective
    for (k = 1; k <= nt; k++) if (t[k] == "mpi") t[k] = "pld_mpi"
    for (k = 1; k <= nt; k++) { hdr = hdr sprintf(" %12s", t[k] "_us"); csv = csv "," t[k] "_us" }
    hdr = hdr sprintf(" %12s", "mpi_us"); csv = csv ",mpi_us"
    for (k = 1; k <= nt; k++) { hdr = hdr sprintf(" %12s", t[k] "/mpi"); csv = csv "," t[k] "_over_mpi" }
    print "# median time per call (us) over the repeats; ratio = pld / MPI (< 1: pld faster)"
    print "#" hdr
    print csv > out
}
{
    print $4
    print $5 > out
    nf = split($5, f, ",")
    for (k = 1; k <= nt; k++) {
        q = f[4 + nt + k]
        if (q != "") { cells[k]++; if (q + 0 <= 1) wins[k]++ }
    }
}
END {
    for (k = 1; k <= nt; k++)
        if (cells[k]) printf("# pld %s: not slower than MPI in %d of %d cells\n", t[k], wins[k] + 0, cells[k])
}'
echo "# CSV: $out" >&2
[ "$keep" = 1 ] && echo "# raw runs: $work" >&2
exit 0
