/* Buffers bound into sub-allocated blocks, dedicated memory or the app's
 * allocator: see memory.h. */
#include "vk/memory.h"

#include "core/error.h"
#include "vk/context.h"

#include <stdlib.h>
#include <string.h>

#define MIB (1024ull * 1024ull)
#define LARGE_HEAP (1024ull * MIB)
#define MAX_BLOCK (256ull * MIB)
#define NEW_BLOCK_SHIFT_MAX 3 /* first blocks of a type: 1/8, 1/4, 1/2 of the preferred size */

typedef struct vka_block {
    VkDeviceMemory memory;
    uint32_t type;
    void *mapped; /* the whole block, mapped once when host-visible */
    vka_suballoc ranges;
    struct vka_block *next;
} vka_block;

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

static bool choose_type(struct vkattn_context *ctx, uint32_t type_bits, vka_memory_kind kind,
                        uint32_t *type)
{
    const VkPhysicalDeviceMemoryProperties *mp = &ctx->memory_properties;
    const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                       VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    if (kind == VKA_MEMORY_STAGING)
        return find_type(mp, type_bits, host | VK_MEMORY_PROPERTY_HOST_CACHED_BIT, type) ||
               find_type(mp, type_bits, host, type);
    if (ctx->info.unified_memory)
        return find_type(mp, type_bits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | host, type);
    return find_type(mp, type_bits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, type) ||
           find_type(mp, type_bits, 0, type);
}

static bool host_visible(struct vkattn_context *ctx, uint32_t type)
{
    return ctx->memory_properties.memoryTypes[type].propertyFlags &
           VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
}

/* VMA's preferred block size: an eighth of a small heap, else 256 MiB. */
static uint64_t preferred_block_size(struct vkattn_context *ctx, uint32_t type)
{
    const VkPhysicalDeviceMemoryProperties *mp = &ctx->memory_properties;
    uint64_t heap = mp->memoryHeaps[mp->memoryTypes[type].heapIndex].size;
    return heap <= LARGE_HEAP ? heap / 8 : MAX_BLOCK;
}

static vkattn_result out_of_memory(struct vkattn_context *ctx, VkResult vr, VkDeviceSize size,
                                   const char *what)
{
    return vka_fail(ctx,
                    vr == VK_ERROR_OUT_OF_DEVICE_MEMORY || vr == VK_ERROR_OUT_OF_HOST_MEMORY
                        ? VKATTN_ERROR_OUT_OF_DEVICE_MEMORY
                        : VKATTN_ERROR_VULKAN,
                    "allocating %llu bytes of device memory (%s) failed (VkResult %d)",
                    (unsigned long long)size, what, (int)vr);
}

/* vkAllocateMemory, mapped whole when host-visible; counted. */
static VkResult allocate_memory(struct vkattn_context *ctx, VkDeviceSize size, uint32_t type,
                                VkDeviceMemory *memory, void **mapped)
{
    VkMemoryAllocateInfo info = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                 .allocationSize = size, .memoryTypeIndex = type};
    *mapped = NULL;
    VkResult vr = ctx->vk.vkAllocateMemory(ctx->device, &info, NULL, memory);
    if (vr != VK_SUCCESS)
        return vr;
    if (host_visible(ctx, type))
        vr = ctx->vk.vkMapMemory(ctx->device, *memory, 0, VK_WHOLE_SIZE, 0, mapped);
    if (vr != VK_SUCCESS) {
        ctx->vk.vkFreeMemory(ctx->device, *memory, NULL);
        *memory = VK_NULL_HANDLE;
        return vr;
    }
    ctx->mem.device_allocations++;
    ctx->mem.device_bytes += size;
    return VK_SUCCESS;
}

static void free_memory(struct vkattn_context *ctx, VkDeviceMemory memory, VkDeviceSize size)
{
    ctx->vk.vkFreeMemory(ctx->device, memory, NULL); /* unmaps implicitly */
    ctx->mem.device_allocations--;
    ctx->mem.device_bytes -= size;
}

/* A new block of `type` for a request of `need` bytes: VMA's sizes, smaller
 * first while the type's blocks are small, halved on failure. */
