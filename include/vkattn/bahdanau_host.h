/* vkattn/bahdanau_host.h - BahdanauAttention without a GPU:
 * its desc, its weights in Keras layout, its CPU reference forward and
 * backward, and its weights from and to safetensors files.
 *
 * The Vulkan-free half of the layer's API: vkattn/bahdanau.h, the header an app
 * opens, includes it and adds the GPU layer. This one includes no Vulkan
 * header (src/reference/ and src/weights/ implement it), so an app that only
 * checks numbers against the reference or converts weights builds without
 * Vulkan. What every layer shares: vkattn/layer_call.h (the call, the host
 * io and gradients, the references' contract) and vkattn/safetensors.h (the
 * file API, the load/free/save contract).
 */
#ifndef VKATTN_BAHDANAU_HOST_H
#define VKATTN_BAHDANAU_HOST_H

#include "vkattn/export.h"
#include "vkattn/layer_call.h"
#include "vkattn/result.h"
#include "vkattn/safetensors.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --------------------------------------------------------------- desc and weights */

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
    /* A new layer's weights (vkattn_initializer, vkattn/layer_call.h): the
     * kernels' (0 = glorot_uniform) and the biases' (0 = zeros), drawn from
     * the Philox stream keyed by initializer_seed (any value, 0 included). */
    vkattn_initializer kernel_initializer;
    vkattn_initializer bias_initializer;
    uint64_t initializer_seed;
} vkattn_bahdanau_desc;

/* query_kernel (query_width, units), key_kernel (key_width, units), score_kernel
 * (units), score_bias a scalar. A new layer draws them by the desc's
 * initializers (vkattn/bahdanau.h). get_weights writes score_bias too. */
typedef struct vkattn_bahdanau_weights {
    float *query_kernel, *key_kernel, *score_kernel;
    float score_bias;
} vkattn_bahdanau_weights;

/* -------------------------------------------- CPU reference (vkattn/layer_call.h) */

VKATTN_API vkattn_result vkattn_reference_bahdanau(const vkattn_bahdanau_desc *desc,
                                                   const vkattn_bahdanau_weights *w,
                                                   const vkattn_layer_call *call,
                                                   const vkattn_layer_host_io *io);

/* BahdanauAttention. grad_w->query_kernel (query_width, units),
 * key_kernel (key_width, units), score_kernel (units); grad_w->score_bias is
 * always written as exactly 0: softmax is shift-invariant, so the output does
 * not depend on it. For a rank-2 query (B, Dq) use call->tq = 1. */
VKATTN_API vkattn_result vkattn_reference_bahdanau_backward(
    const vkattn_bahdanau_desc *desc, const vkattn_bahdanau_weights *w,
    const vkattn_layer_call *call, const vkattn_layer_host_io *io, const float *grad_output,
    const vkattn_layer_host_grads *grads, vkattn_bahdanau_weights *grad_w);

/* --------------------------------------------- safetensors (vkattn/safetensors.h) */

VKATTN_API vkattn_result vkattn_bahdanau_weights_load(vkattn_weights_file *file,
                                                      const vkattn_bahdanau_desc *desc,
                                                      const vkattn_weights_load_desc *load,
                                                      vkattn_bahdanau_weights *out);
VKATTN_API void vkattn_bahdanau_weights_free(vkattn_bahdanau_weights *w);
VKATTN_API vkattn_result vkattn_bahdanau_weights_save(const char *path,
                                                      const vkattn_bahdanau_desc *desc,
                                                      const vkattn_bahdanau_weights *w,
                                                      const char *prefix);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_BAHDANAU_HOST_H */
