# SPDX-License-Identifier: Apache-2.0
"""tests/tools/bench_nccl_check.py PLD [TRANSPORT]

`pld bench` output read by a parser written for nccl-tests' format
(nccl_table.py), every row and the footer checked:
  * every row has nccl-tests' 13 leading fields; size = count x element
    size; the column groups a collective has (allgather both, broadcast /
    reduce_scatter / allreduce in-place, all_to_all(_v) and barrier
    out-of-place) hold numbers, the others N/A;
  * algbw = size / time and busbw = algbw x nccl-tests' factor (to the
    printed precision); #wrong 0, or N/A with -c 0;
  * -o all, --datatype all, -r all: one block per op, dtype and root;
  * the footer: '# Out of bounds values : 0 OK' and '# Avg bus bandwidth
    : X' with X the mean busbw of every measurement (both groups);
  * %peak (pld's columns after the 13th) is a number in every group of a
    4 KiB .. 256 KiB sweep. Its ceiling of 100 there is not asserted: on a
    loaded machine the memcpy reference itself can be measured slow, and a
    test must not assert speed (tools.test_peak_layout checks the
    reference's buffers instead; docs/performance.md says where %peak may
    exceed 100);
  * a spoiled element (--inject-error) makes it '# Out of bounds values :
    1 FAILED' and exit status 1.
No timing is asserted."""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccl_table  # noqa: E402

ESIZE = {"fp32": 4, "fp16": 2, "bf16": 2, "int32": 4, "int16": 2, "int8": 1, "uint8": 1,
         "int64": 8, "fp64": 8, "-": 1}
PLACES = {"barrier": ("out",), "broadcast": ("in",), "allgather": ("out", "in"),
          "reduce_scatter": ("in",), "allreduce": ("in",), "all_to_all": ("out",),
          "all_to_all_v": ("out",)}
fails = []


def fail(msg):
    fails.append(msg)
    print("FAIL:", msg)


def factor(coll, p):
    return {"allreduce": 2 * (p - 1) / p, "broadcast": 1.0, "barrier": 0.0}.get(coll, (p - 1) / p)


def run(pld, transport, args, want_rc=0):
    cmd = [pld, "bench"] + args + ["--transport", transport]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    print("$", " ".join(cmd[1:]), "->", r.returncode)
    if r.returncode != want_rc:
        print(r.stdout, r.stderr)
        fail(f"{' '.join(args)}: exit status {r.returncode}, expected {want_rc}")
    return r.stdout


def tables(out):
    """Split the output at each collective's header; -> [(coll, text)], footer text."""
    parts, coll, cur = [], None, []
    for line in out.splitlines():
        if line.startswith("# pld bench ") and ": " in line and " (" in line:
            if coll:
                parts.append((coll, "\n".join(cur)))
            coll, cur = line.split(": ", 1)[1].split(" (")[0], []
        cur.append(line)
    if coll:
        parts.append((coll, "\n".join(cur)))
    return parts


