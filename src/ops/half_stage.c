/* f16 tensors of the building-block ops through f32 scratch (see half_stage.h). */
#include "ops/half_stage.h"

#include "core/dtype.h"
#include "core/error.h"
#include "ops/half_convert.h"
#include "vk/prepare.h"
#include "vk/tensor.h"
#include "vk/view.h"

vka_path16 vka_path16_of(const vkattn_context *ctx, const vkattn_tensor *const *ts, size_t n)
{
    bool any16 = false, views = vka_info(ctx)->storage_buffer_16bit;
    for (size_t i = 0; i < n; i++) {
        const vka_dtype_info *d = ts[i] ? vka_dtype_info_of(ts[i]->dtype) : NULL;
        if (d && d->is_16bit) {
            any16 = true;
            views = views && d->f16_view;
        }
    }
    return !any16 ? VKA_PATH_F32 : views ? VKA_PATH_NATIVE16 : VKA_PATH_PACKED;
}

vkattn_result vka_f16_require_f32(vkattn_context *ctx, const vkattn_tensor *t, const char *caller,
                                  const char *what)
{
    if (t && t->dtype != VKATTN_DTYPE_F32)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s is %s tensor; it must be f32 (%s takes %s only as f32)",
                        caller, what, vka_dtype_a_name(t->dtype), caller, what);
    return VKATTN_SUCCESS;
}

vkattn_result vka_f16_stage_in(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                               vka_scratch_kind kind, vkattn_tensor *t, uint64_t count,
                               vkattn_tensor **f32)
{
    *f32 = t;
    if (!t || t->dtype == VKATTN_DTYPE_F32)
        return VKATTN_SUCCESS;
    vkattn_result r = vka_growable_get(ctx, kind, count, caller, f32);
    if (r == VKATTN_SUCCESS)
        r = vka_half_convert_record(ctx, cmd, caller, t, *f32, count, false);
    return r;
}

vkattn_result vka_f16_stage_out(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                vka_scratch_kind kind, vkattn_tensor *t, uint64_t count,
                                bool partial, vkattn_tensor **f32)
{
    if (partial)
        return vka_f16_stage_in(ctx, cmd, caller, kind, t, count, f32);
    *f32 = t;
    if (t->dtype == VKATTN_DTYPE_F32)
        return VKATTN_SUCCESS;
    return vka_growable_get(ctx, kind, count, caller, f32);
}

vkattn_result vka_f16_stage_finish(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                   vkattn_tensor *t, vkattn_tensor *f32, uint64_t count)
{
    if (f32 == t)
        return VKATTN_SUCCESS;
    return vka_half_convert_record(ctx, cmd, caller, t, f32, count, true);
}

vkattn_result vka_f16_record(vkattn_context *ctx, VkCommandBuffer cmd, bool staged,
                             vka_record_fn record, const void *op)
{
    return staged ? vka_record_dry_first(ctx, cmd, record, op) : record(ctx, cmd, op);
}
