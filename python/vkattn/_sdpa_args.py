"""Arguments of vkattn.sdpa and vkattn.reference.sdpa, shared: the C params, the
float32 operands and their (B|1, H|1, Tq|1, Tv) broadcast shapes."""
import numpy as np

from ._arrays import f32, mask01
from ._lib import ffi
from ._specs import _CAUSAL, _PATHS, _positive
from .errors import invalid

_MASKED_ROW = {"zero": 0, "uniform": 1}

# where a float mask that is not 0/1 belongs (mask01's hint)
_ADDITIVE = "; an additive mask (0 and -inf, as PyTorch's float attn_mask) goes in bias="


def _broadcast_operand(x, name, b, h, tq, tv, convert=f32):
    """x right-aligned against (B, H, Tq, Tv): the 4-D stored array and its flags."""
    a = convert(x, "sdpa: " + name, (1, 2, 3, 4))
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
        self.q = f32(q, "sdpa: q", (3, 4), device=True)
        self.k = f32(k, "sdpa: k", (3, 4), device=True)
        self.v = f32(v, "sdpa: v", (3, 4), device=True)
        self.rank3 = self.q.ndim == 3
        if not self.k.ndim == self.v.ndim == self.q.ndim:
            raise invalid("sdpa: q, k and v must have the same rank; got %d, %d, %d"
                          % (self.q.ndim, self.k.ndim, self.v.ndim))
        self._check_shapes()
        if self.rank3:  # (B, T, d): one head
            self.q, self.k, self.v = (x.reshape(x.shape[:1] + (1,) + x.shape[1:])
                                      for x in (self.q, self.k, self.v))
        b, h, tq, dk = self.q.shape
        _, hkv, tv, _ = self.k.shape
        dv = self.v.shape[3]
        self.out_shape = (b, h, tq, dv)
        self.weights_shape = (b, h, tq, tv)
        self.bias, bias_flags = _broadcast_operand(bias, "bias", b, h, tq, tv)
        self.mask, mask_flags = _broadcast_operand(
            mask, "mask", b, h, tq, tv, lambda x, name, ranks: mask01(x, name, ranks, _ADDITIVE))
        self.value_mask = None
        if value_mask is not None:
            vm = mask01(value_mask, "sdpa: value_mask", (1, 2), _ADDITIVE)
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

    def _check_shapes(self):
        """Each of q, k, v against the others, as given (the library would count only
        their elements, and the reference reads raw pointers)."""
        q, k, v = self.q.shape, self.k.shape, self.v.shape
        if k[0] != q[0]:
            raise invalid("sdpa: k has shape %s; its batch must be q's, %d" % (k, q[0]))
        if k[-1] != q[-1]:
            raise invalid("sdpa: k has shape %s; its last dim (dk) must be q's, %d" % (k, q[-1]))
        if v[:-1] != k[:-1]:
            raise invalid("sdpa: v has shape %s; its %s must be k's %s"
                          % (v, "batch and length" if self.rank3 else "batch, heads and length",
                             k[:-1]))
        if not self.rank3 and q[1] % k[1]:
            raise invalid("sdpa: q has %d heads and k %d; q's heads must be a multiple of k's "
                          "(grouped-query attention)" % (q[1], k[1]))

    def result(self, out, weights):
        if self.rank3:  # numpy or Tensor: drop the head axis
            out = out.reshape(out.shape[:1] + out.shape[2:])
            weights = None if weights is None else weights.reshape(
                weights.shape[:1] + weights.shape[2:])
        return (out, weights) if self.return_weights else out
