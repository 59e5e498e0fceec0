#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job: build pld and run the tutorial ladder at P=4, every step in
# every mode, on the default platform (a2a3sim; steps 17 and 19 run on a5sim)
# and the thread transport; then the Python steps (examples/python) as the
# tutorial pages run them, with Debian's python3 and numpy. Every step must
# print OK.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
pld_deps build python
cmake -S . -B build -DPLD_BUILD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
fail=0
for exe in build/examples/[0-9][0-9]_*; do
    [ -x "$exe" ] || continue
    name=$(basename "$exe")
    # the modes a step offers are in its usage line: [--mode a|b]
    modes=$("$exe" --help 2>&1 | sed -n 's/.*--mode \([a-z_|]*\)\].*/\1/p' | tr '|' ' ')
    platform=a2a3sim
    case "$name" in
        # the URMA queue model of the indexed MoE dispatch (step 19's other
        # modes run on either platform)
        17_* | 19_*) platform=a5sim ;;
    esac
    for m in ${modes:--}; do
        args=(-p "$platform" -d 0,1,2,3)
        [ "$m" != - ] && args+=(--mode "$m")
        if out=$("$exe" "${args[@]}" 2>&1) && [ "$(printf '%s\n' "$out" | tail -n 1)" = OK ]; then
            printf '%-28s %-8s OK\n' "$name" "${m/-/}"
        else
            printf '%-28s %-8s FAILED\n%s\n' "$name" "${m/-/}" "$out"
            fail=1
        fi
    done
done
for py in examples/python/[0-9][0-9]_*.py; do
    name=$(basename "$py" .py)
    for m in hand builtin; do
        if out=$(/usr/bin/python3 "$py" -p a2a3sim -d 0,1,2,3 --mode "$m" 2>&1) &&
            [ "$(printf '%s\n' "$out" | tail -n 1)" = OK ]; then
            printf '%-28s %-8s OK\n' "python $name" "$m"
        else
            printf '%-28s %-8s FAILED\n%s\n' "python $name" "$m" "$out"
            fail=1
        fi
    done
done
exit $fail
