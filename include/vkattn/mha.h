/* vkattn/mha.h - keras.layers.MultiHeadAttention on the GPU.
 *
 *   Q = query @ Wq + bq    K = key @ Wk + bk    V = value @ Wv + bv    (H heads)
 *   P = softmax(mask(Q K^T / sqrt(key_dim)))        per head, (B, H, Tq, Tv)
 *   C = dropout(P) V                                per head
 *   [use_gate: C *= sigmoid(query @ Wg + bg)        per head and channel]
 *   output = concat_heads(C) @ Wo + bo              (B, Tq, output_dim)
 *
 * exactly as Keras 3 (docs/SEMANTICS.md, docs/LAYERS.md): self-attention (key and
 * value = query) or cross-attention, a key input of its own width (key NULL =
 * value), value_mask (B, Tv), attention_mask (B, Tq, Tv) shared by the heads or
 * (B, H, Tq, Tv) per head, query_mask (B, Tq), causal (top-left as Keras, or
 * bottom-right for a KV cache); all AND-ed. A query row with no allowed key
 * (query_mask 0, say) gets all-zero weights, so its output row is the output
 * bias. Returned scores are P, (B, H, Tq, Tv), before dropout. The CPU
 * reference is vkattn_reference_mha (vkattn/mha_host.h).
 *
 * Call sequence:
 *   vkattn_mha_desc desc = {.num_heads = 8, .key_dim = 16, .query_width = 128,
 *                           .value_width = 128};
 *   vkattn_mha *mha;
 *   vkattn_mha_create(ctx, &desc, &mha);
 *   vkattn_mha_set_weights(mha, &weights);          Keras layout, copied
 *   vkattn_layer_call call = {.batch = B, .tq = Tq, .tv = Tv};
 *   vkattn_layer_io io = {.query = q, .value = v, .output = out};
 *   vkattn_mha_record(mha, VKATTN_RUN_NOW, &call, &io);                or _record into your cmd
 *   vkattn_mha_destroy(mha);
 *
 * What one call records: three projections (matmul with bias), head splits,
 * scaled dot-product attention (vkattn/sdpa.h, call->path chooses the fused
 * flash kernel or the chained one; AUTO is fused unless scores are returned),
 * a head merge, with use_gate the gate's projection and one elementwise kernel
 * (shaders/gate.comp), and the output projection; with a query mask, one small kernel
 * first folds it (and attention_mask) into one explicit mask. Intermediate
 * tensors are the layer's scratch; the chained SDPA path also uses the
 * context's shared SDPA workspace (see vkattn/sdpa.h for concurrent command
 * buffers).
 *
 * Recording contract: as vkattn/matmul.h; layer object rules as
 * vkattn/layer_common.h (scratch grows on demand; replaced scratch is kept
 * until destroy, so earlier command buffers stay valid). Two command buffers
 * recorded with one layer share its scratch: they must not execute at the
 * same time.
 *
 * Thread safety: a layer is externally synchronized; *_record (in any mode) of
 * different layers may run on several threads at once (vkattn/context.h).
 *
 * Half precision (desc.dtype = VKATTN_DTYPE_F16; docs/SEMANTICS.md): the
 * layer keeps its weights as f16 tensors (set_weights rounds each float to
 * nearest even; get_weights returns those f16 values widened, exactly) and
 * its activations -- projections, heads, SDPA context, merged heads -- as f16
 * scratch; every op accumulates in fp32. io->query, key, value and output may
 * each be f16 or f32; masks stay f32 (an f16 mask is
 * VKATTN_ERROR_INVALID_ARGUMENT naming it); returned scores may be f32 or
 * f16 (the chained SDPA path forms them in fp32; f16 scores are those
 * rounded once, vkattn/sdpa.h). The cached calls below take an f16 layer
 * too, with an f16 or f32 cache, under the same bound (decode reads the f16
 * query heads and writes the f16 context; the value mask over the cache stays
 * f32, an f16 one is VKATTN_ERROR_INVALID_ARGUMENT). Semantics are Keras's float16 policy:
 * the f32 layer (vkattn_reference_mha) on the f16-rounded inputs and
 * weights, to within
 *   max|out - ref| <= 8 eps16 max(max|ref|, 1)       eps16 = 2^-10
 *   max|scores - ref| <= 4 eps16
 * for inputs of magnitude about 1 and kernels scaled by 1/sqrt(fan-in)
 * (Glorot-like): the four f16 roundings of intermediates (projections,
 * context, and an f16 output) each add up to eps16 / 2 of their scale, and
 * the logits carry the Q and K roundings through the softmax. The tests
 * (random shapes, every mask kind, dropout, both SDPA paths) see below
 * 0.6 eps16.
 *
 * bfloat16 (desc.dtype = VKATTN_DTYPE_BF16, Keras's bfloat16 policy): as f16
 * above with bf16 storage (round to nearest even) in place of f16, the
 * cached calls too (tested on a bf16 cache), to within the same bounds with
 * eps = 2^-7 (bf16's spacing at 1: 8 significand bits) for eps16, 8 eps =
 * 6.3e-2 and 4 eps = 3.1e-2; the tests see below
 * 0.8 eps. The backward takes a bf16 layer as an f16 one (io, grad_output
 * and gradients bf16 or f32; bounds: vkattn/layer_common.h).
 *
 * The whole layer is this one header: it includes vkattn/mha_host.h, the
 * layer without a GPU (desc, weights, CPU reference forward and backward,
 * safetensors load/save; no Vulkan), and adds the GPU layer below: create,
 * weights, record, the backward and the weights as tensors.
 */
