# Generates tests/cases/gqa.json (docs/CASES.md): the expected values of its
# GroupedQueryAttention cases from an independent pure-Python float64
# implementation of Keras's layer (no numpy needed): python3 tests/cases/gqa_gen.py
# from the repository root.
import json, math, random

def gqa(q, k, v, W, nq, nkv, h, qmask=None, vmask=None, causal=False, window=None, bias=True):
    B, Tq, Dq = len(q), len(q[0]), len(q[0][0]); Tv = len(v[0])
    G = nq // nkv
    def proj(x, K, b, heads):  # x (T, D), K (D, heads, h) -> (heads, T, h)
        return [[[sum(x[t][a] * K[a][n][c] for a in range(len(x[0]))) + (b[n][c] if bias else 0.0)
                  for c in range(h)] for t in range(len(x))] for n in range(heads)]
    out, scores = [], []
    for b in range(B):
        Q = proj(q[b], W["query_kernel"], W.get("query_bias"), nq)
        K = proj(k[b], W["key_kernel"], W.get("key_bias"), nkv)
        V = proj(v[b], W["value_kernel"], W.get("value_bias"), nkv)
        ctx = [[[0.0] * h for _ in range(Tq)] for _ in range(nq)]
        sc_b = []
        for n in range(nq):
            kv = n // G
            sc_n = []
            for i in range(Tq):
                allowed = [True] * Tv
                for j in range(Tv):
                    if qmask is not None and not qmask[b][i]: allowed[j] = False
                    if vmask is not None and not vmask[b][j]: allowed[j] = False
                    if causal and j > i: allowed[j] = False
                    if window is not None and abs(i - j) >= window: allowed[j] = False
                l = [sum(Q[n][i][c] * K[kv][j][c] for c in range(h)) / math.sqrt(h) for j in range(Tv)]
                if any(allowed):
                    m = max(l[j] for j in range(Tv) if allowed[j])
                    e = [math.exp(l[j] - m) if allowed[j] else 0.0 for j in range(Tv)]
                    s = sum(e); p = [x / s for x in e]
                else:
                    p = [0.0] * Tv  # vkattn's rule for a row with no allowed key
                sc_n.append(p)
                for c in range(h):
                    ctx[n][i][c] = sum(p[j] * V[kv][j][c] for j in range(Tv))
            sc_b.append(sc_n)
        scores.append(sc_b)
        Wo = W["output_kernel"]
        out.append([[sum(ctx[n][i][c] * Wo[n][c][e] for n in range(nq) for c in range(h))
                     + (W["output_bias"][e] if bias else 0.0) for e in range(Dq)] for i in range(Tq)])
    return out, scores

def r2(x): return [[round(v, 2) for v in row] for row in x]
def rnd(*shape):
    if len(shape) == 1: return [round(random.uniform(-1, 1), 2) for _ in range(shape[0])]
    return [rnd(*shape[1:]) for _ in range(shape[0])]
def f32(x):  # values written as float32 round-trips, like the other case files
    import struct
    if isinstance(x, list): return [f32(v) for v in x]
    return struct.unpack('f', struct.pack('f', x))[0]

cases = []
# 1. Keras's own known-value test (grouped_query_attention_test.py)
eye = [[1.0 if i == j else 0.0 for j in range(8)] for i in range(8)]
val = [[(8 * i + j) / 100 for j in range(8)] for i in range(8)]
idk = [[[1.0 if a == c else 0.0 for c in range(8)] for n in range(8)] for a in range(8)]
zb = [[0.0] * 8 for _ in range(8)]
W = {"query_kernel": idk, "query_bias": zb, "key_kernel": idk, "key_bias": zb,
     "value_kernel": idk, "value_bias": zb, "output_kernel": idk, "output_bias": [0.0] * 8}
rows = [2.407, 2.439, 2.472, 2.504, 2.536, 2.568, 2.601, 2.633]
cases.append({
    "name": "gqa_keras_known_values",
    "comment": "Keras's test: head_dim = Nq = Nkv = 8, query = key = I, value = arange(64)/100, "
               "identity kernels repeated on axis 1, biases 0; Keras's printed values",
    "layer": "GroupQueryAttention",
    "params": {"head_dim": 8, "num_query_heads": 8, "num_key_value_heads": 8, "use_bias": True,
               "sliding_window": None, "dropout": 0.0, "weights": W},
    "query": [eye], "key": [eye], "value": [val], "return_attention_scores": True,
    "tolerance": {"atol": 5e-4, "rtol": 0.0},
    "expected_output": [[[r] * 8 for r in rows]],
    "expected_scores": [[[[0.1691 if i == j else 0.1187 for j in range(8)] for i in range(8)]
                         for n in range(8)]],
})
# 2. cross-attention, Nq 4 sharing Nkv 2, key of its own width, query and value masks
random.seed(22)
B, Tq, Tv, Dq, Dk, Dv, h, nq, nkv = 2, 3, 4, 5, 6, 4, 3, 4, 2
W = {"query_kernel": rnd(Dq, nq, h), "query_bias": rnd(nq, h), "key_kernel": rnd(Dk, nkv, h),
     "key_bias": rnd(nkv, h), "value_kernel": rnd(Dv, nkv, h), "value_bias": rnd(nkv, h),
     "output_kernel": rnd(nq, h, Dq), "output_bias": rnd(Dq)}
q, k, v = rnd(B, Tq, Dq), rnd(B, Tv, Dk), rnd(B, Tv, Dv)
qm, vm = [[1, 1, 0], [1, 1, 1]], [[1, 1, 1, 0], [1, 0, 1, 1]]
o, s = gqa(q, k, v, W, nq, nkv, h, qmask=qm, vmask=vm)
cases.append({
    "name": "gqa_cross_nq4_nkv2_masks",
    "comment": "query heads 0,1 read key/value head 0 and 2,3 head 1; query row 2 of batch 0 is "
               "masked: its output row is the output bias and its scores 0",
    "layer": "GroupedQueryAttention",
    "params": {"head_dim": h, "num_query_heads": nq, "num_key_value_heads": nkv,
               "use_bias": True, "sliding_window": None, "dropout": 0.0, "weights": W},
    "query": q, "key": k, "value": v, "query_mask": [[float(x) for x in r] for r in qm],
    "value_mask": [[float(x) for x in r] for r in vm], "return_attention_scores": True,
    "expected_output": o, "expected_scores": s,
    "grad_output": rnd(B, Tq, Dq),
})
# 3. self-attention, one key/value head (multi-query), causal with a sliding window, no bias, key omitted
random.seed(23)
B, T, D, h, nq, nkv = 1, 5, 4, 2, 3, 1
W = {"query_kernel": rnd(D, nq, h), "key_kernel": rnd(D, nkv, h), "value_kernel": rnd(D, nkv, h),
     "output_kernel": rnd(nq, h, D)}
x = rnd(B, T, D)
o, s = gqa(x, x, x, W, nq, nkv, h, causal=True, window=2, bias=False)
cases.append({
    "name": "gqa_self_mqa_causal_window2",
    "comment": "Nkv = 1 (multi-query), use_causal_mask with sliding_window 2: row t sees keys t-1 and t",
    "layer": "GroupedQueryAttention",
    "params": {"head_dim": h, "num_query_heads": nq, "num_key_value_heads": nkv,
               "use_bias": False, "sliding_window": 2, "dropout": 0.0, "weights": W},
    "query": x, "value": x, "use_causal_mask": True, "return_attention_scores": True,
    "expected_output": o, "expected_scores": s,
})
json.dump(cases, open("tests/cases/gqa.json", "w"), indent=1)
