# SPDX-License-Identifier: Apache-2.0
"""Every pld error class, raised by World.launch (or World()) with the C
library's message; Python exceptions in kernels as pld.KernelError."""
import re
import threading
import time

import numpy as np
import pytest

import pld
from pld import pl
from pld._lib import lib

from conftest import devices

RANK = r"rank \d \(device \d\)"


# ---- the status classes --------------------------------------------------


def test_error_classes_map_the_status_codes():
    want = {"ArgError": ("PLD_ERR_ARG", 1), "BoundsError": ("PLD_ERR_BOUNDS", 2),
            "AliasError": ("PLD_ERR_ALIAS", 3), "UnsupportedError": ("PLD_ERR_UNSUPPORTED", 4),
            "NoMemError": ("PLD_ERR_NOMEM", 5), "DeadlockError": ("PLD_ERR_DEADLOCK", 6),
            "TimeoutError": ("PLD_ERR_TIMEOUT", 7), "PeerError": ("PLD_ERR_PEER", 8),
            "DataError": ("PLD_ERR_DATA", 9), "RaceError": ("PLD_ERR_RACE", 10),
            "CheckError": ("PLD_ERR_CHECK", 11), "SystemError": ("PLD_ERR_SYSTEM", 12)}
    for name, (status, code) in want.items():
        cls = getattr(pld, name)
        assert issubclass(cls, pld.Error), name
        assert (cls.status, cls.code) == (status, code), name
        # the C library's own name of the code
        assert lib.pld_status_name(code).decode() == status, name
    assert issubclass(pld.KernelError, pld.CheckError)


# ---- library errors, raised by launch ------------------------------------


def test_arg_error_offsets_of_wrong_length(make_world, transport):
    w = make_world("0,1", transport)
    data = w.window([2, 4], "fp32", "data")

    def kernel(data):
        pld.tile.remote_load(data, 0, [0], [1, 4])  # one offset for a 2-D window

    with pytest.raises(pld.ArgError) as ei:
        w.launch(kernel, data)
    assert re.search(RANK + r": pld_remote_load: offsets has 1 entries \[0\]; "
                     r"the tensor has 2 dimensions", str(ei.value)), str(ei.value)
    assert type(ei.value) is pld.ArgError


def test_bounds_error_region_outside_window(make_world, transport):
    w = make_world("0,1", transport)
    data = w.window([2, 4], "fp32", "data")

    def kernel(data):
        pld.tile.remote_load(data, 1, [2, 0], [1, 4])

    with pytest.raises(pld.BoundsError) as ei:
        w.launch(kernel, data)
    msg = str(ei.value)
    assert "is outside window" in msg
    assert re.search(RANK + r": pld_remote_load: src region \[2,0\]\+\[1,4\] is outside "
                     r"window 'data' \[2,4\]", msg), msg


def test_bounds_error_put_region(make_world, transport):
    w = make_world("0,1", transport)
    data = w.window([2, 4], "int32", "data")
    src = w.tensor([2, 4], "int32")

    def kernel(src):
        pld.tile.put(data, 0, src, dst_offsets=[1, 2], src_offsets=[0, 0], shape=[2, 2])

    with pytest.raises(pld.BoundsError, match="is outside window 'data'"):
        w.launch(kernel, src)


def test_alias_error_recv_counts_is_target(make_world, transport):
    """all_to_all_v whose recv_counts window is its target (shaped so that
    every shape check passes: M = 1, S = 1, int32)."""
    P = 2
    w = make_world(devices(P), transport)
    x = w.tensor([P, 1], "int32")
    send = w.tensor([P], "int32")
    target = w.window([P, 1], "int32", "target")
    sig = w.signal([P, 1], "sig")

    def kernel(x, send):
        pld.tensor.all_to_all_v(x, target, sig, send, target)

    with pytest.raises(pld.AliasError) as ei:
        w.launch(kernel, x, send)
    assert re.search(RANK + r": pld_all_to_all_v: signal 'sig', recv_counts 'target' and "
                     r"target 'target' must be distinct windows", str(ei.value)), str(ei.value)


def test_alias_error_allreduce_data_is_signal(make_world, transport):
    w = make_world("0,1", transport)
    both = w.window([2, 1], "int32", "both")

    def kernel():
        pld.tensor.allreduce(both, both)

    with pytest.raises(pld.AliasError,
                       match=r"pld_allreduce: data and signal are the same window 'both'"):
        w.launch(kernel)