#ifndef VKATTN_MHA_H
#define VKATTN_MHA_H

#include <vulkan/vulkan_core.h>

#include "vkattn/context.h"
#include "vkattn/export.h"
#include "vkattn/kv_cache.h"
#include "vkattn/layer_common.h"
#include "vkattn/mha_host.h"
#include "vkattn/result.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkattn_mha vkattn_mha;

/* Creates a layer with the widths of desc (vkattn_mha_desc in
 * vkattn/mha_host.h: num_heads, key_dim, query_width and value_width are
 * required; value_dim 0 = key_dim, key_width 0 = value_width, output_dim 0 =
 * query_width). A new layer's kernels are drawn by desc->kernel_initializer
 * (glorot_uniform by default, Keras's fans), its biases by bias_initializer
 * (zeros), as Keras builds the layer; set_weights replaces them. An unknown
 * initializer is INVALID_ARGUMENT naming the field.
 * Codes: INVALID_ARGUMENT (NULL ctx, desc or out, a required width of 0, a
 * dropout rate outside [0, 1]), SIZE_OVERFLOW (widths whose products overflow
 * 32 bits), DEVICE_LIMIT (a weight larger than the device's buffers),
 * OUT_OF_*_MEMORY, Vulkan failures. On failure *out is NULL. */
VKATTN_API vkattn_result vkattn_mha_create(vkattn_context *ctx, const vkattn_mha_desc *desc,
                                           vkattn_mha **out);

/* Frees the layer, its weights and scratch. NULL-safe. The GPU must be done
 * with every command buffer recorded with it (vkattn does not wait). */
VKATTN_API void vkattn_mha_destroy(vkattn_mha *layer);

/* Uploads weights in Keras layout (vkattn_mha_weights): kernels
 * query (query_width, H, key_dim), key (key_width, H, key_dim),
 * value (value_width, H, value_dim), output (H, value_dim, output_dim);
 * biases (H, key_dim), (H, key_dim), (H, value_dim), (output_dim).
 * Every kernel is required; biases are required unless desc.no_bias (then
 * ignored). The arrays are copied; waits for the upload. Codes:
 * INVALID_ARGUMENT (NULL layer, w or a required array), Vulkan failures. */
VKATTN_API vkattn_result vkattn_mha_set_weights(vkattn_mha *layer, const vkattn_mha_weights *w);

/* Downloads the weights into the non-NULL arrays of *w (each must have room
 * for its full Keras shape; NULL arrays are skipped; biases of a no_bias
 * layer are left untouched). Waits for vkattn work on the context's queue. */
VKATTN_API vkattn_result vkattn_mha_get_weights(const vkattn_mha *layer, vkattn_mha_weights *w);

