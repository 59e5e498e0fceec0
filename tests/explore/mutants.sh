#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every planted protocol bug (src/coll/mutant.h) must be found by the
# schedule explorer on the mixed back-to-back program, and its failing seed
# must replay: two reruns with that seed fail with the same message.
# Prints the mutation table (seeds until the first failure, and how many of
# the first N seeds fail, N = 20 unless --rate N; --rate 0 skips the count)
# and OK.
#   mutants.sh [--rate N] [--only NAME[,NAME...]] PLD_TOOL MIXED_REUSE_MUTANTS [PROGRAM ARGS...]
# (the program's arguments default to -p a5sim -d 0-2 --iters 300)
# --only runs the named mutants: the log-depth algorithms' bugs need more
# ranks than the P = 3 table has (binomial_no_wait a rank whose tree parent
# is not the root, four ranks or more), so they run apart.
set -uo pipefail
rate=20
only=
while [ "${1:-}" = --rate ] || [ "${1:-}" = --only ]; do
    [ "$1" = --rate ] && rate=$2
    [ "$1" = --only ] && only=$2
    shift 2
done
pld=$1
prog=$2
args=(-p a5sim -d 0-2 --iters 300)
[ $# -gt 2 ] && args=("${@:3}")
mutants=(rooted_bcast no_epilogue eq_wait push_after_barrier mesh_no_readdone
         ring_drop_progress a2av_count_first combine_early
         ll_one_slot ll_no_wait ll_flag_before_data rsag_no_round2 rsag_no_readdone
         moe_recv_early moe_combine_no_done rab_no_fold_wait rab_no_done
         bruck_no_ready bruck_flag_first bruck_no_done)
[ -n "$only" ] && IFS=, read -r -a mutants <<<"$only"
fail=0
out=$(mktemp)
trap 'rm -f "$out" "$out".1 "$out".2' EXIT

# the unmutated program passes
if ! "$pld" explore --seeds 50 "$prog" "${args[@]}" >"$out" 2>&1; then
    echo "the unmutated program failed under the explorer:"
    cat "$out"
    exit 1
fi

printf '%-20s %-12s %-14s %s\n' mutant "first seed" "failing/$rate" "first failure"
for m in "${mutants[@]}"; do
    PLD_MUTANT=$m "$pld" explore --jobs 1 --seeds 200 "$prog" "${args[@]}" >"$out" 2>&1
    seed=$(sed -n 's/^pld explore: seed \([0-9]*\) failed.*/\1/p' "$out")
    if [ -z "$seed" ]; then
        echo "$m: NOT FOUND in 200 seeds"
        fail=1
        continue
    fi
    # the replay: the same seed, the same failure, twice
    for k in 1 2; do
        PLD_MUTANT=$m PLD_SCHED=$seed PLD_CHECK=race,signals "$prog" "${args[@]}" >"$out.$k" 2>&1
    done
    if ! cmp -s "$out.1" "$out.2" || ! grep -q "PLD_SCHED=$seed" "$out.1"; then
        echo "$m: seed $seed does not replay the same failure:"
        diff "$out.1" "$out.2" | head -20
        fail=1
    fi
    # how often: the first $rate seeds, every one run
    n=0
    for s in $(seq 1 "$rate"); do # (none for --rate 0)
        PLD_MUTANT=$m PLD_SCHED=$s PLD_CHECK=race,signals "$prog" "${args[@]}" >/dev/null 2>&1 ||
            n=$((n + 1))
    done
    what=$(grep -o 'PLD_ERR_[A-Z]*' "$out.1" | head -1)
    rated="$n/$rate"
    [ "$rate" = 0 ] && rated=-
    printf '%-20s %-12s %-14s %s\n' "$m" "$seed" "$rated" "$what"
done
[ $fail = 0 ] && echo OK
exit $fail
