/* One dropout call's plan (shape/dropout_plan.h). */
#include "shape/dropout_plan.h"

#include "core/check.h"
#include "core/dropout_host.h"
#include "core/error.h"

vkattn_result vka_dropout_plan(struct vkattn_context *ctx, const char *caller,
                               const vkattn_dropout_op_params *p, vka_dropout_shape *s)
{
    if (!p)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: params is NULL", caller);
    const char *zero = !p->batch ? "batch" : !p->tq ? "tq" : !p->tv ? "tv" : NULL;
    if (zero)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: params->%s is 0; must be >= 1",
                        caller, zero);
    vkattn_result r = vka_check_dropout_rate(ctx, caller, "params->dropout.rate", p->dropout.rate);
    if (r != VKATTN_SUCCESS)
        return r;
    *s = (vka_dropout_shape){.heads = vka_default_u32(p->heads, 1),
                             .active = vka_dropout_active(&p->dropout),
                             .threshold = vka_dropout_threshold(p->dropout.rate),
                             .scale = vka_dropout_scale(p->dropout.rate)};
    const uint64_t dims[4] = {p->batch, s->heads, p->tq, p->tv};
    if (!vka_product_u64(dims, 4, &s->count))
        return vka_fail(ctx, VKATTN_ERROR_SIZE_OVERFLOW,
                        "%s: the tensor (B, H, Tq, Tv) overflows 64 bits", caller);
    return VKATTN_SUCCESS;
}
