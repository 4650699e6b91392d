/* vkattn/gqa_host.h - keras.layers.GroupQueryAttention without a GPU:
 * its desc, its weights in Keras layout, its CPU reference forward and
 * backward, and its weights from and to safetensors files.
 *
 * The Vulkan-free half of the layer's API: vkattn/gqa.h, the header an app
 * opens, includes it and adds the GPU layer. This one includes no Vulkan
 * header (src/reference/ and src/weights/ implement it), so an app that only
 * checks numbers against the reference or converts weights builds without
 * Vulkan. What every layer shares: vkattn/layer_call.h (the call, the host
 * io and gradients, the references' contract) and vkattn/safetensors.h (the
 * file API, the load/free/save contract).
 */
#ifndef VKATTN_GQA_HOST_H
#define VKATTN_GQA_HOST_H

#include "vkattn/export.h"
#include "vkattn/layer_call.h"
#include "vkattn/mha_host.h"
#include "vkattn/result.h"
#include "vkattn/safetensors.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --------------------------------------------------------------- desc and weights */

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
    /* A new layer's weights (vkattn_initializer, vkattn/layer_call.h): the
     * kernels' (0 = glorot_uniform) and the biases' (0 = zeros), drawn from
     * the Philox stream keyed by initializer_seed (any value, 0 included). */
    vkattn_initializer kernel_initializer;
    vkattn_initializer bias_initializer;
    uint64_t initializer_seed;
    /* The attention of today's open models (docs/LAYERS.md, "Rotary
     * embeddings, QK-norm, soft-capping and sinks"), in this order per head:
     * QK-norm on the projected queries and keys (weights query_norm and
     * key_norm, (head_dim,)): x / sqrt(mean(x^2) + qk_norm_epsilon) * w
     * (Qwen3, OLMo 2; epsilon 0 = 1e-6); then the rotary embedding of
     * queries and keys at their positions (vkattn_rope_params; io positions,
     * else query t at t and key s at s; on the cached path each new token at
     * its sequence's cache length); scores scaled, then soft-capped
     * (softcap 0 = off; vkattn_sdpa_params.softcap), then masked; with
     * use_sinks a learned logit per query head (weight sinks, (H,)) joins
     * every softmax denominator (vkattn_sdpa_params.has_sinks). */
    bool use_qk_norm;
    float qk_norm_epsilon;
    bool use_rope;
    vkattn_rope_params rope;
    float softcap;
    bool use_sinks;
} vkattn_gqa_desc;

/* Keras layouts, the fields of vkattn_mha_weights: query_kernel (Dq, Nq, h),
 * query_bias (Nq, h), key_kernel (Dk, Nkv, h), key_bias (Nkv, h),
 * value_kernel (Dv, Nkv, h), value_bias (Nkv, h), output_kernel (Nq, h, Dq),
 * output_bias (Dq), h = head_dim; with use_gate gate_kernel (Dq, Nq, h) and
 * gate_bias (Nq, h). */
typedef vkattn_mha_weights vkattn_gqa_weights;

/* -------------------------------------------- CPU reference (vkattn/layer_call.h) */

/* GroupedQueryAttention: scores (B, Nq, Tq, Tv); query_mask, value_mask and
 * attention_mask ((B, Tq, Tv), or (B, Nq, Tq, Tv) per head) as for
 * vkattn_reference_mha. */
VKATTN_API vkattn_result vkattn_reference_gqa(const vkattn_gqa_desc *desc,
                                              const vkattn_gqa_weights *w,
                                              const vkattn_layer_call *call,
                                              const vkattn_layer_host_io *io);

/* GroupedQueryAttention: as vkattn_reference_mha_backward, the key and value
 * weight gradients (Dk, Nkv, h), (Nkv, h), ... in the layer's shapes: each
 * key/value head's gradient is the sum over the Nq/Nkv query heads that
 * read it. */
VKATTN_API vkattn_result vkattn_reference_gqa_backward(
    const vkattn_gqa_desc *desc, const vkattn_gqa_weights *w, const vkattn_layer_call *call,
    const vkattn_layer_host_io *io, const float *grad_output,
    const vkattn_layer_host_grads *grads, vkattn_gqa_weights *grad_w);

/* --------------------------------------------- safetensors (vkattn/safetensors.h) */

VKATTN_API vkattn_result vkattn_gqa_weights_load(vkattn_weights_file *file,
                                                 const vkattn_gqa_desc *desc,
                                                 const vkattn_weights_load_desc *load,
                                                 vkattn_gqa_weights *out);
/* The weights of vkattn_mha_weights_free (the same struct): inline, no export
 * of its own (0.4). */
static inline void vkattn_gqa_weights_free(vkattn_gqa_weights *w)
{
    vkattn_mha_weights_free(w);
}
/* GroupedQueryAttention: the names of MultiHeadAttention ("query/kernel",
 * ...), in GroupedQueryAttention's shapes; layer "GroupedQueryAttention". */
VKATTN_API vkattn_result vkattn_gqa_weights_save(const char *path, const vkattn_gqa_desc *desc,
                                                 const vkattn_gqa_weights *w, const char *prefix);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_GQA_HOST_H */
