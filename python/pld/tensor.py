# SPDX-License-Identifier: Apache-2.0
"""pld.tensor: the builtins, one call each, as in C (pld/coll.h). Plain
tensors are this rank's numpy arrays; windows are DistributedTensors. Each
returns the window that holds its result."""
import ctypes
import enum

from . import _kcall as k
from ._lib import CMoeLayout
from .tile import get, put  # noqa: F401 -- pld.tensor.put / get, as on the seed pages
from .world import DistributedTensor


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
    Rabenseifner = 18


class BroadcastMode(enum.IntEnum):
    Auto = 0
    Pull = 1
    Binomial = 2


class AllgatherMode(enum.IntEnum):
    Auto = 0
    Push = 1
    Doubling = 2


class AllToAllMode(enum.IntEnum):
    Auto = 0
    Push = 1
    Bruck = 2


def _enum(kind, value, api):
    if isinstance(value, str):
        names = {m.name.lower(): m for m in kind}
        names.update({"rs_ag": AllreduceMode.RsAg} if kind is AllreduceMode else {})
        if value.lower() not in names:
            raise ValueError(f"{api}: unknown {kind.__name__} '{value}' "
                             f"({' '.join(sorted(names))})")
        return int(names[value.lower()])
    return int(value)


def _run(name, *args):
    c = k.current()
    st = getattr(c.calls, name)(c.ptr, *args)
    if st:
        k.check(st, c)


def barrier(signal):
    c = k.current()
    if type(signal) is not DistributedTensor:
        k.win("pld.tensor.barrier", "signal", signal)
    st = c.calls.pld_ffi_barrier(c.ptr, signal.ptr)
    if st:
        k.check(st, c)


def broadcast(data, signal, root=0, mode=BroadcastMode.Auto):
    """mode: BroadcastMode or "auto", "pull", "binomial" (pld_broadcast_with)."""
    api = "pld.tensor.broadcast"
    _run("pld_ffi_broadcast_with", k.win(api, "data", data), k.win(api, "signal", signal),
         int(root), _enum(BroadcastMode, mode, api))
    return data


def allgather(local_data, target, signal, mode=AllgatherMode.Auto):
    """local_data: my plain [1, N] (or [N]) tensor; target [P, N] window;
    mode: AllgatherMode or "auto", "push", "doubling" (pld_allgather_with)."""
    c = k.current()
    if mode is not AllgatherMode.Auto:
        api = "pld.tensor.allgather"
        k.check(c.calls.pld_ffi_allgather_with(
            c.ptr, k.ctensor(c, api, "local_data", local_data, "input"),
            k.win(api, "target", target), k.win(api, "signal", signal),
            _enum(AllgatherMode, mode, api)), c)
        return target
    hit = c.tensors.get(id(local_data))  # the common case first: a tensor seen before
    if (hit is None or hit[0] is not local_data or type(target) is not DistributedTensor or
            type(signal) is not DistributedTensor):
        api = "pld.tensor.allgather"
        hit = (None, None, k.ctensor(c, api, "local_data", local_data, "input"))
        k.win(api, "target", target), k.win(api, "signal", signal)
    st = c.calls.pld_ffi_allgather(c.ptr, hit[2], target.ptr, signal.ptr)
    if st:
        k.check(st, c)
    return target


def allgather_inplace(target, signal):
    api = "pld.tensor.allgather_inplace"
    _run("pld_ffi_allgather_inplace", k.win(api, "target", target), k.win(api, "signal", signal))
    return target


def reduce_scatter(data, signal, op=ReduceOp.Sum):
    api = "pld.tensor.reduce_scatter"
    _run("pld_ffi_reduce_scatter", k.win(api, "data", data), k.win(api, "signal", signal),
         _enum(ReduceOp, op, api))
    return data


def allreduce(data, signal, op=ReduceOp.Sum, mode=AllreduceMode.Auto, core_num=1):
    api = "pld.tensor.allreduce"
    _run("pld_ffi_allreduce", k.win(api, "data", data), k.win(api, "signal", signal),
         _enum(ReduceOp, op, api), _enum(AllreduceMode, mode, api), int(core_num))
    return data


