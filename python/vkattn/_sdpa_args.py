"""Arguments of vkattn.sdpa and vkattn.reference.sdpa, shared: the C params, the
float32 operands and their (B|1, H|1, Tq|1, Tv) broadcast shapes."""
import numpy as np

from ._arrays import f32
from ._lib import ffi
from ._specs import _CAUSAL, _PATHS, _positive
from .errors import invalid

_MASKED_ROW = {"zero": 0, "uniform": 1}


def _broadcast_operand(x, name, b, h, tq, tv):
    """x right-aligned against (B, H, Tq, Tv): the 4-D stored array and its flags."""
    a = f32(x, "sdpa: " + name, (1, 2, 3, 4))
    if a is None:
        return None, None
    shape = (1,) * (4 - a.ndim) + a.shape
    full = (b, h, tq, tv)
    if any(s not in (1, f) for s, f in zip(shape, full)):
        raise invalid("sdpa: %s has shape %s, which does not broadcast to (B, H, Tq, Tv) = %s"
                      % (name, a.shape, full))
    a = a.reshape(shape)
    if shape[3] != tv:  # the library stores keys in full
        a = np.ascontiguousarray(np.broadcast_to(a, shape[:3] + (tv,)))
    flags = {"batch": shape[0] == 1, "heads": shape[1] == 1, "rows": shape[2] == 1}
    return a, flags


class SdpaArgs:
    def __init__(self, q, k, v, scale, bias, value_mask, mask, causal, masked_row, dropout,
                 seed, offset, return_weights, weights_after_dropout, path,
                 sliding_window=None):
        self.q = f32(q, "sdpa: q", (3, 4))
        self.k = f32(k, "sdpa: k", (3, 4))
        self.v = f32(v, "sdpa: v", (3, 4))
        self.rank3 = self.q.ndim == 3
        if not self.k.ndim == self.v.ndim == self.q.ndim:
            raise invalid("sdpa: q, k and v must have the same rank; got %d, %d, %d"
                          % (self.q.ndim, self.k.ndim, self.v.ndim))
        if self.rank3:  # (B, T, d): one head
            self.q, self.k, self.v = (x[:, None] for x in (self.q, self.k, self.v))
        b, h, tq, dk = self.q.shape
        _, hkv, tv, _ = self.k.shape
        dv = self.v.shape[3]
        self.out_shape = (b, h, tq, dv)
        self.weights_shape = (b, h, tq, tv)
        self.bias, bias_flags = _broadcast_operand(bias, "bias", b, h, tq, tv)
        self.mask, mask_flags = _broadcast_operand(mask, "mask", b, h, tq, tv)
        self.value_mask = None
        if value_mask is not None:
            vm = f32(value_mask, "sdpa: value_mask", (1, 2))
            try:
                self.value_mask = np.ascontiguousarray(np.broadcast_to(vm, (b, tv)))
            except ValueError:
                raise invalid("sdpa: value_mask has shape %s; expected (B, Tv) = %s"
                              % (vm.shape, (b, tv))) from None
        if causal not in _CAUSAL:
            raise invalid("sdpa: causal must be a bool, \"top_left\" or \"bottom_right\"; "
                          "got %r" % (causal,))
        if masked_row not in _MASKED_ROW:
            raise invalid("sdpa: masked_row must be \"zero\" or \"uniform\"; got %r"
                          % (masked_row,))
        if path not in _PATHS:
            raise invalid("sdpa: path must be one of %s; got %r" % (", ".join(_PATHS), path))
        for name, val in (("seed", seed), ("offset", offset)):
            if isinstance(val, bool) or not isinstance(val, (int, np.integer)) \
                    or not 0 <= val < 2**64:
                raise invalid("sdpa: %s must be an int in [0, 2**64); got %r" % (name, val))
        self.return_weights = bool(return_weights)
        p = ffi.new("vkattn_sdpa_params *")
        p.batch, p.heads, p.tq, p.tv, p.dk, p.dv, p.kv_heads = b, h, tq, tv, dk, dv, hkv
        # k's width and v's batch/length are the library's to check, with its messages
        p.scale = 0.0 if scale is None else float(scale)
        if scale is not None and p.scale == 0.0:
            raise invalid("sdpa: scale 0 would mean the default 1/sqrt(dk); pass None for that")
        p.mask.causal = _CAUSAL[causal]
        p.mask.masked_row = _MASKED_ROW[masked_row]
        p.mask.has_value_mask = self.value_mask is not None
        p.mask.has_mask = self.mask is not None
        if mask_flags:
            p.mask.mask_broadcast = mask_flags
        p.mask.has_bias = self.bias is not None
        if bias_flags:
            p.mask.bias_broadcast = bias_flags
        p.dropout.rate = float(dropout)
        p.dropout.training = float(dropout) > 0  # PyTorch's dropout_p: on when given
        p.dropout.seed, p.dropout.offset = int(seed), int(offset)
        p.return_weights = self.return_weights
        p.weights_after_dropout = bool(weights_after_dropout)
        p.path = _PATHS[path]
        if sliding_window is not None:  # None, or a band of |pos(i) - j| < w keys, w >= 1
            w = _positive(sliding_window, "sliding_window", "sdpa")
            if w > 2**32 - 1:
                raise invalid("sdpa: sliding_window must be < 2**32; got %r" % (w,))
            p.sliding_window = w
        self.params = p

    def result(self, out, weights):
        if self.rank3:
            out = out[:, 0]
            weights = None if weights is None else weights[:, 0]
        return (out, weights) if self.return_weights else out
