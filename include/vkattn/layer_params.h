/* vkattn/layer_params.h - the layers as plain data: descs, weights, per-call options,
 * and the CPU reference of every layer.
 *
 * Nothing here uses Vulkan, so the same structs drive the GPU layers
 * (vkattn/attention.h, additive_attention.h, bahdanau.h, mha.h, gqa.h) and their CPU
 * references below. Semantics are Keras 3 exactly (docs/SEMANTICS.md); docs/LAYERS.md
 * explains each argument and how to convert weights from Keras and PyTorch.
 *
 * Conventions: tensors f32 (the layers' io may also be f16 where their
 * headers say), row-major, last index fastest, sizes in
 * elements. Masks are f32, nonzero = may attend (Keras polarity; PyTorch's
 * boolean masks are the opposite). Zero fields mean the default in their
 * comment; booleans are named so that false is the default. Structs grow only
 * by appending fields.
 *
 * Weights structs hold plain `float *` arrays in Keras layout: *_set_weights
 * reads them (the layer keeps a copy), *_get_weights writes into them (each
 * non-NULL array must have room for the full weight).
 */
#ifndef VKATTN_LAYER_PARAMS_H
#define VKATTN_LAYER_PARAMS_H

#include <stdbool.h>
#include <stdint.h>

#include "vkattn/dtype.h"
#include "vkattn/export.h"
#include "vkattn/op_params.h"
#include "vkattn/result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- per call */

/* Per-call shape and options shared by every layer. */
typedef struct vkattn_layer_call {
    uint32_t batch;           /* required */
    uint32_t tq;              /* query length; required (1 for a rank-2 Bahdanau query) */
    uint32_t tv;              /* key/value length; required */
    /* NONE; TOP_LEFT = Keras use_causal_mask=True (query i sees keys j <= i);
     * BOTTOM_RIGHT for decoding with a KV cache (j <= i + Tv - Tq). */
    vkattn_causal causal;
    bool training;            /* dropout active iff training && rate > 0 */
    uint64_t seed, offset;    /* Philox dropout stream (vkattn/philox.h) */
    bool return_attention_scores;
    vkattn_sdpa_path path;    /* layers that use SDPA: AUTO/FUSED/UNFUSED */
    /* The GPU forward keeps what the layer's backward needs, in the layer's
     * scratch, until its next forward (vkattn/layer_backward.h says what each
     * layer keeps). Required before vkattn_X_backward_*; the CPU references
     * ignore it. */
    bool keep_for_backward;
} vkattn_layer_call;

/* Host-side twin of vkattn_layer_io (vkattn/layer_common.h) for the CPU
 * references (NULL = absent). Shapes as there. A host array has no shape, so
 * the attention mask's is given here: attention_mask_rank 0 means the full
 * mask, (B, Tq, Tv), or (B, H, Tq, Tv) with attention_mask_per_head; rank
 * 1..4 gives its dims in attention_mask_dims[0..rank-1], any shape that
 * broadcasts as vkattn_layer_io.attention_mask says (e.g. rank 2, (Tq, Tv):
 * one mask for every batch row and head). */
typedef struct vkattn_layer_host_io {
    const float *query, *value, *key, *query_mask, *value_mask, *attention_mask;
    bool attention_mask_per_head; /* rank 0 only: the full mask is (B, H, Tq, Tv) */
    float *output, *scores;
    uint32_t attention_mask_rank;    /* 0 = the full mask (see above); else 1..4 */
    uint32_t attention_mask_dims[4]; /* dims[0..rank-1], each 1 or the full size */
} vkattn_layer_host_io;

/* ---------------------------------------------------------------- Attention */

typedef enum vkattn_score_mode {
    VKATTN_SCORE_DOT = 0,    /* S = scale * Q K^T */
    VKATTN_SCORE_CONCAT = 1, /* S = csw * sum_d tanh(scale * (q_d + k_d)) */
} vkattn_score_mode;

/* keras.layers.Attention (Luong-style). */
/* Widths: *_width is an input's last dim (Keras's MultiHeadAttention words;
 * *_dim is a per-head width, MHA only). */
typedef struct vkattn_attention_desc {
    uint32_t query_width, value_width; /* required */
    uint32_t key_width;                /* 0 = value_width; must equal query_width */
    bool use_scale;                /* learned scalar scale (else 1) */
    vkattn_score_mode score_mode;
    float dropout;                 /* rate on the attention weights, [0, 1) */
    /* F32 (0) or F16: the type of the layer's weights and activation scratch
     * (vkattn/attention.h, "Half precision"); the CPU reference ignores it. */
    vkattn_dtype dtype;
} vkattn_attention_desc;

