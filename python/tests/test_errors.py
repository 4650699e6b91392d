"""Failures raise vkattn.Error subclasses carrying the library's own message (the
sentence vkattn_last_error returns, naming the function and the argument)."""
import numpy as np
import pytest

import vkattn


def test_error_classes():
    assert issubclass(vkattn.InvalidArgumentError, vkattn.Error)
    assert issubclass(vkattn.InvalidArgumentError, ValueError)
    e = vkattn.UnsupportedError("x", -6)
    assert (e.code, e.name, e.message) == (-6, "VKATTN_ERROR_UNSUPPORTED", "x")


def test_create_error_has_library_message(ctx):
    # 4 x 8192 x 65536 floats per kernel (8 GiB): past any device's maxStorageBufferRange
    mha = vkattn.MultiHeadAttention(8192, 65536, context=ctx)
    with pytest.raises(vkattn.DeviceLimitError) as info:
        mha(np.ones((2, 3, 4)), np.ones((2, 5, 4)))
    e = info.value
    assert e.code == -8 and e.name == "VKATTN_ERROR_DEVICE_LIMIT"
    assert "vkattn_mha_create" in str(e) and "maxStorageBufferRange" in str(e)
    assert not mha.built  # a failed build leaves the layer unbuilt


_LAYERS = {
    "Attention": lambda **kw: vkattn.Attention(**kw),
    "AdditiveAttention": lambda **kw: vkattn.AdditiveAttention(**kw),
    "BahdanauAttention": lambda **kw: vkattn.BahdanauAttention(2, **kw),
    "MultiHeadAttention": lambda **kw: vkattn.MultiHeadAttention(2, 4, **kw),
    "GroupedQueryAttention": lambda **kw: vkattn.GroupedQueryAttention(4, 4, 2, **kw),
}


@pytest.mark.parametrize("layer", sorted(_LAYERS))
@pytest.mark.parametrize("dropout", [1.5, -0.1, float("nan"), float("inf"), True, "0.1", None])
def test_dropout_checked_at_construction(layer, dropout):
    # a ValueError naming the argument when the layer is made (no context, no
    # call), as Keras does, not at the first call
    with pytest.raises(ValueError, match=r"%s: dropout must be a number in \[0, 1\]"
                       % layer) as info:
        _LAYERS[layer](dropout=dropout)
    assert isinstance(info.value, vkattn.InvalidArgumentError)


@pytest.mark.parametrize("layer", sorted(_LAYERS))
def test_constructor_arguments_checked(layer):
    for seed in (-1, 2**64, 1.5, "7", True):
        with pytest.raises(vkattn.InvalidArgumentError, match=r"%s: seed must be" % layer):
            _LAYERS[layer](seed=seed)
    flags = {"Attention": "use_scale", "AdditiveAttention": "use_scale",
             "MultiHeadAttention": "use_bias", "GroupedQueryAttention": "use_bias"}
    if layer in flags:
        for bad in ("False", None, 2, 0.5):
            with pytest.raises(vkattn.InvalidArgumentError,
                               match=r"%s: %s must be True or False" % (layer, flags[layer])):
                _LAYERS[layer](**{flags[layer]: bad})
    # the edges of what is allowed
    for ok in (0.0, 1.0, np.float32(0.5), 0):
        _LAYERS[layer](dropout=ok, seed=2**64 - 1)
    if layer in flags:
        _LAYERS[layer](**{flags[layer]: np.bool_(False)})


def test_bad_shapes(ctx, rng):
    # named as the Python arguments are (more in test_footguns.py)
    mha = vkattn.MultiHeadAttention(2, 4, context=ctx)
    q = rng.standard_normal((2, 3, 6))
    with pytest.raises(vkattn.InvalidArgumentError,
                       match=r"value has shape \(3, 5, 6\); its batch must be query's, 2"):
        mha(q, rng.standard_normal((3, 5, 6)))
    with pytest.raises(vkattn.InvalidArgumentError, match=r"query has shape \(2, 6\).*rank"):
        mha(q[:, 0], q)
    with pytest.raises(vkattn.InvalidArgumentError,
                       match=r"query_mask has shape \(2, 4\); expected \(B, Tq\) = \(2, 3\)"):
        mha(q, q, query_mask=np.ones((2, 4)))
    with pytest.raises(vkattn.InvalidArgumentError,
                       match=r"attention_mask has shape \(2, 2, 3\), which does not broadcast"):
        mha(q, q, attention_mask=np.ones((2, 2, 3)))


def test_wrong_width_after_build(ctx, rng):
    att = vkattn.AdditiveAttention(context=ctx)
    att([rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4))])
    with pytest.raises(vkattn.InvalidArgumentError, match=r"query has width 5.*query_width 4"):
        att([rng.standard_normal((2, 3, 5)), rng.standard_normal((2, 5, 4))])
    # other lengths and batch sizes are fine
    assert att([rng.standard_normal((1, 7, 4)), rng.standard_normal((1, 2, 4))]).shape \
        == (1, 7, 4)


def test_set_weights_checks(ctx, rng):
    mha = vkattn.MultiHeadAttention(2, 4, use_bias=False, context=ctx)
    with pytest.raises(vkattn.InvalidArgumentError, match="not built"):
        mha.set_weights([])
    mha.build((1, 2, 3), (1, 2, 3))
    with pytest.raises(vkattn.InvalidArgumentError, match="expected 4 weights"):
        mha.set_weights([np.zeros((3, 2, 4))])
    good = mha.get_weights()
    good[1] = np.zeros((3, 2, 5))
    with pytest.raises(vkattn.InvalidArgumentError, match=r"weight 1 \(key_kernel\)"):
        mha.set_weights(good)


def test_bahdanau_nonfinite_bias_is_a_library_error(ctx):
    bah = vkattn.BahdanauAttention(3, context=ctx)
    bah.build((1, 2), (1, 4, 2))
    w = bah.get_weights()
    w[3] = np.array([np.inf], np.float32)
    with pytest.raises(vkattn.InvalidArgumentError, match="vkattn_bahdanau_set_weights"):
        bah.set_weights(w)


def test_constructor_arguments():
    with pytest.raises(vkattn.InvalidArgumentError, match="score_mode"):
        vkattn.Attention(score_mode="general")
    with pytest.raises(vkattn.InvalidArgumentError, match="num_heads"):
        vkattn.MultiHeadAttention(0, 4)
    with pytest.raises(vkattn.InvalidArgumentError, match="output_shape"):
        vkattn.MultiHeadAttention(2, 4, output_shape=(3, 4))
    with pytest.raises(vkattn.InvalidArgumentError, match="units"):
        vkattn.BahdanauAttention(units=2.5)


def test_reference_errors():
    with pytest.raises(vkattn.InvalidArgumentError, match=r"dropout must be a number in \[0, 1\]"):
        vkattn.reference.attention(np.ones((1, 2, 3)), np.ones((1, 2, 3)), dropout=2.0)
