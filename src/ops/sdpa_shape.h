/* The resolved shape of one SDPA call (vkattn/sdpa.h), shared by the forward
 * (sdpa.c) and the backward (sdpa_backward.c) so that both accept the same
 * params and count their operands alike. */
#ifndef VKA_OPS_SDPA_SHAPE_H
#define VKA_OPS_SDPA_SHAPE_H

#include <stdbool.h>
#include <stdint.h>

#include "vkattn/context.h"
#include "vkattn/tensor.h"
#include "vkattn/op_params.h"

/* The params with every default resolved, and element counts of each operand. */
typedef struct vka_sdpa_shape {
    uint32_t batch, heads, kv_heads, group, tq, tv, dk, dv;
    float scale;
    bool drop; /* dropout changes anything: training && rate > 0 */
    uint32_t window; /* sliding window as the kernels read it (vka_window_clamp) */
    uint64_t q, k, v, out, scores, bias, value_mask, mask;
} vka_sdpa_shape;

/* *s from p: params present, sizes >= 1, scale finite, enums and dropout rate
 * valid, heads a multiple of kv_heads, defaults resolved; every operand's
 * element count without overflow (SIZE_OVERFLOW) and within one storage-buffer
 * binding (DEVICE_LIMIT). Counts of absent bias, value mask and mask are 0. */
vkattn_result vka_sdpa_resolve(vkattn_context *ctx, const char *caller,
                               const vkattn_sdpa_params *p, vka_sdpa_shape *s);

/* An optional operand (bias, masks, lse, weights): one the flags ask for
 * (`set`) must be there, f32 and at least `count` elements; one they do not
 * ask for must be NULL, so a forgotten flag is not silently ignored. An f16
 * one is INVALID_ARGUMENT: these operands have no f16 form. `flag` names the
 * params field in messages. */
vkattn_result vka_sdpa_check_flagged(vkattn_context *ctx, const char *caller, const char *what,
                                     const char *flag, bool set, const vkattn_tensor *t,
                                     uint64_t count);

/* The three mask operands, each by vka_sdpa_check_flagged against p->mask's
 * flags and s's counts. */
vkattn_result vka_sdpa_check_masks(vkattn_context *ctx, const char *caller,
                                   const vkattn_sdpa_params *p, const vka_sdpa_shape *s,
                                   const vkattn_tensor *bias, const vkattn_tensor *value_mask,
                                   const vkattn_tensor *mask);

#endif /* VKA_OPS_SDPA_SHAPE_H */
