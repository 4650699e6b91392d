"""Keras's use_gate (3.14) in MultiHeadAttention and GroupedQueryAttention: the device
against numpy (npref.mha/gqa with the sigmoid gate) and the library's CPU reference,
with and without biases; the weight order q, k, gate, v, out; get_config /
from_config; safetensors save/load (Llama names refuse a gated layer); gradients
against the reference backward; a weights list without the gate refused by name.
Bound: conftest.assert_close (rtol 1e-4, atol 1e-5 * max(1, max|ref|))."""
import numpy as np
import pytest

import vkattn
import npref
from conftest import assert_close

B, TQ, TV, DQ, DV = 2, 4, 5, 6, 3


def _make(kind, use_bias, ctx):
    if kind == "mha":
        return vkattn.MultiHeadAttention(2, 3, 2, use_bias=use_bias, use_gate=True, context=ctx)
    return vkattn.GroupedQueryAttention(2, 4, 2, use_bias=use_bias, use_gate=True, context=ctx)


def _built(kind, use_bias, ctx, rng):
    layer = _make(kind, use_bias, ctx)
    layer.build((B, TQ, DQ), (B, TV, DV))
    weights = [(0.6 * rng.standard_normal(w.shape)).astype(np.float32)
               for w in layer.get_weights()]
    layer.set_weights(weights)
    return layer, weights


def _reference(kind, use_bias, q, v, weights, **kw):
    if kind == "mha":
        return vkattn.reference.multi_head_attention(
            q, v, num_heads=2, key_dim=3, value_dim=2, use_bias=use_bias, use_gate=True,
            weights=weights, return_attention_scores=True, **kw)
    return vkattn.reference.grouped_query_attention(
        q, v, head_dim=2, num_query_heads=4, num_key_value_heads=2, use_bias=use_bias,
        use_gate=True, weights=weights, return_attention_scores=True, **kw)


@pytest.mark.parametrize("kind", ["mha", "gqa"])
@pytest.mark.parametrize("use_bias", [True, False])
def test_gate_forward(ctx, rng, kind, use_bias):
    layer, weights = _built(kind, use_bias, ctx, rng)
    heads, dv = (2, 2) if kind == "mha" else (4, 2)
    # Keras's order: the gate after key, before value
    k = 2 if use_bias else 1
    assert weights[2 * k].shape == (DQ, heads, dv)
    if use_bias:
        assert weights[2 * k + 1].shape == (heads, dv)
    q, v = rng.standard_normal((B, TQ, DQ)), rng.standard_normal((B, TV, DV))
    qm = rng.random((B, TQ)) < 0.8
    out, scores = layer(q, v, query_mask=qm, use_causal_mask=True, return_attention_scores=True)
    if kind == "mha":
        want, _ = npref.mha(q, v, None, weights, 2, 3, use_bias, query_mask=qm, causal=True,
                            use_gate=True)
    else:
        want, _ = npref.gqa(q, v, None, weights, 4, 2, 2, use_bias, use_gate=True,
                            query_mask=qm, causal=True)
    assert_close(out, want)
    ref, ref_scores = _reference(kind, use_bias, q, v, weights, query_mask=qm,
                                 use_causal_mask=True)
    assert_close(out, ref)
    assert_close(scores, ref_scores)
    # the gate matters: without it the output differs
    plain = (vkattn.MultiHeadAttention(2, 3, 2, use_bias=use_bias, context=ctx) if kind == "mha"
             else vkattn.GroupedQueryAttention(2, 4, 2, use_bias=use_bias, context=ctx))
    plain.build((B, TQ, DQ), (B, TV, DV))
    plain.set_weights([w for i, w in enumerate(weights) if not k * 2 <= i < k * 3])
    assert np.max(np.abs(plain(q, v, query_mask=qm, use_causal_mask=True) - out)) > 1e-3


@pytest.mark.parametrize("kind", ["mha", "gqa"])
def test_gate_config_and_files(ctx, rng, tmp_path, kind):
    layer, weights = _built(kind, True, ctx, rng)
    config = layer.get_config()
    assert config["use_gate"] is True
    clone = type(layer).from_config(config, context=ctx)
    clone.build((B, TQ, DQ), (B, TV, DV))
    path = tmp_path / "gated.safetensors"
    layer.save_weights(path)
    clone.load_weights(path)
    for a, b in zip(clone.get_weights(), weights):
        np.testing.assert_array_equal(a, b)
    q, v = rng.standard_normal((B, TQ, DQ)), rng.standard_normal((B, TV, DV))
    np.testing.assert_array_equal(clone(q, v), layer(q, v))
    if kind == "gqa":  # a Llama-style block has no gate projection
        with pytest.raises(vkattn.InvalidArgumentError, match="use_gate"):
            clone.load_weights(path, names="llama")
    # a list without the gate's weights is refused, naming them
    with pytest.raises(vkattn.InvalidArgumentError, match="gate_kernel"):
        clone.set_weights(weights[:4] + weights[6:])


@pytest.mark.parametrize("kind", ["mha", "gqa"])
def test_gate_gradients(ctx, rng, kind):
    layer, weights = _built(kind, True, ctx, rng)
    q, v = rng.standard_normal((B, TQ, DQ)), rng.standard_normal((B, TV, DV))
    g = rng.standard_normal(layer(q, v).shape)
    got_in, got_w = layer.gradients(q, v, use_causal_mask=True, grad_output=g)
    if kind == "mha":
        ref_in, ref_w = vkattn.reference.multi_head_attention(
            q, v, num_heads=2, key_dim=3, value_dim=2, use_gate=True, weights=weights,
            use_causal_mask=True, grad_output=g)
    else:
        ref_in, ref_w = vkattn.reference.grouped_query_attention(
            q, v, head_dim=2, num_query_heads=4, num_key_value_heads=2, use_gate=True,
            weights=weights, use_causal_mask=True, grad_output=g)
    assert len(got_w) == len(weights) == 10
    for a, b in zip(got_in + got_w, ref_in + ref_w):
        assert_close(a, b)
    # the gate kernel's gradient is not zero (the gate is in the graph)
    assert np.max(np.abs(got_w[4])) > 1e-4
