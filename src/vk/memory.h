/* Device buffers. Each vka_buffer is its own VkBuffer (offset 0 in it, so a
 * tensor's view and the descriptor cache see exactly what they did when every
 * buffer had its own memory), bound at an offset inside memory from one of:
 *
 *   - a block: a large VkDeviceMemory per memory type that vkattn
 *     sub-allocates (vk/suballoc.h), so hundreds of tensors cost a handful of
 *     vkAllocateMemory calls and stay far below maxMemoryAllocationCount;
 *   - a dedicated VkDeviceMemory, for a buffer of half a block or more;
 *   - the app's allocator (vkattn_context_desc.allocator), asked for every
 *     buffer instead of the two above.
 *
 * Block sizes follow VMA: the preferred size is heap/8 for heaps up to 1 GiB,
 * else 256 MiB; while a memory type has only small blocks a new one starts at
 * 1/8, 1/4, 1/2 of that, and a failed block allocation is retried at half
 * size. An emptied block is kept for reuse only if no other block is empty,
 * so at most one empty block stays with the driver. Blocks hold buffers only,
 * never images, so bufferImageGranularity does not apply; offsets honour each
 * buffer's VkMemoryRequirements.alignment.
 *
 * Accounting (vkattn_context_memory_stats): used_bytes is the memory bound to
 * live buffers (their VkMemoryRequirements.size), which is what
 * vkattn_context_memory_usage reports; device_bytes and device_allocations
 * count the VkDeviceMemory vkattn itself holds from the driver. */
#ifndef VKA_MEMORY_H
#define VKA_MEMORY_H

#include "vk/suballoc.h"
#include "vk/vk.h"
#include "vkattn/context.h"

#include <stdbool.h>

struct vkattn_context;
struct vka_block;

typedef enum vka_memory_kind {
    VKA_MEMORY_DEVICE = 0,  /* device-local; mapped too when the device is unified */
    VKA_MEMORY_STAGING = 1, /* host-visible, coherent: for copies in and out */
} vka_memory_kind;

typedef struct vka_buffer {
    VkBuffer buffer;
    VkDeviceSize size;
    VkDeviceSize allocated; /* bytes of device memory bound, for usage accounting */
    void *mapped;           /* non-NULL when host-visible: byte 0 of the buffer */
    /* where the memory came from: exactly one of these is set once created */
    struct vka_block *block;      /* a shared block, at `range` */
    vka_range range;
    VkDeviceMemory dedicated;     /* its own VkDeviceMemory */
    vkattn_allocation app;        /* the app's allocator (app.memory non-NULL) */
} vka_buffer;

/* The context's memory state (ctx->mem). */
typedef struct vka_memory {
    vkattn_allocator app;        /* app.allocate NULL: vkattn allocates itself */
    struct vka_block *blocks;    /* every memory type's blocks, newest first */
    uint64_t device_allocations; /* live VkDeviceMemory: blocks + dedicated */
    uint64_t dedicated_allocations;
    uint64_t device_bytes;
    uint64_t app_allocations;
    uint64_t buffers;
} vka_memory;

vkattn_result vka_buffer_create(struct vkattn_context *ctx, VkDeviceSize size, vka_memory_kind kind,
                                vka_buffer *out);
void vka_buffer_destroy(struct vkattn_context *ctx, vka_buffer *buf);

/* Frees every block (context destruction, after the last buffer). */
void vka_memory_destroy(struct vkattn_context *ctx);

#endif /* VKA_MEMORY_H */
