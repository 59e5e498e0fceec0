# SPDX-License-Identifier: Apache-2.0
"""The host side: a World of ranks, its window buffers (DistributedTensor),
per-rank plain tensors, and launch."""
import ctypes
import os
import re
import sys
import threading
import time
import traceback

import numpy as np

from . import dtypes
from ._lib import CConfig, CCounters, CDTensor, CTensor, KERNEL, MAX_DIMS, lib, lib_gil
from .errors import for_status, kernel_error

_tls = threading.local()


def _text(b):
    return b.decode(errors="replace") if b else ""


def _array_at(ptr, shape, dtype):
    """A zero-copy numpy view of memory at ptr."""
    nptype = dtypes.numpy_type(dtype)
    count = int(np.prod(shape)) if len(shape) else 1
    if count == 0 or not ptr:
        return np.zeros(shape, nptype)
    raw = (ctypes.c_char * (count * np.dtype(nptype).itemsize)).from_address(ptr)
    return np.frombuffer(raw, dtype=nptype, count=count).reshape(shape)


def _check_shape(shape, what):
    shape = tuple(int(s) for s in ([shape] if isinstance(shape, int) else shape))
    if not 1 <= len(shape) <= MAX_DIMS or any(s < 1 for s in shape):
        raise ValueError(f"pld: {what} shape {list(shape)} must have 1..{MAX_DIMS} extents >= 1")
    return shape


class DistributedTensor:
    """A typed, shaped view of a window buffer, the same on every rank. In a
    kernel it names every rank's slice; view(rank) on the host is a numpy
    array over that rank's slice (no copy)."""

    def __init__(self, world, c, shape, dtype, name):
        self.world, self._c, self.shape, self.dtype, self.name = world, c, shape, dtype, name
        self.ndim = len(shape)
        self.ptr = ctypes.addressof(c)  # what the kernel calls pass
        self.np_dtype = np.dtype(dtypes.numpy_type(dtype))

    def view_dtype(self):
        """The numpy type of its elements."""
        return self.np_dtype

    def view(self, rank):
        t = CTensor()
        st = lib.pld_window_host_view(self.world._w, self._c, int(rank), ctypes.byref(t))
        if st:
            raise for_status(st, _text(lib.pld_world_error(self.world._w)))
        return _array_at(t.data, self.shape, self.dtype)

    def __repr__(self):
        return f"DistributedTensor('{self.name}', {list(self.shape)}, dtype={self.dtype})"


class Tensor:
    """A plain tensor of the same shape on every rank, in host memory every
    rank can reach (also the forked workers of the process transport). In a
    kernel the argument is this rank's numpy array; view(rank) reads or
    fills it from the host."""

    def __init__(self, world, shape, dtype):
        self.world, self.shape, self.dtype = world, shape, dtype
        nptype = dtypes.numpy_type(dtype)
        self._each = int(np.prod(shape)) * np.dtype(nptype).itemsize
        self._base = lib.pld_host_alloc(world._w, self._each * world.size)
        if not self._base:
            raise for_status(5, f"pld: no host memory for a tensor of {list(shape)}")

    def view(self, rank):
        if not 0 <= rank < self.world.size:
            raise IndexError(f"pld: rank {rank} of {self.world.size}")
        return _array_at(self._base + rank * self._each, self.shape, self.dtype)


class Ctx:
    """One rank's view inside a kernel (pld.get_comm_ctx)."""

    def __init__(self, ptr, world):
        self.ptr = ptr
        self.world = world
        self.rank = lib.pld_rank(ptr)
        self.nranks = lib.pld_nranks(ptr)
        self.locals = {}
        self.tensors = {}  # id(array) -> (array, its pld tensor, the address)
        self.prepared = {}  # a call's key -> its checked arguments (pld.tile)
        # which library handle a call takes (_lib: lib_gil keeps the GIL)
        self.hold = world.hold_gil or world.transport == "process"  # short calls
        self.calls = lib_gil if world.transport == "process" else lib  # waiting calls

    def prepare(self, key, args):
        """Keeps a call's checked arguments (and, in them, its objects: an id
        in a key is never reused while they live)."""
        if len(self.prepared) > 4096:
            self.prepared.clear()
        self.prepared[key] = args

    def __enter__(self):
        """`with pld.team_ctx(team):` -- the calls inside speak for the team."""
        self._outer = getattr(_tls, "ctx", None)
        _tls.ctx = self
        return self

    def __exit__(self, *exc):
        _tls.ctx = self._outer

    def local(self, d):
        """My slice of DistributedTensor d, as a numpy view."""
        v = self.locals.get(id(d))
        if v is None:
            t = lib.pld_local(self.ptr, d._c)
            v = _array_at(t.data, d.shape, d.dtype)
            self.locals[id(d)] = v
        return v


def current():
    """The calling rank's Ctx; only inside a kernel."""
    try:
        c = _tls.ctx
    except AttributeError:  # a thread that never ran a kernel
        c = None
    if c is None:
        raise RuntimeError("pld: this call is made inside a kernel, under World.launch")
    return c


