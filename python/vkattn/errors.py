"""vkattn.Error and one subclass per vkattn_result code.

Each carries the library's specific message (vkattn_last_error: "vkattn_mha_create:
num_heads is 0; must be >= 1"), the code (a negative int) and its name. Argument
errors the package itself finds before calling C are InvalidArgumentError too,
which is also a ValueError.
"""
from ._lib import ffi, lib


class Error(Exception):
    """A failed vkattn call. `code` is the vkattn_result, `name` its C name."""

    code = None
    name = "VKATTN_ERROR"

    def __init__(self, message, code=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
            self.name = _name(code)


def _name(code):
    return ffi.string(lib.vkattn_result_name(code)).decode()


def _subclass(cname, code, *bases):
    pyname = "".join(w.capitalize() for w in cname.split("_")[2:]) + "Error"
    return type(pyname, (Error,) + bases, {"code": code, "name": cname, "__module__": __name__})


InvalidArgumentError = _subclass("VKATTN_ERROR_INVALID_ARGUMENT", -1, ValueError)
OutOfHostMemoryError = _subclass("VKATTN_ERROR_OUT_OF_HOST_MEMORY", -2, MemoryError)
OutOfDeviceMemoryError = _subclass("VKATTN_ERROR_OUT_OF_DEVICE_MEMORY", -3)
NoVulkanError = _subclass("VKATTN_ERROR_NO_VULKAN", -4)
NoDeviceError = _subclass("VKATTN_ERROR_NO_DEVICE", -5)
UnsupportedError = _subclass("VKATTN_ERROR_UNSUPPORTED", -6)
SizeOverflowError = _subclass("VKATTN_ERROR_SIZE_OVERFLOW", -7, OverflowError)
DeviceLimitError = _subclass("VKATTN_ERROR_DEVICE_LIMIT", -8)
VulkanError = _subclass("VKATTN_ERROR_VULKAN", -9)
DeviceLostError = _subclass("VKATTN_ERROR_DEVICE_LOST", -10)
NotReadyError = _subclass("VKATTN_ERROR_NOT_READY", -11)

BY_CODE = {c.code: c for c in (
    InvalidArgumentError, OutOfHostMemoryError, OutOfDeviceMemoryError, NoVulkanError,
    NoDeviceError, UnsupportedError, SizeOverflowError, DeviceLimitError, VulkanError,
    DeviceLostError, NotReadyError)}


def check(result, ctx=None):
    """Raises the Error for a failed vkattn_result, with the library's message."""
    if result == 0:
        return
    # The thread's last error is set by every failure, with or without a context;
    # the context's copy is the fallback.
    msg = ffi.string(lib.vkattn_last_error()).decode(errors="replace")
    if not msg and ctx is not None:
        msg = ffi.string(lib.vkattn_context_last_error(ctx)).decode(errors="replace")
    if not msg:
        msg = ffi.string(lib.vkattn_result_message(result)).decode()
    cls = BY_CODE.get(result, Error)
    raise cls(msg, result)


def invalid(message):
    """An argument error found in Python, before any C call."""
    return InvalidArgumentError(message, -1)
