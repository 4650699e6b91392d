"""vkattn.sdpa: scaled dot-product attention on the device."""
from ._arrays import Tensors
from ._lib import RUN_NOW, ffi, lib
from ._sdpa_args import SdpaArgs
from .context import default_context
from .errors import check
from .tensor import Tensor, check_contexts


def sdpa(q, k, v, *, scale=None, bias=None, value_mask=None, mask=None, causal=False,
         masked_row="zero", dropout=0.0, seed=0, offset=0, return_weights=False,
         weights_after_dropout=False, path="auto", context=None, sliding_window=None):
    """softmax(q k^T * scale + bias, masks) v.

    q (B, H, Tq, dk), k (B, Hkv, Tv, dk), v (B, Hkv, Tv, dv): query head h reads
    key/value head h // (H // Hkv) (grouped-query attention); or all three rank 3,
    (B, T, d), for one head. scale None = 1/sqrt(dk). bias and mask broadcast to
    (B, H, Tq, Tv) (numpy's right-aligned rule); value_mask is (B, Tv); masks are
    0/1 or booleans, 1/True = may attend (any other value is refused: an additive
    mask such as PyTorch's float attn_mask, 0 and -inf, goes in bias). k's batch
    and width are q's, v's batch, heads and length k's. causal: False, True (=
    "top_left": j <= i) or "bottom_right" (j <= i + Tv - Tq). masked_row: what a row with no allowed key
    becomes, "zero" or "uniform" (1/Tv). dropout: rate applied to the weights when
    > 0 (the Philox stream of seed and offset). Returns out (B, H, Tq, dv), and with
    return_weights (chained path only) also the weights (B, H, Tq, Tv), before
    dropout unless weights_after_dropout. path: "auto", "fused" or "unfused".
    sliding_window: None, or an int >= 1: only keys with |pos(i) - j| < w, pos(i) = i
    (+ Tv - Tq with causal="bottom_right"), AND-ed with the masks.
    q, k and v may be vkattn.Tensor (f32 or f16, on this context): bound with no
    upload. With a Tensor q the results are float32 Tensors, not downloaded.
    """
    a = SdpaArgs(q, k, v, scale, bias, value_mask, mask, causal, masked_row, dropout, seed,
                 offset, return_weights, weights_after_dropout, path,
                 sliding_window)
    ctx = context if context is not None else default_context()
    check_contexts(ctx, "sdpa", (("q", a.q), ("k", a.k), ("v", a.v)))
    # a Tensor q: out (and weights) stay on the device, returned as Tensors
    with ctx._lock, Tensors(ctx, keep=isinstance(a.q, Tensor)) as ts:
        io = ffi.new("vkattn_sdpa_io *")
        io.q, io.k, io.v = ts.upload(a.q), ts.upload(a.k), ts.upload(a.v)
        io.bias, io.mask, io.value_mask = ts.upload(a.bias), ts.upload(a.mask), \
            ts.upload(a.value_mask)
        io.out = ts.empty(a.out_shape, result=True)
        if a.return_weights:
            io.weights = ts.empty(a.weights_shape, result=True)
        check(lib.vkattn_sdpa_record(ctx._ptr(), RUN_NOW, a.params, io), ctx._handle)
        out = ts.download(io.out, a.out_shape)
        weights = ts.download(io.weights, a.weights_shape) if a.return_weights else None
    return a.result(out, weights)
