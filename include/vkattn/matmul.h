/* vkattn/matmul.h - batched matmul on the GPU.
 *
 *   C[b,h] = alpha * op(A[b,h]) @ op(B[b,h]) (+ bias row)
 *
 * with the shapes and strides of vkattn_matmul_params (vkattn/op_params.h): two
 * batch levels with a stride per operand (0 broadcasts a matrix, as weights
 * are), a row stride per operand (views into wider tensors), transposes of A
 * and B, any M, N, K >= 1. Accumulates in fp32. The CPU reference is
 * vkattn_reference_matmul.
 *
 * Half precision: A, B, bias and C may each be f32, f16 or bf16 tensors
 * (vkattn/tensor.h), independently. 16-bit inputs are read exactly, sums are
 * always fp32 (a long K split over dispatches keeps fp32 partial sums in
 * scratch), and an f16 C is rounded once by the device's f32 -> f16
 * conversion. Bound, against the exact result of the stored inputs
 * (vkattn_reference_matmul), per output:
 *   |err| <= ulp16(|C|) + (K + 2) * 2^-23 * (|alpha| * sum_k |a||b| + |bias|)
 * ulp16(x) = the f16 spacing at x: 2^(floor(log2 x) - 10), 2^-24 below 2^-14
 * (one ulp, not half: Vulkan leaves the conversion's rounding mode to the
 * device). For an f32 C the ulp16 term is 2^-24 |C|. Devices without
 * storageBuffer16BitAccess (vkattn_context_info.storage_buffer_16bit false)
 * read and write halves packed in 32-bit words; results are within the same
 * bound. Devices that flush f16 subnormal inputs may differ by a further
 * 2^-14 |alpha| sum of the other operand's magnitudes over those inputs.
 * bf16 (any operand) always runs on the packed words, on every device; a
 * bf16 C is rounded once by vkattn's own code, to nearest even (a NaN stays
 * a quiet NaN), so its bound is half a bf16 spacing, not one:
 *   |err| <= 0.5 ulpbf16(|C| + E) + E,  E = (K + 2) * 2^-23 * (|alpha| * sum_k |a||b| + |bias|)
 * ulpbf16(x) = 2^(floor(log2 x) - 7), 2^-133 below 2^-126 (the f32 result
 * is within E of the exact one, and its magnitude at most |C| + E). The
 * cooperative-matrix kernels take f16 A and B only (bias and C may be bf16);
 * a bf16 A or B takes the other kernels.
 *
 * Recording contract (the same for every vkattn *_record):
 * - vkattn never begins, ends or submits `cmd`; it records dispatches and its
 *   own barriers into it. `cmd` must be in the recording state, outside a
 *   render pass, on a queue family with compute.
 * - Entry: writes made by the app to input tensors must be visible to
 *   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT / VK_ACCESS_SHADER_READ_BIT, and the
 *   app must be done reading or writing outputs, before the recorded work
 *   executes (or say what it did with vkattn_tensor_acquire). Work vkattn
 *   recorded earlier needs nothing, earlier submissions of the same command
 *   buffer included: vkattn tracks its own accesses per range of memory and
 *   records the barriers (replay contract in vkattn/tensor.h).
 * - Exit: outputs are written by VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT with
 *   VK_ACCESS_SHADER_WRITE_BIT; the app adds the barrier its next use needs
 *   (or records it with vkattn_tensor_release).
 * - Tensors must stay alive until the command buffer completes.
 * Given VKATTN_RUN_NOW or VKATTN_PREPARE in place of cmd, *_record runs the
 * call now or prepares it (vkattn/context.h).
 *
 * Results: VKATTN_ERROR_INVALID_ARGUMENT (NULL or too-small tensors, zero
 * sizes, strides that reach past a tensor), VKATTN_ERROR_SIZE_OVERFLOW,
 * VKATTN_ERROR_DEVICE_LIMIT (batch * heads above the device's workgroup-count
 * limit, offsets beyond 32 bits), Vulkan failures.
 * Thread safety: externally synchronized on cmd and the tensors; *_record (in
 * any mode) may run on several threads of one context (vkattn/context.h).
 */
#ifndef VKATTN_MATMUL_H
#define VKATTN_MATMUL_H

#include "vkattn/context.h"
#include "vkattn/op_params.h"
#include "vkattn/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkattn_matmul_io {
    vkattn_tensor *a;
    vkattn_tensor *b;
    vkattn_tensor *bias; /* n elements; required iff params->has_bias */
    vkattn_tensor *c;    /* written */
} vkattn_matmul_io;

VKATTN_API vkattn_result vkattn_matmul_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                              const vkattn_matmul_params *params,
                                              const vkattn_matmul_io *io);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_MATMUL_H */
