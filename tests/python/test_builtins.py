# SPDX-License-Identifier: Apache-2.0
"""Every pld.tensor builtin and the pld.tile / pld.system primitives, on the
thread and the process transport, against numpy references.

Results that a kernel computes travel back through windows or pld Tensors
(host memory every rank reaches, also from the process transport's forked
workers), never through Python objects."""
import numpy as np
import pytest

import pld
from pld import pl

from conftest import devices


def assert_signal_clear(world, signal):
    """Builtins leave their signal all-zero (self-clearing credits)."""
    for r in range(world.size):
        got = signal.view(r)
        assert not got.any(), f"rank {r}: signal not cleared: {got.ravel().tolist()}"


# ---- barrier -------------------------------------------------------------


def test_barrier_orders_stage_and_read(make_world, transport):
    """Each rank stages its row, barriers, then reads every peer's row: the
    barrier makes every staged row visible; on the thread transport the race
    checker (PLD_CHECK_RACE, thread only) also proves each read is ordered
    after the write."""
    P, N = 4, 16
    w = make_world(devices(P), transport, check=0x2 if transport == "thread" else 0)
    data = w.window([P, N], "int32", "data")
    sig = w.signal([P, 1], "sig")
    y = w.tensor([P, N], "int32")

    def kernel(y, data, sig):
        me = pld.rank()
        row = np.full((1, N), me * 100, np.int32) + np.arange(N, dtype=np.int32)
        pl.store(row, [me, 0], data)
        pld.tensor.barrier(sig)
        for p in range(P):
            t = pld.tile.remote_load(data, p, [p, 0], [1, N])
            y[p] = t[0]

    w.launch(kernel, y, data, sig)
    golden = np.arange(P, dtype=np.int32)[:, None] * 100 + np.arange(N, dtype=np.int32)
    for r in range(P):
        np.testing.assert_array_equal(y.view(r), golden, err_msg=f"rank {r}")
    assert_signal_clear(w, sig)


# ---- broadcast -----------------------------------------------------------


@pytest.mark.parametrize("root,mode", [(0, "auto"), (2, "auto"), (1, "binomial"),
                                       (3, pld.BroadcastMode.Pull)])
def test_broadcast(make_world, transport, root, mode):
    P = 4
    w = make_world(devices(P), transport)
    data = w.window([4, 16], "fp32", "data")
    sig = w.signal([P, 1], "sig")
    rng = np.random.default_rng(7 + root)
    staged = [rng.standard_normal((4, 16)).astype(np.float32) for _ in range(P)]
    for r in range(P):
        data.view(r)[...] = staged[r]

    def kernel(data, sig):
        pld.tensor.broadcast(data, sig, root=root, mode=mode)

    w.launch(kernel, data, sig)
    for r in range(P):
        np.testing.assert_array_equal(data.view(r), staged[root], err_msg=f"rank {r}")
    assert_signal_clear(w, sig)


# ---- allgather -----------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "doubling", pld.AllgatherMode.Push])
def test_allgather(make_world, transport, mode):
    P, N = 5, 32
    w = make_world(devices(P), transport)
    x = w.tensor([1, N], "fp32")
    target = w.window([P, N], "fp32", "target")
    sig = w.signal([P, 1], "sig")
    rng = np.random.default_rng(1)
    rows = rng.standard_normal((P, N)).astype(np.float32)
    for r in range(P):
        x.view(r)[0] = rows[r]

    def kernel(x, target, sig):
        out = pld.tensor.allgather(x, target, sig, mode=mode)
        assert out is target

    w.launch(kernel, x, target, sig)
    for r in range(P):
        np.testing.assert_array_equal(target.view(r), rows, err_msg=f"rank {r}")
    assert_signal_clear(w, sig)


def test_allgather_inplace(make_world, transport):
    P, N = 3, 24
    w = make_world(devices(P), transport)
    target = w.window([P, N], "int32", "target")
    sig = w.signal([P, 1], "sig")
    rows = np.arange(P * N, dtype=np.int32).reshape(P, N) * 7 - 50
    for r in range(P):
        target.view(r)[...] = -1
        target.view(r)[r] = rows[r]  # my row is staged in place

    def kernel(target, sig):
        pld.tensor.allgather_inplace(target, sig)

    w.launch(kernel, target, sig)
    for r in range(P):
        np.testing.assert_array_equal(target.view(r), rows, err_msg=f"rank {r}")
    assert_signal_clear(w, sig)


