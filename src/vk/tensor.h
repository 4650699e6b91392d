/* The tensor's private state, for ops that bind tensors. */
#ifndef VKA_TENSOR_H
#define VKA_TENSOR_H

#include "vkattn/tensor.h"
#include "core/dtype.h"

#include "vk/barrier.h"
#include "vk/memory.h"

struct vkattn_tensor {
    struct vkattn_context *ctx;
    uint32_t rank;
    uint32_t dims[VKATTN_MAX_RANK];
    uint64_t count;
    vkattn_dtype dtype;
    uint32_t elem;       /* bytes per element: 4 or 2 */
    VkBuffer buffer;
    VkDeviceSize offset; /* bytes into buffer */
    VkDeviceSize bytes;  /* count * elem, padded to a multiple of 4 */
    vka_buffer owned;    /* memory vkattn allocated, or zero for a wrapped view */
    vka_tracked *range;  /* the access state of its memory, shared with overlapping views */
    struct vkattn_tensor *prev, *next; /* the context's live tensors */
};

/* Validates `t` for use as a `what` argument of `caller`: non-NULL, same
 * context, and at least `count` elements, of type f32 (an f16 tensor is
 * VKATTN_ERROR_UNSUPPORTED until the op supports it). */
vkattn_result vka_tensor_check(struct vkattn_context *ctx, const struct vkattn_tensor *t,
                               uint64_t count, const char *caller, const char *what);
/* As vka_tensor_check, for ops that take the element types in `allowed`, a
 * mask of VKA_DTYPE_BIT(VKATTN_DTYPE_*). */
#define VKA_DTYPE_BIT(dtype) (1u << (unsigned)(dtype))
/* the 16-bit types, and every floating tensor type */
#define VKA_DTYPES_16 (VKA_DTYPE_BIT(VKATTN_DTYPE_F16) | VKA_DTYPE_BIT(VKATTN_DTYPE_BF16))
#define VKA_DTYPES_FLOAT (VKA_DTYPE_BIT(VKATTN_DTYPE_F32) | VKA_DTYPES_16)
vkattn_result vka_tensor_check_types(struct vkattn_context *ctx, const struct vkattn_tensor *t,
                                     uint64_t count, const char *caller, const char *what,
                                     unsigned allowed);

/* The operands of one call, all[0..n) named by names[]: each written one
 * (index >= first_written; NULL = absent) must be no other operand, as a
 * binding is either read or written within a dispatch. */
vkattn_result vka_check_written_distinct(struct vkattn_context *ctx, const char *caller,
                                         const struct vkattn_tensor *const *all,
                                         const char *const *names, size_t n,
                                         size_t first_written);

/* vka_dtype_size, vka_dtype_name and the rest of an element type: core/dtype.h */

/* Scratch tensors ops allocate for themselves. */
vkattn_result vka_tensor_create_1d(struct vkattn_context *ctx, uint64_t count,
                                   struct vkattn_tensor **out);
vkattn_result vka_tensor_create_1d_typed(struct vkattn_context *ctx, uint64_t count,
                                         vkattn_dtype dtype, struct vkattn_tensor **out);
/* As vka_tensor_create_1d_typed, for a buffer that grows (the context's
 * scratch, vk/scratch.h, or a layer's): counted in
 * vkattn_context_stats.scratch_allocations. */
vkattn_result vka_tensor_create_scratch(struct vkattn_context *ctx, uint64_t count,
                                        vkattn_dtype dtype, struct vkattn_tensor **out);

#endif /* VKA_TENSOR_H */
