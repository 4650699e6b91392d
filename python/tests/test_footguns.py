"""What users hit first (issue 37): shapes that disagree with each other, a float
mask that is really an additive bias, PyTorch's key_padding_mask polarity and a
missing weights file. Each is refused with a message that names the Python
argument (never a C struct field such as io->value), before any device work, and
for the CPU references too (they read raw pointers: a wrong shape would read
past an array)."""
import numpy as np
import pytest

import vkattn
from conftest import assert_close

Err = vkattn.InvalidArgumentError


def _no_c_names(info):
    assert "io->" not in str(info.value) and "params->" not in str(info.value), str(info.value)


# ---------------------------------------------------------------- sdpa shapes

# q is (2, 2, 4, 8) (rank 3: (2, 4, 8)); each k and v below holds at least the elements
# the call needs, so the library's element counts let them through
SDPA_SHAPES = [
    # name, k shape, v shape, message
    ("k_width", (2, 2, 5, 16), (2, 2, 5, 8),
     r"sdpa: k has shape \(2, 2, 5, 16\); its last dim \(dk\) must be q's, 8"),
    ("k_batch", (3, 2, 5, 8), (3, 2, 5, 8),
     r"sdpa: k has shape \(3, 2, 5, 8\); its batch must be q's, 2"),
    ("v_batch", (2, 2, 5, 8), (3, 2, 5, 8),
     r"sdpa: v has shape \(3, 2, 5, 8\); its batch, heads and length must be k's \(2, 2, 5\)"),
    ("v_length", (2, 2, 5, 8), (2, 2, 7, 8),
     r"sdpa: v has shape \(2, 2, 7, 8\); its batch, heads and length must be k's \(2, 2, 5\)"),
    ("v_heads", (2, 1, 5, 8), (2, 2, 5, 8),
     r"sdpa: v has shape \(2, 2, 5, 8\); its batch, heads and length must be k's \(2, 1, 5\)"),
    ("heads", (2, 3, 5, 8), (2, 3, 5, 8),
     r"sdpa: q has 2 heads and k 3; q's heads must be a multiple of k's"),
    ("rank3_k_width", (2, 5, 16), (2, 5, 8),
     r"sdpa: k has shape \(2, 5, 16\); its last dim \(dk\) must be q's, 8"),
    ("rank3_v_length", (2, 5, 8), (2, 6, 8),
     r"sdpa: v has shape \(2, 6, 8\); its batch and length must be k's \(2, 5\)"),
]


@pytest.mark.parametrize("name,kshape,vshape,message", SDPA_SHAPES,
                         ids=[c[0] for c in SDPA_SHAPES])
@pytest.mark.parametrize("where", ["device", "reference"])
def test_sdpa_shapes_checked(ctx, rng, name, kshape, vshape, message, where):
    q = rng.standard_normal((2, 2, 4, 8) if len(kshape) == 4 else (2, 4, 8))
    k, v = rng.standard_normal(kshape), rng.standard_normal(vshape)
    with pytest.raises(Err, match=message) as info:
        if where == "device":
            vkattn.sdpa(q, k, v, context=ctx)
        else:
            vkattn.reference.sdpa(q, k, v)
    _no_c_names(info)


# ---------------------------------------------------------------- float masks

def test_sdpa_additive_mask_refused(ctx, rng):
    q, k, v = (rng.standard_normal((1, 2, 4, 8)) for _ in range(3))
    allowed = rng.random((4, 4)) < 0.7
    allowed[:, 0] = True
    additive = np.where(allowed, 0.0, -np.inf)  # PyTorch's float attn_mask
    for fn in (lambda **kw: vkattn.sdpa(q, k, v, context=ctx, **kw),
               lambda **kw: vkattn.reference.sdpa(q, k, v, **kw)):
        with pytest.raises(Err, match=r"sdpa: mask holds -inf; a mask holds only 0/1 or "
                                      r"False/True \(1 = may attend\).*bias=") as info:
            fn(mask=additive)
        _no_c_names(info)
        with pytest.raises(Err, match=r"sdpa: value_mask holds 0.5;.*bias="):
            fn(value_mask=np.full((1, 4), 0.5))
        with pytest.raises(Err, match=r"sdpa: mask holds nan"):
            fn(mask=np.full((4, 4), np.nan))
    # what the message says to do gives the answer the 0/1 mask gives
    want = vkattn.sdpa(q, k, v, mask=allowed, context=ctx)
    assert_close(vkattn.sdpa(q, k, v, bias=additive, context=ctx), want)
    assert_close(vkattn.sdpa(q, k, v, mask=allowed.astype(np.float64), context=ctx), want)


_MASK_ARGS = ["query_mask", "value_mask", "key_mask", "attention_mask"]


