/* Tensors: arrays of an element type (core/dtype.h) in vkattn's memory or in a range of an app's buffer. */
#include "vk/tensor.h"

#include "core/check.h"
#include "core/dtype.h"
#include "core/error.h"
#include "vk/context.h"
#include "vk/record_mode.h"
#include "vk/submit.h"

#include <stdlib.h>
#include <string.h>

/* Bytes of `count` elements, padded to whole 32-bit words: vkCmdFillBuffer
 * and the shaders' packed-f16 words need them (no overflow: count is checked
 * against UINT64_MAX / 4 first). */
static uint64_t padded_bytes(uint64_t count, vkattn_dtype dtype)
{
    return (count * vka_dtype_size(dtype) + 3) & ~(uint64_t)3;
}

static vkattn_result check_desc(vkattn_context *ctx, const vkattn_tensor_desc *desc,
                                const char *caller, uint64_t *count)
{
    *count = 0; /* set on every path: the compiler cannot see vka_fail never returns success */
    if (!desc)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: desc is NULL", caller);
    if (!vka_dtype_tensor(desc->dtype))
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: desc->dtype is %d; must be " VKA_DTYPE_TENSOR_LIST, caller,
                        (int)desc->dtype);
    if (desc->rank < 1 || desc->rank > VKATTN_MAX_RANK)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: rank is %u; must be 1..%d", caller,
                        desc->rank, VKATTN_MAX_RANK);
    uint64_t n = 1;
    for (uint32_t i = 0; i < desc->rank; i++) {
        if (desc->dims[i] == 0)
            return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: dims[%u] is 0; must be >= 1",
                            caller, i);
        if (!vka_mul_u64(n, desc->dims[i], &n) || n > UINT64_MAX / sizeof(float))
            return vka_fail(ctx, VKATTN_ERROR_SIZE_OVERFLOW, "%s: the element count overflows",
                            caller);
    }
    const uint64_t bytes = padded_bytes(n, desc->dtype);
    if (bytes > vka_max_range(ctx))
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: %llu bytes exceed the device's maxStorageBufferRange (%llu bytes)",
                        caller, (unsigned long long)bytes,
                        (unsigned long long)vka_max_range(ctx));
    *count = n;
    return VKATTN_SUCCESS;
}

static vkattn_result tensor_alloc(vkattn_context *ctx, const vkattn_tensor_desc *desc,
                                  uint64_t count, vkattn_tensor **out)
{
    vkattn_tensor *t = calloc(1, sizeof *t);
    if (!t)
        return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "out of host memory (tensor)");
    t->ctx = ctx;
    t->rank = desc->rank;
    memcpy(t->dims, desc->dims, sizeof t->dims);
    for (uint32_t i = desc->rank; i < VKATTN_MAX_RANK; i++)
        t->dims[i] = 0;
    t->count = count;
    t->dtype = desc->dtype;
    t->elem = vka_dtype_size(desc->dtype);
    t->bytes = padded_bytes(count, desc->dtype);
    vka_lock(ctx); /* recording threads create scratch tensors */
    t->next = ctx->tensors;
    if (t->next)
        t->next->prev = t;
    ctx->tensors = t;
    vka_unlock(ctx);
    *out = t;
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_tensor_create(vkattn_context *ctx, const vkattn_tensor_desc *desc,
                                   vkattn_tensor **out)
{
    VKA_CREATE_ARGS(ctx, out);
    uint64_t count;
    vkattn_result r = check_desc(ctx, desc, __func__, &count);
    if (r != VKATTN_SUCCESS)
        return r;
    vkattn_tensor *t;
    if ((r = tensor_alloc(ctx, desc, count, &t)) != VKATTN_SUCCESS)
        return r;
    if ((r = vka_buffer_create(ctx, t->bytes, VKA_MEMORY_DEVICE, &t->owned)) != VKATTN_SUCCESS) {
        vkattn_tensor_destroy(t);
        return r;
    }
    t->buffer = t->owned.buffer;
    if ((r = vka_track_get(ctx, t->buffer, t->offset, t->bytes, &t->range)) != VKATTN_SUCCESS) {
        vkattn_tensor_destroy(t);
        return r;
    }
    *out = t;
    return VKATTN_SUCCESS;
}

