/* vkattn/matmul_backward.h - gradients of the batched matmul on the GPU.
 *
 * For the forward C[b,h] = alpha * op(A[b,h]) @ op(B[b,h]) (+ bias row) of
 * vkattn/matmul.h, given dC = dL/dC for a loss L, with the same params:
 *
 *   d op(A) = alpha * dC @ op(B)^T      (stored as A: transposed back when transpose_a)
 *   d op(B) = alpha * op(A)^T @ dC      (stored as B: transposed back when transpose_b)
 *   dBias[n] = sum over b, h, m of dC[b,h,m,n]     (alpha does not scale the bias)
 *
 * Layouts: dC has the forward's C layout (params->c); dA has A's layout and dB
 * B's (params->a, params->b), so a view's gradient lands where the view's
 * values are, and elements outside the view are left as they were. An
 * operand broadcast over the batch or the heads (stride 0, as weights are) has
 * one gradient per stored matrix, summed over the axes it is broadcast over.
 * Non-zero strides must not make an operand's matrices overlap (the GPU would
 * write such a gradient without summing the overlap; the CPU reference sums
 * it). Gradients overwrite their tensors (no accumulation).
 *
 * How: each gradient is a matmul of the forward's kernels (shaders/matmul.comp
 * reads either operand transposed, so no transpose is materialised); a
 * broadcast operand's per-matrix gradients go to library-managed scratch and
 * are summed by a reduction kernel, which also sums dBias. Every sum runs in a
 * fixed order: no atomics, results identical from run to run.
 *
 * Precision: fp32 accumulation. Against vkattn_reference_matmul_backward
 * (double), per gradient, max|got - ref| <= 2e-5 in the tests for contraction
 * lengths up to 256 (the contraction is N for dA, M times the broadcast count
 * for dB and for dBias), relative to the largest sum of the magnitudes of the
 * products a gradient element adds (the reference on |A|, |B|, |dC|).
 *
 * f16, bf16: each of a, b, grad_c, grad_a, grad_b and grad_bias may be f32,
 * f16 or bf16 on its own (as the forward's operands). The products read
 * 16-bit operands with fp32 accumulation (the forward's kernels); each 16-bit
 * gradient is rounded once from its f32 result (a broadcast operand's and the
 * bias's sums go through f32 scratch, ops/half_stage.h; bf16 always, f16
 * without 16-bit storage). Bound: the f32 one plus one rounding of the
 * result, 2^-11 relative for f16, 2^-8 for bf16 (half its 2^-7 spacing:
 * vkattn rounds bf16 to nearest even itself), against the reference on the
 * stored values.
 *
 * Recording contract: as for every vkattn *_record (see vkattn/matmul.h); a,
 * b and grad_c are read, the gradients asked for are written by
 * VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT with VK_ACCESS_SHADER_WRITE_BIT.
 * VKATTN_RUN_NOW and VKATTN_PREPARE in place of cmd run or prepare the call
 * (vkattn/context.h). No gradient asked for records nothing and succeeds.
 *
 * Results: VKATTN_ERROR_INVALID_ARGUMENT (NULL ctx, cmd, params or io; a zero
 * size; a missing or too-small tensor; a tensor A or B missing when a gradient
 * needs it; grad_bias without params->has_bias; a gradient tensor that is one
 * of the inputs or another gradient), VKATTN_ERROR_SIZE_OVERFLOW,
 * VKATTN_ERROR_DEVICE_LIMIT (as the forward's, and reductions beyond the
 * loop budget), VKATTN_ERROR_UNSUPPORTED (a tensor neither f32, f16 nor bf16),
 * Vulkan failures.
 * On an argument error nothing is recorded.
 * Thread safety: externally synchronized on cmd and the tensors; *_record (in
 * any mode) may run on several threads of one context (vkattn/context.h).
 */
#ifndef VKATTN_MATMUL_BACKWARD_H
#define VKATTN_MATMUL_BACKWARD_H

#include "vkattn/context.h"
#include "vkattn/op_params.h"
#include "vkattn/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkattn_matmul_backward_io {
    vkattn_tensor *a;         /* the forward's A; needed for grad_b */
    vkattn_tensor *b;         /* the forward's B; needed for grad_a */
    vkattn_tensor *grad_c;    /* dL/dC, in C's layout; read */
    vkattn_tensor *grad_a;    /* dL/dA in A's layout, written; NULL = not wanted */
    vkattn_tensor *grad_b;    /* dL/dB in B's layout, written; NULL = not wanted */
    vkattn_tensor *grad_bias; /* dL/dbias (n), written; NULL = not wanted */
} vkattn_matmul_backward_io;

VKATTN_API vkattn_result vkattn_matmul_backward_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                                       const vkattn_matmul_params *params,
                                                       const vkattn_matmul_backward_io *io);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_MATMUL_BACKWARD_H */
