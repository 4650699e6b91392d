/* Device buffers: one VkBuffer with its own memory, mapped when host-visible. */
#ifndef VKA_MEMORY_H
#define VKA_MEMORY_H

#include "vk/vk.h"

#include <stdbool.h>

struct vkattn_context;

typedef enum vka_memory_kind {
    VKA_MEMORY_DEVICE = 0,  /* device-local; mapped too when the device is unified */
    VKA_MEMORY_STAGING = 1, /* host-visible, coherent: for copies in and out */
} vka_memory_kind;

typedef struct vka_buffer {
    VkBuffer buffer;
    VkDeviceMemory memory;
    VkDeviceSize size;
    VkDeviceSize allocated; /* bytes of device memory, for usage accounting */
    void *mapped; /* non-NULL when host-visible */
} vka_buffer;

vkattn_result vka_buffer_create(struct vkattn_context *ctx, VkDeviceSize size, vka_memory_kind kind,
                                vka_buffer *out);
void vka_buffer_destroy(struct vkattn_context *ctx, vka_buffer *buf);

#endif /* VKA_MEMORY_H */
