/* Cached descriptor sets from growing pools: see descriptors.h. */
#include "vk/descriptors.h"

#include "core/error.h"
#include "vk/context.h"
#include "vk/pipeline.h"
#include "vk/tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIRST_POOL_SETS 64u
#define MAX_POOL_SETS 1024u
#define FIRST_BUCKETS 64u

typedef struct vka_cached_set {
    struct vka_cached_set *next; /* same bucket */
    uint64_t hash;
    VkDescriptorSetLayout layout;
    VkDescriptorSet set;
    uint32_t pool; /* index into the cache's pools */
    uint32_t n;
    VkDescriptorBufferInfo infos[VKA_MAX_BINDINGS];
} vka_cached_set;

/* A non-dispatchable handle's bits: a pointer on 64-bit, a uint64_t on 32-bit. */
static uint64_t bits(const void *handle, size_t size)
{
    uint64_t v = 0;
    memcpy(&v, handle, size < sizeof v ? size : sizeof v);
    return v;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 29);
}

static uint64_t key_hash(VkDescriptorSetLayout layout, const VkDescriptorBufferInfo *infos,
                         uint32_t n)
{
    uint64_t h = mix(n, bits(&layout, sizeof layout));
    for (uint32_t i = 0; i < n; i++) {
        h = mix(h, bits(&infos[i].buffer, sizeof infos[i].buffer));
        h = mix(h, infos[i].offset);
        h = mix(h, infos[i].range);
    }
    return h;
}

static bool same_key(const vka_cached_set *e, uint64_t hash, VkDescriptorSetLayout layout,
                     const VkDescriptorBufferInfo *infos, uint32_t n)
{
    if (e->hash != hash || e->layout != layout || e->n != n)
        return false;
    for (uint32_t i = 0; i < n; i++)
        if (e->infos[i].buffer != infos[i].buffer || e->infos[i].offset != infos[i].offset ||
            e->infos[i].range != infos[i].range)
            return false;
    return true;
}

static vkattn_result grow_buckets(struct vkattn_context *ctx, const char *caller)
{
    vka_descriptor_cache *c = &ctx->descriptors;
    uint32_t n = c->n_buckets ? c->n_buckets * 2 : FIRST_BUCKETS;
    vka_cached_set **buckets = calloc(n, sizeof *buckets);
    if (!buckets)
        return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY,
                        "%s: out of host memory (descriptor set cache)", caller);
    for (uint32_t i = 0; i < c->n_buckets; i++)
        for (vka_cached_set *e = c->buckets[i], *next; e; e = next) {
            next = e->next;
            e->next = buckets[e->hash & (n - 1)];
            buckets[e->hash & (n - 1)] = e;
        }
    free(c->buckets);
    c->buckets = buckets;
    c->n_buckets = n;
    return VKATTN_SUCCESS;
}

/* A new pool, twice the size of the last one up to MAX_POOL_SETS sets. Every
 * binding is a storage buffer and a set has at most VKA_MAX_BINDINGS, so a
 * pool with fewer than max_sets live sets always has room for one more. */
