/* vkattn/bahdanau.h - Bahdanau attention with learned projections on the GPU.
 *
 *   S[b,i,j] = sum_u v_u * tanh((query @ Wq)[b,i,u] + (key @ Wk)[b,j,u]) + score_bias
 *   W = softmax(mask(S)),  out = dropout(W) @ value,  out rows *= (query_mask != 0)
 *
 * the classic additive attention layer of Bahdanau et al. (the "concat"
 * score with Dense projections Wq (Dq, U), Wk (Dk, U) without biases and a
 * score Dense v (U) with a scalar bias), with the masks, softmax, dropout and
 * output of Keras Attention (docs/SEMANTICS.md, docs/LAYERS.md): masks AND-ed,
 * fully masked rows uniform 1/Tv, returned weights (B, Tq, Tv) after dropout.
 * Query and key widths may differ. A rank-2 query (B, Dq) is a call with
 * tq = 1: the same memory as (B, 1, Dq), and the output (B, 1, Dv) is the
 * (B, Dv) context vector. The CPU reference is vkattn_reference_bahdanau
 * (vkattn/bahdanau_host.h).
 *
 * score_bias: softmax is shift-invariant, so a constant added to every score
 * changes neither the weights nor the output. The GPU layer therefore skips
 * it (it is stored, and get_weights returns it); the reference adds it, in
 * f32 as Keras's Dense does, which for |score_bias| far above the scores
 * rounds them (a Keras artifact this layer does not reproduce).
 *
 * Call sequence:
 *   vkattn_bahdanau_desc desc = {.query_width = 50, .key_width = 60, .value_width = 70,
 *                                .units = 32};
 *   vkattn_bahdanau *att;
 *   vkattn_bahdanau_create(ctx, &desc, &att);
 *   vkattn_bahdanau_set_weights(att, &weights);       Keras layout, copied
 *   vkattn_layer_call call = {.batch = B, .tq = 1, .tv = Tv};
 *   vkattn_layer_io io = {.query = q, .key = k, .value = v, .output = ctxvec};
 *   vkattn_bahdanau_record(att, VKATTN_RUN_NOW, &call, &io);             or _record
 *   vkattn_bahdanau_destroy(att);
 *
 * What one call records: two projection matmuls into scratch, the additive
 * scoring op (vkattn/additive.h) with v as its scale vector, masked softmax,
 * dropout and a matmul through a score tensor (the returned scores
 * themselves, or scratch), plus a row-scaling kernel for a query_mask.
 * There is no fused kernel: call->path AUTO and UNFUSED both run this chain,
 * FUSED is VKATTN_ERROR_UNSUPPORTED.
 *
 * Half precision (desc.dtype = VKATTN_DTYPE_F16; docs/SEMANTICS.md): the
 * layer keeps its three kernels as f16 (set_weights rounds each float to
 * nearest even; get_weights returns those f16 values widened, exactly;
 * score_bias stays a host float) and its projections and scores as f16
 * scratch; every op accumulates in fp32. io->query, key, value and output may
 * each be f16 or f32; masks stay f32 (an f16 mask is
 * VKATTN_ERROR_INVALID_ARGUMENT naming it and both types); returned scores
 * may be f32 or f16 (then the raw scores, softmax and dropout are each
 * stored in f16 in place; f32 scores keep them in fp32).
 * Semantics are Keras's float16 policy: the f32 layer
 * (vkattn_reference_bahdanau) on the f16-rounded inputs and weights, to within
 *   max|out - ref| <= 8 eps16 max(max|ref|, 1)       eps16 = 2^-10
 *   max|scores - ref| <= 4 eps16
 * for inputs of magnitude about 1 and logits of magnitude up to about 4
 * (kernels scaled by 1/sqrt(fan-in), Glorot-like): each f16 rounding of an
 * intermediate adds at most eps16 / 2 of its scale, and the logits carry
 * theirs through the softmax. The tests (random shapes, every mask kind,
 * dropout, odd units) see below 0.6 eps16.
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
 * The whole layer is this one header: it includes vkattn/bahdanau_host.h, the
 * layer without a GPU (desc, weights, CPU reference forward and backward,
 * safetensors load/save; no Vulkan), and adds the GPU layer below: create,
 * weights, record, the backward and the weights as tensors.
 */
#ifndef VKATTN_BAHDANAU_H
#define VKATTN_BAHDANAU_H

#include <vulkan/vulkan_core.h>

#include "vkattn/bahdanau_host.h"
#include "vkattn/context.h"
#include "vkattn/export.h"
#include "vkattn/layer_common.h"
#include "vkattn/result.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkattn_bahdanau vkattn_bahdanau;

