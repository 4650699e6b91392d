/* vkattn/heads.h - splitting features into attention heads and merging them back.
 *
 *   split: in (B, T, H*d) -> out (B, H, T, d)   out[b,h,t,:] = in[b,t,h*d : (h+1)*d]
 *   merge: in (B, H, T, d) -> out (B, T, H*d)   the inverse
 *
 * with B, T, H, d from vkattn_heads_params (vkattn/op_params.h). Both are pure
 * permutation copies: the output is bit-equal to the input's elements, and a
 * split followed by a merge gives back the input exactly. The CPU references
 * are vkattn_reference_heads_split and vkattn_reference_heads_merge.
 *
 * Half precision: in and out may each be f32, f16 or bf16 (the backwards
 * too). A copy into the same type or into f32 is exact; into f16 from another
 * type it rounds each element once by the device's conversion (within
 * ulp16 = one f16 ulp of the typed reference vkattn_reference_heads_split /
 * _merge with an f32 out; equal to it with an f16 out where the device rounds
 * to nearest even), into bf16 from another type by vkattn's rounding to
 * nearest even (within half a bf16 ulp, 2^-8 of its binade; equal to the
 * typed reference with a bf16 out). With storageBuffer16BitAccess the kernel
 * reads and writes f16 as float16_t; bf16, or f16 without it, passes through
 * f32 scratch.
 *
 * Often no copy is needed at all: matmul reads and writes strided views
 * (vkattn_matrix_layout's head_stride and row_stride), so a projection can
 * read the heads of a (B, T, H*d) tensor in place (head stride d, row stride
 * H*d) and write its result straight into either layout. Layers use those views
 * where a stride does the job; these ops exist for the kernels that need packed
 * heads (B, H, T, d), such as a fused attention kernel, and for apps whose data
 * comes in the other layout.
 *
 * Recording contract: as for every vkattn *_record (see vkattn/matmul.h); `in`
 * is read, `out` is written by VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT with
 * VK_ACCESS_SHADER_WRITE_BIT. *_record given VKATTN_RUN_NOW in
 * place of cmd runs it now (vkattn/context.h).
 *
 * Results: VKATTN_ERROR_INVALID_ARGUMENT (NULL ctx, cmd, params or io; a zero
 * size; a missing or too-small tensor; in == out, since a permutation cannot
 * run in place), VKATTN_ERROR_SIZE_OVERFLOW, VKATTN_ERROR_DEVICE_LIMIT (a tensor
 * beyond 32-bit indexing or maxStorageBufferRange), VKATTN_ERROR_UNSUPPORTED (the
 * device's workgroup limits are below the Vulkan minimum), Vulkan failures.
 * Thread safety: externally synchronized on cmd and the tensors; *_record (in
 * any mode) may run on several threads of one context (vkattn/context.h).
 */
#ifndef VKATTN_HEADS_H
#define VKATTN_HEADS_H

#include "vkattn/context.h"
#include "vkattn/op_params.h"
#include "vkattn/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkattn_heads_io {
    vkattn_tensor *in;  /* split: (B, T, H*d); merge: (B, H, T, d) */
    vkattn_tensor *out; /* written; split: (B, H, T, d); merge: (B, T, H*d) */
} vkattn_heads_io;

VKATTN_API vkattn_result vkattn_heads_split_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                                   const vkattn_heads_params *params,
                                                   const vkattn_heads_io *io);
VKATTN_API vkattn_result vkattn_heads_merge_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                                   const vkattn_heads_params *params,
                                                   const vkattn_heads_io *io);

/* Backward of the head split and merge: each is the other's permutation on
 * the gradient, so the result is bit-equal to the gradient's elements.
 *   split backward: grad_out (B, H, T, d) -> grad_in (B, T, H*d)   (a merge)
 *   merge backward: grad_out (B, T, H*d) -> grad_in (B, H, T, d)   (a split)
 * The CPU references are vkattn_reference_heads_merge and
 * vkattn_reference_heads_split on the gradient. Checks, results (grad_in ==
 * grad_out is INVALID_ARGUMENT), recording contract and thread safety as the
 * forward's. */
typedef struct vkattn_heads_backward_io {
    vkattn_tensor *grad_out; /* dL/d(forward's out), read */
    vkattn_tensor *grad_in;  /* dL/d(forward's in), written */
} vkattn_heads_backward_io;

VKATTN_API vkattn_result vkattn_heads_split_backward_record(vkattn_context *ctx,
                                                            VkCommandBuffer cmd,
                                                            const vkattn_heads_params *params,
                                                            const vkattn_heads_backward_io *io);
VKATTN_API vkattn_result vkattn_heads_merge_backward_record(vkattn_context *ctx,
                                                            VkCommandBuffer cmd,
                                                            const vkattn_heads_params *params,
                                                            const vkattn_heads_backward_io *io);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_HEADS_H */
