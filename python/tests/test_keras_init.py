"""Keras's initial weights and configs: a new layer's weights are Keras's default
initialization (glorot_uniform kernels with Keras 3.15's EinsumDense fans, zero
biases), drawn by the library from a seed; kernel_initializer/bias_initializer take
Keras's names and config dicts; from_config takes the dicts Keras 3.15's
get_config() writes for MultiHeadAttention and GroupedQueryAttention (written out
literally below), and refuses only what vkattn cannot honour, naming the key.
The C side's statistics are tests/gpu/test_layer_init.c's; here the bounds only."""
import copy
import math

import numpy as np
import pytest

import vkattn

F32_SLACK = 1 + 2.0**-23  # the draw is rounded to f32

POLICY = {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"},
          "registered_name": None}
GLOROT = {"module": "keras.initializers", "class_name": "GlorotUniform",
          "config": {"seed": None, "input_axes": None, "output_axes": None},
          "registered_name": None}
ZEROS = {"module": "keras.initializers", "class_name": "Zeros", "config": {},
         "registered_name": None}

# keras.layers.MultiHeadAttention(num_heads=2, key_dim=8).get_config() in Keras 3.15,
# after its first call on (B, T, 16) inputs (build sets attention_axes to (1,))
KERAS_MHA = {
    "name": "multi_head_attention", "trainable": True, "dtype": POLICY,
    "num_heads": 2, "key_dim": 8, "value_dim": 8, "dropout": 0.0, "use_bias": True,
    "use_gate": False, "output_shape": None, "attention_axes": (1,), "sliding_window": None,
    "kernel_initializer": GLOROT, "bias_initializer": ZEROS, "kernel_regularizer": None,
    "bias_regularizer": None, "activity_regularizer": None, "kernel_constraint": None,
    "bias_constraint": None, "seed": None,
}
# keras.layers.GroupQueryAttention(head_dim=8, num_query_heads=4, num_key_value_heads=2)
KERAS_GQA = {
    "name": "group_query_attention", "trainable": True, "dtype": POLICY,
    "head_dim": 8, "num_query_heads": 4, "num_key_value_heads": 2, "use_bias": True,
    "use_gate": False, "sliding_window": None, "dropout": 0.0,
    "kernel_initializer": GLOROT, "bias_initializer": ZEROS, "kernel_regularizer": None,
    "bias_regularizer": None, "activity_regularizer": None, "kernel_constraint": None,
    "bias_constraint": None, "seed": None,
}


def _fans(shape, name):
    """Keras 3.15's fans of a weight: EinsumDense kernels contract their first axis
    (the output projection its first two), other weights compute_fans(shape)."""
    if "kernel" in name:
        k = 2 if name.startswith("output") else 1
        return int(np.prod(shape[:k])), int(np.prod(shape[k:]))
    return (shape[0], shape[-1]) if shape else (1, 1)


def _check_keras_start(layer, names):
    weights = layer.get_weights()
    assert len(weights) == len(names)
    for w, name in zip(weights, names):
        if "bias" in name:
            assert not w.any(), name
            continue
        fan_in, fan_out = _fans(w.shape, name)
        limit = math.sqrt(6.0 / (fan_in + fan_out))
        assert np.abs(w).max() <= limit * F32_SLACK, name
        assert np.abs(w).max() > 0.8 * limit, name  # the whole range, not a narrower one


MHA_NAMES = ["query_kernel", "query_bias", "key_kernel", "key_bias", "value_kernel",
             "value_bias", "output_kernel", "output_bias"]


@pytest.mark.parametrize("json", [False, True])
def test_keras_mha_config(ctx, rng, json):
    config = copy.deepcopy(KERAS_MHA)
    if json:  # as model.to_json() stores it: tuples become lists
        config["attention_axes"] = [1]
    layer = vkattn.MultiHeadAttention.from_config(config, context=ctx)
    q = rng.standard_normal((2, 5, 16)).astype(np.float32)
    out = layer(q, q)
    assert out.shape == (2, 5, 16) and np.count_nonzero(out) > out.size // 2
    _check_keras_start(layer, MHA_NAMES)


def test_keras_gqa_config(ctx, rng):
    layer = vkattn.GroupedQueryAttention.from_config(copy.deepcopy(KERAS_GQA), context=ctx)
    q = rng.standard_normal((1, 3, 12)).astype(np.float32)
    v = rng.standard_normal((1, 4, 6)).astype(np.float32)
    out = layer(q, v)
    assert out.shape == (1, 3, 12) and np.count_nonzero(out) > out.size // 2
    _check_keras_start(layer, MHA_NAMES)


