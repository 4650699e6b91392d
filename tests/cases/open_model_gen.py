# Generates tests/cases/open_model.json (docs/CASES.md): GroupedQueryAttention and
# MultiHeadAttention cases with the attention of today's open models -- QK-norm,
# rotary embeddings (both layouts, a partial rotary_dim, explicit positions),
# logit soft-capping and sinks -- whose expected values come from the float64
# numpy implementation below, written from vkattn/mha_host.h's contract and
# independent of vkattn's code. Its rotary embedding is also checked against
# Hugging Face's formulas, written differently (rotate_half for the half layout,
# a complex multiplication for the interleaved one): they must agree to 1e-12.
#   python3 tests/cases/open_model_gen.py   (from the repository root; numpy)
import json
import math
import sys

import numpy as np


# ---------------------------------------------------------------- the layer

def rope_angles(pos, rotary_dim, max_wavelength, scaling_factor):
    """(..., rotary_dim/2) angles: (p / scaling_factor) * max_wavelength^(-2i/rotary_dim)."""
    i = np.arange(rotary_dim // 2, dtype=np.float64)
    inv = max_wavelength ** (-2.0 * i / rotary_dim)
    return (np.asarray(pos, np.float64)[..., None] / scaling_factor) * inv


def rope_pairs(x, pos, rotary_dim, max_wavelength, scaling_factor, layout):
    """x (..., T, h) turned at positions pos (..., T): feature pair (a_i, b_i) turns by
    angle_i, a' = a cos - b sin, b' = b cos + a sin; features >= rotary_dim unchanged."""
    ang = rope_angles(pos, rotary_dim, max_wavelength, scaling_factor)
    c, s = np.cos(ang), np.sin(ang)
    out = x.copy()
    half = rotary_dim // 2
    ia = np.arange(half) if layout == "half" else 2 * np.arange(half)
    ib = ia + half if layout == "half" else ia + 1
    a, b = x[..., ia], x[..., ib]
    out[..., ia] = a * c - b * s
    out[..., ib] = b * c + a * s
    return out


def gqa(q, v, k, W, nq, nkv, h, use_bias=True, qk_norm=None, rope=None, softcap=None,
        use_sinks=False, qpos=None, kpos=None, causal=False, qmask=None, vmask=None,
        vd=None):
    """float64 forward: output (B, Tq, Dout) and weights (B, nq, Tq, Tv)."""
    vd = vd or h
    q, v = np.asarray(q, np.float64), np.asarray(v, np.float64)
    k = v if k is None else np.asarray(k, np.float64)
    B, Tq, Tv = q.shape[0], q.shape[1], v.shape[1]
    w = {n: np.asarray(a, np.float64) for n, a in W.items()}

    def proj(x, name, heads, width):  # (B, T, D) -> (B, heads, T, width)
        y = np.einsum("btd,dnc->bntc", x, w[name + "_kernel"])
        return y + w[name + "_bias"][None, :, None, :] if use_bias else y

    Q, K, V = proj(q, "query", nq, h), proj(k, "key", nkv, h), proj(v, "value", nkv, vd)
    if qk_norm is not None:
        eps = qk_norm["epsilon"]
        Q = Q / np.sqrt((Q * Q).mean(-1, keepdims=True) + eps) * w["query_norm"]
        K = K / np.sqrt((K * K).mean(-1, keepdims=True) + eps) * w["key_norm"]
    if rope is not None:
        qp = np.broadcast_to(np.arange(Tq) if qpos is None else np.asarray(qpos), (B, Tq))
        kp = np.broadcast_to(np.arange(Tv) if kpos is None else np.asarray(kpos), (B, Tv))
        rd = rope.get("rotary_dim") or h
        args = (rd, rope.get("max_wavelength", 10000.0), rope.get("scaling_factor", 1.0),
                rope.get("layout", "half"))
        Q = rope_pairs(Q, qp[:, None, :], *args)
        K = rope_pairs(K, kp[:, None, :], *args)
    G = nq // nkv
    K, V = np.repeat(K, G, axis=1), np.repeat(V, G, axis=1)
    s = Q @ K.transpose(0, 1, 3, 2) / math.sqrt(h)
    if softcap is not None:
        s = softcap * np.tanh(s / softcap)
    allowed = np.ones((B, 1, Tq, Tv), bool)
    if causal:
        allowed &= np.arange(Tv)[None, :] <= np.arange(Tq)[:, None]
    if qmask is not None:
        allowed &= np.asarray(qmask, bool)[:, None, :, None]
    if vmask is not None:
        allowed &= np.asarray(vmask, bool)[:, None, None, :]
    allowed = np.broadcast_to(allowed, s.shape)
    any_ = allowed.any(-1, keepdims=True)
    m = np.where(allowed, s, -np.inf).max(-1, keepdims=True)
    if use_sinks:
        sink = w["sinks"][None, :, None, None]
        m = np.maximum(m, sink)
    m = np.where(any_, m, 0.0)
    e = np.where(allowed, np.exp(s - m), 0.0)
    den = e.sum(-1, keepdims=True) + (np.exp(sink - m) if use_sinks else 0.0)
    p = np.where(any_, e / np.where(any_, den, 1.0), 0.0)  # no allowed key: weights 0
    ctx = p @ V
    out = np.einsum("bntc,nce->bte", ctx, w["output_kernel"])
    if use_bias:
        out = out + w["output_bias"]
    return out, p


# ---------------------------------------------------------------- Hugging Face's rope

def hf_rotate_half(x, pos, rd, base, factor):
    """transformers' LlamaRotaryEmbedding + apply_rotary_pos_emb (linear scaling),
    on the first rd features: x * cos + rotate_half(x) * sin, cos/sin of cat(freqs,
    freqs)."""
    inv_freq = 1.0 / (base ** (np.arange(0, rd, 2, dtype=np.float64) / rd))
    freqs = np.outer(np.asarray(pos, np.float64) / factor, inv_freq)
    emb = np.concatenate([freqs, freqs], -1)
    xr = x[..., :rd]
    x1, x2 = xr[..., : rd // 2], xr[..., rd // 2:]
    rot = np.concatenate([-x2, x1], -1)
    return np.concatenate([xr * np.cos(emb) + rot * np.sin(emb), x[..., rd:]], -1)


def hf_complex(x, pos, rd, base, factor):
    """Meta's Llama / GPT-J (torch.view_as_complex): adjacent features are one complex
    number, multiplied by exp(i * angle)."""
    inv_freq = 1.0 / (base ** (np.arange(0, rd, 2, dtype=np.float64) / rd))
    freqs = np.outer(np.asarray(pos, np.float64) / factor, inv_freq)
    xr = x[..., :rd].reshape(x.shape[:-1] + (rd // 2, 2))
    z = (xr[..., 0] + 1j * xr[..., 1]) * np.exp(1j * freqs)
    turned = np.stack([z.real, z.imag], -1).reshape(x.shape[:-1] + (rd,))
    return np.concatenate([turned, x[..., rd:]], -1)


def check_against_hf():
    rng = np.random.default_rng(5)
    for layout, hf in (("half", hf_rotate_half), ("interleaved", hf_complex)):
        for h, rd, base, factor in ((8, 8, 10000.0, 1.0), (6, 4, 500.0, 2.0)):
            x = rng.uniform(-1, 1, (7, h))
            pos = np.array([0, 1, 2, 5, 17, 100, 4095])
            ours = rope_pairs(x, pos, rd, base, factor, layout)
            theirs = hf(x, pos, rd, base, factor)
            err = np.abs(ours - theirs).max()
            assert err < 1e-12, (layout, h, rd, err)


# ---------------------------------------------------------------- the cases

def f32(a):
    return np.asarray(a, np.float32).astype(np.float64)


def rnd(rng, *shape, lo=-1.0, hi=1.0):
    return f32(np.round(rng.uniform(lo, hi, shape), 2))


def weights(rng, dq, dk, dv, nq, nkv, h, use_bias, qk_norm, use_sinks, dout=None):
    dout = dout or dq
    W = {"query_kernel": rnd(rng, dq, nq, h), "key_kernel": rnd(rng, dk, nkv, h),
         "value_kernel": rnd(rng, dv, nkv, h), "output_kernel": rnd(rng, nq, h, dout)}
    if use_bias:
        W.update(query_bias=rnd(rng, nq, h), key_bias=rnd(rng, nkv, h),
                 value_bias=rnd(rng, nkv, h), output_bias=rnd(rng, dout))
    if qk_norm:
        W.update(query_norm=rnd(rng, h, lo=0.5, hi=1.5), key_norm=rnd(rng, h, lo=0.5, hi=1.5))
    if use_sinks:
        W["sinks"] = rnd(rng, nq, lo=-1.0, hi=2.0)
    return W


def lists(x):
    return np.asarray(x).tolist()


def case(name, comment, layer, rng, B, Tq, Tv, dq, dk, dv, nq, nkv, h, use_bias=True,
         qk_norm=None, rope=None, softcap=None, use_sinks=False, qpos=None, kpos=None,
         causal=False, qmask=None, vmask=None, cross=True):
    W = weights(rng, dq, dk if cross else dv, dv, nq, nkv, h, use_bias, qk_norm, use_sinks)
    q = rnd(rng, B, Tq, dq)
    v = rnd(rng, B, Tv, dv)
    k = rnd(rng, B, Tv, dk) if cross else None
    out, p = gqa(q, v, k, W, nq, nkv, h, use_bias, qk_norm, rope, softcap, use_sinks, qpos,
                 kpos, causal, qmask, vmask)
    params = {"use_bias": use_bias, "dropout": 0.0}
    if layer == "MultiHeadAttention":
        params.update(num_heads=nq, key_dim=h)
    else:
        params.update(head_dim=h, num_query_heads=nq, num_key_value_heads=nkv)
    if qk_norm is not None:
        params["qk_norm"] = qk_norm
    if rope is not None:
        params["rope"] = rope
    if softcap is not None:
        params["softcap"] = softcap
    if use_sinks:
        params["use_sinks"] = True
    params["weights"] = {n: lists(a) for n, a in W.items()}
    c = {"name": name, "comment": comment, "layer": layer, "params": params,
         "query": lists(q), "value": lists(v)}
    if k is not None:
        c["key"] = lists(k)
    if qpos is not None:
        c["query_positions"] = lists(qpos)
    if kpos is not None:
        c["key_positions"] = lists(kpos)
    if causal:
        c["use_causal_mask"] = True
    if qmask is not None:
        c["query_mask"] = lists(np.asarray(qmask, np.float64))
    if vmask is not None:
        c["value_mask"] = lists(np.asarray(vmask, np.float64))
    c.update(return_attention_scores=True, expected_output=lists(out),
             expected_scores=lists(p))
    return c


def main():
    check_against_hf()
    rng = np.random.default_rng(36)
    cases = [
        case("gqa_rope_half_positions",
             "Llama's rotate_half layout at explicit positions (a second chunk of a prompt: "
             "queries at 7..9, keys at 4..9; batch 1 elsewhere), Nq 4 sharing Nkv 2",
             "GroupedQueryAttention", rng, 2, 3, 6, 5, 6, 4, 4, 2, 4,
             rope={"max_wavelength": 10000.0, "scaling_factor": 1.0, "rotary_dim": 4,
                   "layout": "half"},
             qpos=[[7, 8, 9], [0, 1, 30]], kpos=[[4, 5, 6, 7, 8, 9], [0, 1, 2, 3, 30, 31]]),
        case("gqa_rope_interleaved_partial",
             "GPT-J's interleaved layout on the first 4 of 6 features (rotary_dim < "
             "head_dim), max_wavelength 500, scaling_factor 2 (linear scaling), causal self-"
             "attention at the default positions",
             "GroupedQueryAttention", rng, 1, 5, 5, 6, 6, 6, 2, 1, 6, use_bias=False,
             rope={"max_wavelength": 500.0, "scaling_factor": 2.0, "rotary_dim": 4,
                   "layout": "interleaved"}, causal=True, cross=False),
        case("mha_qk_norm_softcap",
             "Qwen3's QK-norm (epsilon 1e-6, learned scales) and Gemma 2's soft-capping at "
             "0.5, low enough to bend every score",
             "MultiHeadAttention", rng, 2, 3, 4, 5, 3, 4, 3, 3, 4,
             qk_norm={"epsilon": 1e-6}, softcap=0.5),
        case("gqa_sinks_masks",
             "gpt-oss's sinks: each query head's logit joins the softmax denominator, so "
             "weights sum below 1; query row 2 of batch 0 is masked (weights 0, output the "
             "output bias)",
             "GroupedQueryAttention", rng, 2, 3, 4, 5, 6, 4, 4, 2, 3, use_sinks=True,
             qmask=[[1, 1, 0], [1, 1, 1]], vmask=[[1, 1, 1, 0], [1, 0, 1, 1]]),
        case("gqa_all_open_model",
             "QK-norm (epsilon 1e-5), half RoPE (max_wavelength 1e6, as Qwen3), soft-capping "
             "at 2 and sinks together, causal",
             "GroupedQueryAttention", rng, 1, 4, 4, 8, 8, 8, 4, 2, 4,
             qk_norm={"epsilon": 1e-5},
             rope={"max_wavelength": 1000000.0, "scaling_factor": 1.0, "rotary_dim": 4,
                   "layout": "half"}, softcap=2.0, use_sinks=True, causal=True, cross=False),
    ]
    path = sys.argv[1] if len(sys.argv) > 1 else "tests/cases/open_model.json"
    with open(path, "w") as f:
        json.dump(cases, f, indent=1)


if __name__ == "__main__":
    main()
