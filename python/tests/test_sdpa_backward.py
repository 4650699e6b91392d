"""vkattn.sdpa_backward against the library's CPU reference backward
(vkattn.reference.sdpa_backward) on small random shapes (GQA, rank 3, masks, bias,
causal, dropout, both paths), and the reference against central finite differences
of vkattn.reference.sdpa on a tiny case. Bounds: the header's 1e-4 of each gradient's
largest element (vkattn/sdpa_backward.h); finite differences: step 1e-2 on f32
outputs, so 1e-3 absolute (the O(h^2) truncation and f32 rounding / h). About 1 s on
lavapipe."""
import numpy as np
import pytest

import vkattn


def _close(got, want, bound=1e-4):
    scale = max(float(np.abs(want).max()), 1e-3)
    assert got.shape == want.shape
    assert float(np.abs(got - want).max()) <= bound * scale, (np.abs(got - want).max(), scale)


# (B, H, Hkv, Tq, Tv, dk, dv), options
CASES = [
    ((1, 2, 2, 3, 5, 4, 3), dict(causal=True)),
    ((2, 4, 2, 5, 5, 3, 6), dict(causal="bottom_right", scale=0.3)),
    ((2, 3, 1, 4, 7, 5, 5), dict(dropout=0.25, seed=7, offset=3)),
    ((1, 2, 1, 6, 3, 2, 2), dict(mask=True, bias=True, sliding_window=2)),
]


# every case on the chained path; two on the fused one (its kernels take ~2 s each to
# compile on lavapipe with a cold shader cache)
RUNS = [(c, "auto") for c in CASES] + [(CASES[0], "fused"), (CASES[2], "fused")]


@pytest.mark.parametrize("case,path", RUNS, ids=lambda c: "x".join(map(str, c[0]))
                         if isinstance(c, tuple) else str(c))
def test_against_reference(ctx, rng, case, path):
    (b, h, hkv, tq, tv, dk, dv), opts = case
    opts = dict(opts)
    if opts.pop("mask", False):
        opts["mask"] = rng.random((tq, tv)) < 0.8
    if opts.pop("bias", False):
        opts["bias"] = rng.standard_normal((b, 1, tq, tv))
    q = rng.standard_normal((b, h, tq, dk)).astype(np.float32)
    k = rng.standard_normal((b, hkv, tv, dk)).astype(np.float32)
    v = rng.standard_normal((b, hkv, tv, dv)).astype(np.float32)
    g = rng.standard_normal((b, h, tq, dv)).astype(np.float32)
    got = vkattn.sdpa_backward(q, k, v, g, path=path, context=ctx, **opts)
    want = vkattn.reference.sdpa_backward(q, k, v, g, **opts)
    for x, y in zip(got, want):
        _close(x, y)


def test_rank3_and_tensors(ctx, rng):
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in ((2, 3, 4), (2, 5, 4),
                                                                    (2, 5, 2)))
    g = rng.standard_normal((2, 3, 2)).astype(np.float32)
    want = vkattn.reference.sdpa_backward(q, k, v, g, causal=True)
    got = vkattn.sdpa_backward(q, k, v, g, causal=True, context=ctx)
    assert [x.shape for x in got] == [(2, 3, 4), (2, 5, 4), (2, 5, 2)]
    for x, y in zip(got, want):
        _close(x, y)
    ts = [vkattn.Tensor(x, context=ctx) for x in (q, k, v, g)]
    dev = vkattn.sdpa_backward(*ts, causal=True, context=ctx)
    assert all(isinstance(x, vkattn.Tensor) for x in dev)
    for x, y in zip(dev, got):
        np.testing.assert_array_equal(x.numpy(), y)
    with pytest.raises(vkattn.InvalidArgumentError, match="sdpa_backward: grad_output has shape"):
        vkattn.sdpa_backward(q, k, v, g[:, :2], context=ctx)


def test_finite_differences(rng):
    """The reference backward is the derivative of the reference forward: L = sum(out * g)."""
    q, k, v = (rng.standard_normal(s) for s in ((1, 2, 2, 3), (1, 1, 3, 3), (1, 1, 3, 2)))
    g = rng.standard_normal((1, 2, 2, 2))
    opts = dict(causal="bottom_right", scale=0.7)
    grads = vkattn.reference.sdpa_backward(q, k, v, g, **opts)
    h = 1e-2
    for x, grad in zip((q, k, v), grads):
        fd = np.zeros(x.shape)
        for i in np.ndindex(x.shape):
            old = x[i]
            x[i] = old + h
            up = float((vkattn.reference.sdpa(q, k, v, **opts) * g).sum())
            x[i] = old - h
            down = float((vkattn.reference.sdpa(q, k, v, **opts) * g).sum())
            x[i] = old
            fd[i] = (up - down) / (2 * h)
        np.testing.assert_allclose(grad, fd, rtol=0, atol=1e-3)
