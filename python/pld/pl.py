# SPDX-License-Identifier: Apache-2.0
"""The kernel language's helpers, numpy-backed, so a kernel body written
for the seeds' `pl` runs as written: pl.load / pl.store / pl.range and the
@pl.function decorator."""
import builtins
import enum

import numpy as np

from . import _kcall as k
from . import tile as _tile
from .world import DistributedTensor, Tensor  # noqa: F401 -- pl.Tensor for annotations


Tile = k.Tile
_as_tile = k.as_tile


class FunctionType(enum.Enum):
    InCore = "InCore"
    Host = "Host"


def function(fn=None, *, type=FunctionType.InCore):  # noqa: A002 -- the seeds' keyword
    """Marks a kernel (the seeds' @pl.function(type=...)); the function runs as written."""
    def mark(f):
        f.pl_function_type = type
        return f
    return mark(fn) if fn is not None else mark


def range(*args):  # noqa: A001 -- pl.range as on the seed pages
    return builtins.range(*args)


def _local_array(c, tensor, api):
    if isinstance(tensor, DistributedTensor):
        return tensor, c.local(tensor)
    if isinstance(tensor, np.ndarray) and not isinstance(tensor, Tile):
        return None, tensor
    raise TypeError(f"{api}: the tensor must be a Tensor or DistributedTensor, "
                    f"got {builtins.type(tensor).__name__}")


def load(tensor, offsets, shape):
    """The region of a plain tensor or of my slice of a window, as a tile."""
    c = k.current()
    _, arr = _local_array(c, tensor, "pl.load")
    off, size = [int(o) for o in offsets], [int(s) for s in shape]
    k.region(c, "pl.load", "source", arr.shape, off, size)
    sl = tuple(builtins.slice(o, o + n) for o, n in zip(off, size))
    return _as_tile(arr[sl].reshape(k.tile_dims(size)))


def store(tile, offsets, tensor):
    """Writes tile into tensor at offsets and returns tensor. Into a window
    it is a store to my own slice (pld_remote_store to myself)."""
    c = k.current()
    d, arr = _local_array(c, tensor, "pl.store")
    src = np.ascontiguousarray(tile)
    off = [int(o) for o in offsets]
    size = list(src.shape) if src.ndim == arr.ndim else None
    if size is None:  # a 2-D tile into a tensor of another ndim: right-aligned
        size = [1] * (arr.ndim - src.ndim) + list(src.shape) if src.ndim < arr.ndim else None
    if size is None:
        k.fail(c, k.ARG, "pl.store", f"a {list(src.shape)} tile does not fit a "
                                     f"{arr.ndim}-D tensor")
    k.region(c, "pl.store", "target", arr.shape, off, size)
    if d is not None:  # my slice, through the library (checks, listing, race checker)
        _tile.remote_store(src.reshape(size), d, c.rank, off)
    else:
        sl = tuple(builtins.slice(o, o + n) for o, n in zip(off, size))
        arr[sl] = src.reshape(size)
    return tensor
