"""GroupedQueryAttention on the device against numpy (npref.gqa: MultiHeadAttention
with the key/value heads repeated) and the library's CPU reference, on small random
shapes; Keras's own known-value test; GQA == MHA with repeated K/V kernels; bad
arguments. Bound: conftest.assert_close (rtol 1e-4, atol 1e-5 * max(1, max|ref|))."""
import numpy as np
import pytest

import vkattn
import npref
from conftest import assert_close


def _mask(rng, shape, p=0.75):
    return rng.random(shape) < p


# head_dim, Nq, Nkv, use_bias, (B, Tq, Tv, Dq, Dk, Dv): Nkv in {1, Nq/2, Nq}, odd
# widths, Tq != Tv both ways, batch 1, key width != value width
CASES = [
    (4, 4, 1, True, (1, 5, 7, 6, 6, 6)),
    (3, 4, 2, True, (2, 6, 3, 5, 4, 9)),
    (5, 2, 2, False, (2, 4, 4, 7, 7, 3)),
    (2, 6, 3, True, (1, 3, 8, 5, 3, 5)),
]


def _layer(ctx, rng, hd, nq, nkv, use_bias, shapes, **kw):
    layer = vkattn.GroupedQueryAttention(hd, nq, nkv, use_bias=use_bias, context=ctx, **kw)
    layer.build(*shapes)
    weights = [0.4 * rng.standard_normal(x.shape) for x in layer.get_weights()]
    layer.set_weights(weights)
    return layer, weights


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("masks", ["none", "query_value_key", "causal_attn2",
                                   "attn4_bottom_right_window", "self_window"])
def test_gqa(ctx, rng, case, masks):
    hd, nq, nkv, use_bias, (b, tq, tv, dq, dk, dv) = case
    q = rng.standard_normal((b, tq, dq))
    v = rng.standard_normal((b, tv, dv))
    k = rng.standard_normal((b, tv, dk))
    kw, causal, window = {}, False, None
    if masks == "query_value_key":
        kw = {"query_mask": _mask(rng, (b, tq)), "value_mask": _mask(rng, (b, tv)),
              "key_mask": _mask(rng, (b, tv), 0.9)}
    elif masks == "causal_attn2":
        causal, kw = True, {"attention_mask": _mask(rng, (tq, tv))}
    elif masks == "attn4_bottom_right_window":
        causal, window = "bottom_right", 3
        kw = {"attention_mask": _mask(rng, (b, nq, tq, tv))}
    elif masks == "self_window":  # key omitted: key = value
        k, causal, window = None, True, 2
        dk = dv
    layer, weights = _layer(ctx, rng, hd, nq, nkv, use_bias,
                            (q.shape, v.shape, None if k is None else k.shape),
                            sliding_window=window)
    out, scores = layer(q, v, k, use_causal_mask=causal, return_attention_scores=True, **kw)
    assert out.shape == (b, tq, dq) and scores.shape == (b, nq, tq, tv)
    np_masks = dict(kw)
    if "key_mask" in np_masks:
        np_masks["value_mask"] = np_masks["value_mask"] & np_masks.pop("key_mask")
    want, want_scores = npref.gqa(q, v, k, weights, nq, nkv, hd, use_bias, causal=causal,
                                  sliding_window=window, **np_masks)
    assert_close(out, want)
    assert_close(scores, want_scores)
    ref, ref_scores = vkattn.reference.grouped_query_attention(
        q, v, k, head_dim=hd, num_query_heads=nq, num_key_value_heads=nkv, use_bias=use_bias,
        sliding_window=window, weights=weights, use_causal_mask=causal,
        return_attention_scores=True, **kw)
    assert_close(out, ref)
    assert_close(scores, ref_scores)


def test_keras_known_values(ctx):
    """keras/src/layers/attention/grouped_query_attention_test.py's known values
    (printed there to 3 decimals: atol 5e-4, as tests/cases/gqa.json)."""
    eye = np.eye(8, dtype=np.float32)
    query = eye[None]
    value = np.arange(64, dtype=np.float32).reshape(1, 8, 8) / 100
    layer = vkattn.GroupQueryAttention(head_dim=8, num_query_heads=8, num_key_value_heads=8,
                                       context=ctx)
    assert vkattn.GroupQueryAttention is vkattn.GroupedQueryAttention
    layer.build(query.shape, value.shape, query.shape)
    kernel = np.repeat(eye[:, None, :], 8, axis=1)  # kernel[a, n, c] = (a == c)
    layer.set_weights([kernel if w.ndim == 3 else np.zeros_like(w)
                       for w in layer.get_weights()])
    out, scores = layer(query, value, query, return_attention_scores=True)
    want_scores = np.where(eye.astype(bool), 0.1691, 0.1187)
    np.testing.assert_allclose(scores, np.broadcast_to(want_scores, (1, 8, 8, 8)), atol=5e-4)
    rows = [2.407, 2.439, 2.472, 2.504, 2.536, 2.568, 2.601, 2.633]
    np.testing.assert_allclose(out, np.broadcast_to(np.array(rows)[None, :, None], (1, 8, 8)),
                               atol=5e-4)


