/* vkattn/additive_attention.h - keras.layers.AdditiveAttention on the GPU.
 *
 *   S[i,j] = sum_d scale_d * tanh(q_id + k_jd)       (scale all ones with no_scale)
 *   W = softmax(mask(S)),  out = dropout(W) @ value,  out rows *= (query_mask != 0)
 *
 * exactly as Keras 3 (docs/SEMANTICS.md, docs/LAYERS.md): Bahdanau-style scores
 * with a learned per-feature scale vector and no projections, so the query
 * and key widths must match; everything after the scores is as in
 * vkattn/attention.h (masks AND-ed, fully masked rows uniform 1/Tv, query_mask
 * zeroes output rows but not the weights, returned weights after dropout).
 * The CPU reference is vkattn_reference_additive_attention
 * (vkattn/additive_attention_host.h). For learned projections (Wq, Wk, v) see
 * vkattn/bahdanau.h.
 *
 * Call sequence:
 *   vkattn_additive_attention_desc desc = {.query_width = 32, .value_width = 48};
 *   vkattn_additive_attention *att;
 *   vkattn_additive_attention_create(ctx, &desc, &att);   scale = ones
 *   vkattn_additive_attention_set_weights(att, &(vkattn_additive_attention_weights){scale});
 *   vkattn_layer_call call = {.batch = B, .tq = Tq, .tv = Tv};
 *   vkattn_layer_io io = {.query = q, .key = k, .value = v, .output = out};
 *   vkattn_additive_attention_record(att, VKATTN_RUN_NOW, &call, &io);        or _record
 *   vkattn_additive_attention_destroy(att);
 *
 * What one call records: the additive scoring op (vkattn/additive.h), masked
 * softmax, dropout and a matmul through a score tensor (the returned scores
 * themselves, or the layer's scratch), plus a row-scaling kernel for a
 * query_mask. There is no fused kernel: call->path AUTO and UNFUSED both run
 * this chain, FUSED is VKATTN_ERROR_UNSUPPORTED.
 *
 * Half precision (desc.dtype = VKATTN_DTYPE_F16; docs/SEMANTICS.md): the
 * layer keeps its scale vector as f16 (set_weights rounds each float to
 * nearest even; get_weights returns those f16 values widened, exactly) and
 * its scores as f16 scratch when they are not returned; every op
 * accumulates in fp32. io->query, key, value and output may
 * each be f16 or f32; masks stay f32 (an f16 mask is
 * VKATTN_ERROR_INVALID_ARGUMENT naming it and both types); returned scores
 * may be f32 or f16 (then the raw scores, softmax and dropout are each
 * stored in f16 in place; f32 scores keep them in fp32).
 * Semantics are Keras's float16 policy: the f32 layer
 * (vkattn_reference_additive_attention) on the f16-rounded inputs and weights, to within
 *   max|out - ref| <= 8 eps16 max(max|ref|, 1)       eps16 = 2^-10
 *   max|scores - ref| <= 4 eps16
 * for inputs of magnitude about 1 and logits of magnitude up to about 4
 * (a scale vector of about 1/sqrt(query_width), or
 * no_scale with a small query_width): each f16 rounding of an
 * intermediate adds at most eps16 / 2 of its scale, and the logits carry
 * theirs through the softmax. The tests (random shapes, every mask kind,
 * dropout, with and without a scale) see below 0.6 eps16.
 *
 * bfloat16 (desc.dtype = VKATTN_DTYPE_BF16, Keras's bfloat16 policy): as f16
 * above with bf16 storage (round to nearest even) in place of f16, to
 * within the same bounds with eps = 2^-7 (bf16's spacing at 1: 8 significand
 * bits) for eps16, 8 eps = 6.3e-2 and 4 eps = 3.1e-2; the tests see below
 * 0.8 eps. The backward takes a bf16 layer as an f16 one (io, grad_output
 * and gradients bf16 or f32; bounds: vkattn/layer_common.h).
 *
 * Recording contract: as vkattn/matmul.h; layer object rules as
 * vkattn/layer_common.h. Command buffers recorded with one layer share its
 * scratch: they must not execute at the same time.
 *
 * Thread safety: a layer is externally synchronized; *_record (in any mode) of
 * different layers may run on several threads at once (vkattn/context.h).
 *
 * The whole layer is this one header: it includes vkattn/additive_attention_host.h, the
 * layer without a GPU (desc, weights, CPU reference forward and backward,
 * safetensors load/save; no Vulkan), and adds the GPU layer below: create,
 * weights, record, the backward and the weights as tensors.
 */
