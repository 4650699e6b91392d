/* One dispatch: limits checked, barriers from tracked access, push descriptors
 * or a cached descriptor set, push constants, vkCmdDispatch. */
#include "vk/dispatch.h"

#include "core/error.h"
#include "vk/capture.h"
#include "vk/context.h"
#include "vk/tensor.h"

#include <string.h>

vka_binding vka_bind_tensor(struct vkattn_tensor *t, bool write)
{
    return (vka_binding){
        .buffer = t->buffer, .offset = t->offset, .size = t->bytes, .state = &t->range->access,
        .write = write};
}

vka_binding vka_bind_optional(struct vkattn_context *ctx, struct vkattn_tensor *t)
{
    if (t)
        return vka_bind_tensor(t, false);
    return (vka_binding){.buffer = ctx->dummy.buffer, .offset = 0, .size = ctx->dummy.size};
}

vka_binding vka_bind_optional_output(struct vkattn_context *ctx, struct vkattn_tensor *t)
{
    if (t)
        return vka_bind_tensor(t, true);
    (void)ctx;
    return (vka_binding){.sink = true, .write = true};
}

vka_grid_1d vka_grid_stride_1d(const struct vkattn_context *ctx, uint64_t items, uint32_t max_groups)
{
    uint32_t threads = 256;
    if (threads > ctx->info.max_workgroup_invocations)
        threads = ctx->info.max_workgroup_invocations;
    if (threads > ctx->info.max_workgroup_size[0])
        threads = ctx->info.max_workgroup_size[0];
    uint64_t groups = vka_div_up(items, threads);
    if (groups > max_groups)
        groups = max_groups;
    if (groups > ctx->info.max_workgroup_count[0])
        groups = ctx->info.max_workgroup_count[0];
    return (vka_grid_1d){.threads = threads, .groups = groups ? (uint32_t)groups : 1};
}

vkattn_result vka_record_grid_1d(struct vkattn_context *ctx, VkCommandBuffer cmd,
                                 vka_kernel kernel, uint32_t wg_spec, uint64_t items,
                                 vka_dispatch d)
{
    const vka_grid_1d grid = vka_grid_stride_1d(ctx, items, VKA_GRID_MAX_GROUPS);
    kernel.spec[wg_spec] = grid.threads;
    d.kernel = &kernel;
    d.groups[0] = grid.groups, d.groups[1] = d.groups[2] = 1;
    return vka_record_dispatch(ctx, cmd, &d);
}

vkattn_result vka_record_grid_1d_ranges(struct vkattn_context *ctx, VkCommandBuffer cmd,
                                        vka_kernel kernel, uint32_t wg_spec, uint64_t total,
                                        uint32_t per, vka_dispatch d, uint32_t *begin,
                                        uint32_t *end)
{
    vkattn_result r = VKATTN_SUCCESS;
    for (uint64_t e0 = 0; e0 < total && r == VKATTN_SUCCESS; e0 += per) {
        *begin = (uint32_t)e0;
        *end = (uint32_t)(total - e0 > per ? e0 + per : total);
        r = vka_record_grid_1d(ctx, cmd, kernel, wg_spec, *end - *begin, d);
    }
    return r;
}

uint64_t vka_dispatch_budget(struct vkattn_context *ctx)
{
    const uint64_t budget = ctx->info.max_dispatch_work, piece = vka_capture_piece_work(ctx);
    return piece && (!budget || piece < budget) ? piece : budget;
}

uint64_t vka_dispatch_pieces(struct vkattn_context *ctx, uint64_t work)
{
    vka_capture_begin_split(ctx); /* a slicer's re-split names splits by their order */
    const uint64_t budget = vka_dispatch_budget(ctx);
    return budget && work > budget ? vka_div_up(work, budget) : 1;
}

static vkattn_result check_limits(struct vkattn_context *ctx, const vka_dispatch *d,
                                  uint32_t groups[3])
{
    static const char axis[3] = {'x', 'y', 'z'};
    for (int i = 0; i < 3; i++) {
        groups[i] = d->groups[i] ? d->groups[i] : 1;
        if (groups[i] > ctx->info.max_workgroup_count[i])
            return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                            "%s: %s needs %u workgroups along %c; the device allows %u",
                            d->caller, d->kernel->name, groups[i], axis[i],
                            ctx->info.max_workgroup_count[i]);
    }
    for (uint32_t i = 0; i < d->kernel->n_bindings; i++) {
        const vka_binding *b = &d->bindings[i];
        if (b->size > ctx->info.max_storage_buffer_range)
            return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                            "%s: binding %u of %s is %llu bytes; maxStorageBufferRange is %llu",
                            d->caller, i, d->kernel->name, (unsigned long long)b->size,
                            (unsigned long long)ctx->info.max_storage_buffer_range);
    }
    return VKATTN_SUCCESS;
}

