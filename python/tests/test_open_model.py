"""The open models' attention options of MultiHeadAttention and GroupedQueryAttention
(qk_norm, rope, softcap, use_sinks) and the calls' query_positions / key_positions:
configs, weight shapes and the errors, which need no kernel; and the numbers, against
the float64 numpy implementation of tests/cases/open_model_gen.py (independent of the
library, its RoPE checked against Hugging Face's formulas).
"""
import importlib.util
import os

import numpy as np
import pytest

import vkattn
from conftest import assert_close

_GEN = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "cases",
                    "open_model_gen.py")
_spec = importlib.util.spec_from_file_location("open_model_gen", _GEN)
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)

GQA = dict(head_dim=4, num_query_heads=4, num_key_value_heads=2)
ROPE = {"max_wavelength": 10000.0, "scaling_factor": 1.0, "rotary_dim": None,
        "layout": "half"}


# ---------------------------------------------------------------- configs

@pytest.mark.parametrize("make", [
    lambda **kw: vkattn.MultiHeadAttention(3, 6, seed=1, **kw),
    lambda **kw: vkattn.GroupedQueryAttention(6, 4, 2, seed=1, **kw)])
def test_config_round_trip(make):
    plain = make().get_config()
    assert (plain["qk_norm"], plain["rope"], plain["softcap"], plain["use_sinks"]) == \
        (None, None, None, False)
    layer = make(qk_norm=1e-5, rope={"layout": "interleaved", "rotary_dim": 4},
                 softcap=30, use_sinks=True)
    config = layer.get_config()
    assert config["qk_norm"] == {"epsilon": 1e-5}
    assert config["rope"] == {"max_wavelength": 10000.0, "scaling_factor": 1.0,
                              "rotary_dim": 4, "layout": "interleaved"}
    assert config["softcap"] == 30.0 and config["use_sinks"] is True
    again = type(layer).from_config(config)
    assert again.get_config() == config
    # Keras's RMSNormalization config key, {} = its default epsilon
    assert make(qk_norm={}).get_config()["qk_norm"] == {"epsilon": 1e-6}


@pytest.mark.parametrize("kw, words", [
    (dict(qk_norm={"eps": 1e-6}), "qk_norm has unknown key 'eps'"),
    (dict(qk_norm=0.0), "epsilon must be a number in (0, 1]"),
    (dict(qk_norm="rms"), "qk_norm must be None, an epsilon"),
    (dict(rope=[10000]), "rope must be None or a dict"),
    (dict(rope={"theta": 1e4}), "rope has unknown key 'theta'"),
    (dict(rope={"layout": "neox"}), "layout must be \"half\" or \"interleaved\""),
    (dict(rope={"rotary_dim": 3}), "rotary_dim must be None or an even int in [2, head_dim = 6]"),
    (dict(rope={"rotary_dim": 8}), "rotary_dim must be None or an even int in [2, head_dim = 6]"),
    (dict(rope={"max_wavelength": 1}), "max_wavelength must be a finite number > 1"),
    (dict(rope={"scaling_factor": 0}), "scaling_factor must be a finite number > 0"),
    (dict(softcap=0), "softcap must be None or a finite number > 0"),
    (dict(softcap=float("inf")), "softcap must be None or a finite number > 0"),
    (dict(softcap=True), "softcap must be None or a finite number > 0"),
    (dict(use_sinks="yes"), "use_sinks must be True or False"),
])
def test_bad_options(kw, words):
    with pytest.raises(vkattn.InvalidArgumentError) as e:
        vkattn.GroupedQueryAttention(6, 2, 1, **kw)
    assert words in str(e.value)


