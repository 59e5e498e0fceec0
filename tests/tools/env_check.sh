#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/tools/env_check.sh PLD [README]
# `pld info --env` prints every PLD_* setting with the value in effect and
# where it comes from; a bad value is reported as pld_world_init reports it
# (the variable, the value, the accepted forms) with exit status 2, by
# `pld info --env`, plain `pld info` and a command that starts a world.
set -u
pld=$1
readme=${2:-}
fail=0
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
# start from the defaults whatever the caller's environment holds
for v in $(env | sed -n 's/^\(PLD_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done

run() { # run STATUS CMD...: runs CMD, output in $out/$err, checks the status
    want=$1
    shift
    "$@" >"$out" 2>"$err"
    rc=$?
    if [ "$rc" != "$want" ]; then
        echo "FAIL: $*: exit status $rc, expected $want"
        cat "$out" "$err"
        fail=1
    else
        echo "ok ($rc): $*"
    fi
}
has() { # has FILE WORDS
    grep -qF -- "$2" "$1" || { echo "FAIL: expected \"$2\" in:"; head -40 "$1"; fail=1; }
}

run 0 "$pld" info --env
for name in PLD_WAIT_TIMEOUT_MS PLD_CHECK PLD_DEBUG PLD_TRACE PLD_IR PLD_SCHED PLD_UB_BYTES \
    PLD_URMA_SQ_DEPTH PLD_STACK_BYTES PLD_SPIN PLD_YIELDS PLD_PIN PLD_MPI_SHM PLD_MUTANT; do
    has "$out" "$name = "
done
has "$out" "PLD_WAIT_TIMEOUT_MS = 60000 ms (default)"
# every user-facing row of the table has a row in the README's table
if [ -n "$readme" ]; then
    for name in $(sed -n 's/^\(PLD_[A-Z_]*\) = .*/\1/p' "$out"); do
        [ "$name" = PLD_MUTANT ] && continue
        has "$readme" "| \`$name\` |"
    done
fi
has "$out" "accepted: an integer in milliseconds 1..2147483647, or with a unit: 1500ms, 2s, 5min"
has "$out" "PLD_STACK_BYTES = 4M (default)"
has "$out" "PLD_SPIN = auto: 2000, or 0 when ranks outnumber CPUs (default)"

# values from the environment: shown as read, with the text given
run 0 env PLD_WAIT_TIMEOUT_MS=1s PLD_UB_BYTES=64K PLD_CHECK=race,signals PLD_DEBUG=warn \
    PLD_STACK_BYTES=256K PLD_SCHED=0x10 PLD_TRACE= "$pld" info --env
has "$out" "PLD_WAIT_TIMEOUT_MS = 1000 ms (environment: PLD_WAIT_TIMEOUT_MS=1s)"
has "$out" "PLD_UB_BYTES = 64K (environment: PLD_UB_BYTES=64K)"
has "$out" "PLD_CHECK = signals,race (environment: PLD_CHECK=race,signals)"
has "$out" "PLD_DEBUG = WARN (environment: PLD_DEBUG=warn)"
has "$out" "PLD_STACK_BYTES = 256K (environment: PLD_STACK_BYTES=256K)"
has "$out" "PLD_SCHED = 16 (environment: PLD_SCHED=0x10)"
has "$out" "PLD_TRACE = no trace (default)" # empty is unset
run 0 env PLD_WAIT_TIMEOUT_MS=1000ms "$pld" info --env
has "$out" "PLD_WAIT_TIMEOUT_MS = 1000 ms (environment: PLD_WAIT_TIMEOUT_MS=1000ms)"
run 0 env PLD_UB_BYTES=64K "$pld" info
has "$out" "UB 65536 bytes per core"

# bad values: every one reported, the table still printed, status 2
run 2 env PLD_CHECK=races PLD_UB_BYTES=1T "$pld" info --env
has "$out" "PLD_CHECK = INVALID (environment: PLD_CHECK=races)"
has "$err" "pld info: PLD_ERR_ARG: PLD_CHECK=races: unknown word 'races' (accepted: signals, race, noargs, hazards, all, comma-separated)"
has "$err" "PLD_UB_BYTES=1T: unknown unit 'T' (accepted: a size in bytes 1K..1G"
run 2 env PLD_WAIT_TIMEOUT_MS=1e20 "$pld" info --env
has "$err" "PLD_WAIT_TIMEOUT_MS=1e20: not a duration (accepted: an integer in milliseconds 1..2147483647, or with a unit: 1500ms, 2s, 5min)"
run 2 env PLD_UB_BYTES=99999999999G "$pld" info
has "$err" "PLD_UB_BYTES=99999999999G: out of range: the maximum is 1G"
# a world that cannot start because of one: the bench says so, as a usage error
run 2 env PLD_WAIT_TIMEOUT_MS=abc "$pld" bench allgather -d 0,1 -b 8 -e 8 -n 1 -w 0
has "$err" "pld_world_init: PLD_WAIT_TIMEOUT_MS=abc: not a duration"
run 2 env PLD_DEBUG=bogus "$pld" cost allgather -s 1K
has "$err" "PLD_DEBUG=bogus: unknown word 'bogus' (accepted: one of OFF, WARN, INFO, TRACE)"
# pld explore adds its checkers to the caller's PLD_CHECK: a typo stops it
# before any seed runs
run 2 env PLD_CHECK=races "$pld" explore --seeds 2 /bin/true
has "$err" "pld explore: PLD_CHECK=races: unknown word 'races'"

[ "$fail" = 0 ] && echo "PASS"
exit "$fail"
