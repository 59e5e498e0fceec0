#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The README's build line on a machine without Criterion: configure says in
# one line that the tests are off, and configure and build succeed.
# Criterion is hidden by giving pkg-config an empty search path, so it is
# found missing exactly as on a machine where it is not installed.
#
# Usage: no_criterion_check.sh SOURCE_DIR WORKDIR
set -eu
src=$1 work=$2
rm -rf "$work" && mkdir -p "$work/empty"
export PKG_CONFIG_LIBDIR="$work/empty" PKG_CONFIG_PATH=""
cmake -S "$src" -B "$work/build" >"$work/configure.log" 2>&1 ||
    { cat "$work/configure.log"; echo "configure failed"; exit 1; }
grep -x -- "-- pld: Criterion not found: tests are off (install libcriterion-dev)" \
    "$work/configure.log" || { cat "$work/configure.log"; echo "no 'tests are off' line"; exit 1; }
cmake --build "$work/build" -j2 >"$work/build.log" 2>&1 ||
    { tail -30 "$work/build.log"; echo "build failed"; exit 1; }
[ -x "$work/build/pld" ] || { echo "no pld tool built"; exit 1; }
# the suite is off, not half there (the examples register runs of their own)
if ctest --test-dir "$work/build" -N | grep -E "unit\.|packaging\."; then
    echo "the test suite was defined"
    exit 1
fi
rm -rf "$work/build"
echo OK
