/* vkattn/op_params.h - what each op computes, as plain data.
 *
 * These structs describe an op's shape and options without any Vulkan type, so
 * the same struct drives the GPU op (vkattn/matmul.h, softmax.h, additive.h,
 * heads.h, dropout.h, sdpa.h) and its CPU reference
 * (vkattn/reference.h). All tensors are f32, row-major, last index fastest.
 * Sizes are in elements, never bytes.
 *
 * Zero fields mean the default written in each field's comment; booleans are
 * named so that false is the default. Structs grow only by appending fields.
 */
#ifndef VKATTN_OP_PARAMS_H
#define VKATTN_OP_PARAMS_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- matmul */

/* Where one matrix operand lives: element strides between matrices of the outer
 * batch, of the inner batch ("heads"), and between rows. */
typedef struct vkattn_matrix_layout {
    uint64_t batch_stride; /* A, B: 0 broadcasts one matrix over the batch. C: 0 = packed */
    uint64_t head_stride;  /* A, B: 0 broadcasts over heads. C: 0 = packed */
    uint32_t row_stride;   /* 0 = packed (the stored matrix's column count) */
} vkattn_matrix_layout;

/* C[b,h] = alpha * op(A[b,h]) @ op(B[b,h]) (+ bias row of N), op = optional transpose.
 * op(A) is M x K, op(B) is K x N, C is M x N. A is stored M x K, or K x M when
 * transpose_a; B is stored K x N, or N x K when transpose_b. Matrices are indexed
 * b * batch_stride + h * head_stride. */
typedef struct vkattn_matmul_params {
    uint32_t batch; /* outer batch count; 0 = 1 */
    uint32_t heads; /* inner batch count; 0 = 1 */
    uint32_t m, n, k; /* required, >= 1 */
    bool transpose_a;
    bool transpose_b;
    bool has_bias;  /* add a bias row of n elements to every row of C */
    float alpha;    /* 0 = 1.0; must be finite */
    vkattn_matrix_layout a, b, c;
} vkattn_matmul_params;

/* ---------------------------------------------------------------- masks */

typedef enum vkattn_causal {
    VKATTN_CAUSAL_NONE = 0,
    VKATTN_CAUSAL_TOP_LEFT = 1,     /* query i sees key j iff j <= i (Keras use_causal_mask) */
    VKATTN_CAUSAL_BOTTOM_RIGHT = 2, /* j <= i + Tv - Tq (decoding with a KV cache) */
} vkattn_causal;

/* What a query row with no allowed key becomes (never NaN). */
typedef enum vkattn_masked_row {
    VKATTN_MASKED_ROW_ZERO = 0,    /* all-zero weights (MultiHeadAttention, SDPA) */
    VKATTN_MASKED_ROW_UNIFORM = 1, /* uniform 1/Tv (Attention, AdditiveAttention) */
} vkattn_masked_row;

/* Which axes of a (B, H, Tq, Tv) operand are stored with size 1 (broadcast). */
typedef struct vkattn_broadcast {
    bool batch; /* stored batch dim is 1 */
    bool heads; /* stored head dim is 1 */
    bool rows;  /* stored query dim is 1 */
} vkattn_broadcast;

/* Everything between the raw logits and the softmax: scale, additive bias, masks.
 * logit = score * scale + bias; a key is allowed iff every given mask allows it
 * (masks are f32, nonzero = may attend). */
typedef struct vkattn_mask_params {
    vkattn_causal causal;
    vkattn_masked_row masked_row;
    bool has_value_mask;             /* value_mask (B, Tv) */
    bool has_mask;                   /* explicit mask (B|1, H|1, Tq|1, Tv) */
    vkattn_broadcast mask_broadcast;
    bool has_bias;                   /* additive bias (B|1, H|1, Tq|1, Tv) */
    vkattn_broadcast bias_broadcast;
} vkattn_mask_params;

/* ---------------------------------------------------------------- dropout */

/* Inverted dropout with the Philox stream of docs/SEMANTICS.md: active only when
 * training && rate > 0; kept values are scaled by 1/(1-rate). rate must be in
 * [0, 1]; rate 1 drops everything. */
typedef struct vkattn_dropout_params {
    float rate;
    bool training;
    uint64_t seed;
    uint64_t offset; /* advance per training step */
} vkattn_dropout_params;

/* ---------------------------------------------------------------- ops */

