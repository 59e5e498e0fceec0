#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/make_rules.py: rules from measurements.

    make_rules_check.py PLD MAKE_RULES

1. From CSV files of known times (--from-csv), at P = 4 and 8: the rules
   are exactly the winners by median (one run in three is an outlier that
   would change the winner by mean), neighbouring sizes with one winner
   merge, P = 4's rules end at 7 and P = 8's have no end, sizes auto sends
   down the one-round path decide nothing, and the barrier's form is the
   fastest PLD_SYNC.
2. Refusals: a run with a wrong element, an unknown collective.
3. Measured at P = 3 and 4 (thread transport): pld reads the file
   (`pld bench` names it and its rule count, and every element of every
   collective under it is right), every rule's choice is the fastest run
   kept, and `pld cost` says each rule decides its call.
"""
import csv
import os
import re
import subprocess
import sys
import tempfile

PLD, MAKE_RULES = sys.argv[1], sys.argv[2]
failures = []

FIELDS = ["tool", "collective", "mode", "transport", "P", "size", "count", "type", "redop",
          "root", "time_us", "algbw_gbs", "busbw_gbs", "wrong", "peak_pct", "memcpy_gbs",
          "peer_bytes", "card_bytes", "self_bytes", "card_ok", "team", "groups", "place"]


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def write_csv(path, coll, mode, p, rows, wrong=0):
    """rows: {size: time_us}."""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        for size, t in rows.items():
            w.writerow({"tool": "pld", "collective": coll, "mode": mode, "transport": "thread",
                        "P": p, "size": size, "count": size // 4, "type": "fp32",
                        "redop": "sum", "root": -1, "time_us": t, "wrong": wrong,
                        "place": "out" if coll == "allgather" else "in"})


def size_of(s):
    """A rule's byte bound: N, NK, NM, NG; None for '*'."""
    if s == "*":
        return None
    shift = {"K": 10, "M": 20, "G": 30}.get(s[-1])
    return int(s[:-1]) << shift if shift else int(s)


def rules_of(text):
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def make_rules(*args, env=None):
    return subprocess.run([sys.executable, MAKE_RULES, "--pld", PLD, *args],
                          capture_output=True, text=True, env=env)


def canned(tmp):
    d = os.path.join(tmp, "canned")
    os.makedirs(d)
    k, m = 1024, 1024 * 1024
    # allreduce at P = 4, three runs per candidate: at 256K rs_ag wins by
    # median (50) and would lose by mean (200 > 60); at 1M rabenseifner wins
    ar4 = {"mesh": [{64 * k: 30, 256 * k: 90, m: 300}] * 3,
           "rs_ag": [{64 * k: 20, 256 * k: 50, m: 100}, {64 * k: 20, 256 * k: 50, m: 100},
                     {64 * k: 20, 256 * k: 500, m: 100}],
           "rabenseifner": [{64 * k: 25, 256 * k: 60, m: 90}] * 3}
    ar8 = {"mesh": [{64 * k: 10, 256 * k: 20, m: 40}] * 3,
           "rs_ag": [{64 * k: 11, 256 * k: 21, m: 41}] * 3,
           "rabenseifner": [{64 * k: 12, 256 * k: 22, m: 42}] * 3}
    for p, table in ((4, ar4), (8, ar8)):
        for mode, runs in table.items():
            for r, rows in enumerate(runs):
                write_csv(os.path.join(d, f"allreduce-{mode}-P{p}-r{r}.csv"), "allreduce",
                          mode, p, rows)
    # allgather at P = 4 and 8 (rows of size / P): without PLD_LL_BYTES the
    # allgather never takes the one-round path; with it set, 4 KiB at P = 4
    # does and decides nothing
    for mode, t in (("push", {4 * k: 5, 64 * k: 9, m: 50}),
                    ("doubling", {4 * k: 4, 64 * k: 10, m: 60})):
        for p in (4, 8):
            for r in range(3):
                write_csv(os.path.join(d, f"allgather-{mode}-P{p}-r{r}.csv"), "allgather",
                          mode, p, t)
    for p, times in ((4, {"full": 3, "dissemination": 5, "tree": 6}),
                     (8, {"full": 30, "dissemination": 12, "tree": 9})):
        for form, t in times.items():
            for r in range(3):
                write_csv(os.path.join(d, f"sync-{form}-P{p}-r{r}.csv"), "barrier", form, p,
                          {0: t})
    env = dict(os.environ)
    env.pop("PLD_LL_BYTES", None)
    run = make_rules("--from-csv", d, "--ranks", "8,4", "--repeats", "3",
                     "--colls", "allreduce,allgather,sync", env=env)
    if run.returncode != 0:
        fail(f"canned: exit {run.returncode}: {run.stderr}")
        return
    want = ["pld_rules 1",
            "allreduce 4-7 0-1048575 rs_ag",
            "allreduce 4-7 1M-* rabenseifner",
            "allreduce 8-* 0-* mesh",
            # rows 1 KiB, 16 KiB, 256 KiB at P = 4; 512 B, 8 KiB, 128 KiB at 8
            "allgather 4-7 0-16383 doubling",
            "allgather 4-7 16K-* push",
            "allgather 8-* 0-8191 doubling",
            "allgather 8-* 8K-* push",
            "sync 4-7 * full",
            "sync 8-* * tree"]
    got = rules_of(run.stdout)
    if got != want:
        fail("canned: the rules differ:\n  got  " + "\n       ".join(got) +
             "\n  want " + "\n       ".join(want))
    if "rs_ag 50.00" not in run.stdout:
        fail("canned: the comments do not show the median (rs_ag 50.00 at 256 KiB)")
    # with PLD_LL_BYTES set, the 4 KiB allgather (1 KiB rows) takes one round
    env["PLD_LL_BYTES"] = "4096"
    run = make_rules("--from-csv", d, "--ranks", "4", "--repeats", "3", "--colls",
                     "allgather", env=env)
    got = rules_of(run.stdout)
    if got != ["pld_rules 1", "allgather 4-* 0-* push"]:
        fail(f"canned, one round: {got}")
    if not re.search(r"# P = 4, 4096 B: one round \(auto takes it before any rule\)",
                     run.stdout):
        fail("canned, one round: no comment for the size auto sends down one round")
    # refusals
    write_csv(os.path.join(d, "allreduce-mesh-P4-r1.csv"), "allreduce", "mesh", 4,
              {64 * k: 30, 256 * k: 90, m: 300}, wrong=3)
    run = make_rules("--from-csv", d, "--ranks", "4", "--repeats", "3", "--colls", "allreduce")
    if run.returncode == 0 or "allreduce-mesh-P4-r1.csv: 3 wrong elements" not in run.stderr:
        fail(f"a run with wrong elements is not refused: {run.returncode} {run.stderr}")
    run = make_rules("--from-csv", d, "--colls", "reduce")
    if run.returncode == 0 or "unknown collective 'reduce'" not in run.stderr:
        fail(f"an unknown collective is not refused: {run.stderr}")


