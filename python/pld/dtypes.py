# SPDX-License-Identifier: Apache-2.0
"""pld's element types and their numpy types (bf16 rows are their bit
patterns, uint16: numpy has no bfloat16)."""
import numpy as np

FP32, FP16, BF16, INT32, INT16, INT8, UINT8, INT64, FP64 = range(9)

_NP = {FP32: np.float32, FP16: np.float16, BF16: np.uint16, INT32: np.int32, INT16: np.int16,
       INT8: np.int8, UINT8: np.uint8, INT64: np.int64, FP64: np.float64}
_NAMES = {"fp32": FP32, "float32": FP32, "float": FP32, "fp16": FP16, "float16": FP16,
          "half": FP16, "bf16": BF16, "bfloat16": BF16, "int32": INT32, "int": INT32,
          "int16": INT16, "int8": INT8, "uint8": UINT8, "int64": INT64, "fp64": FP64,
          "float64": FP64, "double": FP64}
_FROM_NP = {np.dtype(np.float32): FP32, np.dtype(np.float16): FP16, np.dtype(np.int32): INT32,
            np.dtype(np.int16): INT16, np.dtype(np.int8): INT8, np.dtype(np.uint8): UINT8,
            np.dtype(np.int64): INT64, np.dtype(np.float64): FP64,
            np.dtype(np.uint16): BF16}


def code(dtype):
    """pld's dtype code for a name ("fp32"), a code, or a numpy dtype."""
    if isinstance(dtype, int) and dtype in _NP:
        return dtype
    if isinstance(dtype, str):
        if dtype.lower() in _NAMES:
            return _NAMES[dtype.lower()]
        raise ValueError(f"pld: unknown dtype '{dtype}' (fp32 fp16 bf16 int32 int16 int8 uint8 "
                         "int64 fp64)")
    try:
        return _FROM_NP[np.dtype(dtype)]
    except (TypeError, KeyError):
        raise ValueError(f"pld: no pld dtype for {dtype!r}") from None


def numpy_type(dtype):
    return _NP[code(dtype)]
