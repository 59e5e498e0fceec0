#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How close the cost model's predictions come to the measured times.

For every collective, P and size it runs `pld cost <coll> -s SIZE --predict`
(the prediction of the path and algorithm the call takes) and `pld bench`
(the measured time per call, the median of --repeats runs, each run a
median of its own), then prints one markdown row per cell with the ratio
measured / predicted and, at the end, how many cells lie within the
tolerance.

    bench/predict_check.py [--pld build/pld] [--ranks 2,4,8] [--repeats 3]
                           [--sizes 4K,64K,1M,16M] [--tolerance 0.3]
                           [--transport thread|process | --launch "mpirun -np {P}"]

The model's parameters are measured on the thread transport; --transport
and --launch (which runs pld bench under the launcher, {P} the group size,
with --transport mpi) show how far they carry to the other transports.
"""
import argparse
import shlex
import statistics
import subprocess
import sys

COLLS = ["barrier", "broadcast", "allgather", "reduce_scatter", "allreduce", "all_to_all",
         "all_to_all_v"]


def size_bytes(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * mult[s[-1]] if s[-1] in mult else int(s)


def predicted(pld, coll, p, size):
    out = subprocess.run([pld, "cost", coll, "-d", f"0-{p - 1}", "-s", size, "--predict"],
                         check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.endswith("<- this call"):
            return float(line.split()[-4])
    raise RuntimeError(f"no prediction for {coll} P={p} {size}:\n{out}")


def measured(pld, coll, p, size, repeats, transport, launch):
    times = []
    cmd = [pld, "bench", coll, "-b", size, "-e", size,
           "-n", "20" if size_bytes(size) >= 1 << 20 else "200", "-w", "5"]
    if launch:
        cmd = shlex.split(launch.format(P=p)) + cmd + ["--transport", "mpi"]
    else:
        cmd += ["-d", f"0-{p - 1}", "--transport", transport]
    for _ in range(repeats):
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            cols = line.split()
            # out-of-place time, else in-place (allreduce runs in place)
            times.append(float(cols[5] if cols[5] != "N/A" else cols[9]))
            break
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pld", default="build/pld")
    ap.add_argument("--ranks", default="2,4,8")
    ap.add_argument("--sizes", default="4K,64K,1M,16M")
    ap.add_argument("--colls", default=",".join(COLLS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tolerance", type=float, default=0.3)
    ap.add_argument("--transport", default="thread", choices=["thread", "process"])
    ap.add_argument("--launch", default="", help='e.g. "mpirun -np {P}": --transport mpi')
    a = ap.parse_args()
    print("| collective | P | size | predicted us | measured us | measured / predicted |")
    print("|---|---:|---:|---:|---:|---:|")
    inside = total = 0
    for coll in a.colls.split(","):
        for p in (int(x) for x in a.ranks.split(",")):
            for size in (["0"] if coll == "barrier" else a.sizes.split(",")):
                pred = predicted(a.pld, coll, p, size if size != "0" else "8")
                meas = measured(a.pld, coll, p, size if size != "0" else "8", a.repeats,
                                a.transport, a.launch)
                ratio = meas / pred if pred > 0 else float("inf")
                ok = abs(ratio - 1) <= a.tolerance
                inside += ok
                total += 1
                print(f"| {coll} | {p} | {size} | {pred:.1f} | {meas:.1f} | {ratio:.2f}"
                      f"{'' if ok else ' *'} |", flush=True)
    print(f"\n{inside} of {total} cells within {a.tolerance:.0%} of the prediction "
          "(* marks the others)")


if __name__ == "__main__":
    sys.exit(main())
