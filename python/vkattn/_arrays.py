"""numpy <-> vkattn: float32 C-contiguous conversion, tensors for one call."""
import numpy as np

from ._lib import ffi, lib
from .errors import check, invalid
from .tensor import Tensor, dtype_name, on_context


def f32(x, name, ranks=None, device=False):
    """x as a C-contiguous float32 array (bools become 0/1); None stays None. A
    vkattn.Tensor stays one where the caller can bind it (device=True), else it is
    downloaded."""
    if x is None:
        return None
    if isinstance(x, Tensor):
        if not device:
            x = x.numpy()
        elif ranks is not None and x.ndim not in ranks:
            raise invalid("%s is a Tensor of shape %s (rank %d); expected rank %s"
                          % (name, x.shape, x.ndim, " or ".join(str(r) for r in ranks)))
        else:
            return x
    try:
        a = np.asarray(x, dtype=np.float32, order="C")
    except (TypeError, ValueError) as e:
        raise invalid("%s cannot be converted to float32: %s" % (name, e)) from e
    if ranks is not None and a.ndim not in ranks:
        raise invalid("%s has shape %s (rank %d); expected rank %s"
                      % (name, a.shape, a.ndim, " or ".join(str(r) for r in ranks)))
    if a.size == 0:
        raise invalid("%s has shape %s: every dimension must be >= 1" % (name, a.shape))
    return a


def mask01(x, name, ranks=None, hint="", meaning="1 = may attend"):
    """A mask as f32, as f32() converts it: booleans, or numbers all 0 or 1. Any other
    value is refused, naming the first: a float mask such as PyTorch's additive
    attn_mask (0 and -inf) is not a mask, and read as one its -inf would mean 1, "may
    attend". `hint` says where such a mask goes instead; `meaning` what 1 means."""
    a = f32(x, name, ranks)
    if a is None:
        return None
    bad = (a != 0) & (a != 1)  # NaN too
    if bad.any():
        raise invalid("%s holds %r; a mask holds only 0/1 or False/True (%s)%s"
                      % (name, float(a[bad][0]), meaning, hint))
    return a


def ptr(a, const=True):
    """A float pointer into numpy array a (NULL for None)."""
    if a is None:
        return ffi.NULL
    if isinstance(a, Tensor):  # a caller forgot host(): refuse rather than crash
        raise invalid("a vkattn.Tensor where host memory is needed: pass t.numpy()")
    return ffi.cast("const float *" if const else "float *", a.ctypes.data)


class Tensors:
    """Device tensors for one call; all destroyed on exit. Use under the context's lock."""

    def __init__(self, ctx, keep=False):
        self._owner = ctx
        self._ctx = ctx._ptr()
        self._all = []
        self.keep = keep  # results (empty(result=True)) become vkattn.Tensor, not freed
        self._kept = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for t in self._all:
            lib.vkattn_tensor_destroy(t)
        self._all.clear()

    def empty(self, shape, dtype=0, result=False):
        """A tensor of shape; dtype a vkattn_dtype code (0 f32, 1 f16, 3 bf16). A result under
        keep is a vkattn.Tensor the caller gets back from download()."""
        if result and self.keep:
            t = Tensor.empty(shape, dtype_name(dtype), context=self._owner)
            self._kept[t._handle] = t
            return t._handle
        shape = tuple(int(d) for d in shape) or (1,)
        if len(shape) > 4:
            raise invalid("a tensor of shape %s has rank > 4" % (shape,))
        desc = ffi.new("vkattn_tensor_desc *", {"rank": len(shape), "dims": list(shape),
                                                "dtype": dtype})
        out = ffi.new("vkattn_tensor **")
        check(lib.vkattn_tensor_create(self._ctx, desc, out), self._ctx)
        self._all.append(out[0])
        return out[0]

    def upload(self, a, dtype=0):
        """A tensor holding numpy array a (NULL for None); f16 rounds to nearest even."""
        if a is None:
            return ffi.NULL
        if isinstance(a, Tensor):  # already on the device: bound as it is
            return on_context(a, self._owner, "an input")
        t = self.empty(a.shape, dtype)
        check(lib.vkattn_tensor_upload(t, ptr(a), 0, a.size), self._ctx)
        return t

    def download(self, t, shape):
        if t in self._kept:
            return self._kept[t]
        a = np.empty(shape, dtype=np.float32)
        check(lib.vkattn_tensor_download(t, ptr(a, const=False), 0, a.size), self._ctx)
        return a
