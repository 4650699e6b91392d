/* Barriers from tracked access, kept per range of memory: see barrier.h. */
#include "vk/barrier.h"

#include "core/error.h"
#include "vk/capture.h"
#include "vk/context.h"
#include "vk/dispatch.h"

#include <stdlib.h>
#include <string.h>

/* What vkattn's own recordings may have left on the queue. */
static const VkPipelineStageFlags OWN_STAGES =
    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
static const VkAccessFlags OWN_WRITES = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;

vkattn_result vka_tracker_init(struct vkattn_context *ctx)
{
    if (!vka_mutex_init(&ctx->tracker.lock))
        return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY,
                        "vkattn_context_create: mutex init failed (access registry)");
    ctx->tracker.lock_ready = true;
    return VKATTN_SUCCESS;
}

void vka_tracker_destroy(struct vkattn_context *ctx)
{
    /* every tensor is gone by now; what is left is the app's leak */
    while (ctx->tracker.ranges) {
        vka_tracked *r = ctx->tracker.ranges;
        ctx->tracker.ranges = r->next;
        free(r);
    }
    if (ctx->tracker.lock_ready)
        vka_mutex_destroy(&ctx->tracker.lock);
    ctx->tracker.lock_ready = false;
}

static vka_access *resolve(vka_access *s)
{
    while (s && s->alias)
        s = s->alias;
    return s;
}

/* The state covering both `a` and `b`: any write either saw, visible only
 * where both were, and a recording in common only if they share one. */
static void merge_state(vka_access *into, const vka_access *b)
{
    into->write_stage |= b->write_stage;
    into->write_access |= b->write_access;
    into->visible_stages &= b->visible_stages;
    into->read_stages |= b->read_stages;
    if (into->cmd != b->cmd || into->serial != b->serial)
        into->cmd = VK_NULL_HANDLE, into->serial = 0;
}

static bool overlaps(const vka_tracked *r, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size)
{
    return r->buffer == buffer && r->offset < offset + size && offset < r->offset + r->size;
}

vkattn_result vka_track_get(struct vkattn_context *ctx, VkBuffer buffer, VkDeviceSize offset,
                            VkDeviceSize size, vka_tracked **out)
{
    vka_mutex_lock(&ctx->tracker.lock);
    /* one range that holds all of it: share its state */
    uint32_t n_overlap = 0;
    vka_tracked *holder = NULL;
    for (vka_tracked *r = ctx->tracker.ranges; r; r = r->next) {
        if (!overlaps(r, buffer, offset, size))
            continue;
        n_overlap++;
        if (r->offset <= offset && offset + size <= r->offset + r->size)
            holder = r;
    }
    if (n_overlap == 1 && holder) {
        holder->refs++;
        vka_mutex_unlock(&ctx->tracker.lock);
        *out = holder;
        return VKATTN_SUCCESS;
    }
    vka_tracked *n = calloc(1, sizeof *n);
    if (!n) {
        vka_mutex_unlock(&ctx->tracker.lock);
        return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY,
                        "out of host memory (access registry)");
    }
    n->buffer = buffer;
    n->offset = offset;
    n->size = size;
    n->refs = 1;
    /* absorb every range it overlaps: they forward to the union from now on */
    bool first = true;
    for (vka_tracked **p = &ctx->tracker.ranges; *p;) {
        vka_tracked *r = *p;
        if (!overlaps(r, buffer, offset, size)) {
            p = &r->next;
            continue;
        }
        VkDeviceSize end = r->offset + r->size > n->offset + n->size ? r->offset + r->size
                                                                     : n->offset + n->size;
        n->offset = r->offset < n->offset ? r->offset : n->offset;
        n->size = end - n->offset;
        if (first)
            n->access = r->access;
        else
            merge_state(&n->access, &r->access);
        first = false;
        r->access.alias = &n->access;
        n->refs++;
        *p = r->next;
        r->next = NULL;
    }
    n->next = ctx->tracker.ranges;
    ctx->tracker.ranges = n;
    vka_mutex_unlock(&ctx->tracker.lock);
    *out = n;
    return VKATTN_SUCCESS;
}

void vka_track_put(struct vkattn_context *ctx, vka_tracked *range)
{
    vka_mutex_lock(&ctx->tracker.lock);
    while (range && --range->refs == 0) {
        vka_tracked *up = (vka_tracked *)range->access.alias; /* access is first */
        if (!up) {
            for (vka_tracked **p = &ctx->tracker.ranges; *p; p = &(*p)->next)
                if (*p == range) {
                    *p = range->next;
                    break;
                }
        }
        free(range);
        range = up;
    }
    vka_mutex_unlock(&ctx->tracker.lock);
}

