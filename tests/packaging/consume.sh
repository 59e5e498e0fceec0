#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Builds the README's kernel against an installed pld under PREFIX, the two
# documented ways -- CMake's find_package (CMAKE_PREFIX_PATH) and pkg-config
# (PKG_CONFIG_PATH) -- and runs both; they must print OK.
#
# Usage: consume.sh PREFIX WORKDIR README_KERNEL.c
set -eu
prefix=$1 work=$2 src=$3
here=$(cd "$(dirname "$0")" && pwd)
pcdir=$(dirname "$(find "$prefix" -name pld.pc | head -1)")
[ -f "$pcdir/pld.pc" ] || { echo "no pld.pc under $prefix"; exit 1; }

rm -rf "$work" && mkdir -p "$work"
echo "-- find_package(pld) with CMAKE_PREFIX_PATH=$prefix"
cmake -S "$here/consumer" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
    -DPLD_SOURCE="$src" >"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; exit 1; }
cmake --build "$work/cmake" >>"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; exit 1; }
out=$("$work/cmake/consumer" -d 0-3)
[ "$out" = OK ] || { echo "find_package build printed: $out"; exit 1; }

echo "-- pkg-config with PKG_CONFIG_PATH=$pcdir"
export PKG_CONFIG_PATH="$pcdir"
libdir=$(pkg-config --variable=libdir pld)
# shellcheck disable=SC2046
cc -std=c11 "$src" -o "$work/pc_consumer" $(pkg-config --cflags --libs pld) \
    -Wl,-rpath,"$libdir"
out=$("$work/pc_consumer" -d 0,1)
[ "$out" = OK ] || { echo "pkg-config build printed: $out"; exit 1; }
