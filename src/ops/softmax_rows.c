#include "ops/softmax_rows.h"

#include <stdio.h>

#include "core/broadcast.h"
#include "core/check.h"
#include "core/error.h"
#include "vk/dispatch.h"
#include "vk/tensor.h"
#include "vk/view.h"
#include "ops/half_stage.h"

vkattn_result vka_softmax_plan(vkattn_context *ctx, const char *caller,
                               const vkattn_softmax_params *p, const char *what,
                               uint64_t max_total, vka_softmax_dims *d)
{
    *d = (vka_softmax_dims){0};
    vkattn_result r = vka_softmax_shape_plan(ctx, caller, p, what, &d->plan);
    if (r != VKATTN_SUCCESS)
        return r;
    if (d->plan.total > max_total)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: %s (%llu elements) do not fit the kernel's 32-bit indexing", caller,
                        what, (unsigned long long)d->plan.total);
    return VKATTN_SUCCESS;
}

vkattn_result vka_softmax_spread_groups(vkattn_context *ctx, const char *caller, uint64_t rows,
                                        uint32_t rows_per_group, uint32_t groups[3])
{
    const uint64_t n = vka_div_up(rows, rows_per_group);
    const uint64_t gx = n < vka_info(ctx)->max_workgroup_count[0] ? n : vka_info(ctx)->max_workgroup_count[0];
    const uint64_t gy = vka_div_up(n, gx);
    if (gy > vka_info(ctx)->max_workgroup_count[1] || gx * gy * rows_per_group > UINT32_MAX)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: %llu rows (batch * heads * tq) exceed the device's workgroup counts",
                        caller, (unsigned long long)rows);
    groups[0] = (uint32_t)gx, groups[1] = (uint32_t)gy, groups[2] = 1;
    return VKATTN_SUCCESS;
}

/* One optional operand: see vka_softmax_check_mask_operands. */
static vkattn_result check_operand(vkattn_context *ctx, const char *caller, const char *name,
                                   const char *flag, bool set, const vkattn_tensor *t,
                                   uint64_t count, bool may_be_f16, const vkattn_tensor *out,
                                   const char *out_what, const char *in_place_what)
{
    if (!set)
        return t ? vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                            "%s: io->%s is given but params->%s is false", caller, name, flag)
                 : VKATTN_SUCCESS;
    if (!t)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->%s is NULL but params->%s is set", caller, name, flag);
    char what[32];
    snprintf(what, sizeof what, "io->%s", name);
    vkattn_result r = may_be_f16 ? VKATTN_SUCCESS : vka_f16_require_f32(ctx, t, caller, what);
    if (r == VKATTN_SUCCESS)
        r = vka_tensor_check_types(ctx, t, count, caller, what,
                                   may_be_f16 ? VKA_DTYPES_FLOAT
                                              : VKA_DTYPE_BIT(VKATTN_DTYPE_F32));
    if (r != VKATTN_SUCCESS)
        return r;
    if (t == out)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s must not be io->%s (only %s may be written in place)", caller,
                        out_what, name, in_place_what);
    if (count > UINT32_MAX)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: io->%s (%llu elements) does not fit the kernel's 32-bit indexing",
                        caller, name, (unsigned long long)count);
    return VKATTN_SUCCESS;
}

vkattn_result vka_softmax_check_mask_operands(vkattn_context *ctx, const char *caller,
                                              const vkattn_softmax_params *p,
                                              vka_softmax_dims *d, const vkattn_tensor *bias,
                                              const vkattn_tensor *value_mask,
                                              const vkattn_tensor *mask, const vkattn_tensor *out,
                                              const char *out_what, const char *in_place_what,
                                              bool bias_f16)
{
    const vkattn_mask_params *m = &p->mask;
    /* no more than the scores, so neither count overflows */
    uint64_t bias_n = 0, mask_n = 0;
    vka_bcast_count(m->bias_broadcast, p->batch, d->plan.heads, p->tq, p->tv, &bias_n);
    vka_bcast_count(m->mask_broadcast, p->batch, d->plan.heads, p->tq, p->tv, &mask_n);
    vka_bcast_strides(m->bias_broadcast, d->plan.heads, p->tq, p->tv, d->bias_s);
    vka_bcast_strides(m->mask_broadcast, d->plan.heads, p->tq, p->tv, d->mask_s);
    vkattn_result r;
    if ((r = check_operand(ctx, caller, "bias", "mask.has_bias", m->has_bias, bias, bias_n,
                           bias_f16, out, out_what, in_place_what)) ||
        (r = check_operand(ctx, caller, "value_mask", "mask.has_value_mask", m->has_value_mask,
                           value_mask, (uint64_t)p->batch * p->tv, false, out, out_what,
                           in_place_what)))
        return r;
    return check_operand(ctx, caller, "mask", "mask.has_mask", m->has_mask, mask, mask_n, false,
                         out, out_what, in_place_what);
}
