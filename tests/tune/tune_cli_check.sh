#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/tune/tune_cli_check.sh PLD DATA_DIR
# `pld tune` writes a parameter file that --show reads back and worlds use;
# `pld cost --predict` prints every algorithm with one marked as the call's,
# the one the parameter file makes allreduce auto pick.
set -u
pld=$1
data=$2
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
has() { # text needle
    case "$1" in *"$2"*) echo "ok: has '$2'" ;; *) echo "FAIL: expected '$2' in:"; echo "$1"; fail=1 ;; esac
}
out=$("$pld" tune --file "$tmp/t.txt" 2>&1) || { echo "FAIL: pld tune: $out"; fail=1; }
has "$out" "# measured and written: $tmp/t.txt"
has "$out" "measured     yes"
out=$("$pld" tune --show --file "$tmp/t.txt" 2>&1) || { echo "FAIL: pld tune --show: $out"; fail=1; }
has "$out" "# parameters: $tmp/t.txt"
out=$("$pld" tune --show --file "$tmp/none.txt" 2>&1) && { echo "FAIL: --show of a missing file succeeded"; fail=1; }
has "$out" "cannot read '$tmp/none.txt'"
out=$("$pld" tune --bogus 2>&1); [ $? = 2 ] || { echo "FAIL: an unknown option is not exit 2"; fail=1; }

# the call's line, once; allreduce auto's pick follows the file
export PLD_TUNE_FILE="$tmp/t.txt"
for coll in barrier broadcast allgather reduce_scatter allreduce all_to_all all_to_all_v; do
    out=$("$pld" cost $coll -d 0-3 -s 64K --predict 2>&1) || { echo "FAIL: pld cost $coll: $out"; fail=1; }
    n=$(printf '%s\n' "$out" | grep -c -- '<- this call$')
    [ "$n" = 1 ] && echo "ok: $coll: one line marked" || { echo "FAIL: $coll: $n lines marked:"; echo "$out"; fail=1; }
    has "$out" "# predicted by the cost model (measured parameters"
done
export PLD_TUNE_FILE="$data/slow_rounds.txt"
out=$("$pld" cost allreduce -d 0,1 -s 64K --predict 2>&1)
has "$out" "mesh (auto's pick)"
has "$out" "(built-in parameters"
export PLD_TUNE_FILE="$data/fast_rounds.txt"
out=$("$pld" cost allreduce -d 0,1 -s 64K --predict 2>&1)
has "$out" "rs_ag (auto's pick)"
# forcing a mode marks that mode's line
out=$("$pld" cost allreduce -d 0,1 -s 64K --mode ring --predict 2>&1)
printf '%s\n' "$out" | grep -q '^ ring .*<- this call$' && echo "ok: --mode ring marks ring" ||
    { echo "FAIL: ring not marked:"; echo "$out"; fail=1; }
# the card follows the pick too (one run, checked against the counters)
out=$("$pld" cost allreduce -d 0-2 -s 64K --measure 2>&1) || { echo "FAIL: --measure: $out"; fail=1; }
has "$out" "they equal the card on every rank"
[ $fail = 0 ] && echo OK
exit $fail
