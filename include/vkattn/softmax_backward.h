/* vkattn/softmax_backward.h - the gradient of the masked softmax on the GPU.
 *
 * Given the forward's output W = softmax(scores * scale + bias, masks)
 * (vkattn/softmax.h) and dW = dL/dW, both (B, H, Tq, Tv), writes
 *
 *   dScores = scale * W * (dW - rowsum(dW * W))        (dL/dscores)
 *
 * with the semantics of vkattn_reference_softmax_backward
 * (vkattn/reference_backward.h): masked keys get exactly 0, and so does every
 * key of a row the forward filled by its masked-row policy (no key allowed by
 * causal, value_mask and mask, or every allowed key's bias -inf): those
 * weights, 0 or 1/Tv, do not depend on the scores. Never NaN from masking.
 * The params are the forward's (vkattn_softmax_params), and so are the masks
 * and bias: they tell which keys and rows are masked (scores are assumed
 * finite). With scale 1 the result is also dL/dbias before any broadcast
 * reduction. fp32 throughout (one fp32 row sum): the tests bound
 * max|got - ref| by 1e-5 at Tv up to 300, relative to the largest
 * |scale| * w_i * (|dw_i| + sum_j w_j |dw_j|), the size of the terms a
 * gradient element adds.
 *
 * 16-bit tensors: weights, grad_out and grad_scores each f32, f16 or bf16
 * (in place: one tensor, one type); bias and masks stay f32. A 16-bit
 * input is read exactly, through f32 scratch (one conversion pass each); a
 * 16-bit grad_scores is the f32 result rounded once (f16: the device's
 * conversion; bf16: to nearest even by vkattn), so against the reference on
 * the stored inputs the bound above gains one f16 spacing, or half a bf16
 * spacing (2^-8 relative), at |ref| + that bound.
 *
 * In place: io->grad_scores may be io->grad_out. On devices with fewer than 6
 * storage buffers per shader the bias and masks are first copied into the
 * context's pack buffer (vk/pack.h).
 *
 * Recording contract: as for every vkattn *_record (see vkattn/matmul.h). One
 * dispatch (after the pack copies and 16-bit conversions where they apply).
 *
 * Results: VKATTN_ERROR_INVALID_ARGUMENT (NULL ctx, cmd, params or io; batch,
 * tq or tv 0; scale not finite; an enum out of range; a tensor missing where
 * its flag asks for it or given where it does not; tensors too small;
 * grad_scores aliasing weights, bias, value_mask or mask; tensors of another
 * context; a 16-bit bias or mask, named), VKATTN_ERROR_SIZE_OVERFLOW,
 * VKATTN_ERROR_DEVICE_LIMIT (32-bit
 * indexing, maxStorageBufferRange, workgroup counts, lavapipe's loop limit),
 * Vulkan failures. Nothing is recorded on error.
 * Thread safety: externally synchronized on cmd and the tensors; *_record (in
 * any mode) may run on several threads of one context (vkattn/context.h).
 */
#ifndef VKATTN_SOFTMAX_BACKWARD_H
#define VKATTN_SOFTMAX_BACKWARD_H

#include "vkattn/context.h"
#include "vkattn/op_params.h"
#include "vkattn/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkattn_softmax_backward_io {
    vkattn_tensor *weights;     /* (B, H, Tq, Tv): the forward's output */
    vkattn_tensor *grad_out;    /* (B, H, Tq, Tv): dL/dweights */
    vkattn_tensor *bias;        /* iff params->mask.has_bias, as the forward's */
    vkattn_tensor *value_mask;  /* iff has_value_mask: (B, Tv) */
    vkattn_tensor *mask;        /* iff has_mask, as the forward's */
    vkattn_tensor *grad_scores; /* (B, H, Tq, Tv), written; may be grad_out */
} vkattn_softmax_backward_io;

VKATTN_API vkattn_result vkattn_softmax_backward_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                                        const vkattn_softmax_params *params,
                                                        const vkattn_softmax_backward_io *io);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_SOFTMAX_BACKWARD_H */