def test_unsupported_indexed_on_a2a3sim(make_world, transport):
    P, C = 2, 2
    w = make_world(devices(P), transport)  # the default platform
    assert w.platform == "a2a3sim"
    x = w.tensor([4, 4], "fp32")
    rc = w.tensor([P, 1], "int32")
    ix = w.tensor([P, C], "int32")
    t = w.window([P * C, 4], "fp32", "target")
    sc = w.window([P, 1], "int32", "send_counts")
    sig = w.signal([P, 1], "sig")

    def kernel(x, rc, ix):
        pld.tensor.indexed_all_to_all_v(x, t, sig, sc, rc, ix)

    with pytest.raises(pld.UnsupportedError) as ei:
        w.launch(kernel, x, rc, ix)
    assert re.search(RANK + r": pld_indexed_all_to_all_v: needs the a5sim URMA model; this "
                     r"world runs the 'a2a3sim' profile", str(ei.value)), str(ei.value)


def test_nomem_remote_load_larger_than_ub(make_world, transport):
    w = make_world("0,1", transport)
    big = w.window([64, 1024], "fp32", "big")  # 256 KiB > the 192 KiB UB budget

    def kernel():
        pld.tile.remote_load(big, 0, [0, 0], [64, 1024])

    with pytest.raises(pld.NoMemError) as ei:
        w.launch(kernel)
    assert re.search(RANK + r": pld_tile_create: tile fp32 \[64,1024\] needs 262144 bytes but "
                     r"only \d+ of the UB budget \d+ are free", str(ei.value)), str(ei.value)


def test_deadlock_every_rank_waits(make_world, transport):
    w = make_world("0,1", transport)
    sig = w.signal([2, 1], "sig")

    def kernel():
        pld.system.wait(sig, [0, 0], 1)

    t0 = time.monotonic()
    with pytest.raises(pld.DeadlockError) as ei:
        w.launch(kernel)
    assert time.monotonic() - t0 < 30  # the detector, not the 60 s wait timeout
    msg = str(ei.value)
    assert msg.startswith("deadlock: all 2 live ranks are blocked in pld_wait and no pending "
                          "notify can release them"), msg
    for r in range(2):
        assert f"rank {r} (device {r}): pld_wait 'sig'[0,0] Ge 1 (current 0)" in msg, msg


def test_timeout_one_rank_sleeps(make_world, transport):
    """wait_timeout_ms=100; rank 1 sleeps 1 s in Python while rank 0 waits."""
    w = make_world("0,1", transport, wait_timeout_ms=100)
    sig = w.signal([2, 1], "sig")
    back = w.tensor([1], "int32")  # rank 1 marks that it came back from its sleep
    back_evt = threading.Event()  # the same, for the thread transport's host

    def kernel(back):
        if pld.rank() == 1:
            time.sleep(1.0)
            back[0] = 1
            back_evt.set()
        else:
            pld.system.wait(sig, [0, 0], 1)

    t0 = time.monotonic()
    with pytest.raises(pld.TimeoutError) as ei:
        w.launch(kernel, back)
    dt = time.monotonic() - t0
    msg = str(ei.value)
    assert re.search(r"rank 0 \(device 0\): pld_wait: 'sig'\[0,0\] Ge 1 timed out after 100 ms "
                     r"\(current 0\)", msg), msg
    assert dt < 10, dt
    if transport == "thread":
        # the sleeping rank outlived the grace period: a thread cannot be
        # stopped, the world is unusable; it must be back before finalize
        assert "rank 1 (device 1) did not return from its kernel" in msg, msg
        assert back_evt.wait(10), "rank 1 never came back from its sleep"
        time.sleep(0.5)  # from the kernel back into the library's rank loop
    else:
        # the process transport killed and replaced the sleeping worker
        assert back.view(1)[0] == 0


def test_data_error_moe_count_above_max_rows(make_world, transport):
    P, E, M, H = 2, 1, 2, 4
    rows = P * E * M
    w = make_world(devices(P), transport)
    layout = pld.tensor.MoeLayout(E, M)
    x = w.tensor([rows, H], "fp32")
    send = w.tensor([P, E], "int32")
    offs = w.tensor([E + 1], "int32")
    target = w.window([rows, H], "fp32", "target")
    recv = w.window([P, E], "int32", "recv_counts")
    sig = w.signal([P, 1], "sig")
    send.view(1)[1, 0] = M + 1  # rank 1 sends 3 rows to its own expert 0; M = 2

    def kernel(x, send, offs):
        pld.tensor.moe_dispatch(layout, x, target, sig, send, recv, offs)

    with pytest.raises(pld.DataError) as ei:
        w.launch(kernel, x, send, offs)
    assert ("rank 1 (device 1): pld_moe_dispatch: send_counts[1][0] = 3 (rows for expert 0 "
            "of rank 1) is outside [0, M=2]") in str(ei.value), str(ei.value)


