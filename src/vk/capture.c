/* Capture and replay of recorded commands: see capture.h. */
#include "vk/capture.h"

#include "core/error.h"
#include "vk/context.h"
#include "vk/prepare.h"

#include <stdlib.h>
#include <string.h>

vka_capture *vka_capture_of(struct vkattn_context *ctx, VkCommandBuffer cmd)
{
    if (!ctx || !cmd || vka_is_dry(cmd))
        return NULL;
    vka_lock(ctx);
    vka_capture *c = ctx->capture && vka_capture_handle(ctx->capture) == cmd ? ctx->capture : NULL;
    vka_unlock(ctx);
    return c;
}

vkattn_result vka_capture_begin(struct vkattn_context *ctx, vka_capture *c, const char *caller)
{
    vkattn_result r = VKATTN_SUCCESS;
    vka_lock(ctx);
    if (ctx->capture) {
        r = vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                     "%s: another slicer is being created on this context (one at a time)", caller);
    } else {
        c->serial = ++ctx->capture_serial;
        c->split = 0;
        c->thread = vka_thread_self();
        c->error = VKATTN_SUCCESS;
        ctx->capture = c;
    }
    vka_unlock(ctx);
    return r;
}

void vka_capture_end(struct vkattn_context *ctx, vka_capture *c)
{
    vka_lock(ctx);
    if (ctx->capture == c)
        ctx->capture = NULL;
    vka_unlock(ctx);
}

vka_thread_scratch *vka_capture_scratch(struct vkattn_context *ctx)
{
    vka_lock(ctx);
    vka_capture *c = ctx->capture;
    vka_thread_scratch *ts =
        c && vka_thread_equal(c->thread, vka_thread_self()) ? &c->scratch : NULL;
    vka_unlock(ctx);
    return ts;
}

uint64_t vka_capture_piece_work(struct vkattn_context *ctx)
{
    vka_lock(ctx);
    vka_capture *c = ctx->capture;
    uint64_t work = 0;
    if (c && vka_thread_equal(c->thread, vka_thread_self())) {
        work = c->max_piece_work;
        const uint64_t finer = c->split >= 1 && c->split <= c->n_split_limits
                                   ? c->split_limits[c->split - 1]
                                   : 0;
        if (finer && (!work || finer < work))
            work = finer;
    }
    vka_unlock(ctx);
    return work;
}

void vka_capture_begin_split(struct vkattn_context *ctx)
{
    vka_lock(ctx);
    vka_capture *c = ctx->capture;
    if (c && vka_thread_equal(c->thread, vka_thread_self()))
        c->split++;
    vka_unlock(ctx);
}

vka_command *vka_capture_append(struct vkattn_context *ctx, vka_capture *c, vka_command_kind kind)
{
    if (c->error != VKATTN_SUCCESS)
        return NULL;
    if (c->n == c->cap) {
        uint32_t cap = c->cap ? c->cap * 2 : 64;
        vka_command *list = cap > c->cap ? realloc(c->commands, (size_t)cap * sizeof *list) : NULL;
        if (!list) {
            c->error = vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY,
                                "vkattn_slicer_create: out of host memory (command list)");
            return NULL;
        }
        c->commands = list;
        c->cap = cap;
    }
    vka_command *command = &c->commands[c->n++];
    memset(command, 0, sizeof *command);
    command->kind = kind;
    return command;
}

void vka_command_replay(struct vkattn_context *ctx, const vka_command *m, VkCommandBuffer cmd)
{
    switch (m->kind) {
    case VKA_COMMAND_BARRIER:
        ctx->vk.vkCmdPipelineBarrier(cmd, m->src_stages, m->dst_stages, 0, 0, NULL, m->n_barriers,
                                     m->barriers, 0, NULL);
        break;
    case VKA_COMMAND_DISPATCH: {
        ctx->vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m->pipeline);
        if (m->set) {
            ctx->vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m->layout, 0, 1,
                                            &m->set, 0, NULL);
        } else {
            VkWriteDescriptorSet writes[VKA_MAX_BINDINGS];
            for (uint32_t i = 0; i < m->n_infos; i++)
                writes[i] = (VkWriteDescriptorSet){
                    .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                    .dstBinding = i,
                    .descriptorCount = 1,
                    .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                    .pBufferInfo = &m->infos[i],
                };
            ctx->vk.vkCmdPushDescriptorSetKHR(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m->layout, 0,
                                              m->n_infos, writes);
        }
        if (m->push_size)
            ctx->vk.vkCmdPushConstants(cmd, m->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, m->push_size,
                                       m->push);
        ctx->vk.vkCmdDispatch(cmd, m->groups[0], m->groups[1], m->groups[2]);
        break;
    }
    case VKA_COMMAND_COPY:
        ctx->vk.vkCmdCopyBuffer(cmd, m->copy_src, m->copy_dst, 1, &m->region);
        break;
    }
}

void vka_capture_free(vka_capture *c)
{
    vka_thread_scratch_free(&c->scratch);
    free(c->commands);
    c->commands = NULL;
    c->n = c->cap = 0;
}
