/* One SDPA call's plan (shape/sdpa_plan.h). */
#include "shape/sdpa_plan.h"

#include <float.h>
#include <math.h>

#include "core/broadcast.h"
#include "core/check.h"
#include "core/dropout_host.h"
#include "core/error.h"

/* Counts of (B, H, Tq, Tv) operands stored with broadcast axes. */
static bool broadcast_count(const vka_sdpa_shape *s, vkattn_broadcast bc, uint64_t *n)
{
    return vka_bcast_count(bc, s->batch, s->heads, s->tq, s->tv, n);
}

static vkattn_result check_enums(struct vkattn_context *ctx, const char *caller,
                                 const vkattn_sdpa_params *p)
{
    const char *bad = (unsigned)p->mask.causal > VKATTN_CAUSAL_BOTTOM_RIGHT ? "mask.causal"
                      : (unsigned)p->mask.masked_row > VKATTN_MASKED_ROW_UNIFORM
                          ? "mask.masked_row"
                      : (unsigned)p->path > VKATTN_SDPA_UNFUSED ? "path"
                                                                : NULL;
    if (bad)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: params->%s is not a valid value",
                        caller, bad);
    return vka_check_dropout_rate(ctx, caller, "params->dropout.rate", p->dropout.rate);
}

/* Element counts, overflow-checked (the device's binding limit is the ops'
 * to add: ops/sdpa_shape.c). */
static vkattn_result count_operands(struct vkattn_context *ctx, const char *caller,
                                    const vkattn_mask_params *m, vka_sdpa_shape *s)
{
    const uint64_t qd[4] = {s->batch, s->heads, s->tq, s->dk};
    const uint64_t kd[4] = {s->batch, s->kv_heads, s->tv, s->dk};
    const uint64_t vd[4] = {s->batch, s->kv_heads, s->tv, s->dv};
    const uint64_t od[4] = {s->batch, s->heads, s->tq, s->dv};
    const uint64_t wd[4] = {s->batch, s->heads, s->tq, s->tv};
    const uint64_t md[2] = {s->batch, s->tv};
    if (!vka_product_u64(qd, 4, &s->q) || !vka_product_u64(kd, 4, &s->k) ||
        !vka_product_u64(vd, 4, &s->v) || !vka_product_u64(od, 4, &s->out) ||
        !vka_product_u64(wd, 4, &s->scores) || !vka_product_u64(md, 2, &s->value_mask) ||
        !broadcast_count(s, m->bias_broadcast, &s->bias) ||
        !broadcast_count(s, m->mask_broadcast, &s->mask))
        return vka_fail(ctx, VKATTN_ERROR_SIZE_OVERFLOW,
                        "%s: an operand's element count overflows 64 bits", caller);
    if (!m->has_bias)
        s->bias = 0;
    if (!m->has_value_mask)
        s->value_mask = 0;
    if (!m->has_mask)
        s->mask = 0;
    return VKATTN_SUCCESS;
}

vkattn_result vka_sdpa_plan(struct vkattn_context *ctx, const char *caller,
                            const vkattn_sdpa_params *p, vka_sdpa_shape *s)
{
    if (!p)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: params is NULL", caller);
    const char *zero = !p->batch ? "batch" : !p->tq ? "tq" : !p->tv ? "tv" : !p->dk ? "dk" : NULL;
    if (zero)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: params->%s is 0; must be >= 1",
                        caller, zero);
    if (!isfinite(p->scale))
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: params->scale is %g; must be finite",
                        caller, (double)p->scale);
    /* written so that NaN fails too; FLT_MAX keeps s / softcap finite */
    if (!(p->softcap >= 0.0f && p->softcap <= FLT_MAX))
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: params->softcap is %g; must be finite and >= 0 (0 = off)", caller,
                        (double)p->softcap);
    vkattn_result r = check_enums(ctx, caller, p);
    if (r != VKATTN_SUCCESS)
        return r;
    *s = (vka_sdpa_shape){.batch = p->batch, .heads = vka_default_u32(p->heads, 1), .tq = p->tq,
                      .tv = p->tv, .dk = p->dk, .dv = vka_default_u32(p->dv, p->dk)};
    s->kv_heads = vka_default_u32(p->kv_heads, s->heads);
    if (s->heads % s->kv_heads != 0)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: params->kv_heads is %u; must divide heads (%u)", caller, s->kv_heads,
                        s->heads);
    s->group = s->heads / s->kv_heads;
    /* 1/sqrt(dk) in double, rounded once to the f32 the kernels multiply by */
    s->scale = p->scale != 0.0f ? p->scale : (float)(1.0 / sqrt((double)s->dk));
    s->scale_log2 = vka_sdpa_scale_log2(p->scale, s->dk);
    s->drop = vka_dropout_active(&p->dropout);
    s->drop_threshold = s->drop ? vka_dropout_threshold(p->dropout.rate) : 0;
    s->drop_scale = s->drop ? vka_dropout_scale(p->dropout.rate) : 1.0f;
    if (!vka_window_fits(p->sliding_window, s->tq, s->tv))
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: params->sliding_window with tq + tv = %llu exceeds the kernels' "
                        "32-bit window arithmetic",
                        caller, (unsigned long long)s->tq + s->tv);
    s->window = vka_window_clamp(p->sliding_window, s->tq, s->tv);
    return count_operands(ctx, caller, &p->mask, s);
}

vka_sdpa_rows_kernel vka_sdpa_rows_kernel_for(const vkattn_sdpa_params *p, const vka_sdpa_shape *s)
{
    const vkattn_mask_params *m = &p->mask;
    if (p->path != VKATTN_SDPA_AUTO || p->return_weights || s->drop || s->tq > VKA_SDPA_FEW_ROWS ||
        m->has_bias || m->has_mask || s->dk > 256 || s->dv > 256 ||
        p->softcap > 3.0e38f) /* decode's bound on softcap (shape/decode_plan.c) */
        return VKA_SDPA_ROWS_FUSED;
    /* a window of Tq + Tv or more allows every key (vka_window_clamp) */
    const bool window = s->window != 0 && (uint64_t)s->window < (uint64_t)s->tq + s->tv;
    vka_sdpa_rows_kernel k = VKA_SDPA_ROWS_FUSED;
    if (m->causal == VKATTN_CAUSAL_BOTTOM_RIGHT ||
        (m->causal == VKATTN_CAUSAL_TOP_LEFT && s->tq == s->tv) ||
        (m->causal == VKATTN_CAUSAL_NONE && s->tq == 1 && !window))
        k = VKA_SDPA_ROWS_DECODE; /* with Tq = 1, "none" is bottom-right */
    else if (m->causal == VKATTN_CAUSAL_NONE && !window && !p->has_sinks &&
             (uint64_t)s->heads * s->tq <= UINT32_MAX)
        k = VKA_SDPA_ROWS_DECODE_FLAT; /* H * Tq heads: its sinks would index them */
    /* decode zeroes a row with no key; UNIFORM would spread it over all keys */
    const bool empty_rows = m->has_value_mask || (k == VKA_SDPA_ROWS_DECODE && s->tq > s->tv);
    if (empty_rows && m->masked_row != VKATTN_MASKED_ROW_ZERO && !p->has_sinks)
        return VKA_SDPA_ROWS_FUSED;
    return k;
}

float vka_sdpa_scale_log2(float scale, uint32_t dk)
{
    const double exact = scale != 0.0f ? (double)scale : 1.0 / sqrt((double)dk);
    return (float)(exact * 1.4426950408889634);
}
