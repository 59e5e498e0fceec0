#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# README's "Environment settings" table and `pld info --env` list the same
# PLD_* variables in the same order: every user-facing variable the tool
# prints has a row, every row is a variable the tool prints, and the ones
# the tool marks [not user-facing] are at least named in the section. A
# PLD_X=value written anywhere in the README must name a variable pld reads.
# usage: env_table.sh PLD README
set -u
pld=$1
readme=$2
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the defaults, whatever the caller's environment holds
for v in $(env | sed -n 's/^\(PLD_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done

"$pld" info --env >"$tmp/env" || { echo "FAIL: pld info --env exits $?"; exit 1; }
# NAME, then "user" or "internal" from the doc line under it
awk '/^PLD_[A-Z_]* = / { name = $1; next }
     name != "" { print name, (/\[not user-facing\]/ ? "internal" : "user"); name = "" }' \
    "$tmp/env" >"$tmp/listed"
[ -s "$tmp/listed" ] || { echo "FAIL: no variable in pld info --env:"; cat "$tmp/env"; exit 1; }
sed -n '/^## Environment settings/,/^## /p' "$readme" >"$tmp/section"
[ -s "$tmp/section" ] || { echo "FAIL: README has no '## Environment settings' section"; exit 1; }
sed -n 's/^| `\(PLD_[A-Z_]*\)` |.*/\1/p' "$tmp/section" >"$tmp/rows"

awk '$2 == "user" { print $1 }' "$tmp/listed" >"$tmp/user"
while read -r name kind; do
    if [ "$kind" = user ]; then
        grep -qx "$name" "$tmp/rows" ||
            { echo "FAIL: $name (pld info --env) has no row in README's table"; fail=1; }
    else
        grep -q "\`$name\`" "$tmp/section" ||
            { echo "FAIL: $name (pld info --env, not user-facing) is not named in README's section"; fail=1; }
    fi
done <"$tmp/listed"
while read -r name; do
    grep -q "^$name " "$tmp/listed" ||
        { echo "FAIL: README's table has $name, which pld info --env does not list"; fail=1; }
done <"$tmp/rows"
# the same order, so the table reads like the tool's output
if [ "$fail" = 0 ] && ! cmp -s "$tmp/user" "$tmp/rows"; then
    echo "FAIL: README's table is not in the order of pld info --env:"
    diff "$tmp/user" "$tmp/rows"
    fail=1
fi
# PLD_X=value anywhere in the README (a CMake -DPLD_... option is not one)
for name in $(grep -o '[-A-Za-z]*PLD_[A-Z_]*=' "$readme" | grep -v '^-D' | sed 's/=$//' | sort -u); do
    grep -q "^$name " "$tmp/listed" ||
        { echo "FAIL: README sets $name=..., which pld info --env does not list"; fail=1; }
done
[ "$fail" = 0 ] && echo "PASS: $(wc -l <"$tmp/listed") variables, $(wc -l <"$tmp/rows") rows"
exit "$fail"
