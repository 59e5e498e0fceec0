#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/tools/moe_check.sh PLD [TRANSPORT]
# `pld moe`: the cards agree with the counters of a run (the "card" column
# says yes and nothing is wrong, exit 0) for every form on a5sim, the
# packed form moves exactly the counted rows (no padding) and the blocks
# form moves more, skewed routing included; the indexed form says why it
# does not run on a2a3sim; pld bench moe sweeps the forms over sizes; bad
# options are usage errors.
set -u
pld=$1
transport=${2:-thread}
fail=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
die() { echo "FAIL: $*"; fail=1; }

for spec in "-d 0-3 -E 2 -k 2" "-d 0-2 -E 4 -k 3 --zipf 1.5 --seed 7" "-d 0,1 -E 1 -k 1"; do
    # shellcheck disable=SC2086
    "$pld" moe $spec -t 16 -H 24 -p a5sim --dtype fp32 --run -n 2 -w 1 --repeats 1 --transport "$transport" \
        >"$out" 2>&1
    rc=$?
    cat "$out"
    [ "$rc" = 0 ] || die "pld moe $spec --run: exit status $rc"
    for form in blocks indexed packed; do
        line=$(grep "^ $form " "$out")
        [ -n "$line" ] || die "pld moe $spec: no $form row"
        # ... card wrong: the last two columns
        echo "$line" | awk '{ exit !($(NF-1) == "yes" && $NF == 0) }' ||
            die "pld moe $spec: $form: counters differ from the card or wrong counts"
    done
    # packed: no padding; the busiest rank's bytes to peers at most the blocks form's
    grep "^ packed " "$out" | awk '{ exit !($5 == 0 && $6 == 0) }' || die "pld moe $spec: packed pads"
    b=$(grep "^ blocks " "$out" | awk '{ print $4 }')
    p=$(grep "^ packed " "$out" | awk '{ print $4 }')
    [ "$p" -le "$b" ] || die "pld moe $spec: packed moves $p bytes, blocks $b"
done

"$pld" moe -d 0-3 -t 8 -H 8 --run -n 1 -w 0 --repeats 1 --transport "$transport" >"$out" 2>&1 ||
    die "pld moe on a2a3sim: exit status $?"
grep "^ indexed " "$out" | grep -q "needs the a5sim URMA model" ||
    die "pld moe on a2a3sim: the indexed form does not say why it did not run"

# pld bench moe: a sweep of every form on one skewed routing, each card checked
"$pld" bench moe -d 0-2 -E 2 -k 2 -t 16 --zipf 1.1 -p a5sim -b 4K -e 64K -n 2 -w 1 --repeats 1 \
    --transport "$transport" >"$out" 2>&1 || die "pld bench moe: exit status $?"
cat "$out"
[ "$(grep -c ' yes ' "$out")" = 9 ] || die "pld bench moe: want 3 sizes x 3 forms with their cards"
"$pld" bench moe -d 0-2 --mode nope >"$out" 2>&1
[ $? = 2 ] || die "pld bench moe --mode nope: want exit status 2"

for bad in "--topk 9 -E 2" "--experts 0" "--zipf -1" "--mode mesh" "--tokens x"; do
    # shellcheck disable=SC2086
    "$pld" moe -d 0-3 $bad >"$out" 2>&1
    rc=$?
    [ "$rc" = 2 ] || die "pld moe $bad: exit status $rc, want 2"
    grep -q "pld moe" "$out" || die "pld moe $bad: message lacks the command: $(cat "$out")"
done
[ "$fail" = 0 ] && echo "PASS"
exit "$fail"
