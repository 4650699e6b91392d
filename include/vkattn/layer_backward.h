/* vkattn/layer_backward.h - gradients of the four layers on the GPU, and the
 * layers' weights as tensors, so a training step (forward, loss, backward,
 * optimizer) never leaves the device.
 *
 * A training step with MultiHeadAttention (docs/TRAINING.md has the whole
 * example, examples/train_mha.c):
 *
 *   vkattn_layer_call call = {.batch = B, .tq = Tq, .tv = Tv,
 *                             .training = true, .seed = s, .offset = o,
 *                             .keep_for_backward = true};
 *   vkattn_mha_record(mha, cmd, &call, &io);                 forward, keeping state
 *   vkattn_mse_record(ctx, cmd, &mse, io.output, target, loss, grad_out);
 *   vkattn_layer_grads g = {.grad_output = grad_out, .grad_query = gq};
 *   vkattn_mha_backward_record(mha, cmd, &call, &io, &g, &grad_w);
 *   vkattn_mha_get_weight_tensors(mha, &w);                  the layer's own
 *   vkattn_optim_step_record(ctx, cmd, &adam, &(vkattn_optim_io){
 *       .param = w.query_kernel, .grad = grad_w.query_kernel, ...});   per weight
 *
 * Semantics: exactly the CPU references of vkattn/reference_backward.h
 * (vkattn_reference_*_backward), which give the same gradients in double:
 * dL/d(query), dL/d(value), dL/d(key) and dL/dW of every weight in its Keras
 * layout, given dL/d(output). Every gradient is overwritten, not accumulated
 * (Keras's tape, not PyTorch's .grad +=): sum over steps yourself if you want
 * accumulation. With key NULL (key = value) grad_value is the gradient of the
 * whole layer with respect to value, key path included, and grad_key must be
 * NULL. Masks act as in the forward; dropout in training mode drops the same
 * elements as the forward (the same call->seed and call->offset: the Philox
 * mask is regenerated, never stored). A row with no allowed key gives zero
 * query and key gradients, never NaN. Score-related weight gradients that are
 * identically zero are written as zeros (Bahdanau's score_bias: softmax is
 * shift-invariant).
 *
 * The forward the backward follows. A backward is recorded after a forward of
 * the same layer with the same call (batch, tq, tv, causal, training, seed,
 * offset, path) and the same io tensors, recorded with
 * call->keep_for_backward = true (vkattn/layer_params.h). What that forward
 * keeps, in the layer's scratch, is stated in each layer's section below; it
 * stays valid until the layer's next forward record (which may overwrite it)
 * or destroy, so record forward, backward, forward, backward... and do not
 * execute two command buffers of one layer at once. The backward reads that
 * state on the device, so it must execute after the forward it follows (in
 * the same command buffer, or a later submission). A backward whose call or
 * io does not match the last forward kept by the layer, or with no forward
 * kept at all, is VKATTN_ERROR_INVALID_ARGUMENT naming what differs, and
 * nothing is recorded. keep_for_backward costs nothing on layers that keep
 * nothing (they recompute what they need; see below) but is still required,
 * so that code written for one layer works for all.
 *
 * Recording contract: as vkattn/matmul.h; VKATTN_PREPARE and VKATTN_RUN_NOW
 * in place of cmd prepare or run the call (vkattn/context.h).
 *
 * Tensors: every gradient tensor has exactly the element count of what it is
 * the gradient of (any rank; a tensor of rank >= 2 must have the same last
 * dim), f32; for an f16 layer f16 or f32, each on its own (below). A gradient tensor NULL = that gradient is not wanted (at least
 * one gradient must be wanted). Results: VKATTN_ERROR_INVALID_ARGUMENT (NULL
 * layer, cmd, call, io or grads; grads->grad_output NULL or of the wrong
 * size; a gradient of the wrong size; grad_key without io->key; a gradient
 * of a weight the layer does not have (biases of a no_bias
 * MultiHeadAttention, AdditiveAttention's scale with no_scale); a gradient
 * tensor that aliases or overlaps an input, an output, grad_output, a weight
 * or another gradient; no kept forward, or one that does not match),
 * VKATTN_ERROR_UNSUPPORTED (an f16 gradient or grad_output of an f32 layer;
 * call->path FUSED where the fused backward cannot serve the call),
 * VKATTN_ERROR_SIZE_OVERFLOW, VKATTN_ERROR_DEVICE_LIMIT,
 * VKATTN_ERROR_OUT_OF_DEVICE_MEMORY (scratch), Vulkan failures. Argument
 * and size errors are reported before anything is recorded.
 *
 * Accuracy: fp32 on the device against the double references; each layer's
 * test states its bound (tests/gpu/test_*_backward.c).
 *
 * f16 layers (desc.dtype VKATTN_DTYPE_F16): the backward takes the io the
 * forward took (query, key, value, output f16 or f32; masks f32), and
 * grad_output and every gradient f16 or f32, each on its own. Accumulation
 * is fp32 throughout: f16 tensors are read through exact f32 copies, the
 * intermediate gradients stay in f32 scratch, and each f16 gradient is
 * rounded once from its f32 result. Bounds, against the references run on
 * the f16 values (the inputs, weights and grad_output as stored):
 * MultiHeadAttention and GroupedQueryAttention read their kept f16
 * projections, heads and context, so max|got - ref| / max(max|ref|, 0.1) <=
 * 8 * 2^-10 per gradient, as their f16 forward (tests/gpu/test_mha_backward.c,
 * test_gqa_backward.c); Attention, AdditiveAttention and BahdanauAttention
 * recompute what they need in f32 from the stored values, so their f32 bound
 * plus the one rounding, 2^-11 of max(max|ref|, 0.01)
 * (tests/gpu/test_layer_backward.c). An optimizer step cannot update an f16
 * layer's own weights: vkattn_optim_step_record takes f32 parameters only
 * (VKATTN_ERROR_UNSUPPORTED naming io->param); keep f32 master weights and
 * set_weights them, or train an f32 layer.
 *
 * Thread safety: as the forward (a layer is externally synchronized).
 */