def is_fastest(keep, coll, p, size, choice):
    """Whether no candidate's kept run (one) at this size beat `choice`."""
    times = {}
    for name in os.listdir(keep):
        m = re.fullmatch(rf"{coll}-(\w+)-P{p}-r0\.csv", name)
        if not m:
            continue
        with open(os.path.join(keep, name), newline="") as f:
            for row in csv.DictReader(f):
                if int(row["size"]) == size and (coll != "allgather" or row["place"] == "out"):
                    times[m.group(1)] = float(row["time_us"])
    return len(times) > 1 and times.get(choice) == min(times.values())


def measured(tmp):
    keep, path = os.path.join(tmp, "runs"), os.path.join(tmp, "measured.rules")
    env = dict(os.environ)
    env.pop("PLD_LL_BYTES", None)
    run = make_rules("--ranks", "3,4", "-b", "16K", "-e", "1M", "-f", "64", "--iters", "3",
                     "--repeats", "1", "--keep", keep, "-o", path, env=env)
    if run.returncode != 0:
        fail(f"measured: exit {run.returncode}: {run.stderr}")
        return
    text = open(path).read()
    rules = rules_of(text)[1:]
    if not rules:
        fail("measured: no rules")
        return
    env["PLD_RULES"] = path
    bench = subprocess.run([PLD, "bench", "all", "-d", "0-3", "-b", "64K", "-e", "64K", "-n", "2",
                            "-w", "0", "--warmup-ms", "0"], capture_output=True, text=True,
                           env=env)
    if bench.returncode != 0 or "# total #wrong: 0, cost card = byte counters: yes" \
            not in bench.stdout:
        fail(f"measured: pld bench all under the rules: {bench.returncode}\n{bench.stdout[-800:]}"
             f"{bench.stderr[-800:]}")
    if f"# PLD_RULES {path}: {len(rules)} rules" not in bench.stdout:
        fail("measured: pld bench does not name the file and its "
             f"{len(rules)} rules:\n" + "\n".join(bench.stdout.splitlines()[:8]))
    checked = 0
    for rule in rules:
        coll, ranks, bytes_, choice = rule.split()
        p = int(ranks.split("-")[0])
        if coll == "sync":
            if not is_fastest(keep, "sync", p, 0, choice):
                fail(f"measured: '{rule}' is not the fastest form kept")
            checked += 1
            continue
        lo, hi = (size_of(x) for x in bytes_.split("-"))
        kept = os.path.join(keep, f"{coll}-{choice}-P{p}-r0.csv")
        with open(kept, newline="") as f:
            sizes = sorted({int(r["size"]) for r in csv.DictReader(f)})
        for size in sizes:
            b = size if coll in ("broadcast", "allreduce") else size // p
            if b < lo or (hi is not None and b > hi):
                continue
            cost = subprocess.run([PLD, "cost", coll, "-d", f"0-{p - 1}", "-s", str(size)],
                                  capture_output=True, text=True, env=env).stdout
            if "# path: one round" in cost:
                continue  # auto takes one round first: the rule does not decide
            checked += 1
            if not is_fastest(keep, coll, p, size, choice):
                fail(f"measured: '{rule}' is not the fastest kept at {size} B")
            want = re.compile(rf"^# auto's pick: {choice} \(rule {re.escape(path)}:\d+; ",
                              re.M)
            if not want.search(cost):
                fail(f"measured: pld cost {coll} P={p} {size} B does not follow '{rule}':\n"
                     + "\n".join(x for x in cost.splitlines() if "pick" in x))
    if checked < 8:
        fail(f"measured: only {checked} rule decisions checked:\n{text}")


def main():
    with tempfile.TemporaryDirectory(prefix="pld_make_rules_") as tmp:
        canned(tmp)
        measured(tmp)
    if failures:
        sys.exit(1)
    print("make_rules_check: OK")


if __name__ == "__main__":
    main()
