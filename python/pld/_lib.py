# SPDX-License-Identifier: Apache-2.0
"""The C library through ctypes: where it is, its structs and prototypes.

ctypes and not a compiled extension: the package then needs no compiler and
no Python headers, installs offline from Debian's packages, and loads the
same libpld.so the C programs use. Calls through `lib` release the GIL
(ctypes.CDLL), so rank threads block in waits without holding it; `lib_gil`
keeps it (below: which calls take which).
"""
import ctypes
import ctypes.util
import os

MAX_DIMS = 4


def _find():
    path = os.environ.get("PLD_LIBRARY")
    if path:
        return path
    here = os.path.dirname(os.path.abspath(__file__))
    # installed with the package; or this source tree's build (cmake -B build)
    for cand in (os.path.join(here, "libpld.so"), os.path.join(here, "libpld.so.0"),
                 os.path.join(here, "..", "..", "build", "src", "libpld.so")):
        if os.path.exists(cand):
            return os.path.normpath(cand)
    found = ctypes.util.find_library("pld")
    if found:
        return found
    raise ImportError(
        "pld: libpld.so not found: build pld (cmake) and set PLD_LIBRARY to its "
        "path, or install the package with the library (pip install ./python)")


_path = _find()
lib = ctypes.CDLL(_path)
# The same library, called with the GIL held: the process transport's launch,
# whose forked workers must start with the GIL they run the kernel under
# (the host thread only waits there; no rank thread needs the GIL)
lib_gil = ctypes.PyDLL(_path)


class CTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("ndim", ctypes.c_int),
                ("shape", ctypes.c_int64 * MAX_DIMS)]


class CDTensor(ctypes.Structure):
    _fields_ = [("buf", ctypes.c_void_p), ("dtype", ctypes.c_int), ("ndim", ctypes.c_int),
                ("shape", ctypes.c_int64 * MAX_DIMS)]


class CMoeLayout(ctypes.Structure):
    _fields_ = [("experts_per_rank", ctypes.c_int), ("max_rows", ctypes.c_int64)]


class CConfig(ctypes.Structure):
    _fields_ = [("platform", ctypes.c_char_p), ("transport", ctypes.c_char_p),
                ("devices", ctypes.c_char_p), ("wait_timeout_ms", ctypes.c_int),
                ("trace_path", ctypes.c_char_p), ("check", ctypes.c_uint), ("ir", ctypes.c_int),
                ("ir_svg", ctypes.c_char_p), ("fork_each_launch", ctypes.c_int)]


class CCounters(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in (
        "bytes_to_peers", "bytes_from_peers", "bytes_self", "notifies", "waits", "wait_ns",
        "urma_sqes", "urma_wqebbs", "urma_nops", "urma_doorbells", "urma_cqes", "merged_ranges",
        "self_stages", "transfers")]


KERNEL = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)

_P = ctypes.c_void_p
_I = ctypes.c_int
_I64 = ctypes.c_int64
# Tensors, windows, layouts and offset arrays go by address (an int): the
# cheapest argument for ctypes to convert, on every call of a kernel's loop.
_OFF = ctypes.c_void_p
_T = ctypes.c_void_p
_D = ctypes.c_void_p
_L = ctypes.c_void_p


