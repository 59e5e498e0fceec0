# SPDX-License-Identifier: Apache-2.0
"""pld.system: signals. notify updates a cell of a peer's signal window;
wait blocks (without the GIL) until my own cell compares to expected."""
import ctypes
import enum

from . import _kcall as k
from ._lib import lib, lib_gil
from .world import DistributedTensor


class NotifyOp(enum.IntEnum):
    AtomicAdd = 0
    Set = 1


class WaitCmp(enum.IntEnum):
    Eq = 0
    Ge = 1


_NOTIFY, _NOTIFY_HELD = lib.pld_ffi_notify, lib_gil.pld_ffi_notify
_READ, _READ_HELD = lib.pld_ffi_signal_read, lib_gil.pld_ffi_signal_read


def notify(signal, peer, offsets, value=1, op=NotifyOp.AtomicAdd):
    c = k.current()
    if type(signal) is not DistributedTensor:
        k.window(c, "pld.system.notify", "signal", signal)
    off = k.offs(c, "pld_notify", "offsets", offsets, signal.ndim)
    st = (_NOTIFY_HELD if c.hold else _NOTIFY)(c.ptr, signal.ptr, int(peer), off, int(value),
                                               int(op))
    if st:
        k.check(st, c)


def wait(signal, offsets, expected=1, cmp=WaitCmp.Ge):
    """Blocks, without the GIL, until my cell compares to expected."""
    c = k.current()
    if type(signal) is not DistributedTensor:
        k.window(c, "pld.system.wait", "signal", signal)
    off = k.offs(c, "pld_wait", "offsets", offsets, signal.ndim)
    st = c.calls.pld_ffi_wait(c.ptr, signal.ptr, off, int(expected), int(cmp))
    if st:
        k.check(st, c)


def read(signal, offsets):
    """My cell's value now (pld_signal_read)."""
    c = k.current()
    if type(signal) is not DistributedTensor:
        k.window(c, "pld.system.read", "signal", signal)
    off = k.offs(c, "pld_signal_read", "offsets", offsets, signal.ndim)
    out = ctypes.c_int32()
    st = (_READ_HELD if c.hold else _READ)(c.ptr, signal.ptr, off, ctypes.byref(out))
    if st:
        k.check(st, c)
    return out.value
