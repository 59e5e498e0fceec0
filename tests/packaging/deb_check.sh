#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `cpack -G DEB` builds a .deb; unpacked with dpkg -x (no root, no
# install) it holds a pld that runs from there through its relative RPATH,
# the headers, the CMake package, pld.pc and the LICENSE, and a program
# finds pld through CMAKE_PREFIX_PATH or PKG_CONFIG_PATH pointing into it.
#
# Usage: deb_check.sh BUILD_DIR WORKDIR README_KERNEL.c VERSION
set -eu
build=$1 work=$2 src=$3 version=$4
here=$(cd "$(dirname "$0")" && pwd)
unset LD_LIBRARY_PATH PKG_CONFIG_PATH CMAKE_PREFIX_PATH || true
rm -rf "$work" && mkdir -p "$work"

(cd "$build" && cpack -G DEB -B "$work/out") >"$work/cpack.log" 2>&1 ||
    { cat "$work/cpack.log"; exit 1; }
deb=$(ls "$work"/out/*.deb)
echo "-- $(basename "$deb")"
dpkg-deb -f "$deb" Package Version Depends
dpkg -x "$deb" "$work/root"
usr=$work/root/usr

for f in bin/pld include/pld/pld.h include/pld/types.h include/pld/version.h \
    include/pld/export.h lib/libpld.so lib/libpld.a lib/cmake/pld/pldConfig.cmake \
    lib/cmake/pld/pldTargets.cmake lib/pkgconfig/pld.pc share/doc/pld/LICENSE; do
    [ -e "$usr/$f" ] || { echo "missing in the package: /usr/$f"; exit 1; }
done
out=$("$usr/bin/pld" --version)
[ "$out" = "pld $version" ] || { echo "pld --version printed: $out"; exit 1; }
echo "-- $out"
sh "$here/consume.sh" "$usr" "$work/consume" "$src"
echo OK