def test_race_error_two_unordered_writes():
    """PLD_CHECK_RACE (thread transport only): both ranks write cell [0,0]
    of rank 0's window with nothing ordering them."""
    w = pld.World(devices="0,1", transport="thread", platform="a2a3sim", check=0x2)
    try:
        data = w.window([2, 8], "fp32", "data")

        def kernel():
            pld.tile.remote_store(np.ones((1, 8), np.float32), data, 0, [0, 0])

        with pytest.raises(pld.RaceError) as ei:
            w.launch(kernel)
        msg = str(ei.value)
        assert "races with rank" in msg and "'data'" in msg, msg
        assert "no notify/wait orders them" in msg, msg
    finally:
        w.finalize()


def test_race_checker_quiet_when_ordered():
    """The control: the same writes ordered by notify -> wait pass."""
    w = pld.World(devices="0,1", transport="thread", platform="a2a3sim", check=0x2)
    try:
        data = w.window([2, 8], "fp32", "data")
        sig = w.signal([1], "sig")

        def kernel():
            me = pld.rank()
            if me == 1:
                pld.system.wait(sig, [0], 1)
            pld.tile.remote_store(np.full((1, 8), me + 1, np.float32), data, 0, [0, 0])
            if me == 0:
                pld.system.notify(sig, 1, [0], 1)

        w.launch(kernel)
        np.testing.assert_array_equal(data.view(0)[0], np.full(8, 2, np.float32))
    finally:
        w.finalize()


def test_race_checker_is_thread_only():
    with pytest.raises(pld.UnsupportedError, match="the race checker .* runs on the thread "
                                                   "transport, not 'process'"):
        pld.World(devices="0,1", transport="process", platform="a2a3sim", check=0x2)


# ---- PeerError: seen inside the kernel by the rank that did not fail -----


def test_peer_error_seen_by_the_other_rank(make_world, transport):
    """Rank 1 raises; rank 0, blocked in a wait, is released with
    pld.PeerError: it records the class it caught, then re-raises. launch
    raises the root cause, rank 1's exception."""
    w = make_world("0,1", transport)
    sig = w.signal([2, 1], "sig")
    seen = w.tensor([1], "int32")  # the code of the class rank 0 caught (-1: none)
    seen.view(0)[0] = -1
    classes = []  # the thread transport's ranks share this list with the host

    def kernel(seen):
        if pld.rank() == 1:
            time.sleep(0.05)  # rank 0 is in its wait by now (or enters it failed)
            raise RuntimeError("rank one gives up")
        try:
            pld.system.wait(sig, [0, 0], 1)  # released by the group's failure
        except pld.Error as e:
            seen[0] = type(e).code
            classes.append(type(e))
            raise
        seen[0] = 0  # the wait returned: wrong

    with pytest.raises(RuntimeError) as ei:
        w.launch(kernel, seen)
    e = ei.value
    # the root cause is rank 1's exception, not rank 0's PeerError
    assert isinstance(e, pld.KernelError) and e.rank == 1
    assert "rank 1 (device 1): pld_fail: python: RuntimeError: rank one gives up" in str(e)
    assert seen.view(0)[0] == pld.PeerError.code
    if transport == "thread":
        assert classes == [pld.PeerError]


# ---- Python exceptions in a kernel ---------------------------------------


def test_kernel_exception(make_world, transport):
    w = make_world("0,1,2", transport)

    def kernel():
        if pld.rank() == 2:
            raise ValueError("bad value 42")

    with pytest.raises(pld.KernelError) as ei:
        w.launch(kernel)
    e = ei.value
    msg = str(e)
    assert isinstance(e, pld.CheckError) and isinstance(e, pld.Error)
    assert isinstance(e, ValueError)  # `except ValueError` catches it too
    assert e.rank == 2
    assert msg.startswith("rank 2 (device 2): pld_fail: python: ValueError: bad value 42"), msg
    assert "Traceback (most recent call last):" in msg, msg
    assert 'raise ValueError("bad value 42")' in msg, msg
    assert "in kernel" in msg, msg
    if transport == "thread":
        assert isinstance(e.__cause__, ValueError) and type(e.__cause__) is ValueError
        assert str(e.__cause__) == "bad value 42"


