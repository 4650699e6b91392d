/* The context's one-shot command buffer. Waiting is a fence wait: the host
 * thread sleeps in the driver, it never polls (a spinning thread would take a
 * core from lavapipe). */
#include "vk/submit.h"

#include "core/error.h"
#include "vk/context.h"

vkattn_result vka_submit_init(struct vkattn_context *ctx)
{
    VkCommandPoolCreateInfo pool = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
        .queueFamilyIndex = ctx->queue_family_index,
    };
    VkResult vr = ctx->vk.vkCreateCommandPool(ctx->device, &pool, NULL, &ctx->command_pool);
    if (vr != VK_SUCCESS)
        return vka_vk_fail(ctx, vr, "vkattn_context_create: vkCreateCommandPool");
    VkCommandBufferAllocateInfo alloc = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = ctx->command_pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    vr = ctx->vk.vkAllocateCommandBuffers(ctx->device, &alloc, &ctx->command_buffer);
    if (vr != VK_SUCCESS)
        return vka_vk_fail(ctx, vr, "vkattn_context_create: vkAllocateCommandBuffers");
    VkFenceCreateInfo fence = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    vr = ctx->vk.vkCreateFence(ctx->device, &fence, NULL, &ctx->fence);
    if (vr != VK_SUCCESS)
        return vka_vk_fail(ctx, vr, "vkattn_context_create: vkCreateFence");
    return VKATTN_SUCCESS;
}

void vka_submit_destroy(struct vkattn_context *ctx)
{
    if (ctx->fence)
        ctx->vk.vkDestroyFence(ctx->device, ctx->fence, NULL);
    if (ctx->command_pool)
        ctx->vk.vkDestroyCommandPool(ctx->device, ctx->command_pool, NULL);
}

VkResult vka_queue_submit(struct vkattn_context *ctx, const VkSubmitInfo *submit, VkFence fence)
{
    if (ctx->lock_queue)
        ctx->lock_queue(ctx->queue_lock_user, ctx->queue_family_index, ctx->queue_index);
    VkResult vr = ctx->vk.vkQueueSubmit(ctx->queue, 1, submit, fence);
    if (ctx->unlock_queue)
        ctx->unlock_queue(ctx->queue_lock_user, ctx->queue_family_index, ctx->queue_index);
    return vr;
}

vkattn_result vka_begin(struct vkattn_context *ctx, VkCommandBuffer *cmd)
{
    if (ctx->command_buffer_open)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "the context's one-shot command buffer is already being recorded; "
                        "submit it first (one at a time per context)");
    VkResult vr = ctx->vk.vkResetCommandBuffer(ctx->command_buffer, 0);
    if (vr != VK_SUCCESS)
        return vka_vk_fail(ctx, vr, "vkResetCommandBuffer");
    VkCommandBufferBeginInfo begin = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    vr = ctx->vk.vkBeginCommandBuffer(ctx->command_buffer, &begin);
    if (vr != VK_SUCCESS)
        return vka_vk_fail(ctx, vr, "vkBeginCommandBuffer");
    ctx->command_buffer_open = true;
    ctx->oneshot_serial++; /* a new recording for barrier tracking */
    *cmd = ctx->command_buffer;
    return VKATTN_SUCCESS;
}

vkattn_result vka_end_submit_wait(struct vkattn_context *ctx, VkCommandBuffer cmd,
                                  vkattn_result status)
{
    ctx->command_buffer_open = false;
    VkResult vr = ctx->vk.vkEndCommandBuffer(cmd);
    if (status != VKATTN_SUCCESS)
        return status; /* the recording is discarded at the next begin */
    if (vr != VK_SUCCESS)
        return vka_vk_fail(ctx, vr, "vkEndCommandBuffer");
    VkSubmitInfo submit = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
        .commandBufferCount = 1,
        .pCommandBuffers = &cmd,
    };
    vr = vka_queue_submit(ctx, &submit, ctx->fence);
    if (vr != VK_SUCCESS)
        return vka_vk_fail(ctx, vr, "vkQueueSubmit");
    vr = ctx->vk.vkWaitForFences(ctx->device, 1, &ctx->fence, VK_TRUE, UINT64_MAX);
    VkResult reset = ctx->vk.vkResetFences(ctx->device, 1, &ctx->fence);
    if (vr != VK_SUCCESS)
        return vka_vk_fail(ctx, vr, "vkWaitForFences");
    if (reset != VK_SUCCESS)
        return vka_vk_fail(ctx, reset, "vkResetFences");
    return VKATTN_SUCCESS;
}
