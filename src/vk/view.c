/* What ops and layers see of a context (vk/view.h): functions over its
 * private state, so that no op depends on a field. */
#include "vk/view.h"

#include "core/error.h"
#include "vk/context.h"

const vkattn_context_info *vka_info(const struct vkattn_context *ctx) { return &ctx->info; }

uint64_t vka_max_range(const struct vkattn_context *ctx)
{
    return ctx->info.max_storage_buffer_range;
}

uint64_t vka_loop_budget(const struct vkattn_context *ctx) { return ctx->loop_budget; }

bool vka_subgroup_shuffle(const struct vkattn_context *ctx) { return ctx->subgroup_shuffle; }

uint32_t vka_variant_asked(const struct vkattn_context *ctx, uint32_t family)
{
    return family < VKATTN_VARIANT_FAMILIES ? ctx->variants[family] : 0;
}

void vka_lock(struct vkattn_context *ctx) { vka_rmutex_lock(&ctx->lock); }
void vka_unlock(struct vkattn_context *ctx) { vka_rmutex_unlock(&ctx->lock); }

vkattn_result vka_check_loop_budget(struct vkattn_context *ctx, const char *caller,
                                    uint64_t iterations, const char *what)
{
    if (iterations <= ctx->loop_budget)
        return VKATTN_SUCCESS;
    return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                    "%s: %s is too large for %s, which ends a shader invocation after %llu loop "
                    "iterations (this call needs about %llu)",
                    caller, what, ctx->info.device_name, (unsigned long long)ctx->loop_budget,
                    (unsigned long long)iterations);
}
