/* vkattn/softmax.h - masked softmax over the last axis on the GPU.
 *
 *   logit   = score * scale + bias
 *   allowed = value_mask[b,j] && causal(i,j) && mask[b,h,i,j]   (each only if enabled)
 *   out     = exp(logit - max) / sum over the allowed keys of the row
 *
 * for scores (B, H, Tq, Tv), with the options of vkattn_softmax_params
 * (vkattn/op_params.h); the semantics are exactly those of
 * vkattn_reference_softmax (vkattn/reference.h) and docs/SEMANTICS.md:
 * - Masks combine by AND; masks are f32, nonzero (NaN included) = may attend.
 *   Causal top-left allows j <= i, bottom-right j <= i + Tv - Tq.
 * - bias and mask are (B|1, H|1, Tq|1, Tv) as their vkattn_broadcast flags say;
 *   value_mask is (B, Tv).
 * - Masked keys get exactly 0. A row with no allowed key, or whose allowed
 *   logits are all -inf, gets all zeros or uniform 1/Tv per mask.masked_row;
 *   masking never produces NaN.
 * - A NaN (or +inf) among a row's allowed logits makes that row's allowed
 *   weights NaN and leaves every other row alone.
 * - Logits are computed in fp32 without overflow: score * scale + bias is
 *   carried divided by a power of two where it could exceed FLT_MAX, so
 *   scores of +-3e38 with any finite scale behave as the reference's double
 *   arithmetic does (the largest logit wins). Max-subtraction and sums in fp32.
 *
 * Any Tv from 1 up to the 32-bit index limit: rows that fit in shared memory
 * read their inputs once; longer rows read them twice (two passes over global
 * memory, no scratch memory). Keys past a causal limit are not read.
 * In place: io->out may be the same tensor as io->scores; it must not otherwise
 * overlap an input.
 *
 * Half precision: scores, bias and out may each be f32, f16 or bf16 (mixed
 * too); value_mask and mask are f32 only (a 16-bit mask is
 * VKATTN_ERROR_INVALID_ARGUMENT naming it and both types). 16-bit inputs are
 * read exactly, max and sums stay fp32, a 16-bit out is each fp32 weight
 * rounded once. Bound per element against vkattn_reference_softmax with an
 * f32 out (the exact result of the stored inputs), e = 1e-5 max|ref|:
 * f16 out: |out - ref| <= ulp16(|ref| + e) + e, ulp16 = the f16 spacing
 * (2^-10 relative, 2^-24 below 2^-14); bf16 out: <= ulp_bf16(|ref| + e) / 2
 * + e, ulp_bf16 = the bf16 spacing (2^-7 relative, 2^-133 below 2^-126;
 * half of it: vkattn rounds bf16 to nearest even itself); f32 out: <= e.
 * Kernels: with storageBuffer16BitAccess and 5 storage buffers per stage,
 * f16 tensors (when no operand is bf16) are float16_t buffers; otherwise
 * 16-bit scores (and bias) are read as packed words, a 16-bit out is written
 * through f32 scratch and a conversion pass, and on 4-buffer devices a 16-bit
 * bias is converted to f32 before being packed with the masks. In place with
 * 16 bits works on every path.
 *
 * Recording contract: as for every vkattn *_record (see vkattn/matmul.h). One
 * dispatch (plus one conversion pass per 16-bit tensor that goes through scratch,
 * above); inputs are read and io->out written by the compute shader stage.
 *
 * Results: VKATTN_ERROR_INVALID_ARGUMENT (NULL ctx, cmd, params or io; batch,
 * tq or tv 0; scale NaN or inf; an enum out of range; a 16-bit mask; a tensor missing where
 * its flag is set or given where it is not; tensors too small; out aliasing
 * bias, value_mask or mask; tensors of another context),
 * VKATTN_ERROR_SIZE_OVERFLOW (B*H*Tq*Tv overflows 64 bits),
 * VKATTN_ERROR_DEVICE_LIMIT (an operand beyond 32-bit indexing or
 * maxStorageBufferRange, too many rows for the workgroup-count limits),
 * Vulkan failures.
 * Thread safety: externally synchronized on cmd and the tensors; *_record (in
 * any mode) may run on several threads of one context (vkattn/context.h).
 */
#ifndef VKATTN_SOFTMAX_H
#define VKATTN_SOFTMAX_H

#include "vkattn/context.h"
#include "vkattn/op_params.h"
#include "vkattn/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The tensors of one softmax call. Element counts are what the op needs; a
 * larger tensor is fine (the op reads and writes its leading elements). */
typedef struct vkattn_softmax_io {
    vkattn_tensor *scores;     /* (B, H, Tq, Tv) */
    vkattn_tensor *bias;       /* iff params->mask.has_bias: (B|1, H|1, Tq|1, Tv) per mask.bias_broadcast */
    vkattn_tensor *value_mask; /* iff has_value_mask: (B, Tv), nonzero = may attend */
    vkattn_tensor *mask;       /* iff has_mask: (B|1, H|1, Tq|1, Tv) per mask.mask_broadcast */
    vkattn_tensor *out;        /* (B, H, Tq, Tv); may be the same tensor as scores (in place) */
} vkattn_softmax_io;

/* Records the softmax into cmd (see the recording contract above). */
VKATTN_API vkattn_result vkattn_softmax_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                               const vkattn_softmax_params *params,
                                               const vkattn_softmax_io *io);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_SOFTMAX_H */
