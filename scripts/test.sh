#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds pld three ways (release, ASan+UBSan, TSan) and runs every test with
# ctest in each build; fuzzes the public API for a minute (tests/fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
pld_deps test
jobs=$(nproc)
run() { # build-dir sanitizer [extra ctest args]
    local dir=$1 san=$2
    shift 2
    echo "== build $dir (sanitizer: ${san:-none}) at ${SECONDS} s"
    cmake -S . -B "$dir" -DPLD_SANITIZE="$san" -DPLD_BUILD_TESTS=ON -DPLD_BUILD_EXAMPLES=ON \
        -DPLD_REQUIRE_PYTHON_TESTS=ON \
        ${PLD_CMAKE_EXTRA:-} >/dev/null
    # a build that runs a few of the tests compiles only what they run
    # (PLD_SOME_TARGETS=1; everything when a program is no target by name)
    local targets=""
    if [ "${PLD_SOME_TARGETS:-0}" = 1 ]; then
        cmake --build "$dir" --target help >"$dir/targets.txt"
        targets=$(ctest --test-dir "$dir" --show-only=json-v1 "$@" |
            python3 scripts/test_targets.py "$dir" "$dir/targets.txt")
    fi
    # shellcheck disable=SC2086
    cmake --build "$dir" -j"$jobs" ${targets:+--target $targets} >/dev/null
    # the cost model's parameters, measured once per build before the tests
    # load the machine (a sanitizer build measures its own, slower, speeds)
    export PLD_TUNE_FILE="$PWD/$dir/tune.txt"
    "$dir/pld" tune >/dev/null
    # a sleeping rank must not be mistaken for a hang: generous per-test timeouts
    echo "== test $dir at ${SECONDS} s"
    ctest --test-dir "$dir" --output-on-failure -j"$jobs" --timeout 300 "$@"
}
run build ""
# libFuzzer over the public API for 60 s (its own clang build, build-fuzz;
# the saved reproducers of tests/fuzz/crashes replayed first)
echo "== fuzz at ${SECONDS} s"
bash tests/fuzz/run.sh 60
# The process copies of programs that also run on the thread transport:
# the sanitizer builds run their thread copies only, and the release build
# runs both. What a process copy runs beyond its thread copy is the process
# transport (a sanitizer sees each process alone, not what they share), and
# that stays under the sanitizers through its own tests (transport.*), the
# hazard and checker runs on processes (their error paths differ per
# transport), the explorer's process run and the README's process example.
twins='^examples\.[0-9]+_[a-z_]+(\.[a-z_]+)?(\.tp[0-9]+)?\.p[0-9]+\.process$'
twins+='|^(reuse|agree)\..*\.process\.|^(coll|tools|moe|ir_svg)\..*\.process$'
# The long schedule-explorer runs (thousands of seeds) are the release
# build's; the sanitizer builds explore the tutorial steps only. The
# protocol model (spin, label model) checks no pld code: once is enough.
# The 4096-rank run (label scale) is the release build's: a sanitizer
# multiplies each thread's cost.
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    run build-asan address -LE "explore_long|model|docs|scale" -E "$twins"
# Criterion's runner cannot start under ThreadSanitizer (its shared arena
# collides with TSan's memory layout), so the TSan build runs the plain-C
# programs: the stress program and every tutorial example. TSan covers the
# thread transport; MPI's own libraries are not built for it (label mpi).
# The schedule explorer runs one rank at a time, handing over under a lock:
# TSan would see every access ordered by it (label explore).
# The packaging and Python checks are the release build's too.
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 PLD_SOME_TARGETS=1 \
    run build-tsan thread -LE "unit|coll|mpi|explore|model|docs|packaging|python|scale" -E "$twins"
# MPI is optional: without it the library, the tool and what these tests run
# build, and say clearly that the mpi transport is not there.
PLD_CMAKE_EXTRA=-DPLD_WITH_MPI=OFF PLD_SOME_TARGETS=1 run build-nompi "" \
    -R "unit.test_world|tools.usage_check|readme|examples.04_barrier"
echo "== done in ${SECONDS} s"