@pytest.mark.parametrize("arg", _MASK_ARGS)
@pytest.mark.parametrize("where", ["device", "reference"])
def test_layer_additive_mask_refused(ctx, rng, arg, where):
    q, v = rng.standard_normal((2, 3, 6)), rng.standard_normal((2, 5, 6))
    shape = {"query_mask": (2, 3), "attention_mask": (3, 5)}.get(arg, (2, 5))
    m = np.where(rng.random(shape) < 0.5, 0.0, -np.inf)
    m.flat[0] = -np.inf
    who = "MultiHeadAttention" if where == "device" else "reference.multi_head_attention"
    with pytest.raises(Err, match=r"%s: %s holds -inf; a mask holds only 0/1 "
                                  r"or False/True \(1 = may attend\); an additive mask .* "
                                  r"is not a mask: pass `m == 0`" % (who, arg)) as info:
        if where == "device":
            vkattn.MultiHeadAttention(2, 4, context=ctx)(q, v, **{arg: m})
        else:
            vkattn.reference.multi_head_attention(q, v, num_heads=2, key_dim=4, **{arg: m})
    _no_c_names(info)


def test_keras_mask_list_values_checked(ctx, rng):
    q, v = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4))
    att = vkattn.Attention(context=ctx)
    with pytest.raises(Err, match=r"Attention: value_mask holds 2.0; a mask holds only 0/1"):
        att([q, v], mask=[None, np.full((2, 5), 2.0)])
    with pytest.raises(Err, match=r"Attention: query_mask holds -inf"):
        att([q, v], mask=[np.full((2, 3), -np.inf), None])
    with pytest.raises(Err, match=r"reference.attention: attention_mask holds -1.0"):
        vkattn.reference.attention(q, v, attention_mask=-np.ones((3, 5)))
    # booleans and 0/1 numbers are masks
    vm = rng.random((2, 5)) < 0.6
    assert_close(att([q, v], mask=[None, vm]), att([q, v], mask=[None, vm.astype(np.int8)]))


# ---------------------------------------------------------------- layer shapes

LAYER_SHAPES = [
    # name, value shape, key shape, masks, message
    ("value_batch", (3, 5, 6), None, {},
     r"value has shape \(3, 5, 6\); its batch must be query's, 2"),
    ("key_length", (2, 5, 6), (2, 7, 6), {},
     r"key has shape \(2, 7, 6\); its batch and length must be value's \(2, 5\)"),
    ("key_batch", (2, 5, 6), (1, 5, 6), {},
     r"key has shape \(1, 5, 6\); its batch and length must be value's \(2, 5\)"),
    ("query_mask", (2, 5, 6), None, {"query_mask": np.ones((2, 4))},
     r"query_mask has shape \(2, 4\); expected \(B, Tq\) = \(2, 3\)"),
    ("value_mask", (2, 5, 6), None, {"value_mask": np.ones((2, 6))},
     r"value_mask has shape \(2, 6\); expected \(B, Tv\) = \(2, 5\)"),
    ("key_mask", (2, 5, 6), None, {"key_mask": np.ones((5, 2))},
     r"key_mask has shape \(5, 2\); expected \(B, Tv\) = \(2, 5\)"),
    ("attention_mask", (2, 5, 6), None, {"attention_mask": np.ones((2, 2, 3))},
     r"attention_mask has shape \(2, 2, 3\), which does not broadcast to \(B, Tq, Tv\) = "
     r"\(2, 3, 5\) or \(B, H, Tq, Tv\) = \(2, 2, 3, 5\)"),
    ("attention_mask_heads", (2, 5, 6), None, {"attention_mask": np.ones((2, 3, 3, 5))},
     r"attention_mask has shape \(2, 3, 3, 5\), which does not broadcast"),
]


@pytest.mark.parametrize("name,vshape,kshape,masks,message", LAYER_SHAPES,
                         ids=[c[0] for c in LAYER_SHAPES])
@pytest.mark.parametrize("where", ["device", "reference"])
def test_layer_shapes_checked(ctx, rng, name, vshape, kshape, masks, message, where):
    q = rng.standard_normal((2, 3, 6))
    v = rng.standard_normal(vshape)
    k = None if kshape is None else rng.standard_normal(kshape)
    with pytest.raises(Err, match=message) as info:
        if where == "device":
            vkattn.MultiHeadAttention(2, 4, context=ctx)(q, v, k, **masks)
        else:
            vkattn.reference.multi_head_attention(q, v, k, num_heads=2, key_dim=4, **masks)
    _no_c_names(info)


def test_key_width_named(ctx, rng):
    # the library would say desc->key_width
    q, v, k = (rng.standard_normal(s) for s in [(2, 3, 4), (2, 5, 6), (2, 5, 6)])
    for layer in (vkattn.Attention, vkattn.AdditiveAttention):
        name = layer.__name__
        with pytest.raises(Err, match=r"%s: key has width 6; it must be query's, 4: the layer "
                                      r"(compares|adds) query and key" % name) as info:
            layer(context=ctx)([q, v, k])
        _no_c_names(info)
        with pytest.raises(Err, match=r"%s: value \(the key, when none is given\) has "
                                      r"width 6; it must be query's, 4" % name):
            layer(context=ctx).build(q.shape, v.shape)
    with pytest.raises(Err, match=r"reference.additive_attention: key has width 6"):
        vkattn.reference.additive_attention(q, v, k)


