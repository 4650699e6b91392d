/* vkattn/additive.h - additive (tanh) attention scores on the GPU.
 *
 *   S[b,i,j] = outer_scale * sum_d s_d * tanh(inner_scale * (q[b,i,d] + k[b,j,d]))
 *
 * with the shapes and options of vkattn_additive_params (vkattn/op_params.h):
 * q (B, Tq, dim), k (B, Tv, dim), the scale vector s (dim) when
 * has_scale_vector (else all ones), S (B, Tq, Tv). This is the score of Keras
 * AdditiveAttention (s = its scale vector, inner = outer = 1) and of Keras
 * Attention with score_mode "concat" (inner = scale, outer =
 * concat_score_weight). Masks, softmax and the weighted sum of values are other
 * ops; this one only writes S. The CPU reference is vkattn_reference_additive.
 *
 * Unlike a dot product, every (i, j) pair costs dim tanh evaluations, so the
 * kernel is compute bound: a workgroup computes a tile of S for one batch from
 * q and k rows staged once in shared memory, several outputs per invocation.
 * The tile shapes follow the device's limits; nothing depends on a subgroup size.
 *
 * Precision: fp32 throughout, with a tanh that is accurate for every finite
 * argument (a polynomial near 0, 1 - 2/(exp(2|x|)+1) elsewhere, which goes to
 * exactly +-1 instead of NaN when exp overflows), not the driver's tanh. Against
 * the double reference, max|S - ref| / max|ref| <= 1e-5 in the tests, including
 * inputs with |q + k| up to 100.
 *
 * Half precision: q, k, scale and scores may each be f32, f16 or bf16. 16-bit
 * inputs are read exactly (through f32 scratch), the arithmetic is the fp32
 * above, and a 16-bit S is each fp32 score rounded once. Bound per element
 * against vkattn_reference_additive with an f32 out (the exact result of the
 * stored inputs), e = 1e-5 max|ref|: |S - ref| <= ulp16(|ref| + e) + e for an
 * f16 S, ulp16 = the f16 spacing (2^-10 relative); <= ulp_bf16(|ref| + e) / 2
 * + e for a bf16 S, ulp_bf16 = the bf16 spacing (2^-7 relative; half of it:
 * vkattn rounds bf16 to nearest even itself); <= e for an f32 S.
 *
 * Recording contract: as for every vkattn *_record (see vkattn/matmul.h); q, k
 * and scale are read, scores is written by VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT
 * with VK_ACCESS_SHADER_WRITE_BIT. *_record given VKATTN_RUN_NOW in
 * place of cmd runs it now (vkattn/context.h).
 *
 * Results: VKATTN_ERROR_INVALID_ARGUMENT (NULL ctx, cmd, params or io; a zero
 * size; a non-finite scale; a missing or too-small tensor; a scale tensor given
 * without has_scale_vector; scores being one of the inputs),
 * VKATTN_ERROR_SIZE_OVERFLOW, VKATTN_ERROR_DEVICE_LIMIT (a tensor beyond 32-bit
 * indexing or maxStorageBufferRange, batch or the tile counts beyond the
 * device's workgroup counts), VKATTN_ERROR_UNSUPPORTED (no tile fits the
 * device), Vulkan failures.
 * Thread safety: externally synchronized on cmd and the tensors; *_record (in
 * any mode) may run on several threads of one context (vkattn/context.h).
 */
#ifndef VKATTN_ADDITIVE_H
#define VKATTN_ADDITIVE_H

#include "vkattn/context.h"
#include "vkattn/op_params.h"
#include "vkattn/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkattn_additive_io {
    vkattn_tensor *q;      /* (B, Tq, dim) */
    vkattn_tensor *k;      /* (B, Tv, dim) */
    vkattn_tensor *scale;  /* (dim) iff params->has_scale_vector, else NULL */
    vkattn_tensor *scores; /* (B, Tq, Tv), written; must not be an input */
} vkattn_additive_io;

VKATTN_API vkattn_result vkattn_additive_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                                const vkattn_additive_params *params,
                                                const vkattn_additive_io *io);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_ADDITIVE_H */
