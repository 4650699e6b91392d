/* vkattn/timer.h - GPU timestamps around recorded work.
 *
 * The hook tools (attnbench) and apps use to time vkattn ops on the GPU:
 *   vkattn_timer_create(ctx, 2, &timer);
 *   vkattn_context_begin_commands(ctx, &cmd);
 *   vkattn_timer_reset(timer, cmd);
 *   vkattn_timer_mark(timer, cmd, 0);
 *   vkattn_matmul_record(ctx, cmd, ...);
 *   vkattn_timer_mark(timer, cmd, 1);
 *   vkattn_context_submit_and_wait(ctx, cmd);
 *   vkattn_timer_elapsed_ms(timer, 0, 1, &ms);
 * A mark is written when all earlier work in the queue has completed (bottom
 * of pipe), so the difference of two marks is the GPU time of what lies
 * between them. VKATTN_ERROR_UNSUPPORTED where the queue has no timestamps.
 *
 * Thread safety: externally synchronized, like the command buffer it records in.
 */
#ifndef VKATTN_TIMER_H
#define VKATTN_TIMER_H

#include <stdint.h>

#include <vulkan/vulkan_core.h>

#include "vkattn/context.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkattn_timer vkattn_timer;

/* `marks` timestamps (>= 1). */
VKATTN_API vkattn_result vkattn_timer_create(vkattn_context *ctx, uint32_t marks,
                                             vkattn_timer **out);
VKATTN_API void vkattn_timer_destroy(vkattn_timer *timer); /* NULL-safe */
/* Records the reset of every mark; do this once per recording, before marks. */
VKATTN_API vkattn_result vkattn_timer_reset(vkattn_timer *timer, VkCommandBuffer cmd);
VKATTN_API vkattn_result vkattn_timer_mark(vkattn_timer *timer, VkCommandBuffer cmd, uint32_t index);
/* After the command buffer completed: milliseconds from mark `from` to mark `to`
 * (`to` written later; the tick difference is taken modulo the queue family's
 * timestampValidBits, so a counter that wrapped in between still measures).
 * VKATTN_ERROR_NOT_READY if a mark has not been written yet. */
VKATTN_API vkattn_result vkattn_timer_elapsed_ms(vkattn_timer *timer, uint32_t from, uint32_t to,
                                                 double *ms);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_TIMER_H */
