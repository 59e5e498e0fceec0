# SPDX-License-Identifier: Apache-2.0
"""pld.system: signals. notify updates a cell of a peer's signal window;
wait blocks (without the GIL) until my own cell compares to expected."""
import ctypes
import enum

from . import _kcall as k
from ._lib import lib


class NotifyOp(enum.IntEnum):
    AtomicAdd = 0
    Set = 1


class WaitCmp(enum.IntEnum):
    Eq = 0
    Ge = 1


def notify(signal, peer, offsets, value=1, op=NotifyOp.AtomicAdd):
    c = k.current()
    k.window(c, "pld.system.notify", "signal", signal)
    st = lib.pld_ffi_notify(c.ptr, signal.ptr, int(peer),
                            k.offs(c, "pld_notify", "offsets", offsets, signal.ndim), int(value),
                            int(op))
    k.check(st, c)


def wait(signal, offsets, expected=1, cmp=WaitCmp.Ge):
    c = k.current()
    k.window(c, "pld.system.wait", "signal", signal)
    st = lib.pld_ffi_wait(c.ptr, signal.ptr,
                          k.offs(c, "pld_wait", "offsets", offsets, signal.ndim), int(expected),
                          int(cmp))
    k.check(st, c)


def read(signal, offsets):
    """My cell's value now (pld_signal_read)."""
    c = k.current()
    k.window(c, "pld.system.read", "signal", signal)
    out = ctypes.c_int32()
    st = lib.pld_ffi_signal_read(c.ptr, signal.ptr,
                                 k.offs(c, "pld_signal_read", "offsets", offsets, signal.ndim),
                                 ctypes.byref(out))
    k.check(st, c)
    return out.value
