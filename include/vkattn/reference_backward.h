/* vkattn/reference_backward.h - CPU reference of the backward passes (double
 * accumulation), host arrays only, no Vulkan: the ground truth the GPU backward
 * ops are tested against. Each function's gradient follows the forward of the
 * same name in vkattn/reference.h.
 */
#ifndef VKATTN_REFERENCE_BACKWARD_H
#define VKATTN_REFERENCE_BACKWARD_H

#include "vkattn/layer_params.h"
#include "vkattn/reference.h"
#include "vkattn/train_params.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- matmul and additive scoring gradients ---- */

/* Gradients of vkattn_reference_matmul for grad_c = dL/dC (in C's layout):
 *   d op(A) = alpha * dC op(B)^T,  d op(B) = alpha * op(A)^T dC,
 *   grad_bias[n] = sum over b, h, m of dC[b,h,m,n]  (n floats).
 * grad_a has A's layout and grad_b B's: every element that some matrix
 * (b, h) of the operand reaches gets the sum of its gradients over all (b, h)
 * reaching it (so a broadcast operand's gradient is summed over the batch);
 * elements no matrix reaches are left as they were. Each gradient is optional
 * (NULL = not wanted; a needs to be given for grad_b, b for grad_a) and is
 * overwritten. A gradient array equal to an input or another gradient is
 * INVALID_ARGUMENT; grad_bias without has_bias too. */
VKATTN_API vkattn_result vkattn_reference_matmul_backward(const vkattn_matmul_params *p,
                                                          const float *a, const float *b,
                                                          const float *grad_c, float *grad_a,
                                                          float *grad_b, float *grad_bias);

/* Gradients of vkattn_reference_additive for grad_scores = dL/dS (B, Tq, Tv),
 * with u = inner * (q[b,i,d] + k[b,j,d]) and s = scale_vec (ones without
 * has_scale_vector):
 *   grad_q[b,i,d] = outer * inner * s_d * sum_j dS[b,i,j] (1 - tanh^2 u)
 *   grad_k[b,j,d] = outer * inner * s_d * sum_i dS[b,i,j] (1 - tanh^2 u)
 *   grad_scale[d] = outer * sum_{b,i,j} dS[b,i,j] tanh u   (needs has_scale_vector)
 * Each gradient optional (NULL = not wanted) and overwritten. A gradient
 * array equal to an input or another gradient is INVALID_ARGUMENT. */
VKATTN_API vkattn_result vkattn_reference_additive_backward(
    const vkattn_additive_params *p, const float *q, const float *k, const float *scale_vec,
    const float *grad_scores, float *grad_q, float *grad_k, float *grad_scale);

/* ---- training: optimizer step, MSE loss, dropout and head gradients ---- */

/* One optimizer step (vkattn/optim.h's formulas, PyTorch's) on n parameters,
 * computed in double from the f32 inputs and rounded to f32 once per value
 * written: param (n, updated), grad (n, read), state (n for SGD with
 * momentum, 2n for Adam/AdamW: m then v; may be NULL for plain SGD), step
 * (VKATTN_OPTIM_STEP_COUNT, advanced as on the GPU: t += 1, and beta^t for
 * Adam). The bias corrections are 1 - beta^t from t in double, as PyTorch
 * computes them, not from step[1..2]. Codes: _INVALID_ARGUMENT (a NULL
 * array, n 0, hyper-parameters as vkattn_optim_step_record checks them). */
VKATTN_API vkattn_result vkattn_reference_optim_step(const vkattn_optim_params *p, size_t n,
                                                     float *param, const float *grad,
                                                     float *state, float *step);

/* loss[0] = mean((pred - target)^2) over p->count elements, in double;
 * grad (may be NULL) = loss_scale * 2 * (pred - target) / count. */
VKATTN_API vkattn_result vkattn_reference_mse(const vkattn_mse_params *p, const float *pred,
                                              const float *target, float *loss, float *grad);

/* Dropout and the head permutations need no backward of their own: dropout's
 * is vkattn_reference_dropout(p, NULL, grad_out, grad_in) (the forward's mask
 * and scale; in place allowed), the split's is vkattn_reference_heads_merge on
 * the gradient and the merge's vkattn_reference_heads_split. */

