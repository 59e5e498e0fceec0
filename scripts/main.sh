#!/usr/bin/env bash
# The main job: build pld and run the tutorial ladder at P=4 on the default
# platform (a2a3sim, thread transport). Every step must print OK.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
pld_deps build
cmake -S . -B build -DPLD_BUILD_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
fail=0
for exe in build/examples/[0-9][0-9]_*; do
    [ -x "$exe" ] || continue
    name=$(basename "$exe")
    modes=("")
    case "$name" in
        04_*) modes=(hand builtin) ;;
        06_*) modes=(put get) ;;
    esac
    for m in "${modes[@]}"; do
        args=(-p a2a3sim -d 0,1,2,3)
        [ -n "$m" ] && args+=(--mode "$m")
        if out=$("$exe" "${args[@]}" 2>&1) && [ "$(printf '%s\n' "$out" | tail -n 1)" = OK ]; then
            printf '%-28s %-8s OK\n' "$name" "$m"
        else
            printf '%-28s %-8s FAILED\n%s\n' "$name" "$m" "$out"
            fail=1
        fi
    done
done
exit $fail
