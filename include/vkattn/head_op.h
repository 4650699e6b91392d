/* vkattn/head_op.h - RMS-norm and the rotary embedding as ops of their own,
 * on heads x (batch, heads, seq, dim): what the multi-head layers' QK-norm
 * and rotary embedding run (docs/SEMANTICS.md, "QK-norm and rotary
 * embeddings"), one entry keyed by vkattn_head_op_params.op (vkattn/op_params.h):
 *
 *   RMS_NORM           out[row] = x[row] / sqrt(mean(x[row]^2) + epsilon) * weight
 *   RMS_NORM_BACKWARD  grad_x = d/dx of sum(grad_out * RMS_NORM(x)),
 *                      grad_weight = its d/dweight summed over every row
 *   ROPE               out = x with pair i of row (b, h, t) turned by
 *                      (p / scaling_factor) * max_wavelength^(-2i/rotary_dim),
 *                      p = positions[b * seq + t] (NULL: p = t)
 *   ROPE_INVERSE       turned by -angle: ROPE's backward (the transpose)
 * (positions are used as given, unchecked: the device reads them)
 *
 * The CPU reference is vkattn_reference_head_op (vkattn/reference.h); both
 * check the params through one plan, with the same messages.
 *
 * Element types: x and weight f32, f16 or bf16, grad_weight f32 or f16, out
 * of x's type, positions, grad_out and grad_x f32. Arithmetic is fp32 (16-bit
 * values converted on load, rounded once on store; bf16 to nearest even by
 * vkattn, so a bf16 out adds half a bf16 spacing, 2^-8 of |out|). Bounds against the reference (the tests):
 * the norm ops within 1e-5 of the output's scale (a few f32 roundings of a
 * row of length dim); the rotations within the angle bound of
 * docs/SEMANTICS.md (the device's fp32 angle p * inv_freq differs from the
 * double one by about p * 2^-24 radians) times the row's scale.
 *
 * In place: out may be x (the forward ops), grad_x may be grad_out. No other
 * tensor may alias another. The rotations keep one small f32 table of
 * inverse frequencies per distinct (max_wavelength, scaling_factor,
 * rotary_dim) on the context, made on first use and freed with it.
 *
 * Results: VKATTN_ERROR_INVALID_ARGUMENT naming the argument (NULL ctx,
 * params or io; a zero size; a bad op; epsilon or a rope field out of range,
 * with the layers' words; a missing or too-small tensor; out of another type
 * than x; a tensor the op does not use given; a written tensor overlapping
 * any other but its own input), VKATTN_ERROR_UNSUPPORTED (a tensor of a type
 * the op does not take, as every op), VKATTN_ERROR_SIZE_OVERFLOW,
 * VKATTN_ERROR_DEVICE_LIMIT (beyond 32-bit indexing or
 * maxStorageBufferRange), Vulkan failures and out of memory. Every argument
 * is checked before anything is recorded.
 * Recording contract, modes (an app's command buffer, VKATTN_PREPARE,
 * VKATTN_RUN_NOW) and thread safety: as for every vkattn *_record
 * (vkattn/matmul.h, vkattn/context.h). */
#ifndef VKATTN_HEAD_OP_H
#define VKATTN_HEAD_OP_H

#include "vkattn/context.h"
#include "vkattn/op_params.h"
#include "vkattn/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkattn_head_op_io {
    vkattn_tensor *x;           /* (batch, heads, seq, dim), read (the backward's input) */
    vkattn_tensor *out;         /* forward ops: written, x's shape and type; may be x */
    vkattn_tensor *weight;      /* the norm ops: (dim) */
    vkattn_tensor *positions;   /* the rotations: (batch, seq) f32, or NULL (row t at t) */
    vkattn_tensor *grad_out;    /* RMS_NORM_BACKWARD: (batch, heads, seq, dim) f32, read */
    vkattn_tensor *grad_x;      /* RMS_NORM_BACKWARD: x's shape, f32, written; may be grad_out */
    vkattn_tensor *grad_weight; /* RMS_NORM_BACKWARD: (dim), written */
} vkattn_head_op_io;

VKATTN_API vkattn_result vkattn_head_op_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                               const vkattn_head_op_params *params,
                                               const vkattn_head_op_io *io);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_HEAD_OP_H */
