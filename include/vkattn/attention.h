/* vkattn/attention.h - keras.layers.Attention (Luong-style) on the GPU.
 *
 *   dot:    S = scale * Q K^T                          (scale = 1 without use_scale)
 *   concat: S[i,j] = csw * sum_d tanh(scale * (q_id + k_jd))
 *   W = softmax(mask(S)),  out = dropout(W) @ value,  out rows *= (query_mask != 0)
 *
 * exactly as Keras 3 (docs/SEMANTICS.md, docs/LAYERS.md): no 1/sqrt(d); key NULL
 * means key = value; masks value_mask (B, Tv), attention_mask (B, Tq, Tv) and
 * causal (top-left as Keras, or bottom-right for a KV cache) are AND-ed; a
 * query row with no allowed key gets uniform weights 1/Tv (what Keras's -1e9
 * gives); query_mask zeroes output rows, not the returned weights; returned
 * weights are (B, Tq, Tv) AFTER dropout. The CPU reference is
 * vkattn_reference_attention (vkattn/attention_host.h).
 *
 * Call sequence:
 *   vkattn_attention_desc desc = {.query_width = 64, .value_width = 64, .use_scale = true};
 *   vkattn_attention *att;
 *   vkattn_attention_create(ctx, &desc, &att);        scale = csw = 1.0
 *   vkattn_attention_set_weights(att, &(vkattn_attention_weights){0.5f, 1.0f});
 *   vkattn_layer_call call = {.batch = B, .tq = Tq, .tv = Tv};
 *   vkattn_layer_io io = {.query = q, .value = v, .output = out};
 *   vkattn_attention_record(att, VKATTN_RUN_NOW, &call, &io);            or _record into your cmd
 *   vkattn_attention_destroy(att);
 *
 * What one call records: with use_scale, a small kernel first writes
 * scale * query into scratch (concat mode: scale * key too), reading the
 * scale from the layer's weight tensor. Dot mode is then the SDPA op
 * (vkattn/sdpa.h) with scale 1; call->path picks the fused flash kernel or the chained one
 * (AUTO: fused unless weights are returned or the fused kernel cannot serve
 * the shape). Concat mode is the additive scoring op, masked softmax, dropout
 * and a matmul, through a score tensor (the returned scores themselves, or
 * the layer's scratch); it has no fused kernel, so call->path AUTO and
 * UNFUSED both run it and FUSED is VKATTN_ERROR_UNSUPPORTED; its score is
 * sum_d csw * tanh(scale*q_d + scale*k_d), csw the additive op's scale vector
 * (a weight tensor). A query_mask adds one small row-scaling kernel. The
 * scalar weights live on the device, as every layer's weights do: a command
 * buffer recorded before set_weights uses the new values when it runs.
 *
 * Half precision (desc.dtype = VKATTN_DTYPE_F16; docs/SEMANTICS.md): the
 * layer keeps scale and concat_score_weight as f16 (set_weights rounds each
 * to nearest even; get_weights returns those f16 values widened, exactly)
 * and its activations -- the scaled query and key, concat mode's scores --
 * as f16 scratch (dot mode's SDPA workspace stays f32); every op
 * accumulates in fp32. io->query, key, value and output may
 * each be f16 or f32; masks stay f32 (an f16 mask is
 * VKATTN_ERROR_INVALID_ARGUMENT naming it and both types); returned scores
 * may be f32 or f16 (dot mode: the fp32 weights rounded once; concat mode:
 * the raw scores, softmax and dropout each stored in f16 in place).
 * Semantics are Keras's float16 policy: the f32 layer
 * (vkattn_reference_attention) on the f16-rounded inputs and weights, to within
 *   max|out - ref| <= 8 eps16 max(max|ref|, 1)       eps16 = 2^-10
 *   max|scores - ref| <= 4 eps16
 * for inputs of magnitude about 1 and logits of magnitude up to about 4
 * (a scale of about 1/sqrt(query_width) in dot mode, a
 * concat_score_weight of about 1/sqrt(query_width) in concat mode): each f16 rounding of an
 * intermediate adds at most eps16 / 2 of its scale, and the logits carry
 * theirs through the softmax. The tests (random shapes, every mask kind,
 * dropout, both score modes, every SDPA path) see below 0.6 eps16.
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
 * The whole layer is this one header: it includes vkattn/attention_host.h, the
 * layer without a GPU (desc, weights, CPU reference forward and backward,
 * safetensors load/save; no Vulkan), and adds the GPU layer below: create,
 * weights, record, the backward and the weights as tensors.
 */
#ifndef VKATTN_ATTENTION_H
#define VKATTN_ATTENTION_H

#include <vulkan/vulkan_core.h>

#include "vkattn/attention_host.h"
#include "vkattn/context.h"
#include "vkattn/export.h"
#include "vkattn/layer_common.h"
#include "vkattn/result.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkattn_attention vkattn_attention;