/* ---- layers: the backward of the four layer references (vkattn/layer_params.h) ---- */

/* The input gradients of a layer backward, host arrays shaped as the inputs
 * of vkattn_layer_host_io: grad_query (B, Tq, Dq), grad_value (B, Tv, Dv),
 * grad_key (B, Tv, Dk). NULL = not wanted. grad_key must be NULL when io->key
 * is NULL: the key is then the value array, and the key path's gradient is
 * added into grad_value (which is then dL/d(value) of the whole layer).
 * Each gradient is with respect to its own argument: for self-attention
 * (query, value and key the same array) the caller sums them. */
typedef struct vkattn_layer_host_grads {
    float *grad_query, *grad_value, *grad_key;
} vkattn_layer_host_grads;

/* The backward of each layer reference: given dL/d(output) (`grad_output`,
 * the output's shape, (B, Tq, Dv), (B, Tq, Dout) for MultiHeadAttention), the
 * gradients of the loss with respect to the inputs (`grads`) and to the
 * weights (`grad_w`, the layer's own weights struct reused in the same Keras
 * layout: each float * array receives dL/dW of the weight of that name, NULL
 * = not wanted; scalar members are always written). `grads` or `grad_w` NULL
 * = none of that kind wanted. Every gradient is overwritten, not accumulated.
 *
 * The desc, weights, call and io are those of the forward, which the
 * backward recomputes in double (the forward references stage f32 tensors
 * between ops; the gradients are of the same function without those
 * roundings). io->output and io->scores are not read or written, and
 * call->return_attention_scores is ignored: the scores do not change the
 * gradients. Masks (query_mask, value_mask, causal, the attention mask with
 * its broadcasts) act as in the forward; dropout in training mode drops the
 * same elements as the forward (the same Philox stream from call->seed and
 * call->offset) and scales the kept ones alike. A fully masked row's weights
 * do not depend on the scores, so nothing flows back into the scores of that
 * row: its query, key and score-weight gradients are zero, never NaN (the
 * single-head layers still give a value gradient through the row's uniform
 * weights; MultiHeadAttention's zero row gives none). Rows whose query_mask
 * is 0 have zero output in the single-head layers, hence zero gradient.
 *
 * Results: VKATTN_ERROR_INVALID_ARGUMENT (naming the argument in
 * vkattn_last_error()) for everything the forward refuses (a bad desc,
 * weights, call, a missing input array), grad_output NULL, an unexpected
 * gradient array (grad_key without io->key, a gradient of a weight the desc
 * does not use: AdditiveAttention's scale with no_scale, MultiHeadAttention's
 * biases with no_bias), or a gradient array that overlaps an input array,
 * grad_output, a weight, or another gradient array;
 * VKATTN_ERROR_SIZE_OVERFLOW as the forward; VKATTN_ERROR_OUT_OF_HOST_MEMORY
 * for the double scratch (about the forward's intermediates, in double, plus
 * two (B, H, Tq, Tv) tensors). Nothing is written on failure. Thread safety:
 * as the forward references (no shared state; the last error is per thread).
 *
 * Accuracy: double throughout; the result is rounded to f32 once. Against
 * central finite differences of the f32 forward references the gradients
 * agree to the bounds stated in tests/unit/test_layer_backward.c. */

/* keras.layers.Attention. grad_w->scale = dL/d(scale) (0 unless
 * desc->use_scale), grad_w->concat_score_weight = dL/d(concat_score_weight)
 * (0 unless score_mode is CONCAT). */
VKATTN_API vkattn_result vkattn_reference_attention_backward(
    const vkattn_attention_desc *desc, const vkattn_attention_weights *w,
    const vkattn_layer_call *call, const vkattn_layer_host_io *io, const float *grad_output,
    const vkattn_layer_host_grads *grads, vkattn_attention_weights *grad_w);

/* keras.layers.AdditiveAttention. grad_w->scale (query_width) = dL/d(scale);
 * must be NULL when desc->no_scale. */
VKATTN_API vkattn_result vkattn_reference_additive_attention_backward(
    const vkattn_additive_attention_desc *desc, const vkattn_additive_attention_weights *w,
    const vkattn_layer_call *call, const vkattn_layer_host_io *io, const float *grad_output,
    const vkattn_layer_host_grads *grads, vkattn_additive_attention_weights *grad_w);