/* Masked softmax over the last axis of scores (B, H, Tq, Tv). */
typedef struct vkattn_softmax_params {
    uint32_t batch, heads, tq, tv; /* heads 0 = 1; others required */
    float scale;                   /* applied to the scores first; 0 = 1.0 */
    vkattn_mask_params mask;
    /* sliding window: 0 = none; else key j of row i is allowed only if
     * |pos(i) - j| < sliding_window, pos(i) = i, or i + Tv - Tq with
     * bottom-right causal (the band is anchored where the causal mask is);
     * AND-ed with every other mask (docs/SEMANTICS.md, "Sliding window") */
    uint32_t sliding_window;
} vkattn_softmax_params;

/* Additive tanh scoring, S (B, Tq, Tv):
 *   S[b,i,j] = outer_scale * sum_d s_d * tanh(inner_scale * (q[b,i,d] + k[b,j,d]))
 * with q (B, Tq, dim), k (B, Tv, dim), s (dim) when has_scale_vector, else all ones.
 * Keras Attention concat mode: inner = scale, outer = concat_score_weight.
 * Keras AdditiveAttention: s = scale vector, inner = outer = 1. */
typedef struct vkattn_additive_params {
    uint32_t batch, tq, tv, dim; /* required */
    float inner_scale;           /* 0 = 1.0 */
    float outer_scale;           /* 0 = 1.0 */
    bool has_scale_vector;
} vkattn_additive_params;

/* Head split (B, T, H*d) -> (B, H, T, d) and merge, its inverse. */
typedef struct vkattn_heads_params {
    uint32_t batch, seq, heads, head_dim; /* required */
} vkattn_heads_params;

/* Dropout applied to a (B, H, Tq, Tv) weight tensor (H = 1 for single-head layers). */
typedef struct vkattn_dropout_op_params {
    uint32_t batch, heads, tq, tv; /* heads 0 = 1 */
    vkattn_dropout_params dropout;
} vkattn_dropout_op_params;

/* Which SDPA implementation runs. */
typedef enum vkattn_sdpa_path {
    VKATTN_SDPA_AUTO = 0,    /* fused unless weights are returned or the shape needs chaining */
    VKATTN_SDPA_FUSED = 1,   /* one flash-attention dispatch; error if it cannot serve the call */
    VKATTN_SDPA_UNFUSED = 2, /* matmul -> softmax -> dropout -> matmul, with a score workspace */
} vkattn_sdpa_path;

/* Scaled dot-product attention:
 *   out = dropout(softmax(Q K^T * scale + bias, masks)) V
 * Q (B, H, Tq, dk), K (B, Hkv, Tv, dk), V (B, Hkv, Tv, dv), out (B, H, Tq, dv);
 * query head h reads K/V head h / (H / Hkv). Weights, when returned, are
 * (B, H, Tq, Tv). */
typedef struct vkattn_sdpa_params {
    uint32_t batch, heads, tq, tv, dk, dv; /* heads 0 = 1; dv 0 = dk */
    uint32_t kv_heads;                     /* 0 = heads; heads must be a multiple */
    float scale;                           /* 0 = 1/sqrt(dk) */
    vkattn_mask_params mask;
    vkattn_dropout_params dropout;
    bool return_weights;
    bool weights_after_dropout; /* returned weights: false = before dropout */
    vkattn_sdpa_path path;
    /* sliding window: 0 = none; else key j of row i is allowed only if
     * |pos(i) - j| < sliding_window, pos(i) = i, or i + Tv - Tq with
     * bottom-right causal (anchored where the causal mask is); AND-ed with
     * every other mask. A window >= Tq + Tv changes nothing. The fused
     * kernels skip key tiles wholly outside the band: O(Tq * window) work. */
    uint32_t sliding_window;
    /* Logit soft-capping (Gemma 2): 0 = off; else each scaled score s becomes
     * softcap * tanh(s / softcap) before the bias and the masks. Must be
     * finite and >= 0. */
    float softcap;
    /* Attention sinks (gpt-oss, StreamingLLM): io->sinks (H) f32, one logit
     * per query head that joins every row's softmax denominator and takes
     * no value: out = sum_j exp(s_j - m) v_j / (exp(sink_h - m) + sum_j
     * exp(s_j - m)), m the larger of the row's maximum and sink_h, so the
     * weights of a row sum to less than 1. A row with no allowed key keeps
     * weights 0 and output 0 (whatever mask.masked_row). */
    bool has_sinks;
} vkattn_sdpa_params;

