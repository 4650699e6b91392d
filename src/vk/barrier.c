/* Barriers from tracked access: see barrier.h. */
#include "vk/barrier.h"

#include "vk/context.h"
#include "vk/dispatch.h"

#include <string.h>

static const VkAccessFlags WRITE_BITS = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
                                        VK_ACCESS_HOST_WRITE_BIT | VK_ACCESS_MEMORY_WRITE_BIT;

void vka_access_reset(vka_access *state) { memset(state, 0, sizeof *state); }

/* Merges uses of the same state so one binding read and written is a write. */
static uint32_t merge_uses(const vka_use *uses, uint32_t n, vka_use *out)
{
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t j = 0;
        while (j < m && !(uses[i].state && out[j].state == uses[i].state))
            j++;
        if (j == m) {
            out[m++] = uses[i];
            continue;
        }
        out[j].stage |= uses[i].stage;
        out[j].access |= uses[i].access;
        out[j].write |= uses[i].write;
    }
    return m;
}

void vka_sync(struct vkattn_context *ctx, VkCommandBuffer cmd, const vka_use *in, uint32_t n_in)
{
    if (vka_is_dry(cmd)) /* a prepare: nothing recorded, nothing to track */
        return;
    vka_use uses[VKA_MAX_USES];
    uint32_t n = merge_uses(in, n_in < VKA_MAX_USES ? n_in : VKA_MAX_USES, uses);
    VkBufferMemoryBarrier barriers[VKA_MAX_USES];
    uint32_t nb = 0;
    VkPipelineStageFlags src = 0, dst = 0;

    for (uint32_t i = 0; i < n; i++) {
        vka_access *s = uses[i].state;
        if (!s)
            continue;
        VkPipelineStageFlags wait = 0;
        VkAccessFlags src_access = 0;
        if (uses[i].write) {
            /* WAW: order after the last write; WAR: after every read since. */
            wait = s->write_stage | s->read_stages;
            src_access = s->write_stage ? s->write_access : 0;
        } else if (s->write_stage && !(s->visible_stages & uses[i].stage)) {
            /* RAW: make the last write visible to this stage */
            wait = s->write_stage;
            src_access = s->write_access;
        }
        if (wait) {
            barriers[nb++] = (VkBufferMemoryBarrier){
                .sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER,
                .srcAccessMask = src_access,
                .dstAccessMask = src_access ? uses[i].access : 0,
                .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                .buffer = uses[i].buffer,
                .offset = uses[i].offset,
                .size = uses[i].size,
            };
            src |= wait;
            dst |= uses[i].stage;
        }
        if (uses[i].write) {
            s->write_stage = uses[i].stage;
            s->write_access = uses[i].access & WRITE_BITS;
            s->visible_stages = 0;
            s->read_stages = 0;
        } else {
            if (wait)
                s->visible_stages |= uses[i].stage;
            s->read_stages |= uses[i].stage;
        }
    }
    if (nb)
        ctx->vk.vkCmdPipelineBarrier(cmd, src, dst, 0, 0, NULL, nb, barriers, 0, NULL);
}