/* The range a state belongs to, or NULL for untracked states (the sink,
 * staging buffers): those are always used whole. */
static const vka_tracked *range_of(struct vkattn_context *ctx, const vka_access *s)
{
    for (const vka_tracked *r = ctx->tracker.ranges; r; r = r->next)
        if (&r->access == s)
            return r;
    return NULL;
}

/* First touch in a new recording: it may replay after anything vkattn recorded. */
static void enter_recording(struct vkattn_context *ctx, vka_access *s, VkCommandBuffer cmd,
                            const vka_capture *capture)
{
    uint64_t serial = capture ? capture->serial
                      : cmd == ctx->command_buffer ? ctx->oneshot_serial : 0;
    if (s->cmd == cmd && s->serial == serial)
        return;
    s->cmd = cmd;
    s->serial = serial;
    s->write_stage |= OWN_STAGES;
    s->write_access |= OWN_WRITES;
    s->visible_stages = 0;
    s->read_stages |= OWN_STAGES;
}

/* Merges uses of the same state so one range read and written is a write;
 * the merged use spans both ranges (they are in one buffer). */
static uint32_t merge_uses(const vka_use *uses, uint32_t n, vka_use *out)
{
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        vka_use u = uses[i];
        u.state = resolve(u.state);
        uint32_t j = 0;
        while (j < m && !(u.state && out[j].state == u.state))
            j++;
        if (j == m) {
            out[m++] = u;
            continue;
        }
        VkDeviceSize end_j = out[j].offset + out[j].size, end_u = u.offset + u.size;
        VkDeviceSize end = end_j > end_u ? end_j : end_u;
        out[j].offset = u.offset < out[j].offset ? u.offset : out[j].offset;
        out[j].size = end - out[j].offset;
        out[j].stage |= u.stage;
        out[j].access |= u.access;
        out[j].write |= u.write;
    }
    return m;
}

/* One vkCmdPipelineBarrier, or its capture. */
static void emit_barriers(struct vkattn_context *ctx, VkCommandBuffer cmd, vka_capture *capture,
                          VkPipelineStageFlags src, VkPipelineStageFlags dst,
                          const VkBufferMemoryBarrier *barriers, uint32_t nb)
{
    if (!capture) {
        ctx->vk.vkCmdPipelineBarrier(cmd, src, dst, 0, 0, NULL, nb, barriers, 0, NULL);
        return;
    }
    vka_command *m = vka_capture_append(ctx, capture, VKA_COMMAND_BARRIER);
    if (m) {
        m->src_stages = src;
        m->dst_stages = dst;
        m->n_barriers = nb;
        memcpy(m->barriers, barriers, nb * sizeof barriers[0]);
    }
}

void vka_sync(struct vkattn_context *ctx, VkCommandBuffer cmd, const vka_use *in, uint32_t n_in)
{
    if (vka_is_dry(cmd)) /* a prepare: nothing recorded, nothing to track */
        return;
    vka_capture *capture = vka_capture_of(ctx, cmd);
    vka_use uses[VKA_MAX_USES];
    VkBufferMemoryBarrier barriers[VKA_MAX_USES];
    uint32_t nb = 0;
    VkPipelineStageFlags src = 0, dst = 0;

    vka_mutex_lock(&ctx->tracker.lock);
    uint32_t n = merge_uses(in, n_in < VKA_MAX_USES ? n_in : VKA_MAX_USES, uses);
    for (uint32_t i = 0; i < n; i++) {
        vka_access *s = uses[i].state;
        if (!s)
            continue;
        enter_recording(ctx, s, cmd, capture);
        /* A use of part of a shared range leaves the rest as it was: its
         * writes add to the state instead of replacing it, and its barrier
         * makes nothing visible beyond its own bytes. */
        const vka_tracked *r = range_of(ctx, s);
        bool whole = !r || (uses[i].offset <= r->offset &&
                            uses[i].offset + uses[i].size >= r->offset + r->size);
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
        if (uses[i].write && whole) {
            s->write_stage = uses[i].stage;
            s->write_access = uses[i].access & VKA_WRITE_ACCESS;
            s->visible_stages = 0;
            s->read_stages = 0;
        } else if (uses[i].write) {
            s->write_stage |= uses[i].stage;
            s->write_access |= uses[i].access & VKA_WRITE_ACCESS;
            s->visible_stages = 0;
            s->read_stages |= uses[i].stage;
        } else {
            if (wait && whole)
                s->visible_stages |= uses[i].stage;
            s->read_stages |= uses[i].stage;
        }
    }
    vka_mutex_unlock(&ctx->tracker.lock);
    if (nb)
        emit_barriers(ctx, cmd, capture, src, dst, barriers, nb);
}

