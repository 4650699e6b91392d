/* For GPU tests that play an app embedding vkattn: the app's own instance
 * (validation and synchronization validation on, messages counted from any
 * thread), device and queue, imported into a vkattn context, plus the app's
 * buffers and command buffers. Optionally the app's queue lock, with a check
 * that every vkQueueSubmit vkattn makes happens inside it,
 * VK_KHR_push_descriptor on the app's device, and the app's memory
 * allocator. Counts the commands vkattn records on the app's device. */
#ifndef VKATTN_TEST_APP_DEVICE_H
#define VKATTN_TEST_APP_DEVICE_H

#include "harness.h"

#include <vulkan/vulkan.h>

typedef struct ad_app {
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    VkPhysicalDevice physical_device;
    VkDevice device;
    VkQueue queue;
    uint32_t family;
    VkCommandPool pool;
    const char *extensions[8]; /* the device extensions it enabled */
    uint32_t n_extensions;
    vkattn_context *ctx; /* imported */
} ad_app;

/* The app's queue lock as vkattn sees it, and vkattn's submissions. */
typedef struct ad_lock_stats {
    unsigned locks, unlocks;
    unsigned depth;           /* locks - unlocks now */
    unsigned bad_pairs;       /* nested locks, unlocks without a lock, wrong queue */
    unsigned submits_locked;  /* vkattn's vkQueueSubmit calls inside the lock */
    unsigned submits_unlocked;
    /* vkCmdDispatch, vkCmdCopyBuffer, vkCmdFillBuffer and vkCmdPipelineBarrier
     * calls vkattn made on the app's device (into any command buffer) */
    unsigned commands;
    /* The last vkCmdPipelineBarrier vkattn recorded, as vkattn made it (its
     * first buffer barrier), and how many it recorded with a queue family
     * index other than VK_QUEUE_FAMILY_IGNORED. */
    VkPipelineStageFlags last_src_stages, last_dst_stages;
    uint32_t last_n_buffer;
    VkBufferMemoryBarrier last_buffer;
    unsigned family_barriers;
} ad_lock_stats;

typedef struct ad_options {
    bool lock;             /* give vkattn the counting queue lock (stats reset) */
    bool push_descriptors; /* enable VK_KHR_push_descriptor, named in
                              import.enabled_extensions */
    vkattn_log_fn log;     /* NULL: th_context_desc's logger and level */
    void *log_user;
    vkattn_log_level log_level;
    vkattn_allocator allocator; /* zero: vkattn allocates */
    /* vkattn sees one more queue family than the device has (a copy of the
     * app's, index = the real count), so it accepts an ownership transfer to
     * it; the barriers naming it reach the driver and the validation layer
     * with both family indices VK_QUEUE_FAMILY_IGNORED (a plain barrier, which
     * is what a transfer between one queue's family and itself amounts to),
     * and ad_stats keeps them as vkattn recorded them. */
    bool extra_family;
} ad_options;

/* Creates the app on the device named like `own`'s (vkattn's required device
 * extensions enabled) and imports it with th_context_desc()'s choices but
 * validation (the app's instance has the layer). False, with nothing left
 * open, if push_descriptors was asked and the device lacks it. */
bool ad_open_with(vkattn_context *own, const ad_options *o, ad_app *app);
/* ad_open_with with only `lock`. */
void ad_open(vkattn_context *own, bool lock, ad_app *app);
/* Destroys everything and asserts the app's validation layer said nothing. */
void ad_close(ad_app *app);
extern ad_lock_stats ad_stats;
/* WARN/ERROR messages the app's validation layer sent so far. */
unsigned ad_messages(void);

typedef struct ad_buffer {
    VkBuffer buffer;
    VkDeviceMemory memory;
    VkDeviceSize size;
    void *mapped; /* host-visible buffers only */
} ad_buffer;

/* A buffer with `usage`; host-visible and coherent (mapped) if `host`. */
void ad_buffer_create(ad_app *app, VkDeviceSize size, VkBufferUsageFlags usage, bool host,
                      ad_buffer *out);
void ad_buffer_destroy(ad_app *app, ad_buffer *buf);

/* A new primary command buffer, begun with `flags`. */
VkCommandBuffer ad_begin(ad_app *app, VkCommandBufferUsageFlags flags);
/* A new secondary command buffer (no render pass), begun with `flags`. */
VkCommandBuffer ad_begin_secondary(ad_app *app, VkCommandBufferUsageFlags flags);
/* Submits one command buffer with `fence` (may be VK_NULL_HANDLE). */
void ad_submit(ad_app *app, VkCommandBuffer cmd, VkFence fence);

/* A buffer memory barrier over the whole buffer. */
void ad_barrier(VkCommandBuffer cmd, VkBuffer buffer, VkPipelineStageFlags src_stage,
                VkAccessFlags src_access, VkPipelineStageFlags dst_stage, VkAccessFlags dst_access);

#endif