@pytest.mark.parametrize("key,value", [
    ("kernel_regularizer", {"module": "keras.regularizers", "class_name": "L2",
                            "config": {"l2": 0.01}, "registered_name": None}),
    ("bias_constraint", {"module": "keras.constraints", "class_name": "NonNeg", "config": {},
                         "registered_name": None}),
    ("activity_regularizer", "l2"),
    ("attention_axes", (2,)),
    ("kernel_initializer", "orthogonal"),
    ("bias_initializer", {"class_name": "GlorotUniform", "config": {"seed": None,
                                                                    "input_axes": [0]}}),
])
def test_refused_names_the_key(ctx, key, value):
    config = dict(KERAS_MHA, **{key: value})
    with pytest.raises(vkattn.InvalidArgumentError, match=key):
        vkattn.MultiHeadAttention.from_config(config, context=ctx)


def test_unknown_key_refused(ctx):
    with pytest.raises(vkattn.InvalidArgumentError, match="nonsense"):
        vkattn.GroupedQueryAttention.from_config(dict(KERAS_GQA, nonsense=1), context=ctx)


def _built_weights(layer, dq=16):
    layer.build((1, 2, dq), (1, 3, dq))
    return layer.get_weights()


def test_seeds(ctx):
    a = _built_weights(vkattn.MultiHeadAttention(2, 8, seed=11, context=ctx))
    b = _built_weights(vkattn.MultiHeadAttention(2, 8, seed=11, context=ctx))
    c = _built_weights(vkattn.MultiHeadAttention(2, 8, seed=12, context=ctx))
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[0], c[0])
    # an initializer's own seed wins over the layer's (dropout) seed
    init = {"class_name": "GlorotUniform", "config": {"seed": 5}}
    d = _built_weights(vkattn.MultiHeadAttention(2, 8, seed=1, kernel_initializer=init,
                                                 context=ctx))
    e = _built_weights(vkattn.MultiHeadAttention(2, 8, seed=2, kernel_initializer=init,
                                                 context=ctx))
    assert np.array_equal(d[0], e[0])
    # get_config records the seed drawn for seed=None: from_config gives the same weights
    f = vkattn.MultiHeadAttention(2, 8, context=ctx)
    g = vkattn.MultiHeadAttention.from_config(f.get_config(), context=ctx)
    assert all(np.array_equal(x, y) for x, y in zip(_built_weights(f), _built_weights(g)))


@pytest.mark.parametrize("name,scale,mode", [
    ("he_uniform", 2, "in"), ("lecun_uniform", 1, "in"), ("GlorotNormal", 1, "avg"),
    ("he_normal", 2, "in"), ("lecun_normal", 1, "in"),
])
def test_initializers(ctx, name, scale, mode):
    w = _built_weights(vkattn.MultiHeadAttention(2, 8, kernel_initializer=name,
                                                 bias_initializer="ones", seed=3, context=ctx))
    n = 16 if mode == "in" else (16 + 16) / 2  # query kernel (16, 2, 8): fans 16 and 16
    var = scale / n
    limit = (2 * math.sqrt(var) / 0.87962566103423978 if "normal" in name.lower()
             else math.sqrt(3 * var))
    assert np.abs(w[0]).max() <= limit * F32_SLACK
    assert abs(np.mean(w[0] ** 2) / var - 1) < 0.3  # 256 draws: loose
    assert np.all(w[1] == 1)


def test_other_layers_start_as_keras(ctx):
    add = vkattn.AdditiveAttention(seed=4, context=ctx)
    add.build((1, 2, 6), (1, 2, 6))
    (scale,) = add.get_weights()
    assert np.abs(scale).max() <= math.sqrt(6 / 12) * F32_SLACK and scale.any()
    bah = vkattn.BahdanauAttention(4, seed=4, context=ctx)
    bah.build((1, 3), (1, 2, 5))
    wq, wk, sv, sb = bah.get_weights()
    assert np.abs(wq).max() <= math.sqrt(6 / 7) * F32_SLACK and wq.any()
    assert np.abs(wk).max() <= math.sqrt(6 / 9) * F32_SLACK and wk.any()
    assert np.abs(sv).max() <= math.sqrt(6 / 5) * F32_SLACK and sb[0] == 0