def check(out, p, checked=True, peak_max=None, expect_rows=None):
    """Checks every row of every table and the footer; returns the rows."""
    busbws, rows_all = [], []
    for coll, text in tables(out):
        try:
            rows = nccl_table.parse(text)["rows"]
        except nccl_table.FormatError as e:
            fail(f"{coll}: {e}")
            continue
        if not rows:
            fail(f"{coll}: no rows")
        for r in rows:
            rows_all.append((coll, r))
            where = f"{coll} {r['size']} B {r['type']} {r['redop']} root {r['root']}"
            if r["size"] != r["count"] * ESIZE.get(r["type"], 0):
                fail(f"{where}: size is not count x element size")
            for g in nccl_table.GROUPS:
                c = r[g]
                if (c is not None) != (g in PLACES[coll]):
                    fail(f"{where}: the {g}-of-place group is "
                         f"{'present' if c else 'N/A'}, expected the other")
                    continue
                if c is None:
                    continue
                if not c["time"] > 0:
                    fail(f"{where}: {g}: time {c['time']}")
                if checked and c["wrong"] != 0:
                    fail(f"{where}: {g}: #wrong {c['wrong']}")
                if not checked and c["wrong"] is not None:
                    fail(f"{where}: {g}: #wrong {c['wrong']} without a check (N/A expected)")
                if coll == "barrier":
                    if c["algbw"] is not None or c["busbw"] is not None:
                        fail(f"{where}: barrier bandwidths should be N/A")
                    continue
                algbw = r["size"] / (c["time"] * 1e3)
                # time is printed to 0.01 us: allow that rounding and the 0.01 of algbw
                tol = algbw * 0.01 / c["time"] + 0.011
                if abs(c["algbw"] - algbw) > tol:
                    fail(f"{where}: {g}: algbw {c['algbw']}, size/time = {algbw:.3f}")
                if abs(c["busbw"] - c["algbw"] * factor(coll, p)) > tol + 0.011:
                    fail(f"{where}: {g}: busbw {c['busbw']} != algbw x {factor(coll, p):.3f}")
                busbws.append(c["busbw"])
            if peak_max is not None and coll != "barrier":
                for g, tok in zip(nccl_table.GROUPS, r["extra"][:2]):
                    if tok != "N/A" and float(tok) > peak_max:
                        fail(f"{where}: {g}: %peak {tok} > {peak_max}")
    foot = nccl_table.parse(out)
    if foot["oob"] != (0, "OK"):
        fail(f"footer: out of bounds values {foot['oob']}, expected (0, 'OK')")
    if foot["avg_busbw"] is None:
        fail("footer: no '# Avg bus bandwidth    : X' line")
    elif busbws:
        mean = sum(busbws) / len(busbws)
        if abs(foot["avg_busbw"] - mean) > 0.006 + 1e-3 * mean:
            fail(f"footer: avg bus bandwidth {foot['avg_busbw']}, rows give {mean:.4f}")
    if expect_rows is not None and len(rows_all) != expect_rows:
        fail(f"{len(rows_all)} rows, expected {expect_rows}")
    return rows_all


def main():
    pld = sys.argv[1]
    transport = sys.argv[2] if len(sys.argv) > 2 else "thread"
    quick = ["-n", "5", "-w", "1", "--warmup-ms", "2"]

    # every collective, P = 3, checked once (the default -c 1), 4 KiB .. 256 KiB
    out = run(pld, transport, ["all", "-d", "0-2", "-b", "4K", "-e", "256K", "-f", "4"] + quick)
    rows = check(out, 3, peak_max=float("inf"))
    colls = {c for c, _ in rows}
    if colls != set(PLACES):
        fail(f"tables for {sorted(colls)}, expected every collective")

    # -o all x --datatype all, unchecked (-c 0: #wrong N/A), rank 0's time (-a 0):
    # 4 reduction dtypes x 4 ops x 3 sizes
    out = run(pld, transport, ["allreduce", "-d", "0,1", "-b", "4K", "-e", "16K", "-o", "all",
                               "--datatype", "all", "-c", "0", "-a", "0"] + quick)
    rows = check(out, 2, checked=False, expect_rows=48)
    combos = {(r["type"], r["redop"]) for _, r in rows}
    if combos != {(t, o) for t in ("fp32", "fp16", "bf16", "int32")
                  for o in ("sum", "prod", "max", "min")}:
        fail(f"-o all --datatype all: combinations {sorted(combos)}")
    # a data-movement collective takes every dtype
    out = run(pld, transport, ["all_to_all", "-d", "0,1", "-b", "64", "-e", "64",
                               "--datatype", "all", "-a", "2"] + quick)
    check(out, 2, expect_rows=9)

    # -r all: every rank is the root once, in-place only; min and max over ranks
    for avg in ("3", "1"):
        out = run(pld, transport, ["broadcast", "-d", "0-2", "-r", "all", "-b", "1K", "-e", "4K",
                                   "-f", "4", "-a", avg] + quick)
        rows = check(out, 3, expect_rows=6)
        if sorted({r["root"] for _, r in rows}) != [0, 1, 2]:
            fail("-r all: roots are not 0, 1, 2")

    # the checker's count reaches the footer
    out = run(pld, transport, ["allreduce", "-d", "0-3", "-b", "4K", "-e", "4K", "-c", "1", "-n",
                               "2", "-w", "0", "--inject-error"], want_rc=1)
    foot = nccl_table.parse(out)
    if foot["oob"] is None or foot["oob"][1] != "FAILED" or foot["oob"][0] < 1:
        fail(f"--inject-error: footer says {foot['oob']}")

    print("FAILED" if fails else "PASS")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