# ---- reduce_scatter ------------------------------------------------------


def test_reduce_scatter_sum(make_world, transport):
    P, S = 4, 20
    w = make_world(devices(P), transport)
    data = w.window([P, S], "fp32", "data")
    sig = w.signal([P, 1], "sig")
    # small integers: every summation order gives the exact sum
    staged = [((np.arange(P * S).reshape(P, S) * (r + 3)) % 97).astype(np.float32)
              for r in range(P)]
    for r in range(P):
        data.view(r)[...] = staged[r]
    golden = np.sum(staged, axis=0)

    def kernel(data, sig):
        pld.tensor.reduce_scatter(data, sig, op="sum")

    w.launch(kernel, data, sig)
    for r in range(P):
        np.testing.assert_array_equal(data.view(r)[r], golden[r], err_msg=f"rank {r}")
    assert_signal_clear(w, sig)


# ---- allreduce -----------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "mesh", "rs_ag", "rabenseifner"])
@pytest.mark.parametrize("op", ["sum", "max"])
def test_allreduce(make_world, transport, mode, op):
    P = 4
    shape = [8, 64]
    w = make_world(devices(P), transport)
    data = w.window(shape, "fp32", "data")
    sig = w.signal([P, 1], "sig")
    rng = np.random.default_rng(11)
    staged = [rng.integers(-1000, 1000, size=shape).astype(np.float32) for _ in range(P)]
    for r in range(P):
        data.view(r)[...] = staged[r]
    golden = np.sum(staged, axis=0) if op == "sum" else np.max(staged, axis=0)

    def kernel(data, sig):
        pld.tensor.allreduce(data, sig, op=op, mode=mode)

    w.launch(kernel, data, sig)
    for r in range(P):
        np.testing.assert_array_equal(data.view(r), golden, err_msg=f"rank {r} {mode} {op}")
    assert_signal_clear(w, sig)


def test_allreduce_enum_arguments(make_world):
    """The enums work as well as the names (and int32 data)."""
    P = 2
    w = make_world(devices(P))
    data = w.window([3, 5], "int32", "data")
    sig = w.signal([P, 1], "sig")
    for r in range(P):
        data.view(r)[...] = np.arange(15, dtype=np.int32).reshape(3, 5) * (r + 1)

    def kernel(data, sig):
        pld.tensor.allreduce(data, sig, pld.ReduceOp.Sum, pld.AllreduceMode.Mesh)

    w.launch(kernel, data, sig)
    for r in range(P):
        np.testing.assert_array_equal(data.view(r),
                                      np.arange(15, dtype=np.int32).reshape(3, 5) * 3)


# ---- all_to_all ----------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "bruck", pld.AllToAllMode.Push])
def test_all_to_all(make_world, transport, mode):
    P, S = 5, 16
    w = make_world(devices(P), transport)
    x = w.tensor([P, S], "int32")
    target = w.window([P, S], "int32", "target")
    sig = w.signal([P, 1], "sig")

    def chunk(src, dst):
        return src * 10000 + dst * 100 + np.arange(S, dtype=np.int32)

    for r in range(P):
        for d in range(P):
            x.view(r)[d] = chunk(r, d)

    def kernel(x, target, sig):
        pld.tensor.all_to_all(x, target, sig, mode=mode)

    w.launch(kernel, x, target, sig)
    for d in range(P):
        golden = np.stack([chunk(s, d) for s in range(P)])
        np.testing.assert_array_equal(target.view(d), golden, err_msg=f"rank {d}")
    assert_signal_clear(w, sig)


