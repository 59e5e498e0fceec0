# SPDX-License-Identifier: Apache-2.0
"""A reader of nccl-tests' output (all_reduce_perf and friends), written
against nccl-tests' format and nothing of pld's: lines starting with '#'
are comments; a data row is whitespace-separated

    size count type redop root  time algbw busbw #wrong  time algbw busbw #wrong
                                `-- out-of-place ---'   `---- in-place -----'

where a group nccl-tests did not run is N/A, and #wrong is N/A when not
checked. Anything after the 13th field is left to the caller (pld adds
its own columns there). The footer is

    # Out of bounds values : N OK|FAILED
    # Avg bus bandwidth    : X

Used by bench_nccl_check.py; runs on any nccl-tests log as well."""

import re

GROUPS = ("out", "in")
OOB = re.compile(r"^# Out of bounds values : (\d+) (OK|FAILED)$")
AVG = re.compile(r"^# Avg bus bandwidth    : (\S+) ?$")


class FormatError(Exception):
    pass


def _num(tok, what, line):
    try:
        return float(tok)
    except ValueError:
        raise FormatError(f"{what} '{tok}' is not a number: {line!r}")


def parse(text):
    """-> {'rows': [...], 'oob': (N, 'OK'), 'avg_busbw': X, 'extra': [...]}
    Each row: size, count (int), type, redop (str), root (int), and per
    group 'out' / 'in' None (N/A) or {time, algbw, busbw, wrong (None if
    N/A)}; 'extra' holds the fields after the 13th."""
    rows, oob, avg = [], None, None
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.startswith("#"):
            m = OOB.match(line)
            if m:
                oob = (int(m.group(1)), m.group(2))
            m = AVG.match(line)
            if m:
                avg = _num(m.group(1), "avg busbw", line)
            continue
        f = line.split()
        if len(f) < 13:
            raise FormatError(f"{len(f)} fields, nccl-tests rows have 13: {line!r}")
        row = {"size": int(f[0]), "count": int(f[1]), "type": f[2], "redop": f[3],
               "root": int(f[4]), "extra": f[13:], "line": line}
        for g, name in enumerate(GROUPS):
            t, a, b, w = f[5 + 4 * g: 9 + 4 * g]
            if t == "N/A":
                if (a, b, w) != ("N/A", "N/A", "N/A"):
                    raise FormatError(f"{name}: time N/A but not the rest: {line!r}")
                row[name] = None
                continue
            row[name] = {"time": _num(t, "time", line),
                         "algbw": None if a == "N/A" else _num(a, "algbw", line),
                         "busbw": None if b == "N/A" else _num(b, "busbw", line),
                         "wrong": None if w == "N/A" else int(w)}
        rows.append(row)
    return {"rows": rows, "oob": oob, "avg_busbw": avg}
