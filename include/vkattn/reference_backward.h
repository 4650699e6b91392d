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

/* ---- layers: each layer's backward reference, vkattn_reference_X_backward, is
 * in its vkattn/<layer>_host.h (included here through vkattn/layer_params.h);
 * vkattn_layer_host_grads and their shared contract in vkattn/layer_call.h ---- */

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
