#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer harness tests/fuzz/fuzz_api.c against the library
# (clang, ASan+UBSan, coverage for libFuzzer), replays the saved crash
# reproducers of tests/fuzz/crashes/, then fuzzes for SECONDS (default 60).
# Fails on any crash, leak, timeout or sanitizer report; prints a skip line
# and succeeds when clang with libFuzzer is not installed.
#
# Usage: tests/fuzz/run.sh [SECONDS]
# Environment:
#   PLD_FUZZ_BUILD=DIR     build and work directory (default <repo>/build-fuzz)
#   PLD_FUZZ_STALE=0       leave out the operations on stale handles (double
#                          free, use after free, calls after finalize, nested
#                          launch), which run by default
#   PLD_FUZZ_KNOWN_BUGS=1  also run what hits the open bugs of docs/dev/fuzzing.md
#   PLD_FUZZ_ARGS="..."    extra libFuzzer flags (e.g. -jobs=4 -workers=4)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-60}
build=${PLD_FUZZ_BUILD:-$root/build-fuzz}
cc=${PLD_FUZZ_CC:-clang}

# libFuzzer ships in libclang-rt-*-dev, which clang only recommends: try a
# link before deciding.
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n);
int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }' \
    >"$probe/p.c"
if ! command -v "$cc" >/dev/null 2>&1 ||
    ! "$cc" -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" >/dev/null 2>&1; then
    echo "fuzz: skipped (clang with libFuzzer not found)"
    exit 0
fi

echo "== fuzz: build $build"
# The library with ASan+UBSan (PLD_SANITIZE=address) and libFuzzer's
# coverage instrumentation; MPI off: the harness runs the thread transport.
cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DPLD_SANITIZE=address -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link" \
    -DPLD_BUILD_TESTS=OFF -DPLD_BUILD_EXAMPLES=OFF -DPLD_WITH_MPI=OFF >/dev/null
cmake --build "$build" --target pld_static -j"$(nproc)" >/dev/null
"$cc" -std=c11 -O2 -g -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
    -Wvla -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -fno-omit-frame-pointer -DPLD_FUZZ_STALE="${PLD_FUZZ_STALE:-1}" \
    -DPLD_FUZZ_KNOWN_BUGS="${PLD_FUZZ_KNOWN_BUGS:-0}" -I"$root/include" -I"$build/include" \
    "$root/tests/fuzz/fuzz_api.c" "$build/src/libpld.a" -lpthread -lm -o "$build/fuzz_api"

# -close_fd_mask=1: kernels may print the lowering listing (cfg.ir) to stdout
# -timeout: an input runs at most 8 launches (+ a check after each failed
# one) whose waits time out after at most 1 s; beyond 30 s it hangs.
flags=(-timeout=30 -rss_limit_mb=2048 -close_fd_mask=1)
art="$build/artifacts"
mkdir -p "$art" "$build/corpus"

mapfile -t regress < <(find "$root/tests/fuzz/crashes" -type f ! -name '.*' | sort)
if [ ${#regress[@]} -gt 0 ]; then
    echo "== fuzz: replay ${#regress[@]} saved reproducer(s)"
    "$build/fuzz_api" "${flags[@]}" "${regress[@]}" 2>"$build/replay.log" || {
        tail -50 "$build/replay.log"
        echo "fuzz: FAILED replaying tests/fuzz/crashes (log: $build/replay.log)"
        exit 1
    }
fi

echo "== fuzz: ${secs} s"
# New inputs go to the build's corpus; the checked-in seeds are only read.
# shellcheck disable=SC2086
if ! "$build/fuzz_api" "${flags[@]}" -max_total_time="$secs" -print_final_stats=1 \
    -artifact_prefix="$art/" ${PLD_FUZZ_ARGS:-} "$build/corpus" "$root/tests/fuzz/corpus" \
    2>"$build/fuzz.log"; then
    grep -E "ERROR|SUMMARY|runtime error|fuzz_api:|Test unit written" "$build/fuzz.log" | head -20
    tail -60 "$build/fuzz.log"
    echo "fuzz: FAILED (log: $build/fuzz.log; reproducer in $art/ -- keep it in tests/fuzz/crashes/)"
    exit 1
fi
grep -E "DONE|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb" \
    "$build/fuzz.log" || true
echo "fuzz: OK"
