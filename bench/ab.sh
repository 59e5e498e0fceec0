#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench/ab.sh - two builds of pld side by side: is B slower than A anywhere?
#
#   bench/ab.sh [options] A_BUILD_DIR B_BUILD_DIR
#
# For every repeat, every P and every collective (and the variants allreduce
# --mode ring, allgather --mode inplace), runs `pld bench` of A then of B,
# back to back, so both see the same machine; then takes the median time of
# each (collective, P, size) over the repeats and prints B/A per cell
# (> 1: B is slower), marking the cells slower than the threshold. These
# machines are noisy: only medians of interleaved repeats mean anything.
# Extra environment for B only (PLD_CHECK=noargs, say) goes in B_ENV.
#
# Exit status: 0 (the table is the result), 2 usage.
set -eu

plist="2 4 8"
b=64
e=16M
f=4
n=20
w=5
reps=3
thr=5
out=ab.csv

usage() {
    cat <<EOF
usage: bench/ab.sh [options] A_BUILD_DIR B_BUILD_DIR
  -P LIST   rank counts (default "$plist")     -r N     repeats, median taken (default $reps)
  -b SIZE   smallest size (default $b)           -e SIZE  largest size (default $e)
  -f F      size factor (default $f)              -n N     timed calls per size (default $n)
  -w N      warmup calls (default $w)             -t PCT   mark cells slower by more (default $thr)
  -o FILE   CSV of the table (default $out)
Environment: A_ENV / B_ENV, extra variables for one side (e.g. B_ENV=PLD_CHECK=noargs)
EOF
    exit "$1"
}

while getopts "P:b:e:f:n:w:r:t:o:h" opt; do
    case $opt in
    P) plist=$OPTARG ;;
    b) b=$OPTARG ;;
    e) e=$OPTARG ;;
    f) f=$OPTARG ;;
    n) n=$OPTARG ;;
    w) w=$OPTARG ;;
    r) reps=$OPTARG ;;
    t) thr=$OPTARG ;;
    o) out=$OPTARG ;;
    h) usage 0 ;;
    *) usage 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || usage 2
a=$1
bb=$2
for d in "$a" "$bb"; do
    [ -x "$d/pld" ] || { echo "bench/ab.sh: no pld in $d" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

runs="all allreduce:ring allgather:inplace"
for rep in $(seq 1 "$reps"); do
    for p in $plist; do
        for run in $runs; do
            coll=${run%%:*}
            mode=
            [ "$coll" != "$run" ] && mode="--mode ${run#*:}"
            for side in A B; do
                if [ $side = A ]; then dir=$a; extra=${A_ENV:-}; else dir=$bb; extra=${B_ENV:-}; fi
                echo "rep $rep P=$p $run $side" >&2
                # shellcheck disable=SC2086
                env $extra "$dir/pld" bench "$coll" $mode -d "0-$((p - 1))" -b "$b" -e "$e" \
                    -f "$f" -n "$n" -w "$w" --csv "$work/$side.$rep.$p.$coll$mode.csv" \
                    >/dev/null 2>&1 || echo "bench/ab.sh: $side $run P=$p failed" >&2
            done
        done
    done
done

# collective(+mode),P,size -> median time per side; then the ratio
cat "$work"/A.*.csv | grep -v '^tool' | awk -F, '{print "A," $2 "_" $3 "," $5 "," $6 "," $11}' >"$work/all"
cat "$work"/B.*.csv | grep -v '^tool' | awk -F, '{print "B," $2 "_" $3 "," $5 "," $6 "," $11}' >>"$work/all"
sort -t, -k2,2 -k3,3n -k4,4n -k1,1 -k5,5g "$work/all" | awk -F, -v thr="$thr" '
function median(arr, k,   m) { m = int((k + 1) / 2); return k % 2 ? arr[m] : (arr[m] + arr[m + 1]) / 2 }
function flush() {
    if (key == "") return
    if (na && nb) {
        ma = median(ta, na); mb = median(tb, nb); r = mb / ma
        mark = r > 1 + thr / 100 ? "  <-- slower" : ""
        printf "%-26s %3s %10s %12.2f %12.2f %7.3f%s\n", c, p, s, ma, mb, r, mark
        printf "%s,%s,%s,%.3f,%.3f,%.4f\n", c, p, s, ma, mb, r > "/dev/stderr"
        n++; lsum += log(r); if (r > 1 + thr / 100) slow++
    }
    na = nb = 0
}
BEGIN { printf "%-26s %3s %10s %12s %12s %7s\n", "collective", "P", "size", "A us", "B us", "B/A" }
{
    k = $2 "," $3 "," $4
    if (k != key) { flush(); key = k; c = $2; p = $3; s = $4 }
    if ($1 == "A") ta[++na] = $5; else tb[++nb] = $5
}
END { flush(); printf "# %d cells, geometric mean B/A %.3f, %d slower by more than %s%%\n", n, exp(lsum / n), slow, thr }
' 2>"$out"
