#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/docs/man_check.sh GROFF PAGE PLD [MANDOC]
# The pld(1) page formats without a warning (groff -ww; mandoc -Tlint too
# when MANDOC is given), has the usual sections, and keeps up with the
# tool: every command `pld help` lists has a subsection, every option
# `pld <command> --help` prints is in the page, and so is every user-facing
# setting `pld info --env` prints.
set -u
groff=$1
page=$2
pld=$3
mandoc=${4:-}
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for v in $(env | sed -n 's/^\(PLD_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done

# 1. formatting: no warnings, no errors
if ! "$groff" -man -Tutf8 -ww -z "$page" >"$tmp/groff.out" 2>&1 || [ -s "$tmp/groff.out" ]; then
    echo "FAIL: $groff -man -Tutf8 -ww $page:"
    cat "$tmp/groff.out"
    fail=1
else
    echo "ok: groff -man -ww formats $page without warnings"
fi
if [ -n "$mandoc" ]; then
    if ! "$mandoc" -Tlint -W warning "$page" >"$tmp/mandoc.out" 2>&1; then
        echo "FAIL: mandoc -Tlint $page:"
        cat "$tmp/mandoc.out"
        fail=1
    else
        echo "ok: mandoc -Tlint"
    fi
fi

# The page's text with roff's escaped hyphens as plain ones.
sed 's/\\-/-/g' "$page" >"$tmp/src"
has() { # has WHAT PATTERN (fixed string, in the page source)
    if grep -qF -- "$2" "$tmp/src"; then
        echo "ok: $1"
    else
        echo "FAIL: $1: \"$2\" is not in $page"
        fail=1
    fi
}

has_line() { # has_line WHAT LINE (a whole line of the page source)
    if grep -qxF -- "$2" "$tmp/src"; then
        echo "ok: $1"
    else
        echo "FAIL: $1: no line \"$2\" in $page"
        fail=1
    fi
}

for s in NAME SYNOPSIS DESCRIPTION ENVIRONMENT "EXIT STATUS" EXAMPLES "SEE ALSO"; do
    has_line "section $s" ".SH $s"
done

# 2. every command of the usage text, and its options
"$pld" help >"$tmp/usage" 2>&1 || { echo "FAIL: $pld help exits non-zero"; fail=1; }
cmds=$(sed -n 's/^  \([a-z][a-z_]*\) .*/\1/p' "$tmp/usage")
[ -n "$cmds" ] || { echo "FAIL: no command found in:"; cat "$tmp/usage"; fail=1; }
for cmd in $cmds; do
    has_line "command $cmd" ".SS pld $cmd"
    [ "$cmd" = help ] && continue
    "$pld" "$cmd" --help >"$tmp/help" 2>&1 || {
        echo "FAIL: pld $cmd --help exits non-zero"
        fail=1
    }
    for opt in $(grep -o -- '--[a-z][a-z0-9_-]*' "$tmp/help" | sort -u); do
        [ "$opt" = --help ] && continue
        has "pld $cmd $opt" "$opt"
    done
    # short options as the help prints them: "-d, --device"
    for opt in $(sed -n 's/^ *\(-[a-zA-Z]\), --.*/\1/p' "$tmp/help"); do
        has "pld $cmd $opt" ".BR $opt \", \""
    done
done

# the tool's own options (pld --version)
for opt in $(sed -n 's/^  \(--[a-z][a-z-]*\) .*/\1/p' "$tmp/usage"); do
    has_line "option $opt" ".SS pld $opt"
done

# 3. every user-facing PLD_* setting
"$pld" info --env >"$tmp/env" 2>&1 || { echo "FAIL: pld info --env exits non-zero"; fail=1; }
for name in $(sed -n 's/^\(PLD_[A-Z_]*\) = .*/\1/p' "$tmp/env"); do
    # the line after "NAME = ..." says what it does; internal ones say so
    if grep -A1 "^$name = " "$tmp/env" | grep -qF '[not user-facing]'; then
        continue
    fi
    has_line "setting $name" ".B $name"
done

[ "$fail" = 0 ] && echo OK
exit "$fail"