static vkattn_result block_create(struct vkattn_context *ctx, uint32_t type, VkDeviceSize need,
                                  vka_block **out)
{
    uint64_t preferred = preferred_block_size(ctx, type), largest = 0;
    for (vka_block *b = ctx->mem.blocks; b; b = b->next)
        if (b->type == type && b->ranges.size > largest)
            largest = b->ranges.size;
    uint64_t size = preferred;
    for (int i = 0; i < NEW_BLOCK_SHIFT_MAX; i++) {
        uint64_t smaller = size / 2;
        if (smaller > largest && smaller >= need * 2)
            size = smaller;
    }
    vka_block *b = calloc(1, sizeof *b);
    if (!b || !vka_suballoc_init(&b->ranges, size)) {
        free(b);
        return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "out of host memory (memory block)");
    }
    VkResult vr;
    while ((vr = allocate_memory(ctx, size, type, &b->memory, &b->mapped)) != VK_SUCCESS &&
           size / 2 >= need)
        size /= 2;
    if (vr != VK_SUCCESS) {
        vka_suballoc_destroy(&b->ranges);
        free(b);
        return out_of_memory(ctx, vr, size, "a memory block");
    }
    b->ranges.size = size;
    b->ranges.free[0].size = size;
    b->type = type;
    b->next = ctx->mem.blocks;
    ctx->mem.blocks = b;
    *out = b;
    return VKATTN_SUCCESS;
}

static void block_destroy(struct vkattn_context *ctx, vka_block *b)
{
    for (vka_block **p = &ctx->mem.blocks; *p; p = &(*p)->next)
        if (*p == b) {
            *p = b->next;
            break;
        }
    free_memory(ctx, b->memory, b->ranges.size);
    vka_suballoc_destroy(&b->ranges);
    free(b);
}

/* A range of a block of `type` (an existing one first); sets buf->block,
 * range and mapped. */
static vkattn_result from_block(struct vkattn_context *ctx, const VkMemoryRequirements *req,
                                uint32_t type, vka_buffer *buf)
{
    vka_block *b = ctx->mem.blocks;
    vka_suballoc_status st = VKA_SUBALLOC_NO_FIT;
    for (; b; b = b->next)
        if (b->type == type &&
            (st = vka_suballoc_alloc(&b->ranges, req->size, req->alignment, &buf->range)) !=
                VKA_SUBALLOC_NO_FIT)
            break;
    if (!b) {
        vkattn_result r = block_create(ctx, type, req->size, &b);
        if (r != VKATTN_SUCCESS)
            return r;
        st = vka_suballoc_alloc(&b->ranges, req->size, req->alignment, &buf->range);
        if (st != VKA_SUBALLOC_OK)
            block_destroy(ctx, b); /* it was empty */
    }
    if (st != VKA_SUBALLOC_OK)
        return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY,
                        "out of host memory (memory block ranges)");
    buf->block = b;
    if (b->mapped)
        buf->mapped = (char *)b->mapped + buf->range.offset;
    return VKATTN_SUCCESS;
}

/* Gives a range back; an emptied block goes back to the driver unless it is
 * the only empty one. */
static void to_block(struct vkattn_context *ctx, vka_buffer *buf)
{
    vka_block *b = buf->block;
    vka_suballoc_free(&b->ranges, buf->range);
    if (b->ranges.n_allocs)
        return;
    for (vka_block *o = ctx->mem.blocks; o; o = o->next)
        if (o != b && o->ranges.n_allocs == 0) {
            block_destroy(ctx, b);
            return;
        }
}

static vkattn_result from_app(struct vkattn_context *ctx, const VkMemoryRequirements *req,
                              uint32_t type, vka_memory_kind kind, vka_buffer *buf)
{
    const vkattn_allocator *a = &ctx->mem.app;
    vkattn_allocation_request q = {.device = ctx->device, .size = req->size,
                                   .alignment = req->alignment,
                                   .memory_type_bits = req->memoryTypeBits,
                                   .memory_type_index = type,
                                   .host_visible = kind == VKA_MEMORY_STAGING};
    vkattn_allocation got = {0};
    vkattn_result r = a->allocate(a->user, &q, &got);
    if (r != VKATTN_SUCCESS) {
        const char *name = vkattn_result_name(r);
        bool known = strcmp(name, "VKATTN_UNKNOWN_RESULT") != 0;
        return vka_fail(ctx, r < 0 && known ? r : VKATTN_ERROR_OUT_OF_DEVICE_MEMORY,
                        "the app's allocator could not allocate %llu bytes of device memory "
                        "(it returned %s, %d)",
                        (unsigned long long)req->size, name, (int)r);
    }
    const char *bad = !got.memory                                        ? "memory is NULL"
                      : req->alignment && got.offset % req->alignment    ? "offset is misaligned"
                      : q.host_visible && !got.mapped                    ? "mapped is NULL"
                                                                         : NULL;
    if (bad) {
        if (got.memory)
            a->free(a->user, &got);
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "the app's allocator answered a request for %llu bytes (alignment %llu%s) "
                        "with an allocation whose %s",
                        (unsigned long long)req->size, (unsigned long long)req->alignment,
                        q.host_visible ? ", host-visible" : "", bad);
    }
    buf->app = got;
    buf->mapped = got.mapped;
    ctx->mem.app_allocations++;
    return VKATTN_SUCCESS;
}

