"""vkattn.sdpa on the device against numpy and the library's reference: heads,
grouped-query, rank-3 inputs, broadcast bias and masks, causal, returned weights.
Bound: conftest.assert_close."""
import numpy as np
import pytest

import vkattn
import npref
from conftest import assert_close

CASES = [
    # B, H, Hkv, Tq, Tv, dk, dv
    (1, 1, 1, 5, 7, 8, 8),
    (2, 4, 2, 9, 6, 5, 3),
    (3, 2, 1, 4, 13, 16, 7),
    (2, 3, 3, 1, 10, 4, 9),
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("extras", ["none", "bias_mask", "value_mask_causal", "bottom_right"])
@pytest.mark.parametrize("path", ["auto", "unfused"])
def test_sdpa(ctx, rng, case, extras, path):
    b, h, hkv, tq, tv, dk, dv = case
    q = rng.standard_normal((b, h, tq, dk))
    k = rng.standard_normal((b, hkv, tv, dk))
    v = rng.standard_normal((b, hkv, tv, dv))
    kw = {}
    if extras == "bias_mask":
        kw = {"bias": rng.standard_normal((h, 1, tv)),             # (H, 1, Tv): broadcast
              "mask": rng.random((b, 1, tq, tv)) < 0.8, "scale": 0.3}
    elif extras == "value_mask_causal":
        kw = {"value_mask": rng.random((b, tv)) < 0.8, "causal": True,
              "masked_row": "uniform"}
    elif extras == "bottom_right":
        kw = {"causal": "bottom_right", "mask": rng.random((tq, tv)) < 0.9}
    ret = path == "unfused"
    got = vkattn.sdpa(q, k, v, path=path, return_weights=ret, context=ctx, **kw)
    want, want_w = npref.sdpa(q, k, v, **kw)
    if ret:
        got, got_w = got
        assert_close(got_w, want_w)
    assert got.shape == (b, h, tq, dv)
    assert_close(got, want)
    assert_close(got, vkattn.reference.sdpa(q, k, v, **kw))


def test_sdpa_rank3_is_one_head(ctx, rng):
    q, k, v = (rng.standard_normal(s) for s in [(2, 5, 4), (2, 6, 4), (2, 6, 3)])
    out, w = vkattn.sdpa(q, k, v, return_weights=True, context=ctx)
    want, want_w = npref.sdpa(q[:, None], k[:, None], v[:, None])
    assert out.shape == (2, 5, 3) and w.shape == (2, 5, 6)
    assert_close(out, want[:, 0])
    assert_close(w, want_w[:, 0])


def test_sdpa_dropout_matches_reference(ctx, rng):
    q, k, v = (rng.standard_normal((2, 2, 8, 8)) for _ in range(3))
    got, w = vkattn.sdpa(q, k, v, dropout=0.25, seed=7, offset=3, return_weights=True,
                         weights_after_dropout=True, context=ctx)
    ref, ref_w = vkattn.reference.sdpa(q, k, v, dropout=0.25, seed=7, offset=3,
                                       return_weights=True, weights_after_dropout=True)
    np.testing.assert_array_equal(w != 0, ref_w != 0)
    assert_close(got, ref)


def test_sdpa_errors(ctx, rng):
    q = rng.standard_normal((1, 3, 4, 8))
    k = rng.standard_normal((1, 2, 5, 8))
    with pytest.raises(vkattn.InvalidArgumentError, match="q has 3 heads and k 2"):
        vkattn.sdpa(q, k, k, context=ctx)  # 3 heads, 2 kv heads: not a multiple
    with pytest.raises(vkattn.InvalidArgumentError, match="FUSED|fused"):
        vkattn.sdpa(q, q, q, path="fused", return_weights=True, context=ctx)
    with pytest.raises(vkattn.InvalidArgumentError, match="does not broadcast"):
        vkattn.sdpa(q, q, q, mask=np.ones((2, 4, 4)), context=ctx)


@pytest.mark.parametrize("causal", [False, True, "bottom_right"])
@pytest.mark.parametrize("path", ["fused", "unfused"])
def test_sdpa_sliding_window(ctx, rng, causal, path):
    b, h, hkv, tq, tv, d = 2, 4, 2, 7, 11, 5
    q = rng.standard_normal((b, h, tq, d))
    k = rng.standard_normal((b, hkv, tv, d))
    v = rng.standard_normal((b, hkv, tv, d))
    for window in (1, 4, tq + tv):
        pos = np.arange(tq)[:, None] + (tv - tq if causal == "bottom_right" else 0)
        band = np.abs(pos - np.arange(tv)[None, :]) < window
        out = vkattn.sdpa(q, k, v, causal=causal, sliding_window=window, path=path, context=ctx)
        want = npref.sdpa(q, k, v, causal=causal, mask=band)
        want = want[0] if isinstance(want, tuple) else want
        assert_close(out, want)
    for bad in (0, -3, 1.5):
        with pytest.raises(vkattn.InvalidArgumentError, match="sliding_window"):
            vkattn.sdpa(q, k, v, sliding_window=bad, context=ctx)
