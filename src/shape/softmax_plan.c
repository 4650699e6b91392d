/* One masked softmax call's plan (shape/softmax_plan.h). */
#include "shape/softmax_plan.h"

#include <math.h>

#include "core/check.h"
#include "core/error.h"

static vkattn_result check_params(struct vkattn_context *ctx, const char *caller,
                                  const vkattn_softmax_params *p)
{
    if (!p)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: params is NULL", caller);
    const char *zero = !p->batch ? "batch" : !p->tq ? "tq" : !p->tv ? "tv" : NULL;
    if (zero)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: params->%s is 0; must be >= 1",
                        caller, zero);
    if (!isfinite(p->scale))
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: params->scale is %g; must be finite", caller, (double)p->scale);
    const vkattn_mask_params *m = &p->mask;
    if ((unsigned)m->causal > VKATTN_CAUSAL_BOTTOM_RIGHT)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: params->mask.causal is %d; must be a vkattn_causal value", caller,
                        (int)m->causal);
    if ((unsigned)m->masked_row > VKATTN_MASKED_ROW_UNIFORM)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: params->mask.masked_row is %d; must be a vkattn_masked_row value",
                        caller, (int)m->masked_row);
    if (!vka_window_fits(p->sliding_window, p->tq, p->tv))
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: params->sliding_window with tq + tv = %llu exceeds the kernels' "
                        "32-bit window arithmetic",
                        caller, (unsigned long long)p->tq + p->tv);
    return VKATTN_SUCCESS;
}

vkattn_result vka_softmax_shape_plan(struct vkattn_context *ctx, const char *caller,
                                     const vkattn_softmax_params *p, const char *what,
                                     vka_softmax_shape *s)
{
    vkattn_result r = check_params(ctx, caller, p);
    if (r != VKATTN_SUCCESS)
        return r;
    *s = (vka_softmax_shape){.heads = vka_default_u32(p->heads, 1),
                             .scale = vka_default_f32(p->scale, 1.0f),
                             .window = vka_window_clamp(p->sliding_window, p->tq, p->tv)};
    const uint64_t dims[4] = {p->batch, s->heads, p->tq, p->tv};
    if (!vka_product_u64(dims, 4, &s->total))
        return vka_fail(ctx, VKATTN_ERROR_SIZE_OVERFLOW,
                        "%s: %s (%u x %u x %u x %u) overflow 64 bits", caller, what, p->batch,
                        s->heads, p->tq, p->tv);
    return VKATTN_SUCCESS;
}
