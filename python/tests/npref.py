"""Plain numpy (float64) versions of the layers and of SDPA, written from
docs/SEMANTICS.md, independent of the library: what the tests hold it to."""
import numpy as np


def _b(x):
    return None if x is None else np.asarray(x, np.float64)


def causal_allowed(tq, tv, causal):
    i = np.arange(tq)[:, None]
    j = np.arange(tv)[None, :]
    if causal in (True, "top_left"):
        return j <= i
    if causal == "bottom_right":
        return j <= i + tv - tq
    return np.ones((tq, tv), bool)


def masked_softmax(s, allowed, empty_row):
    """Softmax over the last axis of the allowed logits; masked get 0; a row with none
    allowed becomes zeros or uniform 1/Tv."""
    allowed = np.broadcast_to(allowed, s.shape)
    any_ = allowed.any(-1, keepdims=True)
    s = np.where(allowed, s, -np.inf)
    m = np.where(any_, s.max(-1, keepdims=True), 0.0)
    e = np.where(allowed, np.exp(s - m), 0.0)
    w = e / np.where(any_, e.sum(-1, keepdims=True), 1.0)
    if empty_row == "uniform":
        w = np.where(any_, w, 1.0 / s.shape[-1])
    return w


def _allowed(b, tq, tv, value_mask, attention_mask, causal):
    a = np.ones((b, tq, tv), bool) & causal_allowed(tq, tv, causal)
    if value_mask is not None:
        a = a & (np.asarray(value_mask) != 0)[:, None, :]
    if attention_mask is not None:
        a = a & (np.broadcast_to(np.asarray(attention_mask) != 0, (b, tq, tv)))
    return a


def _attention_tail(s, v, query_mask, value_mask, attention_mask, causal):
    b, tq, tv = s.shape
    w = masked_softmax(s, _allowed(b, tq, tv, value_mask, attention_mask, causal), "uniform")
    out = w @ v
    if query_mask is not None:
        out = out * (np.asarray(query_mask) != 0)[..., None]
    return out, w


def attention(q, v, k=None, scale=1.0, score_mode="dot", csw=1.0, query_mask=None,
              value_mask=None, attention_mask=None, causal=False):
    q, v = _b(q), _b(v)
    k = v if k is None else _b(k)
    if score_mode == "dot":
        s = scale * (q @ k.transpose(0, 2, 1))
    else:
        s = csw * np.tanh(scale * (q[:, :, None, :] + k[:, None, :, :])).sum(-1)
    return _attention_tail(s, v, query_mask, value_mask, attention_mask, causal)


def additive_attention(q, v, k=None, scale=None, **masks):
    q, v = _b(q), _b(v)
    k = v if k is None else _b(k)
    sv = np.ones(q.shape[-1]) if scale is None else _b(scale)
    s = (np.tanh(q[:, :, None, :] + k[:, None, :, :]) * sv).sum(-1)
    return _attention_tail(s, v, **_masks(masks))


def bahdanau(q, v, k, wq, wk, sv, sb, **masks):
    q, v = _b(q), _b(v)
    k = v if k is None else _b(k)
    rank2 = q.ndim == 2
    if rank2:
        q = q[:, None, :]
    pq, pk = q @ _b(wq), k @ _b(wk)
    s = np.tanh(pq[:, :, None, :] + pk[:, None, :, :]) @ _b(sv).reshape(-1) + float(sb)
    out, w = _attention_tail(s, v, **_masks(masks))
    return (out[:, 0] if rank2 else out), w


def _masks(m):
    return {"query_mask": m.get("query_mask"), "value_mask": m.get("value_mask"),
            "attention_mask": m.get("attention_mask"), "causal": m.get("causal", False)}


