/* vkattn/tensor.h - f32 tensors in device memory, and views of an app's buffers.
 *
 * A tensor is a rank 1-4 f32 array, row-major, last index fastest. vkattn either
 * allocates its memory (vkattn_tensor_create) or views a range of an app's
 * VkBuffer (vkattn_tensor_wrap): then ops read and write the app's buffer with no
 * copy. Every op takes tensors; each tensor remembers vkattn's last access to it
 * so that ops recorded one after another get exactly the barriers they need.
 *
 * Upload and download go through the context's queue and wait: mapped directly
 * where device memory is host-visible (lavapipe, integrated GPUs), through a
 * staging buffer otherwise. They are for setup and tests; in a frame, bind the
 * app's own buffers with vkattn_tensor_wrap.
 *
 * Thread safety: a tensor is externally synchronized (like a VkBuffer), and its
 * functions are externally synchronized on its context too.
 */
#ifndef VKATTN_TENSOR_H
#define VKATTN_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include <vulkan/vulkan_core.h>

#include "vkattn/context.h"
#include "vkattn/export.h"
#include "vkattn/result.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VKATTN_MAX_RANK 4

typedef struct vkattn_tensor vkattn_tensor;

/* A range of an app's buffer. */
typedef struct vkattn_buffer_view {
    VkBuffer buffer;
    VkDeviceSize offset; /* multiple of minStorageBufferOffsetAlignment */
    VkDeviceSize size;   /* bytes; 0 = exactly the tensor's size */
} vkattn_buffer_view;

typedef struct vkattn_tensor_desc {
    uint32_t rank;                    /* 1..4 */
    uint32_t dims[VKATTN_MAX_RANK];   /* dims[0..rank-1], each >= 1 */
} vkattn_tensor_desc;

/* Allocates a tensor (contents undefined). Codes: _INVALID_ARGUMENT (rank or a
 * zero dim), _SIZE_OVERFLOW, _DEVICE_LIMIT (larger than maxStorageBufferRange),
 * _OUT_OF_DEVICE_MEMORY. */
VKATTN_API vkattn_result vkattn_tensor_create(vkattn_context *ctx, const vkattn_tensor_desc *desc,
                                              vkattn_tensor **out);

/* Views an app buffer range as a tensor; the buffer must have been created with
 * VK_BUFFER_USAGE_STORAGE_BUFFER_BIT (and TRANSFER_SRC/DST for download/upload)
 * and must outlive the tensor. The app's own writes to it must be made visible
 * to compute-shader reads before vkattn work that reads it executes. */
VKATTN_API vkattn_result vkattn_tensor_wrap(vkattn_context *ctx, const vkattn_tensor_desc *desc,
                                            const vkattn_buffer_view *view, vkattn_tensor **out);

/* NULL-safe. The GPU must be done with the tensor (vkattn does not wait): no
 * pending command buffer may use it. Where the context binds pooled descriptor
 * sets (vkattn_context_info.push_descriptors false), the sets that bind this
 * tensor are freed here, so command buffers recorded with it cannot be
 * submitted again; for a wrapped view, destroy it before the app's buffer. */
VKATTN_API void vkattn_tensor_destroy(vkattn_tensor *t);

/* Copies `count` floats from host memory into the tensor starting at element
 * `first`. Waits for completion. */
VKATTN_API vkattn_result vkattn_tensor_upload(vkattn_tensor *t, const float *data, uint64_t first,
                                              uint64_t count);
/* Copies `count` floats out of the tensor. Waits for completion (and for
 * vkattn work submitted on the context's queue before it). */
VKATTN_API vkattn_result vkattn_tensor_download(vkattn_tensor *t, float *data, uint64_t first,
                                                uint64_t count);
/* Fills the whole tensor with `value` (e.g. NaN to poison outputs in tests). */
VKATTN_API vkattn_result vkattn_tensor_fill(vkattn_tensor *t, float value);

/* Shape and size queries; never fail on a valid tensor. */
VKATTN_API uint32_t vkattn_tensor_rank(const vkattn_tensor *t);
VKATTN_API uint32_t vkattn_tensor_dim(const vkattn_tensor *t, uint32_t axis); /* 0 past rank */
VKATTN_API uint64_t vkattn_tensor_count(const vkattn_tensor *t);           /* elements */
VKATTN_API vkattn_buffer_view vkattn_tensor_buffer(const vkattn_tensor *t);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_TENSOR_H */
