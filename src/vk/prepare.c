/* The dry-recording marker and the dry-first recording (vk/prepare.h). */
#include "vk/prepare.h"

#include "core/threads.h"

const char vka_dry_marker = 0;

/* The context whose real pass, checked by a dry pass, this thread is in
 * (NULL: none). Per thread, because several threads may record on one
 * context at once. */
static VKA_THREAD_LOCAL const struct vkattn_context *checked_ctx;

bool vka_record_checked(const struct vkattn_context *ctx, VkCommandBuffer cmd)
{
    return vka_is_dry(cmd) || (ctx && ctx == checked_ctx);
}

vkattn_result vka_record_dry_first(struct vkattn_context *ctx, VkCommandBuffer cmd,
                                   vka_record_fn record, const void *op)
{
    if (vka_record_checked(ctx, cmd))
        return record(ctx, cmd, op);
    vkattn_result r = record(ctx, VKA_DRY_CMD, op);
    if (r != VKATTN_SUCCESS)
        return r;
    const struct vkattn_context *outer = checked_ctx;
    checked_ctx = ctx;
    r = record(ctx, cmd, op);
    checked_ctx = outer;
    return r;
}
