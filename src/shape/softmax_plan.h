/* What one masked softmax call (vkattn/softmax.h) means, resolved once:
 * params checked, defaults filled in, the scores counted. The GPU forward
 * and backward (ops/softmax_rows.c adds the kernels' indexing) and the CPU
 * references (reference/softmax.c adds the host's address space) start from
 * this plan, so they refuse the same params with the same message and none
 * re-derives the scale or the window. Pure C, no Vulkan; ctx may be NULL (the
 * references report through vkattn_last_error()). */
#ifndef VKA_SHAPE_SOFTMAX_PLAN_H
#define VKA_SHAPE_SOFTMAX_PLAN_H

#include <stdint.h>

#include "vkattn/op_params.h"
#include "vkattn/result.h"

struct vkattn_context;

typedef struct vka_softmax_shape {
    uint32_t heads;  /* params->heads, 0 = 1 */
    uint64_t total;  /* B * H * Tq * Tv */
    float scale;     /* params->scale, 0 = 1 */
    uint32_t window; /* sliding window as the kernels read it (vka_window_clamp) */
} vka_softmax_shape;

/* *s from p: p present; batch, tq, tv >= 1; scale finite; causal and
 * masked_row values of their enums (INVALID_ARGUMENT); the window within the
 * kernels' 32-bit arithmetic (DEVICE_LIMIT: no device lifts it, so the
 * references refuse it too); the count of `what` ("scores", "weights")
 * within 64 bits (SIZE_OVERFLOW). Messages start with `caller` and name the
 * field ("params->tv"). */
vkattn_result vka_softmax_shape_plan(struct vkattn_context *ctx, const char *caller,
                                     const vkattn_softmax_params *p, const char *what,
                                     vka_softmax_shape *s);

#endif /* VKA_SHAPE_SOFTMAX_PLAN_H */
