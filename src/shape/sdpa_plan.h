/* What one SDPA call (vkattn/sdpa.h) means, resolved once: params checked,
 * defaults filled in, every operand counted. The forward and the backward on
 * the GPU (ops/sdpa_shape.c adds the device's limits), the fused kernels they
 * choose, and the CPU references all read this one plan, so none of them
 * re-derives a default or accepts what another refuses. Pure C, no Vulkan;
 * ctx may be NULL (the references report through vkattn_last_error()). */
#ifndef VKA_SHAPE_SDPA_PLAN_H
#define VKA_SHAPE_SDPA_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "vkattn/op_params.h"
#include "vkattn/result.h"

struct vkattn_context;

/* The params with every default resolved, and element counts of each operand. */
typedef struct vka_sdpa_shape {
    uint32_t batch, heads, kv_heads, group, tq, tv, dk, dv;
    float scale;     /* the f32 the kernels multiply by (1/sqrt(dk) rounded once) */
    bool drop;       /* dropout changes anything: training && rate > 0 */
    uint32_t window; /* sliding window as the kernels read it (vka_window_clamp) */
    /* what the fused kernels read, so none re-derives it from the params:
     * vka_sdpa_scale_log2, and the dropout threshold and kept-value scale
     * (0 and 1 where !drop) */
    float scale_log2;
    uint32_t drop_threshold;
    float drop_scale;
    uint64_t q, k, v, out, scores, bias, value_mask, mask;
} vka_sdpa_shape;

/* *s from p: p present, sizes >= 1, scale finite, enums and dropout rate
 * valid, heads a multiple of kv_heads, the window within the kernels' 32-bit
 * arithmetic (DEVICE_LIMIT), defaults resolved; every operand's element count
 * without overflowing 64 bits (SIZE_OVERFLOW). Counts of an absent bias, value
 * mask and mask are 0. Messages start with `caller` and name the field
 * ("params->kv_heads"). */
vkattn_result vka_sdpa_plan(struct vkattn_context *ctx, const char *caller,
                            const vkattn_sdpa_params *p, vka_sdpa_shape *s);

/* Few query rows (issue 34): the split-K decode kernel (ops/decode.c) beats
 * the fused kernel there, so AUTO hands it the calls whose meaning it keeps
 * exactly. VKA_SDPA_FEW_ROWS bounds Tq (docs/PERFORMANCE.md measures it). */
#define VKA_SDPA_FEW_ROWS 8u
typedef enum vka_sdpa_rows_kernel {
    VKA_SDPA_ROWS_FUSED = 0, /* the fused kernel (or the chained path) as before */
    VKA_SDPA_ROWS_DECODE,    /* decode with Tq rows, bottom-right causal */
    VKA_SDPA_ROWS_DECODE_FLAT, /* decode of (B, H * Tq, 1) rows: no causal mask */
} vka_sdpa_rows_kernel;

/* Which kernel serves an AUTO call without weights with Tq <= VKA_SDPA_FEW_ROWS:
 * the decode kernel where no dropout, bias or general mask is asked for, dk
 * and dv fit it (<= 256), the softcap is within decode's bound, the causal
 * mask and window are ones it forms (bottom-right, or top-left with Tq ==
 * Tv, with any window; or none, with no window, and for Tq > 1 the flat
 * form, without sinks), and a row left with no key would be zeros either
 * way (masked_row ZERO, sinks, or no such row). The caller adds what the
 * tensors and the device say (ops/sdpa_few_rows.h). */
vka_sdpa_rows_kernel vka_sdpa_rows_kernel_for(const vkattn_sdpa_params *p, const vka_sdpa_shape *s);

/* What a fused kernel multiplies the scores by before exp2: the scale (0:
 * 1/sqrt(dk)) times log2(e), formed in double and rounded once to f32. */
float vka_sdpa_scale_log2(float scale, uint32_t dk);

#endif /* VKA_SHAPE_SDPA_PLAN_H */
