#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/plot.py - SVG plots of pld bench and bench/compare.sh CSV files.

usage: bench/plot.py [-o DIR] [-n NAME] [LABEL=]FILE.csv ...

Reads two kinds of CSV, told apart by their header:
  * `pld bench --csv` (and bench/mpi_coll --csv, and the raw runs that
    `compare.sh -k` keeps): one line per collective, P, size and column
    group; tool "pld" lines are drawn per transport (in-place forms as
    their own line), tool "mpi" lines as the MPI library;
  * `bench/compare.sh -o` tables: median times per (collective, P, size)
    for each pld transport and MPI, and the ratios pld / MPI.
A LABEL names what a file measured: the MPI library of a compare.sh table
("Open MPI 4.1.4"), or a prefix for the lines of a pld bench file
("before", "a5sim"). Give several compare.sh tables (one per MPI library)
to get a line per library.

Writes NAME-busbw.svg (bus bandwidth against size, a panel per collective
and P, one line per transport and per MPI library) and, when a compare.sh
table is among the inputs, NAME-ratio.svg (time pld / MPI against size;
below 1 pld is faster). busbw is nccl-tests' bus bandwidth; for compare.sh
tables it is computed from the median times with the same factors.

Needs matplotlib (python3-matplotlib); without it, prints one line and
exits with status 3."""

import argparse
import csv
import math
import os
import sys

ORDER = ["barrier", "broadcast", "allgather", "allgather_inplace", "reduce_scatter",
         "allreduce", "allreduce_ring", "all_to_all", "all_to_all_v"]
NO_MPLOTLIB = 3


def busbw_factor(coll, p):
    base = coll.split("_inplace")[0].replace("allreduce_ring", "allreduce")
    if base == "allreduce":
        return 2.0 * (p - 1) / p
    if base == "broadcast":
        return 1.0
    if base == "barrier":
        return 0.0
    return (p - 1) / p


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def series_from_bench(rows, label, out):
    """pld bench / mpi_coll rows -> out[(coll, P)][series] = [(size, busbw)]"""
    for r in rows:
        size, busbw = int(r["size"]), float(r["busbw_gbs"] or 0)
        if size <= 0 or busbw <= 0:
            continue
        coll = r["collective"]
        if r["tool"] == "mpi":
            name = "MPI"
        else:
            mode, place = r.get("mode", ""), r.get("place", "")
            if coll == "allreduce" and mode == "ring":
                coll = "allreduce_ring"
            if coll == "allgather" and (mode == "inplace" or place == "in"):
                coll = "allgather_inplace"
            name = "pld " + r["transport"]
        if label:
            name = f"{label}: {name}" if r["tool"] != "mpi" else label
        out.setdefault((coll, int(r["P"])), {}).setdefault(name, []).append((size, busbw))


def series_from_compare(rows, label, out, ratios):
    """compare.sh rows -> busbw series (times -> busbw) and ratio series"""
    mpi_name = label or "MPI"
    for r in rows:
        coll, p, size = r["collective"], int(r["P"]), int(r["size"])
        f = busbw_factor(coll, p)
        for key, val in r.items():
            if not key.endswith("_us") or not val:
                continue
            t = float(val)
            if size > 0 and t > 0 and f > 0:
                who = mpi_name if key == "mpi_us" else "pld " + key[:-3].replace("pld_mpi", "mpi")
                out.setdefault((coll, p), {}).setdefault(who, []).append(
                    (size, size / (t * 1e3) * f))
        for key, val in r.items():
            if key.endswith("_over_mpi") and val:
                who = "pld " + key[: -len("_over_mpi")].replace("pld_mpi", "mpi")
                if label:
                    who += f" / {label}"
                ratios.setdefault((coll, p), {}).setdefault(who, []).append((max(size, 1),
                                                                              float(val)))


def fmt_size(b):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if b < 1024 or unit == "GiB":
            return f"{b:g} {unit}"
        b /= 1024


def grid(plt, data, ylabel, title, path, logy, hline=None):
    keys = sorted(data, key=lambda k: (ORDER.index(k[0]) if k[0] in ORDER else 99, k[1]))
    colls = [c for c in ORDER if any(k[0] == c for k in keys)]
    colls += sorted({k[0] for k in keys} - set(colls))
    ps = sorted({k[1] for k in keys})
    fig, axes = plt.subplots(len(colls), len(ps), figsize=(4.2 * len(ps), 2.9 * len(colls)),
                             squeeze=False)
    for i, coll in enumerate(colls):
        for j, p in enumerate(ps):
            ax = axes[i][j]
            lines = data.get((coll, p), {})
            for name in sorted(lines):
                pts = sorted(lines[name])
                ax.plot([s for s, _ in pts], [v for _, v in pts], marker="o", markersize=3,
                        linewidth=1.2, label=name)
            ax.set_xscale("log", base=2)
            if logy and lines:
                ax.set_yscale("log")
            if hline is not None:
                ax.axhline(hline, color="grey", linewidth=0.8, linestyle="--")
            ax.set_title(f"{coll}, P={p}", fontsize=9)
            ax.tick_params(labelsize=7)
            ax.grid(True, which="major", linewidth=0.3)
            if j == 0:
                ax.set_ylabel(ylabel, fontsize=8)
            if i == len(colls) - 1:
                ax.set_xlabel("size (bytes)", fontsize=8)
            # a barrier has no size: its one point sits at 1 B
            ax.xaxis.set_major_formatter(
                plt.FuncFormatter(lambda v, _: fmt_size(v) if v >= 1 else ""))
            if lines:
                ax.legend(fontsize=6, loc="best")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, format=os.path.splitext(path)[1][1:] or "svg", dpi=60)
    plt.close(fig)
    print(path)


def main(argv):
    ap = argparse.ArgumentParser(
        description="SVG plots of pld bench --csv and bench/compare.sh CSV files")
    ap.add_argument("files", nargs="+", metavar="[LABEL=]FILE.csv")
    ap.add_argument("-o", "--outdir", default=".", help="where the SVGs go (default .)")
    ap.add_argument("-n", "--name", default="pld", help="file name prefix (default pld)")
    ap.add_argument("-t", "--title", default="", help="a line added to every title")
    a = ap.parse_args(argv)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot.py: matplotlib is not installed (apt-get install python3-matplotlib)")
        return NO_MPLOTLIB
    matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: small, searchable SVGs
    matplotlib.rcParams["svg.hashsalt"] = "pld"   # the same input gives the same file

    busbw, ratios = {}, {}
    for spec in a.files:
        label, path = spec.split("=", 1) if "=" in spec and not os.path.exists(spec) else ("", spec)
        rows = read(path)
        if not rows:
            print(f"plot.py: {path}: no rows", file=sys.stderr)
            continue
        if "tool" in rows[0]:
            series_from_bench(rows, label, busbw)
        elif "mpi_us" in rows[0]:
            series_from_compare(rows, label, busbw, ratios)
        else:
            print(f"plot.py: {path}: neither a pld bench nor a compare.sh CSV", file=sys.stderr)
            return 2
    if not busbw and not ratios:
        print("plot.py: nothing to plot", file=sys.stderr)
        return 2
    os.makedirs(a.outdir, exist_ok=True)
    sub = f" -- {a.title}" if a.title else ""
    if busbw:
        grid(plt, busbw, "busbw (GB/s)", "bus bandwidth (nccl-tests' busbw)" + sub,
             os.path.join(a.outdir, f"{a.name}-busbw.svg"), logy=True)
    if ratios:
        for v in ratios.values():
            for pts in v.values():
                pts[:] = [(s, q) for s, q in pts if q > 0 and math.isfinite(q)]
        grid(plt, ratios, "time pld / MPI", "time ratio pld / MPI (below 1: pld faster)" + sub,
             os.path.join(a.outdir, f"{a.name}-ratio.svg"), logy=True, hline=1.0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
