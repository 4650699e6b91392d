/* vkattn/tensor.h - f32 and f16 tensors in device memory, and views of an app's buffers.
 *
 * A tensor is a rank 1-4 array of f32 (the default) or f16 elements, row-major,
 * last index fastest. vkattn either
 * allocates its memory (vkattn_tensor_create) or views a range of an app's
 * VkBuffer (vkattn_tensor_wrap): then ops read and write the app's buffer with no
 * copy. Every op takes tensors. vkattn remembers its last access to each range
 * of memory (not to each tensor object: tensors wrapping the same or
 * overlapping ranges of one VkBuffer share that state) so that ops recorded one
 * after another get exactly the barriers they need, also between two views of
 * one range.
 *
 * Recording and replay contract:
 *  - Within one command buffer, vkattn's barriers are exact: each hazard
 *    (read-after-write, write-after-write, write-after-read) between vkattn
 *    commands gets one buffer barrier over the range, compute/transfer stages.
 *  - The first vkattn command touching a range in a command buffer also
 *    orders against any earlier vkattn work on the queue (compute shader and
 *    transfer, reads and writes). So a command buffer recorded once may be
 *    submitted again and again, back to back without a host wait: each
 *    submission waits for the previous one's use of vkattn's scratch and
 *    outputs (write-after-read, write-after-write). Cost: at most one barrier
 *    per range at its first use per command buffer (merged into the barrier
 *    of the first dispatch that touches it), even where nothing was pending.
 *  - Command buffers that vkattn recorded into are submitted in the order they
 *    were recorded, or replayed whole; vkattn orders only its own work. The
 *    app's writes to a tensor (a vkCmdCopyBuffer, a graphics pass) must be
 *    made visible by the app before vkattn reads it: either with the app's own
 *    barrier (dst: VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT)
 *    recorded before the vkattn command, or with vkattn_tensor_acquire.
 *  - Hand-over: vkattn_tensor_release(t, cmd, dst_stage, dst_access, family)
 *    records the barrier that makes vkattn's last access to t safe for the
 *    app's next use at dst_stage/dst_access (RAW, and WAR/WAW if the app will
 *    write); vkattn_tensor_acquire(t, cmd, src_stage, src_access, family)
 *    records nothing and tells vkattn what the app last did, so the next
 *    vkattn use in cmd gets the barrier from src_stage/src_access. One buffer
 *    barrier per hand-over. With another queue family than the context's,
 *    they record vkattn's halves of a queue-family ownership transfer instead.
 *  - Aliasing: views over the same or overlapping bytes of one VkBuffer share
 *    one state; overlapping ranges are tracked as their union, so a use of
 *    part of it may get a barrier the bytes it touches would not need.
 *
 * Upload and download go through the context's queue and wait: mapped directly
 * where device memory is host-visible (lavapipe, integrated GPUs), through a
 * staging buffer otherwise. They are for setup and tests; in a frame, bind the
 * app's own buffers with vkattn_tensor_wrap. A mapped upload writes memory
 * directly only while no command buffer but vkattn's own waited-for one-shot
 * work has used the tensor; after a recording into an app command buffer it
 * copies through the queue, ordered after everything submitted to it before.
 * vkattn waits only for its own submissions: for command buffers the app
 * submitted (on this or another queue), the app must know they completed
 * before uploading into or downloading from a tensor they use (fence,
 * timeline semaphore, vkQueueWaitIdle).
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
#include "vkattn/dtype.h"
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

/* Element types (vkattn/dtype.h). An f16 tensor of `count` elements
 * occupies 2 * count bytes rounded up to a multiple of 4 (Vulkan fills and
 * 32-bit shader words need whole words); the padding belongs to the tensor.
 * Ops say which types they take (vkattn/matmul.h takes both); others refuse
 * f16 tensors with VKATTN_ERROR_UNSUPPORTED. A bf16 tensor is stored and
 * padded as an f16 one; no op takes it yet (vkattn/dtype.h). */
typedef struct vkattn_tensor_desc {
    uint32_t rank;                    /* 1..4 */
    uint32_t dims[VKATTN_MAX_RANK];   /* dims[0..rank-1], each >= 1 */
    vkattn_dtype dtype;               /* 0 = VKATTN_DTYPE_F32 */
} vkattn_tensor_desc;

/* Allocates a tensor (contents undefined). Codes: _INVALID_ARGUMENT (rank, a
 * zero dim, an unknown dtype), _SIZE_OVERFLOW, _DEVICE_LIMIT (larger than maxStorageBufferRange),
 * _OUT_OF_DEVICE_MEMORY. */
VKATTN_API vkattn_result vkattn_tensor_create(vkattn_context *ctx, const vkattn_tensor_desc *desc,
                                              vkattn_tensor **out);

/* Views an app buffer range as a tensor; the buffer must have been created with
 * VK_BUFFER_USAGE_STORAGE_BUFFER_BIT (and TRANSFER_SRC/DST for download/upload)
 * and must outlive the tensor. The app's own writes to it must be made visible
 * to compute-shader reads before vkattn work that reads it executes. An f16
 * view needs view->offset a multiple of 4 and covers the padded size above. */
VKATTN_API vkattn_result vkattn_tensor_wrap(vkattn_context *ctx, const vkattn_tensor_desc *desc,
                                            const vkattn_buffer_view *view, vkattn_tensor **out);

/* NULL-safe. The GPU must be done with the tensor (vkattn does not wait): no
 * pending command buffer may use it. Where the context binds pooled descriptor
 * sets (vkattn_context_info.push_descriptors false), the sets that bind this
 * tensor are freed here, so command buffers recorded with it cannot be
 * submitted again; for a wrapped view, destroy it before the app's buffer. */