void vka_access_reset(struct vkattn_context *ctx, vka_access *state)
{
    vka_mutex_lock(&ctx->tracker.lock);
    vka_access *s = resolve(state);
    vka_access *alias = s->alias;
    memset(s, 0, sizeof *s);
    s->alias = alias;
    vka_mutex_unlock(&ctx->tracker.lock);
}

vka_access vka_access_get(struct vkattn_context *ctx, vka_access *state)
{
    vka_mutex_lock(&ctx->tracker.lock);
    vka_access copy = *resolve(state);
    vka_mutex_unlock(&ctx->tracker.lock);
    return copy;
}

void vka_access_assume(struct vkattn_context *ctx, vka_access *state, VkCommandBuffer cmd,
                       VkPipelineStageFlags stage, VkAccessFlags access)
{
    vka_capture *capture = vka_capture_of(ctx, cmd);
    vka_mutex_lock(&ctx->tracker.lock);
    vka_access *s = resolve(state);
    enter_recording(ctx, s, cmd, capture);
    if (access & VKA_WRITE_ACCESS) {
        /* the app's write replaces vkattn's: it ordered itself after them */
        s->write_stage = stage;
        s->write_access = access & VKA_WRITE_ACCESS;
        s->visible_stages = 0;
        s->read_stages = 0;
    } else {
        s->read_stages |= stage;
    }
    vka_mutex_unlock(&ctx->tracker.lock);
}

/* An ownership transfer's state change: the access vkattn last made of the
 * range (after entering this recording) becomes *last, and the state then
 * holds none: after a release the bytes are the other family's (vkattn's next
 * use follows an acquire); after an acquire, vkattn's later commands sit in
 * its barrier's second scope, which makes the bytes visible to them. */
static void transfer_state(struct vkattn_context *ctx, vka_access *state, VkCommandBuffer cmd,
                           vka_capture *capture, vka_access *last)
{
    vka_mutex_lock(&ctx->tracker.lock);
    vka_access *s = resolve(state);
    enter_recording(ctx, s, cmd, capture);
    *last = *s;
    s->write_stage = 0;
    s->write_access = 0;
    s->visible_stages = 0;
    s->read_stages = 0;
    vka_mutex_unlock(&ctx->tracker.lock);
}

/* Either half of an ownership transfer of `state`'s range between this
 * queue's family and `family` (vk/barrier.h says which scopes each takes). */
static void transfer_family(struct vkattn_context *ctx, vka_access *state, VkCommandBuffer cmd,
                            VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size,
                            uint32_t family, bool release)
{
    if (vka_is_dry(cmd))
        return;
    vka_capture *capture = vka_capture_of(ctx, cmd);
    vka_access last;
    transfer_state(ctx, state, cmd, capture, &last);
    const uint32_t own = ctx->queue_family_index;
    VkBufferMemoryBarrier b = {.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER,
                               .srcQueueFamilyIndex = release ? own : family,
                               .dstQueueFamilyIndex = release ? family : own,
                               .buffer = buffer,
                               .offset = offset,
                               .size = size};
    if (release) {
        b.srcAccessMask = last.write_access;
        const VkPipelineStageFlags src = last.write_stage | last.read_stages;
        emit_barriers(ctx, cmd, capture, src ? src : VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                      VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, &b, 1);
    } else {
        b.dstAccessMask = OWN_WRITES | VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT;
        emit_barriers(ctx, cmd, capture, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, OWN_STAGES, &b, 1);
    }
}

void vka_release_family(struct vkattn_context *ctx, vka_access *state, VkCommandBuffer cmd,
                        VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size, uint32_t family)
{
    transfer_family(ctx, state, cmd, buffer, offset, size, family, true);
}

void vka_acquire_family(struct vkattn_context *ctx, vka_access *state, VkCommandBuffer cmd,
                        VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size, uint32_t family)
{
    transfer_family(ctx, state, cmd, buffer, offset, size, family, false);
}

bool vka_access_idle(struct vkattn_context *ctx, vka_access *state)
{
    vka_access s = vka_access_get(ctx, state);
    return !s.cmd || s.cmd == ctx->command_buffer;
}
