/* vkattn/gqa.h - keras.layers.GroupQueryAttention (GroupedQueryAttention) on
 * the GPU: the attention of Llama, Mistral, Qwen and Gemma.
 *
 *   Q = query @ Wq + bq   (Nq heads)     K = key @ Wk + bk,  V = value @ Wv + bv
 *                                        (Nkv heads; Nq a multiple of Nkv)
 *   P = softmax(mask(Q K^T / sqrt(head_dim)))   per query head, (B, Nq, Tq, Tv);
 *       query head n reads key/value head n / (Nq / Nkv) (heads repeated,
 *       not tiled)
 *   C = dropout(P) V                             per query head
 *   output = concat_heads(C) @ Wo + bo           (B, Tq, Dq): the query's width
 *
 * exactly as Keras 3 (docs/SEMANTICS.md, "GroupedQueryAttention"): key NULL =
 * value; query_mask (B, Tq), value_mask (B, Tv), attention_mask (B, Tq, Tv)
 * shared by the heads or (B, Nq, Tq, Tv) per query head, causal (top-left as
 * Keras, or bottom-right) and sliding_window; all AND-ed. A query row with no
 * allowed key gets all-zero weights and its output row is the output bias
 * (vkattn's rule for every layer; Keras's own fused path differs, as for
 * MultiHeadAttention). Returned scores are P, (B, Nq, Tq, Tv), before dropout.
 * The CPU reference is vkattn_reference_gqa (vkattn/gqa_host.h).
 *
 * Call sequence:
 *   vkattn_gqa_desc desc = {.head_dim = 64, .num_query_heads = 8,
 *                           .num_key_value_heads = 2, .query_width = 512,
 *                           .value_width = 512};
 *   vkattn_gqa *gqa;
 *   vkattn_gqa_create(ctx, &desc, &gqa);
 *   vkattn_gqa_set_weights(gqa, &weights);          Keras layout, copied
 *   vkattn_layer_call call = {.batch = B, .tq = T, .tv = T,
 *                             .causal = VKATTN_CAUSAL_TOP_LEFT};
 *   vkattn_layer_io io = {.query = x, .value = x, .output = out};
 *   vkattn_gqa_record(gqa, VKATTN_RUN_NOW, &call, &io);                or _record into your cmd
 *   vkattn_gqa_destroy(gqa);
 *
 * The layer is MultiHeadAttention (vkattn/mha.h) with Nkv key/value heads:
 * one call records the same ops (projections, head splits, SDPA with
 * kv_heads = Nkv, head merge, output projection), under the same recording
 * contract, scratch rules, thread safety, f16 and bf16 semantics and bounds
 * (desc.dtype = VKATTN_DTYPE_F16, VKATTN_DTYPE_BF16). The K/V projections and heads are Nq/Nkv
 * times smaller than MultiHeadAttention's; SDPA reads each K/V head for its
 * group of query heads. The backward pass with weight gradients is
 * vkattn_gqa_backward_record (below). Keras 3.14's use_gate
 * (desc.use_gate) gates each query head's context with sigmoid(query @
 * gate_kernel + gate_bias) before the output projection, as MultiHeadAttention's.
 *
 * The whole layer is this one header: it includes vkattn/gqa_host.h, the
 * layer without a GPU (desc, weights, CPU reference forward and backward,
 * safetensors load/save; no Vulkan), and adds the GPU layer below: create,
 * weights, record, the backward and the weights as tensors.
 */
#ifndef VKATTN_GQA_H
#define VKATTN_GQA_H

#include <vulkan/vulkan_core.h>

#include "vkattn/context.h"
#include "vkattn/export.h"
#include "vkattn/gqa_host.h"
#include "vkattn/kv_cache.h"
#include "vkattn/layer_common.h"
#include "vkattn/mha.h"
#include "vkattn/result.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkattn_gqa vkattn_gqa;

/* Creates a layer with the widths of desc (vkattn_gqa_desc in
 * vkattn/gqa_host.h: head_dim, num_query_heads, num_key_value_heads,
 * query_width and value_width are required; key_width 0 = value_width). A new
 * layer's weights start as MultiHeadAttention's (vkattn/mha.h: the desc's
 * initializers, glorot_uniform kernels and zero biases by default). Codes:
 * INVALID_ARGUMENT (NULL ctx, desc or out; a required field of 0;
 * num_query_heads not a multiple of num_key_value_heads; a negative
 * sliding_window; a dropout rate outside [0, 1]; an unknown initializer; each
 * naming the field), SIZE_OVERFLOW, DEVICE_LIMIT,
 * OUT_OF_*_MEMORY, Vulkan failures. On failure *out is NULL. */
VKATTN_API vkattn_result vkattn_gqa_create(vkattn_context *ctx, const vkattn_gqa_desc *desc,
                                           vkattn_gqa **out);

/* Frees the layer, its weights and scratch. NULL-safe. The GPU must be done
 * with every command buffer recorded with it. */
