/* Capture: a recording that goes into a list instead of a command buffer.
 *
 * vkattn_slicer (vkattn/slicer.h) runs an op's or layer's own *_record with a
 * capture handle in place of the command buffer. Like the dry marker
 * (vk/prepare.h), the handle is an address no driver hands out (the capture
 * itself), so only the capturing call sees it; it is known to the context
 * while the capture lasts (ctx->capture). vka_sync, vka_record_dispatch and
 * vka_copy_floats then append what they would have recorded - barriers,
 * dispatches (pipeline, descriptors, push constants, group counts), copies -
 * and replay later writes the same commands into a real command buffer, in
 * any number of pieces. Tracked access advances as for a real recording, with
 * the capture's own serial, so the first touch of each range orders against
 * earlier work and replaying the list again is safe.
 *
 * Scratch: while a thread captures, the context scratch it asks for
 * (vk/scratch.h) comes from the capture's own set, not the thread's: the state
 * between pieces must survive other calls the app records meanwhile. */
#ifndef VKA_CAPTURE_H
#define VKA_CAPTURE_H

#include "vk/barrier.h"
#include "vk/pipeline.h"
#include "vk/scratch.h"

#include <stdint.h>

struct vkattn_context;

typedef enum vka_command_kind {
    VKA_COMMAND_BARRIER,
    VKA_COMMAND_DISPATCH,
    VKA_COMMAND_COPY,
} vka_command_kind;

typedef struct vka_command {
    vka_command_kind kind;
    /* barrier */
    VkPipelineStageFlags src_stages, dst_stages;
    uint32_t n_barriers;
    VkBufferMemoryBarrier barriers[VKA_MAX_USES];
    /* dispatch */
    VkPipeline pipeline;
    VkPipelineLayout layout;
    VkDescriptorSet set; /* VK_NULL_HANDLE where push descriptors write `infos` */
    uint32_t n_infos;
    VkDescriptorBufferInfo infos[VKA_MAX_BINDINGS];
    uint32_t push_size;
    unsigned char push[VKA_MAX_PUSH];
    uint32_t groups[3];
    uint64_t work; /* multiply-adds, 0 where the op did not say (vka_dispatch.work) */
    /* the split that made it (vka_capture.split when appended) and the work
     * per dispatch in force then: a re-split (vk/slice_plan.h) tells whether
     * its op could cut it as asked */
    uint32_t split;
    uint64_t limit;
    /* copy */
    VkBuffer copy_src, copy_dst;
    VkBufferCopy region;
    /* dispatch and copy: bytes of the buffer ranges they touch */
    uint64_t bytes;
} vka_command;

typedef struct vka_capture {
    uint64_t serial; /* its recording number for tracked access (vk/barrier.h) */
    vka_thread thread;
    vka_thread_scratch scratch;
    /* multiply-adds per dispatch while capturing (vka_dispatch_budget), 0 =
     * the context's max_dispatch_work: finer pieces for the slicer */
    uint64_t max_piece_work;
    /* Splits begun so far (vka_dispatch_pieces calls: one per op that splits,
     * in recording order, the same on every capture of the same call), and
     * the slicer's finer limit for each after a re-split (0 = max_piece_work). */
    uint32_t split;
    const uint64_t *split_limits;
    uint32_t n_split_limits;
    vka_command *commands;
    uint32_t n, cap;
    vkattn_result error; /* the first append that failed (out of host memory) */
} vka_capture;

static inline VkCommandBuffer vka_capture_handle(vka_capture *c)
{
    return (VkCommandBuffer)(uintptr_t)c;
}

/* The capture `cmd` stands for, or NULL for a real (or dry) command buffer. */
vka_capture *vka_capture_of(struct vkattn_context *ctx, VkCommandBuffer cmd);

/* Makes `c` the context's capture, owned by the calling thread; one at a
 * time per context (VKATTN_ERROR_INVALID_ARGUMENT under `caller` otherwise). */
vkattn_result vka_capture_begin(struct vkattn_context *ctx, vka_capture *c, const char *caller);
void vka_capture_end(struct vkattn_context *ctx, vka_capture *c);

/* The calling thread's capture scratch, when it is capturing (else NULL). */
vka_thread_scratch *vka_capture_scratch(struct vkattn_context *ctx);
/* The calling thread's capture's work per dispatch for the split under way
 * (its split_limits entry, else max_piece_work), 0 when not capturing. */
uint64_t vka_capture_piece_work(struct vkattn_context *ctx);
/* A split begins (vka_dispatch_pieces): counts it where the calling thread
 * captures. */
void vka_capture_begin_split(struct vkattn_context *ctx);

/* Appends one command; returns a zeroed slot, or NULL (c->error set). */
vka_command *vka_capture_append(struct vkattn_context *ctx, vka_capture *c, vka_command_kind kind);

/* Writes one captured command into a real command buffer. */
void vka_command_replay(struct vkattn_context *ctx, const vka_command *command, VkCommandBuffer cmd);

/* Frees the list and the capture's scratch (its tensors' descriptor sets too). */
void vka_capture_free(vka_capture *c);

#endif /* VKA_CAPTURE_H */