@pytest.mark.parametrize("nkv", [1, 2, 4])
def test_equals_mha_with_repeated_kv_kernels(ctx, rng, nkv):
    hd, nq, b, tq, tv, d = 3, 4, 2, 5, 6, 7
    q = rng.standard_normal((b, tq, d))
    v = rng.standard_normal((b, tv, d))
    qm, vm = _mask(rng, (b, tq)), _mask(rng, (b, tv))
    gqa, weights = _layer(ctx, rng, hd, nq, nkv, True, (q.shape, v.shape), sliding_window=4)
    mha = vkattn.MultiHeadAttention(nq, hd, sliding_window=4, context=ctx)
    mha.build(q.shape, v.shape)
    mha.set_weights(npref.repeat_kv_heads(weights, nq // nkv))
    kw = dict(query_mask=qm, value_mask=vm, use_causal_mask=True, return_attention_scores=True)
    got, got_s = gqa(q, v, **kw)
    want, want_s = mha(q, v, **kw)
    assert_close(got, want)
    assert_close(got_s, want_s)


def test_training_dropout_matches_reference(ctx, rng):
    hd, nq, nkv, b, tq, tv, d = 4, 4, 2, 2, 6, 9, 5
    q, v = rng.standard_normal((b, tq, d)), rng.standard_normal((b, tv, d))
    layer, weights = _layer(ctx, rng, hd, nq, nkv, True, (q.shape, v.shape), dropout=0.3,
                            seed=99)
    out = layer(q, v, training=True, offset=5)
    ref = vkattn.reference.grouped_query_attention(
        q, v, head_dim=hd, num_query_heads=nq, num_key_value_heads=nkv, weights=weights,
        dropout=0.3, training=True, seed=99, offset=5)
    assert_close(out, ref)
    assert not np.allclose(out, layer(q, v))  # dropout only in training


def test_new_layer_weights(ctx, rng):
    x = rng.standard_normal((2, 5, 6))
    layer = vkattn.GroupedQueryAttention(3, 4, 2, context=ctx)
    assert layer.get_weights() == []
    out = layer(x, x)  # built with Keras's initial weights (test_keras_init.py)
    assert np.count_nonzero(out) > out.size // 2
    shapes = [w.shape for w in layer.get_weights()]
    assert shapes == [(6, 4, 3), (4, 3), (6, 2, 3), (2, 3), (6, 2, 3), (2, 3), (4, 3, 6), (6,)]


@pytest.mark.parametrize("kwargs,match", [
    ({"num_key_value_heads": 3}, "num_query_heads 4 is not a multiple of num_key_value_heads 3"),
    ({"num_key_value_heads": 0}, "num_key_value_heads must be an int >= 1"),
    ({"num_query_heads": 0}, "num_query_heads must be an int >= 1"),
    ({"head_dim": 2.0}, "head_dim must be an int >= 1"),
    ({"sliding_window": 0}, "sliding_window must be an int >= 1"),
    ({"sliding_window": -3}, "sliding_window must be an int >= 1"),
    ({"sliding_window": 2**31}, "sliding_window must be < 2147483648"),
    ({"dropout": float("nan")}, r"dropout must be a number in \[0, 1\]"),
    ({"dropout": -0.5}, r"dropout must be a number in \[0, 1\]"),
    ({"use_bias": "yes"}, "use_bias must be True or False"),
    ({"dtype": "int8"}, "dtype must be"),
])
def test_bad_arguments(kwargs, match):
    args = {"head_dim": 2, "num_query_heads": 4, "num_key_value_heads": 2}
    args.update(kwargs)
    with pytest.raises(ValueError, match="GroupedQueryAttention: " + match) as info:
        vkattn.GroupedQueryAttention(**args)
    assert isinstance(info.value, vkattn.InvalidArgumentError)
    if "dtype" not in kwargs:  # the reference takes the same arguments, but no dtype
        with pytest.raises(vkattn.InvalidArgumentError, match=match):
            vkattn.reference.grouped_query_attention(np.ones((1, 2, 3)), np.ones((1, 2, 3)),
                                                     **args)


def test_bad_call(ctx, rng):
    layer = vkattn.GroupedQueryAttention(2, 4, 2, context=ctx)
    q = rng.standard_normal((2, 3, 6))
    layer(q, q)
    with pytest.raises(vkattn.InvalidArgumentError, match="query has width 5"):
        layer(rng.standard_normal((2, 3, 5)), q)
    with pytest.raises(vkattn.InvalidArgumentError,
                       match=r"GroupedQueryAttention: value has shape \(3, 5, 6\); its batch"):
        layer(q, rng.standard_normal((3, 5, 6)))
    with pytest.raises(vkattn.InvalidArgumentError,
                       match=r"attention_mask has shape \(2, 3, 3, 3\), which does not "
                             r"broadcast to .* or \(B, H, Tq, Tv\) = \(2, 4, 3, 3\)"):
        layer(q, q, attention_mask=np.ones((2, 3, 3, 3)))  # 3 heads, not Nq = 4
