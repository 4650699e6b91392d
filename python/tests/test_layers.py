"""Each layer on the device against a plain numpy version (npref.py) and against
the library's CPU reference, on random inputs: masks, causal, Tq != Tv, odd sizes,
batch 1. Bound: conftest.assert_close (rtol 1e-4, atol 1e-5 * max(1, max|ref|))."""
import numpy as np
import pytest

import vkattn
import npref
from conftest import assert_close


def _mask(rng, shape, p=0.75):
    m = rng.random(shape) < p
    return m


# (B, Tq, Tv, Dq, Dv): batch 1, Tq != Tv both ways, odd widths
SHAPES = [(1, 5, 7, 3, 6), (3, 7, 4, 8, 5), (2, 1, 9, 5, 3), (2, 6, 6, 4, 4)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("score_mode", ["dot", "concat"])
@pytest.mark.parametrize("use_scale", [False, True])
@pytest.mark.parametrize("masks", ["none", "query_value", "causal", "bottom_right_attn"])
def test_attention(ctx, rng, shape, score_mode, use_scale, masks):
    b, tq, tv, dq, dv = shape
    q = rng.standard_normal((b, tq, dq))
    v = rng.standard_normal((b, tv, dv))
    k = rng.standard_normal((b, tv, dq))  # key width = query width, value width differs
    qm = vm = am = None
    causal = False
    if masks == "query_value":
        qm, vm = _mask(rng, (b, tq)), _mask(rng, (b, tv))
    elif masks == "causal":
        causal, vm = True, _mask(rng, (b, tv), 0.9)
    elif masks == "bottom_right_attn":
        causal, am = "bottom_right", _mask(rng, (tq, tv))
    layer = vkattn.Attention(use_scale=use_scale, score_mode=score_mode, seed=1, context=ctx)
    layer.build(q.shape, v.shape, k.shape)
    weights = [np.float32(rng.uniform(0.5, 1.5)) for _ in layer.get_weights()]
    layer.set_weights(weights)
    out, scores = layer([q, v, k], mask=[qm, vm], use_causal_mask=causal,
                        attention_mask=am, return_attention_scores=True)
    w = dict(zip([f for f, _, _ in layer._spec.layout(None)], weights))
    want, want_scores = npref.attention(q, v, k, scale=w.get("scale", 1.0),
                                        score_mode=score_mode,
                                        csw=w.get("concat_score_weight", 1.0), query_mask=qm,
                                        value_mask=vm, attention_mask=am, causal=causal)
    assert_close(out, want)
    assert_close(scores, want_scores)
    ref = vkattn.reference.attention(q, v, k, weights=weights, use_scale=use_scale,
                                     score_mode=score_mode, query_mask=qm, value_mask=vm,
                                     attention_mask=am, use_causal_mask=causal)
    assert_close(out, ref)


def test_attention_self_key_defaults_to_value(ctx, rng):
    q = rng.standard_normal((2, 5, 4))
    v = rng.standard_normal((2, 3, 4))
    out = vkattn.Attention(context=ctx)([q, v])
    assert out.dtype == np.float32 and out.shape == (2, 5, 4)
    assert_close(out, npref.attention(q, v)[0])


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("use_scale", [True, False])
def test_additive_attention(ctx, rng, shape, use_scale):
    b, tq, tv, dq, dv = shape
    q = rng.standard_normal((b, tq, dq))
    v = rng.standard_normal((b, tv, dv))
    k = rng.standard_normal((b, tv, dq))
    qm, vm = _mask(rng, (b, tq)), _mask(rng, (b, tv))
    layer = vkattn.AdditiveAttention(use_scale=use_scale, context=ctx)
    layer.build(q.shape, v.shape, k.shape)
    weights = [rng.standard_normal((dq,)).astype(np.float32)] if use_scale else []
    layer.set_weights(weights)
    out, scores = layer([q, v, k], mask=[qm, vm], return_attention_scores=True,
                        use_causal_mask=True)
    want, want_scores = npref.additive_attention(q, v, k, scale=weights[0] if use_scale
                                                 else None, query_mask=qm, value_mask=vm,
                                                 causal=True)
    assert_close(out, want)
    assert_close(scores, want_scores)
    ref = vkattn.reference.additive_attention(q, v, k, weights=weights, use_scale=use_scale,
                                              query_mask=qm, value_mask=vm,
                                              use_causal_mask=True)
    assert_close(out, ref)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("rank2_query", [False, True])
def test_bahdanau(ctx, rng, shape, rank2_query):
    b, tq, tv, dq, dv = shape
    dk, units = dq + 2, 7  # key width differs from query width
    q = rng.standard_normal((b, dq) if rank2_query else (b, tq, dq))
    v = rng.standard_normal((b, tv, dv))
    k = rng.standard_normal((b, tv, dk))
    vm = _mask(rng, (b, tv))
    layer = vkattn.BahdanauAttention(units, context=ctx)
    layer.build(q.shape, v.shape, k.shape)
    weights = [0.5 * rng.standard_normal(x.shape) for x in layer.get_weights()]
    layer.set_weights(weights)
    out, scores = layer([q, v, k], mask=[None, vm], return_attention_scores=True)
    want, want_scores = npref.bahdanau(q, v, k, *weights, value_mask=vm)
    assert out.shape == want.shape
    assert_close(out, want)
    assert_close(scores, want_scores)
    ref = vkattn.reference.bahdanau_attention(q, v, k, units=units, weights=weights,
                                              value_mask=vm)
    assert_close(out, ref)


MHA_CASES = [
    # heads, key_dim, value_dim, use_bias, output_shape, (B, Tq, Tv, Dq, Dk, Dv)
    (2, 4, 3, True, None, (1, 5, 7, 6, 6, 6)),
    (3, 5, 5, True, 7, (2, 6, 3, 5, 4, 9)),
    (1, 8, None, False, None, (3, 4, 4, 8, 8, 8)),
    (4, 3, 6, True, (5,), (2, 9, 11, 7, 7, 3)),
]


@pytest.mark.parametrize("case", MHA_CASES)
@pytest.mark.parametrize("masks", ["none", "query_value_key", "causal_attn2",
                                   "attn4_bottom_right"])
@pytest.mark.parametrize("path", ["auto", "unfused"])
def test_mha(ctx, rng, case, masks, path):
    h, kd, vd, use_bias, out_shape, (b, tq, tv, dq, dk, dv) = case
    q = rng.standard_normal((b, tq, dq))
    v = rng.standard_normal((b, tv, dv))
    k = rng.standard_normal((b, tv, dk))
    kw = {}
    causal = False
    if masks == "query_value_key":
        kw = {"query_mask": _mask(rng, (b, tq)), "value_mask": _mask(rng, (b, tv)),
              "key_mask": _mask(rng, (b, tv), 0.9)}
    elif masks == "causal_attn2":
        causal, kw = True, {"attention_mask": _mask(rng, (tq, tv))}
    elif masks == "attn4_bottom_right":
        causal, kw = "bottom_right", {"attention_mask": _mask(rng, (b, h, tq, tv))}
    layer = vkattn.MultiHeadAttention(h, kd, vd, use_bias=use_bias, output_shape=out_shape,
                                      context=ctx)
    layer.build(q.shape, v.shape, k.shape)
    weights = [0.4 * rng.standard_normal(x.shape) for x in layer.get_weights()]
    layer.set_weights(weights)
    out = layer(q, v, k, use_causal_mask=causal, path=path, **kw)
    np_masks = dict(kw)
    if "key_mask" in np_masks:
        np_masks["value_mask"] = np_masks["value_mask"] & np_masks.pop("key_mask")
    want, want_scores = npref.mha(q, v, k, weights, h, kd, use_bias, causal=causal,
                                  **np_masks)
    assert_close(out, want)
    if path == "unfused":
        _, scores = layer(q, v, k, use_causal_mask=causal, return_attention_scores=True,
                          path=path, **kw)
        assert scores.shape == (b, h, tq, tv)
        assert_close(scores, want_scores)
    ref = vkattn.reference.multi_head_attention(
        q, v, k, num_heads=h, key_dim=kd, value_dim=vd, use_bias=use_bias,
        output_shape=out_shape, weights=weights, use_causal_mask=causal, **kw)
    assert_close(out, ref)


@pytest.mark.parametrize("causal", [False, True, "bottom_right"])
@pytest.mark.parametrize("path", ["fused", "unfused"])
def test_mha_sliding_window(ctx, rng, causal, path):
    b, tq, tv, h, kd = 2, 7, 9, 2, 3
    q = rng.standard_normal((b, tq, 5))
    v = rng.standard_normal((b, tv, 4))
    for window in (1, 3, tq + tv):
        layer = vkattn.MultiHeadAttention(h, kd, sliding_window=window, context=ctx)
        layer.build(q.shape, v.shape)
        weights = [0.4 * rng.standard_normal(x.shape) for x in layer.get_weights()]
        layer.set_weights(weights)
        vm = _mask(rng, (b, tv))
        out = layer(q, v, use_causal_mask=causal, value_mask=vm, path=path)
        want, _ = npref.mha(q, v, None, weights, h, kd, causal=causal, value_mask=vm,
                            sliding_window=window)
        assert_close(out, want)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(vkattn.InvalidArgumentError, match="sliding_window"):
            vkattn.MultiHeadAttention(h, kd, sliding_window=bad, context=ctx)


def test_mha_self_attention_and_new_layer_weights(ctx, rng):
    x = rng.standard_normal((2, 5, 6))
    layer = vkattn.MultiHeadAttention(num_heads=2, key_dim=3, context=ctx)
    out = layer(x, x)  # builds with Keras's initial weights (test_keras_init.py)
    assert np.count_nonzero(out) > out.size // 2
    shapes = [w.shape for w in layer.get_weights()]
    assert shapes == [(6, 2, 3), (2, 3), (6, 2, 3), (2, 3), (6, 2, 3), (2, 3), (2, 3, 6), (6,)]


@pytest.mark.parametrize("make", [
    lambda c: vkattn.Attention(use_scale=True, score_mode="concat", context=c),
    lambda c: vkattn.AdditiveAttention(context=c),
    lambda c: vkattn.BahdanauAttention(5, context=c),
    lambda c: vkattn.MultiHeadAttention(3, 2, 4, output_shape=5, context=c),
])
def test_weights_round_trip(ctx, rng, make):
    layer = make(ctx)
    assert layer.get_weights() == []  # not built: no weights, as Keras
    layer.build((2, 3, 4), (2, 5, 4))
    new = [rng.standard_normal(w.shape).astype(np.float32) for w in layer.get_weights()]
    layer.set_weights(new)
    got = layer.get_weights()
    assert len(got) == len(new)
    for g, n in zip(got, new):
        assert g.dtype == np.float32 and g.shape == n.shape
        np.testing.assert_array_equal(g, n)


def test_keras_initial_weights(ctx):
    att = vkattn.Attention(use_scale=True, score_mode="concat", context=ctx)
    att.build((1, 2, 3), (1, 2, 3))
    assert [float(w) for w in att.get_weights()] == [1.0, 1.0]
    add = vkattn.AdditiveAttention(context=ctx)
    add.build((1, 2, 3), (1, 2, 3))
    assert add.get_weights()[0].shape == (3,)  # glorot_uniform: test_keras_init.py
    bah = vkattn.BahdanauAttention(4, context=ctx)
    bah.build((1, 3), (1, 2, 5))
    wq, wk, sv, sb = bah.get_weights()
    assert wq.shape == (3, 4) and wk.shape == (5, 4) and sv.shape == (4, 1) and sb.shape == (1,)
    assert sb[0] == 0


def test_dropout_stream(ctx, rng):
    """Training drops weights by the Philox stream: each returned weight is 0 or the
    no-dropout weight / (1 - rate); same seed and offset repeat the mask, the call
    counter advances it, and the reference draws the same mask."""
    rate = 0.3
    q = rng.standard_normal((2, 16, 8))
    v = rng.standard_normal((2, 24, 8))
    layer = vkattn.Attention(dropout=rate, seed=1234, context=ctx)
    _, w0 = layer([q, v], return_attention_scores=True)  # not training: no dropout
    _, w1 = layer([q, v], return_attention_scores=True, training=True)
    _, w2 = layer([q, v], return_attention_scores=True, training=True)
    _, w1b = layer([q, v], return_attention_scores=True, training=True, offset=0)
    kept = w1 != 0
    assert_close(np.where(kept, w1, 0), np.where(kept, w0 / (1 - rate), 0))
    # 768 Philox draws, fixed by seed 1234 and offset 0 (not by the RNG): 3 sigma ~ 0.05
    assert abs(1 - kept.mean() - rate) < 0.05
    assert not np.array_equal(w1 != 0, w2 != 0)  # offset advanced between the calls
    np.testing.assert_array_equal(w1, w1b)
    _, ref = vkattn.reference.attention(q, v, dropout=rate, training=True, seed=1234,
                                        offset=0, return_attention_scores=True)
    np.testing.assert_array_equal(w1 != 0, ref != 0)
    assert_close(w1, ref)


def test_inputs_converted(ctx, rng):
    """float64, int and Fortran-ordered inputs and bool masks are all accepted."""
    q = np.asfortranarray(rng.standard_normal((2, 3, 4)))
    v = rng.integers(-2, 3, (2, 5, 4))
    vm = rng.random((2, 5)) < 0.7
    layer = vkattn.AdditiveAttention(context=ctx)
    out = layer([q, v], mask=[None, vm.tolist()])
    assert out.dtype == np.float32 and out.flags.c_contiguous
    assert_close(out, npref.additive_attention(q, v, scale=layer.get_weights()[0],
                                               value_mask=vm)[0])
