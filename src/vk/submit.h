/* The context's one-shot command buffer: begin, record, submit, wait on a
 * fence (the host thread sleeps; it never spins). */
#ifndef VKA_SUBMIT_H
#define VKA_SUBMIT_H

#include "vk/vk.h"

struct vkattn_context;

vkattn_result vka_submit_init(struct vkattn_context *ctx);
void vka_submit_destroy(struct vkattn_context *ctx);

/* vkQueueSubmit of one batch on the context's queue, inside the app's queue
 * lock where it gave one (vkattn_import_desc.lock_queue). */
VkResult vka_queue_submit(struct vkattn_context *ctx, const VkSubmitInfo *submit, VkFence fence);

vkattn_result vka_begin(struct vkattn_context *ctx, VkCommandBuffer *cmd);
/* Ends, submits and waits if `status` is success; otherwise discards the
 * recording. Returns the first failure. */
vkattn_result vka_end_submit_wait(struct vkattn_context *ctx, VkCommandBuffer cmd,
                                  vkattn_result status);

#endif /* VKA_SUBMIT_H */
