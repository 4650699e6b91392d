"""vkattn.sdpa_backward: the gradients of vkattn.sdpa on the device
(vkattn/sdpa_backward.h), and its CPU reference."""
import numpy as np

from ._arrays import Tensors, f32, ptr
from ._lib import RUN_NOW, ffi, lib
from ._sdpa_args import SdpaArgs
from .context import default_context
from .errors import check, invalid
from .tensor import Tensor, check_contexts, host


def _args(q, k, v, grad_output, scale, bias, value_mask, mask, causal, masked_row, dropout,
          seed, offset, path, sliding_window, who, device):
    a = SdpaArgs(q, k, v, scale, bias, value_mask, mask, causal, masked_row, dropout, seed,
                 offset, False, False, path, sliding_window)
    g = f32(grad_output, "%s: grad_output" % who, (3, 4), device=device)
    want = a.out_shape[:1] + a.out_shape[2:] if a.rank3 else a.out_shape
    if g.shape != want:
        raise invalid("%s: grad_output has shape %s; it must have the output's shape %s"
                      % (who, g.shape, want))
    if a.rank3:
        g = g.reshape(a.out_shape)
    return a, g


def _grads_shapes(a):
    return (a.q.shape, a.k.shape, a.v.shape)


def _result(a, grads):
    if a.rank3:  # (B, 1, T, d) -> (B, T, d)
        grads = [x.reshape(x.shape[:1] + x.shape[2:]) for x in grads]
    return tuple(grads)


def sdpa_backward(q, k, v, grad_output, *, scale=None, bias=None, value_mask=None, mask=None,
                  causal=False, masked_row="zero", dropout=0.0, seed=0, offset=0, path="auto",
                  context=None, sliding_window=None):
    """(dL/dq, dL/dk, dL/dv) of vkattn.sdpa(q, k, v, ...) given grad_output = dL/d(out),
    with the forward's arguments unchanged (dropout redraws the forward's mask from seed
    and offset). No gradient for bias. path "auto"/"unfused" runs the chained backward,
    which recomputes the weights; "fused" runs the fused forward (for its log-sum-exp)
    then the flash-attention backward. q, k, v and grad_output may be vkattn.Tensor;
    with a Tensor q the gradients are float32 Tensors, else numpy float32."""
    who = "sdpa_backward"
    a, g = _args(q, k, v, grad_output, scale, bias, value_mask, mask, causal, masked_row,
                 dropout, seed, offset, path, sliding_window, who, True)
    ctx = context if context is not None else default_context()
    check_contexts(ctx, who, (("q", a.q), ("k", a.k), ("v", a.v), ("grad_output", g)))
    shapes = _grads_shapes(a)
    with ctx._lock, Tensors(ctx, keep=isinstance(a.q, Tensor)) as ts:
        io = ffi.new("vkattn_sdpa_backward_io *")
        io.q, io.k, io.v = ts.upload(a.q), ts.upload(a.k), ts.upload(a.v)
        io.bias, io.mask, io.value_mask = ts.upload(a.bias), ts.upload(a.mask), \
            ts.upload(a.value_mask)
        io.grad_out = ts.upload(g)
        if path == "fused":  # the fused backward reads the fused forward's out and lse
            fwd = ffi.new("vkattn_sdpa_io *")
            fwd.q, fwd.k, fwd.v = io.q, io.k, io.v
            fwd.bias, fwd.mask, fwd.value_mask = io.bias, io.mask, io.value_mask
            fwd.out = io.out = ts.empty(a.out_shape)
            fwd.lse = io.lse = ts.empty(a.out_shape[:3])
            check(lib.vkattn_sdpa_record(ctx._ptr(), RUN_NOW, a.params, fwd), ctx._handle)
        io.grad_q, io.grad_k, io.grad_v = (ts.empty(s, result=True) for s in shapes)
        check(lib.vkattn_sdpa_backward_record(ctx._ptr(), RUN_NOW, a.params, io), ctx._handle)
        grads = [ts.download(t, s) for t, s in zip((io.grad_q, io.grad_k, io.grad_v), shapes)]
    return _result(a, grads)


def reference_sdpa_backward(q, k, v, grad_output, *, scale=None, bias=None, value_mask=None,
                            mask=None, causal=False, masked_row="zero", dropout=0.0, seed=0,
                            offset=0, sliding_window=None):
    """sdpa_backward's CPU reference (double accumulation); same arguments, no path."""
    who = "reference.sdpa_backward"
    a, g = _args(host(q), host(k), host(v), host(grad_output), scale, bias, value_mask, mask,
                 causal, masked_row, dropout, seed, offset, "auto", sliding_window, who, False)
    grads = [np.empty(s, np.float32) for s in _grads_shapes(a)]
    check(lib.vkattn_reference_sdpa_backward(
        a.params, ptr(a.q), ptr(a.k), ptr(a.v), ptr(a.bias), ptr(a.value_mask), ptr(a.mask),
        ptr(g), *(ptr(x, const=False) for x in grads)))
    return _result(a, grads)
