# SPDX-License-Identifier: Apache-2.0
"""What a call costs from Python: `python3 -m pld.bench [-d 0,1] [--transport T]`.

Each rank times loops of one call (the median of --repeats launches, the
slowest rank), and prints microseconds per call:

    read        pld.system.read of my own cell: the binding's floor
    notify      pld.system.notify Set to my own cell
    remote_load pld.tile.remote_load of 64 bytes from the next rank
    put         pld.tile.put of a [1,16] fp32 tensor into the next rank
    barrier     pld.tensor.barrier
    allgather   pld.tensor.allgather of 4 KiB (the gathered size, as nccl-tests
                and `pld bench` count it: 4 KiB / P fp32 from each rank)

With --c PLD_TOOL (the `pld` program of a build), the same allgather from C
(`pld bench allgather -b 4K -e 4K`) is run right after, for the ratio."""
import argparse
import subprocess
import sys
import time

import numpy as np

from . import system, tensor, tile
from .world import World, current

CALLS = ("read", "notify", "remote_load", "put", "barrier", "allgather")


def _kernel(n, x, small, data, sig, sig2, out):
    me = current().rank
    p = current().nranks
    nxt = (me + 1) % p
    times = []
    t = time.perf_counter
    t0 = t()
    for _ in range(n):
        system.read(sig2, [me, 0])
    times.append(t() - t0)
    t0 = t()
    for _ in range(n):
        system.notify(sig2, me, [me, 0], 1, system.NotifyOp.Set)
    times.append(t() - t0)
    t0 = t()
    for _ in range(n):
        tile.remote_load(data, nxt, [nxt, 0], [1, 16])
    times.append(t() - t0)
    t0 = t()
    for _ in range(n):
        tile.put(data, nxt, small, [me, 0], [0, 0], [1, 16])
    times.append(t() - t0)
    tensor.barrier(sig)
    t0 = t()
    for _ in range(n // 10):
        tensor.barrier(sig)
    times.append((t() - t0) * 10)
    tensor.allgather(x, data, sig)
    t0 = t()
    for _ in range(n // 10):
        tensor.allgather(x, data, sig)
    times.append((t() - t0) * 10)
    out[:] = np.array(times) / n * 1e6


def main(argv=None):
    world = World(argv if argv is not None else sys.argv)
    ap = argparse.ArgumentParser(prog="python3 -m pld.bench")
    ap.add_argument("-n", "--iters", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--c", metavar="PLD_TOOL", help="also time the 4 KiB allgather in C")
    opts = ap.parse_args(world.args[1:])
    p = world.size
    x = world.tensor([1, 1024 // p], "fp32")
    small = world.tensor([1, 16], "fp32")
    data = world.window([p, 1024 // p], "fp32", "bench.data")
    sig = world.signal([p, 1], "bench.sig")
    sig2 = world.signal([p, 1], "bench.sig2")
    out = world.tensor([len(CALLS)], "fp64")
    runs = []
    for _ in range(opts.repeats):
        world.launch(_kernel, opts.iters, x, small, data, sig, sig2, out)
        runs.append(np.max([out.view(r) for r in range(p)], axis=0))
    med = np.median(np.array(runs), axis=0)
    print(f"# pld from Python: {p} ranks, transport {world.transport}; us per call, median of "
          f"{opts.repeats} launches of {opts.iters} calls (slowest rank)")
    for name, us in zip(CALLS, med):
        print(f"{name:12s} {us:8.2f}")
    if opts.c:
        devices = ",".join(str(r) for r in range(p))
        res = subprocess.run([opts.c, "bench", "allgather", "-d", devices, "-b", "4K", "-e", "4K",
                              "-n", str(max(opts.iters // 10, 20)), "--transport",
                              world.transport], capture_output=True, text=True, check=True)
        rows = [ln.split() for ln in res.stdout.splitlines() if ln.strip() and ln[0] != "#"]
        c_us = float(rows[0][5])
        print(f"{'allgather_c':12s} {c_us:8.2f}   (pld bench; Python / C = "
              f"{med[CALLS.index('allgather')] / c_us:.2f})")
    world.finalize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
