# SPDX-License-Identifier: Apache-2.0
"""Step 15 -- all_to_all, from Python: a different chunk for every peer.

Row d of rank r's x [P, SIZE] is the chunk for rank d; afterwards row s of
rank d's y holds the chunk rank s made for d. The kernels are the tutorial
page's, as written: --mode hand puts row d of x into row my_rank of rank
d's window for every d, barriers with notify Set / wait Ge 1 (each cell has
one writer) and reads its own window back; --mode builtin is one
pld.tensor.all_to_all (the puts and the barrier), then the same read-back.

    python3 examples/python/15_all_to_all.py -p a2a3sim -d 0,1 [--mode hand|builtin]
        [--transport thread|process] [--ir]
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import pld  # noqa: E402
from pld import pl  # noqa: E402

SIZE = 64


class AllToAll:
    @pl.function(type=pl.FunctionType.InCore)
    def hand_step(self, x, y, data, signal):
        ctx = pld.get_comm_ctx(data)
        my_rank = pld.rank(ctx)
        nranks = pld.nranks(ctx)

        # Phase 1 -- push: write chunk-for-dest into dest's window at our row.
        for dest in pl.range(nranks):
            pld.tensor.put(data, dest, x, [my_rank, 0], [dest, 0], [1, SIZE])

        # Phase 2 -- barrier: notify every peer, wait on every peer slot.
        for peer in pl.range(nranks):
            if peer != my_rank:
                pld.system.notify(signal, peer=peer, offsets=[my_rank, 0],
                                  value=1, op=pld.NotifyOp.Set)
        for src in pl.range(nranks):
            if src != my_rank:
                pld.system.wait(signal, offsets=[src, 0], expected=1,
                                cmp=pld.WaitCmp.Ge)

        # Phase 3 -- read-back: row src of our window holds src's chunk for us.
        for src in pl.range(nranks):
            chunk = pl.load(data, [src, 0], [1, SIZE])
            y = pl.store(chunk, [src, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def builtin_step(self, x, y, data, signal):
        ctx = pld.get_comm_ctx(data)
        nranks = pld.nranks(ctx)
        result = pld.tensor.all_to_all(x, data, signal)
        for src in pl.range(nranks):
            chunk = pl.load(result, [src, 0], [1, SIZE])
            y = pl.store(chunk, [src, 0], y)
        return y


def chunk(src, dest):
    """The chunk rank src makes for rank dest."""
    return src * 10000 + dest * 100 + np.arange(SIZE, dtype=np.int32)


def main():
    world = pld.World()
    ap = argparse.ArgumentParser(prog=world.args[0])
    ap.add_argument("--mode", choices=["hand", "builtin"], default="hand")
    opts = ap.parse_args(world.args[1:])
    nranks = world.size
    x = world.tensor([nranks, SIZE], "int32")
    y = world.tensor([nranks, SIZE], "int32")
    for r in range(nranks):
        for d in range(nranks):
            x.view(r)[d] = chunk(r, d)
    data = world.window([nranks, SIZE], "int32", "data")
    signal = world.signal([nranks, 1], "signal")
    step = AllToAll()
    world.launch(step.hand_step if opts.mode == "hand" else step.builtin_step, x, y, data, signal)
    for d in range(nranks):
        golden = np.stack([chunk(s, d) for s in range(nranks)])
        got = y.view(d)
        if not np.array_equal(got, golden):
            s, j = (int(v) for v in np.argwhere(got != golden)[0])
            print(f"rank {d}: y[{s}, {j}] = {got[s, j]}, expected {golden[s, j]}",
                  file=sys.stderr)
            return 1
    if world.is_root:
        print("OK")
    world.finalize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
