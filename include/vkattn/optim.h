/* vkattn/optim.h - optimizer steps on the GPU: SGD (momentum, Nesterov,
 * weight decay), Adam and AdamW, elementwise, so a training step never
 * leaves the device.
 *
 * The updates are PyTorch's (torch.optim.SGD, Adam, AdamW with maximize,
 * amsgrad and foreach/fused off), for the step number t = 1, 2, ...:
 *
 *   SGD:   g = grad + weight_decay * p
 *          with momentum != 0: b = (t == 1) ? g : momentum * b + (1 - dampening) * g
 *                              g = nesterov ? g + momentum * b : b
 *          p = p - lr * g
 *   Adam:  g = grad + weight_decay * p                     (coupled L2)
 *   AdamW: p = p * (1 - lr * weight_decay)                 (decoupled)
 *   both:  m = beta1 * m + (1 - beta1) * g
 *          v = beta2 * v + (1 - beta2) * g^2
 *          p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
 *
 * State the caller owns, in vkattn_optim_io:
 *   state: SGD with momentum: the momentum buffer b (N floats); Adam/AdamW:
 *          m in [0, N) and v in [N, 2N) (2N floats); plain SGD: none (NULL).
 *   step:  VKATTN_OPTIM_STEP_COUNT floats [t, beta1^t, beta2^t] (vkattn/train_params.h),
 *          one per parameter tensor, like PyTorch's per-parameter state["step"].
 * Start training with both filled with zeros (vkattn_tensor_fill(x, 0)):
 * zero state is PyTorch's fresh optimizer.
 *
 * Replay: the step number lives on the device. Each recorded step first
 * advances the step tensor (its own one-invocation dispatch: t += 1 and the
 * running products beta^t), then updates the parameter reading it, so a
 * command buffer recorded once can be submitted step after step and every
 * submission is the next step with the right bias correction and the right
 * first momentum step. Hyper-parameters (lr, betas, ...) are recorded into
 * the command buffer: changing them (a learning-rate schedule) means
 * recording again. Do not change beta1/beta2 in the middle of a run: the step
 * tensor keeps products of the recorded betas.
 *
 * Accuracy (f32 on the GPU; vkattn_reference_optim_step is the double
 * reference): the bias corrections come from the running products, within a
 * relative ~u / (1 - beta) (u = 2^-24; 6e-5 for beta 0.999) of PyTorch's
 * 1 - beta^t in double, and equal to it at t = 1; the rest is a few f32
 * roundings per element. tests/gpu/test_optim.c bounds the change of the
 * parameters over several steps at 1e-4 relative and the state at 2e-6.
 *
 * 16-bit parameters and gradients: param and grad are each f32, f16 or bf16
 * (state and step stay f32). A 16-bit param is read exactly, updated in f32
 * with the f32 state and rounded once back to its type (bf16: to nearest
 * even, by vkattn's own code; f16: by the device's conversion), so it lands
 * within half a spacing of its type of the f32 update; a 16-bit grad is read
 * exactly. Both go through f32 scratch (one conversion pass each, on every
 * device). A 16-bit param without f32 master weights loses every change
 * below half its spacing (2^-8 |p| for bf16, 2^-11 |p| for f16), as the
 * variables of Keras's "bfloat16" and "float16" policies do: keep f32
 * masters (an f32 param) where small updates matter.
 *
 * Recording contract: as in vkattn/matmul.h; param, state and step are read
 * and written, grad is read, by VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT.
 * Results: VKATTN_ERROR_INVALID_ARGUMENT (NULL ctx, cmd, params or io; a
 * count of 0; a hyper-parameter outside its range (vkattn/train_params.h:
 * negative lr, a beta outside [0, 1), NaN, nesterov without momentum or with
 * dampening); a missing or too-small tensor (state may be NULL only for plain
 * SGD); tensors that overlap; a state or step that is not f32),
 * VKATTN_ERROR_UNSUPPORTED (an integer tensor),
 * VKATTN_ERROR_DEVICE_LIMIT (2N beyond 32-bit indexing),
 * Vulkan failures. On an argument error nothing is recorded.
 * Thread safety: externally synchronized on cmd and the tensors; *_record (in
 * any mode) may run on several threads of one context (vkattn/context.h).
 */
#ifndef VKATTN_OPTIM_H
#define VKATTN_OPTIM_H

#include "vkattn/context.h"
#include "vkattn/tensor.h"
#include "vkattn/train_params.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkattn_optim_io {
    uint32_t count;        /* required: N, the parameters updated (elements [0, N)) */
    vkattn_tensor *param;  /* N, read and written; f32, f16 or bf16 */
    vkattn_tensor *grad;   /* N, read; f32, f16 or bf16 */
    vkattn_tensor *state;  /* N (SGD with momentum) or 2N (Adam, AdamW), f32; plain SGD:
                              NULL (ignored) */
    vkattn_tensor *step;   /* VKATTN_OPTIM_STEP_COUNT, f32, read and written; required */
} vkattn_optim_io;

/* Records one step: the advance of io->step, then the update. */
VKATTN_API vkattn_result vkattn_optim_step_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                                  const vkattn_optim_params *params,
                                                  const vkattn_optim_io *io);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_OPTIM_H */
