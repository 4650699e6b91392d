"""vkattn.Tensor: an f32, f16 or bf16 array kept in device memory (vkattn/tensor.h).

Upload once, then pass the Tensor to vkattn.sdpa (q, k, v) or a layer's call
(query, value, key) in place of a numpy array: the call then neither uploads it
nor, when the query is a Tensor, downloads its output (it returns a Tensor).
"""
import numpy as np

from ._lib import ffi, lib
from ._owned import ContextOwned
from .context import default_context
from .errors import check, invalid

_DTYPES = {"float32": 0, "float16": 1, "bfloat16": 3}  # vkattn_dtype codes
_NAMES = {code: name for name, code in _DTYPES.items()}
# the host arrays of each: numpy has no bfloat16, so a bfloat16 Tensor's are its
# bit patterns (uint16; vkattn.bfloat16 converts them)
_NUMPY = {0: np.float32, 1: np.float16, 3: np.uint16}


def dtype_name(code):
    """The name ("float32", "float16", "bfloat16") of a vkattn_dtype code."""
    return next(n for n, c in _DTYPES.items() if c == code)


def _destroy(handle):
    lib.vkattn_tensor_destroy(handle)


def _dtype_code(dtype, who):
    if dtype is None:
        return None
    name = np.dtype(dtype).name if not isinstance(dtype, str) else dtype
    if name not in _DTYPES:
        raise invalid("%s: dtype must be \"float32\", \"float16\" or \"bfloat16\"; got %r"
                      % (who, dtype))
    return _DTYPES[name]


def _host_array(a, code, who):
    """a as what a Tensor of code uploads: float32 or float16, or for bfloat16 its
    bit patterns (uint16, as they are) or float32 values (the library rounds them
    to nearest even on upload)."""
    want = _NUMPY[code]
    if code == _DTYPES["bfloat16"] and a.dtype != np.uint16:
        want = np.float32
    try:
        return np.ascontiguousarray(a, dtype=want)
    except (TypeError, ValueError) as e:
        raise invalid("%s: array cannot be converted to %s: %s" % (who, _NAMES[code], e)) from e