def test_weight_shapes():
    """After Keras's weights (after output_bias): query_norm, key_norm (head width,),
    sinks (heads,); the references check them by name."""
    q = np.zeros((2, 3, 5), np.float32)
    v = np.zeros((2, 4, 7), np.float32)
    keras = [(5, 4, 3), (4, 3), (7, 2, 3), (2, 3), (7, 2, 3), (2, 3), (4, 3, 5), (5,)]
    weights = [np.zeros(s, np.float32) for s in keras]
    with pytest.raises(vkattn.InvalidArgumentError) as e:
        vkattn.reference.grouped_query_attention(
            q, v, head_dim=3, num_query_heads=4, num_key_value_heads=2, weights=weights,
            qk_norm=1e-6, use_sinks=True)
    assert "expected 11 weights" in str(e.value)
    assert "output_bias, query_norm, key_norm, sinks" in str(e.value)
    with pytest.raises(vkattn.InvalidArgumentError) as e:  # sinks: one per query head
        vkattn.reference.grouped_query_attention(
            q, v, head_dim=3, num_query_heads=4, num_key_value_heads=2,
            weights=weights + [np.ones(3), np.ones(3), np.zeros(2)], qk_norm=1e-6,
            use_sinks=True)
    assert "weight 10 (sinks) has shape (2,); expected (4,)" in str(e.value)
    # MultiHeadAttention's norms are key_dim wide, without biases too
    mha = vkattn.MultiHeadAttention(2, 3, value_dim=5, use_bias=False, qk_norm=1e-6,
                                    use_sinks=True)
    assert [(f, s) for f, s, _ in mha._spec.layout((4, 4, 4))][-3:] == \
        [("query_norm", (3,)), ("key_norm", (3,)), ("sinks", (2,))]


@pytest.mark.parametrize("kw, words", [
    (dict(query_positions=[[0, 1, 2]]), "query_positions is given but the layer has no rope"),
    (dict(rope={}, query_positions=[[0, -1, 2]]), "query_positions holds -1"),
    (dict(rope={}, key_positions=[[0, 1.5, 2, 3]]), "key_positions holds 1.5"),
    (dict(rope={}, key_positions=[[0, 2**24, 2, 3]]), "integers in [0, 2**24)"),
    (dict(rope={}, key_positions=[True, False, True, True]), "must hold integers"),
    (dict(rope={}, query_positions=[[0, 1]]), "query_positions has shape (1, 2); expected "
                                              "(B, Tq) = (1, 3)"),
])
def test_position_errors(kw, words):
    q, v = np.zeros((1, 3, 8), np.float32), np.zeros((1, 4, 8), np.float32)
    with pytest.raises(vkattn.InvalidArgumentError) as e:
        vkattn.reference.grouped_query_attention(q, v, **GQA, **kw)
    assert words in str(e.value)


@pytest.mark.parametrize("options", [
    dict(qk_norm=1e-6), dict(rope={}), dict(softcap=50.0), dict(use_sinks=True)])
def test_each_option_runs(ctx, options):
    """Each option alone: the layer's first call builds it and returns the output."""
    q = np.ones((1, 3, 8), np.float32)
    layer = vkattn.GroupedQueryAttention(**GQA, context=ctx, **options)
    assert layer(q, q).shape == (1, 3, 8)
    assert layer.built


def test_positions_with_cache_refused(ctx):
    layer = vkattn.GroupedQueryAttention(**GQA, context=ctx)
    with pytest.raises(vkattn.InvalidArgumentError) as e:
        layer(np.ones((1, 1, 8)), np.ones((1, 1, 8)), cache=object(), query_positions=[[3]])
    assert "do not apply with cache=" in str(e.value)


# ---------------------------------------------------------------- the numbers

def _weights(rng, dq, dk, dv, nq, nkv, h, qk_norm, sinks):
    w = [rng.uniform(-1, 1, s).astype(np.float32) for s in
         [(dq, nq, h), (nq, h), (dk, nkv, h), (nkv, h), (dv, nkv, h), (nkv, h), (nq, h, dq),
          (dq,)]]
    if qk_norm:
        w += [rng.uniform(0.5, 1.5, (h,)).astype(np.float32) for _ in range(2)]
    if sinks:
        w.append(rng.uniform(-1, 2, (nq,)).astype(np.float32))
    return w


_NAMES = ["query_kernel", "query_bias", "key_kernel", "key_bias", "value_kernel",
          "value_bias", "output_kernel", "output_bias"]

CASES = {
    "rope_half_positions": dict(rope={"rotary_dim": 4}, positions=True),
    "rope_interleaved_partial": dict(rope={"rotary_dim": 4, "layout": "interleaved",
                                           "max_wavelength": 500.0, "scaling_factor": 2.0}),
    "qk_norm": dict(qk_norm={"epsilon": 1e-6}),
    "softcap": dict(softcap=0.5),
    "sinks": dict(use_sinks=True),
    "all": dict(qk_norm={"epsilon": 1e-5}, rope={"max_wavelength": 1e6}, softcap=2.0,
                use_sinks=True),
}