def test_kernel_exception_caught_as_builtin_class(make_world, transport):
    w = make_world("0,1", transport)

    def kernel():
        if pld.rank() == 0:
            {}["missing key"]

    try:
        w.launch(kernel)
    except KeyError as e:
        assert isinstance(e, pld.KernelError) and e.rank == 0
        assert e.message.startswith("rank 0 (device 0): pld_fail: python: KeyError: "
                                    "'missing key'\nTraceback"), e.message
    else:
        pytest.fail("no KeyError")


def test_kernel_keyerror_str_is_the_message(make_world):
    w = make_world("0,1")

    def kernel():
        {}["missing key"]

    with pytest.raises(KeyError) as ei:
        w.launch(kernel)
    assert str(ei.value) == ei.value.message


def test_kernel_exception_of_user_class(make_world, transport):
    """A class that is not a builtin: a plain KernelError (a CheckError)."""
    class Mine(Exception):
        pass

    w = make_world("0,1", transport)

    def kernel():
        if pld.rank() == 1:
            raise Mine("my own")

    with pytest.raises(pld.KernelError, match=r"python: Mine: my own") as ei:
        w.launch(kernel)
    assert ei.value.rank == 1
    if transport == "thread":
        assert isinstance(ei.value.__cause__, Mine)


def test_allgather_window_as_local_is_type_error(make_world, transport):
    P = 2
    w = make_world(devices(P), transport)
    src = w.window([1, 8], "fp32", "src")
    target = w.window([P, 8], "fp32", "target")
    sig = w.signal([P, 1], "sig")

    def kernel():
        pld.tensor.allgather(src, target, sig)

    with pytest.raises(TypeError, match="pld.tensor.allgather local_data must be a plain "
                                        "Tensor") as ei:
        w.launch(kernel)
    assert isinstance(ei.value, pld.KernelError)


def test_allgather_tile_as_local_is_type_error(make_world, transport):
    P = 2
    w = make_world(devices(P), transport)
    x = w.tensor([1, 8], "fp32")
    target = w.window([P, 8], "fp32", "target")
    sig = w.signal([P, 1], "sig")

    def kernel(x):
        tile = pl.load(x, [0, 0], [1, 8])
        pld.tensor.allgather(tile, target, sig)

    with pytest.raises(TypeError, match="pld.tensor.allgather input must be a Tensor or "
                                        "DistributedTensor") as ei:
        w.launch(kernel, x)
    assert isinstance(ei.value, pld.KernelError)


def test_world_usable_after_a_failed_launch(make_world, transport):
    """After an error the world runs the next launch (signals of the
    interrupted builtin are cleared)."""
    P = 2
    w = make_world(devices(P), transport)
    x = w.tensor([1, 4], "int32")
    target = w.window([P, 4], "int32", "target")
    sig = w.signal([P, 1], "sig")
    for r in range(P):
        x.view(r)[0] = r + 1

    def bad(x):
        if pld.rank() == 0:
            pld.tile.remote_load(target, 0, [5, 0], [1, 4])
        pld.tensor.allgather(x, target, sig)

    with pytest.raises(pld.BoundsError):
        w.launch(bad, x)

    def good(x):
        pld.tensor.allgather(x, target, sig)

    w.launch(good, x)
    for r in range(P):
        np.testing.assert_array_equal(target.view(r), [[1] * 4, [2] * 4])


# ---- host-side errors ----------------------------------------------------


@pytest.mark.parametrize("bad,words", [
    ("0,0", "device 0 appears twice in '0,0'"),
    ("3-1", "device range '3-1' in '3-1' is descending"),
    ("a", "bad device list 'a'"),
])
def test_bad_device_list_is_arg_error(bad, words):
    with pytest.raises(pld.ArgError) as ei:
        pld.World(devices=bad, transport="thread", platform="a2a3sim")
    assert str(ei.value) == f"pld_world_init: {words}" or words in str(ei.value), str(ei.value)
    assert str(ei.value).startswith("pld_world_init: ")


def test_unknown_platform_is_arg_error():
    with pytest.raises(pld.ArgError, match="pld_world_init"):
        pld.World(devices="0,1", transport="thread", platform="nosuchsim")


def test_unknown_dtype_is_value_error(make_world):
    w = make_world()
    with pytest.raises(ValueError, match=r"pld: unknown dtype 'fp8'"):
        w.window([2, 2], "fp8")
    with pytest.raises(ValueError, match=r"pld: unknown dtype 'complex'"):
        w.tensor([2], "complex")
    with pytest.raises(ValueError, match=r"pld: no pld dtype for"):
        w.tensor([2], np.complex64)


