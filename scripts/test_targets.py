#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The build targets a selection of tests needs, so a build that runs a few
of the tests (the sanitizer and no-MPI builds of scripts/test.sh) compiles
only those. Reads `ctest --show-only=json-v1` of the selection on stdin (for
the test names: before the build, ctest leaves out the command of a test
whose program does not exist yet) and the commands from the build's
CTestTestfile.cmake files; prints the targets (space separated), or nothing
when a program a test runs is not a target it knows: the caller then builds
everything. A test's arguments that name no target are files or
directories the test makes itself.

usage: ctest ... --show-only=json-v1 | test_targets.py BUILD_DIR TARGET_LIST
  TARGET_LIST: a file with `cmake --build BUILD_DIR --target help`
"""
import json
import os
import re
import sys

ADD_TEST = re.compile(r'^add_test\(\[=\[(.*?)\]=\] (.*)\)\s*$')


def commands(build):
    """test name -> its command words, from every CTestTestfile.cmake."""
    out = {}
    for root, _, files in os.walk(build):
        if "CTestTestfile.cmake" not in files:
            continue
        with open(os.path.join(root, "CTestTestfile.cmake")) as f:
            for line in f:
                m = ADD_TEST.match(line)
                if m:
                    out[m.group(1)] = re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(2))
    return out


def main():
    build, help_file = os.path.realpath(sys.argv[1]), sys.argv[2]
    known = set()
    with open(help_file) as f:
        for line in f:
            if line.startswith("... "):
                known.add(line[4:].split()[0])
    # the tool's program is `pld`; its target pld_tool
    renamed = {"pld": "pld_tool"}
    want = {"pld", "pld_tool"}  # every run of scripts/test.sh runs `pld tune`
    cmds = commands(build)
    for test in json.load(sys.stdin)["tests"]:
        if test["name"] not in cmds:
            return  # a test this script cannot read: build all
        for k, word in enumerate(cmds[test["name"]]):
            if not word.startswith("/"):
                continue
            path = os.path.realpath(word)
            if not path.startswith(build + os.sep):
                continue
            name = renamed.get(os.path.basename(path), os.path.basename(path))
            if name in known:
                want.add(name)
            elif k == 0:
                return  # a program the build makes under another name: build all
    print(" ".join(sorted(want)))


main()
