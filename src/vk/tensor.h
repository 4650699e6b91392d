/* The tensor's private state, for ops that bind tensors. */
#ifndef VKA_TENSOR_H
#define VKA_TENSOR_H

#include "vkattn/tensor.h"

#include "vk/barrier.h"
#include "vk/memory.h"

struct vkattn_tensor {
    struct vkattn_context *ctx;
    uint32_t rank;
    uint32_t dims[VKATTN_MAX_RANK];
    uint64_t count;
    VkBuffer buffer;
    VkDeviceSize offset; /* bytes into buffer */
    VkDeviceSize bytes;  /* count * 4 */
    vka_buffer owned;    /* memory vkattn allocated, or zero for a wrapped view */
    vka_tracked *range;  /* the access state of its memory, shared with overlapping views */
    struct vkattn_tensor *prev, *next; /* the context's live tensors */
};

/* Validates `t` for use as a `what` argument of `caller`: non-NULL, same
 * context, and at least `count` elements. */
vkattn_result vka_tensor_check(struct vkattn_context *ctx, const struct vkattn_tensor *t,
                               uint64_t count, const char *caller, const char *what);

/* Scratch tensors ops allocate for themselves. */
vkattn_result vka_tensor_create_1d(struct vkattn_context *ctx, uint64_t count,
                                   struct vkattn_tensor **out);

#endif /* VKA_TENSOR_H */
