/* One decode call's plan (shape/decode_plan.h). */
#include "shape/decode_plan.h"

#include <math.h>

#include "core/check.h"
#include "core/dropout_host.h"
#include "core/error.h"
#include "shape/sdpa_plan.h"

static vkattn_result check_sizes(struct vkattn_context *ctx, const char *caller,
                                 const vkattn_sdpa_decode_params *p)
{
    const char *zero = !p->batch ? "batch" : !p->heads ? "heads" : !p->tq ? "tq"
                       : !p->capacity ? "capacity" : !p->dk ? "dk" : NULL;
    if (zero)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: params->%s is 0; must be >= 1",
                        caller, zero);
    if (p->tq > VKATTN_DECODE_MAX_TQ)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: params->tq is %u; must be <= %u",
                        caller, p->tq, VKATTN_DECODE_MAX_TQ);
    const uint32_t kv_heads = vka_default_u32(p->kv_heads, p->heads);
    if (p->heads % kv_heads != 0)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: params->kv_heads is %u; must divide heads (%u)", caller, kv_heads,
                        p->heads);
    return VKATTN_SUCCESS;
}

/* Element counts, overflow-checked (the kernels' 32-bit indexing is the op's
 * to add). */
static vkattn_result count_operands(struct vkattn_context *ctx, const char *caller,
                                    bool has_value_mask, vka_decode_shape *s)
{
    const uint64_t qd[4] = {s->batch, s->heads, s->tq, s->dk};
    const uint64_t kd[4] = {s->batch, s->kv_heads, s->capacity, s->dk};
    const uint64_t vd[4] = {s->batch, s->kv_heads, s->capacity, s->dv};
    const uint64_t od[4] = {s->batch, s->heads, s->tq, s->dv};
    if (!vka_product_u64(qd, 4, &s->q) || !vka_product_u64(kd, 4, &s->k) ||
        !vka_product_u64(vd, 4, &s->v) || !vka_product_u64(od, 4, &s->out))
        return vka_fail(ctx, VKATTN_ERROR_SIZE_OVERFLOW,
                        "%s: an operand's element count overflows 64 bits", caller);
    s->value_mask = has_value_mask ? (uint64_t)s->batch * s->capacity : 0;
    return VKATTN_SUCCESS;
}

vkattn_result vka_decode_plan(struct vkattn_context *ctx, const char *caller,
                              const vkattn_sdpa_decode_params *p, vka_decode_shape *s)
{
    if (!p)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: params is NULL", caller);
    vkattn_result r = check_sizes(ctx, caller, p);
    if (r != VKATTN_SUCCESS)
        return r;
    if (!isfinite(p->scale))
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: params->scale is %g; must be finite", caller, (double)p->scale);
    if ((r = vka_check_dropout_rate(ctx, caller, "params->dropout.rate", p->dropout.rate)))
        return r;
    if (!vka_window_fits(p->sliding_window, p->tq, p->capacity))
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: params->sliding_window with tq + capacity = %llu exceeds the "
                        "kernels' 32-bit window arithmetic",
                        caller, (unsigned long long)p->tq + p->capacity);
    if (!(p->softcap >= 0.0f && p->softcap <= 3.0e38f))
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: params->softcap is %g; must be finite and >= 0 (0 = off)", caller,
                        (double)p->softcap);
    *s = (vka_decode_shape){
        .batch = p->batch, .heads = p->heads, .kv_heads = vka_default_u32(p->kv_heads, p->heads),
        .tq = p->tq, .capacity = p->capacity, .dk = p->dk, .dv = vka_default_u32(p->dv, p->dk),
        .drop = vka_dropout_active(&p->dropout),
        .window = vka_window_clamp(p->sliding_window, p->tq, p->capacity),
        .splits = p->num_splits,
        .softcap = p->softcap, .sinks = p->has_sinks,
    };
    s->group = s->heads / s->kv_heads;
    s->scale_log2 = vka_sdpa_scale_log2(p->scale, s->dk);
    s->drop_threshold = s->drop ? vka_dropout_threshold(p->dropout.rate) : 0;
    s->drop_scale = s->drop ? vka_dropout_scale(p->dropout.rate) : 1.0f;
    return count_operands(ctx, caller, p->has_value_mask, s);
}