/* Records one layer call (vkattn_layer_io, vkattn/layer_common.h):
 * query (B, Tq, query_width), value (B, Tv, value_width), key (B, Tv, key_width)
 * or NULL (= value; then key_width must equal value_width), optional
 * query_mask (B, Tq), value_mask (B, Tv), attention_mask (B, Tq, Tv), or
 * (B, H, Tq, Tv) with attention_mask_per_head; output (B, Tq, output_dim);
 * scores (B, H, Tq, Tv) iff call->return_attention_scores. Tensors are
 * checked by element count (and last dim when rank >= 2, as in
 * vkattn/layer_common.h); output and scores must not alias another tensor of
 * the call.
 * Codes: INVALID_ARGUMENT (NULL layer, cmd, call or io; a zero size; a
 * missing, unexpected or wrongly sized tensor, named; a bad path;
 * call->causal not a vkattn_causal value; call->path FUSED with
 * return_attention_scores, since the fused kernel never forms the weights),
 * SIZE_OVERFLOW, DEVICE_LIMIT (a tensor beyond the device's buffers or 32-bit
 * indexing), UNSUPPORTED (call->path FUSED where the fused kernel cannot serve
 * the shape), OUT_OF_DEVICE_MEMORY (scratch), Vulkan failures. Argument and
 * size errors are reported before anything is recorded. */
VKATTN_API vkattn_result vkattn_mha_record(vkattn_mha *layer, VkCommandBuffer cmd,
                                           const vkattn_layer_call *call,
                                           const vkattn_layer_io *io);

/* ---------------------------------------------------------------- with a KV cache
 *
 * Autoregressive self-attention with a cache (vkattn/kv_cache.h): each call
 * takes only the new tokens, projects them, appends their K and V heads to
 * the cache and attends over everything cached (vkattn/decode.h):
 *
 *   vkattn_kv_cache_desc cd = {.batch = B, .kv_heads = num_heads,
 *                              .capacity = max_len, .key_dim = key_dim,
 *                              .value_dim = value_dim};
 *   vkattn_kv_cache_create(ctx, &cd, &cache);
 *   call = {.batch = B, .tq = P, .causal = VKATTN_CAUSAL_TOP_LEFT};
 *   vkattn_mha_record_cached(mha, VKATTN_RUN_NOW, &call, &io, cache);    prefill: P prompt tokens
 *   call.tq = 1;
 *   vkattn_mha_record_cached(mha, VKATTN_RUN_NOW, &call, &io, cache);    each decode step
 *
 * Every call is causal: new token i of sequence b, at position L_b + i (L_b
 * the length before the call), attends to the cached keys 0 .. L_b + i. So
 * a prefill plus any number of steps gives, row by row, what one
 * vkattn_mha_record with VKATTN_CAUSAL_TOP_LEFT (Keras use_causal_mask=True)
 * gives over the whole sequence (to fp32 rounding; with a value_mask, the
 * same mask's first Tv columns). Sequences of a batch may
 * hold different lengths (vkattn_kv_cache_reset_* of one sequence, or a cache
 * filled by ragged appends): each attends over its own. The CPU reference is
 * vkattn_reference_mha over the whole sequence with VKATTN_CAUSAL_TOP_LEFT.
 *
 * io: query (B, Tnew, query_width), value (B, Tnew, value_width), key
 * (B, Tnew, key_width) or NULL (= value), output (B, Tnew, output_dim);
 * optional value_mask (B, capacity) over the cache's rows (nonzero = may
 * attend; rows the call appends are covered too: set them before the call; a
 * query row with no allowed key outputs the output bias, as vkattn_mha_record);
 * no query or attention mask, no scores. call: batch = the cache's, tq = Tnew (any size: rows are
 * attended in chunks of VKATTN_DECODE_MAX_TQ, each appended then decoded),
 * tv = 0 or Tnew, causal TOP_LEFT or BOTTOM_RIGHT (the same thing here),
 * path ignored (decode attention), no dropout in training.
 * What one call records: three projections over the Tnew rows, per chunk a
 * head split of its rows, an append (vkattn_kv_cache_append_record's
 * kernels), vkattn_sdpa_decode_record and a head merge, then the output
 * projection. Scratch as vkattn_mha_record (the heads of one chunk), plus the
 * context's decode workspace (vkattn/decode.h). Like the cache's appends, a
 * recorded call can be submitted again: each submission appends again.
 *
 * Codes: INVALID_ARGUMENT (NULL argument; a cache of another context; a cache
 * whose kv_heads, key_dim or value_dim differ from the layer's num_heads,
 * key_dim and value_dim, or whose batch differs from call->batch; call->tv
 * other than 0 or tq; a missing or wrongly sized tensor; while the host knows
 * the lengths, an append past the capacity), UNSUPPORTED (query_mask or
 * attention_mask, return_attention_scores or io->scores, call->causal NONE, dropout in
 * training), SIZE_OVERFLOW, DEVICE_LIMIT, OUT_OF_*_MEMORY, Vulkan failures.
 * All argument errors are reported before anything is recorded; the cache is
 * then unchanged. On the device, a sequence whose append does not fit keeps
 * its length and sets the cache's overflow flag (vkattn/kv_cache.h); its
 * output rows are then undefined. record_cached makes the cache's host mirror
 * of the lengths unknown; with VKATTN_RUN_NOW it submits, waits and
 * refreshes it. */
