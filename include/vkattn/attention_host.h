/* vkattn/attention_host.h - keras.layers.Attention without a GPU:
 * its desc, its weights in Keras layout, its CPU reference forward and
 * backward, and its weights from and to safetensors files.
 *
 * The Vulkan-free half of the layer's API: vkattn/attention.h, the header an app
 * opens, includes it and adds the GPU layer. This one includes no Vulkan
 * header (src/reference/ and src/weights/ implement it), so an app that only
 * checks numbers against the reference or converts weights builds without
 * Vulkan. What every layer shares: vkattn/layer_call.h (the call, the host
 * io and gradients, the references' contract) and vkattn/safetensors.h (the
 * file API, the load/free/save contract).
 */
#ifndef VKATTN_ATTENTION_HOST_H
#define VKATTN_ATTENTION_HOST_H

#include "vkattn/export.h"
#include "vkattn/layer_call.h"
#include "vkattn/result.h"
#include "vkattn/safetensors.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --------------------------------------------------------------- desc and weights */

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

/* -------------------------------------------- CPU reference (vkattn/layer_call.h) */

VKATTN_API vkattn_result vkattn_reference_attention(const vkattn_attention_desc *desc,
                                                    const vkattn_attention_weights *w,
                                                    const vkattn_layer_call *call,
                                                    const vkattn_layer_host_io *io);

/* keras.layers.Attention. grad_w->scale = dL/d(scale) (0 unless
 * desc->use_scale), grad_w->concat_score_weight = dL/d(concat_score_weight)
 * (0 unless score_mode is CONCAT). */
VKATTN_API vkattn_result vkattn_reference_attention_backward(
    const vkattn_attention_desc *desc, const vkattn_attention_weights *w,
    const vkattn_layer_call *call, const vkattn_layer_host_io *io, const float *grad_output,
    const vkattn_layer_host_grads *grads, vkattn_attention_weights *grad_w);

/* --------------------------------------------- safetensors (vkattn/safetensors.h) */

/* Attention has scalars only: nothing to free. One not used by desc stays 1.0. */
VKATTN_API vkattn_result vkattn_attention_weights_load(vkattn_weights_file *file,
                                                       const vkattn_attention_desc *desc,
                                                       const vkattn_weights_load_desc *load,
                                                       vkattn_attention_weights *out);
VKATTN_API vkattn_result vkattn_attention_weights_save(const char *path,
                                                       const vkattn_attention_desc *desc,
                                                       const vkattn_attention_weights *w,
                                                       const char *prefix);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_ATTENTION_HOST_H */
