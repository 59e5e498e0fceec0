#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# libpld.so exports its public API and nothing else: every defined dynamic
# symbol is a pld_* name, none is an internal pld__* one, and every
# function the public headers declare is exported (a declaration that lost
# its PLD_API would link in the build tree's static tests and fail users).
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
[ "$bad" = 0 ] || exit 1
echo "$(echo "$syms" | wc -l) symbols exported, $(echo "$declared" | wc -l) declared PLD_API"
echo OK