#ifndef VKATTN_LAYER_BACKWARD_H
#define VKATTN_LAYER_BACKWARD_H

#include <vulkan/vulkan_core.h>

#include "vkattn/additive_attention.h"
#include "vkattn/attention.h"
#include "vkattn/bahdanau.h"
#include "vkattn/export.h"
#include "vkattn/gqa.h"
#include "vkattn/layer_common.h"
#include "vkattn/mha.h"
#include "vkattn/result.h"
#include "vkattn/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The input-side tensors of one backward call (NULL = not wanted). */
typedef struct vkattn_layer_grads {
    vkattn_tensor *grad_output; /* read: dL/d(output), the output's shape; required */
    vkattn_tensor *grad_query;  /* written: the query's shape */
    vkattn_tensor *grad_value;  /* written: the value's shape (key path included if key NULL) */
    vkattn_tensor *grad_key;    /* written: the key's shape; only with io->key */
} vkattn_layer_grads;

/* ---------------------------------------------------------------- weights as tensors
 *
 * Each layer's weights as device tensors of the layer's type in Keras layout, one struct per
 * layer. The same struct serves two purposes:
 * - vkattn_X_get_weight_tensors fills it with the layer's OWN weight tensors
 *   (owned by the layer, valid until destroy). An optimizer step
 *   (vkattn/optim.h) may update them in place: the forward reads its weights
 *   on the device, so the next forward uses the updated values, and
 *   set_weights/get_weights still work. Do not destroy them.
 * - vkattn_X_backward_* takes one whose tensors (the caller's) receive the
 *   weight gradients, NULL = not wanted.
 */

/* Attention: scale (1) and concat_score_weight (1), scalars as 1-element
 * tensors. */
typedef struct vkattn_attention_weight_tensors {
    vkattn_tensor *scale, *concat_score_weight;
} vkattn_attention_weight_tensors;

/* AdditiveAttention: scale (query_width); NULL with no_scale. */
typedef struct vkattn_additive_attention_weight_tensors {
    vkattn_tensor *scale;
} vkattn_additive_attention_weight_tensors;

/* BahdanauAttention: query_kernel (query_width, units), key_kernel
 * (key_width, units), score_kernel (units), score_bias (1). */
typedef struct vkattn_bahdanau_weight_tensors {
    vkattn_tensor *query_kernel, *key_kernel, *score_kernel, *score_bias;
} vkattn_bahdanau_weight_tensors;

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
} vkattn_mha_weight_tensors;

/* ---------------------------------------------------------------- Attention
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

/* ---------------------------------------------------------------- AdditiveAttention
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

/* ---------------------------------------------------------------- BahdanauAttention
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

/* ---------------------------------------------------------------- MultiHeadAttention
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

/* ---------------------------------------------------------------- GroupedQueryAttention
 * As MultiHeadAttention's, on a vkattn_gqa (vkattn/gqa.h) whose forward was
 * recorded with call->keep_for_backward: grad_w's key and value kernels
 * (D, Nkv, head_dim) and biases (Nkv, head_dim) sum the gradients of the
 * Nq/Nkv query heads that share each key/value head; the other shapes as
 * vkattn_gqa_set_weights's. Same codes and types (an f16 layer's gradients
 * f16 or f32, above), messages naming the GQA
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

#endif /* VKATTN_LAYER_BACKWARD_H */