static vkattn_result add_pool(struct vkattn_context *ctx, const char *caller)
{
    vka_descriptor_cache *c = &ctx->descriptors;
    if (c->n_pools == c->cap_pools) {
        uint32_t cap = c->cap_pools ? c->cap_pools * 2 : 4;
        vka_descriptor_pool *pools = realloc(c->pools, cap * sizeof *pools);
        if (!pools)
            return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY,
                            "%s: out of host memory (descriptor pools)", caller);
        c->pools = pools;
        c->cap_pools = cap;
    }
    uint32_t sets = c->n_pools ? c->pools[c->n_pools - 1].max_sets * 2 : FIRST_POOL_SETS;
    if (sets > MAX_POOL_SETS)
        sets = MAX_POOL_SETS;
    VkDescriptorPoolSize size = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                 .descriptorCount = sets * VKA_MAX_BINDINGS};
    VkDescriptorPoolCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
        .flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT,
        .maxSets = sets,
        .poolSizeCount = 1,
        .pPoolSizes = &size,
    };
    VkDescriptorPool pool;
    VkResult vr = ctx->vk.vkCreateDescriptorPool(ctx->device, &info, NULL, &pool);
    if (vr != VK_SUCCESS) {
        char what[160];
        snprintf(what, sizeof what, "%s: vkCreateDescriptorPool (%u sets)", caller, sets);
        return vka_vk_fail(ctx, vr, what);
    }
    c->pools[c->n_pools++] = (vka_descriptor_pool){.pool = pool, .max_sets = sets};
    vka_log(ctx, VKATTN_LOG_DEBUG, "descriptor pool %u created (%u sets)", c->n_pools, sets);
    return VKATTN_SUCCESS;
}

static vkattn_result allocate_set(struct vkattn_context *ctx, VkDescriptorSetLayout layout,
                                  const char *caller, VkDescriptorSet *set, uint32_t *pool_index)
{
    vka_descriptor_cache *c = &ctx->descriptors;
    VkDescriptorSetAllocateInfo info = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
        .descriptorSetCount = 1,
        .pSetLayouts = &layout,
    };
    /* newest pool first: older ones only have room where sets were freed */
    for (uint32_t pass = 0; pass < 2; pass++) {
        for (uint32_t i = c->n_pools; i-- > 0;) {
            vka_descriptor_pool *p = &c->pools[i];
            if (p->live >= p->max_sets)
                continue;
            info.descriptorPool = p->pool;
            VkResult vr = ctx->vk.vkAllocateDescriptorSets(ctx->device, &info, set);
            if (vr == VK_SUCCESS) {
                p->live++;
                *pool_index = i;
                return VKATTN_SUCCESS;
            }
            /* a fragmented pool: try another */
            if (vr != VK_ERROR_FRAGMENTED_POOL && vr != VK_ERROR_OUT_OF_POOL_MEMORY) {
                char what[160];
                snprintf(what, sizeof what, "%s: vkAllocateDescriptorSets", caller);
                return vka_vk_fail(ctx, vr, what);
            }
        }
        if (pass == 0) {
            vkattn_result r = add_pool(ctx, caller);
            if (r != VKATTN_SUCCESS)
                return r;
        }
    }
    return vka_fail(ctx, VKATTN_ERROR_OUT_OF_DEVICE_MEMORY,
                    "%s: vkAllocateDescriptorSets failed even from a new descriptor pool", caller);
}

static vkattn_result get_locked(struct vkattn_context *ctx, VkDescriptorSetLayout layout,
                                const VkDescriptorBufferInfo *infos, uint32_t n,
                                const char *caller, VkDescriptorSet *out)
{
    vka_descriptor_cache *c = &ctx->descriptors;
    const uint64_t hash = key_hash(layout, infos, n);
    if (c->n_buckets)
        for (vka_cached_set *e = c->buckets[hash & (c->n_buckets - 1)]; e; e = e->next)
            if (same_key(e, hash, layout, infos, n)) {
                *out = e->set;
                return VKATTN_SUCCESS;
            }

    vkattn_result r;
    if (c->n_sets >= c->n_buckets && (r = grow_buckets(ctx, caller)) != VKATTN_SUCCESS)
        return r;
    vka_cached_set *e = calloc(1, sizeof *e);
    if (!e)
        return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY,
                        "%s: out of host memory (descriptor set cache)", caller);
    if ((r = allocate_set(ctx, layout, caller, &e->set, &e->pool)) != VKATTN_SUCCESS) {
        free(e);
        return r;
    }
    e->hash = hash;
    e->layout = layout;
    e->n = n;
    memcpy(e->infos, infos, n * sizeof infos[0]);
    VkWriteDescriptorSet writes[VKA_MAX_BINDINGS];
    for (uint32_t i = 0; i < n; i++)
        writes[i] = (VkWriteDescriptorSet){
            .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
            .dstSet = e->set,
            .dstBinding = i,
            .descriptorCount = 1,
            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .pBufferInfo = &e->infos[i],
        };
    ctx->vk.vkUpdateDescriptorSets(ctx->device, n, writes, 0, NULL);
    e->next = c->buckets[hash & (c->n_buckets - 1)];
    c->buckets[hash & (c->n_buckets - 1)] = e;
    c->n_sets++;
    ctx->stats.descriptor_sets_allocated++;
    vka_log(ctx, VKATTN_LOG_DEBUG, "%s: descriptor set allocated (%u cached)", caller, c->n_sets);
    *out = e->set;
    return VKATTN_SUCCESS;
}

