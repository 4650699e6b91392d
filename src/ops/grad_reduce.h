/* Internal op: sums of strided slices (shaders/grad_reduce.comp), the
 * reduction of the backward ops over broadcast axes: a bias's gradient (dC
 * summed over batch, heads and rows), a broadcast matmul operand's (per-matrix
 * gradients summed over the batch), the additive scale vector's. Deterministic:
 * each output is one invocation's sum in a fixed order, no atomics. */
#ifndef VKA_OPS_GRAD_REDUCE_H
#define VKA_OPS_GRAD_REDUCE_H

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

vkattn_result vka_grad_reduce_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                     const vka_grad_reduce *g, vkattn_tensor *in,
                                     vkattn_tensor *out);

#endif /* VKA_OPS_GRAD_REDUCE_H */
