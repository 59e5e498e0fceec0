# SPDX-License-Identifier: Apache-2.0
"""pld.tile: one-sided moves between a rank's tiles and any rank's window."""
import numpy as np

from . import _kcall as k
from ._lib import lib
from ._kcall import Tile
from ._kcall import as_tile as _as_tile


def remote_load(data, peer, offsets, shape):
    """The [shape] region of peer's slice of window data at offsets, as a tile."""
    c = k.current()
    k.window(c, "pld.tile.remote_load", "data", data)
    rows, cols = k.tile_dims(shape)
    out = np.empty((rows, cols), dtype=data.np_dtype).view(Tile)
    st = lib.pld_ffi_remote_load(c.ptr, out.ctypes.data, rows, cols, data.ptr, int(peer),
                                 k.offs(c, "pld_remote_load", "offsets", offsets, data.ndim))
    k.check(st, c)
    return out


def remote_store(tile, data, peer, offsets, atomic=False):
    """Writes tile into peer's slice of window data at offsets (atomic=True: adds)."""
    c = k.current()
    k.window(c, "pld.tile.remote_store", "data", data)
    if not isinstance(tile, np.ndarray):
        raise TypeError("pld.tile.remote_store tile must be a tile (pl.load or remote_load)")
    src = np.ascontiguousarray(tile, dtype=data.np_dtype)
    rows, cols = k.tile_dims(src.shape if src.ndim else [1])
    st = lib.pld_ffi_remote_store(c.ptr, src.ctypes.data, rows, cols, data.ptr, int(peer),
                                  k.offs(c, "pld_remote_store", "offsets", offsets, data.ndim),
                                  1 if atomic else 0)
    k.check(st, c)


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
