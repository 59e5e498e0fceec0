# SPDX-License-Identifier: Apache-2.0
"""Every pld_status as an exception class carrying the library's message."""


class Error(Exception):
    """A pld call failed; .status is the pld_status name, str() the message."""
    status = "PLD_ERR"
    code = -1

    def __init__(self, message, rank=None):
        super().__init__(message)
        self.message = message
        self.rank = rank

    def __str__(self):  # the message itself, also where a builtin base has its own __str__
        return self.message


def _cls(name, status, code, doc):
    return type(name, (Error,), {"status": status, "code": code, "__doc__": doc})


ArgError = _cls("ArgError", "PLD_ERR_ARG", 1, "a bad argument: shape, dtype, offsets")
BoundsError = _cls("BoundsError", "PLD_ERR_BOUNDS", 2, "a region outside its tensor or window")
AliasError = _cls("AliasError", "PLD_ERR_ALIAS", 3, "buffers that must be distinct are one")
UnsupportedError = _cls("UnsupportedError", "PLD_ERR_UNSUPPORTED", 4,
                        "an op, dtype, platform or transport not supported")
NoMemError = _cls("NoMemError", "PLD_ERR_NOMEM", 5, "host, window or UB memory exhausted")
DeadlockError = _cls("DeadlockError", "PLD_ERR_DEADLOCK", 6, "every live rank is blocked")
TimeoutError = _cls("TimeoutError", "PLD_ERR_TIMEOUT", 7, "one wait exceeded the wait timeout")
PeerError = _cls("PeerError", "PLD_ERR_PEER", 8, "another rank failed; this one was aborted")
DataError = _cls("DataError", "PLD_ERR_DATA", 9, "a data precondition failed (counts, indices)")
RaceError = _cls("RaceError", "PLD_ERR_RACE", 10, "the race checker found an unordered access")
CheckError = _cls("CheckError", "PLD_ERR_CHECK", 11,
                  "a kernel reported a failed check (pld_fail, or a Python exception)")
SystemError = _cls("SystemError", "PLD_ERR_SYSTEM", 12, "an OS or MPI call failed")

BY_CODE = {c.code: c for c in (ArgError, BoundsError, AliasError, UnsupportedError, NoMemError,
                               DeadlockError, TimeoutError, PeerError, DataError, RaceError,
                               CheckError, SystemError)}


def for_status(code, message, rank=None):
    """The exception for a nonzero pld_status."""
    return BY_CODE.get(code, Error)(message, rank)


class KernelError(CheckError):
    """A Python exception in a kernel: it failed the group like pld_fail, and
    launch raises this, naming the rank, with the kernel's traceback."""


def kernel_error(message, rank, exc_name, cause=None):
    """The KernelError launch raises for a Python exception in a kernel: also
    an instance of the exception's own builtin class (TypeError, ...) when it
    had one, so `except TypeError` works on every transport (the process
    transport only has the class's name)."""
    import builtins
    base = type(cause) if cause is not None else getattr(builtins, exc_name or "", None)
    if isinstance(base, type) and issubclass(base, Exception) and base.__module__ == "builtins":
        try:
            cls = type(f"Kernel{base.__name__}", (KernelError, base), {})
            return cls(message, rank)
        except TypeError:  # a builtin whose layout cannot be mixed in
            pass
    return KernelError(message, rank)