class Tensor(ContextOwned):
    """A rank 1-4 float32, float16 or bfloat16 array on a Context's device.

    Tensor(array, dtype=None, context=None): uploads array (float16 arrays stay
    float16, anything else becomes float32 unless dtype says; float32 -> float16 or
    bfloat16 rounds to nearest even). A bfloat16 Tensor takes uint16 arrays as bit
    patterns, as they are, and other arrays as values. Tensor.empty(shape, dtype,
    context): contents undefined. numpy() downloads it exactly (float32, float16, or
    for bfloat16 the uint16 bit patterns: vkattn.bfloat16.to_float32 reads them);
    update(array) overwrites it.
    The context owns it: close() (or a with-block, or garbage collection) frees it,
    and closing the context frees every Tensor still on it. reshape() gives a view of
    the same memory (no copy) that keeps this Tensor alive.
    """

    _what = "vkattn.Tensor"

    def __init__(self, array, dtype=None, *, context=None):
        code = _dtype_code(dtype, "Tensor")
        try:
            a = np.asarray(array)
        except (TypeError, ValueError) as e:
            raise invalid("Tensor: array is not an array: %s" % e) from e
        if code is None:
            code = 1 if a.dtype == np.float16 else 0
        a = _host_array(a, code, "Tensor")
        self._create(a.shape, code, context, "Tensor")
        self._write(a)

    @classmethod
    def empty(cls, shape, dtype="float32", *, context=None):
        """A Tensor of this shape whose contents are undefined until written."""
        t = cls.__new__(cls)
        try:
            shape = tuple(int(d) for d in shape)
        except (TypeError, ValueError):
            raise invalid("Tensor.empty: shape must be a tuple of ints; got %r"
                          % (shape,)) from None
        t._create(shape, _dtype_code(dtype, "Tensor.empty"), context, "Tensor.empty")
        return t

    def _create(self, shape, code, context, who):
        if context is not None and not hasattr(context, "_ptr"):
            raise invalid("%s: context must be a vkattn.Context; got %r" % (who, context))
        if not 1 <= len(shape) <= 4 or any(d < 1 for d in shape):
            raise invalid("%s: shape %s: a Tensor has rank 1 to 4 and every dim >= 1"
                          % (who, shape))
        self._context = context if context is not None else default_context()
        self._shape, self._code, self._parent = tuple(shape), code, None
        ctx = self._context
        desc = ffi.new("vkattn_tensor_desc *", {"rank": len(shape), "dims": list(shape),
                                                "dtype": code})
        out = ffi.new("vkattn_tensor **")
        with ctx._lock:
            check(lib.vkattn_tensor_create(ctx._ptr(), desc, out), ctx._handle)
            self._own(out[0], _destroy)

    # -- what it is

    @property
    def shape(self):
        return self._shape

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def size(self):
        return int(np.prod(self._shape))

    @property
    def dtype(self):
        """numpy's dtype of the host arrays: float32, float16, or uint16 (bfloat16's
        bit patterns; dtype_name says "bfloat16")."""
        return np.dtype(_NUMPY[self._code])

    @property
    def dtype_name(self):
        """"float32", "float16" or "bfloat16"."""
        return _NAMES[self._code]

    def _owner(self):
        return self._parent if self._parent is not None else self

    def __repr__(self):
        return "<vkattn.Tensor shape=%s dtype=%s%s>" % (self._shape, self.dtype_name,
                                                       " closed" if self.closed else "")

    # -- lifetime

    def close(self):
        """Frees the device memory now (a view: drops the view only). Idempotent."""
        if self._parent is None:
            super().close()

    # -- data

    def numpy(self):
        """A new numpy array with the contents, exactly (float32, float16, or uint16 bit
        patterns for bfloat16)."""
        a = np.empty(self._shape, _NUMPY[self._code])
        with self._context._lock:
            check(lib.vkattn_tensor_download_raw(self._ptr("Tensor.numpy"),
                                                 ffi.cast("void *", a.ctypes.data), 0, a.size),
                  self._context._handle)
        return a

    def update(self, array):
        """Overwrites the contents with array (same element count; converted to dtype)."""
        try:
            a = np.asarray(array)
        except (TypeError, ValueError) as e:
            raise invalid("Tensor.update: array is not an array: %s" % e) from e
        a = _host_array(a, self._code, "Tensor.update")
        if a.size != self.size:
            raise invalid("Tensor.update: array has shape %s (%d elements); the Tensor is %s"
                          % (a.shape, a.size, self._shape))
        self._write(a)

    def _write(self, a):
        # in the Tensor's own element type, or float32 values for a bfloat16 Tensor,
        # which the library rounds to nearest even
        raw = a.dtype == _NUMPY[self._code]
        upload, ptr = ((lib.vkattn_tensor_upload_raw, "const void *") if raw else
                       (lib.vkattn_tensor_upload, "const float *"))
        with self._context._lock:
            check(upload(self._ptr("Tensor"), ffi.cast(ptr, a.ctypes.data), 0, a.size),
                  self._context._handle)

    def reshape(self, *shape):
        """A view of the same memory with another shape of the same element count."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        shape = tuple(int(d) for d in shape)
        if int(np.prod(shape)) != self.size or not 1 <= len(shape) <= 4:
            raise invalid("Tensor.reshape: cannot view %s as %s (rank 1 to 4, same element "
                          "count)" % (self._shape, shape))
        v = Tensor.__new__(Tensor)
        v._context, v._shape, v._code = self._context, shape, self._code
        v._parent = self._parent if self._parent is not None else self
        v._handle = self._handle
        return v


def host(x):
    """x itself, or a Tensor's contents as numpy (for host-side code: the CPU references)."""
    return x.numpy() if isinstance(x, Tensor) else x


def check_contexts(ctx, who, named, dtype=None):
    """Each Tensor among (name, x) pairs must live on ctx, the call's context, and have
    dtype ("float32", "float16", "bfloat16") where one is given: a layer's inputs, since a numpy
    input is cast to the layer's dtype (Keras's dtype policy) and a Tensor is not."""
    for name, x in named:
        if not isinstance(x, Tensor):
            continue
        if x._context is not ctx:
            raise invalid("%s: %s is a vkattn.Tensor of another Context than the call's"
                          % (who, name))
        if dtype is not None and x.dtype_name != dtype:
            raise invalid("%s: %s is a %s Tensor; this %s layer takes %s Tensors"
                          % (who, name, x.dtype_name, dtype, dtype))


def on_context(x, ctx, name):
    """The C handle of Tensor x after checking it lives on ctx (the call's context)."""
    if x._context is not ctx:
        raise invalid("%s is a vkattn.Tensor of another Context than the call's" % name)
    return x._ptr(name)