/* BahdanauAttention. grad_w->query_kernel (query_width, units),
 * key_kernel (key_width, units), score_kernel (units); grad_w->score_bias is
 * always written as exactly 0: softmax is shift-invariant, so the output does
 * not depend on it. For a rank-2 query (B, Dq) use call->tq = 1. */
VKATTN_API vkattn_result vkattn_reference_bahdanau_backward(
    const vkattn_bahdanau_desc *desc, const vkattn_bahdanau_weights *w,
    const vkattn_layer_call *call, const vkattn_layer_host_io *io, const float *grad_output,
    const vkattn_layer_host_grads *grads, vkattn_bahdanau_weights *grad_w);

/* keras.layers.MultiHeadAttention. grad_w: query/key/value kernels
 * (D_in, H, head_dim), biases (H, head_dim), output kernel (H, value_dim,
 * output_dim), output bias (output_dim), as vkattn_mha_weights; the four
 * bias gradients must be NULL when desc->no_bias. */
VKATTN_API vkattn_result vkattn_reference_mha_backward(
    const vkattn_mha_desc *desc, const vkattn_mha_weights *w, const vkattn_layer_call *call,
    const vkattn_layer_host_io *io, const float *grad_output,
    const vkattn_layer_host_grads *grads, vkattn_mha_weights *grad_w);

/* GroupedQueryAttention: as vkattn_reference_mha_backward, the key and value
 * weight gradients (Dk, Nkv, h), (Nkv, h), ... in the layer's shapes: each
 * key/value head's gradient is the sum over the Nq/Nkv query heads that
 * read it. */
VKATTN_API vkattn_result vkattn_reference_gqa_backward(
    const vkattn_gqa_desc *desc, const vkattn_gqa_weights *w, const vkattn_layer_call *call,
    const vkattn_layer_host_io *io, const float *grad_output,
    const vkattn_layer_host_grads *grads, vkattn_gqa_weights *grad_w);

/* ---- attention gradients: masked softmax and scaled dot-product attention ---- */

/* Gradient of vkattn_reference_softmax with respect to its scores, given the
 * softmax output W = weights and grad_out = dL/dW, all (B, H, Tq, Tv):
 *   grad_scores = scale * W * (grad_out - sum_j grad_out * W)      per row
 * A masked key gets exactly 0. A row the forward filled by its masked-row
 * policy (no key allowed by causal, value_mask and mask, or every allowed key's
 * bias -inf) gets all zeros: its weights do not depend on the scores. Scores
 * are assumed finite (a -inf score the forward masked is not recognized).
 * bias, value_mask, mask: as the forward's, read only to find masked keys and
 * rows. grad_scores may equal grad_out. Codes as vkattn_reference_softmax. */
VKATTN_API vkattn_result vkattn_reference_softmax_backward(const vkattn_softmax_params *p,
                                                           const float *weights,
                                                           const float *grad_out,
                                                           const float *bias,
                                                           const float *value_mask,
                                                           const float *mask,
                                                           float *grad_scores);

/* Gradients of vkattn_reference_sdpa (same params, same inputs; return_weights
 * is ignored) given grad_out = dL/dout (B, H, Tq, dv):
 *   grad_q (B, H, Tq, dk), grad_k (B, Hkv, Tv, dk), grad_v (B, Hkv, Tv, dv).
 * The forward is recomputed row by row in double; dropout regenerates the
 * forward's Philox mask from p->dropout, so the same seed and offset must be
 * passed. K and V gradients of grouped-query attention are summed over the
 * query heads sharing a K/V head. Rows filled by the masked-row policy give
 * no Q or K gradient; under the uniform policy their constant weights 1/Tv
 * (after dropout) still carry grad_out into grad_v. No bias gradient.
 * Codes as vkattn_reference_sdpa. */
VKATTN_API vkattn_result vkattn_reference_sdpa_backward(const vkattn_sdpa_params *p,
                                                        const float *q, const float *k,
                                                        const float *v, const float *bias,
                                                        const float *value_mask,
                                                        const float *mask, const float *grad_out,
                                                        float *grad_q, float *grad_k,
                                                        float *grad_v);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_REFERENCE_BACKWARD_H */
