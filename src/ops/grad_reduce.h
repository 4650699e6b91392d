/* Internal op: sums of strided slices (shaders/grad_reduce.comp), the
 * reduction of the backward ops over broadcast axes: a bias's gradient (dC
 * summed over batch, heads and rows), a broadcast matmul operand's (per-matrix
 * gradients summed over the batch), the additive scale vector's. Deterministic:
 * each output is one invocation's sum in a fixed order, no atomics. */
#ifndef VKA_OPS_GRAD_REDUCE_H
#define VKA_OPS_GRAD_REDUCE_H

#include <stdbool.h>
#include <stdint.h>

#include "vkattn/context.h"
#include "vkattn/tensor.h"

/* out[g*out_g + r*out_row + c] = alpha * sum_{i<n[0], j<n[1], l<n[2]}
 *     in[g*in_g + r*in_row + c + i*s[0] + j*s[1] + l*s[2]]
 * for g < groups, r < rows, c < cols. All indices must fit 32 bits (the
 * caller has checked the tensors' extents); in and out are distinct. */
typedef struct vka_grad_reduce {
    uint32_t groups, rows, cols;
    uint64_t out_g, out_row, in_g, in_row;
    uint64_t n[3], s[3];
    float alpha;
} vka_grad_reduce;

/* Checks the sizes against the kernel's 32-bit indexing and the loop budget
 * (VKATTN_ERROR_DEVICE_LIMIT); records nothing. */
vkattn_result vka_grad_reduce_check(vkattn_context *ctx, const char *caller,
                                    const vka_grad_reduce *g);

/* The reduction between in and out, each f32 or f16: an f16 input widened
 * exactly, f32 sums, an f16 output rounded once from them. f16 needs 16-bit
 * storage, and bf16 is never read here (VKATTN_ERROR_UNSUPPORTED;
 * vka_grad_reduce_record_any stages instead). */
vkattn_result vka_grad_reduce_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                     const vka_grad_reduce *g, vkattn_tensor *in,
                                     vkattn_tensor *out);

/* Whether vka_grad_reduce_record_any stages (vka_path16_of's PACKED: a bf16
 * tensor, or f16 without 16-bit storage): the caller then records through
 * vka_f16_record (run dry first). */
bool vka_grad_reduce_stages(vkattn_context *ctx, const vkattn_tensor *in,
                            const vkattn_tensor *out);

/* vka_grad_reduce_record on any device and type: where it stages, a 16-bit
 * in is read through an exact f32 copy of its first in_count elements and a
 * 16-bit out gets the f32 sums rounded once (ops/half_stage.h); the same values.
 * `out_partial`: the reduction writes only some of out's first out_count
 * elements (a strided view), the rest stay. */
vkattn_result vka_grad_reduce_record_any(vkattn_context *ctx, VkCommandBuffer cmd,
                                         const char *caller, const vka_grad_reduce *g,
                                         vkattn_tensor *in, uint64_t in_count,
                                         vkattn_tensor *out, uint64_t out_count,
                                         bool out_partial);

#endif /* VKA_OPS_GRAD_REDUCE_H */
