# SPDX-License-Identifier: Apache-2.0
"""Host views are numpy arrays over the ranks' memory (zero copy): what the
host writes a kernel sees, what a kernel writes the host sees."""
import numpy as np

import pld
from pld import pl

from conftest import devices


def test_host_write_seen_by_remote_load(make_world, transport):
    """The host fills window.view(r) before launch; every rank loads rank
    r's slice remotely and sees it."""
    P, N = 3, 16
    w = make_world(devices(P), transport)
    data = w.window([2, N], "fp32", "data")
    got = w.tensor([P, 2, N], "fp32")
    for r in range(P):
        v = data.view(r)
        assert isinstance(v, np.ndarray) and v.shape == (2, N) and v.dtype == np.float32
        v[...] = r * 100 + np.arange(2 * N, dtype=np.float32).reshape(2, N)

    def kernel(got):
        for p in range(P):
            got[p] = pld.tile.remote_load(data, p, [0, 0], [2, N])

    w.launch(kernel, got)
    for r in range(P):
        for p in range(P):
            np.testing.assert_array_equal(
                got.view(r)[p], p * 100 + np.arange(2 * N, dtype=np.float32).reshape(2, N),
                err_msg=f"rank {r} loading rank {p}")


def test_kernel_remote_store_seen_by_host_view(make_world, transport):
    """Views taken before the launch see the kernel's remote stores after it
    (the same memory, not a copy made at view time)."""
    P, N = 4, 8
    w = make_world(devices(P), transport)
    data = w.window([P, N], "int32", "data")
    before = [data.view(r) for r in range(P)]
    for v in before:
        assert not v.any()

    def kernel():
        me = pld.rank()
        row = np.full((1, N), me + 1, np.int32) * (np.arange(N, dtype=np.int32) + 1)
        for p in range(P):
            pld.tile.remote_store(row, data, p, [me, 0])

    w.launch(kernel)
    want = (np.arange(P, dtype=np.int32)[:, None] + 1) * (np.arange(N, dtype=np.int32) + 1)
    for r in range(P):
        np.testing.assert_array_equal(before[r], want, err_msg=f"rank {r} (view before launch)")
        np.testing.assert_array_equal(data.view(r), want, err_msg=f"rank {r} (view after)")


def test_window_views_share_memory(make_world, transport):
    P = 2
    w = make_world(devices(P), transport)
    data = w.window([4, 4], "fp32", "data")
    other = w.window([4, 4], "fp32", "other")
    a, b = data.view(0), data.view(0)
    assert np.shares_memory(a, b)
    a[1, 2] = 42.5
    assert b[1, 2] == 42.5
    # ranks' slices and other windows are distinct memory
    assert not np.shares_memory(data.view(0), data.view(1))
    assert not np.shares_memory(data.view(0), other.view(0))
    assert data.view(1)[1, 2] == 0 and other.view(0)[1, 2] == 0


def test_window_view_is_the_kernels_local_slice(make_world, transport):
    """A value the host wrote into view(r) is rank r's pl.load of its own
    slice; what the kernel pl.stores into it the host sees."""
    P = 3
    w = make_world(devices(P), transport)
    data = w.window([2, 4], "int32", "data")
    out = w.tensor([2, 4], "int32")
    for r in range(P):
        data.view(r)[...] = r * 10 + np.arange(8, dtype=np.int32).reshape(2, 4)

    def kernel(out):
        me = pld.rank()
        t = pl.load(data, [0, 0], [2, 4])
        out[...] = t
        pl.store(t * 2 + me, [0, 0], data)

    w.launch(kernel, out)
    for r in range(P):
        base = r * 10 + np.arange(8, dtype=np.int32).reshape(2, 4)
        np.testing.assert_array_equal(out.view(r), base, err_msg=f"rank {r} out")
        np.testing.assert_array_equal(data.view(r), base * 2 + r, err_msg=f"rank {r} data")


def test_tensor_views_share_memory_with_kernel(make_world, transport):
    """Tensor.view(r) is rank r's kernel argument, the same memory: the host
    fills it, the kernel reads and writes it in place, the host sees it."""
    P = 3
    w = make_world(devices(P), transport)
    t = w.tensor([2, 5], "fp32")
    seen = w.tensor([1], "fp32")
    views = [t.view(r) for r in range(P)]
    assert np.shares_memory(t.view(1), t.view(1))
    assert not np.shares_memory(t.view(0), t.view(1))
    for r in range(P):
        assert views[r].shape == (2, 5) and views[r].dtype == np.float32
        assert not views[r].any()  # zeroed
        views[r][...] = r + 0.5

    def kernel(t, seen):
        me = pld.rank()
        seen[0] = t.sum()  # the host's values
        t[1, :] = me * 7  # written in place
        t[0, 0] += 100

    w.launch(kernel, t, seen)
    for r in range(P):
        assert seen.view(r)[0] == 10 * (r + 0.5), f"rank {r}"
        want = np.full((2, 5), r + 0.5, np.float32)
        want[1, :] = r * 7
        want[0, 0] += 100
        np.testing.assert_array_equal(views[r], want, err_msg=f"rank {r} (view before launch)")
        np.testing.assert_array_equal(t.view(r), want, err_msg=f"rank {r}")


def test_tensor_view_rank_out_of_range(make_world):
    w = make_world("0,1")
    t = w.tensor([2], "int32")
    try:
        t.view(2)
    except IndexError as e:
        assert "pld: rank 2 of 2" in str(e)
    else:
        raise AssertionError("view(2) of a 2-rank world did not raise")


def test_window_view_dtype_and_names(make_world):
    w = make_world("0,1")
    for name, np_type in [("fp32", np.float32), ("fp16", np.float16), ("bf16", np.uint16),
                          ("int32", np.int32), ("int16", np.int16), ("int8", np.int8),
                          ("uint8", np.uint8), ("int64", np.int64), ("fp64", np.float64)]:
        d = w.window([3], name, f"w_{name}")
        assert d.view(1).dtype == np_type, name
        assert d.view_dtype() == np_type, name
        assert d.name == f"w_{name}"


def test_pl_store_and_load_of_a_3d_window_region(make_world, transport):
    """pl.store into my slice of a 3-D window moves every [rows, cols] slab
    of the region (a tile lands on the innermost two dimensions), and
    pl.load reads it back."""
    w = make_world("0,1", transport)
    d3 = w.window([2, 3, 4], "int32", "d3")
    out = w.tensor([2, 3, 4], "int32")

    def kernel(out):
        me = pld.rank()
        block = (100 * me + np.arange(2 * 3 * 4, dtype=np.int32)).reshape(2, 3, 4)
        pl.store(block, [0, 0, 0], d3)
        out[...] = pl.load(d3, [0, 0, 0], [2, 3, 4]).reshape(2, 3, 4)

    w.launch(kernel, out)
    for r in range(2):
        want = (100 * r + np.arange(24, dtype=np.int32)).reshape(2, 3, 4)
        np.testing.assert_array_equal(d3.view(r), want)
        np.testing.assert_array_equal(out.view(r), want)
