#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A static link of libpld.a with a plain cc: pld.pc's --static flags carry
# what libpld.a needs after it (-lpthread -lm, and MPI's libraries when pld
# is built with MPI), and the README's kernel linked that way runs, with no
# libpld.so needed.
#
# Usage: static_check.sh BUILD_DIR WORKDIR README_KERNEL.c HAVE_MPI(ON|OFF)
set -eu
build=$1 work=$2 src=$3 mpi=$4
unset PKG_CONFIG_PATH LD_LIBRARY_PATH || true
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/p" >"$work/install.log" 2>&1 ||
    { cat "$work/install.log"; exit 1; }
PKG_CONFIG_PATH=$(dirname "$(find "$work/p" -name pld.pc)")
export PKG_CONFIG_PATH

libs=$(pkg-config --static --libs pld)
echo "pkg-config --static --libs pld: $libs"
for want in -lpld -lpthread -lm; do
    echo " $libs " | grep -q -- " $want " || { echo "missing $want"; exit 1; }
done
if [ "$mpi" = ON ]; then
    echo "$libs" | grep -q mpi || { echo "missing MPI's libraries"; exit 1; }
fi

# libpld.a itself, then the rest of the --static list (without -lpld, which
# would pull in the shared library)
rest=$(echo "$libs" | tr ' ' '\n' | grep -vx -- -lpld | tr '\n' ' ')
# shellcheck disable=SC2046,SC2086
cc -std=c11 "$src" -o "$work/readme_static" $(pkg-config --cflags pld) \
    "$(pkg-config --variable=libdir pld)/libpld.a" $rest
if readelf -d "$work/readme_static" | grep -q 'libpld\.so'; then
    echo "the static link still needs libpld.so"
    exit 1
fi
out=$("$work/readme_static" -d 0-3)
[ "$out" = OK ] || { echo "the statically linked kernel printed: $out"; exit 1; }
echo OK
