#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates the --ir listings pasted into the tutorial pages, from a build
# directory, so that the pages show what the library really prints.
#
#   docs/tutorial/gen_ir.sh [BUILD_DIR]          rewrite the pages in place
#   docs/tutorial/gen_ir.sh --check [BUILD_DIR]  exit 1 if a page is out of date
#
# BUILD_DIR defaults to build/ at the top of the repository. A listing is a
# block of a page between two marker lines:
#
#   <!-- gen_ir: 13_allgather -p a2a3sim -d 0,1,2,3 --mode hand --ir -->
#   ...generated: the command line and its output, indented 4 spaces...
#   <!-- /gen_ir -->
#
# The marker names a program of BUILD_DIR/examples and its arguments,
# optionally after settings (`PLD_LL_BYTES=0 13_allgather ...`); every line
# between the markers is replaced by a fresh run.
#
# A picture is one marker line naming an image under docs/tutorial/img and
# the run that draws it with --ir-svg (the page links the image itself):
#
#   <!-- gen_svg: 13_allgather.hand 13_allgather -p a2a3sim -d 0,1,2 --mode hand -->
#
# writes img/13_allgather.hand.svg. Pictures are laid out in logical order
# (no clock), so a run draws the same bytes every time and --check compares
# them byte for byte.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
check=0
if [[ ${1:-} == --check ]]; then
    check=1
    shift
fi
build=${1:-$here/../../build}
if [[ ! -d $build/examples ]]; then
    echo "gen_ir.sh: no examples in '$build' (build first: cmake -S . -B build && cmake --build build)" >&2
    exit 2
fi

# Settings that would change the listing or add output.
unset PLD_DEBUG PLD_IR PLD_IR_SVG PLD_TRACE PLD_UB_BYTES PLD_CHECK PLD_WAIT_TIMEOUT_MS PLD_LL_BYTES
# The cost model's parameters: pinned, or an "auto:" line would print this
# machine's predictions and differ from one machine to the next.
export PLD_TUNE_FILE=$here/tune.txt

# Runs the marker's program ($1: [VAR=VALUE ...] PROGRAM ARGS) with extra
# arguments and leaves its output in $out; fails, saying why, when it is
# not built or does not succeed.
run_marker() {
    local -a argv settings=()
    read -r -a argv <<<"$1"
    shift
    while [[ ${argv[0]} =~ ^[A-Z_]+= ]]; do
        settings+=("${argv[0]}")
        argv=("${argv[@]:1}")
    done
    local prog=$build/examples/${argv[0]}
    if [[ ! -x $prog ]]; then
        echo "gen_ir.sh: $prog is not built" >&2
        return 1
    fi
    if ! out=$(env "${settings[@]}" "$prog" "${argv[@]:1}" "$@" 2>&1); then
        echo "gen_ir.sh: '${argv[*]} $*' failed:" >&2
        echo "$out" >&2
        return 1
    fi
}

# Prints one generated block (without the markers) for the marker's command.
run_block() {
    local out
    run_marker "$1" || return 1
    local cmd=$1 pre=''
    while [[ $cmd =~ ^([A-Z_]+=[^ ]*\ )(.*)$ ]]; do
        pre+=${BASH_REMATCH[1]}
        cmd=${BASH_REMATCH[2]}
    done
    printf '\n    $ %sbuild/examples/%s\n' "$pre" "$cmd"
    printf '%s\n' "$out" | sed 's/^/    /'
    printf '\n'
}

# Draws one picture into $2 for the marker's run $1, which must end by
# printing OK (a step may print what it found first).
run_svg() {
    local out
    run_marker "$1" --ir-svg "$2" || return 1
    if [[ ${out##*$'\n'} != OK ]]; then
        echo "gen_ir.sh: '$1 --ir-svg $2' did not print OK:" >&2
        echo "$out" >&2
        return 1
    fi
}

stale=0
mkdir -p "$here/img"
for page in "$here"/[0-9][0-9]-*.md; do
    while IFS= read -r line; do
        [[ $line =~ ^'<!-- gen_svg: '([A-Za-z0-9_.-]+)' '(.*)' -->'$ ]] || continue
        name=${BASH_REMATCH[1]}
        img=$here/img/$name.svg
        tmp=$(mktemp)
        run_svg "${BASH_REMATCH[2]}" "$tmp" || { rm -f "$tmp"; exit 1; }
        if cmp -s "$img" "$tmp"; then
            rm -f "$tmp"
        elif ((check)); then
            echo "gen_ir.sh: img/$name.svg ($(basename "$page")) is out of date" >&2
            diff -u "$img" "$tmp" >&2 || true
            rm -f "$tmp"
            stale=1
        else
            mv "$tmp" "$img"
            chmod 644 "$img"
            echo "gen_ir.sh: updated img/$name.svg"
        fi
    done <"$page"
done

for page in "$here"/[0-9][0-9]-*.md; do
    grep -q '^<!-- gen_ir: ' "$page" || continue
    tmp=$(mktemp)
    skipping=0
    while IFS= read -r line || [[ -n $line ]]; do
        if [[ $line =~ ^'<!-- gen_ir: '(.*)' -->'$ ]]; then
            printf '%s\n' "$line"
            run_block "${BASH_REMATCH[1]}"
            skipping=1
            continue
        fi
        [[ $line == '<!-- /gen_ir -->' ]] && skipping=0
        ((skipping)) || printf '%s\n' "$line"
    done <"$page" >"$tmp"
    if ((skipping)); then
        echo "gen_ir.sh: $(basename "$page"): a gen_ir block has no closing <!-- /gen_ir -->" >&2
        rm -f "$tmp"
        exit 2
    fi
    if cmp -s "$page" "$tmp"; then
        rm -f "$tmp"
    elif ((check)); then
        echo "gen_ir.sh: $(basename "$page") is out of date:" >&2
        diff -u "$page" "$tmp" >&2 || true
        rm -f "$tmp"
        stale=1
    else
        cat "$tmp" >"$page"
        rm -f "$tmp"
        echo "gen_ir.sh: updated $(basename "$page")"
    fi
done
exit $stale
