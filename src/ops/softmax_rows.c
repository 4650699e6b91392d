#include "ops/softmax_rows.h"

#include <math.h>

#include "core/check.h"
#include "core/error.h"
#include "vk/context.h"
#include "vk/dispatch.h"

vkattn_result vka_softmax_check_params(vkattn_context *ctx, const char *caller,
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
    return VKATTN_SUCCESS;
}

vkattn_result vka_softmax_spread_groups(vkattn_context *ctx, const char *caller, uint64_t rows,
                                        uint32_t rows_per_group, uint32_t groups[3])
{
    const uint64_t n = vka_div_up(rows, rows_per_group);
    const uint64_t gx = n < ctx->info.max_workgroup_count[0] ? n : ctx->info.max_workgroup_count[0];
    const uint64_t gy = vka_div_up(n, gx);
    if (gy > ctx->info.max_workgroup_count[1] || gx * gy * rows_per_group > UINT32_MAX)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: %llu rows (batch * heads * tq) exceed the device's workgroup counts",
                        caller, (unsigned long long)rows);
    groups[0] = (uint32_t)gx, groups[1] = (uint32_t)gy, groups[2] = 1;
    return VKATTN_SUCCESS;
}
