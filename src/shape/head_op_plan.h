/* What one public head op call (vkattn/head_op.h) means, resolved once:
 * the op, the sizes, epsilon and the rotary embedding with their defaults,
 * the element counts. The GPU op (ops/head_op.c) and the CPU reference
 * (reference/head_op.c) both read this plan, so they refuse the same calls
 * with the same messages. Pure C, no Vulkan; ctx may be NULL. */
#ifndef VKA_SHAPE_HEAD_OP_PLAN_H
#define VKA_SHAPE_HEAD_OP_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "vkattn/op_params.h"
#include "vkattn/result.h"

struct vkattn_context;

typedef struct vka_head_op_plan {
    vkattn_head_op op;
    uint32_t batch, heads, seq, dim;
    bool norm;                /* RMS_NORM or RMS_NORM_BACKWARD: weight, epsilon */
    bool backward;            /* RMS_NORM_BACKWARD: grad_out, grad_x, grad_weight */
    bool rope;                /* ROPE or ROPE_INVERSE: positions allowed */
    bool inverse;             /* ROPE_INVERSE */
    float eps;                /* resolved (norm ops) */
    vkattn_rope_params rope_params; /* resolved (rotations) */
    uint64_t n;               /* elements of x: batch * heads * seq * dim */
    uint64_t n_positions;     /* batch * seq */
} vka_head_op_plan;

/* *s from p: p present, a known op, sizes >= 1, epsilon (norm ops) and rope
 * (rotations) as the layers check them, "params->..." named; the counts
 * without overflowing 64 bits (SIZE_OVERFLOW). */
vkattn_result vka_head_op_plan_make(struct vkattn_context *ctx, const char *caller,
                                    const vkattn_head_op_params *p, vka_head_op_plan *s);

#endif /* VKA_SHAPE_HEAD_OP_PLAN_H */