def test_all_to_all_v(make_world, transport):
    P, M, S = 3, 4, 8
    w = make_world(devices(P), transport)
    x = w.tensor([P * M, S], "fp32")
    send = w.tensor([P], "int32")
    target = w.window([P * M, S], "fp32", "target")
    recv = w.window([P, 1], "int32", "recv_counts")
    sig = w.signal([P, 1], "sig")
    # counts[s][d]: rows rank s sends rank d (0, M, in between, and one above
    # M, which the library clamps to M)
    counts = np.array([[0, 4, 2], [1, 3, 4], [M + 2, 0, 1]], np.int32)
    clamped = np.minimum(counts, M)

    def row(s, d, j):
        return (s * 1000 + d * 100 + j * 10 + np.arange(S)).astype(np.float32)

    for s in range(P):
        send.view(s)[...] = counts[s]
        for d in range(P):
            for j in range(M):
                x.view(s)[d * M + j] = row(s, d, j)

    def kernel(x, target, sig, send, recv):
        pld.tensor.all_to_all_v(x, target, sig, send, recv)

    w.launch(kernel, x, target, sig, send, recv)
    for d in range(P):
        np.testing.assert_array_equal(recv.view(d)[:, 0], clamped[:, d], err_msg=f"rank {d}")
        got = target.view(d)
        for s in range(P):
            n = clamped[s, d]
            for j in range(n):
                np.testing.assert_array_equal(got[s * M + j], row(s, d, j),
                                              err_msg=f"rank {d} from {s} row {j}")
    assert_signal_clear(w, sig)


# ---- MoE dispatch + combine ----------------------------------------------


def test_moe_dispatch_combine(make_world, transport):
    P, E, M, H = 3, 2, 3, 4
    rows = P * E * M
    w = make_world(devices(P), transport)
    layout = pld.tensor.MoeLayout(E, M)
    x = w.tensor([rows, H], "fp32")
    send = w.tensor([P, E], "int32")
    offs = w.tensor([E + 1], "int32")
    back = w.tensor([rows, H], "fp32")
    target = w.window([rows, H], "fp32", "target")
    eout = w.window([rows, H], "fp32", "expert_out")
    out = w.window([rows, H], "fp32", "out")
    recv = w.window([P, E], "int32", "recv_counts")
    sig = w.signal([P, 1], "sig")
    SENT = -9.0
    # cnt[s][d][e]: rows rank s sends expert e of rank d
    rng = np.random.default_rng(5)
    cnt = rng.integers(0, M + 1, size=(P, P, E)).astype(np.int32)
    cnt[1, :, :] = 0  # a source that sends nothing
    cnt[0, 2, 1] = M  # a full block

    def val(s, d, e, j):
        return (s * 1000 + d * 100 + e * 10 + j + np.arange(H) / 8).astype(np.float32)

    for s in range(P):
        send.view(s)[...] = cnt[s]
        xv = x.view(s)
        xv[...] = SENT
        for d in range(P):
            for e in range(E):
                for j in range(cnt[s, d, e]):
                    xv[(d * E + e) * M + j] = val(s, d, e, j)
        target.view(s)[...] = SENT
        out.view(s)[...] = SENT

    def kernel(x, send, offs, back, target, eout, out, recv, sig):
        pld.tensor.moe_dispatch(layout, x, target, sig, send, recv, offs)
        # the expert: negate the received rows (the rest of eout stays 0)
        total = int(offs[E])
        tgt = pl.load(target, [0, 0], [rows, H])
        res = np.zeros((rows, H), np.float32)
        res[:total] = -tgt[:total]
        pl.store(res, [0, 0], eout)
        pld.tensor.moe_combine(layout, eout, out, sig, send, recv)
        back[...] = pl.load(out, [0, 0], [rows, H])

    w.launch(kernel, x, send, offs, back, target, eout, out, recv, sig)
    for d in range(P):
        # recv_counts[s][e] = cnt[s][d][e]
        np.testing.assert_array_equal(recv.view(d), cnt[:, d, :], err_msg=f"rank {d} recv")
        # expert e's rows start at expert_offsets[e], by source, then by row
        want_off = np.concatenate([[0], np.cumsum(cnt[:, d, :].sum(axis=0))]).astype(np.int32)
        np.testing.assert_array_equal(offs.view(d), want_off, err_msg=f"rank {d} offsets")
        packed = [val(s, d, e, j) for e in range(E) for s in range(P) for j in range(cnt[s, d, e])]
        tv = target.view(d)
        total = len(packed)
        if packed:
            np.testing.assert_array_equal(tv[:total], np.stack(packed), err_msg=f"rank {d} rows")
        assert (tv[total:] == SENT).all(), f"rank {d}: target rows past the total were written"
    for s in range(P):
        golden = np.full((rows, H), SENT, np.float32)
        for d in range(P):
            for e in range(E):
                for j in range(cnt[s, d, e]):
                    golden[(d * E + e) * M + j] = -val(s, d, e, j)
        np.testing.assert_array_equal(out.view(s), golden, err_msg=f"rank {s} out")
        np.testing.assert_array_equal(back.view(s), golden, err_msg=f"rank {s} back")
    assert_signal_clear(w, sig)


