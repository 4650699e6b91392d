"""What a Keras user reaches for on every layer: get_config() / from_config(),
compute_output_shape(), dtype="float16" and "bfloat16", and safetensors save_weights() /
load_weights() (Keras names; Llama names for GroupedQueryAttention)."""
import json
import struct

import numpy as np
import pytest

import vkattn
from conftest import assert_close

# (make, query shape, value shape): every layer, small
LAYERS = {
    "Attention": (lambda **kw: vkattn.Attention(use_scale=True, score_mode="concat", **kw),
                  (2, 3, 4), (2, 5, 4)),
    "AdditiveAttention": (lambda **kw: vkattn.AdditiveAttention(dropout=0.25, **kw),
                          (2, 3, 4), (2, 5, 4)),
    "BahdanauAttention": (lambda **kw: vkattn.BahdanauAttention(5, **kw), (2, 3), (2, 5, 4)),
    "MultiHeadAttention": (lambda **kw: vkattn.MultiHeadAttention(
        3, 2, 4, output_shape=5, sliding_window=3, **kw), (2, 3, 6), (2, 5, 4)),
    "GroupedQueryAttention": (lambda **kw: vkattn.GroupedQueryAttention(
        2, 4, 2, use_bias=False, sliding_window=2, **kw), (2, 3, 6), (2, 5, 4)),
}


def _random_weights(layer, rng):
    return [(rng.standard_normal(w.shape) / np.sqrt(max(1, w.shape[0] if w.ndim else 1)))
            .astype(np.float32) for w in layer.get_weights()]