/* Both scalars are 1.0 in a new layer. set_weights sets both, literally (0 is
 * 0 here, not a default). scale is used only when use_scale; concat_score_weight
 * only in concat mode. */
typedef struct vkattn_attention_weights {
    float scale;
    float concat_score_weight;
} vkattn_attention_weights;

/* ---------------------------------------------------------------- AdditiveAttention */

/* keras.layers.AdditiveAttention (Bahdanau-style, no projections). */
typedef struct vkattn_additive_attention_desc {
    uint32_t query_width, value_width; /* required */
    uint32_t key_width;                /* 0 = value_width; must equal query_width */
    bool no_scale;                 /* Keras use_scale=False */
    float dropout;
    /* F32 (0) or F16: the type of the layer's weights and activation scratch
     * (vkattn/additive_attention.h, "Half precision"); the CPU reference ignores it. */
    vkattn_dtype dtype;
} vkattn_additive_attention_desc;

/* scale: (query_width); all ones in a new layer; ignored (may be NULL) if no_scale. */
typedef struct vkattn_additive_attention_weights {
    float *scale;
} vkattn_additive_attention_weights;

/* ---------------------------------------------------------------- BahdanauAttention */

/* Learned-projection additive attention:
 *   S[b,i,j] = sum_u v_u * tanh((query @ Wq)[b,i,u] + (key @ Wk)[b,j,u]) + b
 * then softmax etc. as AdditiveAttention. */
typedef struct vkattn_bahdanau_desc {
    uint32_t query_width; /* required */
    uint32_t key_width;   /* 0 = value_width */
    uint32_t value_width; /* required */
    uint32_t units;       /* required */
    float dropout;
    /* F32 (0) or F16: the type of the layer's weights and activation scratch
     * (vkattn/bahdanau.h, "Half precision"); the CPU reference ignores it. */
    vkattn_dtype dtype;
} vkattn_bahdanau_desc;

/* query_kernel (query_width, units), key_kernel (key_width, units), score_kernel
 * (units), score_bias a scalar. A new layer has all zeros except score_kernel
 * = ones. get_weights writes score_bias too. */
typedef struct vkattn_bahdanau_weights {
    float *query_kernel, *key_kernel, *score_kernel;
    float score_bias;
} vkattn_bahdanau_weights;

/* ---------------------------------------------------------------- MultiHeadAttention */

/* keras.layers.MultiHeadAttention. */
typedef struct vkattn_mha_desc {
    uint32_t num_heads;   /* required */
    uint32_t key_dim;     /* per-head query/key width; required */
    uint32_t value_dim;   /* per-head value width; 0 = key_dim */
    uint32_t query_width; /* query input width; required */
    uint32_t key_width;   /* key input width; 0 = value_width */
    uint32_t value_width; /* value input width; required */
    uint32_t output_dim;  /* 0 = query_width */
    bool no_bias;         /* Keras use_bias=False */
    float dropout;
    /* F32 (0) or F16: the type of the layer's weights and internal
     * activations (vkattn/mha.h, "Half precision"); the CPU reference ignores
     * it (it computes on the arrays it is given). */
    vkattn_dtype dtype;
    /* Keras sliding_window: 0 = None; else query i sees only keys j with
     * |i - j| < sliding_window, AND-ed with every other mask (the band
     * follows the causal alignment: with bottom-right causal, and on the
     * cached path, query i sits at i + Tv - Tq; docs/SEMANTICS.md) */
    uint32_t sliding_window;
    /* Keras use_gate (3.14): context *= sigmoid(query @ gate_kernel +
     * gate_bias) per head and channel, after attention (and dropout), before
     * the output projection; adds the gate_kernel/gate_bias weights */
    bool use_gate;
} vkattn_mha_desc;

/* Keras layouts (docs/SEMANTICS.md): query/key/value kernels (D_in, H, head_dim),
 * biases (H, head_dim), output kernel (H, value_dim, output_dim), output bias
 * (output_dim). Biases are ignored when no_bias. With use_gate: gate_kernel
 * (query_width, H, value_dim) and gate_bias (H, value_dim) (Keras creates
 * them after key and before value: its weight list is q, k, gate, v, out);
 * both are ignored (may be NULL) without use_gate, gate_bias also when
 * no_bias. */
