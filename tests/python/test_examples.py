# SPDX-License-Identifier: Apache-2.0
"""The Python examples run as programs: each prints exactly "OK"."""
import os
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PYTHON = "/usr/bin/python3"
EXAMPLES = ["13_allgather.py", "15_all_to_all.py"]


def run_example(name, *args, timeout=60):
    path = os.path.join(ROOT, "examples", "python", name)
    return subprocess.run([PYTHON, path, "-p", "a2a3sim", "-d", "0,1,2,3", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("example", EXAMPLES)
@pytest.mark.parametrize("mode", ["hand", "builtin"])
def test_example_prints_ok(example, mode, transport):
    p = run_example(example, "--mode", mode, "--transport", transport)
    assert p.returncode == 0, f"exit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    assert p.stdout == "OK\n", f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}"


def test_example_ir_listing_names_the_builtin():
    p = run_example("13_allgather.py", "--mode", "builtin", "--ir")
    assert p.returncode == 0, f"exit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    assert "call pld_allgather" in p.stdout, p.stdout
    assert p.stdout.splitlines()[-1] == "OK", p.stdout


def test_example_ir_listing_of_hand_mode_has_no_builtin():
    """The control of the test above: the hand-written kernel calls no builtin."""
    p = run_example("13_allgather.py", "--mode", "hand", "--ir")
    assert p.returncode == 0, f"exit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    assert "lowering (rank 0)" in p.stdout, p.stdout
    assert "call pld_allgather" not in p.stdout, p.stdout
    assert p.stdout.splitlines()[-1] == "OK", p.stdout


def test_example_rejects_an_unknown_mode():
    p = run_example("15_all_to_all.py", "--mode", "nosuch")
    assert p.returncode == 2, p
    assert "OK" not in p.stdout
    assert "invalid choice: 'nosuch'" in p.stderr, p.stderr