VKATTN_API void vkattn_gqa_destroy(vkattn_gqa *layer);

/* Uploads weights in Keras layout (vkattn_gqa_weights, h = head_dim):
 * query_kernel (Dq, Nq, h), key_kernel (Dk, Nkv, h), value_kernel (Dv, Nkv, h),
 * output_kernel (Nq, h, Dq); biases (Nq, h), (Nkv, h), (Nkv, h), (Dq). Every
 * kernel is required; biases unless desc.no_bias (then ignored). Copied;
 * waits for the upload. Codes: INVALID_ARGUMENT (NULL layer, w or a required
 * array, named), Vulkan failures. */
VKATTN_API vkattn_result vkattn_gqa_set_weights(vkattn_gqa *layer, const vkattn_gqa_weights *w);

/* Downloads the weights into the non-NULL arrays of *w (each with room for
 * its full shape; biases of a no_bias layer are left untouched). */
VKATTN_API vkattn_result vkattn_gqa_get_weights(const vkattn_gqa *layer, vkattn_gqa_weights *w);

/* Records one layer call (vkattn_layer_io): query (B, Tq, Dq), value
 * (B, Tv, Dv), key (B, Tv, Dk) or NULL (= value; then key_width must equal
 * value_width), optional query_mask (B, Tq), value_mask (B, Tv),
 * attention_mask (B, Tq, Tv) or a broadcast form, or (B, Nq, Tq, Tv) with
 * attention_mask_per_head; output (B, Tq, Dq); scores (B, Nq, Tq, Tv) iff
 * call->return_attention_scores. Checks and codes as vkattn_mha_record's,
 * messages naming vkattn_gqa_record; nothing is recorded on failure. */
VKATTN_API vkattn_result vkattn_gqa_record(vkattn_gqa *layer, VkCommandBuffer cmd,
                                           const vkattn_layer_call *call,
                                           const vkattn_layer_io *io);

/* ---------------------------------------------------------------- with a KV cache
 *
 * As vkattn_mha_*_cached (vkattn/mha.h), with a cache of Nkv heads: the cache
 * holds each key/value head once (Nq/Nkv times less memory than
 * MultiHeadAttention's), and decode attention reads K/V head n / (Nq / Nkv)
 * for query head n:
 *
 *   vkattn_kv_cache_desc cd = {.batch = B, .kv_heads = num_key_value_heads,
 *                              .capacity = max_len, .key_dim = head_dim,
 *                              .value_dim = head_dim};
 *   call = {.batch = B, .tq = P, .causal = VKATTN_CAUSAL_TOP_LEFT};
 *   vkattn_gqa_record_cached(gqa, VKATTN_RUN_NOW, &call, &io, cache);    prefill, then steps of 1
 *
 * A prefill plus steps gives, row by row, what one vkattn_gqa_record with
 * VKATTN_CAUSAL_TOP_LEFT gives over the whole sequence (and the sliding
 * window, if any, is the same band). io, call, codes and the recording
 * contract as vkattn_mha_record_cached's; a cache whose kv_heads, key_dim or
 * value_dim differ from (num_key_value_heads, head_dim, head_dim) is
 * INVALID_ARGUMENT naming both. */
VKATTN_API vkattn_result vkattn_gqa_record_cached(vkattn_gqa *layer, VkCommandBuffer cmd,
                                                  const vkattn_layer_call *call,
                                                  const vkattn_layer_io *io,
                                                  vkattn_kv_cache *cache);

/* ------------------------------------------------ backward and weights as tensors */

/* As MultiHeadAttention's backward (vkattn/mha.h), on a vkattn_gqa whose forward was
 * recorded with call->keep_for_backward: grad_w's key and value kernels
 * (D, Nkv, head_dim) and biases (Nkv, head_dim) sum the gradients of the
 * Nq/Nkv query heads that share each key/value head; the other shapes as
 * vkattn_gqa_set_weights's. Same codes and types (a 16-bit layer's gradients
 * of its dtype or f32, above), messages naming the GQA
 * function. Bound: max|got - ref| / max(max|ref|, 0.01) <= 2e-4 against
 * vkattn_reference_gqa_backward (tests/gpu/test_gqa_backward.c). */
typedef vkattn_mha_weight_tensors vkattn_gqa_weight_tensors;
/* The layer's own weight tensors (as vkattn_mha_get_weight_tensors: owned by
 * the layer, for an optimizer step in place; key and value ones of Nkv heads). */
VKATTN_API vkattn_result vkattn_gqa_get_weight_tensors(vkattn_gqa *layer,
                                                       vkattn_gqa_weight_tensors *out);
VKATTN_API vkattn_result vkattn_gqa_backward_record(vkattn_gqa *layer, VkCommandBuffer cmd,
                                                    const vkattn_layer_call *call,
                                                    const vkattn_layer_io *io,
                                                    const vkattn_layer_grads *grads,
                                                    const vkattn_gqa_weight_tensors *grad_w);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_GQA_H */
