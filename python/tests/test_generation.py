"""vkattn.KVCache and the cached layer call (a prefill, then one token per step)
against the layer's own uncached causal call on the whole sequence and the CPU
reference; raw append + vkattn.sdpa_decode against vkattn.reference.sdpa
(causal="bottom_right" over the cached keys) and reference.sdpa_decode; lengths,
reset and bad arguments. Bounds: f32 everywhere: conftest.assert_close (rtol 1e-4,
atol 1e-5 * max(1, max|ref|)); an f16 cache or layer: 8 eps16 * max(1, max|ref|),
the f16 layers' bound (test_keras_api.test_float16), which covers K and V each
rounded once to f16 by the cache; an int8 cache holds each row within half its
quantization step (max|row| / 254), a bfloat16 cache the rows rounded to nearest
even (bit patterns), and each decodes what it holds within the f32 bound.
About 3 s on lavapipe."""
import numpy as np
import pytest

import vkattn
from conftest import assert_close

EPS16 = 2.0**-10


def _mha(ctx, rng, kind, heads, dim, width, dtype):
    if kind == "mha":
        layer = vkattn.MultiHeadAttention(heads[0], dim, context=ctx, dtype=dtype)
        ref = vkattn.reference.multi_head_attention
        kw = dict(num_heads=heads[0], key_dim=dim)
    else:
        layer = vkattn.GroupedQueryAttention(dim, heads[0], heads[1], context=ctx, dtype=dtype)
        ref = vkattn.reference.grouped_query_attention
        kw = dict(head_dim=dim, num_query_heads=heads[0], num_key_value_heads=heads[1])
    layer.build((1, 1, width), (1, 1, width))
    layer.set_weights([0.4 * rng.standard_normal(w.shape) for w in layer.get_weights()])
    return layer, lambda x: ref(weights=layer.get_weights(), query=x, value=x,
                                use_causal_mask=True, **kw)


# kind, (heads, kv heads), head dim, width, batch, prompt, steps, cache dtype, layer dtype:
# batch 1 and > 1, GQA groups, odd widths and head dims (f32 caches), f16 caches and layers
CASES = [
    ("mha", (2, 2), 3, 5, 1, 3, 3, "float32", "float32"),
    ("mha", (3, 3), 4, 7, 2, 1, 4, "float16", "float32"),
    ("gqa", (4, 2), 5, 6, 2, 4, 2, "float32", "float32"),
    ("gqa", (6, 3), 2, 9, 3, 2, 3, "float16", "float32"),
    ("gqa", (4, 1), 4, 8, 1, 2, 2, "float32", "float16"),
    ("mha", (2, 2), 6, 5, 2, 3, 2, "float16", "float16"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "%s-h%s-d%d-w%d-b%d-%s-%s" % (
    c[0], "x".join(map(str, c[1])), c[2], c[3], c[4], c[7][5:], c[8][5:]))
def test_generation_loop(ctx, rng, case):
    kind, heads, dim, width, batch, prompt, steps, cache_dtype, layer_dtype = case
    layer, reference = _mha(ctx, rng, kind, heads, dim, width, layer_dtype)
    t = prompt + steps
    x = rng.standard_normal((batch, t, width)).astype(layer_dtype)
    with vkattn.KVCache(layer, capacity=t + 1, batch=batch, dtype=cache_dtype) as cache:
        assert list(cache.lengths) == [0] * batch
        outs = [layer(x[:, :prompt], x[:, :prompt], use_causal_mask=True, cache=cache)]
        for i in range(prompt, t):  # the generation loop: one new token per call
            outs.append(layer(x[:, i:i + 1], x[:, i:i + 1], use_causal_mask=True, cache=cache))
            assert list(cache.lengths) == [i + 1] * batch
        got = np.concatenate(outs, axis=1)
    assert got.dtype == np.dtype(layer_dtype) and got.shape == (batch, t, width)
    full = layer(x, x, use_causal_mask=True)  # the uncached call on the whole sequence
    want = reference(x.astype(np.float32))
    if cache_dtype == layer_dtype == "float32":
        assert_close(got, full)
        assert_close(got, want)
    else:
        assert_close(got, full, rtol=0, atol=8 * EPS16)
        assert_close(got, want, rtol=0, atol=8 * EPS16)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "bfloat16"])
