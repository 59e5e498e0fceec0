# SPDX-License-Identifier: Apache-2.0
"""Step 13 -- allgather, from Python: every rank publishes its slice, every
rank ends with the rank-ordered concatenation.

The two kernels are the tutorial page's, as written: --mode hand stages x
in row my_rank of the [P, SIZE] window, barriers (notify AtomicAdd, wait
Ge 1 on every peer's cell) and pulls every row back with remote_load;
--mode builtin is one pld.tensor.allgather (a push), then the local reads.

    python3 examples/python/13_allgather.py -p a2a3sim -d 0,1 [--mode hand|builtin]
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


class AllGather:
    @pl.function(type=pl.FunctionType.InCore)
    def hand_step(self, x, y, data, signal):
        ctx = pld.get_comm_ctx(data)
        my_rank = pld.rank(ctx)
        nranks = pld.nranks(ctx)

        # Phase 1 -- stage this rank's slice into its own row.
        local = pl.load(x, [0, 0], [1, SIZE])
        data = pl.store(local, [my_rank, 0], data)

        # Phase 2 -- barrier: notify every peer, wait on every peer slot.
        for peer in pl.range(nranks):
            if peer != my_rank:
                pld.system.notify(signal, peer=peer, offsets=[my_rank, 0],
                                  value=1, op=pld.NotifyOp.AtomicAdd)
        for src in pl.range(nranks):
            if src != my_rank:
                pld.system.wait(signal, offsets=[src, 0], expected=1,
                                cmp=pld.WaitCmp.Ge)

        # Phase 3 -- gather: pull every peer's row into the output.
        for peer in pl.range(nranks):
            recv = pld.tile.remote_load(data, peer=peer, offsets=[peer, 0], shape=[1, SIZE])
            y = pl.store(recv, [0, peer * SIZE], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def builtin_step(self, x, y, data, signal):
        ctx = pld.get_comm_ctx(data)
        nranks = pld.nranks(ctx)
        data = pld.tensor.allgather(x, data, signal)   # stage + barrier + gather

        for src in pl.range(nranks):
            chunk = pl.load(data, [src, 0], [1, SIZE])
            y = pl.store(chunk, [0, src * SIZE], y)
        return y


def slice_value(rank):
    return rank * 1000 + np.arange(SIZE, dtype=np.int32)


def main():
    world = pld.World()  # -p, -d, --transport, --ir; the rest stays in world.args
    ap = argparse.ArgumentParser(prog=world.args[0])
    ap.add_argument("--mode", choices=["hand", "builtin"], default="hand")
    opts = ap.parse_args(world.args[1:])
    nranks = world.size
    x = world.tensor([1, SIZE], "int32")
    y = world.tensor([1, nranks * SIZE], "int32")
    for r in range(nranks):
        x.view(r)[0] = slice_value(r)
    data = world.window([nranks, SIZE], "int32", "data")
    signal = world.signal([nranks, 1], "signal")
    step = AllGather()
    world.launch(step.hand_step if opts.mode == "hand" else step.builtin_step, x, y, data, signal)
    golden = np.concatenate([slice_value(r) for r in range(nranks)])
    for r in range(nranks):
        got = y.view(r)[0]
        if not np.array_equal(got, golden):
            bad = int(np.flatnonzero(got != golden)[0])
            print(f"rank {r}: y[0, {bad}] = {got[bad]}, expected {golden[bad]}", file=sys.stderr)
            return 1
    if world.is_root:
        print("OK")
    world.finalize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