def test_world_reads_argv():
    w = pld.World(["prog", "-d", "0-2", "--transport", "process", "--mode", "hand"])
    try:
        assert (w.size, w.transport, w.platform) == (3, "process", "a2a3sim")
        assert w.args == ["prog", "--mode", "hand"]
        assert w.is_root
    finally:
        w.finalize()


def test_world_argv_option_without_value():
    with pytest.raises(pld.ArgError, match="option -p needs a value"):
        pld.World(["prog", "-p"])


def test_counters_of_a_rank_out_of_range(make_world):
    w = make_world("0,1")
    with pytest.raises(pld.ArgError,
                       match=r"pld_rank_counters: rank 5 is not a rank of this world \[0,2\)"):
        w.counters(5)


# ---- edges the package once got wrong ----------------------------------------


def test_empty_device_list_is_arg_error():
    with pytest.raises(pld.ArgError):
        pld.World(devices="", transport="thread", platform="a2a3sim")


def test_remote_load_3d_region(make_world):
    w = make_world("0,1")
    d3 = w.window([2, 3, 4], "int32", "d3")
    out = w.tensor([2, 3, 4], "int32")
    for r in range(2):
        d3.view(r)[...] = 100 * r + np.arange(24, dtype=np.int32).reshape(2, 3, 4)

    def kernel(out):
        out[...] = pld.tile.remote_load(d3, 1, [0, 0, 0], [2, 3, 4]).reshape(2, 3, 4)

    w.launch(kernel, out)
    np.testing.assert_array_equal(out.view(0), d3.view(1))


def test_remote_load_3d_slab(make_world):
    """The control of the test above: a region of leading extent 1 works."""
    w = make_world("0,1")
    d3 = w.window([2, 3, 4], "int32", "d3")
    out = w.tensor([3, 4], "int32")
    for r in range(2):
        d3.view(r)[...] = 100 * r + np.arange(24, dtype=np.int32).reshape(2, 3, 4)

    def kernel(out):
        out[...] = pld.tile.remote_load(d3, 1, [1, 0, 0], [1, 3, 4])

    w.launch(kernel, out)
    np.testing.assert_array_equal(out.view(0), d3.view(1)[1])


def test_allgather_inplace_plain_tensor_is_type_error(make_world):
    w = make_world("0,1")
    x = w.tensor([2, 4], "fp32")
    sig = w.signal([2, 1], "sig")

    def kernel(x):
        pld.tensor.allgather_inplace(x, sig)

    with pytest.raises(TypeError, match="pld.tensor.allgather_inplace"):
        w.launch(kernel, x)


STUCK_THEN_FINALIZE = """
import time, pld
w = pld.World(devices="0,1", transport="thread", platform="a2a3sim", wait_timeout_ms=100)
s = w.signal([2, 1])
def k():
    if pld.rank() == 1:
        time.sleep(1)
    else:
        pld.system.wait(s, [0, 0], 1)
try:
    w.launch(k)
except pld.TimeoutError:
    pass
w.finalize()
time.sleep(1.5)
print("survived")
"""


def test_finalize_after_stuck_rank_does_not_crash():
    import os
    import subprocess
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(root, "python")] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    p = subprocess.run(["/usr/bin/python3", "-c", STUCK_THEN_FINALIZE], capture_output=True,
                       text=True, timeout=60, env=env)
    assert p.returncode == 0 and p.stdout == "survived\n", (p.returncode, p.stdout, p.stderr)


def test_fibers_are_refused_for_python_kernels(monkeypatch, make_world):
    """PLD_FIBERS would run several ranks' Python kernels on one thread,
    which has one interpreter state: World() refuses it on the thread
    transport and names the way out; the process transport ignores it."""
    monkeypatch.setenv("PLD_FIBERS", "2")
    with pytest.raises(pld.UnsupportedError) as ei:
        pld.World(devices="0-3", transport="thread")
    assert "PLD_FIBERS=2" in str(ei.value) and "unset PLD_FIBERS" in str(ei.value)
    monkeypatch.setenv("PLD_FIBERS", "00")  # zero: a thread per rank, accepted
    make_world("0,1", "thread")
    monkeypatch.setenv("PLD_FIBERS", "2")
    w = make_world("0,1", "process")
    sig = w.signal([2, 1], "sig")
    w.launch(lambda: pld.tensor.barrier(sig))
