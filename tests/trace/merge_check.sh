#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# pld trace merge OUT IN...: two per-rank traces (as an mpi run writes them)
# into one -- each input's events and track names once, the inputs' own
# arrows dropped and the notify -> wait arrow drawn across the files -- and
# the errors: no inputs, an input that is missing or not a trace, OUT among
# the inputs.
# usage: merge_check.sh PLD
set -u
pld=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
check() { # check WHAT COND...
    what=$1
    shift
    "$@" || { echo "FAIL: $what"; fail=1; }
}
cat >"$dir/t.rank0" <<'J'
{"displayTimeUnit":"ns","traceEvents":[
{"name":"process_name","ph":"M","pid":0,"args":{"name":"rank 0 (a)","run":"1"}},
{"name":"thread_name","ph":"M","pid":0,"tid":0,"args":{"name":"rank 0 (device 0)"}},
{"name":"pld_notify","ph":"X","pid":0,"tid":0,"ts":10.000,"dur":1.000,"args":{"flow":[0,3,1,0,1]}},
{"name":"old","cat":"pld.signal","ph":"s","id":7,"pid":0,"tid":0,"ts":10.5}
]}
J
cat >"$dir/t.rank1" <<'J'
{"displayTimeUnit":"ns","traceEvents":[
{"name":"process_name","ph":"M","pid":1,"args":{"name":"rank 1 (b)","run":"1"}},
{"name":"thread_name","ph":"M","pid":1,"tid":1000,"args":{"name":"rank 1 (device 1)"}},
{"name":"pld_wait","ph":"X","pid":1,"tid":1000,"ts":5.000,"dur":7.000,"args":{"flow":[1,3,1,0,1]}}
]}
J
"$pld" trace merge "$dir/m.json" "$dir/t.rank0" "$dir/t.rank1"
check "merge exits 0" [ $? = 0 ]
m=$dir/m.json
check "both processes" grep -q '"pid":1,"args":{"name":"rank 1 (b)"' "$m"
check "rank 0's slice" grep -q '"name":"pld_notify","ph":"X","pid":0' "$m"
check "an input's arrow is dropped" sh -c "! grep -q '\"id\":7' '$m'"
check "the arrow starts at rank 0" grep -q '"ph":"s","id":1,"pid":0,"tid":0,' "$m"
check "and ends at rank 1's wait" grep -q '"ph":"f","bp":"e","id":1,"pid":1,"tid":1000,' "$m"
check "closed" sh -c "tail -c 4 '$m' | grep -q ']}'"
if command -v python3 >/dev/null; then
    check "valid JSON" python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$m"
fi

"$pld" trace merge "$dir/m.json" 2>"$dir/err"
check "no inputs: usage error" [ $? = 2 ]
"$pld" trace merge "$dir/m.json" "$dir/none" 2>"$dir/err"
check "a missing input fails" [ $? = 1 ]
check "naming it" grep -q "pld trace merge: '$dir/none' cannot be read: No such file" "$dir/err"
echo '{"x":1}' >"$dir/bad"
"$pld" trace merge "$dir/m2.json" "$dir/bad" 2>"$dir/err"
check "not a trace fails" [ $? = 1 ]
check "saying so" grep -q "is not a trace" "$dir/err"
"$pld" trace merge "$dir/t.rank0" "$dir/t.rank0" "$dir/t.rank1" 2>"$dir/err"
check "OUT among the inputs: usage error" [ $? = 2 ]
"$pld" trace bogus 2>"$dir/err"
check "unknown subcommand: usage error" [ $? = 2 ]
"$pld" trace merge --help >"$dir/out"
check "--help" grep -q "usage: pld trace merge OUT IN" "$dir/out"
[ "$fail" = 0 ] && echo PASS
exit "$fail"