def _built(name, ctx, rng, **kw):
    make, qs, vs = LAYERS[name]
    layer = make(context=ctx, **kw)
    layer.build(qs, vs)
    weights = _random_weights(layer, rng)
    layer.set_weights(weights)
    return layer, weights, qs, vs


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_config_round_trip(ctx, rng, name):
    layer, weights, qs, vs = _built(name, ctx, rng, seed=7)
    config = layer.get_config()
    assert config["seed"] == 7 and config["dtype"] == "float32"
    json.dumps(config)  # plain values, as Keras's configs
    clone = type(layer).from_config(dict(config, name="x", trainable=True), context=ctx)
    assert clone.get_config() == config and not clone.built
    clone.build(qs, vs)
    clone.set_weights(weights)
    q, v = rng.standard_normal(qs), rng.standard_normal(vs)
    inputs = (q, v) if name in ("MultiHeadAttention", "GroupedQueryAttention") else ([q, v],)
    np.testing.assert_array_equal(layer(*inputs, training=True), clone(*inputs, training=True))
    policy = {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float16"}}
    assert type(layer).from_config(dict(config, dtype=policy)).dtype == "float16"  # Keras 3's
    with pytest.raises(vkattn.InvalidArgumentError, match="from_config.*bogus"):
        type(layer).from_config(dict(config, bogus=1))
    # a layer made with seed=None reports the seed it drew, so its clone drops the same
    assert isinstance(LAYERS[name][0]().get_config()["seed"], int)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_compute_output_shape(ctx, rng, name):
    make, qs, vs = LAYERS[name]
    layer = make(context=ctx)
    q, v = rng.standard_normal(qs), rng.standard_normal(vs)
    multi = name in ("MultiHeadAttention", "GroupedQueryAttention")
    out = layer(q, v) if multi else layer([q, v])
    none_batch = (None,) + qs[1:]
    if multi:
        assert layer.compute_output_shape(qs, vs) == out.shape
        assert layer.compute_output_shape(none_batch, (None, None, vs[-1]))[0] is None
        with pytest.raises(vkattn.InvalidArgumentError, match="built for"):
            layer.compute_output_shape(qs[:-1] + (qs[-1] + 1,), vs)
    else:
        assert layer.compute_output_shape([qs, vs]) == out.shape
        assert layer.compute_output_shape([none_batch, vs])[0] is None
        with pytest.raises(vkattn.InvalidArgumentError, match="query_shape must be a shape"):
            layer.compute_output_shape(qs)  # one shape, not [query_shape, value_shape]


# The 16-bit policies: numpy's array type of the dtype (bfloat16: bit patterns in
# uint16, vkattn.bfloat16), its values as float32, and the bound of the layers'
# output against the f32 layer on the same rounded inputs and weights: 8 spacings
# at 1 (docs/SEMANTICS.md: f16's 8 eps16; bf16's twin, 8 significand bits).
HALF = {
    "float16": (np.float16, lambda a: np.asarray(a, np.float16),
                lambda a: np.asarray(a).astype(np.float32), 8 * 2.0**-10),
    "bfloat16": (np.uint16, vkattn.bfloat16.from_float32,
                 lambda a: vkattn.bfloat16.to_float32(a) if a.dtype == np.uint16 else a,
                 8 * 2.0**-7),
}


@pytest.mark.parametrize("dtype", sorted(HALF))
@pytest.mark.parametrize("name", sorted(LAYERS))
def test_half_dtypes(ctx, rng, name, dtype):
    """dtype="float16" or "bfloat16" as Keras's policy of that name: outputs and
    weights of the dtype (bfloat16 as uint16 bit patterns, which inputs may be too),
    within the bound above of the f32 layer on the rounded inputs and weights
    (get_weights returns the rounded weights)."""
    storage, to_storage, values, bound = HALF[dtype]
    layer, weights, qs, vs = _built(name, ctx, rng, dtype=dtype)
    assert layer.dtype == dtype and layer.get_config()["dtype"] == dtype
    names = [f for f, _, _ in layer._spec.layout(layer._widths)]
    for n, got, w in zip(names, layer.get_weights(), weights):  # kept in the dtype
        if n != "score_bias":  # Bahdanau keeps its score bias in f32 (vkattn/bahdanau.h)
            np.testing.assert_array_equal(got, to_storage(w))
        # as Keras's policy: arrays of the dtype, but for what the layer keeps in f32
        assert got.dtype == (np.float32 if n == "score_bias" else storage), (n, got.dtype)
    again = type(layer).from_config(layer.get_config(), context=ctx)
    again.build(qs, vs)
    again.set_weights(layer.get_weights())  # a round trip changes nothing
    for got, want in zip(again.get_weights(), layer.get_weights()):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    assert any(not np.array_equal(values(got), w)
               for got, w in zip(layer.get_weights(), weights))
    q = to_storage(rng.standard_normal(qs).astype(np.float32))
    v = to_storage(rng.standard_normal(vs).astype(np.float32))
    multi = name in ("MultiHeadAttention", "GroupedQueryAttention")
    out = layer(q, v) if multi else layer([q, v])
    assert out.dtype == storage
    ref_layer = type(layer).from_config(dict(layer.get_config(), dtype="float32"), context=ctx)
    ref_layer.build(qs, vs)
    ref_layer.set_weights([values(w) for w in layer.get_weights()])
    qf, vf = values(q), values(v)
    want = ref_layer(qf, vf) if multi else ref_layer([qf, vf])
    assert_close(values(out), want, rtol=0, atol=bound)


def _write_safetensors(path, tensors):
    """A minimal safetensors writer (F32), independent of the library's."""
    header, data = {}, b""
    for name, a in tensors.items():
        a = np.ascontiguousarray(a, "<f4")
        header[name] = {"dtype": "F32", "shape": list(a.shape),
                        "data_offsets": [len(data), len(data) + a.nbytes]}
        data += a.tobytes()
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    path.write_bytes(struct.pack("<Q", len(h)) + h + data)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_save_load_round_trip(ctx, rng, tmp_path, name):
    layer, weights, qs, vs = _built(name, ctx, rng)
    path = tmp_path / "layer.safetensors"
    layer.save_weights(path, prefix="block.0.")
    fresh = LAYERS[name][0](context=ctx)
    with pytest.raises(vkattn.InvalidArgumentError, match="not built"):
        fresh.load_weights(path, prefix="block.0.")
    fresh.build(qs, vs)
    fresh.load_weights(str(path), prefix="block.0.")
    for got, want in zip(fresh.get_weights(), weights):
        np.testing.assert_array_equal(got, want)  # bit for bit (F32)
    with pytest.raises(vkattn.InvalidArgumentError, match="block.1."):
        fresh.load_weights(path, prefix="block.1.")  # a missing tensor, named
    with pytest.raises(vkattn.InvalidArgumentError, match="names must be one of"):
        fresh.load_weights(path, names="jax")
    with pytest.raises(FileNotFoundError, match="load_weights: no such file"):
        fresh.load_weights(tmp_path / "missing.safetensors")


@pytest.mark.parametrize("use_bias", [True, False])
def test_gqa_loads_llama_names(ctx, rng, tmp_path, use_bias):
    """A Hugging Face Llama attention block: q/k/v/o_proj Linear (out, in) weights."""
    hd, nq, nkv, dq = 2, 4, 2, 6
    layer = vkattn.GroupedQueryAttention(hd, nq, nkv, use_bias=use_bias, context=ctx)
    layer.build((1, 3, dq), (1, 3, dq))
    want = _random_weights(layer, rng)
    w = dict(zip(["query_kernel", "query_bias", "key_kernel", "key_bias", "value_kernel",
                  "value_bias", "output_kernel", "output_bias"] if use_bias else
                 ["query_kernel", "key_kernel", "value_kernel", "output_kernel"], want))
    p = "model.layers.0.self_attn."
    tensors = {p + "q_proj.weight": w["query_kernel"].reshape(dq, -1).T,
               p + "k_proj.weight": w["key_kernel"].reshape(dq, -1).T,
               p + "v_proj.weight": w["value_kernel"].reshape(dq, -1).T,
               p + "o_proj.weight": w["output_kernel"].reshape(-1, dq).T}
    if use_bias:
        tensors.update({p + "q_proj.bias": w["query_bias"].reshape(-1),
                        p + "k_proj.bias": w["key_bias"].reshape(-1),
                        p + "v_proj.bias": w["value_bias"].reshape(-1),
                        p + "o_proj.bias": w["output_bias"]})
    path = tmp_path / "llama.safetensors"
    _write_safetensors(path, tensors)
    layer.load_weights(path, names="llama", prefix=p)
    for got, exp in zip(layer.get_weights(), want):
        np.testing.assert_array_equal(got, exp)
    with pytest.raises(vkattn.InvalidArgumentError, match="q_proj"):
        layer.load_weights(path, names="llama")  # no prefix: the names are not there


MULTI = ("MultiHeadAttention", "GroupedQueryAttention")
REFERENCES = {"Attention": vkattn.reference.attention,
              "AdditiveAttention": vkattn.reference.additive_attention,
              "BahdanauAttention": vkattn.reference.bahdanau_attention,
              "MultiHeadAttention": vkattn.reference.multi_head_attention,
              "GroupedQueryAttention": vkattn.reference.grouped_query_attention}


@pytest.mark.parametrize("name", sorted(LAYERS))
@pytest.mark.parametrize("with_key", [False, True])
def test_gradients(ctx, rng, name, with_key):
    """gradients() on the device against the library's double reference backward, with
    dropout in training, a value mask and causal (bound 2e-4 * max(1, max|ref|), as
    tests/gpu/test_mha_backward.c)."""
    make, qs, vs = LAYERS[name]
    config = dict(make().get_config(), dropout=0.2, seed=5)
    layer = type(make()).from_config(config, context=ctx)
    ks = vs[:-1] + ((qs[-1],) if name in ("Attention", "AdditiveAttention") else (3,))
    q, v = rng.standard_normal(qs), rng.standard_normal(vs)
    k = rng.standard_normal(ks) if with_key else None
    layer.build(qs, vs, ks if with_key else None)
    weights = _random_weights(layer, rng)
    layer.set_weights(weights)
    vm = rng.random(vs[:2]) < 0.8
    g = rng.standard_normal(layer.compute_output_shape(qs, vs, ks if with_key else None)
                            if name in MULTI else
                            layer.compute_output_shape([qs, vs] + ([ks] if with_key else [])))
    kw = dict(training=True, use_causal_mask="bottom_right", seed=3, offset=1)
    if name in MULTI:
        got_in, got_w = layer.gradients(q, v, k, value_mask=vm, grad_output=g, **kw)
    else:
        got_in, got_w = layer.gradients([q, v] + ([k] if with_key else []), mask=[None, vm],
                                        grad_output=g, **kw)
    ref_config = {n: x for n, x in config.items()
                  if n not in ("seed", "dtype", "kernel_initializer", "bias_initializer")}
    want_in, want_w = REFERENCES[name](q, v, k, weights=weights, value_mask=vm,
                                       grad_output=g, **kw, **ref_config)
    assert len(got_in) == (3 if with_key else 2) == len(want_in)
    assert [w.shape for w in got_w] == [w.shape for w in weights] == [w.shape for w in want_w]
    for got, want in zip(got_in + got_w, want_in + want_w):
        assert_close(got, want, rtol=0, atol=2e-4)
    with pytest.raises(vkattn.InvalidArgumentError, match="grad_output must have"):
        if name in MULTI:
            layer.gradients(q, v, k, grad_output=g[:1])
        else:
            layer.gradients([q, v], grad_output=g[:1])


def test_gqa_gradients_sum_the_group(ctx, rng):
    """GQA's key/value weight gradients are MHA's (repeated kernels) summed per group."""
    import npref
    hd, nq, nkv, b, t, d = 2, 4, 2, 2, 5, 6
    x = rng.standard_normal((b, t, d))
    gqa = vkattn.GroupedQueryAttention(hd, nq, nkv, context=ctx)
    gqa.build(x.shape, x.shape)
    weights = _random_weights(gqa, rng)
    gqa.set_weights(weights)
    mha = vkattn.MultiHeadAttention(nq, hd, context=ctx)
    mha.build(x.shape, x.shape)
    mha.set_weights(npref.repeat_kv_heads(weights, nq // nkv))
    g = rng.standard_normal((b, t, d))
    g_in, g_w = gqa.gradients(x, x, grad_output=g, use_causal_mask=True)
    m_in, m_w = mha.gradients(x, x, grad_output=g, use_causal_mask=True)
    for a, m in zip(g_in, m_in):
        assert_close(a, m, rtol=0, atol=2e-4)
    for i, (a, m) in enumerate(zip(g_w, m_w)):
        if i in (2, 3, 4, 5):  # key/value kernel and bias: sum over each group's heads
            m = m.reshape(m.shape[:-2] + (nkv, nq // nkv, hd)).sum(-2)
        assert_close(a, m, rtol=0, atol=2e-4)


def test_mha_loads_torch_names(ctx, rng, tmp_path):
    """A PyTorch nn.MultiheadAttention(E=6, H=2) state dict (packed in_proj)."""
    e, h = 6, 2
    layer = vkattn.MultiHeadAttention(h, e // h, context=ctx)
    layer.build((1, 3, e), (1, 4, e))
    want = _random_weights(layer, rng)
    wq, bq, wk, bk, wv, bv, wo, bo = want
    p = "encoder.layers.0.self_attn."
    _write_safetensors(tmp_path / "torch.safetensors", {
        p + "in_proj_weight": np.concatenate([w.reshape(e, e).T for w in (wq, wk, wv)]),
        p + "in_proj_bias": np.concatenate([b.reshape(-1) for b in (bq, bk, bv)]),
        p + "out_proj.weight": wo.reshape(e, e).T, p + "out_proj.bias": bo})
    layer.load_weights(tmp_path / "torch.safetensors", names="torch", prefix=p)
    for got, exp in zip(layer.get_weights(), want):
        np.testing.assert_array_equal(got, exp)


@pytest.mark.parametrize("dtype", sorted(HALF))
@pytest.mark.parametrize("name", ["Attention", "BahdanauAttention", "GroupedQueryAttention"])
def test_gradients_half(ctx, rng, name, dtype):
    """A float16 or bfloat16 layer's gradients are of its dtype (bfloat16: uint16 bit
    patterns), against the double reference run on the rounded inputs, weights and
    grad_output: 8 spacings at 1 of max(max|ref|, 0.1) (HALF's bound), the bound of
    tests/gpu/test_mha_backward.c (the single-head layers are within half a spacing
    more than their f32 bound)."""
    storage, to_storage, values, bound = HALF[dtype]
    make, qs, vs = LAYERS[name]
    config = dict(make().get_config(), dtype=dtype)
    layer = type(make()).from_config(config, context=ctx)
    # what tensors of the dtype hold, and what the reference reads of them
    held = lambda x: to_storage(x.astype(np.float32))
    as64 = lambda x: values(x).astype(np.float64)
    q, v = held(rng.standard_normal(qs)), held(rng.standard_normal(vs))
    layer.build(qs, vs, None)
    weights = [held(w) for w in _random_weights(layer, rng)]
    layer.set_weights(weights)
    out_shape = (layer.compute_output_shape(qs, vs, None) if name in MULTI
                 else layer.compute_output_shape([qs, vs]))
    g = held(rng.standard_normal(out_shape))
    if name in MULTI:
        got_in, got_w = layer.gradients(q, v, grad_output=g, use_causal_mask=True)
    else:
        got_in, got_w = layer.gradients([q, v], grad_output=g, use_causal_mask=True)
    ref_config = {n: x for n, x in config.items()
                  if n not in ("seed", "dtype", "kernel_initializer", "bias_initializer")}
    want_in, want_w = REFERENCES[name](as64(q), as64(v), None,
                                       weights=[as64(w) for w in weights],
                                       grad_output=as64(g), use_causal_mask=True,
                                       **ref_config)
    assert len(got_in + got_w) == len(want_in + want_w)
    for got, want in zip(got_in + got_w, want_in + want_w):
        assert got.dtype == storage and got.shape == np.shape(want)
        err = np.max(np.abs(as64(got) - want))
        assert err <= bound * max(0.1, float(np.max(np.abs(want)))), err