/* Creates a layer (vkattn_attention_desc in vkattn/attention_host.h: query_width
 * and value_width required; key_width 0 = value_width, and it must equal
 * query_width). A new layer has scale = concat_score_weight = 1.0, as Keras.
 * Codes: INVALID_ARGUMENT (NULL ctx, desc or out; a zero width; key_width !=
 * query_width; a bad score_mode; dropout outside [0, 1] or NaN),
 * OUT_OF_*_MEMORY, Vulkan failures. On failure *out is NULL. */
VKATTN_API vkattn_result vkattn_attention_create(vkattn_context *ctx,
                                                 const vkattn_attention_desc *desc,
                                                 vkattn_attention **out);

/* Frees the layer, its weights and scratch. NULL-safe. The GPU must be done with every
 * command buffer recorded with it (vkattn does not wait). */
VKATTN_API void vkattn_attention_destroy(vkattn_attention *layer);

/* Uploads both scalars, literally (0 is 0 here); waits. Do not call while a
 * command buffer recorded with the layer may execute. Codes: INVALID_ARGUMENT
 * (NULL layer or w, a non-finite value), Vulkan failures. */
VKATTN_API vkattn_result vkattn_attention_set_weights(vkattn_attention *layer,
                                                      const vkattn_attention_weights *w);

/* Downloads both scalars into *w. Waits for vkattn work on the context's
 * queue. Codes: INVALID_ARGUMENT (NULL layer or w), Vulkan failures. */
VKATTN_API vkattn_result vkattn_attention_get_weights(const vkattn_attention *layer,
                                                      vkattn_attention_weights *w);

/* Records one call (vkattn_layer_io, vkattn/layer_common.h): query
 * (B, Tq, query_width), value (B, Tv, value_width), key (B, Tv, key_width) or NULL
 * (= value; then value_width must equal query_width), optional query_mask (B, Tq),
 * value_mask (B, Tv), attention_mask (B, Tq, Tv); output (B, Tq, value_width);
 * scores (B, Tq, Tv) iff call->return_attention_scores. Each tensor must have
 * exactly that many elements (any rank; a rank >= 2 tensor's last dim must
 * match); output and scores must not overlap another tensor of the call.
 * Codes: INVALID_ARGUMENT (NULL layer, cmd, call or io; a zero size; a
 * missing, unexpected or wrongly sized tensor, named; per-head masks; dot
 * mode with call->path FUSED and returned scores, which the fused kernel does
 * not produce), SIZE_OVERFLOW, DEVICE_LIMIT (a tensor beyond the device's
 * buffers or 32-bit indexing), UNSUPPORTED (dot mode with call->path FUSED
 * where the fused kernel cannot serve the shape, e.g. widths above 256;
 * concat mode with call->path FUSED: it has no fused kernel),
 * OUT_OF_DEVICE_MEMORY (scratch), Vulkan failures. Argument errors are
 * reported before anything is recorded. */
VKATTN_API vkattn_result vkattn_attention_record(vkattn_attention *layer, VkCommandBuffer cmd,
                                                 const vkattn_layer_call *call,
                                                 const vkattn_layer_io *io);

/* ------------------------------------------------ backward and weights as tensors */

/* Attention: scale (1) and concat_score_weight (1), scalars as 1-element
 * tensors. */
typedef struct vkattn_attention_weight_tensors {
    vkattn_tensor *scale, *concat_score_weight;
} vkattn_attention_weight_tensors;

/* The backward (contract in vkattn/layer_common.h).
 *
 * Keeps nothing: the backward recomputes the scores and weights from query,
 * key and the weight tensors, as the forward computes them, then runs the
 * chained backward ops (vkattn/softmax_backward.h, the dropout backward of
 * vkattn/dropout.h, vkattn/matmul_backward.h's products, and in concat mode
 * vkattn/additive_backward.h). Both score modes, every call->path (the
 * backward is the same whichever path the forward took). Scratch in the
 * layer: two (B, Tq, Tv) tensors, plus scaled copies of query and key and
 * their gradients with use_scale, plus (B, Tv, Dv) with key NULL.
 * grad_w->scale: dL/d(scale), exactly 0 without use_scale (the forward does
 * not read it); grad_w->concat_score_weight: dL/d(concat_score_weight),
 * exactly 0 in dot mode. A concat-mode call with path FUSED is
 * VKATTN_ERROR_UNSUPPORTED, as in the forward.
 * Weight tensors: scale (1) and concat_score_weight (1); the forward reads
 * both on the device (concat mode expands concat_score_weight to the additive
 * op's scale vector each time it records).
 * Accuracy (tests/gpu/test_layer_backward.c): every gradient within 1e-4 of
 * max(max|reference|, 1e-2), the scalar weights' within 3e-4 (each is one
 * fp32 sum of B*Tq*Tv, times D in concat mode, terms). */
VKATTN_API vkattn_result vkattn_attention_get_weight_tensors(
    vkattn_attention *layer, vkattn_attention_weight_tensors *out);
VKATTN_API vkattn_result vkattn_attention_backward_record(
    vkattn_attention *layer, VkCommandBuffer cmd, const vkattn_layer_call *call,
    const vkattn_layer_io *io, const vkattn_layer_grads *grads,
    const vkattn_attention_weight_tensors *grad_w);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_ATTENTION_H */