typedef struct vkattn_mha_weights {
    float *query_kernel, *query_bias;
    float *key_kernel, *key_bias;
    float *value_kernel, *value_bias;
    float *output_kernel, *output_bias;
    float *gate_kernel, *gate_bias;
} vkattn_mha_weights;

/* keras.layers.GroupQueryAttention (GroupedQueryAttention, vkattn/gqa.h):
 * num_query_heads query heads share num_key_value_heads key/value heads, each
 * of head_dim; query head n reads key/value head
 * n / (num_query_heads / num_key_value_heads). The output has the query's
 * width. */
typedef struct vkattn_gqa_desc {
    uint32_t head_dim;            /* per-head query/key/value width; required */
    uint32_t num_query_heads;     /* Nq; required */
    uint32_t num_key_value_heads; /* Nkv; required; Nq must be a multiple */
    uint32_t query_width;         /* query input width Dq, also the output's; required */
    uint32_t key_width;           /* key input width; 0 = value_width */
    uint32_t value_width;         /* value input width; required */
    bool no_bias;                 /* Keras use_bias=False */
    float dropout;
    vkattn_dtype dtype; /* F32 (0) or F16, as vkattn_mha_desc.dtype */
    /* Keras sliding_window: 0 = None; else query i sees only keys j with
     * |i - j| < sliding_window, as vkattn_mha_desc.sliding_window; negative
     * is INVALID_ARGUMENT */
    int32_t sliding_window;
    /* Keras use_gate: context *= sigmoid(query @ gate_kernel + gate_bias)
     * per query head and channel before the output projection, as
     * vkattn_mha_desc.use_gate */
    bool use_gate;
} vkattn_gqa_desc;

/* Keras layouts, the fields of vkattn_mha_weights: query_kernel (Dq, Nq, h),
 * query_bias (Nq, h), key_kernel (Dk, Nkv, h), key_bias (Nkv, h),
 * value_kernel (Dv, Nkv, h), value_bias (Nkv, h), output_kernel (Nq, h, Dq),
 * output_bias (Dq), h = head_dim; with use_gate gate_kernel (Dq, Nq, h) and
 * gate_bias (Nq, h). */
typedef vkattn_mha_weights vkattn_gqa_weights;

/* ---------------------------------------------------------------- CPU references */

/* The CPU reference of each layer: what *_record computes, from the same desc,
 * weights and call, on host arrays, with double accumulation, composed from the
 * op references of vkattn/reference.h. Dropout draws the same Philox stream as
 * the GPU, so kept/dropped decisions agree bit for bit. Contract as in
 * vkattn/reference.h: VKATTN_ERROR_INVALID_ARGUMENT (naming the argument via
 * vkattn_last_error()) for a bad desc, weights, call or a missing array;
 * nothing is written on failure. io->scores is written iff
 * call->return_attention_scores. */
VKATTN_API vkattn_result vkattn_reference_attention(const vkattn_attention_desc *desc,
                                                    const vkattn_attention_weights *w,
                                                    const vkattn_layer_call *call,
                                                    const vkattn_layer_host_io *io);

VKATTN_API vkattn_result vkattn_reference_additive_attention(
    const vkattn_additive_attention_desc *desc, const vkattn_additive_attention_weights *w,
    const vkattn_layer_call *call, const vkattn_layer_host_io *io);

VKATTN_API vkattn_result vkattn_reference_bahdanau(const vkattn_bahdanau_desc *desc,
                                                   const vkattn_bahdanau_weights *w,
                                                   const vkattn_layer_call *call,
                                                   const vkattn_layer_host_io *io);

VKATTN_API vkattn_result vkattn_reference_mha(const vkattn_mha_desc *desc,
                                              const vkattn_mha_weights *w,
                                              const vkattn_layer_call *call,
                                              const vkattn_layer_host_io *io);

/* GroupedQueryAttention: scores (B, Nq, Tq, Tv); query_mask, value_mask and
 * attention_mask ((B, Tq, Tv), or (B, Nq, Tq, Tv) per head) as for
 * vkattn_reference_mha. */
VKATTN_API vkattn_result vkattn_reference_gqa(const vkattn_gqa_desc *desc,
                                              const vkattn_gqa_weights *w,
                                              const vkattn_layer_call *call,
                                              const vkattn_layer_host_io *io);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_LAYER_PARAMS_H */
