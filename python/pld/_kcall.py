# SPDX-License-Identifier: Apache-2.0
"""What every kernel-side call shares: the calling rank, argument checks
that fail the group the way the library's own checks do, and numpy arrays
as pld tensors."""
import ctypes
import itertools

import numpy as np

from . import dtypes
from ._lib import CTensor, MAX_DIMS, lib, offsets
from ._lib import _offsets as offsets_cache
from ._lib import offsets as offsets_addr
from .errors import for_status
from .world import DistributedTensor, check, current

ARG, BOUNDS = 1, 2


class Tile(np.ndarray):
    """A tile: a 2-D rank-local array loaded from a tensor or a window (a
    numpy array, marked so that a builtin can refuse it where the C API
    takes a tensor, as the seeds' type check does)."""


def address(a):
    """The address of a contiguous numpy array's first element (the buffer
    protocol: a quarter of what a.ctypes.data costs per call)."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(a))
    except (TypeError, ValueError):  # read-only, or empty
        return a.ctypes.data


def as_tile(a):
    return np.ascontiguousarray(a).view(Tile)


def fail(c, status, api, msg):
    """Fails the group with status, "rank r (device d): api: msg", and raises it."""
    st = lib.pld_ffi_raise(c.ptr, status, api.encode(), msg.encode())
    check(st or status, c)


def ctensor(c, api, what, a, typed_as=None):
    """The address of a pld tensor over numpy array a (no copy); a TypeError
    the seeds' way for what is not a plain tensor (a window; a tile or other
    object, named typed_as where the seeds' type check names it so). Made
    once per array and launch (the rank's Ctx keeps it, and the array)."""
    hit = c.tensors.get(id(a))
    if hit is not None and hit[0] is a:
        return hit[2]
    if isinstance(a, DistributedTensor):
        raise TypeError(f"{api} {what} must be a plain Tensor")
    if not isinstance(a, np.ndarray) or isinstance(a, Tile):
        raise TypeError(f"{api} {typed_as or what} must be a Tensor or DistributedTensor")
    if not a.flags.c_contiguous:
        fail(c, ARG, api, f"{what} must be contiguous (got strides {a.strides})")
    if not 1 <= a.ndim <= MAX_DIMS:
        fail(c, ARG, api, f"{what} must have 1..{MAX_DIMS} dimensions (got {a.ndim})")
    try:
        code = dtypes.code(a.dtype)
    except ValueError:
        fail(c, ARG, api, f"{what} has numpy dtype {a.dtype}, which pld does not have")
    t = CTensor(data=a.ctypes.data, dtype=code, ndim=a.ndim)
    for i, n in enumerate(a.shape):
        t.shape[i] = n
    if len(c.tensors) > 4096:
        c.tensors.clear()
    c.tensors[id(a)] = (a, t, ctypes.addressof(t))
    return c.tensors[id(a)][2]


def window(c, api, what, d):
    """d, which must be a window: else a TypeError naming the call and argument."""
    if not isinstance(d, DistributedTensor):
        raise TypeError(f"{api} {what} must be a DistributedTensor (a window), "
                        f"got {type(d).__name__}")
    return d


def win(api, what, d):
    """The address of window d's pld_dtensor (a TypeError if d is none)."""
    return window(None, api, what, d).ptr


def offs(c, api, what, values, ndim):
    """The address of an int64 array of exactly ndim offsets (or shape)."""
    if values is None:
        return None
    key = values if type(values) is tuple else tuple(values)
    if len(key) != ndim:
        fail(c, ARG, api, f"{what} has {len(key)} entries {list(key)}; the tensor has {ndim} "
                          "dimensions")
    hit = offsets_cache.get(key)
    return hit[0] if hit is not None else offsets(key)


def region(c, api, what, shape, off, size):
    """Checks that [off, off+size) lies inside shape (plain tensors: the
    library never sees these copies)."""
    if len(off) != len(shape) or len(size) != len(shape):
        fail(c, ARG, api, f"{what}: offsets {list(off)} and shape {list(size)} must both have "
                          f"{len(shape)} entries")
    for o, n, s in zip(off, size, shape):
        if o < 0 or n < 0 or o + n > s:
            fail(c, BOUNDS, api, f"{what}: region at {list(off)} of {list(size)} is outside "
                                 f"{list(shape)}")


def slabs(c, api, offsets, shape, ndim):
    """A region of a window as the 2-D moves a tile makes (a tile lands on
    the innermost two dimensions): (offsets address, rows, cols, first row
    in the folded [prod(leading)*rows, cols] tile) per slab. One slab when
    every leading extent is 1, as on the pages ([1, SIZE])."""
    off = tuple(offsets)
    size = [int(n) for n in shape]
    for what, v in (("offsets", list(off)), ("shape", size)):
        if len(v) != ndim:
            fail(c, ARG, api, f"{what} has {len(v)} entries {v}; the tensor has {ndim} dimensions")
    rows, cols = (size[-2], size[-1]) if ndim >= 2 else (1, size[0])
    lead = size[:-2]
    if all(n == 1 for n in lead):
        return [(offsets_addr(off), rows, cols, 0)]
    out = []
    for i, idx in enumerate(itertools.product(*[range(n) for n in lead])):
        o = tuple(a + b for a, b in zip(off[:-2], idx)) + off[-2:]
        out.append((offsets_addr(o), rows, cols, i * rows))
    return out


def tile_dims(shape):
    """A shape as the 2-D [rows, cols] of a tile: leading extents fold into rows."""
    rows = 1
    for n in shape[:-1]:
        rows *= int(n)
    return rows, int(shape[-1])
