# SPDX-License-Identifier: Apache-2.0
"""Fixtures of the pld Python tests: the transport, and worlds that are
finalized after the test."""
import os
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
try:  # PYTHONPATH=python, or an installed package
    import pld  # noqa: F401
except ImportError:  # else this source tree's
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import pld  # noqa: E402

TRANSPORTS = ["thread", "process"]


@pytest.fixture(params=TRANSPORTS)
def transport(request):
    """Every test that takes it runs once per transport."""
    return request.param


@pytest.fixture
def make_world():
    """make_world(devices="0,1", transport="thread", platform="a2a3sim", **kw):
    a World finalized when the test ends (also when it fails)."""
    worlds = []

    def make(devices="0,1", transport="thread", platform="a2a3sim", **kw):
        w = pld.World(devices=devices, transport=transport, platform=platform, **kw)
        worlds.append(w)
        return w

    yield make
    for w in reversed(worlds):
        w.finalize()


def devices(p):
    """The device list of p ranks: "0,1,...,p-1"."""
    return ",".join(str(i) for i in range(p))
