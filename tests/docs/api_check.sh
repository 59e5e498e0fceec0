#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/docs/api_check.sh DOXYGEN DOXYFILE OUTDIR HEADER_DIR
# Builds the API reference with the docs target's configuration into OUTDIR
# and fails on any Doxygen warning; then checks that every function the
# public headers declare has an entry in it.
set -u
doxygen=$1
doxyfile=$2
out=$3
headers=$4
fail=0
rm -rf "$out"
mkdir -p "$out"
log=$out/doxygen.log
# the docs target's Doxyfile, written into OUTDIR instead of its own
{ cat "$doxyfile"; echo "OUTPUT_DIRECTORY = $out"; } | "$doxygen" - >"$log" 2>&1
rc=$?
if [ "$rc" != 0 ] || grep -q "warning:\|error:" "$log"; then
    echo "FAIL: doxygen exits $rc:"
    cat "$log"
    fail=1
else
    echo "ok: doxygen, no warnings"
fi
index=$out/html/globals_func.html
if [ ! -f "$out/html/index.html" ] || [ ! -f "$index" ]; then
    echo "FAIL: no html/index.html or function index in $out"
    exit 1
fi
# every pld_* function declared in the headers (pld__* are internals)
funcs=$(cat "$headers"/*.h | tr '\n' ' ' | grep -o '[a-z_0-9*]  *\**pld_[a-z0-9][a-z0-9_]*(' |
        sed 's/.*\(pld_[a-z0-9_]*\)(/\1/' | sort -u)
n=0
for f in $funcs; do
    n=$((n + 1))
    if ! grep -q "<li>$f()&" "$index"; then
        echo "FAIL: $f has no entry in the API reference"
        fail=1
    fi
done
echo "checked $n functions"
[ "$n" -gt 50 ] || { echo "FAIL: found only $n functions in $headers"; fail=1; }
[ "$fail" = 0 ] && echo OK
exit "$fail"