def mha(q, v, k, weights, num_heads, key_dim, use_bias=True, query_mask=None,
        value_mask=None, attention_mask=None, causal=False, sliding_window=None,
        use_gate=False):
    q, v = _b(q), _b(v)
    k = v if k is None else _b(k)
    w = [_b(x) for x in weights]
    gate = None
    if use_gate:  # Keras's order: q, k, gate, v, out (each kernel, bias)
        n = 2 if use_bias else 1
        wg = w.pop(2 * n)
        bg = w.pop(2 * n) if use_bias else 0.0
        gate = 1.0 / (1.0 + np.exp(-(np.einsum("btd,dhe->bthe", q, wg) + bg)))
    if use_bias:
        wq, bq, wk, bk, wv, bv, wo, bo = w
    else:
        wq, wk, wv, wo = w
        bq, bk, bv, bo = 0.0, 0.0, 0.0, 0.0
    Q = np.einsum("btd,dhe->bthe", q, wq) + bq
    K = np.einsum("btd,dhe->bthe", k, wk) + bk
    V = np.einsum("btd,dhe->bthe", v, wv) + bv
    logits = np.einsum("bqhe,bkhe->bhqk", Q, K) / np.sqrt(key_dim)
    b, tq, tv = q.shape[0], q.shape[1], v.shape[1]
    allowed = _allowed(b, tq, tv, value_mask, None, causal)[:, None]
    if attention_mask is not None:
        am = np.asarray(attention_mask) != 0
        if am.ndim < 4:  # shared by the heads (Keras inserts the head axis)
            am = np.broadcast_to(am, (b, tq, tv))[:, None]
        allowed = allowed & am
    if query_mask is not None:
        allowed = allowed & (np.asarray(query_mask) != 0)[:, None, :, None]
    if sliding_window is not None:  # |pos - j| < w, pos shifted by Tv - Tq bottom-right
        pos = np.arange(tq)[:, None] + (tv - tq if causal == "bottom_right" else 0)
        allowed = allowed & (np.abs(pos - np.arange(tv)[None, :]) < sliding_window)
    p = masked_softmax(logits, allowed, "zero")
    c = np.einsum("bhqk,bkhe->bqhe", p, V)
    if gate is not None:
        c = c * gate
    return np.einsum("bqhe,heo->bqo", c, wo) + bo, p


def sdpa(q, k, v, scale=None, bias=None, value_mask=None, mask=None, causal=False,
         masked_row="zero"):
    q, k, v = _b(q), _b(k), _b(v)
    h, hkv = q.shape[1], k.shape[1]
    k = np.repeat(k, h // hkv, axis=1)  # query head i reads kv head i // (H / Hkv)
    v = np.repeat(v, h // hkv, axis=1)
    scale = 1.0 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = (q @ k.transpose(0, 1, 3, 2)) * scale
    if bias is not None:
        s = s + _b(bias)
    b, _, tq, tv = s.shape
    allowed = np.ones(s.shape, bool) & causal_allowed(tq, tv, causal)
    if value_mask is not None:
        allowed = allowed & (np.asarray(value_mask) != 0)[:, None, None, :]
    if mask is not None:
        allowed = allowed & (np.asarray(mask) != 0)
    w = masked_softmax(s, allowed, masked_row)
    return w @ v, w


def repeat_kv_heads(weights, group, use_bias=True, use_gate=False):
    """GroupedQueryAttention's weights as MultiHeadAttention's: each key/value kernel
    and bias repeated `group` = Nq / Nkv times on its head axis (query head n reads
    key/value head n // group); the gate has Nq heads already."""
    w = [np.asarray(x) for x in weights]
    names = (["query_kernel", "query_bias", "key_kernel", "key_bias", "value_kernel",
              "value_bias", "output_kernel", "output_bias"] if use_bias
             else ["query_kernel", "key_kernel", "value_kernel", "output_kernel"])
    if use_gate:
        names[2 * (2 if use_bias else 1):2 * (2 if use_bias else 1)] = (
            ["gate_kernel", "gate_bias"] if use_bias else ["gate_kernel"])
    out = []
    for name, x in zip(names, w):
        if name.startswith(("key_", "value_")):
            x = np.repeat(x, group, axis=-2)  # kernels (D, N, h), biases (N, h)
        out.append(x)
    return out


def gqa(q, v, k, weights, num_query_heads, num_key_value_heads, head_dim, use_bias=True,
        use_gate=False, **masks):
    """GroupedQueryAttention as MultiHeadAttention with repeated key/value heads."""
    group = num_query_heads // num_key_value_heads
    return mha(q, v, k, repeat_kv_heads(weights, group, use_bias, use_gate), num_query_heads,
               head_dim, use_bias, use_gate=use_gate, **masks)
