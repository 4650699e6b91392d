/* vkattn/additive_backward.h - gradients of additive (tanh) scoring on the GPU.
 *
 * For the forward of vkattn/additive.h,
 *   S[b,i,j] = outer * sum_d s_d * tanh(u),  u = inner * (q[b,i,d] + k[b,j,d]),
 * given dS = dL/dS (B, Tq, Tv) for a loss L, with the same params:
 *
 *   dq[b,i,d] = outer * inner * s_d * sum_j dS[b,i,j] * (1 - tanh^2(u))
 *   dk[b,j,d] = outer * inner * s_d * sum_i dS[b,i,j] * (1 - tanh^2(u))
 *   ds[d]     = outer * sum_{b,i,j} dS[b,i,j] * tanh(u)     (has_scale_vector)
 *
 * (s = 1 without a scale vector). The forward has no masks or broadcast
 * operands (masks apply to its output in later ops), so neither has this.
 * Gradients overwrite their tensors (no accumulation).
 *
 * How: one invocation per element of dq (looping over the keys), one per
 * element of dk (looping over the queries), and for ds per-row partial sums
 * reduced over (b, i) by a second kernel: no atomics (float atomics are not
 * portable to Vulkan 1.1), sums in a fixed order, results identical from run
 * to run. 1 - tanh^2 is computed as 4e/(1+e)^2, e = exp(-2|u|), which does not
 * cancel where tanh rounds to 1. Four storage buffers per dispatch at most.
 *
 * Precision: fp32 throughout. Against vkattn_reference_additive_backward
 * (double), per gradient, max|got - ref| <= 1e-5 for dq and dk (sums over Tv
 * or Tq up to 100 terms) and 2e-5 for ds (a sum over B * Tq * Tv terms) in
 * the tests, relative to the largest sum of the magnitudes of the terms a
 * gradient element adds (not to max|ref|: terms of both signs can cancel far
 * below their size), including inputs with |q + k| up to 100; about 3e-7
 * measured on lavapipe.
 *
 * 16-bit: q, k, scale, grad_scores and each gradient may be f32, f16 or
 * bf16, each on its own. A 16-bit input is read through an exact f32 copy,
 * the arithmetic is the f32 backward's, and a 16-bit gradient is rounded once
 * from its f32 result (one extra pass per 16-bit tensor): the bound above on
 * the stored values, plus 2^-11 of |ref| for an f16 gradient, 2^-8 for a bf16
 * one (half a spacing: 11 and 8 significand bits).
 *
 * Recording contract: as for every vkattn *_record (see vkattn/matmul.h); q,
 * k, scale and grad_scores are read, the gradients asked for are written by
 * VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT with VK_ACCESS_SHADER_WRITE_BIT.
 * VKATTN_RUN_NOW and VKATTN_PREPARE in place of cmd run or prepare the call
 * (vkattn/context.h). No gradient asked for records nothing and succeeds.
 *
 * Results: VKATTN_ERROR_INVALID_ARGUMENT (NULL ctx, cmd, params or io; a zero
 * size; a non-finite scale; a missing or too-small tensor; scale given without
 * has_scale_vector or missing with it; grad_scale without has_scale_vector; a
 * gradient tensor that is one of the inputs or another gradient),
 * VKATTN_ERROR_SIZE_OVERFLOW, VKATTN_ERROR_DEVICE_LIMIT (a tensor beyond
 * 32-bit indexing, Tq or Tv or B * Tq beyond the loop budget),
 * VKATTN_ERROR_UNSUPPORTED (a tensor neither f32, f16 nor bf16), Vulkan failures. On an argument
 * error nothing is recorded.
 * Thread safety: externally synchronized on cmd and the tensors; *_record (in
 * any mode) may run on several threads of one context (vkattn/context.h).
 */
#ifndef VKATTN_ADDITIVE_BACKWARD_H
#define VKATTN_ADDITIVE_BACKWARD_H

#include "vkattn/context.h"
#include "vkattn/op_params.h"
#include "vkattn/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkattn_additive_backward_io {
    vkattn_tensor *q;           /* (B, Tq, dim) */
    vkattn_tensor *k;           /* (B, Tv, dim) */
    vkattn_tensor *scale;       /* (dim) iff params->has_scale_vector, else NULL */
    vkattn_tensor *grad_scores; /* dL/dS (B, Tq, Tv); read */
    vkattn_tensor *grad_q;      /* (B, Tq, dim), written; NULL = not wanted */
    vkattn_tensor *grad_k;      /* (B, Tv, dim), written; NULL = not wanted */
    vkattn_tensor *grad_scale;  /* (dim), written; NULL = not wanted; needs has_scale_vector */
} vkattn_additive_backward_io;

VKATTN_API vkattn_result vkattn_additive_backward_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                                         const vkattn_additive_params *params,
                                                         const vkattn_additive_backward_io *io);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_ADDITIVE_BACKWARD_H */