def test_raw_decode(ctx, rng, dtype):
    """append + sdpa_decode: two appends (a prompt, then one token) per sequence."""
    b, hkv, h, dk, dv, cap = 2, 2, 4, 4, (8 if dtype == "int8" else 6), 9
    cache = vkattn.KVCache(kv_heads=hkv, key_dim=dk, value_dim=dv, capacity=cap, batch=b,
                           dtype=dtype, context=ctx)
    ks, vs = [], []
    for tnew in (4, 1):
        k = rng.standard_normal((b, hkv, tnew, dk)).astype(np.float32)
        v = rng.standard_normal((b, hkv, tnew, dv)).astype(np.float32)
        cache.append(vkattn.Tensor(k, context=ctx), v)  # a Tensor or numpy, either
        ks.append(k)
        vs.append(v)
        q = rng.standard_normal((b, h, tnew, dk)).astype(np.float32)
        got = vkattn.sdpa_decode(q, cache)
        n = sum(x.shape[2] for x in ks)
        assert list(cache.lengths) == [n] * b
        kc, vc = cache.numpy()
        k_all, v_all = np.concatenate(ks, axis=2), np.concatenate(vs, axis=2)
        if dtype == "bfloat16":  # bit patterns: the appended rows rounded to nearest even
            assert kc.dtype == np.uint16
            np.testing.assert_array_equal(kc[:, :, :n], vkattn.bfloat16.from_float32(k_all))
            np.testing.assert_array_equal(vc[:, :, :n], vkattn.bfloat16.from_float32(v_all))
            kc, vc = vkattn.bfloat16.to_float32(kc), vkattn.bfloat16.to_float32(vc)
        if dtype == "int8":  # each row within half a step, max|row| / 254, of what went in
            assert kc.dtype == np.float32
            for c, x in ((kc, k_all), (vc, v_all)):
                step = np.abs(x).max(axis=-1, keepdims=True) / 127
                assert np.all(np.abs(c[:, :, :n] - x) <= step * (0.5 + 1e-5))
        elif dtype != "bfloat16":  # what it holds: the appended rows, rounded once to its dtype
            assert kc.dtype == np.dtype(dtype)
            np.testing.assert_array_equal(kc[:, :, :n], k_all.astype(dtype))
        want = vkattn.reference.sdpa(q, kc[:, :, :n], vc[:, :, :n], causal="bottom_right")
        assert_close(got, want)
        assert_close(got, vkattn.reference.sdpa_decode(q, kc, vc, cache.lengths))
        if dtype == "float32":
            assert_close(got, vkattn.reference.sdpa(q, k_all, v_all, causal="bottom_right"))
    tq = vkattn.Tensor(q, context=ctx)
    out = vkattn.sdpa_decode(tq, cache)  # a Tensor q: a Tensor out
    assert isinstance(out, vkattn.Tensor) and out.shape == (b, h, 1, dv)
    np.testing.assert_array_equal(out.numpy(), got)
    cache.close()