def all_to_all(input, target, signal, mode=AllToAllMode.Auto):  # noqa: A002 -- the C name
    """input: my plain [P, N] tensor, row d for rank d; target [P, N] window;
    mode: AllToAllMode or "auto", "push", "bruck" (pld_all_to_all_with)."""
    c = k.current()
    api = "pld.tensor.all_to_all"
    t = k.ctensor(c, api, "input", input)
    target_ptr, signal_ptr = k.win(api, "target", target), k.win(api, "signal", signal)
    if mode is AllToAllMode.Auto:
        k.check(c.calls.pld_ffi_all_to_all(c.ptr, t, target_ptr, signal_ptr), c)
    else:
        k.check(c.calls.pld_ffi_all_to_all_with(c.ptr, t, target_ptr, signal_ptr,
                                                _enum(AllToAllMode, mode, api)), c)
    return target


def all_to_all_v(input, target, signal, send_counts, recv_counts):  # noqa: A002
    c = k.current()
    api = "pld.tensor.all_to_all_v"
    k.check(c.calls.pld_ffi_all_to_all_v(c.ptr, k.ctensor(c, api, "input", input),
                                     k.win(api, "target", target), k.win(api, "signal", signal),
                                     k.ctensor(c, api, "send_counts", send_counts),
                                     k.win(api, "recv_counts", recv_counts)), c)
    return target


def indexed_all_to_all_v(input, target, signal, send_counts, recv_counts, index,  # noqa: A002
                         core_num=1):
    c = k.current()
    api = "pld.tensor.indexed_all_to_all_v"
    k.check(c.calls.pld_ffi_indexed_all_to_all_v(
        c.ptr, k.ctensor(c, api, "input", input), k.win(api, "target", target),
        k.win(api, "signal", signal), k.win(api, "send_counts", send_counts),
        k.ctensor(c, api, "recv_counts", recv_counts), k.ctensor(c, api, "index", index),
        int(core_num)), c)
    return target


def indexed_combine(expert_out, output, signal, send_counts, index, weights, core_num=1):
    c = k.current()
    api = "pld.tensor.indexed_combine"
    k.check(c.calls.pld_ffi_indexed_combine(
        c.ptr, k.win(api, "expert_out", expert_out), k.ctensor(c, api, "output", output),
        k.win(api, "signal", signal), k.win(api, "send_counts", send_counts),
        k.ctensor(c, api, "index", index), k.ctensor(c, api, "weights", weights), int(core_num)),
        c)
    return output


class MoeLayout:
    """E local experts per rank, M rows per (destination, expert) block."""

    def __init__(self, experts_per_rank, max_rows):
        self.c = CMoeLayout(int(experts_per_rank), int(max_rows))
        self.ptr = ctypes.addressof(self.c)


def _layout(api, layout):
    if not isinstance(layout, MoeLayout):
        raise TypeError(f"{api} layout must be a pld.MoeLayout, got {type(layout).__name__}")
    return layout.ptr


def moe_dispatch(layout, input, target, signal, send_counts, recv_counts,  # noqa: A002
                 expert_offsets):
    c = k.current()
    api = "pld.tensor.moe_dispatch"
    k.check(c.calls.pld_ffi_moe_dispatch(
        c.ptr, _layout(api, layout), k.ctensor(c, api, "input", input),
        k.win(api, "target", target), k.win(api, "signal", signal),
        k.ctensor(c, api, "send_counts", send_counts), k.win(api, "recv_counts", recv_counts),
        k.ctensor(c, api, "expert_offsets", expert_offsets)), c)
    return target


def moe_combine(layout, expert_out, out, signal, send_counts, recv_counts):
    c = k.current()
    api = "pld.tensor.moe_combine"
    k.check(c.calls.pld_ffi_moe_combine(
        c.ptr, _layout(api, layout), k.win(api, "expert_out", expert_out), k.win(api, "out", out),
        k.win(api, "signal", signal), k.ctensor(c, api, "send_counts", send_counts),
        k.win(api, "recv_counts", recv_counts)), c)
    return out
