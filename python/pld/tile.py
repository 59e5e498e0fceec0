# SPDX-License-Identifier: Apache-2.0
"""pld.tile: one-sided moves between a rank's tiles and any rank's window."""
import numpy as np

from . import _kcall as k
from ._lib import HOLD_BYTES, lib, lib_gil
from ._kcall import Tile
from .world import DistributedTensor


_LOAD, _LOAD_HELD = lib.pld_ffi_remote_load, lib_gil.pld_ffi_remote_load


def _pick(c, name, nbytes):
    """The GIL-holding twin for a short copy, else the releasing call."""
    return getattr(lib_gil if c.hold and nbytes <= HOLD_BYTES else lib, name)


def _region_bytes(plain, shape):
    if shape is None:
        return plain.nbytes if isinstance(plain, np.ndarray) else 0
    n = plain.itemsize if isinstance(plain, np.ndarray) else 1
    for e in shape:
        n *= int(e)
    return n


def remote_load(data, peer, offsets, shape):
    """The [shape] region of peer's slice of window data at offsets, as a 2-D
    tile ([prod(shape[:-1]), shape[-1]]: leading extents fold into rows)."""
    c = k.current()
    if type(data) is not DistributedTensor:
        k.window(c, "pld.tile.remote_load", "data", data)
    if data.ndim == 2 and len(shape) == 2:  # the common [rows, cols] region: one move
        key = ("load", id(data), _tup(offsets), _tup(shape))
        hit = c.prepared.get(key)
        if hit is None or hit[0] is not data:
            rows, cols = int(shape[0]), int(shape[1])
            nbytes = rows * cols * data.np_dtype.itemsize
            hit = (data, _LOAD_HELD if c.hold and nbytes <= HOLD_BYTES else _LOAD, rows, cols,
                   k.offs(c, "pld_remote_load", "offsets", key[2], 2), (rows, cols))
            c.prepare(key, hit)
        out = Tile(hit[5], data.np_dtype)
        st = hit[1](c.ptr, k.address(out), hit[2], hit[3], data.ptr, int(peer), hit[4])
        if st:
            k.check(st, c)
        return out
    parts = k.slabs(c, "pld_remote_load", offsets, shape, data.ndim)
    _, rows, cols, _ = parts[-1]
    out = Tile((parts[-1][3] + rows, cols), data.np_dtype)
    base, row_bytes = k.address(out), cols * data.np_dtype.itemsize
    fn = _pick(c, "pld_ffi_remote_load", rows * row_bytes)
    for off, rows, cols, first in parts:
        k.check(fn(c.ptr, base + first * row_bytes, rows, cols, data.ptr, int(peer), off), c)
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
    fn = _pick(c, "pld_ffi_remote_store", src.nbytes)
    for off, rows, cols, first in k.slabs(c, "pld_remote_store", offsets, shape, data.ndim):
        k.check(fn(c.ptr, base + first * row_bytes, rows, cols, data.ptr, int(peer), off,
                   1 if atomic else 0), c)


def _tup(v):
    return None if v is None else (v if type(v) is tuple else tuple(v))


def _prepared(c, api, name, key, win_t, plain, win_off, plain_off, shape):
    """The checked arguments of a put or get between window win_t and the
    plain tensor plain: (win_t, plain, the call, the window's and the
    tensor's addresses, and the window's, the tensor's and the region's
    offset arrays), made once per (window, tensor, region) and launch -- a
    kernel's loop repeats the same move to other peers."""
    hit = c.prepared.get(key)
    if hit is not None and hit[0] is win_t and hit[1] is plain:
        return hit
    if type(win_t) is not DistributedTensor:
        k.window(c, api, "dst" if name == "pld_ffi_put" else "src", win_t)
    t = k.ctensor(c, api, "src" if name == "pld_ffi_put" else "dst", plain)
    nd = win_t.ndim if win_t.ndim >= plain.ndim else plain.ndim
    wo, po = ("dst_offsets", "src_offsets") if name == "pld_ffi_put" else ("src_offsets",
                                                                           "dst_offsets")
    hit = (win_t, plain, _pick(c, name, _region_bytes(plain, shape)), win_t.ptr, t,
           k.offs(c, api, wo, win_off, win_t.ndim), k.offs(c, api, po, plain_off, plain.ndim),
           k.offs(c, api, "shape", shape, nd))
    c.prepare(key, hit)
    return hit


def put(dst, peer, src, dst_offsets=None, src_offsets=None, shape=None, atomic=False):
    """Writes the plain tensor src (or its region) into peer's slice of dst."""
    c = k.current()
    key = ("put", id(dst), id(src), _tup(dst_offsets), _tup(src_offsets), _tup(shape))
    h = _prepared(c, "pld_put", "pld_ffi_put", key, dst, src, key[3], key[4], key[5])
    st = h[2](c.ptr, h[3], int(peer), h[4], h[5], h[6], h[7], 1 if atomic else 0)
    if st:
        k.check(st, c)


def get(dst, peer, src, dst_offsets=None, src_offsets=None, shape=None):
    """Reads peer's slice of window src (or its region) into the plain tensor dst."""
    c = k.current()
    key = ("get", id(src), id(dst), _tup(src_offsets), _tup(dst_offsets), _tup(shape))
    h = _prepared(c, "pld_get", "pld_ffi_get", key, src, dst, key[3], key[4], key[5])
    st = h[2](c.ptr, h[4], int(peer), h[3], h[6], h[5], h[7])
    if st:
        k.check(st, c)


__all__ = ["Tile", "get", "put", "remote_load", "remote_store"]
