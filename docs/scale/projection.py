#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Projected time of pld's collectives from 8 to 10 000 ranks.

Runs `pld cost <collective> -d 0-(P-1) --predict --params FILE` for P
log-spaced from 8 to 10000, for a barrier, a 64 KiB allgather and a 4 KiB
allreduce, plots the predicted time of every algorithm in every
synchronisation form against P (log-log) into docs/scale/projection.svg,
and prints where the fastest combination changes (found to the exact P by
bisection between the plotted points).

The figures are projections from the parameter file's assumed numbers, not
measurements. Run by hand from the repository root, after building:

    python3 docs/scale/projection.py [--pld build/pld]
        [--params docs/params/example-cluster.txt] [--out docs/scale/projection.svg]

Needs matplotlib (Debian: apt-get install python3-matplotlib).
"""
import argparse
import functools
import math
import subprocess
import sys

CASES = [  # title, pld cost arguments
    ("barrier", ["barrier"]),
    ("allgather 64 KiB", ["allgather", "-s", "64K"]),
    ("allreduce 4 KiB", ["allreduce", "-s", "4K"]),
    ("broadcast 1 MiB", ["broadcast", "-s", "1M"]),
]
P_MIN, P_MAX, POINTS, DENSE = 8, 10000, 40, 512
COLOURS = {"full": "C0", "dissemination": "C1", "tree": "C2", "flags": "C3", "neighbour": "C4"}
LINES = ["-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1))]


def parse_rows(text):
    """The table rows: {(algorithm, form): predicted_us}."""
    rows = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        f = line.split()
        rows[(f[0], f[1])] = float(f[7])
    return rows


@functools.lru_cache(maxsize=None)
def project(pld, params, args, p):
    cmd = [pld, "cost", *args, "-d", "0-%d" % (p - 1), "--predict", "--params", params]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("%s: exit status %d\n%s" % (" ".join(cmd), out.returncode, out.stderr))
    return parse_rows(out.stdout)


def winners(rows, among=None):
    """The fastest rows of `among`: every row within the table's printed
    precision (0.001 us) of the minimum, so that rounding picks none."""
    keys = [k for k in rows if among is None or among(k)]
    if not keys:
        return []
    best = min(rows[k] for k in keys)
    return sorted(k for k in keys if rows[k] <= best + 0.0015)


def winner(rows, among=None, prev=None):
    """The fastest row: the previous one while it still ties for fastest."""
    w = winners(rows, among)
    return prev if prev in w else (w[0] if w else None)


def crossovers(run, ps, among=None):
    """[(P, new winner)] where the fastest of `among` changes, bisected to
    the exact P between neighbouring grid points."""
    found = []
    prev_p, prev_w = ps[0], winner(run(ps[0]), among)
    for p in ps[1:]:
        if prev_w not in winners(run(p), among):
            lo, hi = prev_p, p  # prev_w is fastest at lo, not at hi
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if prev_w in winners(run(mid), among):
                    lo = mid
                else:
                    hi = mid
            found.append((hi, winner(run(hi), among)))
            prev_w = winner(run(hi), among)
        prev_w = winner(run(p), among, prev_w)
        prev_p = p
    return found


def label(k):
    return "%s %s" % k


def report(title, run, ps):
    first = winner(run(ps[0]))
    changes = crossovers(run, ps)
    print("%s: fastest at P=%d: %s" % (title, ps[0], label(first)))
    for p, w in changes:
        print("  from P=%d: %s" % (p, label(w)))
    algs = sorted({k[0] for p in ps for k in run(p)})
    for alg in algs:
        changes = crossovers(run, ps, lambda k, a=alg: k[0] == a)
        for p, w in changes:
            print("  %s: from P=%d the %s form is the fastest" % (alg, p, w[1]))
    forms = sorted({k[1] for p in ps for k in run(p)})
    for form in forms:
        changes = crossovers(run, ps, lambda k, f=form: k[1] == f)
        for p, w in changes:
            print("  %s form: from P=%d %s is the fastest algorithm" % (form, p, w[0]))


def plot(results, ps, out):
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "pld-projection"  # stable ids
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(6 * len(results), 5))
    for ax, (title, run) in zip(axes, results):
        keys = sorted({k for p in ps for k in run(p)})
        algs = sorted({k[0] for k in keys})
        for k in keys:  # colour: the form; line: the algorithm
            xs = [p for p in ps if k in run(p)]
            ys = [run(p)[k] for p in xs]
            ax.plot(xs, ys, LINES[algs.index(k[0]) % len(LINES)], color=COLOURS.get(k[1], "k"),
                    marker=".", markersize=3, label=label(k))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("ranks P")
        ax.set_ylabel("predicted time per call (us)")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("pld cost --predict --params: projections from assumed machine parameters, "
                 "not measurements")
    fig.tight_layout()
    fig.savefig(out, metadata={"Date": None})


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pld", default="build/pld")
    ap.add_argument("--params", default="docs/params/example-cluster.txt")
    ap.add_argument("--out", default="docs/scale/projection.svg")
    a = ap.parse_args()
    ps = sorted({int(round(P_MIN * (P_MAX / P_MIN) ** (i / (POINTS - 1)))) for i in range(POINTS)})
    # crossovers: every P up to DENSE (where the forms' depths change every
    # few ranks), then the plotted points, bisected
    scan = sorted(set(range(P_MIN, DENSE + 1)) | set(ps))
    results = []
    for title, args in CASES:
        run = functools.partial(project, a.pld, a.params, tuple(args))
        report(title, run, scan)
        results.append((title, run))
    plot(results, ps, a.out)
    print("wrote", a.out)


if __name__ == "__main__":
    main()
