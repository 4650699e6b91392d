/* Timestamp queries wrapped for tools: see vkattn/timer.h. */
#include "vkattn/timer.h"

#include "core/error.h"
#include "vk/capture.h"
#include "vk/context.h"
#include "vk/prepare.h"
#include "vk/record_mode.h"

#include <stdlib.h>

struct vkattn_timer {
    vkattn_context *ctx;
    VkQueryPool pool;
    uint32_t marks;
};

vkattn_result vkattn_timer_create(vkattn_context *ctx, uint32_t marks, vkattn_timer **out)
{
    if (!out || !ctx)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", __func__,
                        !out ? "out" : "ctx");
    *out = NULL;
    if (marks == 0)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: marks is 0; must be >= 1", __func__);
    if (!ctx->info.timestamps)
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED,
                        "%s: the queue family has no timestamp support", __func__);
    vkattn_timer *t = calloc(1, sizeof *t);
    if (!t)
        return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", __func__);
    VkQueryPoolCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
        .queryType = VK_QUERY_TYPE_TIMESTAMP,
        .queryCount = marks,
    };
    VkResult vr = ctx->vk.vkCreateQueryPool(ctx->device, &info, NULL, &t->pool);
    if (vr != VK_SUCCESS) {
        free(t);
        return vka_vk_fail(ctx, vr, "vkattn_timer_create: vkCreateQueryPool");
    }
    t->ctx = ctx;
    t->marks = marks;
    *out = t;
    return VKATTN_SUCCESS;
}

void vkattn_timer_destroy(vkattn_timer *timer)
{
    if (!timer)
        return;
    timer->ctx->vk.vkDestroyQueryPool(timer->ctx->device, timer->pool, NULL);
    free(timer);
}

/* A timer writes into the app's own command buffer: never NULL, a sentinel
 * or a slicer's capture (whose commands are replayed elsewhere). */
static vkattn_result check_cmd(vkattn_timer *timer, VkCommandBuffer cmd, const char *fn)
{
    if (!timer || !cmd)
        return vka_fail(timer ? timer->ctx : NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s is NULL", fn, !timer ? "timer" : "cmd");
    vkattn_result r = vka_require_command_buffer(timer->ctx, fn, cmd);
    if (r != VKATTN_SUCCESS)
        return r;
    if (vka_capture_of(timer->ctx, cmd) || vka_is_dry(cmd))
        return vka_fail(timer->ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: cmd is a slicer's capture; a slicer's record callback may only call "
                        "*_record functions",
                        fn);
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_timer_reset(vkattn_timer *timer, VkCommandBuffer cmd)
{
    vkattn_result r = check_cmd(timer, cmd, __func__);
    if (r != VKATTN_SUCCESS)
        return r;
    timer->ctx->vk.vkCmdResetQueryPool(cmd, timer->pool, 0, timer->marks);
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_timer_mark(vkattn_timer *timer, VkCommandBuffer cmd, uint32_t index)
{
    vkattn_result r = check_cmd(timer, cmd, __func__);
    if (r != VKATTN_SUCCESS)
        return r;
    if (index >= timer->marks)
        return vka_fail(timer->ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: index %u is out of range (%u marks)", __func__, index, timer->marks);
    timer->ctx->vk.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, timer->pool, index);
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_timer_elapsed_ms(vkattn_timer *timer, uint32_t from, uint32_t to, double *ms)
{
    if (!timer || !ms)
        return vka_fail(timer ? timer->ctx : NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s is NULL", __func__, !timer ? "timer" : "ms");
    if (from >= timer->marks || to >= timer->marks)
        return vka_fail(timer->ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: mark %u is out of range (%u marks)", __func__,
                        from >= timer->marks ? from : to, timer->marks);
    uint64_t t[2];
    vkattn_context *ctx = timer->ctx;
    VkResult a = ctx->vk.vkGetQueryPoolResults(ctx->device, timer->pool, from, 1, sizeof t[0], &t[0],
                                               sizeof t[0], VK_QUERY_RESULT_64_BIT);
    VkResult b = ctx->vk.vkGetQueryPoolResults(ctx->device, timer->pool, to, 1, sizeof t[1], &t[1],
                                               sizeof t[1], VK_QUERY_RESULT_64_BIT);
    if (a == VK_NOT_READY || b == VK_NOT_READY)
        return vka_fail(ctx, VKATTN_ERROR_NOT_READY, "%s: a mark is not written yet", __func__);
    if (a != VK_SUCCESS || b != VK_SUCCESS)
        return vka_vk_fail(ctx, a != VK_SUCCESS ? a : b, "vkGetQueryPoolResults");
    /* Only timestampValidBits of each value count: the rest is undefined, and
     * the counter wraps at that width, which the masked difference absorbs. */
    uint32_t bits = ctx->timestamp_valid_bits;
    uint64_t mask = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    uint64_t ticks = ((t[1] & mask) - (t[0] & mask)) & mask;
    *ms = (double)ticks * ctx->info.timestamp_period_ns * 1e-6;
    return VKATTN_SUCCESS;
}
