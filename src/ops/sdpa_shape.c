#include "ops/sdpa_shape.h"

#include "core/broadcast.h"
#include "core/check.h"
#include "core/error.h"
#include "vk/dispatch.h"
#include "vk/tensor.h"
#include "vk/view.h"

/* Each operand must fit one storage-buffer binding (and so 32-bit indexing:
 * the range itself is a uint32). */
static vkattn_result check_ranges(vkattn_context *ctx, const char *caller, const vka_sdpa_shape *s)
{
    const struct { const char *name; uint64_t n; } ops[] = {
        {"q (B, H, Tq, dk)", s->q},       {"k (B, Hkv, Tv, dk)", s->k},
        {"v (B, Hkv, Tv, dv)", s->v},     {"out (B, H, Tq, dv)", s->out},
        {"bias", s->bias},                {"value_mask (B, Tv)", s->value_mask},
        {"mask", s->mask},
    };
    const uint64_t range = vka_max_range(ctx);
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (ops[i].n > range / sizeof(float))
            return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                            "%s: %s has %llu elements; maxStorageBufferRange (%llu bytes) allows "
                            "%llu",
                            caller, ops[i].name, (unsigned long long)ops[i].n,
                            (unsigned long long)range, (unsigned long long)(range / sizeof(float)));
    return VKATTN_SUCCESS;
}

vkattn_result vka_sdpa_resolve(vkattn_context *ctx, const char *caller,
                               const vkattn_sdpa_params *p, vka_sdpa_shape *s)
{
    vkattn_result r = vka_sdpa_plan(ctx, caller, p, s);
    return r != VKATTN_SUCCESS ? r : check_ranges(ctx, caller, s);
}

vkattn_result vka_sdpa_check_flagged(vkattn_context *ctx, const char *caller, const char *what,
                                     const char *flag, bool set, const vkattn_tensor *t,
                                     uint64_t count)
{
    if (set && t && t->ctx == ctx && t->dtype != VKATTN_DTYPE_F32)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s is %s tensor; it must be f32 (masks, bias and the "
                        "log-sum-exp have no 16-bit form)",
                        caller, what, vka_dtype_a_name(t->dtype));
    if (set)
        return vka_tensor_check(ctx, t, count, caller, what);
    if (t)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is given but %s is false",
                        caller, what, flag);
    return VKATTN_SUCCESS;
}

vkattn_result vka_sdpa_check_masks(vkattn_context *ctx, const char *caller,
                                   const vkattn_sdpa_params *p, const vka_sdpa_shape *s,
                                   const vkattn_tensor *bias, const vkattn_tensor *value_mask,
                                   const vkattn_tensor *mask)
{
    const vkattn_mask_params *m = &p->mask;
    vkattn_result r;
    if ((r = vka_sdpa_check_flagged(ctx, caller, "io->bias", "params->mask.has_bias", m->has_bias,
                                    bias, s->bias)) ||
        (r = vka_sdpa_check_flagged(ctx, caller, "io->value_mask", "params->mask.has_value_mask",
                                    m->has_value_mask, value_mask, s->value_mask)))
        return r;
    return vka_sdpa_check_flagged(ctx, caller, "io->mask", "params->mask.has_mask", m->has_mask,
                                  mask, s->mask);
}

uint64_t vka_sdpa_bcast_count(const vka_sdpa_shape *s, vkattn_broadcast bc)
{
    uint64_t n;
    return vka_bcast_count(bc, s->batch, s->heads, s->tq, s->tv, &n) ? n : UINT64_MAX;
}

bool vka_sdpa_masks_fit_u32(const vka_sdpa_shape *s, const vkattn_mask_params *m)
{
    if (vka_count4(s->batch, 1, 1, s->tv) > UINT32_MAX)
        return false;
    if (m->has_mask && vka_sdpa_bcast_count(s, m->mask_broadcast) > UINT32_MAX)
        return false;
    return !m->has_bias || vka_sdpa_bcast_count(s, m->bias_broadcast) <= UINT32_MAX;
}

void vka_sdpa_bcast_strides(const vka_sdpa_shape *s, vkattn_broadcast bc, uint32_t out[3])
{
    uint64_t st[3];
    vka_bcast_strides(bc, s->heads, s->tq, s->tv, st);
    for (int a = 0; a < 3; a++)
        out[a] = (uint32_t)st[a];
}

vkattn_result vka_sdpa_choose_fused(vkattn_context *ctx, const char *caller,
                                    const vkattn_sdpa_params *p, const vka_sdpa_shape *s,
                                    vka_fused_check check, bool wanted, const char *kernel,
                                    bool *fused)
{
    const char *why = NULL;
    vkattn_result code;
    *fused = false;
    switch (p->path) {
    case VKATTN_SDPA_UNFUSED:
        return VKATTN_SUCCESS;
    case VKATTN_SDPA_AUTO:
        *fused = wanted && check(ctx, s, p, NULL) == VKATTN_SUCCESS;
        return VKATTN_SUCCESS;
    case VKATTN_SDPA_FUSED:
        if ((code = check(ctx, s, p, &why)) != VKATTN_SUCCESS)
            return vka_fail(ctx, code,
                            "%s: params->path is VKATTN_SDPA_FUSED but %s cannot serve this "
                            "call: %s",
                            caller, kernel, why ? why : "unsupported");
        *fused = true;
        return VKATTN_SUCCESS;
    }
    return VKATTN_ERROR_INVALID_ARGUMENT; /* unreachable: vka_sdpa_resolve ran */
}