vkattn_result vka_tensor_create_1d(vkattn_context *ctx, uint64_t count, vkattn_tensor **out)
{
    return vka_tensor_create_1d_typed(ctx, count, VKATTN_DTYPE_F32, out);
}

vkattn_result vka_tensor_create_1d_typed(vkattn_context *ctx, uint64_t count, vkattn_dtype dtype,
                                         vkattn_tensor **out)
{
    if (count > UINT32_MAX)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "a scratch tensor of %llu elements is too large for this device",
                        (unsigned long long)count);
    vkattn_tensor_desc desc = {.rank = 1, .dims = {(uint32_t)count}, .dtype = dtype};
    return vkattn_tensor_create(ctx, &desc, out);
}

vkattn_result vka_tensor_create_scratch(vkattn_context *ctx, uint64_t count, vkattn_dtype dtype,
                                        vkattn_tensor **out)
{
    vkattn_result r = vka_tensor_create_1d_typed(ctx, count, dtype, out);
    if (r == VKATTN_SUCCESS) {
        vka_lock(ctx);
        ctx->stats.scratch_allocations++;
        vka_unlock(ctx);
    }
    return r;
}

vkattn_result vkattn_tensor_wrap(vkattn_context *ctx, const vkattn_tensor_desc *desc,
                                 const vkattn_buffer_view *view, vkattn_tensor **out)
{
    if (!out)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: out is NULL", __func__);
    *out = NULL;
    if (!ctx || !view || !view->buffer)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", __func__,
                        !ctx ? "ctx" : !view ? "view" : "view->buffer");
    uint64_t count;
    vkattn_result r = check_desc(ctx, desc, __func__, &count);
    if (r != VKATTN_SUCCESS)
        return r;
    uint32_t align = ctx->info.min_storage_buffer_offset_alignment;
    if (align && view->offset % align)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: view->offset %llu is not a multiple of minStorageBufferOffsetAlignment "
                        "(%u)",
                        __func__, (unsigned long long)view->offset, align);
    if (vka_dtype_info_of(desc->dtype)->is_16bit && view->offset % 4) /* packed paths read words */
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: view->offset %llu is not a multiple of 4, which %s view needs",
                        __func__, (unsigned long long)view->offset, vka_dtype_a_name(desc->dtype));
    const uint64_t bytes = padded_bytes(count, desc->dtype);
    if (view->size && view->size < bytes)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: view->size %llu is smaller than the tensor (%llu bytes)", __func__,
                        (unsigned long long)view->size, (unsigned long long)bytes);
    vkattn_tensor *t;
    if ((r = tensor_alloc(ctx, desc, count, &t)) != VKATTN_SUCCESS)
        return r;
    t->buffer = view->buffer;
    t->offset = view->offset;
    /* views of the same memory share one access state (vk/barrier.h) */
    if ((r = vka_track_get(ctx, t->buffer, t->offset, t->bytes, &t->range)) != VKATTN_SUCCESS) {
        vkattn_tensor_destroy(t);
        return r;
    }
    *out = t;
    return VKATTN_SUCCESS;
}

void vkattn_tensor_destroy(vkattn_tensor *t)
{
    if (!t)
        return;
    struct vkattn_context *ctx = t->ctx;
    vka_lock(ctx);
    if (t->prev)
        t->prev->next = t->next;
    else
        ctx->tensors = t->next;
    if (t->next)
        t->next->prev = t->prev;
    /* the GPU is done with the tensor: sets that bind it can go */
    vka_descriptors_forget(ctx, t);
    vka_unlock(ctx);
    if (t->range)
        vka_track_put(ctx, t->range);
    if (t->owned.buffer)
        vka_buffer_destroy(ctx, &t->owned);
    free(t);
}

vkattn_result vka_tensor_check_types(vkattn_context *ctx, const vkattn_tensor *t, uint64_t count,
                                     const char *caller, const char *what, unsigned allowed)
{
    if (!t)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", caller, what);
    if (t->ctx != ctx)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s belongs to another context",
                        caller, what);
    if (!(allowed & VKA_DTYPE_BIT(t->dtype)))
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED,
                        "%s: %s is %s tensor; %s is not supported by %s yet", caller, what,
                        vka_dtype_a_name(t->dtype), vka_dtype_name(t->dtype), caller);
    if (t->count < count)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s has %llu elements; the op needs %llu", caller, what,
                        (unsigned long long)t->count, (unsigned long long)count);
    return VKATTN_SUCCESS;
}

