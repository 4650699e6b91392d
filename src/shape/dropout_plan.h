/* What one dropout call (vkattn/dropout.h) means, resolved once: params
 * checked, heads defaulted, the tensor counted, and the Philox stream's host
 * numbers (core/dropout_host.h) formed. The GPU op (ops/dropout.c adds the
 * kernel's 32-bit indexing) and the CPU reference (reference/dropout.c adds
 * the host's address space) start from this plan, so they refuse the same
 * params with the same message and draw with the same threshold and scale.
 * Pure C, no Vulkan; ctx may be NULL (the reference reports through
 * vkattn_last_error()). */
#ifndef VKA_SHAPE_DROPOUT_PLAN_H
#define VKA_SHAPE_DROPOUT_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "vkattn/op_params.h"
#include "vkattn/result.h"

struct vkattn_context;

typedef struct vka_dropout_shape {
    uint32_t heads;     /* params->heads, 0 = 1 */
    uint64_t count;     /* B * H * Tq * Tv */
    bool active;        /* dropout changes anything: training && rate > 0 */
    uint32_t threshold; /* vka_dropout_threshold(rate), read only where active */
    float scale;        /* vka_dropout_scale(rate), read only where active */
} vka_dropout_shape;

/* *s from p: p present; batch, tq, tv >= 1; dropout.rate in [0, 1], checked
 * even when not training (INVALID_ARGUMENT); the count within 64 bits
 * (SIZE_OVERFLOW). Messages start with `caller` and name the field
 * ("params->dropout.rate"). */
vkattn_result vka_dropout_plan(struct vkattn_context *ctx, const char *caller,
                               const vkattn_dropout_op_params *p, vka_dropout_shape *s);

#endif /* VKA_SHAPE_DROPOUT_PLAN_H */
