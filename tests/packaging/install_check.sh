#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `cmake --install` into a fresh prefix: the installed pld tool runs (it
# finds libpld.so through its relative RPATH, no LD_LIBRARY_PATH), and the
# README's kernel builds and runs against the installed package. Then the
# prefix is moved elsewhere and all of it must still work: nothing in the
# install may name the prefix it was installed to.
#
# Usage: install_check.sh BUILD_DIR WORKDIR README_KERNEL.c
set -eu
build=$1 work=$2 src=$3
here=$(cd "$(dirname "$0")" && pwd)
unset LD_LIBRARY_PATH PKG_CONFIG_PATH CMAKE_PREFIX_PATH || true
rm -rf "$work" && mkdir -p "$work"

cmake --install "$build" --prefix "$work/a" >"$work/install.log" 2>&1 ||
    { cat "$work/install.log"; exit 1; }

check() { # prefix
    echo "-- $1/bin/pld info"
    "$1/bin/pld" info >"$work/info.out" 2>&1 || { cat "$work/info.out"; exit 1; }
    head -1 "$work/info.out"
    sh "$here/consume.sh" "$1" "$work/consume" "$src"
}
check "$work/a"
mv "$work/a" "$work/moved"
echo "-- prefix moved to $work/moved"
check "$work/moved"
echo OK
