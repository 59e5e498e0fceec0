# SPDX-License-Identifier: Apache-2.0
"""pld from Python: the seed pages' names over the C library.

    import pld
    from pld import pl

    @pl.function(type=pl.FunctionType.InCore)
    def kernel(x, data, signal):
        ctx = pld.get_comm_ctx(data)
        pld.tensor.allgather(x, data, signal)

    world = pld.World()                       # -p, -d, --transport, --ir from sys.argv
    x = world.tensor([1, 64], "fp32")         # a plain tensor per rank
    data = world.window([world.size, 64], "fp32")
    signal = world.signal([world.size, 1])
    world.launch(kernel, x, data, signal)
"""
from . import pl, system, tensor, tile  # noqa: F401
from .dtypes import BF16, FP16, FP32, FP64, INT8, INT16, INT32, INT64, UINT8  # noqa: F401
from .errors import (AliasError, ArgError, BoundsError, CheckError, DataError,  # noqa: F401
                     DeadlockError, Error, KernelError, NoMemError, PeerError, RaceError,
                     SystemError, TimeoutError, UnsupportedError)
from .system import NotifyOp, WaitCmp  # noqa: F401
from .tensor import AllgatherMode, AllreduceMode, AllToAllMode, BroadcastMode, MoeLayout, ReduceOp  # noqa: F401
from .world import DistributedTensor, Team, Tensor, World, check, current  # noqa: F401

__version__ = "0.1.0"


def get_comm_ctx(tensor=None):
    """The calling rank's context (inside a kernel; the argument is the
    window the seeds pass, and is not needed)."""
    return current()


def rank(ctx=None):
    return (ctx or current()).rank


def nranks(ctx=None):
    return (ctx or current()).nranks


def team_ctx(team):
    """This rank's view of its group of team (None if it is in none); use it
    as `with pld.team_ctx(team):` to run the calls inside in the group."""
    import ctypes

    from ._lib import lib
    from .world import Ctx
    c = current()
    out = ctypes.c_void_p()
    check(lib.pld_ffi_team_ctx(c.ptr, team.ptr, ctypes.byref(out)), c)
    return Ctx(out.value, c.world) if out.value else None
