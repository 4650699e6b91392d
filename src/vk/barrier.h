/* Exact barriers from tracked access.
 *
 * Each buffer range vkattn touches carries a vka_access: the stage and access of
 * its last write, the stages that write is already visible to, and the stages
 * that read it since. Before a command touches it, vka_sync_* emits only the
 * barriers the hazards need (read-after-write, write-after-write,
 * write-after-read), all in one vkCmdPipelineBarrier, and updates the state. */
#ifndef VKA_BARRIER_H
#define VKA_BARRIER_H

#include "vk/vk.h"

#include <stdbool.h>

struct vkattn_context;

typedef struct vka_access {
    VkPipelineStageFlags write_stage;    /* 0: no write to order against */
    VkAccessFlags write_access;
    VkPipelineStageFlags visible_stages; /* stages the last write is visible to */
    VkPipelineStageFlags read_stages;    /* stages that read since the last write */
} vka_access;

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
 * a state (the same tensor bound twice) are merged. */
void vka_sync(struct vkattn_context *ctx, VkCommandBuffer cmd, const vka_use *uses, uint32_t n);

/* After host writes through a mapping: nothing on the GPU needs ordering. */
void vka_access_reset(vka_access *state);

#endif /* VKA_BARRIER_H */