def test_numpy_implementation_reduces_to_npref(rng):
    """The generator's implementation with each option at a neutral value (rope at
    position 0 everywhere, a softcap far above the scores, sinks far below them) is
    npref.gqa's layer: its shared parts are right before the library is held to it."""
    import npref
    b, tq, tv, dq, dk, dv, nq, nkv, h = 2, 3, 5, 7, 6, 5, 4, 2, 6
    q = rng.uniform(-1, 1, (b, tq, dq))
    k = rng.uniform(-1, 1, (b, tv, dk))
    v = rng.uniform(-1, 1, (b, tv, dv))
    w = _weights(rng, dq, dk, dv, nq, nkv, h, False, True)
    want, want_p = npref.gqa(q, v, k, w[:8], nq, nkv, h, causal=True)
    got, got_p = gen.gqa(q, v, k, dict(zip(_NAMES + ["sinks"], w[:8] + [w[8] - 1e4])), nq,
                         nkv, h, rope=ROPE, softcap=1e9, use_sinks=True,
                         qpos=np.zeros((b, tq)), kpos=np.zeros((b, tv)), causal=True)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(got_p, want_p, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", sorted(CASES))
def test_numbers(ctx, rng, name):
    """The reference against numpy (float64), then the layer against both: GQA, Nq 4
    sharing Nkv 2, head_dim 6, cross-attention, causal, scores returned."""
    opts = dict(CASES[name])
    positions = opts.pop("positions", False)
    b, tq, tv, dq, dk, dv, nq, nkv, h = 2, 3, 5, 7, 6, 5, 4, 2, 6
    q = rng.uniform(-1, 1, (b, tq, dq)).astype(np.float32)
    k = rng.uniform(-1, 1, (b, tv, dk)).astype(np.float32)
    v = rng.uniform(-1, 1, (b, tv, dv)).astype(np.float32)
    w = _weights(rng, dq, dk, dv, nq, nkv, h, "qk_norm" in opts, opts.get("use_sinks"))
    kw = {}
    if positions:  # a prompt's later chunk: queries after the keys
        kw = dict(query_positions=np.array([[7, 8, 9], [0, 1, 30]]),
                  key_positions=np.array([[5, 6, 7, 8, 9], [0, 1, 2, 3, 30]]))
    names = _NAMES + (["query_norm", "key_norm"] if "qk_norm" in opts else []) + \
        (["sinks"] if opts.get("use_sinks") else [])
    want, want_p = gen.gqa(q, v, k, dict(zip(names, w)), nq, nkv, h, True,
                           opts.get("qk_norm"), opts.get("rope"), opts.get("softcap"),
                           opts.get("use_sinks", False), kw.get("query_positions"),
                           kw.get("key_positions"), causal=True)
    shape = dict(head_dim=h, num_query_heads=nq, num_key_value_heads=nkv)
    ref, ref_p = vkattn.reference.grouped_query_attention(
        q, v, k, **shape, **opts, weights=w, use_causal_mask=True,
        return_attention_scores=True, **kw)
    assert_close(ref, want, rtol=1e-6, atol=1e-6)
    assert_close(ref_p, want_p, rtol=1e-6, atol=1e-6)
    layer = vkattn.GroupedQueryAttention(**shape, **opts, context=ctx)
    layer.build(q.shape, v.shape, k.shape)
    layer.set_weights(w)
    out, p = layer(q, v, k, use_causal_mask=True, return_attention_scores=True, **kw)
    assert_close(out, want)
    assert_close(p, want_p)


def test_sinks_stay_f32_in_a_float16_layer(ctx, rng):
    layer = vkattn.GroupedQueryAttention(**GQA, qk_norm=1e-6, use_sinks=True,
                                         dtype="float16", context=ctx)
    layer.build((1, 2, 8), (1, 2, 8))
    w = layer.get_weights()
    assert [a.dtype for a in w[-3:]] == [np.float16, np.float16, np.float32]
    np.testing.assert_array_equal(w[-3], 1.0)  # a new layer's norms: ones
    np.testing.assert_array_equal(w[-1], 0.0)  # and sinks: zeros
    w[-1] = np.float32([0.1, 0.2, 0.3, 1e-4])  # not f16 values: kept exactly
    layer.set_weights(w)
    assert layer.get_weights()[-1].tolist() == np.float32([0.1, 0.2, 0.3, 1e-4]).tolist()
