#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Write a PLD_RULES file from measurements: auto's choices as this machine
(or cluster) runs them, not as the cost model predicts them.

For every group size P and every collective auto chooses for, it runs
`pld bench` once per candidate algorithm (`--mode`; for the barrier's
rounds, each PLD_SYNC form), interleaved, --repeats times, and takes at
every size the candidate with the lowest median time. Neighbouring sizes
with the same winner become one rule:

    broadcast    pull, binomial                  bytes: the data
    allgather    push, doubling                  bytes: one rank's row
    allreduce    mesh, rs_ag, rabenseifner       bytes: the data
    all_to_all   push, bruck                     bytes: one chunk
    sync         full, dissemination, tree       (every call)

A rule measured at P holds from P up to the next measured P (the last one
for every larger group); groups smaller than the smallest measured P get
no rule, and the cost model decides for them. The first byte range starts
at 0, the last has no end. Sizes the one-round path takes (`pld cost`
says so) decide nothing: auto takes that path before any rule. Every time
measured goes into a comment above its rule. A run whose check finds a
wrong element, or that fails, stops the script: a rule must not rest on a
broken measurement.

    bench/make_rules.py [--pld build/pld] [--ranks 4,8] [-b 4K] [-e 1M] [-f 4]
                        [--iters 20] [--repeats 3] [--transport thread]
                        [--launch "mpirun -np {P}"] [--colls LIST]
                        [--keep DIR | --from-csv DIR] [-o FILE]

--launch runs every measurement under a launcher ({P}: the group size)
with --transport mpi. The sync candidates are set through PLD_SYNC, and
PLD_RULES is unset, in the script's environment: a launcher that starts
processes on other nodes must pass them on (Open MPI: -x PLD_SYNC), or
world init refuses the run (the processes disagree on PLD_SYNC). --keep
keeps the CSV of every run in DIR, and --from-csv reads such a directory
again instead of measuring.
"""
import argparse
import csv
import datetime
import os
import shlex
import socket
import statistics
import subprocess
import sys
import tempfile

# auto's candidates, in the order a tie keeps (the library's own default
# first), and what the rule's bytes measure: the bench size, or a row or
# chunk of it (size / P)
CANDIDATES = {
    "broadcast": (["pull", "binomial"], "data"),
    "allgather": (["push", "doubling"], "row"),
    "allreduce": (["mesh", "rs_ag", "rabenseifner"], "data"),
    "all_to_all": (["push", "bruck"], "row"),
    "sync": (["full", "dissemination", "tree"], None),
}


# the most rules a PLD_RULES file may hold
RULES_MAX = 64


def csv_name(coll, choice, p, rep):
    return f"{coll}-{choice}-P{p}-r{rep}.csv"


def measure(args, coll, choice, p, rep, out_dir):
    """One `pld bench` run of one candidate; its CSV lands in out_dir."""
    path = os.path.join(out_dir, csv_name(coll, choice, p, rep))
    env = dict(os.environ)
    env.pop("PLD_RULES", None)  # the candidates, never a rule's choice
    if coll == "sync":
        env["PLD_SYNC"] = choice
        cmd = [args.pld, "bench", "barrier"]
    else:
        env.pop("PLD_SYNC", None)
        cmd = [args.pld, "bench", coll, "--mode", choice]
    cmd += ["-n", str(args.iters), "-w", "2", "--csv", path]
    if coll != "sync":
        cmd += ["-b", args.minbytes, "-e", args.maxbytes, "-f", str(args.factor)]
    if args.launch:
        cmd = shlex.split(args.launch.format(P=p)) + cmd + ["--transport", "mpi"]
    else:
        cmd += ["-d", f"0-{p - 1}", "--transport", args.transport]
    run = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"make_rules: {' '.join(cmd)} failed ({run.returncode}):\n"
                 f"{run.stdout[-2000:]}{run.stderr[-2000:]}")


def read_times(path, coll):
    """{size: time_us} of one run's CSV (allgather: out of place)."""
    times = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row["tool"] != "pld" or (coll == "allgather" and row["place"] != "out"):
                continue
            if row["wrong"] not in ("0", "N/A", ""):
                sys.exit(f"make_rules: {path}: {row['wrong']} wrong elements at "
                         f"{row['size']} B; no rule rests on a broken run")
            times[int(row["size"])] = float(row["time_us"])
    if not times:
        sys.exit(f"make_rules: {path}: no rows")
    return times


def medians(src_dir, coll, p, repeats):
    """{size: {choice: median time_us}} over the repeats of every candidate."""
    cells = {}
    for choice in CANDIDATES[coll][0]:
        runs = [read_times(os.path.join(src_dir, csv_name(coll, choice, p, r)), coll)
                for r in range(repeats)]
        for size in runs[0]:
            got = [run[size] for run in runs if size in run]
            cells.setdefault(size, {})[choice] = statistics.median(got)
    return {s: c for s, c in cells.items() if len(c) == len(CANDIDATES[coll][0])}


def one_round(pld, coll, p, size):
    """Whether auto takes the one-round path for this call (pld cost)."""
    if coll == "sync":
        return False
    run = subprocess.run([pld, "cost", coll, "-d", f"0-{p - 1}", "-s", str(size)],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"make_rules: pld cost {coll} -d 0-{p - 1} -s {size} failed:\n{run.stderr}")
    return any(line.startswith("# path: one round") for line in run.stdout.splitlines())