/* Bindings with the sink resolved to the calling thread's. */
static vkattn_result resolve_bindings(struct vkattn_context *ctx, const vka_dispatch *d,
                                      vka_binding *out)
{
    for (uint32_t i = 0; i < d->kernel->n_bindings; i++) {
        out[i] = d->bindings[i];
        if (!out[i].sink)
            continue;
        struct vkattn_tensor *sink;
        vkattn_result r = vka_growable_get(ctx, VKA_SCRATCH_SINK, 64, d->caller, &sink);
        if (r != VKATTN_SUCCESS)
            return r;
        out[i] = vka_bind_tensor(sink, true);
    }
    return VKATTN_SUCCESS;
}

/* One dispatch as a command (vk/capture.h): appended to a slicer's capture,
 * or replayed at once into a command buffer, so both record the same calls. */
static void fill_dispatch(vka_command *m, const vka_pipeline *pipe, VkDescriptorSet set,
                          const VkDescriptorBufferInfo *infos, const vka_dispatch *d,
                          const uint32_t groups[3])
{
    m->kind = VKA_COMMAND_DISPATCH;
    m->pipeline = pipe->pipeline;
    m->layout = pipe->layout;
    m->set = set;
    m->n_infos = d->kernel->n_bindings;
    m->bytes = 0;
    for (uint32_t i = 0; i < m->n_infos; i++) {
        m->infos[i] = infos[i];
        m->bytes += infos[i].range;
    }
    if (d->touched > 0 && d->touched < 1)
        m->bytes = (uint64_t)((double)m->bytes * d->touched);
    m->push_size = d->kernel->push_size;
    if (m->push_size)
        memcpy(m->push, d->push, m->push_size);
    memcpy(m->groups, groups, sizeof m->groups);
    m->work = d->work;
}

vkattn_result vka_record_dispatch(struct vkattn_context *ctx, VkCommandBuffer cmd,
                                  const vka_dispatch *d_in)
{
    vka_dispatch resolved = *d_in;
    const vka_dispatch *d = &resolved;
    vkattn_result r = resolve_bindings(ctx, d_in, resolved.bindings);
    if (r != VKATTN_SUCCESS)
        return r;
    uint32_t groups[3];
    r = check_limits(ctx, d, groups);
    if (r != VKATTN_SUCCESS)
        return r;
    const vka_pipeline *pipe;
    if ((r = vka_pipeline_get(ctx, d->kernel, &pipe)) != VKATTN_SUCCESS)
        return r;

    vka_use uses[VKA_MAX_BINDINGS];
    VkDescriptorBufferInfo infos[VKA_MAX_BINDINGS];
    uint32_t n = d->kernel->n_bindings;
    for (uint32_t i = 0; i < n; i++) {
        const vka_binding *b = &d->bindings[i];
        uses[i] = (vka_use){
            .buffer = b->buffer,
            .offset = b->offset,
            .size = b->size,
            .state = b->state,
            .stage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            .access = b->write ? VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT
                               : VK_ACCESS_SHADER_READ_BIT,
            .write = b->write,
        };
        infos[i] = (VkDescriptorBufferInfo){.buffer = b->buffer, .offset = b->offset, .range = b->size};
    }
    /* the set first: a failure leaves nothing recorded */
    VkDescriptorSet set = VK_NULL_HANDLE;
    if (!ctx->info.push_descriptors &&
        (r = vka_descriptors_get(ctx, pipe->set_layout, infos, n, d->caller, &set)) != VKATTN_SUCCESS)
        return r;
    if (vka_is_dry(cmd))
        return VKATTN_SUCCESS;
    vka_sync(ctx, cmd, uses, n);
    vka_capture *capture = vka_capture_of(ctx, cmd);
    if (capture) {
        vka_command *m = vka_capture_append(ctx, capture, VKA_COMMAND_DISPATCH);
        if (!m)
            return capture->error;
        fill_dispatch(m, pipe, set, infos, d, groups);
        m->split = capture->split;
        m->limit = vka_dispatch_budget(ctx);
        return VKATTN_SUCCESS;
    }
    vka_command m;
    fill_dispatch(&m, pipe, set, infos, d, groups);
    vka_command_replay(ctx, &m, cmd);
    return VKATTN_SUCCESS;
}