/* Decode attention against a KV cache (vkattn/decode.h; CPU reference
 * vkattn_reference_sdpa_decode): Tq new queries per sequence, already appended
 * to the cache, attend to the sequence's first L_b cached keys:
 *   out[b,h,i] = dropout(softmax_j(q[b,h,i] . K[b,h/G,j] * scale)) V[b,h/G,j]
 * over keys j < L_b - Tq + i + 1 (bottom-right causal) allowed by the value
 * mask; G = heads / kv_heads. Q (B, H, Tq, dk), K (B, Hkv, capacity, dk),
 * V (B, Hkv, capacity, dv), value mask (B, capacity), out (B, H, Tq, dv). A
 * row with no allowed key (L_b - Tq + i < 0, L_b = 0, or all masked) is zeros.
 * Dropout: the Philox stream of the full SDPA, keep(b * H + h, i, j), so it
 * drops exactly what vkattn_sdpa with bottom-right causal over the same keys
 * drops. */
typedef struct vkattn_sdpa_decode_params {
    uint32_t batch, heads, tq;    /* required; tq <= VKATTN_DECODE_MAX_TQ */
    uint32_t kv_heads;            /* 0 = heads; heads must be a multiple */
    uint32_t capacity, dk, dv;    /* the cache's; dv 0 = dk */
    float scale;                  /* 0 = 1/sqrt(dk) */
    bool has_value_mask;          /* value_mask (B, capacity), nonzero = may attend */
    vkattn_dropout_params dropout;
    /* sliding window: 0 = none; else row i (at position L_b - Tq + i) sees
     * only keys j > L_b - Tq + i - sliding_window: the band of vkattn_sdpa
     * with bottom-right causal over the same keys */
    uint32_t sliding_window;
    /* key splits per query row (split-K decoding, FlashAttention's
     * num_splits): each split's partial softmax is merged by a second
     * dispatch. 0 = vkattn's choice (enough workgroups to fill a GPU, at
     * most 64 splits); N = min(N, 256) splits, fewer where the keys run out
     * (each split keeps at least one 64-key tile, or 4 keys per invocation
     * under the CPU tuning) and more where lavapipe's loop budget needs
     * them. Any count gives the same result up to rounding: a knob for
     * speed only. */
    uint32_t num_splits;
    /* soft-capping and sinks as vkattn_sdpa_params (io->sinks (H) f32) */
    float softcap;
    bool has_sinks;
} vkattn_sdpa_decode_params;
#define VKATTN_DECODE_MAX_TQ 64

/* ---------------------------------------------------------------- rotary embedding */

/* Which features a rotary embedding turns together (KerasHub RotaryEmbedding,
 * Hugging Face's rotate_half). */
typedef enum vkattn_rope_layout {
    VKATTN_ROPE_HALF = 0,        /* feature i with i + rotary_dim/2 (Llama, Qwen, Gemma) */
    VKATTN_ROPE_INTERLEAVED = 1, /* feature 2i with 2i + 1 (GPT-J, Meta's original Llama) */
} vkattn_rope_layout;

/* Rotary position embedding (KerasHub's names): at position p, feature pair
 * i (0 <= i < rotary_dim / 2) turns by the angle
 *   (p / scaling_factor) * max_wavelength ^ (-2i / rotary_dim);
 * features at and above rotary_dim pass unchanged. */
typedef struct vkattn_rope_params {
    float max_wavelength;      /* 0 = 10000; else finite and > 1 */
    float scaling_factor;      /* 0 = 1; else finite and > 0 */
    uint32_t rotary_dim;       /* 0 = the head width; even, <= the head width */
    vkattn_rope_layout layout; /* 0 = HALF */
} vkattn_rope_params;

/* ---------------------------------------------------------------- head ops */

/* The public head ops (vkattn/head_op.h) on x (batch, heads, seq, dim). */
typedef enum vkattn_head_op {
    VKATTN_HEAD_RMS_NORM = 1,          /* out = x / sqrt(mean(x^2) + epsilon) * weight, per row */
    VKATTN_HEAD_RMS_NORM_BACKWARD = 2, /* grad_x and grad_weight of RMS_NORM at x */
    VKATTN_HEAD_ROPE = 3,              /* out = x turned by rope's angles */
    VKATTN_HEAD_ROPE_INVERSE = 4,      /* turned back by -angle: ROPE's backward (its transpose) */
} vkattn_head_op;

typedef struct vkattn_head_op_params {
    vkattn_head_op op;
    uint32_t batch, heads, seq, dim; /* x is (batch, heads, seq, dim); each >= 1 */
    float epsilon;                   /* the norm ops: 0 = 1e-6; else in [0, 1] */
    vkattn_rope_params rope;         /* the rotations: zeros = defaults (rotary_dim 0 = dim) */
} vkattn_head_op_params;

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_OP_PARAMS_H */
