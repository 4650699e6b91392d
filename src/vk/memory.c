/* Buffers with their own allocation. Simple on purpose: vkattn allocates few,
 * large buffers (tensors, scratch); a sub-allocator can come when a profile
 * asks for it. */
#include "vk/memory.h"

#include "core/error.h"
#include "vk/context.h"

static bool find_type(const VkPhysicalDeviceMemoryProperties *mp, uint32_t type_bits,
                      VkMemoryPropertyFlags want, uint32_t *index)
{
    for (uint32_t i = 0; i < mp->memoryTypeCount; i++)
        if ((type_bits & (1u << i)) && (mp->memoryTypes[i].propertyFlags & want) == want) {
            *index = i;
            return true;
        }
    return false;
}

vkattn_result vka_buffer_create(struct vkattn_context *ctx, VkDeviceSize size, vka_memory_kind kind,
                                vka_buffer *out)
{
    *out = (vka_buffer){0};
    VkBufferCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = size,
        .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                 VK_BUFFER_USAGE_TRANSFER_DST_BIT,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    VkResult vr = ctx->vk.vkCreateBuffer(ctx->device, &info, NULL, &out->buffer);
    if (vr != VK_SUCCESS)
        return vka_vk_fail(ctx, vr, "vkCreateBuffer");
    VkMemoryRequirements req;
    ctx->vk.vkGetBufferMemoryRequirements(ctx->device, out->buffer, &req);

    const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                       VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t type = 0;
    bool found;
    if (kind == VKA_MEMORY_STAGING)
        found = find_type(&ctx->memory_properties, req.memoryTypeBits,
                          host | VK_MEMORY_PROPERTY_HOST_CACHED_BIT, &type) ||
                find_type(&ctx->memory_properties, req.memoryTypeBits, host, &type);
    else if (ctx->info.unified_memory)
        found = find_type(&ctx->memory_properties, req.memoryTypeBits,
                          VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | host, &type);
    else
        found = find_type(&ctx->memory_properties, req.memoryTypeBits,
                          VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, &type) ||
                find_type(&ctx->memory_properties, req.memoryTypeBits, 0, &type);
    if (!found) {
        vka_buffer_destroy(ctx, out);
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED, "no suitable memory type for a buffer");
    }

    VkMemoryAllocateInfo alloc = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = req.size,
        .memoryTypeIndex = type,
    };
    vr = ctx->vk.vkAllocateMemory(ctx->device, &alloc, NULL, &out->memory);
    if (vr == VK_SUCCESS)
        vr = ctx->vk.vkBindBufferMemory(ctx->device, out->buffer, out->memory, 0);
    VkMemoryPropertyFlags flags = ctx->memory_properties.memoryTypes[type].propertyFlags;
    if (vr == VK_SUCCESS && (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
        vr = ctx->vk.vkMapMemory(ctx->device, out->memory, 0, VK_WHOLE_SIZE, 0, &out->mapped);
    if (vr != VK_SUCCESS) {
        vka_buffer_destroy(ctx, out);
        return vka_fail(ctx,
                        vr == VK_ERROR_OUT_OF_DEVICE_MEMORY || vr == VK_ERROR_OUT_OF_HOST_MEMORY
                            ? VKATTN_ERROR_OUT_OF_DEVICE_MEMORY
                            : VKATTN_ERROR_VULKAN,
                        "allocating %llu bytes of device memory failed (VkResult %d)",
                        (unsigned long long)size, (int)vr);
    }
    out->size = size;
    out->allocated = req.size;
    vka_lock(ctx); /* recording threads grow scratch */
    ctx->memory_current += req.size;
    if (ctx->memory_current > ctx->memory_peak)
        ctx->memory_peak = ctx->memory_current;
    vka_unlock(ctx);
    return VKATTN_SUCCESS;
}

void vka_buffer_destroy(struct vkattn_context *ctx, vka_buffer *buf)
{
    if (buf->buffer)
        ctx->vk.vkDestroyBuffer(ctx->device, buf->buffer, NULL);
    if (buf->memory) {
        vka_lock(ctx);
        ctx->memory_current -= buf->allocated;
        vka_unlock(ctx);
        ctx->vk.vkFreeMemory(ctx->device, buf->memory, NULL);
    }
    *buf = (vka_buffer){0};
}
