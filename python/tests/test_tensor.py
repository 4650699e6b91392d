"""vkattn.Tensor: round trips (f32, f16 and bf16, exact), views, lifetime; Tensors in
vkattn.sdpa, the layers' calls and the CPU references, against the numpy path (the
same device kernels on the same values: equal) and the reference (conftest.assert_close;
f16 inputs: the reference on the same f16 values, f32 out, the f32 bound). About 1 s
on lavapipe."""
import numpy as np
import pytest

import vkattn
from conftest import assert_close


def test_round_trip(ctx, rng):
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    t = vkattn.Tensor(a, context=ctx)
    assert t.shape == (2, 3, 4) and t.ndim == 3 and t.size == 24 and t.dtype == np.float32
    np.testing.assert_array_equal(t.numpy(), a)
    h = vkattn.Tensor(a.astype(np.float16), context=ctx)  # float16 stays float16
    assert h.dtype == np.float16
    np.testing.assert_array_equal(h.numpy(), a.astype(np.float16))
    r = vkattn.Tensor(a, dtype="float16", context=ctx)  # rounded to nearest even, as numpy
    np.testing.assert_array_equal(r.numpy(), a.astype(np.float16))
    t.update(2 * a)
    np.testing.assert_array_equal(t.numpy(), 2 * a)
    view = t.reshape(6, 4)
    np.testing.assert_array_equal(view.numpy(), 2 * a.reshape(6, 4))
    e = vkattn.Tensor.empty((5,), "float16", context=ctx)
    assert e.shape == (5,) and e.dtype == np.float16
    with vkattn.Tensor(a, context=ctx) as w:
        pass
    assert w.closed
    with pytest.raises(vkattn.InvalidArgumentError,
                       match="Tensor.numpy: the vkattn.Tensor is closed"):
        w.numpy()
    t.close()
    assert view.closed  # a view goes with the memory it views


def _bf16_specials():
    """float32 values at bf16's edges: ties of both parities and their neighbours,
    the largest finite (rounding to inf), +-inf, -0, subnormals, NaNs with payloads."""
    bits = [0x3F808000, 0x3F818000, 0x3F808001, 0x3F807FFF,  # ties to even, just off
            0x7F7F7FFF, 0x7F7F8000, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x80000000,
            0x00000001, 0x00018000, 0x80008000, 0x7FC00001, 0xFF812345, 0x7F800001]
    return np.array(bits, dtype=np.uint32).view(np.float32)


def test_bfloat16(ctx, rng):
    """bfloat16 Tensors: values round to nearest even on upload (the library's
    rounding, which vkattn.bfloat16.from_float32 mirrors bit for bit), uint16 arrays are
    bit patterns kept as they are, numpy() returns the bits; to_float32 is exact on all
    65536 patterns; an op and the optimizer take a bf16 Tensor."""
    x = np.concatenate([rng.standard_normal(61).astype(np.float32) * 100, _bf16_specials()])
    t = vkattn.Tensor(x, dtype="bfloat16", context=ctx)
    assert t.dtype == np.uint16 and t.dtype_name == "bfloat16"
    assert "dtype=bfloat16" in repr(t)
    want = vkattn.bfloat16.from_float32(x)
    np.testing.assert_array_equal(t.numpy(), want)
    # the mirror's rule, checked against float64 arithmetic on the finite values
    fin = np.isfinite(x) & (np.abs(x) < 3.38e38)
    got = vkattn.bfloat16.to_float32(want[fin]).astype(np.float64)
    err = np.abs(got - x[fin].astype(np.float64))
    assert np.all(err <= np.abs(x[fin]).astype(np.float64) * 2.0 ** -8 + 2.0 ** -134)
    assert vkattn.bfloat16.to_float32(want)[np.isnan(x)].size == np.isnan(x).sum()
    assert np.all(np.isnan(vkattn.bfloat16.to_float32(want[np.isnan(x)])))
    # the bits, as they are, both ways
    every = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    b = vkattn.Tensor(every, dtype="bfloat16", context=ctx)
    np.testing.assert_array_equal(b.numpy(), every)
    f = vkattn.bfloat16.to_float32(every)
    np.testing.assert_array_equal(f.view(np.uint32), every.astype(np.uint32) << 16)
    np.testing.assert_array_equal(vkattn.bfloat16.from_float32(f)[~np.isnan(f)],
                                  every[~np.isnan(f)])  # exact values stay
    t.update(x[::-1].copy())
    np.testing.assert_array_equal(t.numpy(), want[::-1])
    e = vkattn.Tensor.empty((3, 2), "bfloat16", context=ctx)
    assert e.dtype_name == "bfloat16" and e.numpy().shape == (3, 2)
    # an op reads a bf16 Tensor's values exactly: sdpa on it is sdpa on those values
    q = vkattn.Tensor(rng.standard_normal((1, 3, 5, 4)), "bfloat16", context=ctx)
    got = vkattn.sdpa(q, q, q, context=ctx).numpy()
    values = vkattn.bfloat16.to_float32(q.numpy())
    np.testing.assert_array_equal(got, vkattn.sdpa(values, values, values, context=ctx))
    # the optimizer updates a bf16 parameter in place: x - 0.5 x, exact here
    p = vkattn.Tensor([1.0, -3.0, 0.75], "bfloat16", context=ctx)
    vkattn.SGD(lr=0.5).step([p], [vkattn.Tensor([1.0, -3.0, 0.75], "bfloat16", context=ctx)])
    np.testing.assert_array_equal(vkattn.bfloat16.to_float32(p.numpy()), [0.5, -1.5, 0.375])
    with pytest.raises(TypeError, match="uint16"):
        vkattn.bfloat16.to_float32(np.ones(2, np.float32))


