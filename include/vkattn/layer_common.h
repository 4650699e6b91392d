/* vkattn/layer_common.h - what every layer shares on the GPU: the tensors of one
 * call, the gradients of one backward call, and the contracts of both.
 *
 * Every layer (vkattn/attention.h, additive_attention.h, bahdanau.h, mha.h,
 * gqa.h) is called with a vkattn_layer_call (shapes and options,
 * vkattn/layer_call.h) and a vkattn_layer_io (the tensors below). A tensor may have any rank, but
 * exactly the element count of its stated shape, and a tensor of rank >= 2
 * must have the stated last dim: (B, Tq, D), (B*Tq, D) and a flat tensor all
 * pass, a wrong width fails with VKATTN_ERROR_INVALID_ARGUMENT naming it.
 *
 * Layer object pattern (recording contract as in vkattn/matmul.h):
 *   vkattn_X_create(ctx, &desc, &layer);        widths fixed at creation
 *   vkattn_X_set_weights(layer, &weights);      host arrays, Keras layout, copied
 *   vkattn_X_record(layer, cmd, &call, &io);    all kernels into the one cmd
 *   or vkattn_X_record(layer, VKATTN_RUN_NOW, &call, &io);   submit and wait
 *   vkattn_X_destroy(layer);
 * A layer owns its weights and its scratch tensors. Scratch grows on demand
 * with the call's batch and lengths; scratch a grown layer replaced may still
 * be read by a recorded command buffer, so it is kept until destroy.
 *
 * Thread safety: a layer is externally synchronized, and on its context too.
 */
#ifndef VKATTN_LAYER_COMMON_H
#define VKATTN_LAYER_COMMON_H

#include <stdbool.h>

#include "vkattn/context.h"
#include "vkattn/export.h"
#include "vkattn/layer_call.h"
#include "vkattn/result.h"
#include "vkattn/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Tensors of one call. Masks are f32, nonzero = may attend. */
typedef struct vkattn_layer_io {
    vkattn_tensor *query;          /* (B, Tq, Dq) */
    vkattn_tensor *value;          /* (B, Tv, Dv) */
    vkattn_tensor *key;            /* (B, Tv, Dk); NULL = value */
    vkattn_tensor *query_mask;     /* (B, Tq) or NULL */
    vkattn_tensor *value_mask;     /* (B, Tv) or NULL */
    /* NULL = none. Any shape that broadcasts, by the tensor's own rank and dims:
     * rank 1..3 right-aligned against (B, Tq, Tv) (numpy rules: each dim 1 or
     * the full size) and shared by every head; MHA also rank 4 against
     * (B, H, Tq, Tv). E.g. (Tq, Tv), (B, 1, Tv), (Tq, 1), (B, 1, Tq, Tv).
     * Compatibility: a shape that does not broadcast but holds exactly the full
     * mask's elements (last dim Tv at rank >= 2) is the full mask (B, Tq, Tv),
     * or (B, H, Tq, Tv) with attention_mask_per_head. Anything else:
     * VKATTN_ERROR_INVALID_ARGUMENT naming io->attention_mask and its shape. */
    vkattn_tensor *attention_mask;
    bool attention_mask_per_head;  /* no longer needed (give a rank-4 mask); see above */
    vkattn_tensor *output;         /* (B, Tq, Dout) written */
    vkattn_tensor *scores;         /* iff return_attention_scores: (B, Tq, Tv), MHA (B, H, Tq, Tv) */
    /* MultiHeadAttention/GQA with use_rope only (else NULL): the positions
     * the rotary embedding turns queries and keys by, f32 (B, Tq) and
     * (B, Tv) of non-negative integers (Hugging Face's position_ids); NULL =
     * query t at t, key s at s. Masks keep their meaning. */
    vkattn_tensor *query_positions, *key_positions;
} vkattn_layer_io;

/* ---------------------------------------------------------------- backward
 *
 * Every layer's gradients on the GPU (vkattn_X_backward_record), and its
 * weights as tensors (vkattn_X_get_weight_tensors), each in the layer's
 * header vkattn/<layer>.h with what it keeps, its scratch and its bound; a
 * training step (forward, loss, backward, optimizer) never leaves the device.
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
 * Semantics: exactly the CPU references vkattn_reference_*_backward
 * (vkattn/<layer>_host.h), which give the same gradients in double:
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
 * call->keep_for_backward = true (vkattn/layer_call.h). What that forward
 * keeps, in the layer's scratch, is stated in each layer's header; it
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
 * dim), f32; for an f16 (bf16) layer f16 (bf16) or f32, each on its own (below). A gradient tensor NULL = that gradient is not wanted (at least
 * one gradient must be wanted). Results: VKATTN_ERROR_INVALID_ARGUMENT (NULL
 * layer, cmd, call, io or grads; grads->grad_output NULL or of the wrong
 * size; a gradient of the wrong size; grad_key without io->key; a gradient
 * of a weight the layer does not have (biases of a no_bias
 * MultiHeadAttention, AdditiveAttention's scale with no_scale); a gradient
 * tensor that aliases or overlaps an input, an output, grad_output, a weight
 * or another gradient; no kept forward, or one that does not match),
 * VKATTN_ERROR_UNSUPPORTED (a 16-bit gradient or grad_output of an f32
 * layer, or one of the other 16-bit type; call->path FUSED where the fused
 * backward cannot serve the call),
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
 * (tests/gpu/test_layer_backward.c).
 * bf16 layers (desc.dtype VKATTN_DTYPE_BF16): as f16 with bf16 in place of
 * f16 and bf16's spacing at 1, 2^-7, for 2^-10: 8 * 2^-7 of max(max|ref|,
 * 0.1) for the multi-head layers (past what their kept bf16 output adds,
 * tests/gpu/kept_output_bound.h, as for f16), and the f32 bound plus 2^-8 of
 * max(max|ref|, 0.01) for the single-head ones (the tests see below a
 * tenth of these). An optimizer step cannot update an f16 layer's own weights: vkattn_optim_step_record takes f32 parameters only
 * (VKATTN_ERROR_UNSUPPORTED naming io->param); keep f32 master weights and
 * set_weights them, or train an f32 layer.
 *
 * Thread safety: as the forward (a layer is externally synchronized).
 */

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

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_LAYER_COMMON_H */