# ---- indexed all-to-all-v (a5sim) ----------------------------------------


def test_indexed_all_to_all_v_a5sim(make_world, transport):
    P, NMAX, H, C = 3, 6, 4, 3
    w = make_world(devices(P), transport, platform="a5sim")
    assert w.platform == "a5sim"
    x = w.tensor([NMAX, H], "fp32")
    index = w.tensor([P, C], "int32")
    recvc = w.tensor([P, 1], "int32")
    target = w.window([P * C, H], "fp32", "target")
    sendc = w.window([P, 1], "int32", "send_counts")
    sig = w.signal([P, 1], "sig")
    counts = np.array([[2, 0, 3], [1, 3, 0], [3, 2, 1]], np.int32)  # counts[s][d]
    rng = np.random.default_rng(3)
    idx = rng.integers(0, NMAX, size=(P, P, C)).astype(np.int32)  # idx[s][d][j]
    inputs = [(s * 100 + np.arange(NMAX * H).reshape(NMAX, H)).astype(np.float32)
              for s in range(P)]
    for s in range(P):
        x.view(s)[...] = inputs[s]
        index.view(s)[...] = idx[s]
        sendc.view(s)[:, 0] = counts[s]
        target.view(s)[...] = -1.0

    def kernel(x, target, sig, sendc, recvc, index):
        pld.tensor.indexed_all_to_all_v(x, target, sig, sendc, recvc, index)

    w.launch(kernel, x, target, sig, sendc, recvc, index)
    for d in range(P):
        np.testing.assert_array_equal(recvc.view(d)[:, 0], counts[:, d], err_msg=f"rank {d}")
        golden = np.full((P * C, H), -1.0, np.float32)
        for s in range(P):
            for j in range(counts[s, d]):
                golden[s * C + j] = inputs[s][idx[s, d, j]]
        np.testing.assert_array_equal(target.view(d), golden, err_msg=f"rank {d} target")
    assert_signal_clear(w, sig)


# ---- primitives: put / get -----------------------------------------------


def test_put_get_whole(make_world, transport):
    """put my tensor into the next rank's window; barrier; get the previous
    rank's window into my tensor."""
    P, R, N = 3, 2, 8
    w = make_world(devices(P), transport)
    src = w.tensor([R, N], "fp32")
    dst = w.tensor([R, N], "fp32")
    data = w.window([R, N], "fp32", "data")
    sig = w.signal([P, 1], "sig")

    def val(r):
        return (r * 100 + np.arange(R * N).reshape(R, N)).astype(np.float32)

    for r in range(P):
        src.view(r)[...] = val(r)

    def kernel(src, dst, data, sig):
        me = pld.rank()
        pld.tile.put(data, (me + 1) % P, src)
        pld.tensor.barrier(sig)
        pld.tile.get(dst, (me + 1) % P, data)

    w.launch(kernel, src, dst, data, sig)
    for r in range(P):
        # my window holds what the previous rank put
        np.testing.assert_array_equal(data.view(r), val((r - 1) % P), err_msg=f"rank {r}")
        # I got the next rank's window: mine
        np.testing.assert_array_equal(dst.view(r), val(r), err_msg=f"rank {r} get")