def test_context_owns(rng):
    try:
        c = vkattn.Context()
    except (vkattn.NoVulkanError, vkattn.NoDeviceError):
        pytest.skip("no device")
    t = vkattn.Tensor(np.ones(3), context=c)
    c.close()
    assert t.closed  # freed before its device


def test_bad(ctx):
    with pytest.raises(vkattn.InvalidArgumentError, match="rank 1 to 4"):
        vkattn.Tensor(np.ones((1, 1, 1, 1, 2)), context=ctx)
    with pytest.raises(vkattn.InvalidArgumentError, match="dtype must be"):
        vkattn.Tensor(np.ones(2), dtype="int8", context=ctx)
    t = vkattn.Tensor(np.ones(4), context=ctx)
    with pytest.raises(vkattn.InvalidArgumentError, match="update: array has shape"):
        t.update(np.ones(5))
    with pytest.raises(vkattn.InvalidArgumentError, match="reshape: cannot view"):
        t.reshape(3)
    with pytest.raises(vkattn.InvalidArgumentError, match="sdpa: q is a Tensor of shape"):
        vkattn.sdpa(t, t, t, context=ctx)


@pytest.mark.parametrize("rank3", [False, True])
def test_sdpa(ctx, rng, rank3):
    shapes = ((2, 3, 4), (2, 5, 4), (2, 5, 3)) if rank3 else \
        ((2, 4, 3, 6), (2, 2, 5, 6), (2, 2, 5, 3))
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    bias = rng.standard_normal(shapes[0][-2:-1] + shapes[1][-2:-1])  # (Tq, Tv)
    want = vkattn.sdpa(q, k, v, causal=True, bias=bias, context=ctx)
    tq, tk, tv = (vkattn.Tensor(x, context=ctx) for x in (q, k, v))
    got = vkattn.sdpa(tq, tk, tv, causal=True, bias=bias, context=ctx)
    assert isinstance(got, vkattn.Tensor) and got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(vkattn.sdpa(q, tk, tv, causal=True, bias=bias, context=ctx),
                                  want)  # a numpy q: numpy out
    assert_close(vkattn.reference.sdpa(tq, tk, tv, causal=True, bias=bias), want)
    # f16 Tensors: read as f16, computed in f32, f32 out
    hq, hk, hv = (vkattn.Tensor(x, dtype="float16", context=ctx) for x in (q, k, v))
    got16 = vkattn.sdpa(hq, hk, hv, context=ctx)
    assert got16.dtype == np.float32
    assert_close(got16.numpy(), vkattn.reference.sdpa(hq.numpy(), hk.numpy(), hv.numpy()))


def test_layers(ctx, rng):
    mha = vkattn.MultiHeadAttention(2, 3, context=ctx)
    mha.build((1, 1, 5), (1, 1, 4))
    mha.set_weights([0.4 * rng.standard_normal(w.shape) for w in mha.get_weights()])
    q = rng.standard_normal((2, 3, 5)).astype(np.float32)
    v = rng.standard_normal((2, 4, 4)).astype(np.float32)
    want, scores = mha(q, v, return_attention_scores=True)
    tq, tv = vkattn.Tensor(q, context=ctx), vkattn.Tensor(v, context=ctx)
    got, got_scores = mha(tq, tv, return_attention_scores=True)
    assert isinstance(got, vkattn.Tensor) and isinstance(got_scores, vkattn.Tensor)
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(got_scores.numpy(), scores)
    np.testing.assert_array_equal(mha(q, tv, return_attention_scores=True)[0], want)
    assert_close(want, vkattn.reference.multi_head_attention(
        num_heads=2, key_dim=3, weights=mha.get_weights(), query=tq, value=tv))
    att = vkattn.Attention(context=ctx)
    k = rng.standard_normal((2, 4, 5)).astype(np.float32)
    vm = rng.random((2, 4)) < 0.7
    want = att([q, v, k], mask=[None, vm])
    got = att([tq, tv, vkattn.Tensor(k, context=ctx)], mask=[None, vm])
    np.testing.assert_array_equal(got.numpy(), want)
    with pytest.raises(vkattn.InvalidArgumentError,
                       match="MultiHeadAttention: query is a float16 Tensor; this float32 "):
        mha(vkattn.Tensor(q, "float16", context=ctx), v)
    # a float16 layer takes float16 Tensors (numpy inputs are rounded to float16)
    m16 = vkattn.MultiHeadAttention(2, 3, dtype="float16", context=ctx)
    m16.build((1, 1, 5), (1, 1, 4))
    m16.set_weights(mha.get_weights())
    got16 = m16(vkattn.Tensor(q, "float16", context=ctx),
                vkattn.Tensor(v, "float16", context=ctx))
    assert got16.dtype == np.float16
    with pytest.raises(vkattn.InvalidArgumentError,
                       match="value is a float32 Tensor; this float16"):
        m16(q, tv)
    np.testing.assert_array_equal(got16.numpy(), m16(q.astype(np.float16), v.astype(np.float16)))
    other = vkattn.Context()
    try:
        with pytest.raises(vkattn.InvalidArgumentError,
                           match="MultiHeadAttention: value is a vkattn.Tensor of another"):
            mha(q, vkattn.Tensor(v, context=other))
    finally:
        other.close()
