/* vkattn/mha_host.h - keras.layers.MultiHeadAttention without a GPU:
 * its desc, its weights in Keras layout, its CPU reference forward and
 * backward, and its weights from and to safetensors files.
 *
 * The Vulkan-free half of the layer's API: vkattn/mha.h, the header an app
 * opens, includes it and adds the GPU layer. This one includes no Vulkan
 * header (src/reference/ and src/weights/ implement it), so an app that only
 * checks numbers against the reference or converts weights builds without
 * Vulkan. What every layer shares: vkattn/layer_call.h (the call, the host
 * io and gradients, the references' contract) and vkattn/safetensors.h (the
 * file API, the load/free/save contract).
 */
#ifndef VKATTN_MHA_HOST_H
#define VKATTN_MHA_HOST_H

#include "vkattn/export.h"
#include "vkattn/layer_call.h"
#include "vkattn/result.h"
#include "vkattn/safetensors.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --------------------------------------------------------------- desc and weights */

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
    /* A new layer's weights (vkattn_initializer, vkattn/layer_call.h): the
     * kernels' (0 = glorot_uniform) and the biases' (0 = zeros), drawn from
     * the Philox stream keyed by initializer_seed (any value, 0 included). */
    vkattn_initializer kernel_initializer;
    vkattn_initializer bias_initializer;
    uint64_t initializer_seed;
    /* The attention of today's open models (docs/LAYERS.md, "Rotary
     * embeddings, QK-norm, soft-capping and sinks"), in this order per head:
     * QK-norm on the projected queries and keys (weights query_norm and
     * key_norm, (key_dim,)): x / sqrt(mean(x^2) + qk_norm_epsilon) * w
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
    /* use_qk_norm: query_norm and key_norm (key_dim); use_sinks: sinks (H) */
    float *query_norm, *key_norm, *sinks;
} vkattn_mha_weights;

/* -------------------------------------------- CPU reference (vkattn/layer_call.h) */

VKATTN_API vkattn_result vkattn_reference_mha(const vkattn_mha_desc *desc,
                                              const vkattn_mha_weights *w,
                                              const vkattn_layer_call *call,
                                              const vkattn_layer_host_io *io);

/* keras.layers.MultiHeadAttention. grad_w: query/key/value kernels
 * (D_in, H, head_dim), biases (H, head_dim), output kernel (H, value_dim,
 * output_dim), output bias (output_dim), as vkattn_mha_weights; the four
 * bias gradients must be NULL when desc->no_bias. */
VKATTN_API vkattn_result vkattn_reference_mha_backward(
    const vkattn_mha_desc *desc, const vkattn_mha_weights *w, const vkattn_layer_call *call,
    const vkattn_layer_host_io *io, const float *grad_output,
    const vkattn_layer_host_grads *grads, vkattn_mha_weights *grad_w);

/* --------------------------------------------- safetensors (vkattn/safetensors.h) */

VKATTN_API vkattn_result vkattn_mha_weights_load(vkattn_weights_file *file,
                                                 const vkattn_mha_desc *desc,
                                                 const vkattn_weights_load_desc *load,
                                                 vkattn_mha_weights *out);
VKATTN_API void vkattn_mha_weights_free(vkattn_mha_weights *w);
VKATTN_API vkattn_result vkattn_mha_weights_save(const char *path, const vkattn_mha_desc *desc,
                                                 const vkattn_mha_weights *w, const char *prefix);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_MHA_HOST_H */