def test_put_get_region(make_world, transport):
    P = 2
    w = make_world(devices(P), transport)
    src = w.tensor([4, 6], "int32")
    dst = w.tensor([3, 5], "int32")
    data = w.window([5, 8], "int32", "data")
    sig = w.signal([P, 1], "sig")
    for r in range(P):
        src.view(r)[...] = r * 1000 + np.arange(24, dtype=np.int32).reshape(4, 6)
        dst.view(r)[...] = -1

    def kernel(src, dst, data, sig):
        me = pld.rank()
        peer = 1 - me
        # src[1:3, 2:5] -> peer's data[2:4, 4:7]
        pld.tile.put(data, peer, src, dst_offsets=[2, 4], src_offsets=[1, 2], shape=[2, 3])
        pld.tensor.barrier(sig)
        # peer's data[2:4, 3:7] -> dst[1:3, 0:4]
        pld.tile.get(dst, peer, data, dst_offsets=[1, 0], src_offsets=[2, 3], shape=[2, 4])

    w.launch(kernel, src, dst, data, sig)
    for r in range(P):
        peer = 1 - r
        srcp = peer * 1000 + np.arange(24, dtype=np.int32).reshape(4, 6)
        want = np.zeros((5, 8), np.int32)
        want[2:4, 4:7] = srcp[1:3, 2:5]
        np.testing.assert_array_equal(data.view(r), want, err_msg=f"rank {r} window")
        # what I got is peer's window, which holds my src region
        mine = np.zeros((5, 8), np.int32)
        mine[2:4, 4:7] = (r * 1000 + np.arange(24, dtype=np.int32).reshape(4, 6))[1:3, 2:5]
        want_dst = np.full((3, 5), -1, np.int32)
        want_dst[1:3, 0:4] = mine[2:4, 3:7]
        np.testing.assert_array_equal(dst.view(r), want_dst, err_msg=f"rank {r} dst")


def test_put_atomic_adds(make_world, transport):
    P = 3
    w = make_world(devices(P), transport)
    src = w.tensor([2, 4], "fp32")
    acc = w.window([2, 4], "fp32", "acc")
    for r in range(P):
        src.view(r)[...] = (r + 1) * np.arange(8, dtype=np.float32).reshape(2, 4)
        acc.view(r)[...] = 1.0

    def kernel(src, acc):
        pld.tile.put(acc, 0, src, atomic=True)

    w.launch(kernel, src, acc)
    want0 = 1.0 + sum((r + 1) for r in range(P)) * np.arange(8, dtype=np.float32).reshape(2, 4)
    np.testing.assert_array_equal(acc.view(0), want0)
    for r in range(1, P):
        np.testing.assert_array_equal(acc.view(r), np.ones((2, 4), np.float32))


# ---- primitives: remote_load / remote_store ------------------------------


def test_remote_load_store(make_world, transport):
    P = 3
    w = make_world(devices(P), transport)
    data = w.window([4, 8], "fp32", "data")
    out = w.window([4, 8], "fp32", "out")
    got = w.tensor([P, 2, 3], "fp32")
    sig = w.signal([P, 1], "sig")

    def val(r):
        return (r * 1000 + np.arange(4)[:, None] * 10 + np.arange(8)).astype(np.float32)

    for r in range(P):
        data.view(r)[...] = val(r)

    def kernel(data, out, got, sig):
        me = pld.rank()
        for p in range(P):
            t = pld.tile.remote_load(data, p, [1, 2], [2, 3])
            assert t.shape == (2, 3)
            got[p] = t
        tile = (100 * me + np.arange(1, 5, dtype=np.float32)).reshape(2, 2)
        pld.tile.remote_store(tile, out, (me + 1) % P, [1, 2 * me])
        pld.tensor.barrier(sig)

    w.launch(kernel, data, out, got, sig)
    for r in range(P):
        for p in range(P):
            np.testing.assert_array_equal(got.view(r)[p], val(p)[1:3, 2:5],
                                          err_msg=f"rank {r} from {p}")
        prv = (r - 1) % P
        want = np.zeros((4, 8), np.float32)
        want[1:3, 2 * prv:2 * prv + 2] = (100 * prv + np.arange(1, 5)).reshape(2, 2)
        np.testing.assert_array_equal(out.view(r), want, err_msg=f"rank {r} out")


