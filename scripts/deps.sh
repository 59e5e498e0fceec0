#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages pld needs, when missing. As root it runs
# apt-get itself; otherwise it prints the command to run and fails.
# Usage: source scripts/deps.sh; pld_deps build|test [python]
set -euo pipefail

pld_deps() {
    local want=(gcc make cmake pkg-config)
    if [ "${1:-build}" = test ]; then
        # clang + libclang-rt-dev: the libFuzzer harness (tests/fuzz); clang
        # only recommends the runtime that holds libFuzzer; doxygen and
        # groff-base: the API reference and the pld(1) page (tests/docs);
        # clang-format: the format check (tests/format)
        want+=(libcriterion-dev openmpi-bin libopenmpi-dev spin clang libclang-rt-dev
               doxygen groff-base clang-format
               g++ # the C++ build of the README's kernel (tests/packaging)
               # the Python package's tests (tests/python): Debian's numpy and
               # pytest, and what `pip install ./python` needs offline
               python3 python3-numpy python3-pytest python3-venv python3-pip python3-setuptools
               python3-wheel)
    fi
    if [ "${2:-}" = python ]; then
        want+=(python3 python3-numpy) # the Python steps of the main job
    fi
    local missing=()
    for p in "${want[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -eq 0 ]; then
        echo "pld: installing ${missing[*]}" >&2
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            "${missing[@]}" >/dev/null
    else
        echo "pld: missing packages; run as root:" >&2
        echo "  apt-get install -y ${missing[*]}" >&2
        return 1
    fi
}