def fmt_bytes(n):
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def rules_for(pld, coll, p_lo, p_hi, p, cells):
    """The rule lines (with their comments) of one collective at one P."""
    ranks = f"{p_lo}-*" if p_hi is None else (f"{p_lo}" if p_lo == p_hi else f"{p_lo}-{p_hi}")
    unit = CANDIDATES[coll][1]
    order = CANDIDATES[coll][0]
    if coll == "sync":
        times = cells[0]
        win = min(order, key=lambda c: (times[c], order.index(c)))
        note = ", ".join(f"{c} {times[c]:.2f}" for c in order)
        return [f"# P = {p}, barrier: {note} us", f"sync {ranks} * {win}"]
    steps, lines = [], []  # steps: (rule bytes, winner, comment)
    for size in sorted(cells):
        times = cells[size]
        if one_round(pld, coll, p, size):
            lines.append(f"# P = {p}, {size} B: one round (auto takes it before any rule): "
                         + ", ".join(f"{c} {times[c]:.2f}" for c in order) + " us")
            continue
        win = min(order, key=lambda c: (times[c], order.index(c)))
        bytes_ = size if unit == "data" else size // p
        note = ", ".join(f"{c} {times[c]:.2f}" for c in order)
        steps.append((bytes_, win, f"# P = {p}, {size} B ({bytes_} B {unit}): {note} us"))
    i = 0
    while i < len(steps):
        j = i
        while j + 1 < len(steps) and steps[j + 1][1] == steps[i][1]:
            j += 1
        lo = 0 if i == 0 else steps[i][0]
        hi = "*" if j + 1 == len(steps) else str(steps[j + 1][0] - 1)
        lines += [s[2] for s in steps[i:j + 1]]
        lines.append(f"{coll} {ranks} {fmt_bytes(lo)}-{hi} {steps[i][1]}")
        i = j + 1
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pld", default="build/pld")
    ap.add_argument("--ranks", default="4,8", help="group sizes, e.g. 4,8,64")
    ap.add_argument("-b", "--minbytes", default="4K", help="smallest size (pld bench -b)")
    ap.add_argument("-e", "--maxbytes", default="1M", help="largest size (pld bench -e)")
    ap.add_argument("-f", "--factor", type=int, default=4, help="pld bench -f")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--transport", default="thread", choices=["thread", "process"])
    ap.add_argument("--launch", default="", help='e.g. "mpirun -np {P}": --transport mpi')
    ap.add_argument("--colls", default=",".join(CANDIDATES))
    ap.add_argument("--keep", help="keep every run's CSV in this directory")
    ap.add_argument("--from-csv", help="read the CSVs of an earlier --keep, do not measure")
    ap.add_argument("-o", "--output", default="-")
    args = ap.parse_args()
    ranks = sorted({int(x) for x in args.ranks.split(",")})
    colls = [c for c in args.colls.split(",") if c]
    for c in colls:
        if c not in CANDIDATES:
            sys.exit(f"make_rules: unknown collective '{c}'; the collectives are "
                     f"{', '.join(CANDIDATES)}")
    if min(ranks) < 2:
        sys.exit("make_rules: --ranks: a group to choose for has 2 ranks or more")

    scratch = None  # the runs' CSV files, removed at exit unless --keep
    src = args.from_csv
    if not src:
        if not args.keep:
            scratch = tempfile.TemporaryDirectory(prefix="pld_rules_")
        src = args.keep or scratch.name
        os.makedirs(src, exist_ok=True)
        for p in ranks:
            for coll in colls:
                for rep in range(args.repeats):  # interleaved: every candidate per repeat
                    for choice in CANDIDATES[coll][0]:
                        measure(args, coll, choice, p, rep, src)

    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    how = (f"under '{args.launch}', transport mpi" if args.launch
           else f"transport {args.transport}")
    out = ["pld_rules 1",
           f"# measured by bench/make_rules.py on {socket.gethostname()}, {stamp}"
           + (f" (read from {args.from_csv})" if args.from_csv else ""),
           f"# pld bench, {how}, sizes {args.minbytes}-{args.maxbytes} (x{args.factor}), "
           f"{args.iters} calls a "
           f"run, the median of {args.repeats} runs per candidate; times in us",
           "# each rule holds from its measured P up to the next one; the first byte "
           "range starts at 0, the last one has no end"]
    nrules = 0
    for coll in colls:
        for k, p in enumerate(ranks):
            p_hi = ranks[k + 1] - 1 if k + 1 < len(ranks) else None
            cells = medians(src, coll, p, args.repeats)
            if not cells:
                sys.exit(f"make_rules: {coll} at P = {p}: no size measured by every candidate")
            lines = rules_for(args.pld, coll, p, p_hi, p, cells)
            nrules += sum(1 for line in lines if not line.startswith("#"))
            out += lines
    if nrules > RULES_MAX:
        sys.exit(f"make_rules: {nrules} rules; pld reads at most {RULES_MAX}: measure fewer "
                 "group sizes or a coarser size sweep (-f)")
    text = "\n".join(out) + "\n"
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