def test_remote_store_atomic_adds(make_world, transport):
    P = 4
    w = make_world(devices(P), transport)
    acc = w.window([2, 8], "int32", "acc")
    for r in range(P):
        acc.view(r)[...] = 5

    def kernel(acc):
        me = pld.rank()
        tile = np.full((1, 8), me + 1, np.int32) * np.arange(8, dtype=np.int32)
        for p in range(P):
            pld.tile.remote_store(tile, acc, p, [1, 0], atomic=True)

    w.launch(kernel, acc)
    tot = sum(range(1, P + 1))
    for r in range(P):
        want = np.full((2, 8), 5, np.int32)
        want[1] += tot * np.arange(8, dtype=np.int32)
        np.testing.assert_array_equal(acc.view(r), want, err_msg=f"rank {r}")


# ---- primitives: notify / wait / read ------------------------------------


def test_notify_add_wait_ge(make_world, transport):
    """AtomicAdd from every peer, Ge on the sum; read sees the value."""
    P = 4
    w = make_world(devices(P), transport)
    sig = w.signal([2, 1], "sig")
    seen = w.tensor([2], "int32")

    def kernel(sig, seen):
        me = pld.rank()
        for p in range(P):
            if p != me:
                pld.system.notify(sig, p, [0, 0], value=me + 1, op=pld.NotifyOp.AtomicAdd)
        want = sum(q + 1 for q in range(P) if q != me)
        pld.system.wait(sig, [0, 0], expected=want, cmp=pld.WaitCmp.Ge)
        seen[0] = pld.system.read(sig, [0, 0])
        seen[1] = pld.system.read(sig, [1, 0])

    w.launch(kernel, sig, seen)
    total = sum(range(1, P + 1))
    for r in range(P):
        want = total - (r + 1)
        assert seen.view(r).tolist() == [want, 0], f"rank {r}"
        assert sig.view(r).ravel().tolist() == [want, 0], f"rank {r}"


def test_notify_set_wait_eq(make_world, transport):
    """Set writes the value (not adds); Eq waits for exactly it: a chain
    0 -> 1 -> 2 where each rank forwards the value it saw plus one."""
    P = 3
    w = make_world(devices(P), transport)
    sig = w.signal([1], "sig")
    seen = w.tensor([1], "int32")
    for r in range(P):
        sig.view(r)[0] = 40  # Set overwrites this

    def kernel(sig, seen):
        me = pld.rank()
        v = 7 + me
        if me > 0:
            pld.system.wait(sig, [0], expected=v, cmp=pld.WaitCmp.Eq)
            assert pld.system.read(sig, [0]) == v
        seen[0] = pld.system.read(sig, [0])
        if me + 1 < P:
            pld.system.notify(sig, me + 1, [0], value=v + 1, op=pld.NotifyOp.Set)

    w.launch(kernel, sig, seen)
    assert [int(seen.view(r)[0]) for r in range(P)] == [40, 8, 9]
    assert [int(sig.view(r)[0]) for r in range(P)] == [40, 8, 9]


def test_notify_default_is_add_one(make_world, transport):
    P = 2
    w = make_world(devices(P), transport)
    sig = w.signal([P, 1], "sig")

    def kernel(sig):
        me = pld.rank()
        for _ in range(3):
            pld.system.notify(sig, 1 - me, [me, 0])
        pld.system.wait(sig, [1 - me, 0], 3)

    w.launch(kernel, sig)
    for r in range(P):
        want = np.zeros((P, 1), np.int32)
        want[1 - r] = 3
        np.testing.assert_array_equal(sig.view(r), want)


# ---- several builtins back to back on one signal -------------------------


