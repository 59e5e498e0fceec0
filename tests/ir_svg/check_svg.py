# SPDX-License-Identifier: Apache-2.0
"""Runs a pld example with --ir-svg and checks the picture's structure.

    check_svg.py PROGRAM [ARGS...] --expect lanes=3,put=6,notify=6[,...]

The picture must be well-formed XML (an SVG root), the program must print
OK, and every count named in --expect must match exactly:

    lanes     lane lines (one per rank)
    put, get  data arrows between two ranks (a rank's own window has none)
    notify    notify -> wait arrows, matched or not
    unmatched notify arrows no wait needed
    call      builtin call boxes (one per call per rank)
    band      barrier rounds
    launch    launches drawn

Structure, not bytes: the counts say what the protocol did, whatever the
layout constants are. The tutorial pictures are compared byte for byte by
docs/tutorial/gen_ir.sh --check.
"""
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def counts(root):
    c = {"lanes": 0, "put": 0, "get": 0, "notify": 0, "unmatched": 0, "call": 0,
         "band": 0, "launch": 0}
    for e in root.iter():
        classes = (e.get("class") or "").split()
        tag = e.tag.replace(NS, "")
        if tag == "line" and "lane" in classes:
            c["lanes"] += 1
        elif tag == "line":
            for k in ("put", "get", "notify", "unmatched"):
                if k in classes:
                    c[k] += 1
        elif tag == "rect" and "call" in classes:
            c["call"] += 1
        elif tag == "rect" and "band" in classes:
            c["band"] += 1
        elif tag == "g" and "launch" in classes:
            c["launch"] += 1
    return c


def main(argv):
    if "--expect" not in argv:
        sys.exit("usage: check_svg.py PROGRAM [ARGS...] --expect k=v[,k=v...]")
    i = argv.index("--expect")
    cmd, expect = argv[1:i], dict(kv.split("=") for kv in argv[i + 1].split(","))
    fd, path = tempfile.mkstemp(suffix=".svg")
    os.close(fd)
    try:
        run = subprocess.run(cmd + ["--ir-svg", path], capture_output=True, text=True,
                             timeout=60)
        if run.returncode != 0 or run.stdout.strip() != "OK":
            sys.exit(f"FAIL: {' '.join(cmd)} exited {run.returncode}:\n{run.stdout}{run.stderr}")
        try:
            root = ET.parse(path).getroot()
        except ET.ParseError as e:
            sys.exit(f"FAIL: the picture is not well-formed XML: {e}")
        if root.tag != NS + "svg":
            sys.exit(f"FAIL: the root element is {root.tag}, not an SVG")
        got = counts(root)
        bad = [f"{k}: got {got.get(k)} want {v}" for k, v in expect.items()
               if got.get(k) != int(v)]
        leftovers = [f for f in os.listdir(os.path.dirname(path))
                     if f.startswith(os.path.basename(path) + ".part.")]
        if leftovers:
            bad.append(f"part files left behind: {leftovers}")
        if bad:
            sys.exit("FAIL: " + "; ".join(bad) + f"\n(all counts: {got})")
        print(f"OK {got}")
    finally:
        os.unlink(path)


if __name__ == "__main__":
    main(sys.argv)