VKATTN_API void vkattn_tensor_destroy(vkattn_tensor *t);

/* Copies `count` floats from host memory into the tensor starting at element
 * `first`. Waits for completion. An f16 tensor stores each value rounded to
 * nearest even (beyond 65504 in magnitude: +-inf; NaN stays NaN), as
 * vkattn_f32_to_f16_array (vkattn/half.h); a bf16 tensor likewise
 * (vkattn/dtype.h). */
VKATTN_API vkattn_result vkattn_tensor_upload(vkattn_tensor *t, const float *data, uint64_t first,
                                              uint64_t count);
/* Copies `count` floats out of the tensor. Waits for completion (and for
 * vkattn work submitted on the context's queue before it). f16 elements
 * convert exactly. */
VKATTN_API vkattn_result vkattn_tensor_download(vkattn_tensor *t, float *data, uint64_t first,
                                                uint64_t count);
/* As upload/download, in the tensor's own element type: `data` holds `count`
 * floats for an f32 tensor, `count` uint16_t bit patterns for an f16 or bf16
 * one. No conversion. */
VKATTN_API vkattn_result vkattn_tensor_upload_raw(vkattn_tensor *t, const void *data,
                                                  uint64_t first, uint64_t count);
VKATTN_API vkattn_result vkattn_tensor_download_raw(vkattn_tensor *t, void *data, uint64_t first,
                                                    uint64_t count);
/* Fills the whole tensor with `value` (e.g. NaN to poison outputs in tests),
 * rounded to f16 as in vkattn_tensor_upload for an f16 tensor. */
VKATTN_API vkattn_result vkattn_tensor_fill(vkattn_tensor *t, float value);

/* Hand-over to the app's own passes, recorded in `cmd` (the app's command
 * buffer). release: records the buffer barrier from vkattn's last access of
 * t's memory (in this command buffer, or any earlier vkattn work) to the app's
 * next access at dst_stage/dst_access (with write bits if the app will write);
 * vkattn then treats that access as the last one. acquire: the app tells what
 * it last did to t's memory (src_access with write bits if it wrote) before
 * the next vkattn command in `cmd`; nothing is recorded now, and that vkattn
 * command gets the barrier from src_stage/src_access.
 *
 * Queue-family ownership transfer (an EXCLUSIVE buffer shared with a queue of
 * another family, e.g. vkattn on a compute-only queue, the app rendering on
 * graphics): dst_family / src_family name the app's family (the other side).
 * VK_QUEUE_FAMILY_IGNORED, or the context's own family, means no transfer:
 * the plain hand-over above. With another family:
 *  - release records vkattn's release half in `cmd` (a command buffer of the
 *    context's family): src = vkattn's last access of t, srcQueueFamilyIndex =
 *    the context's family, dstQueueFamilyIndex = dst_family, dst stage
 *    BOTTOM_OF_PIPE (the app's stages may not exist on this family: dst_stage
 *    must still be nonzero, but dst_stage and dst_access go into the app's
 *    acquire half, not vkattn's).
 *    The app then signals a semaphore with the submission of `cmd`, waits for
 *    it on its queue and records its acquire half there: the same buffer,
 *    offset, size (vkattn_tensor_get_info(t).buffer) and families, with its own dst
 *    stage and access.
 *  - acquire records vkattn's acquire half in `cmd` now (before vkattn's next
 *    command on t): srcQueueFamilyIndex = src_family, dstQueueFamilyIndex = the
 *    context's family, src stage ALL_COMMANDS, made visible to vkattn's
 *    compute-shader and transfer reads and writes. Before it, the app recorded
 *    its release half on its queue (its last stage and access; families and
 *    range as above) and signalled a semaphore that the submission of `cmd`
 *    waits for (any stage). src_stage must be nonzero; src_stage and
 *    src_access go into the app's release half, not vkattn's.
 * Both halves cover t's bytes, vkattn_tensor_get_info(t).buffer. docs/INTEGRATION.md, "Async
 * compute", has the whole protocol.
 *
 * Codes: _INVALID_ARGUMENT (t or cmd NULL, stage 0, a family neither
 * VK_QUEUE_FAMILY_IGNORED nor below the device's queue family count). Thread
 * safety: externally synchronized on cmd. */
VKATTN_API vkattn_result vkattn_tensor_release(vkattn_tensor *t, VkCommandBuffer cmd,
                                               VkPipelineStageFlags dst_stage,
                                               VkAccessFlags dst_access, uint32_t dst_family);
VKATTN_API vkattn_result vkattn_tensor_acquire(vkattn_tensor *t, VkCommandBuffer cmd,
                                               VkPipelineStageFlags src_stage,
                                               VkAccessFlags src_access, uint32_t src_family);

/* What a tensor is: its desc (dims past rank 0), its element count and its
 * buffer range (bytes: the padded size of an f16 tensor). Returned by value,
 * so one field reads as vkattn_tensor_get_info(t).desc.dims[1]. All zero for
 * NULL (dtype then reads VKATTN_DTYPE_F32). Never fails. Thread safety: any
 * thread, concurrently with anything but the tensor's destruction. */
typedef struct vkattn_tensor_info {
    vkattn_tensor_desc desc;
    uint64_t count;            /* elements */
    vkattn_buffer_view buffer; /* the buffer range behind the tensor */
} vkattn_tensor_info;

VKATTN_API vkattn_tensor_info vkattn_tensor_get_info(const vkattn_tensor *t);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_TENSOR_H */
