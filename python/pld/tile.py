# SPDX-License-Identifier: Apache-2.0
"""pld.tile: one-sided moves between a rank's tiles and any rank's window."""
import numpy as np

from . import _kcall as k
from ._lib import HOLD_BYTES, held, lib
from ._kcall import Tile
from .world import DistributedTensor


_LOAD, _LOAD_HELD = lib.pld_ffi_remote_load, held["pld_ffi_remote_load"]


def _pick(c, name, nbytes):
    """The GIL-holding twin for a short copy, else the releasing call."""
    return held[name] if c.hold and nbytes <= HOLD_BYTES else getattr(lib, name)


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


_PUT, _PUT_HELD = lib.pld_ffi_put, held["pld_ffi_put"]
_GET, _GET_HELD = lib.pld_ffi_get, held["pld_ffi_get"]


def _tup(v):
    return None if v is None else (v if type(v) is tuple else tuple(v))


def put(dst, peer, src, dst_offsets=None, src_offsets=None, shape=None, atomic=False):
    """Writes the plain tensor src (or its region) into peer's slice of dst."""
    c = k.current()
    # a kernel's loop repeats the same put to other peers: its checked
    # arguments are prepared once per (dst, src, region) and launch
    key = ("put", id(dst), id(src), _tup(dst_offsets), _tup(src_offsets), _tup(shape), atomic)
    hit = c.prepared.get(key)
    if hit is None or hit[0] is not dst or hit[1] is not src:
        if type(dst) is not DistributedTensor:
            k.window(c, "pld_put", "dst", dst)
        t = k.ctensor(c, "pld_put", "src", src)
        nd = dst.ndim if dst.ndim >= src.ndim else src.ndim
        hold = c.hold and _region_bytes(src, shape) <= HOLD_BYTES
        hit = (dst, src, _PUT_HELD if hold else _PUT, dst.ptr, t,
               k.offs(c, "pld_put", "dst_offsets", key[3], dst.ndim),
               k.offs(c, "pld_put", "src_offsets", key[4], src.ndim),
               k.offs(c, "pld_put", "shape", key[5], nd), 1 if atomic else 0)
        c.prepare(key, hit)
    st = hit[2](c.ptr, hit[3], int(peer), hit[4], hit[5], hit[6], hit[7], hit[8])
    if st:
        k.check(st, c)


def get(dst, peer, src, dst_offsets=None, src_offsets=None, shape=None):
    """Reads peer's slice of window src (or its region) into the plain tensor dst."""
    c = k.current()
    key = ("get", id(dst), id(src), _tup(dst_offsets), _tup(src_offsets), _tup(shape))
    hit = c.prepared.get(key)
    if hit is None or hit[0] is not dst or hit[1] is not src:
        if type(src) is not DistributedTensor:
            k.window(c, "pld_get", "src", src)
        t = k.ctensor(c, "pld_get", "dst", dst)
        nd = src.ndim if src.ndim >= dst.ndim else dst.ndim
        hold = c.hold and _region_bytes(dst, shape) <= HOLD_BYTES
        hit = (dst, src, _GET_HELD if hold else _GET, t, src.ptr,
               k.offs(c, "pld_get", "dst_offsets", key[3], dst.ndim),
               k.offs(c, "pld_get", "src_offsets", key[4], src.ndim),
               k.offs(c, "pld_get", "shape", key[5], nd))
        c.prepare(key, hit)
    st = hit[2](c.ptr, hit[3], int(peer), hit[4], hit[5], hit[6], hit[7])
    if st:
        k.check(st, c)


__all__ = ["Tile", "get", "put", "remote_load", "remote_store"]
