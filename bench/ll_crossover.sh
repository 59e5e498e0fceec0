#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench/ll_crossover.sh - where the one-round path stops paying.
#
# For every repeat and every P, back to back, the same sweep twice:
#   PLD_LL_BYTES=0    pld bench all ...   (every call on the credit rounds)
#   PLD_LL_BYTES=64K  pld bench all ...   (every call that fits on one round)
# then, per collective, column group, P and size, the median time of each
# over the repeats and the ratio one-round / credit (< 1: one round is
# faster). size is pld bench's (the whole buffer of one rank): the payload
# per peer is size/P for allgather, reduce_scatter and all_to_all, size
# for broadcast and allreduce. Rows whose payload per peer does not fit
# the inbox at that P run the credit rounds in both sweeps (ratio ~1).
#
#   bench/ll_crossover.sh [-B build] [-P "2 4 8"] [-r 3] [-b 8] [-e 64K]
#                         [-n 200] [-T thread] [-o ll.csv]
set -eu

build=build
ps="2 4 8"
reps=3
minb=8
maxb=64K
iters=200
transport=thread
out=ll_crossover.csv
while getopts B:P:r:b:e:n:T:o: opt; do
    case $opt in
    B) build=$OPTARG ;;
    P) ps=$OPTARG ;;
    r) reps=$OPTARG ;;
    b) minb=$OPTARG ;;
    e) maxb=$OPTARG ;;
    n) iters=$OPTARG ;;
    T) transport=$OPTARG ;;
    o) out=$OPTARG ;;
    *)
        sed -n '3,16p' "$0"
        exit 2
        ;;
    esac
done
pld=$build/pld
[ -x "$pld" ] || {
    echo "ll_crossover.sh: $pld is not built" >&2
    exit 2
}
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
start=$(date +%s)
r=1
while [ "$r" -le "$reps" ]; do
    for p in $ps; do
        for ll in 0 64K; do
            echo "# [$(($(date +%s) - start)) s] repeat $r/$reps P=$p PLD_LL_BYTES=$ll" >&2
            for coll in broadcast allgather reduce_scatter allreduce all_to_all; do
                PLD_LL_BYTES=$ll "$pld" bench "$coll" -d "0-$((p - 1))" --transport "$transport" \
                    -b "$minb" -e "$maxb" -n "$iters" -w 20 \
                    --csv "$work/$coll.p$p.ll$ll.r$r.csv" >/dev/null
            done
        done
    done
    r=$((r + 1))
done

# one line per (collective, mode, P, size, ll, repeat): its time
for f in "$work"/*.csv; do
    ll=$(basename "$f" | sed 's/.*\.ll\([^.]*\)\..*/\1/')
    awk -F, -v ll="$ll" 'NR > 1 && $11 != "" { print $2 "," $3 "," $5 "," $6 "," ll "," $11 "," $18 }' "$f"
done | sort -t, -k1,1 -k2,2 -k3,3n -k4,4n -k5,5 -k6,6n >"$work/all.txt"

# medians, then the pairs
awk -F, '
function median(v, cnt,    i, j, x) {
    for (i = 2; i <= cnt; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
    return cnt % 2 ? v[(cnt + 1) / 2] : (v[cnt / 2] + v[cnt / 2 + 1]) / 2
}
{
    key = $1 "," $2 "," $3 "," $4 "," $5
    n[key]++; t[key, n[key]] = $6
    keys[$1 "," $2 "," $3 "," $4] = 1
}
END {
    for (k in keys) {
        split(k, f, ",")
        a = k ",0"; b = k ",64K"
        if (!(a in n) || !(b in n)) continue
        for (i = 1; i <= n[a]; i++) va[i] = t[a, i]
        for (i = 1; i <= n[b]; i++) vb[i] = t[b, i]
        ma = median(va, n[a]); mb = median(vb, n[b])
        printf "%s,%.3f,%.3f,%.2f\n", k, ma, mb, (ma > 0 ? mb / ma : 0)
    }
}' "$work/all.txt" | sort -t, -k1,1 -k2,2 -k3,3n -k4,4n >"$out"

printf '# one-round / credit, median time per call over %s repeats (%s transport)\n' "$reps" "$transport"
printf '%-16s %-8s %3s %8s %10s %10s %7s\n' collective mode P size credit_us one_rnd_us ratio
awk -F, '{ printf "%-16s %-8s %3d %8d %10.2f %10.2f %7.2f\n", $1, $2, $3, $4, $5, $6, $7 }' "$out"
echo "# CSV: $out" >&2