#ifndef VKATTN_ADDITIVE_ATTENTION_H
#define VKATTN_ADDITIVE_ATTENTION_H

#include <vulkan/vulkan_core.h>

#include "vkattn/additive_attention_host.h"
#include "vkattn/context.h"
#include "vkattn/export.h"
#include "vkattn/layer_common.h"
#include "vkattn/result.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkattn_additive_attention vkattn_additive_attention;

/* Creates a layer (query_width and value_width required; key_width 0 = value_width,
 * and it must equal query_width). A new layer's scale is drawn by
 * desc->scale_initializer (glorot_uniform by default, as Keras 3). Codes:
 * INVALID_ARGUMENT (NULL ctx, desc or out; a zero width; key_width !=
 * query_width; dropout outside [0, 1] or NaN; an unknown initializer), DEVICE_LIMIT, OUT_OF_*_MEMORY, Vulkan failures. On failure
 * *out is NULL. */
VKATTN_API vkattn_result vkattn_additive_attention_create(
    vkattn_context *ctx, const vkattn_additive_attention_desc *desc,
    vkattn_additive_attention **out);

/* Frees the layer, its weights and scratch. NULL-safe. The GPU must be done
 * with every command buffer recorded with it (vkattn does not wait). */
VKATTN_API void vkattn_additive_attention_destroy(vkattn_additive_attention *layer);

/* Uploads w->scale (query_width floats; copied, waits). With desc.no_scale there
 * is no weight and w->scale is ignored. Do not call while a command buffer
 * recorded with the layer may execute. Codes: INVALID_ARGUMENT (NULL layer,
 * w or w->scale), Vulkan failures. */
VKATTN_API vkattn_result vkattn_additive_attention_set_weights(
    vkattn_additive_attention *layer, const vkattn_additive_attention_weights *w);

/* Downloads the scale into w->scale (query_width floats) unless it is NULL or
 * the layer has no_scale. Waits for vkattn work on the context's queue. */
VKATTN_API vkattn_result vkattn_additive_attention_get_weights(
    const vkattn_additive_attention *layer, vkattn_additive_attention_weights *w);

/* Records one call; tensors and codes exactly as vkattn_attention_record
 * (vkattn/attention.h), plus UNSUPPORTED for call->path FUSED (no fused
 * kernel). */
VKATTN_API vkattn_result vkattn_additive_attention_record(vkattn_additive_attention *layer,
                                                          VkCommandBuffer cmd,
                                                          const vkattn_layer_call *call,
                                                          const vkattn_layer_io *io);

/* ------------------------------------------------ backward and weights as tensors */

/* AdditiveAttention: scale (query_width); NULL with no_scale. */
typedef struct vkattn_additive_attention_weight_tensors {
    vkattn_tensor *scale;
} vkattn_additive_attention_weight_tensors;

/* The backward (contract in vkattn/layer_common.h).
 *
 * Keeps nothing: the backward recomputes the scores (vkattn/additive.h) and
 * the weights, then runs the chained backward ops and
 * vkattn/additive_backward.h, which gives dquery, dkey and the scale vector's
 * gradient. Scratch: two (B, Tq, Tv) tensors, plus (B, Tv, Dv) twice with
 * key NULL. grad_w->scale (query_width) with a scale; with no_scale it must
 * be NULL (get_weight_tensors then gives scale NULL). Accuracy as
 * Attention's. */
VKATTN_API vkattn_result vkattn_additive_attention_get_weight_tensors(
    vkattn_additive_attention *layer, vkattn_additive_attention_weight_tensors *out);
VKATTN_API vkattn_result vkattn_additive_attention_backward_record(
    vkattn_additive_attention *layer, VkCommandBuffer cmd, const vkattn_layer_call *call,
    const vkattn_layer_io *io, const vkattn_layer_grads *grads,
    const vkattn_additive_attention_weight_tensors *grad_w);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_ADDITIVE_ATTENTION_H */
