# SPDX-License-Identifier: Apache-2.0
"""Teams from Python, and the tools a C program has (PLD_TRACE, the
schedule explorer, the hazard lints) on Python kernels."""
import json
import os
import subprocess

import numpy as np
import pld
import pytest

from conftest import ROOT

EX13 = os.path.join(ROOT, "examples", "python", "13_allgather.py")
EX15 = os.path.join(ROOT, "examples", "python", "15_all_to_all.py")


def test_team_split_2d_queries(make_world):
    w = make_world("0-5")
    x, y = w.split_2d(3, "x", "y")
    assert (x.name, y.name) == ("x", "y")
    assert (x.ngroups, y.ngroups) == (2, 3)
    assert [x.rank_of(r) for r in range(6)] == [0, 1, 2, 0, 1, 2]
    assert [y.rank_of(r) for r in range(6)] == [0, 0, 0, 1, 1, 1]
    assert [x.group_size(r) for r in range(6)] == [3] * 6


def test_allgather_in_each_team_group(make_world, transport):
    """Rows of 2 ranks of a 2x2 grid: each group gathers its own members,
    both groups at once, ranks and shapes in group terms."""
    w = make_world("0-3", transport)
    xt, _ = w.split_2d(2, "x", "y")
    n = 8
    x = w.tensor([1, n], "int32")
    out = w.window([2, n], "int32", "out")
    sig = w.signal([2, 1], "sig")
    seen = w.tensor([2], "int32")
    for r in range(4):
        x.view(r)[0] = 100 * r + np.arange(n)

    def kernel(x, seen):
        with pld.team_ctx(xt) as t:
            seen[0], seen[1] = pld.rank(t), pld.nranks(t)
            pld.tensor.allgather(x, out, sig)
            pld.tensor.barrier(sig)  # back to back on the team's signal

    w.launch(kernel, x, seen)
    for r in range(4):
        assert list(seen.view(r)) == [r % 2, 2]
        first = r - r % 2
        golden = np.stack([100 * q + np.arange(n) for q in (first, first + 1)])
        np.testing.assert_array_equal(out.view(r), golden)


def test_team_ctx_of_a_rank_in_no_group_is_none(make_world):
    w = make_world("0-2")
    t = w.split([0, 0, None], name="pair")
    got = w.tensor([1], "int32")

    def kernel(got):
        got[0] = pld.team_ctx(t) is None

    w.launch(kernel, got)
    assert [int(got.view(r)[0]) for r in range(3)] == [0, 0, 1]


def test_a_builtin_in_a_team_names_the_team_in_its_error(make_world):
    w = make_world("0-3")
    xt, _ = w.split_2d(2, "rows", "cols")
    sig = w.signal([4, 1], "sig")  # [P,1] of the world: the team's groups have 2

    def kernel():
        with pld.team_ctx(xt):
            pld.tensor.barrier(sig)

    with pytest.raises(pld.ArgError, match=r"team 'rows'"):
        w.launch(kernel)


def run(args, **env):
    e = dict(os.environ)
    e.update(env)
    return subprocess.run(["/usr/bin/python3"] + args, capture_output=True, text=True, env=e,
                          timeout=120)


def test_trace_of_a_python_kernel(tmp_path):
    path = tmp_path / "trace.json"
    p = run([EX13, "-d", "0-3", "--mode", "builtin"], PLD_TRACE=str(path))
    assert p.returncode == 0 and p.stdout == "OK\n", p.stderr
    events = json.loads(path.read_text())["traceEvents"]
    names = {e["name"] for e in events}
    assert "pld_allgather" in names and "pld_put" in names, sorted(names)
    ranks = {e["tid"] for e in events if e["name"] == "pld_allgather"}
    assert len(ranks) == 4, ranks


@pytest.mark.parametrize("transport", ["thread", "process"])
def test_explorer_replays_python_kernels(transport):
    """PLD_SCHED runs the launch one rank at a time in a seeded order; with
    the race and signal checkers the page's kernels stay OK."""
    for seed in ("1", "7"):
        for ex in (EX13, EX15):
            p = run([ex, "-d", "0-2", "--mode", "hand", "--transport", transport],
                    PLD_SCHED=seed, PLD_CHECK="signals" if transport == "process" else
                    "race,signals")
            assert p.returncode == 0 and p.stdout == "OK\n", (ex, seed, p.stdout, p.stderr)


def test_hazard_lint_reports_the_seed_barrier_of_step_15():
    """Step 15's hand kernel Sets [P,1] cells of several writers on one line:
    PLD_CHECK=hazards reports it from Python as from C."""
    p = run([EX15, "-d", "0-3", "--mode", "hand"], PLD_CHECK="hazards")
    assert p.returncode != 0
    assert "pld.errors.CheckError" in p.stderr and "share one 64-byte line" in p.stderr, p.stderr


def test_the_docs_first_program_runs(tmp_path):
    """docs/python.md opens with a whole program: it runs as printed."""
    import re
    text = open(os.path.join(ROOT, "docs", "python.md")).read()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    prog = tmp_path / "doc_program.py"
    prog.write_text(code)
    env = {"PYTHONPATH": os.path.join(ROOT, "python")}
    p = run([str(prog), "-d", "0-2"], **env)
    assert p.returncode == 0, p.stderr
    got = np.array(p.stdout.replace("[", " ").replace("]", " ").split(), dtype=np.int64)
    want = np.concatenate([r * 1000 + np.arange(64) for r in range(3)])
    np.testing.assert_array_equal(got, want)
