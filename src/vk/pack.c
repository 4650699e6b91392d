/* Side inputs copied behind one binding: see pack.h. */
#include "vk/pack.h"

#include "core/error.h"
#include "vk/capture.h"
#include "vk/context.h"
#include "vk/tensor.h"

vkattn_result vka_copy_floats(struct vkattn_context *ctx, VkCommandBuffer cmd,
                              struct vkattn_tensor *src, uint64_t src_first,
                              struct vkattn_tensor *dst, uint64_t dst_first, uint64_t count)
{
    if (!count)
        return VKATTN_SUCCESS;
    const VkDeviceSize bytes = count * sizeof(float);
    VkBufferCopy region = {
        .srcOffset = src->offset + src_first * sizeof(float),
        .dstOffset = dst->offset + dst_first * sizeof(float),
        .size = bytes,
    };
    /* The source's barrier covers the whole tensor: its tracked state is per
     * tensor, so a barrier for just this range would mark the rest visible
     * too, and a second copy from the same tensor would get none. */
    vka_use uses[2] = {
        {.buffer = src->buffer, .offset = src->offset, .size = src->bytes,
         .state = &src->range->access,
         .stage = VK_PIPELINE_STAGE_TRANSFER_BIT, .access = VK_ACCESS_TRANSFER_READ_BIT},
        {.buffer = dst->buffer, .offset = region.dstOffset, .size = bytes,
         .state = &dst->range->access,
         .stage = VK_PIPELINE_STAGE_TRANSFER_BIT, .access = VK_ACCESS_TRANSFER_WRITE_BIT,
         .write = true},
    };
    vka_sync(ctx, cmd, uses, 2);
    if (vka_is_dry(cmd))
        return VKATTN_SUCCESS;
    vka_capture *capture = vka_capture_of(ctx, cmd);
    if (capture) {
        vka_command *m = vka_capture_append(ctx, capture, VKA_COMMAND_COPY);
        if (!m)
            return capture->error;
        m->copy_src = src->buffer;
        m->copy_dst = dst->buffer;
        m->region = region;
        m->bytes = 2 * bytes;
        return VKATTN_SUCCESS;
    }
    ctx->vk.vkCmdCopyBuffer(cmd, src->buffer, dst->buffer, 1, &region);
    return VKATTN_SUCCESS;
}

vkattn_result vka_pack_inputs(struct vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                              struct vkattn_tensor *const *tensors, uint32_t n, vka_packed *out)
{
    *out = (vka_packed){0};
    uint64_t total = 0;
    for (uint32_t i = 0; i < n && i < VKA_MAX_PACKED; i++) {
        if (!tensors[i])
            continue;
        total = (total + 3) & ~3ull;
        out->offset[i] = (uint32_t)total;
        total += tensors[i]->bytes / sizeof(float); /* whole words: an f16 tensor's halves */
        if (total > UINT32_MAX || total * sizeof(float) > vka_max_range(ctx))
            return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                            "%s: this device allows %u storage buffers per shader, so masks and "
                            "bias are packed into one buffer; together they exceed "
                            "maxStorageBufferRange (%llu bytes)",
                            caller, ctx->info.max_storage_buffers_per_stage,
                            (unsigned long long)vka_max_range(ctx));
    }
    if (!total) {
        out->binding = vka_bind_optional(ctx, NULL);
        return VKATTN_SUCCESS;
    }
    struct vkattn_tensor *pack;
    vkattn_result r = vka_growable_get(ctx, VKA_SCRATCH_PACK, total, caller, &pack);
    if (r != VKATTN_SUCCESS)
        return r;
    for (uint32_t i = 0; i < n && i < VKA_MAX_PACKED; i++)
        if (tensors[i] &&
            (r = vka_copy_floats(ctx, cmd, tensors[i], 0, pack, out->offset[i],
                                 tensors[i]->bytes / sizeof(float))))
            return r;
    out->binding = vka_bind_tensor(pack, false);
    out->binding.size = total * sizeof(float);
    return VKATTN_SUCCESS;
}
