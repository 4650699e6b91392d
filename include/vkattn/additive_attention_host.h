/* vkattn/additive_attention_host.h - keras.layers.AdditiveAttention without a GPU:
 * its desc, its weights in Keras layout, its CPU reference forward and
 * backward, and its weights from and to safetensors files.
 *
 * The Vulkan-free half of the layer's API: vkattn/additive_attention.h, the header an app
 * opens, includes it and adds the GPU layer. This one includes no Vulkan
 * header (src/reference/ and src/weights/ implement it), so an app that only
 * checks numbers against the reference or converts weights builds without
 * Vulkan. What every layer shares: vkattn/layer_call.h (the call, the host
 * io and gradients, the references' contract) and vkattn/safetensors.h (the
 * file API, the load/free/save contract).
 */
#ifndef VKATTN_ADDITIVE_ATTENTION_HOST_H
#define VKATTN_ADDITIVE_ATTENTION_HOST_H

#include "vkattn/export.h"
#include "vkattn/layer_call.h"
#include "vkattn/result.h"
#include "vkattn/safetensors.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --------------------------------------------------------------- desc and weights */

/* keras.layers.AdditiveAttention (Bahdanau-style, no projections). */
typedef struct vkattn_additive_attention_desc {
    uint32_t query_width, value_width; /* required */
    uint32_t key_width;                /* 0 = value_width; must equal query_width */
    bool no_scale;                 /* Keras use_scale=False */
    float dropout;
    /* F32 (0) or F16: the type of the layer's weights and activation scratch
     * (vkattn/additive_attention.h, "Half precision"); the CPU reference ignores it. */
    vkattn_dtype dtype;
    /* A new layer's scale (vkattn_initializer, vkattn/layer_call.h; 0 =
     * glorot_uniform, as Keras 3), drawn from the Philox stream keyed by
     * initializer_seed (any value, 0 included). */
    vkattn_initializer scale_initializer;
    uint64_t initializer_seed;
} vkattn_additive_attention_desc;

/* scale: (query_width); desc->scale_initializer's in a new layer; ignored (may be NULL) if no_scale. */
typedef struct vkattn_additive_attention_weights {
    float *scale;
} vkattn_additive_attention_weights;

/* -------------------------------------------- CPU reference (vkattn/layer_call.h) */

VKATTN_API vkattn_result vkattn_reference_additive_attention(
    const vkattn_additive_attention_desc *desc, const vkattn_additive_attention_weights *w,
    const vkattn_layer_call *call, const vkattn_layer_host_io *io);

/* keras.layers.AdditiveAttention. grad_w->scale (query_width) = dL/d(scale);
 * must be NULL when desc->no_scale. */
VKATTN_API vkattn_result vkattn_reference_additive_attention_backward(
    const vkattn_additive_attention_desc *desc, const vkattn_additive_attention_weights *w,
    const vkattn_layer_call *call, const vkattn_layer_host_io *io, const float *grad_output,
    const vkattn_layer_host_grads *grads, vkattn_additive_attention_weights *grad_w);

/* --------------------------------------------- safetensors (vkattn/safetensors.h) */

VKATTN_API vkattn_result vkattn_additive_attention_weights_load(
    vkattn_weights_file *file, const vkattn_additive_attention_desc *desc,
    const vkattn_weights_load_desc *load, vkattn_additive_attention_weights *out);
VKATTN_API void vkattn_additive_attention_weights_free(vkattn_additive_attention_weights *w);
VKATTN_API vkattn_result vkattn_additive_attention_weights_save(
    const char *path, const vkattn_additive_attention_desc *desc,
    const vkattn_additive_attention_weights *w, const char *prefix);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_ADDITIVE_ATTENTION_HOST_H */
