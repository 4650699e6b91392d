/* What one decode call (vkattn/decode.h) means, resolved once: params
 * checked, defaults filled in, every operand counted. The GPU op
 * (ops/decode.c adds the cache, the kernels' widths and indexing, and its
 * tiles) and the CPU reference (reference/decode.c adds its address space)
 * both start from this plan, so neither re-derives a default or accepts what
 * the other refuses. Pure C, no Vulkan; ctx may be NULL (the reference
 * reports through vkattn_last_error()). */
#ifndef VKA_SHAPE_DECODE_PLAN_H
#define VKA_SHAPE_DECODE_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "vkattn/op_params.h"
#include "vkattn/result.h"

struct vkattn_context;

/* The params with every default resolved, and element counts of each operand. */
typedef struct vka_decode_shape {
    uint32_t batch, heads, kv_heads, group, tq, capacity, dk, dv;
    bool drop;       /* dropout changes anything: training && rate > 0 */
    uint32_t window; /* sliding window as the kernels read it (vka_window_clamp) */
    uint32_t splits; /* params->num_splits: 0 = the op's choice */
    float softcap;   /* 0 = off */
    bool sinks;      /* params->has_sinks: io->sinks (H) */
    /* what the kernels read (as vka_sdpa_shape's): the scale times log2(e),
     * the dropout threshold and kept-value scale (0 and 1 where !drop) */
    float scale_log2;
    uint32_t drop_threshold;
    float drop_scale;
    uint64_t q, k, v, out, value_mask; /* value_mask 0 without has_value_mask */
} vka_decode_shape;

/* *s from p: p present; batch, heads, tq, capacity and dk >= 1; tq <=
 * VKATTN_DECODE_MAX_TQ; heads a multiple of kv_heads (0 = heads); scale
 * finite; softcap finite and >= 0; dropout rate in [0, 1] (all
 * INVALID_ARGUMENT); the window within
 * the kernels' 32-bit arithmetic (DEVICE_LIMIT, as vka_sdpa_plan: no device
 * lifts it, so the reference refuses it too); dv 0 = dk; every operand's
 * element count without overflowing 64 bits (SIZE_OVERFLOW). The limits of
 * one implementation (the kernels' widths and 32-bit indexing, the host's
 * address space) are the caller's to add. Messages start with `caller` and
 * name the field ("params->kv_heads"). */
vkattn_result vka_decode_plan(struct vkattn_context *ctx, const char *caller,
                              const vkattn_sdpa_decode_params *p, vka_decode_shape *s);

#endif /* VKA_SHAPE_DECODE_PLAN_H */