def test_single_head_layer_shapes_checked(ctx, rng):
    q, v = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4))
    for fn, who in ((lambda *a, **kw: vkattn.Attention(context=ctx)(list(a), **kw),
                     "Attention"),
                    (lambda *a, **kw: vkattn.reference.attention(*a, **kw),
                     "reference.attention")):
        with pytest.raises(Err, match=r"%s: key has shape \(2, 4, 4\); its batch and length "
                                      r"must be value's \(2, 5\)" % who):
            fn(q, v, rng.standard_normal((2, 4, 4)))
        with pytest.raises(Err, match=r"%s: attention_mask has shape \(2, 2, 3, 5\); rank 4 "
                                      r"\(B, H, Tq, Tv\) is for the multi-head layers" % who):
            fn(q, v, attention_mask=np.ones((2, 2, 3, 5)))
    bah = vkattn.BahdanauAttention(3, context=ctx)
    with pytest.raises(Err, match=r"BahdanauAttention: query_mask has shape \(3,\); expected "
                                  r"\(B,\) = \(2,\) for a rank-2 query"):
        bah([q[:, 0], v], mask=[np.ones(3), None])
    # what broadcasts is fine: a (Tv,) value mask serves every batch row
    vm = np.array([1, 1, 0, 1, 0], bool)
    assert_close(vkattn.Attention(context=ctx)([q, v], mask=[None, vm]),
                 vkattn.Attention(context=ctx)([q, v], mask=[None, np.stack([vm, vm])]))
    assert bah([q[:, 0], v], mask=[np.ones(2), None]).shape == (2, 4)


# ---------------------------------------------------------------- PyTorch's padding mask

@pytest.mark.parametrize("layer", ["MultiHeadAttention", "GroupedQueryAttention"])
def test_key_padding_mask_has_pytorch_polarity(ctx, rng, layer):
    q, v = rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 5, 8))
    pad = np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 1]], bool)  # True = padding, ignored
    make, ref, kw = {
        "MultiHeadAttention": (lambda: vkattn.MultiHeadAttention(2, 4, seed=1, context=ctx),
                               vkattn.reference.multi_head_attention,
                               {"num_heads": 2, "key_dim": 4}),
        "GroupedQueryAttention": (lambda: vkattn.GroupedQueryAttention(4, 2, 1, seed=1,
                                                                       context=ctx),
                                  vkattn.reference.grouped_query_attention,
                                  {"head_dim": 4, "num_query_heads": 2,
                                   "num_key_value_heads": 1}),
    }[layer]
    m = make()
    m.build(q.shape, v.shape)
    weights = [0.3 * rng.standard_normal(w.shape) for w in m.get_weights()]
    m.set_weights(weights)
    out, scores = m(q, v, key_padding_mask=pad, return_attention_scores=True)
    assert np.all(scores[np.broadcast_to(pad[:, None, None, :], scores.shape)] == 0)
    assert_close(out, m(q, v, value_mask=~pad))
    assert_close(out, ref(q, v, weights=weights, key_padding_mask=pad, **kw))
    # AND-ed with the Keras masks
    vm = np.array([[1, 0, 1, 1, 1], [1, 1, 1, 1, 1]], bool)
    assert_close(m(q, v, value_mask=vm, key_padding_mask=pad), m(q, v, value_mask=vm & ~pad))
    g = rng.standard_normal(out.shape)
    got = m.gradients(q, v, key_padding_mask=pad, grad_output=g)
    want = m.gradients(q, v, value_mask=~pad, grad_output=g)
    for a, b in zip(got[0] + got[1], want[0] + want[1]):
        assert_close(a, b)
    # PyTorch's float key_padding_mask is additive: refused, with the conversion
    with pytest.raises(Err, match=r"%s: key_padding_mask holds -inf; .*pass `m != 0` "
                                  r"\(True = padding\)" % layer):
        m(q, v, key_padding_mask=np.where(pad, -np.inf, 0.0))
    with pytest.raises(Err, match=r"%s: key_padding_mask has shape \(2, 4\); expected "
                                  r"\(B, Tv\) = \(2, 5\)" % layer):
        m(q, v, key_padding_mask=pad[:, :4])


# ---------------------------------------------------------------- weights files

def test_missing_weights_file_is_file_not_found(ctx, tmp_path):
    mha = vkattn.MultiHeadAttention(2, 4, context=ctx)
    mha.build((1, 2, 6), (1, 3, 6))
    missing = tmp_path / "no_such.safetensors"
    with pytest.raises(FileNotFoundError) as info:
        mha.load_weights(missing)
    assert not isinstance(info.value, vkattn.Error)
    assert info.value.filename == str(missing)
    assert "MultiHeadAttention.load_weights" in str(info.value)
    with pytest.raises(FileNotFoundError) as info:
        mha.save_weights(tmp_path / "no_such_dir" / "w.safetensors")
    assert "MultiHeadAttention.save_weights" in str(info.value)
    # a folder is not a weights file: the library's own message, as before
    with pytest.raises(Err, match="is a directory"):
        mha.load_weights(tmp_path)
