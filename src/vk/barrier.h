/* Exact barriers from tracked access, kept per range of memory.
 *
 * Each buffer range vkattn touches carries a vka_access: the stage and access of
 * its last write, the stages that write is already visible to, and the stages
 * that read it since. Before a command touches it, vka_sync emits only the
 * barriers the hazards need (read-after-write, write-after-write,
 * write-after-read), all in one vkCmdPipelineBarrier, and updates the state.
 *
 * State belongs to memory, not to tensor objects: the context keeps a registry
 * of ranges per VkBuffer (vka_tracked). Tensors over the same or overlapping
 * ranges of one buffer share one state, so work through one view is ordered
 * against work through another.
 *
 * Replay: a command buffer may be submitted again, after work vkattn cannot see.
 * So the first touch of a range in a recording (a different command buffer, or
 * a new one-shot recording) orders against any earlier work vkattn may have
 * recorded on the queue (compute and transfer, reads and writes), merged with
 * what is known; later touches in the same recording are exact. */
#ifndef VKA_BARRIER_H
#define VKA_BARRIER_H

#include "vk/vk.h"

#include <stdbool.h>
#include "core/threads.h"

struct vkattn_context;

typedef struct vka_access {
    VkPipelineStageFlags write_stage;    /* 0: no write to order against */
    VkAccessFlags write_access;
    VkPipelineStageFlags visible_stages; /* stages the last write is visible to */
    VkPipelineStageFlags read_stages;    /* stages that read since the last write */
    /* The recording that last touched the range: VK_NULL_HANDLE = none yet. */
    VkCommandBuffer cmd;
    uint64_t serial; /* the one-shot recording's number, where cmd is vkattn's */
    /* Set once a wider range absorbed this one: the state lives there. */
    struct vka_access *alias;
} vka_access;

/* A registered range of one VkBuffer and the state all its views share. */
typedef struct vka_tracked {
    vka_access access; /* first: &range->access is what uses point to */
    VkBuffer buffer;
    VkDeviceSize offset, size;
    uint32_t refs;          /* tensors viewing it + ranges aliased to it */
    struct vka_tracked *next; /* the context's unaliased ranges */
} vka_tracked;

/* The registry's lock and list, in the context. */
typedef struct vka_tracker {
    vka_mutex lock;
    bool lock_ready;
    vka_tracked *ranges;
} vka_tracker;

vkattn_result vka_tracker_init(struct vkattn_context *ctx);
void vka_tracker_destroy(struct vkattn_context *ctx);

/* The shared state of bytes [offset, offset + size) of `buffer`: an existing
 * range that holds them, or a new one that absorbs every range they overlap.
 * Release with vka_track_put. */
vkattn_result vka_track_get(struct vkattn_context *ctx, VkBuffer buffer, VkDeviceSize offset,
                            VkDeviceSize size, vka_tracked **out);
void vka_track_put(struct vkattn_context *ctx, vka_tracked *range);

/* One buffer range a command is about to access. */
typedef struct vka_use {
    VkBuffer buffer;
    VkDeviceSize offset, size;
    vka_access *state; /* NULL: read-only data vkattn never writes (no tracking) */
    VkPipelineStageFlags stage;
    VkAccessFlags access;
    bool write;
} vka_use;

#define VKA_MAX_USES 16

/* Records the barriers `n` uses need and updates their states. Uses that share
 * a state (the same memory bound twice) are merged. */
void vka_sync(struct vkattn_context *ctx, VkCommandBuffer cmd, const vka_use *uses, uint32_t n);

/* After host writes through a mapping, once no GPU work can touch the range:
 * nothing on the GPU needs ordering (the next submit makes the writes visible). */
void vka_access_reset(struct vkattn_context *ctx, vka_access *state);

/* A copy of the state (resolved through aliases), for host-side decisions. */
vka_access vka_access_get(struct vkattn_context *ctx, vka_access *state);

/* Sets the state to what the app says it last did in `cmd` (hand-over). */
void vka_access_assume(struct vkattn_context *ctx, vka_access *state, VkCommandBuffer cmd,
                       VkPipelineStageFlags stage, VkAccessFlags access);

/* Queue-family ownership transfer halves over [offset, offset + size) of
 * `buffer` (the whole tracked range the app names in its own halves), with
 * the context's family on vkattn's side; always recorded (the transfer is
 * needed even where no hazard is pending), also into a capture.
 * Release: from vkattn's last access (state) to `family`; the other queue's
 * stages cannot be named on this one, so dst is BOTTOM_OF_PIPE, and the state
 * then holds no access of vkattn's. Acquire: from `family`, after anything
 * the queue waited for (src ALL_COMMANDS, so the chain with the app's
 * semaphore wait forms whatever stage it names), made visible to vkattn's
 * compute and transfer stages; the state then needs no barrier. */
void vka_release_family(struct vkattn_context *ctx, vka_access *state, VkCommandBuffer cmd,
                        VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size, uint32_t family);
void vka_acquire_family(struct vkattn_context *ctx, vka_access *state, VkCommandBuffer cmd,
                        VkBuffer buffer, VkDeviceSize offset, VkDeviceSize size, uint32_t family);

/* Whether the last recording that touched the state is one vkattn submitted
 * and waited for (or none): then no GPU work can still be using the range. */
bool vka_access_idle(struct vkattn_context *ctx, vka_access *state);

/* Every write bit a buffer access may carry. */
#define VKA_WRITE_ACCESS                                                                        \
    (VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_WRITE_BIT |     \
     VK_ACCESS_MEMORY_WRITE_BIT | VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT |                        \
     VK_ACCESS_DEPTH_STENCIL_ATTACHMENT_WRITE_BIT)

#endif /* VKA_BARRIER_H */