static vkattn_result allocate(struct vkattn_context *ctx, const VkMemoryRequirements *req,
                              vka_memory_kind kind, vka_buffer *buf)
{
    uint32_t type;
    if (!choose_type(ctx, req->memoryTypeBits, kind, &type))
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED, "no suitable memory type for a buffer");
    if (ctx->mem.app.allocate)
        return from_app(ctx, req, type, kind, buf);
    /* half a block or more: a block of its own would be mostly this buffer */
    if (req->size < preferred_block_size(ctx, type) / 2)
        return from_block(ctx, req, type, buf);
    VkResult vr = allocate_memory(ctx, req->size, type, &buf->dedicated, &buf->mapped);
    if (vr != VK_SUCCESS)
        return out_of_memory(ctx, vr, req->size, "a dedicated allocation");
    ctx->mem.dedicated_allocations++;
    return VKATTN_SUCCESS;
}

static void release(struct vkattn_context *ctx, vka_buffer *buf)
{
    if (buf->block) {
        to_block(ctx, buf);
    } else if (buf->dedicated) {
        free_memory(ctx, buf->dedicated, buf->allocated);
        ctx->mem.dedicated_allocations--;
    } else if (buf->app.memory) {
        ctx->mem.app.free(ctx->mem.app.user, &buf->app);
        ctx->mem.app_allocations--;
    }
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
    vka_lock(ctx); /* blocks are shared by threads that grow scratch */
    vkattn_result r = allocate(ctx, &req, kind, out);
    vka_unlock(ctx);
    if (r != VKATTN_SUCCESS) {
        ctx->vk.vkDestroyBuffer(ctx->device, out->buffer, NULL);
        *out = (vka_buffer){0};
        return r;
    }
    out->allocated = req.size;
    VkDeviceMemory memory = out->block       ? out->block->memory
                            : out->dedicated ? out->dedicated
                                             : out->app.memory;
    VkDeviceSize offset = out->block ? out->range.offset : out->app.offset;
    vr = ctx->vk.vkBindBufferMemory(ctx->device, out->buffer, memory, offset);
    if (vr != VK_SUCCESS) {
        vka_lock(ctx);
        release(ctx, out);
        vka_unlock(ctx);
        ctx->vk.vkDestroyBuffer(ctx->device, out->buffer, NULL);
        *out = (vka_buffer){0};
        return vka_vk_fail(ctx, vr, "vkBindBufferMemory");
    }
    out->size = size;
    vka_lock(ctx);
    ctx->mem.buffers++;
    ctx->memory_current += req.size;
    if (ctx->memory_current > ctx->memory_peak)
        ctx->memory_peak = ctx->memory_current;
    vka_unlock(ctx);
    return VKATTN_SUCCESS;
}

void vka_buffer_destroy(struct vkattn_context *ctx, vka_buffer *buf)
{
    if (!buf->buffer)
        return;
    /* the buffer goes before its memory: the app's free may reuse the range */
    ctx->vk.vkDestroyBuffer(ctx->device, buf->buffer, NULL);
    vka_lock(ctx); /* blocks are shared by threads that grow scratch */
    release(ctx, buf);
    ctx->mem.buffers--;
    ctx->memory_current -= buf->allocated;
    vka_unlock(ctx);
    *buf = (vka_buffer){0};
}

void vka_memory_destroy(struct vkattn_context *ctx)
{
    while (ctx->mem.blocks)
        block_destroy(ctx, ctx->mem.blocks);
}