VKATTN_API vkattn_result vkattn_mha_record_cached(vkattn_mha *layer, VkCommandBuffer cmd,
                                                  const vkattn_layer_call *call,
                                                  const vkattn_layer_io *io,
                                                  vkattn_kv_cache *cache);

/* ------------------------------------------------ backward and weights as tensors */

/* MultiHeadAttention: kernels (D_in, H, head_dim) and (H, value_dim,
 * output_dim), biases (H, head_dim) and (output_dim); biases NULL with
 * no_bias. gate_kernel (query_width, H, value_dim) and gate_bias
 * (H, value_dim) only with use_gate (else NULL; the bias also NULL with
 * no_bias). */
typedef struct vkattn_mha_weight_tensors {
    vkattn_tensor *query_kernel, *query_bias;
    vkattn_tensor *key_kernel, *key_bias;
    vkattn_tensor *value_kernel, *value_bias;
    vkattn_tensor *output_kernel, *output_bias;
    vkattn_tensor *gate_kernel, *gate_bias;
    /* use_qk_norm: query_norm, key_norm (key_dim); use_sinks: sinks (H); else NULL */
    vkattn_tensor *query_norm, *key_norm, *sinks;
} vkattn_mha_weight_tensors;

/* The backward (contract in vkattn/layer_common.h).
 *
 * Keeps, from the forward recorded with keep_for_backward: the projected
 * query, key and value heads, the SDPA context (before the head merge and the
 * output projection), the mask the SDPA read (the query mask folded in as the
 * forward folds it) and, on the fused SDPA path, its log-sum-exp per query
 * row; on the chained path the backward recomputes the weights. All in the
 * layer's scratch, (B, H, T, head_dim) each plus (B, H, Tq) floats; the
 * forward writes all but the log-sum-exp anyway, so keep_for_backward costs
 * (B, H, Tq) floats of scratch on the fused path and nothing else, and a
 * forward without it records exactly what it did before. The backward's own
 * scratch (gradients of the projections, heads and context, about the
 * forward's again; two (B, Tv, value_width) tensors more with key NULL) is
 * separate, so a forward's kept state survives its backward.
 *
 * SDPA path: the backward runs the SDPA backward (vkattn/sdpa_backward.h) on
 * the path the forward resolved. A chained forward gives a chained backward.
 * A fused forward gives the fused backward with its log-sum-exp and output,
 * which needs 10 storage buffers per shader; on devices with fewer (the
 * Vulkan 1.1 minimum is 4, e.g. the mobile-min profile) a call with path
 * AUTO falls back to the chained backward, which recomputes the weights from
 * the kept heads and gives the same gradients (within the bound below), and
 * a call with path FUSED is VKATTN_ERROR_UNSUPPORTED.
 *
 * Key NULL (key = value): grad_value is the sum of the key and value paths'
 * gradients. Self-attention with one tensor passed as query and value: each
 * gradient is with respect to its own argument (add grad_query and
 * grad_value for the tensor's). The weight gradients are summed over the
 * batch and the sequence (the weights are shared by every row).
 *
 * A VKATTN_PREPARE recording may be made before any forward: it creates what the forward
 * with keep_for_backward and the backward of this call would use, and
 * checks everything but the kept forward.
 *
 * Accuracy (tests/gpu/test_mha_backward.c): for each gradient,
 * max|got - ref| / max(max|ref|, 0.01) <= 2e-4 against
 * vkattn_reference_mha_backward, inputs in [-1, 1], kernels scaled by
 * 1/sqrt(fan-in), widths up to 21 and Tq, Tv up to 13; the error grows with
 * the rows summed (B*T for the weight gradients) and the widths. */
VKATTN_API vkattn_result vkattn_mha_get_weight_tensors(vkattn_mha *layer,
                                                       vkattn_mha_weight_tensors *out);
VKATTN_API vkattn_result vkattn_mha_backward_record(vkattn_mha *layer, VkCommandBuffer cmd,
                                                    const vkattn_layer_call *call,
                                                    const vkattn_layer_io *io,
                                                    const vkattn_layer_grads *grads,
                                                    const vkattn_mha_weight_tensors *grad_w);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_MHA_H */
