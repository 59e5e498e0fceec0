# SPDX-License-Identifier: Apache-2.0
"""pld.tensor: the builtins, one call each, as in C (pld/coll.h). Plain
tensors are this rank's numpy arrays; windows are DistributedTensors. Each
returns the window that holds its result."""
import ctypes
import enum

from . import _kcall as k
from ._lib import CMoeLayout, lib
from .tile import get, put  # noqa: F401 -- pld.tensor.put / get, as on the seed pages


class ReduceOp(enum.IntEnum):
    Sum = 0
    Max = 1
    Min = 2
    Prod = 3


class AllreduceMode(enum.IntEnum):
    Mesh = 0
    Ring = 1
    Auto = 16
    RsAg = 17


def _enum(kind, value, api):
    if isinstance(value, str):
        names = {m.name.lower(): m for m in kind}
        names.update({"rs_ag": AllreduceMode.RsAg} if kind is AllreduceMode else {})
        if value.lower() not in names:
            raise ValueError(f"{api}: unknown {kind.__name__} '{value}' "
                             f"({' '.join(sorted(names))})")
        return int(names[value.lower()])
    return int(value)


def _run(fn, *args):
    c = k.current()
    k.check(fn(c.ptr, *args), c)


def barrier(signal):
    k.window(None, "pld.tensor.barrier", "signal", signal)
    _run(lib.pld_ffi_barrier, signal.ptr)


def broadcast(data, signal, root=0):
    _run(lib.pld_ffi_broadcast, k.window(None, "pld.tensor.broadcast", "data", data).ptr,
         k.window(None, "pld.tensor.broadcast", "signal", signal).ptr, int(root))
    return data


def allgather(local_data, target, signal):
    """local_data: my plain [1, N] (or [N]) tensor; target [P, N] window."""
    c = k.current()
    t = k.ctensor(c, "pld.tensor.allgather", "local_data", local_data, "input")
    k.check(lib.pld_ffi_allgather(c.ptr, t, k.window(c, "pld.tensor.allgather", "target",
                                                        target).ptr, signal.ptr), c)
    return target


def allgather_inplace(target, signal):
    _run(lib.pld_ffi_allgather_inplace, target.ptr, signal.ptr)
    return target


def reduce_scatter(data, signal, op=ReduceOp.Sum):
    _run(lib.pld_ffi_reduce_scatter, data.ptr, signal.ptr,
         _enum(ReduceOp, op, "pld.tensor.reduce_scatter"))
    return data


def allreduce(data, signal, op=ReduceOp.Sum, mode=AllreduceMode.Auto, core_num=1):
    _run(lib.pld_ffi_allreduce, k.window(None, "pld.tensor.allreduce", "data", data).ptr,
         signal.ptr, _enum(ReduceOp, op, "pld.tensor.allreduce"),
         _enum(AllreduceMode, mode, "pld.tensor.allreduce"), int(core_num))
    return data


def all_to_all(input, target, signal):  # noqa: A002 -- the C and seed name
    """input: my plain [P, N] tensor, row d for rank d; target [P, N] window."""
    c = k.current()
    t = k.ctensor(c, "pld.tensor.all_to_all", "input", input)
    k.check(lib.pld_ffi_all_to_all(c.ptr, t, k.window(c, "pld.tensor.all_to_all", "target",
                                                          target).ptr, signal.ptr), c)
    return target


def all_to_all_v(input, target, signal, send_counts, recv_counts):  # noqa: A002
    c = k.current()
    api = "pld.tensor.all_to_all_v"
    k.check(lib.pld_ffi_all_to_all_v(c.ptr, k.ctensor(c, api, "input", input), target.ptr,
                                     signal.ptr, k.ctensor(c, api, "send_counts", send_counts),
                                     k.window(c, api, "recv_counts", recv_counts).ptr), c)
    return target


def indexed_all_to_all_v(input, target, signal, send_counts, recv_counts, index,  # noqa: A002
                         core_num=1):
    c = k.current()
    api = "pld.tensor.indexed_all_to_all_v"
    k.check(lib.pld_ffi_indexed_all_to_all_v(
        c.ptr, k.ctensor(c, api, "input", input), k.window(c, api, "target", target).ptr,
        signal.ptr, k.window(c, api, "send_counts", send_counts).ptr,
        k.ctensor(c, api, "recv_counts", recv_counts), k.ctensor(c, api, "index", index),
        int(core_num)), c)
    return target


def indexed_combine(expert_out, output, signal, send_counts, index, weights, core_num=1):
    c = k.current()
    api = "pld.tensor.indexed_combine"
    k.check(lib.pld_ffi_indexed_combine(
        c.ptr, k.window(c, api, "expert_out", expert_out).ptr, k.ctensor(c, api, "output", output),
        signal.ptr, k.window(c, api, "send_counts", send_counts).ptr,
        k.ctensor(c, api, "index", index), k.ctensor(c, api, "weights", weights), int(core_num)),
        c)
    return output


class MoeLayout:
    """E local experts per rank, M rows per (destination, expert) block."""

    def __init__(self, experts_per_rank, max_rows):
        self.c = CMoeLayout(int(experts_per_rank), int(max_rows))
        self.ptr = ctypes.addressof(self.c)


def moe_dispatch(layout, input, target, signal, send_counts, recv_counts,  # noqa: A002
                 expert_offsets):
    c = k.current()
    api = "pld.tensor.moe_dispatch"
    k.check(lib.pld_ffi_moe_dispatch(
        c.ptr, layout.ptr, k.ctensor(c, api, "input", input), k.window(c, api, "target", target).ptr,
        signal.ptr, k.ctensor(c, api, "send_counts", send_counts),
        k.window(c, api, "recv_counts", recv_counts).ptr,
        k.ctensor(c, api, "expert_offsets", expert_offsets)), c)
    return target


def moe_combine(layout, expert_out, out, signal, send_counts, recv_counts):
    c = k.current()
    api = "pld.tensor.moe_combine"
    k.check(lib.pld_ffi_moe_combine(
        c.ptr, layout.ptr, k.window(c, api, "expert_out", expert_out).ptr,
        k.window(c, api, "out", out).ptr, signal.ptr,
        k.ctensor(c, api, "send_counts", send_counts),
        k.window(c, api, "recv_counts", recv_counts).ptr), c)
    return out