def check(st, c):
    """Raises the exception for a kernel call's status; the group is failed."""
    if st:
        e = for_status(st, _text(lib.pld_ffi_error(c.ptr)), c.rank)
        e.reported = True  # the library failed the group already
        raise e


class Team:
    """A split of the world (or of each group of a parent team) into groups
    of ranks: World.split, split_strided, split_2d. In a kernel,
    `with pld.team_ctx(team):` runs the calls inside in the rank's group:
    ranks, peers and signal shapes in group terms."""

    def __init__(self, world, ptr):
        self.world, self.ptr = world, ptr

    @property
    def name(self):
        return _text(lib.pld_team_name(self.ptr))

    @property
    def ngroups(self):
        return lib.pld_team_ngroups(self.ptr)

    def rank_of(self, world_rank):
        """world_rank's rank in its group; -1 in none."""
        return lib.pld_team_rank_of(self.ptr, int(world_rank))

    def group_size(self, world_rank):
        return lib.pld_team_group_size(self.ptr, int(world_rank))

    def free(self):
        if self.ptr:
            lib.pld_team_free(self.world._w, self.ptr)
            self.ptr = None


class World:
    """The ranks of a program and their transport.

    World() reads sys.argv as the C examples do (-p/--platform, -d/--device,
    --transport, --ir, --ir-svg) and leaves the rest in .args; keywords
    configure it instead: World(devices="0-3", transport="thread")."""

    def __init__(self, argv=None, *, platform=None, devices=None, transport=None, check=0,
                 ir=False, wait_timeout_ms=0):
        w = ctypes.c_void_p()
        # fork_each_launch: the process transport's workers are forked at
        # each launch, so they have the kernel the host defined since
        def enc(v):
            return None if v is None else str(v).encode()

        cfg = CConfig(platform=enc(platform), transport=enc(transport), devices=enc(devices),
                      check=check, ir=1 if ir else 0,
                      wait_timeout_ms=wait_timeout_ms, fork_each_launch=1)
        self.args = [sys.argv[0] if sys.argv else "python"]
        if argv is None and platform is None and devices is None and transport is None:
            argv = sys.argv
        if argv is not None:
            self._argv = [a.encode() for a in argv] or [b"python"]  # cfg points into these
            argc = ctypes.c_int(len(self._argv))
            arr = (ctypes.c_char_p * (len(self._argv) + 1))(*self._argv, None)
            argvp = ctypes.cast(arr, ctypes.POINTER(ctypes.c_char_p))
            st = lib.pld_config_from_args(ctypes.byref(cfg), ctypes.byref(argc),
                                          ctypes.byref(argvp))
            if st:
                raise for_status(st, _text(lib.pld_last_error()))
            self.args = [argvp[i].decode() for i in range(argc.value)]
        st = lib.pld_world_init(ctypes.byref(w), ctypes.byref(cfg))
        if st:
            raise for_status(st, _text(lib.pld_last_error()))
        self._w = w
        self.size = lib.pld_world_size(w)
        self.platform = _text(lib.pld_world_platform(w))
        self.transport = _text(lib.pld_world_transport(w))
        # PLD_FIBERS runs several ranks on one thread, switching between them
        # inside pld calls; the interpreter keeps one frame stack per thread,
        # which the ranks' kernels would then interleave
        carriers = lib.pld_world_carriers(w)
        if carriers > 0:
            fibers = os.environ.get("PLD_FIBERS", "")
            lib.pld_world_finalize(w)
            raise for_status(4, f"pld.World: PLD_FIBERS={fibers} runs several ranks on one "
                                "thread, switching between them inside pld calls, and Python "
                                "keeps one interpreter state per thread, which their kernels "
                                "would share; unset PLD_FIBERS (or use transport='process')")
        self._names = 0
        self._keep = []
        # the schedule explorer (PLD_SCHED, read by the library at init as
        # here) makes every transfer a turn that waits for the others: then
        # no call may keep the GIL
        self.hold_gil = not os.environ.get("PLD_SCHED")
        # rank threads still in a kernel's Python code: a launch that failed
        # (a timeout) returns without them, and finalize must not free the
        # world under them (thread transport; a worker process is killed)
        self._inside = set()
        self._inside_lock = threading.Lock()

    def _name(self, name, what):
        self._names += 1
        return name or f"{what}{self._names}"

    def window(self, shape, dtype="fp32", name=None):
        """A window buffer viewed as a DistributedTensor of shape and dtype."""
        shape = _check_shape(shape, "window")
        code = dtypes.code(dtype)
        name = self._name(name, "window")
        nbytes = int(np.prod(shape)) * np.dtype(dtypes.numpy_type(code)).itemsize
        buf = ctypes.c_void_p()
        st = lib.pld_alloc_window_buffer(self._w, nbytes, name.encode(), ctypes.byref(buf))
        if st:
            raise for_status(st, _text(lib.pld_world_error(self._w)))
        c = CDTensor()
        dims = (ctypes.c_int64 * len(shape))(*shape)
        st = lib.pld_window(buf, code, len(shape), dims, ctypes.byref(c))
        if st:
            raise for_status(st, _text(lib.pld_world_error(self._w)))
        return DistributedTensor(self, c, shape, code, name)

    def signal(self, shape, name=None):
        """An INT32 window for signals: [P, 1] for a builtin's credits."""
        return self.window(shape, "int32", name or self._name(None, "signal"))

    def tensor(self, shape, dtype="fp32"):
        """A plain tensor per rank (see Tensor), zeroed."""
        return Tensor(self, _check_shape(shape, "tensor"), dtypes.code(dtype))

    def _team(self, st, out):
        if st:
            raise for_status(st, _text(lib.pld_world_error(self._w)))
        return Team(self, out.value)

    def split(self, color, key=None, name=None, parent=None):
        """Groups of the ranks with equal color[r] (None: in no group),
        ordered by key[r] then rank, in each group of parent (None: the world)."""
        n = self.size
        if len(color) != n or (key is not None and len(key) != n):
            raise ValueError(f"pld: split needs a color (and key) for each of the {n} ranks")
        col = (ctypes.c_int * n)(*[-1 if c is None else int(c) for c in color])
        keys = (ctypes.c_int * n)(*[int(k) for k in key]) if key is not None else None
        out = ctypes.c_void_p()
        return self._team(lib.pld_team_split(self._w, parent and parent.ptr, col, keys,
                                              name and name.encode(), ctypes.byref(out)), out)

    def split_strided(self, start, stride, size, name=None, parent=None):
        out = ctypes.c_void_p()
        return self._team(lib.pld_team_split_strided(self._w, parent and parent.ptr, int(start),
                                                      int(stride), int(size),
                                                      name and name.encode(), ctypes.byref(out)),
                          out)

    def split_2d(self, xrange, xname=None, yname=None, parent=None):
        """(x, y): rows of xrange consecutive ranks, and the columns."""
        x, y = ctypes.c_void_p(), ctypes.c_void_p()
        st = lib.pld_team_split_2d(self._w, parent and parent.ptr, int(xrange),
                                   xname and xname.encode(), ctypes.byref(x),
                                   yname and yname.encode(), ctypes.byref(y))
        return self._team(st, x), Team(self, y.value)

    @property
    def is_root(self):
        """True in the one process that prints results (the host)."""
        return bool(lib.pld_is_root_process(self._w))

    def counters(self, rank):
        """A rank's counters of the last launch, as a dict."""
        k = CCounters()
        st = lib.pld_rank_counters(self._w, rank, ctypes.byref(k))
        if st:
            raise for_status(st, _text(lib.pld_world_error(self._w)))
        return {name: getattr(k, name) for name, _ in CCounters._fields_}

    def ir_text(self):
        return _text(lib.pld_ir_text(self._w))

    def launch(self, kernel, *args):
        """Runs kernel(*args) on every rank and returns when all are done.
        A Tensor argument becomes the rank's own numpy array. An error in any
        rank fails the group and is raised here (pld.Error subclasses; a
        Python exception in a kernel as pld.KernelError with its rank and
        traceback, chained to the exception itself on the thread transport)."""
        failures = {}

        def trampoline(cptr, _arg):
            c = Ctx(cptr, self)
            _tls.ctx = c
            with self._inside_lock:
                self._inside.add(c.rank)
            try:
                kernel(*[a.view(c.rank) if isinstance(a, Tensor) else a for a in args])
            except BaseException as e:  # noqa: B902 -- every failure must reach the group
                if not getattr(e, "reported", False):
                    failures[c.rank] = e
                    tb = traceback.format_exc()
                    lib.pld_ffi_fail(cptr, f"python: {type(e).__name__}: {e}\n{tb}".encode())
            finally:
                _tls.ctx = None
                with self._inside_lock:
                    self._inside.discard(c.rank)

        cb = KERNEL(trampoline)
        self._keep.append(cb)  # the callback outlives nothing it may still be running
        launch = lib_gil.pld_launch if self.transport == "process" else lib.pld_launch
        st = launch(self._w, cb, None)
        self._keep.remove(cb)
        if st:
            msg = _text(lib.pld_world_error(self._w))
            if failures:
                rank = min(failures)
                cause = failures[rank]
                raise kernel_error(msg, rank, type(cause).__name__, cause) from cause
            m = re.match(r"rank (\d+) .*?: pld_fail: python: (\w+): ", msg)
            if m:  # raised in a forked worker: only its message came back
                raise kernel_error(msg, int(m.group(1)), m.group(2))
            raise for_status(st, msg)

    def finalize(self):
        """Frees the world. A rank thread still in its kernel's Python code
        (a launch that timed out without it) is waited for first: the world
        must outlive it."""
        if not getattr(self, "_w", None):
            return
        told = False
        t0 = time.monotonic()
        while True:
            with self._inside_lock:
                left = sorted(self._inside)
            if not left:
                break
            if not told and time.monotonic() - t0 > 2:
                print(f"pld: World.finalize waits for rank(s) {left}, still in their kernel's "
                      "Python code after the launch failed", file=sys.stderr)
                told = True
            time.sleep(0.01)
        lib.pld_world_finalize(self._w)
        self._w = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.finalize()
