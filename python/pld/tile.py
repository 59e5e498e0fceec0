# SPDX-License-Identifier: Apache-2.0
"""pld.tile: one-sided moves between a rank's tiles and any rank's window."""
import numpy as np

from . import _kcall as k
from ._lib import lib
from ._kcall import Tile


def remote_load(data, peer, offsets, shape):
    """The [shape] region of peer's slice of window data at offsets, as a 2-D
    tile ([prod(shape[:-1]), shape[-1]]: leading extents fold into rows)."""
    c = k.current()
    k.window(c, "pld.tile.remote_load", "data", data)
    parts = k.slabs(c, "pld_remote_load", offsets, shape, data.ndim)
    _, rows, cols, _ = parts[-1]
    out = Tile((parts[-1][3] + rows, cols), data.np_dtype)
    base, row_bytes = k.address(out), cols * data.np_dtype.itemsize
    for off, rows, cols, first in parts:
        k.check(lib.pld_ffi_remote_load(c.ptr, base + first * row_bytes, rows, cols, data.ptr,
                                        int(peer), off), c)
    return out


def remote_store(tile, data, peer, offsets, atomic=False):
    """Writes tile into peer's slice of window data at offsets (atomic=True:
    adds). A 2-D tile lands on the innermost two dimensions, as in C; an
    array of the window's ndim covers its whole shape."""
    c = k.current()
    k.window(c, "pld.tile.remote_store", "data", data)
    if not isinstance(tile, np.ndarray):
        raise TypeError("pld.tile.remote_store tile must be a tile (pl.load or remote_load)")
    src = np.ascontiguousarray(tile, dtype=data.np_dtype)
    shape = list(src.shape) if src.ndim else [1]
    if len(shape) < data.ndim:  # a tile: right-aligned, as in C
        shape = [1] * (data.ndim - len(shape)) + shape
    elif len(shape) > data.ndim:
        k.fail(c, k.ARG, "pld_remote_store", f"a {list(src.shape)} tile has more dimensions "
                                             f"than window '{data.name}' {list(data.shape)}")
    base, row_bytes = k.address(src), shape[-1] * data.np_dtype.itemsize
    for off, rows, cols, first in k.slabs(c, "pld_remote_store", offsets, shape, data.ndim):
        k.check(lib.pld_ffi_remote_store(c.ptr, base + first * row_bytes, rows, cols, data.ptr,
                                         int(peer), off, 1 if atomic else 0), c)


def put(dst, peer, src, dst_offsets=None, src_offsets=None, shape=None, atomic=False):
    """Writes the plain tensor src (or its region) into peer's slice of dst."""
    c = k.current()
    k.window(c, "pld_put", "dst", dst)
    t = k.ctensor(c, "pld_put", "src", src)
    nd = max(dst.ndim, src.ndim)
    st = lib.pld_ffi_put(c.ptr, dst.ptr, int(peer), t,
                         k.offs(c, "pld_put", "dst_offsets", dst_offsets, dst.ndim),
                         k.offs(c, "pld_put", "src_offsets", src_offsets, src.ndim),
                         k.offs(c, "pld_put", "shape", shape, nd), 1 if atomic else 0)
    k.check(st, c)


def get(dst, peer, src, dst_offsets=None, src_offsets=None, shape=None):
    """Reads peer's slice of window src (or its region) into the plain tensor dst."""
    c = k.current()
    k.window(c, "pld_get", "src", src)
    t = k.ctensor(c, "pld_get", "dst", dst)
    nd = max(src.ndim, dst.ndim)
    st = lib.pld_ffi_get(c.ptr, t, int(peer), src.ptr,
                         k.offs(c, "pld_get", "dst_offsets", dst_offsets, dst.ndim),
                         k.offs(c, "pld_get", "src_offsets", src_offsets, src.ndim),
                         k.offs(c, "pld_get", "shape", shape, nd))
    k.check(st, c)


__all__ = ["Tile", "get", "put", "remote_load", "remote_store"]