vkattn_result vka_descriptors_get(struct vkattn_context *ctx, VkDescriptorSetLayout layout,
                                  const VkDescriptorBufferInfo *infos, uint32_t n,
                                  const char *caller, VkDescriptorSet *out)
{
    /* pools and the cache are shared by every recording thread */
    vka_lock(ctx);
    vkattn_result r = get_locked(ctx, layout, infos, n, caller, out);
    vka_unlock(ctx);
    return r;
}

/* Whether another live tensor of the context holds the binding's range. */
static bool still_bound(const struct vkattn_context *ctx, const VkDescriptorBufferInfo *b)
{
    for (const struct vkattn_tensor *t = ctx->tensors; t; t = t->next)
        if (t->buffer == b->buffer && t->offset <= b->offset &&
            b->offset + b->range <= t->offset + t->bytes)
            return true;
    return false;
}

/* Whether the set binds part of `gone` that no other live tensor holds. */
static bool stale(const struct vkattn_context *ctx, const vka_cached_set *e,
                  const struct vkattn_tensor *gone)
{
    for (uint32_t i = 0; i < e->n; i++) {
        const VkDescriptorBufferInfo *b = &e->infos[i];
        bool overlaps = b->buffer == gone->buffer && b->offset < gone->offset + gone->bytes &&
                        gone->offset < b->offset + b->range;
        if (overlaps && !still_bound(ctx, b))
            return true;
    }
    return false;
}

static void forget_locked(struct vkattn_context *ctx, const struct vkattn_tensor *gone)
{
    vka_descriptor_cache *c = &ctx->descriptors;
    if (!c->n_sets)
        return;
    for (uint32_t i = 0; i < c->n_buckets; i++)
        for (vka_cached_set **link = &c->buckets[i]; *link;) {
            vka_cached_set *e = *link;
            if (!stale(ctx, e, gone)) {
                link = &e->next;
                continue;
            }
            /* vkFreeDescriptorSets only returns VK_SUCCESS */
            ctx->vk.vkFreeDescriptorSets(ctx->device, c->pools[e->pool].pool, 1, &e->set);
            c->pools[e->pool].live--;
            c->n_sets--;
            *link = e->next;
            free(e);
        }
}

void vka_descriptors_forget(struct vkattn_context *ctx, const struct vkattn_tensor *gone)
{
    vka_lock(ctx);
    forget_locked(ctx, gone);
    vka_unlock(ctx);
}

void vka_descriptors_destroy(struct vkattn_context *ctx)
{
    vka_descriptor_cache *c = &ctx->descriptors;
    for (uint32_t i = 0; i < c->n_buckets; i++)
        for (vka_cached_set *e = c->buckets[i], *next; e; e = next) {
            next = e->next;
            free(e);
        }
    for (uint32_t i = 0; i < c->n_pools; i++)
        ctx->vk.vkDestroyDescriptorPool(ctx->device, c->pools[i].pool, NULL);
    free(c->buckets);
    free(c->pools);
    *c = (vka_descriptor_cache){0};
}
