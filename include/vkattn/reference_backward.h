/* vkattn/reference_backward.h - CPU reference of the backward passes (double
 * accumulation), host arrays only, no Vulkan: the ground truth the GPU backward
 * ops are tested against. Each function's gradient follows the forward of the
 * same name in vkattn/reference.h.
 */
#ifndef VKATTN_REFERENCE_BACKWARD_H
#define VKATTN_REFERENCE_BACKWARD_H

#include "vkattn/reference.h"

#ifdef __cplusplus
extern "C" {
#endif

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