def _proto(name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


# host side
_proto("pld_world_init", _I, ctypes.POINTER(_P), ctypes.POINTER(CConfig))
_proto("pld_config_from_args", _I, ctypes.POINTER(CConfig), ctypes.POINTER(_I),
       ctypes.POINTER(ctypes.POINTER(ctypes.c_char_p)))
_proto("pld_last_error", ctypes.c_char_p)
_proto("pld_world_finalize", None, _P)
_proto("pld_world_size", _I, _P)
_proto("pld_world_platform", ctypes.c_char_p, _P)
_proto("pld_world_transport", ctypes.c_char_p, _P)
_proto("pld_world_carriers", _I, _P)
_proto("pld_world_error", ctypes.c_char_p, _P)
_proto("pld_is_root_process", _I, _P)
_proto("pld_status_name", ctypes.c_char_p, _I)
_proto("pld_alloc_window_buffer", _I, _P, ctypes.c_size_t, ctypes.c_char_p, ctypes.POINTER(_P))
_proto("pld_window", _I, _P, _I, _I, ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(CDTensor))
_proto("pld_window_host_view", _I, _P, CDTensor, _I, ctypes.POINTER(CTensor))
_proto("pld_host_alloc", _P, _P, ctypes.c_size_t)
_proto("pld_host_free", None, _P, _P)
_proto("pld_launch", _I, _P, KERNEL, _P)
lib_gil.pld_launch.restype = _I
lib_gil.pld_launch.argtypes = [_P, KERNEL, _P]
_proto("pld_rank_counters", _I, _P, _I, ctypes.POINTER(CCounters))
_proto("pld_ir_text", ctypes.c_char_p, _P)
# teams
_proto("pld_team_split", _I, _P, _P, ctypes.POINTER(_I), ctypes.POINTER(_I), ctypes.c_char_p,
       ctypes.POINTER(_P))
_proto("pld_team_split_strided", _I, _P, _P, _I, _I, _I, ctypes.c_char_p, ctypes.POINTER(_P))
_proto("pld_team_split_2d", _I, _P, _P, _I, ctypes.c_char_p, ctypes.POINTER(_P), ctypes.c_char_p,
       ctypes.POINTER(_P))
_proto("pld_team_free", None, _P, _P)
_proto("pld_team_rank_of", _I, _P, _I)
_proto("pld_team_group_size", _I, _P, _I)
_proto("pld_team_ngroups", _I, _P)
_proto("pld_team_name", ctypes.c_char_p, _P)
_proto("pld_ffi_team_ctx", _I, _P, _P, ctypes.POINTER(_P))
# kernel side
_proto("pld_rank", _I, _P)
_proto("pld_nranks", _I, _P)
_proto("pld_local", CTensor, _P, CDTensor)
_proto("pld_ffi_error", ctypes.c_char_p, _P)
_proto("pld_ffi_fail", _I, _P, ctypes.c_char_p)
_proto("pld_ffi_raise", _I, _P, _I, ctypes.c_char_p, ctypes.c_char_p)
_proto("pld_ffi_notify", _I, _P, _D, _I, _OFF, ctypes.c_int32, _I)
_proto("pld_ffi_wait", _I, _P, _D, _OFF, ctypes.c_int32, _I)
_proto("pld_ffi_signal_read", _I, _P, _D, _OFF, ctypes.POINTER(ctypes.c_int32))
_proto("pld_ffi_remote_load", _I, _P, _P, _I64, _I64, _D, _I, _OFF)
_proto("pld_ffi_remote_store", _I, _P, _P, _I64, _I64, _D, _I, _OFF, _I)
_proto("pld_ffi_put", _I, _P, _D, _I, _T, _OFF, _OFF, _OFF, _I)
_proto("pld_ffi_get", _I, _P, _T, _I, _D, _OFF, _OFF, _OFF)
_proto("pld_ffi_barrier", _I, _P, _D)
_proto("pld_ffi_broadcast", _I, _P, _D, _D, _I)
_proto("pld_ffi_broadcast_with", _I, _P, _D, _D, _I, _I)
_proto("pld_ffi_allgather", _I, _P, _T, _D, _D)
_proto("pld_ffi_allgather_with", _I, _P, _T, _D, _D, _I)
_proto("pld_ffi_allgather_inplace", _I, _P, _D, _D)
_proto("pld_ffi_reduce_scatter", _I, _P, _D, _D, _I)
_proto("pld_ffi_allreduce", _I, _P, _D, _D, _I, _I, _I)
_proto("pld_ffi_all_to_all", _I, _P, _T, _D, _D)
_proto("pld_ffi_all_to_all_with", _I, _P, _T, _D, _D, _I)
_proto("pld_ffi_all_to_all_v", _I, _P, _T, _D, _D, _T, _D)
_proto("pld_ffi_indexed_all_to_all_v", _I, _P, _T, _D, _D, _D, _T, _T, _I)
_proto("pld_ffi_indexed_combine", _I, _P, _D, _T, _D, _D, _T, _T, _I)
_proto("pld_ffi_moe_dispatch", _I, _P, _L, _T, _D, _D, _T, _D, _T)
_proto("pld_ffi_moe_combine", _I, _P, _L, _D, _D, _D, _T, _D)


_offsets = {}


# GIL-holding twins of every pld_ffi_* call (lib_gil, with the same
# prototypes). On the thread transport the kernel-side modules take them for
# the calls that never wait for another rank (signal updates and reads,
# copies of at most HOLD_BYTES; not under the schedule explorer, which makes
# every transfer a turn that waits for the others): releasing the GIL for a
# call of a microsecond hands it to another rank thread and back, 3.5 us per
# read at P = 2 instead of 1. On the process transport every call keeps it:
# each worker has its own interpreter and no other thread that needs it.
HOLD_BYTES = 64 * 1024
for _name in [n for n in list(vars(lib)) if n.startswith("pld_ffi_")]:
    _fn = getattr(lib_gil, _name)
    _fn.restype = getattr(lib, _name).restype
    _fn.argtypes = getattr(lib, _name).argtypes


def offsets(values):
    """The address of an int64 array holding values, for an offsets or
    shape argument (None: NULL). The arrays are made once per distinct list
    and kept (read-only), so a kernel's loop does not build one per call."""
    if values is None:
        return None
    key = values if type(values) is tuple else tuple(values)
    hit = _offsets.get(key)
    if hit is None:
        if len(_offsets) > 65536:  # a kernel of many distinct offsets: start over
            _offsets.clear()
        arr = (ctypes.c_int64 * max(len(key), 1))(*[int(v) for v in key])
        hit = _offsets[key] = (ctypes.addressof(arr), arr)
    return hit[0]
