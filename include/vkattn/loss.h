/* vkattn/loss.h - the mean-squared-error loss on the GPU, and its gradient.
 *
 *   loss = sum_i (pred[i] - target[i])^2 / N            (1 element, f32)
 *   grad[i] = loss_scale * 2 * (pred[i] - target[i]) / N  (optional)
 *
 * over the first N = params->count elements (vkattn/train_params.h). The
 * loss itself is not scaled (it is for logging); the gradient is, for loss
 * scaling in mixed precision. The reduction is deterministic: one workgroup
 * sums in a fixed order with f32 Kahan compensation, no atomics, so the same
 * inputs give the same bits on every run. One workgroup is slow on a large
 * GPU for tensors of many millions of elements; a loss is usually small.
 *
 * Accuracy vs vkattn_reference_mse (double): the loss within 1e-5 relative
 * and the gradient within 1e-6 relative of max |grad| (tests/gpu/test_loss.c;
 * the gradient is one subtraction and one multiply).
 *
 * 16-bit tensors: pred, target and grad each f32, f16 or bf16; the loss stays
 * f32. A 16-bit input is read exactly, through f32 scratch (one conversion
 * pass each; pred == target: one); a 16-bit grad is the f32 result rounded
 * once (f16: the device's conversion; bf16: to nearest even by vkattn), so
 * against the reference on the stored inputs the loss keeps its bound and
 * such a gradient gains one f16 spacing, or half a bf16 spacing (2^-8
 * relative), at |ref| + the f32 bound.
 *
 * Recording contract: as in vkattn/matmul.h; pred and target are read, loss
 * and grad written by VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT.
 * Results: VKATTN_ERROR_INVALID_ARGUMENT (NULL ctx, cmd, params or io; count
 * 0; a non-finite loss_scale; a missing or too-small tensor; loss or grad
 * overlapping another tensor; a 16-bit loss), Vulkan failures. On an error
 * nothing is recorded.
 * Thread safety: externally synchronized on cmd and the tensors; *_record (in
 * any mode) may run on several threads of one context (vkattn/context.h).
 */
#ifndef VKATTN_LOSS_H
#define VKATTN_LOSS_H

#include "vkattn/context.h"
#include "vkattn/tensor.h"
#include "vkattn/train_params.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkattn_mse_io {
    vkattn_tensor *pred;   /* N, read */
    vkattn_tensor *target; /* N, read (may be the same tensor as pred) */
    vkattn_tensor *loss;   /* 1, written */
    vkattn_tensor *grad;   /* N, written; NULL: no gradient */
} vkattn_mse_io;

VKATTN_API vkattn_result vkattn_mse_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                           const vkattn_mse_params *params,
                                           const vkattn_mse_io *io);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_LOSS_H */