vkattn_result vka_tensor_check(vkattn_context *ctx, const vkattn_tensor *t, uint64_t count,
                               const char *caller, const char *what)
{
    return vka_tensor_check_types(ctx, t, count, caller, what, VKA_DTYPE_BIT(VKATTN_DTYPE_F32));
}

static vkattn_result check_range(const vkattn_tensor *t, const void *data, uint64_t first,
                                 uint64_t count, const char *caller)
{
    if (!t)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: t is NULL", caller);
    if (!data && count)
        return vka_fail(t->ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: data is NULL", caller);
    if (first > t->count || count > t->count - first)
        return vka_fail(t->ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: elements [%llu, %llu + %llu) are outside the tensor's %llu", caller,
                        (unsigned long long)first, (unsigned long long)first,
                        (unsigned long long)count, (unsigned long long)t->count);
    return VKATTN_SUCCESS;
}

/* Records one tracked access of the tensor's range (a barrier if needed). */
static void touch(vkattn_tensor *t, VkCommandBuffer cmd, VkPipelineStageFlags stage,
                  VkAccessFlags access, bool write)
{
    vka_use use = {.buffer = t->buffer, .offset = t->offset, .size = t->bytes,
                   .state = &t->range->access, .stage = stage, .access = access, .write = write};
    vka_sync(t->ctx, cmd, &use, 1);
}

/* Staging copy in either direction, submitted and waited for. */
static vkattn_result staged_copy(vkattn_tensor *t, void *host, uint64_t first, uint64_t count,
                                 bool upload)
{
    vkattn_context *ctx = t->ctx;
    VkDeviceSize bytes = count * t->elem; /* vkCmdCopyBuffer needs no alignment */
    vka_buffer staging;
    vkattn_result r = vka_buffer_create(ctx, bytes, VKA_MEMORY_STAGING, &staging);
    if (r != VKATTN_SUCCESS)
        return r;
    if (upload)
        memcpy(staging.mapped, host, bytes);
    VkCommandBuffer cmd;
    if ((r = vka_begin(ctx, &cmd)) != VKATTN_SUCCESS) {
        vka_buffer_destroy(ctx, &staging);
        return r;
    }
    touch(t, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
          upload ? VK_ACCESS_TRANSFER_WRITE_BIT : VK_ACCESS_TRANSFER_READ_BIT, upload);
    VkBufferCopy region = {.srcOffset = upload ? 0 : t->offset + first * t->elem,
                           .dstOffset = upload ? t->offset + first * t->elem : 0,
                           .size = bytes};
    ctx->vk.vkCmdCopyBuffer(cmd, upload ? staging.buffer : t->buffer,
                            upload ? t->buffer : staging.buffer, 1, &region);
    if (!upload) {
        /* fresh memory: nothing earlier to order against */
        vka_access staging_state = {.cmd = cmd, .serial = ctx->oneshot_serial};
        vka_use w = {.buffer = staging.buffer, .size = bytes, .state = &staging_state,
                     .stage = VK_PIPELINE_STAGE_TRANSFER_BIT,
                     .access = VK_ACCESS_TRANSFER_WRITE_BIT, .write = true};
        vka_sync(ctx, cmd, &w, 1);
        vka_use h = {.buffer = staging.buffer, .size = bytes, .state = &staging_state,
                     .stage = VK_PIPELINE_STAGE_HOST_BIT, .access = VK_ACCESS_HOST_READ_BIT};
        vka_sync(ctx, cmd, &h, 1);
    }
    r = vka_end_submit_wait(ctx, cmd, VKATTN_SUCCESS);
    if (r == VKATTN_SUCCESS && !upload)
        memcpy(host, staging.mapped, bytes);
    vka_buffer_destroy(ctx, &staging);
    return r;
}

/* Whether the host may touch the tensor's mapping now: only vkattn's own
 * one-shot work (always waited for) has used its memory. After a recording into
 * an app's command buffer, that buffer may still be executing: then copies go
 * through the queue, which orders them after everything submitted before. */
static bool host_may_touch(const vkattn_tensor *t)
{
    return t->owned.mapped && vka_access_idle(t->ctx, &t->range->access);
}

static vkattn_result upload_raw(vkattn_tensor *t, const void *data, uint64_t first, uint64_t count)
{
    if (host_may_touch(t)) {
        /* no GPU work can be reading or writing it; the next submit makes
         * these host writes visible to the device */
        memcpy((char *)t->owned.mapped + first * t->elem, data, count * t->elem);
        vka_access_reset(t->ctx, &t->range->access);
        return VKATTN_SUCCESS;
    }
    return staged_copy(t, (void *)data, first, count, true);
}

static vkattn_result download_raw(vkattn_tensor *t, void *data, uint64_t first, uint64_t count)
{
    vkattn_result r;
    if (!t->owned.mapped)
        return staged_copy(t, data, first, count, false);
    if (!host_may_touch(t) || vka_access_get(t->ctx, &t->range->access).write_stage) {
        /* wait for earlier work on the queue and make device writes visible
         * to the host */
        VkCommandBuffer cmd;
        if ((r = vka_begin(t->ctx, &cmd)) != VKATTN_SUCCESS)
            return r;
        touch(t, cmd, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT, false);
        if ((r = vka_end_submit_wait(t->ctx, cmd, VKATTN_SUCCESS)) != VKATTN_SUCCESS)
            return r;
    }
    memcpy(data, (const char *)t->owned.mapped + first * t->elem, count * t->elem);
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_tensor_upload_raw(vkattn_tensor *t, const void *data, uint64_t first,
                                       uint64_t count)
{
    vkattn_result r = check_range(t, data, first, count, __func__);
    if (r != VKATTN_SUCCESS || count == 0)
        return r;
    return upload_raw(t, data, first, count);
}

vkattn_result vkattn_tensor_download_raw(vkattn_tensor *t, void *data, uint64_t first,
                                         uint64_t count)
{
    vkattn_result r = check_range(t, data, first, count, __func__);
    if (r != VKATTN_SUCCESS || count == 0)
        return r;
    return download_raw(t, data, first, count);
}

/* Tensors not stored as f32 convert through a host copy of their elements
 * (core/dtype.h's from_f32, to_f32); a range too large for the host's address
 * space cannot be passed as a host array anyway. */
static vkattn_result host_copy(vkattn_tensor *t, uint64_t count, const char *caller, void **out)
{
    *out = count <= SIZE_MAX / t->elem ? malloc((size_t)count * t->elem) : NULL;
    if (!*out)
        return vka_fail(t->ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY,
                        "%s: out of host memory (%s conversion of %llu elements)", caller,
                        vka_dtype_name(t->dtype), (unsigned long long)count);
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_tensor_upload(vkattn_tensor *t, const float *data, uint64_t first,
                                   uint64_t count)
{
    vkattn_result r = check_range(t, data, first, count, __func__);
    if (r != VKATTN_SUCCESS || count == 0)
        return r;
    const vka_dtype_info *d = vka_dtype_info_of(t->dtype);
    if (!d->from_f32)
        return upload_raw(t, data, first, count);
    void *h;
    if ((r = host_copy(t, count, __func__, &h)))
        return r;
    d->from_f32(h, data, (size_t)count);
    r = upload_raw(t, h, first, count);
    free(h);
    return r;
}

vkattn_result vkattn_tensor_download(vkattn_tensor *t, float *data, uint64_t first, uint64_t count)
{
    vkattn_result r = check_range(t, data, first, count, __func__);
    if (r != VKATTN_SUCCESS || count == 0)
        return r;
    const vka_dtype_info *d = vka_dtype_info_of(t->dtype);
    if (!d->to_f32)
        return download_raw(t, data, first, count);
    void *h;
    if ((r = host_copy(t, count, __func__, &h)))
        return r;
    if ((r = download_raw(t, h, first, count)) == VKATTN_SUCCESS)
        d->to_f32(data, h, (size_t)count);
    free(h);
    return r;
}

vkattn_result vkattn_tensor_fill(vkattn_tensor *t, float value)
{
    if (!t)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: t is NULL", __func__);
    /* one 32-bit word of value repeated (4 / size elements): bytes is whole words */
    const vka_dtype_info *d = vka_dtype_info_of(t->dtype);
    const float word_of[4] = {value, value, value, value};
    uint32_t bits;
    if (d->from_f32)
        d->from_f32(&bits, word_of, 4 / d->size);
    else
        memcpy(&bits, &value, sizeof bits);
    VkCommandBuffer cmd;
    vkattn_result r = vka_begin(t->ctx, &cmd);
    if (r != VKATTN_SUCCESS)
        return r;
    touch(t, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, true);
    t->ctx->vk.vkCmdFillBuffer(cmd, t->buffer, t->offset, t->bytes, bits);
    return vka_end_submit_wait(t->ctx, cmd, VKATTN_SUCCESS);
}

vkattn_tensor_info vkattn_tensor_get_info(const vkattn_tensor *t)
{
    vkattn_tensor_info info = {0};
    if (!t)
        return info;
    info.desc.rank = t->rank;
    for (uint32_t a = 0; a < t->rank; a++)
        info.desc.dims[a] = t->dims[a];
    info.desc.dtype = t->dtype;
    info.count = t->count;
    info.buffer = (vkattn_buffer_view){.buffer = t->buffer, .offset = t->offset, .size = t->bytes};
    return info;
}

/* The arguments of a hand-over; `stage_name` and `family_name` name the
 * stage and queue-family arguments. */
static vkattn_result check_handover(const vkattn_tensor *t, VkCommandBuffer cmd,
                                    VkPipelineStageFlags stage, uint32_t family,
                                    const char *caller, const char *stage_name,
                                    const char *family_name)
{
    if (!t)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: t is NULL", caller);
    vkattn_result r = vka_require_command_buffer(t->ctx, caller, cmd);
    if (r != VKATTN_SUCCESS)
        return r;
    if (!stage)
        return vka_fail(t->ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is 0; name the app's stage",
                        caller, stage_name);
    if (family != VK_QUEUE_FAMILY_IGNORED && family >= t->ctx->queue_family_count)
        return vka_fail(t->ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s %u is out of range (the device has %u queue families; "
                        "VK_QUEUE_FAMILY_IGNORED for no ownership transfer)",
                        caller, family_name, family, t->ctx->queue_family_count);
    return VKATTN_SUCCESS;
}

/* Whether a hand-over with `family` transfers ownership: another family than
 * the context's (equal families, or none named, are a plain hand-over). */
static bool transfers(const vkattn_tensor *t, uint32_t family)
{
    return family != VK_QUEUE_FAMILY_IGNORED && family != t->ctx->queue_family_index;
}

vkattn_result vkattn_tensor_release(vkattn_tensor *t, VkCommandBuffer cmd,
                                    VkPipelineStageFlags dst_stage, VkAccessFlags dst_access,
                                    uint32_t dst_family)
{
    vkattn_result r = check_handover(t, cmd, dst_stage, dst_family, __func__,
                                     "dst_stage", "dst_family");
    if (r != VKATTN_SUCCESS)
        return r;
    if (transfers(t, dst_family)) {
        vka_release_family(t->ctx, &t->range->access, cmd, t->buffer, t->offset, t->bytes,
                           dst_family);
        return VKATTN_SUCCESS;
    }
    /* the app's access, as if it were vkattn's: the barrier is the one the
     * hazard needs, and the state then says the app's stage used it */
    touch(t, cmd, dst_stage, dst_access, (dst_access & VKA_WRITE_ACCESS) != 0);
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_tensor_acquire(vkattn_tensor *t, VkCommandBuffer cmd,
                                    VkPipelineStageFlags src_stage, VkAccessFlags src_access,
                                    uint32_t src_family)
{
    vkattn_result r = check_handover(t, cmd, src_stage, src_family, __func__,
                                     "src_stage", "src_family");
    if (r != VKATTN_SUCCESS)
        return r;
    if (transfers(t, src_family)) {
        vka_acquire_family(t->ctx, &t->range->access, cmd, t->buffer, t->offset, t->bytes,
                           src_family);
        return VKATTN_SUCCESS;
    }
    vka_access_assume(t->ctx, &t->range->access, cmd, src_stage, src_access);
    return VKATTN_SUCCESS;
}

vkattn_result vka_check_written_distinct(struct vkattn_context *ctx, const char *caller,
                                         const struct vkattn_tensor *const *all,
                                         const char *const *names, size_t n,
                                         size_t first_written)
{
    for (size_t w = first_written; w < n; w++)
        for (size_t o = 0; o < n; o++)
            if (o != w && all[w] && all[w] == all[o])
                return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                                "%s: %s is also bound as %s; written tensors must be distinct",
                                caller, names[w], names[o]);
    return VKATTN_SUCCESS;
}