def test_lengths_reset(ctx, rng):
    cache = vkattn.KVCache(kv_heads=1, key_dim=2, capacity=3, batch=2, context=ctx)
    k = rng.standard_normal((2, 1, 2, 2))
    cache.append(k, k)
    assert list(cache.lengths) == [2, 2] and not cache.overflowed
    cache.reset(1)
    assert list(cache.lengths) == [2, 0]
    cache.set_lengths([1, 3])
    assert list(cache.lengths) == [1, 3]
    with pytest.raises(vkattn.InvalidArgumentError, match="capacity"):
        cache.append(k, k)  # sequence 1 is full: refused on the host, nothing changed
    assert list(cache.lengths) == [1, 3]
    cache.reset()
    assert list(cache.lengths) == [0, 0]
    with pytest.raises(vkattn.InvalidArgumentError, match="seq must be"):
        cache.reset(2)
    with pytest.raises(vkattn.InvalidArgumentError, match="set_lengths: lengths"):
        cache.set_lengths([4, 0])
    cache.close()
    with pytest.raises(vkattn.InvalidArgumentError, match="closed"):
        cache.lengths


def test_errors(ctx, rng):
    mha = vkattn.MultiHeadAttention(2, 4, context=ctx)
    x = rng.standard_normal((1, 2, 6)).astype(np.float32)
    cache = vkattn.KVCache(mha, capacity=4)
    assert (cache.kv_heads, cache.key_dim, cache.value_dim) == (2, 4, 4)
    with pytest.raises(vkattn.InvalidArgumentError, match="use_causal_mask=True"):
        mha(x, x, cache=cache)
    with pytest.raises(vkattn.InvalidArgumentError, match="query_mask is not supported"):
        mha(x, x, query_mask=np.ones((1, 2)), use_causal_mask=True, cache=cache)
    with pytest.raises(vkattn.InvalidArgumentError, match="return_attention_scores"):
        mha(x, x, return_attention_scores=True, use_causal_mask=True, cache=cache)
    with pytest.raises(vkattn.InvalidArgumentError, match="cache must be a vkattn.KVCache"):
        mha(x, x, use_causal_mask=True, cache="cache")
    with pytest.raises(vkattn.InvalidArgumentError, match="value has 3 tokens and query 2"):
        mha(x, rng.standard_normal((1, 3, 6)), use_causal_mask=True, cache=cache)
    with pytest.raises(vkattn.InvalidArgumentError, match="value_mask has shape"):
        mha(x, x, value_mask=np.ones((1, 5)), use_causal_mask=True, cache=cache)
    other = vkattn.KVCache(kv_heads=2, key_dim=3, capacity=4, context=ctx)
    with pytest.raises(vkattn.InvalidArgumentError):  # the library names the dims
        mha(x, x, use_causal_mask=True, cache=other)
    with pytest.raises(vkattn.InvalidArgumentError, match="layer must be a MultiHead"):
        vkattn.KVCache(vkattn.Attention(context=ctx), capacity=4)
    with pytest.raises(vkattn.InvalidArgumentError, match="capacity must be"):
        vkattn.KVCache(mha, capacity=0)
    with pytest.raises(vkattn.InvalidArgumentError, match="not both"):
        vkattn.KVCache(mha, capacity=4, key_dim=4)
    with pytest.raises(vkattn.InvalidArgumentError, match="KVCache.append: v has shape"):
        cache.append(np.zeros((1, 2, 1, 4)), np.zeros((1, 2, 1, 3)))
    with pytest.raises(vkattn.InvalidArgumentError, match="sdpa_decode: q has 3 heads"):
        vkattn.sdpa_decode(np.zeros((1, 3, 1, 4)), cache)
    for dtype in ("float16", "bfloat16"):  # 16-bit caches need even widths
        with pytest.raises(vkattn.UnsupportedError, match="needs even"):
            vkattn.KVCache(kv_heads=1, key_dim=3, capacity=2, dtype=dtype, context=ctx)
    with pytest.raises(vkattn.UnsupportedError, match="key_dim"):  # int8: multiples of 4
        vkattn.KVCache(kv_heads=1, key_dim=6, capacity=2, dtype="int8", context=ctx)
    with pytest.raises(vkattn.InvalidArgumentError, match="or \"int8\""):
        vkattn.KVCache(kv_heads=1, key_dim=4, capacity=2, dtype="float64", context=ctx)
    cache.close()
    other.close()
