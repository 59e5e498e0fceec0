#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# pip install ./python offline (no index, no build isolation: Debian's
# setuptools and numpy) into a fresh venv, this build's libpld.so bundled;
# then the installed package runs an example from outside the source tree.
# Usage: pip_install_check.sh PYTHON SOURCE_DIR LIBPLD WORKDIR
set -eu
py=$1 src=$2 lib=$3 work=$4
die() { echo "pip_install_check: $*" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
cp -r "$src/python" "$work/pkg" # pip writes build/ and *.egg-info next to the sources
"$py" -m venv --system-site-packages "$work/venv" || die "python3 -m venv failed (python3-venv)"
PLD_LIBRARY=$lib "$work/venv/bin/pip" install --no-index --no-build-isolation -q "$work/pkg" ||
    die "pip install failed"
where=$(cd "$work" && "$work/venv/bin/python" -c 'import os, pld; print(os.path.dirname(pld.__file__))')
case $where in
"$work/venv/"*) ;;
*) die "pld imported from $where, not from the venv" ;;
esac
[ -f "$where/libpld.so" ] || die "libpld.so is not in the installed package ($where)"
cp "$src/examples/python/13_allgather.py" "$work/13_allgather.py"
out=$(cd "$work" && "$work/venv/bin/python" 13_allgather.py -d 0,1,2,3 --mode builtin) ||
    die "the example failed from the installed package"
[ "$out" = OK ] || die "the example printed '$out', not OK"
echo "pip install: OK ($where)"