def test_builtins_back_to_back_one_signal(make_world, transport):
    """allgather, allreduce, all_to_all, broadcast, reduce_scatter and a
    second allgather on one signal, no barrier between; each result is copied
    out before the next call that could overwrite it (distinct windows)."""
    P, N = 4, 8
    w = make_world(devices(P), transport)
    sig = w.signal([P, 1], "sig")
    x = w.tensor([1, N], "fp32")
    a2a_in = w.tensor([P, N], "int32")
    res_ag = w.tensor([P, N], "fp32")
    res_ag2 = w.tensor([P, N], "fp32")
    gat = w.window([P, N], "fp32", "gather")
    gat2 = w.window([P, N], "fp32", "gather2")
    red = w.window([2, N], "fp32", "reduce")
    a2a = w.window([P, N], "int32", "a2a")
    bc = w.window([N], "fp32", "bcast")
    rs = w.window([P, N], "fp32", "rs")
    for r in range(P):
        x.view(r)[0] = r + np.arange(N)
        red.view(r)[...] = (r + 1) * np.arange(2 * N).reshape(2, N)
        for d in range(P):
            a2a_in.view(r)[d] = 100 * r + 10 * d + np.arange(N)
        bc.view(r)[...] = 3.5 if r == 1 else -1
        rs.view(r)[...] = r + np.arange(P * N).reshape(P, N)

    def kernel(x, a2a_in, res_ag, res_ag2, sig):
        pld.tensor.allgather(x, gat, sig)
        res_ag[...] = pl.load(gat, [0, 0], [P, N])
        pld.tensor.allreduce(red, sig, "sum", "auto")
        pld.tensor.all_to_all(a2a_in, a2a, sig)
        pld.tensor.broadcast(bc, sig, root=1)
        pld.tensor.reduce_scatter(rs, sig)
        x[...] = x * 2
        pld.tensor.allgather(x, gat2, sig)
        res_ag2[...] = pl.load(gat2, [0, 0], [P, N])

    w.launch(kernel, x, a2a_in, res_ag, res_ag2, sig)
    rows = np.stack([r + np.arange(N) for r in range(P)]).astype(np.float32)
    red_want = sum(r + 1 for r in range(P)) * np.arange(2 * N, dtype=np.float32).reshape(2, N)
    rs_want = sum(r + np.arange(P * N).reshape(P, N) for r in range(P)).astype(np.float32)
    for r in range(P):
        np.testing.assert_array_equal(res_ag.view(r), rows, err_msg=f"rank {r} allgather")
        np.testing.assert_array_equal(res_ag2.view(r), 2 * rows, err_msg=f"rank {r} allgather 2")
        np.testing.assert_array_equal(red.view(r), red_want, err_msg=f"rank {r} allreduce")
        a2a_want = np.stack([100 * s + 10 * r + np.arange(N) for s in range(P)])
        np.testing.assert_array_equal(a2a.view(r), a2a_want, err_msg=f"rank {r} all_to_all")
        np.testing.assert_array_equal(bc.view(r), np.full(N, 3.5, np.float32),
                                      err_msg=f"rank {r} broadcast")
        np.testing.assert_array_equal(rs.view(r)[r], rs_want[r], err_msg=f"rank {r} rs")
    assert_signal_clear(w, sig)


# ---- counters ------------------------------------------------------------


@pytest.mark.parametrize("path", ["credit", "inbox"])
@pytest.mark.parametrize("n_elems", [16, 1024])
def test_counters_allgather_bytes_to_peers(make_world, transport, n_elems, path, monkeypatch):
    """bytes_to_peers after an allgather of N bytes per rank = (P-1) * N, on
    the credit-round path and on the one-round inbox path (PLD_LL_BYTES)."""
    P = 4
    nbytes = n_elems * 4
    if path == "inbox":
        monkeypatch.setenv("PLD_LL_BYTES", str(nbytes))
    else:
        monkeypatch.delenv("PLD_LL_BYTES", raising=False)
    w = make_world(devices(P), transport, ir=True)
    x = w.tensor([1, n_elems], "fp32")
    target = w.window([P, n_elems], "fp32", "target")
    sig = w.signal([P, 1], "sig")
    rows = (np.arange(P)[:, None] * 10 + np.arange(n_elems)).astype(np.float32)
    for r in range(P):
        x.view(r)[0] = rows[r]

    def kernel(x, target, sig):
        pld.tensor.allgather(x, target, sig)

    w.launch(kernel, x, target, sig)
    listing = w.ir_text()
    assert "call pld_allgather(target, sig)" in listing, listing
    want_path = "path: one round" if path == "inbox" else "path: credit rounds"
    assert want_path in listing, listing
    for r in range(P):
        np.testing.assert_array_equal(target.view(r), rows, err_msg=f"rank {r}")
        k = w.counters(r)
        assert k["bytes_to_peers"] == (P - 1) * nbytes, f"rank {r}: {k}"
