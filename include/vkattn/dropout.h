/* vkattn/dropout.h - inverted dropout of attention weights on the GPU.
 *
 *   out[b,h,i,j] = keep(b,h,i,j) ? in[b,h,i,j] * scale : 0
 *
 * on a (B, H, Tq, Tv) tensor, with keep() the Philox stream of vkattn/philox.h
 * (docs/SEMANTICS.md, "Philox dropout stream") and scale the float nearest
 * 1/(1 - rate). The mask depends only on seed, offset and the element's
 * indices, so it equals vkattn_reference_dropout_mask() bit for bit, and the
 * output equals vkattn_reference_dropout() bit for bit. Dropped elements are
 * exactly +0, even where the input is NaN or inf.
 *
 * Only active when params->dropout.training and rate > 0. Otherwise the op is
 * an exact copy (nothing at all is recorded when out == in). rate 1 gives all
 * zeros. The rate must lie in [0, 1] even when not training.
 *
 * Call sequence: fill vkattn_dropout_op_params (vkattn/op_params.h), bind
 * tensors in vkattn_dropout_io, call *_record (into your command buffer, or
 * VKATTN_RUN_NOW: submits and waits). Advance dropout.offset per training step, or
 * every step draws the same mask.
 *
 * Half precision: in and out may each be f32, f16 or bf16 (vkattn/tensor.h);
 * in place they are one tensor. The same elements are kept as in f32 (the
 * mask does not depend on the type); a kept value is in (exact) times the f32
 * scale in f32, and a 16-bit out gets that product rounded once: an f16 out
 * by the device's f32 -> f16 conversion, within ulp16 (one f16 ulp, 2^-10 of
 * its binade) of vkattn_reference_dropout with an f32 out, equal to the typed
 * reference with an f16 out on devices that round to nearest even
 * (lavapipe); a bf16 out by vkattn's own rounding to nearest even, within
 * half a bf16 ulp (2^-8 of its binade), equal to the typed reference with a
 * bf16 out on every device. With storageBuffer16BitAccess the kernel reads
 * and writes f16 as float16_t; bf16, or f16 without it, passes through f32
 * scratch (one conversion pass each; docs/SEMANTICS.md, "Half precision").
 * The backward (below) takes the same types.
 *
 * Recording contract: as in vkattn/matmul.h.
 * Results: VKATTN_ERROR_INVALID_ARGUMENT (NULL ctx, cmd, params, io or tensor;
 * a zero batch, tq or tv; rate outside [0, 1] or NaN; a tensor smaller than
 * B*H*Tq*Tv), VKATTN_ERROR_SIZE_OVERFLOW, VKATTN_ERROR_DEVICE_LIMIT (the
 * tensor exceeds 32-bit indexing), Vulkan failures.
 * Thread safety: externally synchronized on cmd and the tensors; *_record (in
 * any mode) may run on several threads of one context (vkattn/context.h).
 */
#ifndef VKATTN_DROPOUT_H
#define VKATTN_DROPOUT_H

#include "vkattn/context.h"
#include "vkattn/op_params.h"
#include "vkattn/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkattn_dropout_io {
    vkattn_tensor *in;  /* (B, H, Tq, Tv), at least that many elements */
    vkattn_tensor *out; /* (B,H,Tq,Tv); out may equal in (in place); must not otherwise overlap it */
} vkattn_dropout_io;

VKATTN_API vkattn_result vkattn_dropout_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                               const vkattn_dropout_op_params *params,
                                               const vkattn_dropout_io *io);

/* Backward of dropout: grad_in = keep ? grad_out * scale : 0, with the keep
 * mask of the forward call with the same params (seed, offset, rate, shape):
 * the mask is regenerated from the Philox stream, never stored, so exactly
 * the forward's kept elements pass, scaled by the same f32 scale. When the
 * forward was a copy (not training, or rate 0) this is a copy too (nothing
 * is recorded in place). The op is the forward's kernel run on the gradient,
 * so it is exact: equal to vkattn_reference_dropout on the gradient bit for bit.
 * Checks, results, recording contract and thread safety as
 * vkattn_dropout_record's. */
typedef struct vkattn_dropout_backward_io {
    vkattn_tensor *grad_out; /* dL/d(out), (B, H, Tq, Tv), read */
    vkattn_tensor *grad_in;  /* dL/d(in), written; may equal grad_out (in place), must not
                                otherwise overlap it */
} vkattn_dropout_backward_io;

VKATTN_API vkattn_result vkattn_dropout_backward_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                                        const vkattn_dropout_op_params *params,
                                                        const vkattn_dropout_backward_io *io);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_DROPOUT_H */
