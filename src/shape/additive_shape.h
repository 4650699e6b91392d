/* The checks of one additive scoring call (vkattn/additive.h), shared by the
 * forward and the backward GPU ops so that both accept the same calls. Pure
 * C, no Vulkan header; ctx may be NULL. */
#ifndef VKA_SHAPE_ADDITIVE_SHAPE_H
#define VKA_SHAPE_ADDITIVE_SHAPE_H

#include <stdint.h>

#include "vkattn/op_params.h"
#include "vkattn/result.h"

struct vkattn_context;

/* Element counts of the operands: q (B, Tq, dim), k (B, Tv, dim) and the
 * scores (B, Tq, Tv). */
typedef struct vka_additive_sizes {
    uint64_t q, k, scores;
} vka_additive_sizes;

/* params present, every size >= 1, both scales finite; then each operand's
 * element count, which must fit 64 bits (SIZE_OVERFLOW) and the kernels'
 * 32-bit indexing (DEVICE_LIMIT). */
vkattn_result vka_additive_check(struct vkattn_context *ctx, const char *caller,
                                 const vkattn_additive_params *p, vka_additive_sizes *out);

#endif /* VKA_SHAPE_ADDITIVE_SHAPE_H */
