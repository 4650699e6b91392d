"""bfloat16 on the host, for numpy, which has no bfloat16 type: values are kept as
their bit patterns in uint16 arrays (what a "bfloat16" vkattn.Tensor takes and
returns). The conversions are the library's (src/core/bf16.c): bf16 -> f32 is
exact (the bits shifted up); f32 -> bf16 rounds to nearest even, overflows to
+-inf, and keeps a NaN a quiet NaN with its sign and top payload bits."""
import numpy as np


def to_float32(bits):
    """The float32 values of bfloat16 bit patterns (a uint16 array), exactly."""
    b = np.asarray(bits)
    if b.dtype != np.uint16:
        raise TypeError("bfloat16.to_float32: bits must be a uint16 array; got %s" % b.dtype)
    return (b.astype(np.uint32).reshape(b.shape or (1,)) << 16).view(np.float32).reshape(b.shape)


def from_float32(values):
    """The bfloat16 bit patterns (uint16) of values, each rounded once from float32
    to nearest even (values that are not float32 are converted to it first)."""
    x = np.asarray(values, dtype=np.float32)
    u = np.ascontiguousarray(x).view(np.uint32).reshape(x.shape)  # 0-d stays 0-d
    rounded = ((u + np.uint32(0x7FFF) + ((u >> 16) & np.uint32(1))) >> 16).astype(np.uint16)
    quiet = ((u >> 16) | np.uint32(0x40)).astype(np.uint16)
    return np.where(np.isnan(x), quiet, rounded)
