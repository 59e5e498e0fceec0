#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/format/check_format.sh CLANG_FORMAT SOURCE_DIR [--fix]
# Every C and C++ file of the repository is formatted as its .clang-format
# says (the top-level file; examples/ has its own). Lists the files that
# are not and how to fix them; --fix rewrites them in place.
#
# The files are the ones git tracks when SOURCE_DIR is a git checkout,
# else every *.c, *.h and *.cpp under the source folders, so a build
# directory inside the tree is never read.
set -u
cf=$1
src=$2
fix=${3:-}
cd "$src" || exit 2

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    files=$(git ls-files '*.c' '*.h' '*.cpp' '*.cc')
else
    files=$(find include src tools bench examples tests python \
                 \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.cc' \) \
                 2>/dev/null | sort)
fi
[ -n "$files" ] || { echo "FAIL: no source files under $src"; exit 1; }

echo "$("$cf" --version)"
if [ "$fix" = --fix ]; then
    # shellcheck disable=SC2086 # one path per word: no path has a space
    "$cf" -i $files || exit 1
fi
bad=""
n=$(echo "$files" | wc -w)
# one run over every file (one process per file took half a minute); only
# when it fails, a run per file names the ones that differ
# shellcheck disable=SC2086
if ! "$cf" --dry-run --Werror $files >/dev/null 2>&1; then
    for f in $files; do
        if ! "$cf" --dry-run --Werror "$f" >/dev/null 2>&1; then
            bad="$bad $f"
        fi
    done
    if [ -z "$bad" ]; then
        echo "FAIL: $cf --dry-run --Werror fails on the files together but on none alone"
        exit 1
    fi
fi
if [ -n "$bad" ]; then
    echo "FAIL: not formatted as .clang-format says:"
    for f in $bad; do
        echo "  $f ($("$cf" "$f" | diff "$f" - | grep -c '^>') lines differ)"
    done
    echo "fix: tests/format/check_format.sh $cf . --fix   (from the top of the repository)"
    exit 1
fi
echo "ok: $n files formatted as .clang-format says"
echo OK
