"""vkattn: attention layers with Keras semantics, run as Vulkan compute shaders.

    import numpy as np, vkattn
    with vkattn.Context() as ctx:
        mha = vkattn.MultiHeadAttention(num_heads=2, key_dim=8, context=ctx)
        out = mha(query, value)            # float32 numpy arrays in and out

A thin layer over libvkattn (found via $VKATTN_LIBRARY, the install, the build
tree, then the system loader; see docs/PYTHON.md). Failures raise vkattn.Error
(one subclass per result code) with the library's message.
"""
from ._lib import path as library_path
from ._lib import version as __version__
from .context import Context, Device, default_context, devices, library_version, profiles
from .errors import (DeviceLimitError, DeviceLostError, Error, InvalidArgumentError,
                     NoDeviceError, NotReadyError, NoVulkanError, OutOfDeviceMemoryError,
                     OutOfHostMemoryError, SizeOverflowError, UnsupportedError, VulkanError)
from .layers import (AdditiveAttention, Attention, BahdanauAttention, GroupedQueryAttention,
                     GroupQueryAttention, MultiHeadAttention)
from .sdpa import sdpa
from .tensor import Tensor
from .kv_cache import KVCache, sdpa_decode
from .sdpa_backward import sdpa_backward
from .optim import SGD, Adam, AdamW
from . import bfloat16, reference

__all__ = [
    "AdditiveAttention", "Attention", "BahdanauAttention", "Context", "Device",
    "DeviceLimitError", "DeviceLostError", "Error", "GroupQueryAttention",
    "GroupedQueryAttention", "InvalidArgumentError", "MultiHeadAttention",
    "NoDeviceError", "NoVulkanError", "NotReadyError", "OutOfDeviceMemoryError",
    "OutOfHostMemoryError", "SizeOverflowError", "UnsupportedError", "VulkanError",
    "bfloat16", "default_context", "devices", "library_path", "library_version", "profiles",
    "reference",
    "sdpa",
    "Tensor", "KVCache", "sdpa_decode", "sdpa_backward", "SGD", "Adam", "AdamW",
]
