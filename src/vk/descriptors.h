/* Descriptor sets for devices without VK_KHR_push_descriptor.
 *
 * A dispatch's bindings are written once into a set from a pool the context
 * grows, and the set is cached under (set layout, the (buffer, offset, range)
 * of every binding): a command buffer the app records once and replays every
 * frame reuses the same set, and recording the same op again allocates
 * nothing. vkattn cannot know when the app's command buffers complete, so a
 * set lives until a buffer it references goes away: vkattn_tensor_destroy
 * frees the sets that bind the tensor's range (the app may only destroy a
 * tensor once the GPU is done with it), and vkattn_context_destroy frees the
 * pools. Lookups hash the key; only a tensor's destruction walks all sets.
 * Safe from several recording threads: the cache is guarded by ctx->lock. */
#ifndef VKA_DESCRIPTORS_H
#define VKA_DESCRIPTORS_H

#include "vk/vk.h"

#include <stdint.h>

struct vkattn_context;
struct vka_cached_set;
struct vkattn_tensor;

typedef struct vka_descriptor_pool {
    VkDescriptorPool pool;
    uint32_t max_sets, live;
} vka_descriptor_pool;

typedef struct vka_descriptor_cache {
    vka_descriptor_pool *pools;
    uint32_t n_pools, cap_pools;
    struct vka_cached_set **buckets; /* n_buckets is 0 or a power of two */
    uint32_t n_buckets, n_sets;
} vka_descriptor_cache;

/* The set of `layout` with storage buffer i bound to infos[i], i < n:
 * found in the cache, else allocated, written and cached. */
vkattn_result vka_descriptors_get(struct vkattn_context *ctx, VkDescriptorSetLayout layout,
                                  const VkDescriptorBufferInfo *infos, uint32_t n,
                                  const char *caller, VkDescriptorSet *out);

/* Frees the cached sets that bind any part of the tensor `gone` (its buffer
 * range), called as it is destroyed, after it left the context's live list.
 * A set is kept if each of its bindings there lies within another live tensor
 * (two views of one range): a pending command buffer may still use it through
 * that one, whose own destruction frees it. */
void vka_descriptors_forget(struct vkattn_context *ctx, const struct vkattn_tensor *gone);

/* Frees every set and pool (context destruction). */
void vka_descriptors_destroy(struct vkattn_context *ctx);

#endif /* VKA_DESCRIPTORS_H */
