/* vkattn/reference_backward.h - CPU reference of the backward passes (double
 * accumulation), host arrays only, no Vulkan: the ground truth the GPU backward
 * ops are tested against. Each function's gradient follows the forward of the
 * same name in vkattn/reference.h.
 */
#ifndef VKATTN_REFERENCE_BACKWARD_H
#define VKATTN_REFERENCE_BACKWARD_H

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

/* grad_in = dropout of grad_out with the forward's mask and scale: the same
 * as vkattn_reference_dropout(p, grad_out, grad_in) (in place allowed). */
VKATTN_API vkattn_result vkattn_reference_dropout_backward(const vkattn_dropout_op_params *p,
                                                           const float *grad_out,
                                                           float *grad_in);

/* Backward of vkattn_reference_heads_split: grad_out (B, H, T, d) ->
 * grad_in (B, T, H*d), a merge; and of the merge, a split. */
VKATTN_API vkattn_result vkattn_reference_heads_split_backward(const vkattn_heads_params *p,
                                                               const float *grad_out,
                                                               float *grad_in);
VKATTN_API vkattn_result vkattn_reference_heads_merge_backward(const vkattn_heads_params *p,
                                                               const float *grad_out,
                                                               float *grad_in);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_REFERENCE_BACKWARD_H */
