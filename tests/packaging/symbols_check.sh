#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# libpld.so exports its public API and nothing else: every defined dynamic
# symbol is a pld_* name, none is an internal pld__* one, and every
# function the public headers declare is marked PLD_API and exported.
#
# Usage: symbols_check.sh LIBPLD_SO INCLUDE_DIR...
set -eu
lib=$1
shift
syms=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort -u)
bad=0
internal=$(echo "$syms" | grep '^pld__' || true)
if [ -n "$internal" ]; then
    echo "internal symbols exported from $lib:"
    echo "$internal" | head -20
    bad=1
fi
# _init/_fini are the loader's, present in every shared library
other=$(echo "$syms" | grep -v '^pld_' | grep -vx '_init\|_fini' || true)
if [ -n "$other" ]; then
    echo "symbols outside the pld_ namespace exported from $lib:"
    echo "$other" | head -20
    bad=1
fi
declared=$(for d in "$@"; do cat "$d"/pld/*.h; done | grep -o '^PLD_API [^(]*(' | sed 's/($//; s/.*[ *]//' | sort -u)
for f in $declared; do
    echo "$syms" | grep -qx "$f" || { echo "declared but not exported: $f"; bad=1; }
done
# a function declared without PLD_API would be hidden: not in the check
# above, and a link error for every program that calls it
unmarked=$(for d in "$@"; do cat "$d"/pld/*.h; done |
    grep -E '^[a-z].*[ *]pld_[a-z0-9_]*\(' | grep -Ev '^(PLD_API|typedef|static|template) ' || true)
if [ -n "$unmarked" ]; then
    echo "declared without PLD_API:"
    echo "$unmarked"
    bad=1
fi
[ "$bad" = 0 ] || exit 1
echo "$(echo "$syms" | wc -l) symbols exported, $(echo "$declared" | wc -l) declared PLD_API"
echo OK
