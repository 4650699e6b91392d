"""vkattn.SGD, Adam and AdamW: steps on Tensors and on a layer's weights against the
numpy formulas of vkattn/optim.h (PyTorch's), in float64. Bound: 1e-6 relative to
max(1, max|p|) per step, a few f32 roundings per element (the header bounds several
steps at 1e-4). A float16 or bfloat16 parameter: each step from the values it holds,
the device's float32 result rounded once, so within half its spacing of the exact one
past that bound. About 0.5 s on lavapipe."""
import numpy as np
import pytest

import vkattn


def _close(got, want):
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6 * max(1.0, np.abs(want).max()))


def test_sgd_momentum(ctx, rng):
    p0 = rng.standard_normal((3, 4)).astype(np.float32)
    grads = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(2)]
    p = vkattn.Tensor(p0, context=ctx)
    opt = vkattn.SGD(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)
    want, buf = p0.astype(np.float64), None
    for t, grad in enumerate(grads):
        opt.step([p], [grad if t == 0 else vkattn.Tensor(grad, context=ctx)])
        d = grad + 0.01 * want
        buf = d if buf is None else 0.9 * buf + (1 - 0.1) * d  # the first step: b = g
        want = want - 0.1 * buf
        _close(p.numpy(), want)


@pytest.mark.parametrize("opt_type", [vkattn.Adam, vkattn.AdamW])
def test_adam(ctx, rng, opt_type):
    """Two steps: the first alone does not see the betas (m / (1 - beta1) = g)."""
    p0 = rng.standard_normal(7).astype(np.float32)
    grads = [rng.standard_normal(7).astype(np.float32) for _ in range(2)]
    p = vkattn.Tensor(p0, context=ctx)
    lr, b1, b2, eps, wd = 0.05, 0.8, 0.99, 1e-6, 0.1
    opt = opt_type(lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd)
    x, m, v = p0.astype(np.float64), 0.0, 0.0
    for t, grad in enumerate(grads, 1):
        opt.step([p], [grad])
        g = grad.astype(np.float64)
        if opt_type is vkattn.Adam:
            g = g + wd * x
        else:
            x = x * (1 - lr * wd)
        m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
        x = x - lr / (1 - b1**t) * m / (np.sqrt(v) / np.sqrt(1 - b2**t) + eps)
        _close(p.numpy(), x)


def _values(t):
    """a Tensor's values as float64 (a bfloat16 one's numpy() is its bits)"""
    a = t.numpy()
    return (vkattn.bfloat16.to_float32(a) if t.dtype_name == "bfloat16" else a).astype(np.float64)


def _host(a):
    """a layer's numpy array as float64 (a bfloat16 layer's are bits in uint16)"""
    return (vkattn.bfloat16.to_float32(a) if a.dtype == np.uint16 else a).astype(np.float64)


def _half_spacing(dtype, x):
    """half the spacing of dtype's values at |x| (normal range)"""
    mant, emin = (10, -14) if dtype == "float16" else (7, -126)
    e = np.maximum(np.frexp(np.abs(x))[1] - 1, emin)
    return np.ldexp(0.5, e - mant)


@pytest.mark.parametrize("ptype,gtype", [("float16", "float16"), ("bfloat16", "bfloat16"),
                                         ("bfloat16", None), ("float32", "bfloat16")])
def test_16bit(ctx, rng, ptype, gtype):
    """16-bit params and grads (None: a numpy grad, taken as float32): Adam, two steps,
    each checked from the values the parameter holds."""
    p = vkattn.Tensor(rng.standard_normal(9), ptype, context=ctx)
    lr, b1, b2, eps, wd = 0.05, 0.8, 0.99, 1e-6, 0.1
    opt = vkattn.Adam(lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd)
    m = v = 0.0
    for t in (1, 2):
        grad = rng.standard_normal(9).astype(np.float32)
        if gtype is not None:
            grad = vkattn.Tensor(grad, gtype, context=ctx)
        x = _values(p)
        opt.step([p], [grad])
        g = (_values(grad) if gtype is not None else grad.astype(np.float64)) + wd * x
        m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
        x = x - lr / (1 - b1**t) * m / (np.sqrt(v) / np.sqrt(1 - b2**t) + eps)
        got = _values(p)
        slack = 0.0 if ptype == "float32" else _half_spacing(ptype, np.maximum(abs(got), abs(x)))
        assert np.all(np.abs(got - x) <= slack + 1e-6 * max(1.0, np.abs(x).max()))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_layer_weights(ctx, rng, dtype):
    """A layer's own weights, updated in place with its gradients() (Keras order); a
    16-bit layer's in fp32 and rounded once (half a spacing, as test_16bit)."""
    mha = vkattn.MultiHeadAttention(2, 3, dtype=dtype, context=ctx)
    x = rng.standard_normal((1, 3, 4)).astype(np.float32)
    mha.build(x.shape, x.shape)
    mha.set_weights([0.3 * rng.standard_normal(w.shape) for w in mha.get_weights()])
    _, grads = mha.gradients(x, x, grad_output=rng.standard_normal((1, 3, 4)))
    before = mha.get_weights()
    vkattn.SGD(lr=0.5).step(mha, grads)
    for w, g, after in zip(before, grads, mha.get_weights()):
        want = _host(w) - 0.5 * _host(g)
        if dtype == "float32":
            _close(after, want)
        else:
            got = _host(after)
            slack = _half_spacing(dtype, np.maximum(abs(got), abs(want)))
            assert np.all(np.abs(got - want) <= slack + 1e-6 * max(1.0, np.abs(want).max()))


def test_errors(ctx):
    p = vkattn.Tensor(np.zeros(3), context=ctx)
    with pytest.raises(vkattn.InvalidArgumentError, match=r"grads\[0\] has shape"):
        vkattn.SGD(lr=1).step([p], [np.zeros(4)])
    with pytest.raises(vkattn.InvalidArgumentError, match=r"Adam: betas\[1\] must be"):
        vkattn.Adam(betas=(0.9, 1.0))
    with pytest.raises(vkattn.InvalidArgumentError, match="SGD: lr must be"):
        vkattn.SGD(lr=-1)
    with pytest.raises(vkattn.InvalidArgumentError, match="nesterov needs"):
        vkattn.SGD(lr=1, nesterov=True)
    with pytest.raises(vkattn.InvalidArgumentError, match="grads must be a list of"):
        mha = vkattn.MultiHeadAttention(1, 2, context=ctx)
        mha.build((1, 1, 2), (1, 1, 2))
        vkattn.SGD(lr=1).step(mha, [np.zeros(1)])