/* Creates a layer (query_width, value_width and units required; key_width 0 =
 * value_width). A new layer's kernels Wq, Wk and v are drawn by
 * desc->kernel_initializer (glorot_uniform by default, as Keras Dense kernels;
 * v as the (units, 1) kernel of a Dense(1)), score_bias by bias_initializer
 * (zeros). Codes: INVALID_ARGUMENT (NULL ctx, desc or out; a zero width;
 * dropout outside [0, 1] or NaN; an unknown initializer), SIZE_OVERFLOW, DEVICE_LIMIT, OUT_OF_*_MEMORY, Vulkan
 * failures. On failure *out is NULL. */
VKATTN_API vkattn_result vkattn_bahdanau_create(vkattn_context *ctx,
                                                const vkattn_bahdanau_desc *desc,
                                                vkattn_bahdanau **out);

/* Frees the layer, its weights and scratch. NULL-safe. The GPU must be done
 * with every command buffer recorded with it (vkattn does not wait). */
VKATTN_API void vkattn_bahdanau_destroy(vkattn_bahdanau *layer);

/* Uploads query_kernel (query_width, units), key_kernel (key_width, units) and
 * score_kernel (units), all required, and stores score_bias (finite). Copied;
 * waits. Do not call while a command buffer recorded with the layer may
 * execute. Codes: INVALID_ARGUMENT (NULL layer, w or array; a non-finite
 * score_bias), Vulkan failures. */
VKATTN_API vkattn_result vkattn_bahdanau_set_weights(vkattn_bahdanau *layer,
                                                     const vkattn_bahdanau_weights *w);

/* Downloads each kernel into its array in *w unless that pointer is NULL,
 * and writes w->score_bias. Waits for vkattn work on the context's queue. */
VKATTN_API vkattn_result vkattn_bahdanau_get_weights(const vkattn_bahdanau *layer,
                                                     vkattn_bahdanau_weights *w);

/* Records one call (vkattn/layer_common.h): query (B, Tq, query_width) or, with
 * tq = 1, (B, query_width); key (B, Tv, key_width) or NULL (= value; then key_width
 * must equal value_width); value (B, Tv, value_width); optional query_mask
 * (B, Tq), value_mask (B, Tv), attention_mask (B, Tq, Tv); output
 * (B, Tq, value_width) or (B, value_width); scores (B, Tq, Tv) iff
 * call->return_attention_scores. Sizes and codes as vkattn_attention_record
 * (vkattn/attention.h), plus UNSUPPORTED for call->path FUSED (no fused
 * kernel). */
VKATTN_API vkattn_result vkattn_bahdanau_record(vkattn_bahdanau *layer, VkCommandBuffer cmd,
                                                const vkattn_layer_call *call,
                                                const vkattn_layer_io *io);

/* ------------------------------------------------ backward and weights as tensors */

/* BahdanauAttention: query_kernel (query_width, units), key_kernel
 * (key_width, units), score_kernel (units), score_bias (1). */
typedef struct vkattn_bahdanau_weight_tensors {
    vkattn_tensor *query_kernel, *key_kernel, *score_kernel, *score_bias;
} vkattn_bahdanau_weight_tensors;

/* The backward (contract in vkattn/layer_common.h).
 *
 * Keeps nothing: the backward recomputes the projections query @ Wq and
 * key @ Wk, the scores and the weights, then runs the chained backward ops,
 * vkattn/additive_backward.h (dL/d(score_kernel) and the projections'
 * gradients) and vkattn/matmul_backward.h (the inputs' and the kernels'
 * gradients). A rank-2 query (B, Dq) is call->tq = 1. grad_w->score_bias is
 * written as exactly 0 (softmax is shift-invariant: the output does not
 * depend on it). Scratch: two (B, Tq, Tv) tensors and the projections and
 * their gradients, (B, Tq, U) and (B, Tv, U) each. Weight tensors:
 * query_kernel, key_kernel, score_kernel as the forward reads them, and
 * score_bias (1), which the forward never reads. Accuracy as Attention's. */
VKATTN_API vkattn_result vkattn_bahdanau_get_weight_tensors(
    vkattn_bahdanau *layer, vkattn_bahdanau_weight_tensors *out);
VKATTN_API vkattn_result vkattn_bahdanau_backward_record(
    vkattn_bahdanau *layer, VkCommandBuffer cmd, const vkattn_layer_call *call,
    const vkattn_layer_io *io, const vkattn_layer_grads *grads,
    const vkattn_bahdanau_weight_tensors *grad_w);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_BAHDANAU_H */
