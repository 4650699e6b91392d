# Generates tests/cases/gate.json (docs/CASES.md): Keras's use_gate in
# MultiHeadAttention and GroupedQueryAttention, the expected values from an
# independent pure-Python float64 implementation of Keras's layers (no numpy
# needed): python3 tests/cases/gate_gen.py from the repository root.
# The gist: gate = sigmoid(query @ gate_kernel + gate_bias), shape (T, H, dv),
# multiplies each head's attention context per channel before the output
# projection: out = sum_{n,c} (ctx[n][i][c] * gate[i][n][c]) * Wo[n][c][e] + bo[e].
import json, math, random

def sigmoid(x): return 1.0 / (1.0 + math.exp(-x))

def attention(q, k, v, W, H, Hkv, dk, dv, Dout, qmask=None, vmask=None, causal=False,
              window=None, bias=True, gate=True):
    B, Tq, Tv = len(q), len(q[0]), len(v[0])
    G = H // Hkv
    def proj(x, K, b, heads, d):  # x (T, D), K (D, heads, d) -> (heads, T, d)
        return [[[sum(x[t][a] * K[a][n][c] for a in range(len(x[0]))) + (b[n][c] if bias else 0.0)
                  for c in range(d)] for t in range(len(x))] for n in range(heads)]
    out, scores = [], []
    for b in range(B):
        Q = proj(q[b], W["query_kernel"], W.get("query_bias"), H, dk)
        K = proj(k[b], W["key_kernel"], W.get("key_bias"), Hkv, dk)
        V = proj(v[b], W["value_kernel"], W.get("value_bias"), Hkv, dv)
        Gt = proj(q[b], W["gate_kernel"], W.get("gate_bias"), H, dv) if gate else None
        ctx = [[[0.0] * dv for _ in range(Tq)] for _ in range(H)]
        sc_b = []
        for n in range(H):
            kv = n // G
            sc_n = []
            for i in range(Tq):
                allowed = [True] * Tv
                for j in range(Tv):
                    if qmask is not None and not qmask[b][i]: allowed[j] = False
                    if vmask is not None and not vmask[b][j]: allowed[j] = False
                    if causal and j > i: allowed[j] = False
                    if window is not None and abs(i - j) >= window: allowed[j] = False
                l = [sum(Q[n][i][c] * K[kv][j][c] for c in range(dk)) / math.sqrt(dk)
                     for j in range(Tv)]
                if any(allowed):
                    m = max(l[j] for j in range(Tv) if allowed[j])
                    e = [math.exp(l[j] - m) if allowed[j] else 0.0 for j in range(Tv)]
                    s = sum(e); p = [x / s for x in e]
                else:
                    p = [0.0] * Tv  # vkattn's rule for a row with no allowed key
                sc_n.append(p)
                for c in range(dv):
                    ctx[n][i][c] = sum(p[j] * V[kv][j][c] for j in range(Tv))
                    if gate:
                        ctx[n][i][c] *= sigmoid(Gt[n][i][c])
            sc_b.append(sc_n)
        scores.append(sc_b)
        Wo = W["output_kernel"]
        out.append([[sum(ctx[n][i][c] * Wo[n][c][e] for n in range(H) for c in range(dv))
                     + (W["output_bias"][e] if bias else 0.0) for e in range(Dout)]
                    for i in range(Tq)])
    return out, scores

def rnd(*shape, a=1.0):
    if len(shape) == 1: return [round(random.uniform(-a, a), 2) for _ in range(shape[0])]
    return [rnd(*shape[1:], a=a) for _ in range(shape[0])]

cases = []
# 1. MultiHeadAttention, cross-attention, key_dim != value_dim, output_shape, masks
random.seed(314)
B, Tq, Tv, Dq, Dk, Dv, H, dk, dv, Dout = 2, 3, 4, 5, 6, 4, 2, 3, 2, 3
W = {"query_kernel": rnd(Dq, H, dk), "query_bias": rnd(H, dk), "key_kernel": rnd(Dk, H, dk),
     "key_bias": rnd(H, dk), "gate_kernel": rnd(Dq, H, dv, a=2.0), "gate_bias": rnd(H, dv, a=2.0),
     "value_kernel": rnd(Dv, H, dv), "value_bias": rnd(H, dv), "output_kernel": rnd(H, dv, Dout),
     "output_bias": rnd(Dout)}
q, k, v = rnd(B, Tq, Dq), rnd(B, Tv, Dk), rnd(B, Tv, Dv)
qm, vm = [[1, 0, 1], [1, 1, 1]], [[1, 1, 0, 1], [0, 1, 1, 1]]
o, s = attention(q, k, v, W, H, H, dk, dv, Dout, qmask=qm, vmask=vm)
cases.append({
    "name": "mha_gate_cross_masks",
    "comment": "use_gate: context *= sigmoid(query @ gate_kernel + gate_bias) per head and "
               "channel before the output projection (tests/cases/gate_gen.py, float64); query "
               "row 1 of batch 0 is masked: its output row is the output bias",
    "layer": "MultiHeadAttention",
    "params": {"num_heads": H, "key_dim": dk, "value_dim": dv, "output_shape": Dout,
               "use_bias": True, "use_gate": True, "dropout": 0.0, "weights": W},
    "query": q, "key": k, "value": v, "query_mask": [[float(x) for x in r] for r in qm],
    "value_mask": [[float(x) for x in r] for r in vm], "return_attention_scores": True,
    "expected_output": o, "expected_scores": s,
    "grad_output": rnd(B, Tq, Dout),
})
# 2. GroupedQueryAttention, self-attention, Nq 4 sharing Nkv 2, causal, no bias (no gate bias)
random.seed(315)
B, T, D, h, nq, nkv = 1, 5, 4, 2, 4, 2
W = {"query_kernel": rnd(D, nq, h), "key_kernel": rnd(D, nkv, h),
     "gate_kernel": rnd(D, nq, h, a=2.0), "value_kernel": rnd(D, nkv, h),
     "output_kernel": rnd(nq, h, D)}
x = rnd(B, T, D)
o, s = attention(x, x, x, W, nq, nkv, h, h, D, causal=True, bias=False)
cases.append({
    "name": "gqa_gate_self_causal_nobias",
    "comment": "use_gate with use_bias False (Keras: then the gate has no bias either), "
               "query heads 0,1 read key/value head 0 and 2,3 head 1, use_causal_mask "
               "(tests/cases/gate_gen.py, float64)",
    "layer": "GroupedQueryAttention",
    "params": {"head_dim": h, "num_query_heads": nq, "num_key_value_heads": nkv,
               "use_bias": False, "use_gate": True, "sliding_window": None, "dropout": 0.0,
               "weights": W},
    "query": x, "value": x, "use_causal_mask": True, "return_attention_scores": True,
    "expected_output": o, "expected_scores": s,
    "grad_output": rnd(B, T, D),
})
json.dump(cases, open("tests/cases/gate.json", "w"), indent=1)
