/* Dry recording, what every *_record given VKATTN_PREPARE runs
 * (vk/record_mode.h): the record path as it is, with VKA_DRY_CMD in place of
 * the command buffer. Dispatches, copies and barriers then resolve their
 * pipelines, grow scratch and allocate descriptor sets, but record no vkCmd*
 * and leave every tracked access as it was. A marker rather than a context
 * flag, so that one thread's prepare never turns another's record dry. The
 * layers need only this of the dispatch machinery.
 *
 * It is also how a recording made of several ops leaves nothing recorded
 * when one of them refuses: vka_record_dry_first runs the whole recording
 * dry, and only then for real. The dry pass is the plan of such a call: it
 * runs exactly the checks and allocations the real pass will meet, so the
 * two cannot drift apart the way a separately written plan could. */
#ifndef VKA_PREPARE_H
#define VKA_PREPARE_H

#include "vk/vk.h"
#include "vkattn/result.h"

#include <stdbool.h>
#include <stdint.h>

struct vkattn_context;

extern const char vka_dry_marker;
#define VKA_DRY_CMD ((VkCommandBuffer)(uintptr_t)&vka_dry_marker)
static inline bool vka_is_dry(VkCommandBuffer cmd) { return cmd == VKA_DRY_CMD; }

/* A recording after its argument checks; `op` holds its arguments. */
typedef vkattn_result (*vka_record_fn)(struct vkattn_context *ctx, VkCommandBuffer cmd,
                                       const void *op);

/* record(ctx, cmd, op), leaving cmd untouched on failure: dry first, then
 * into cmd only if the dry pass succeeded (which also grew the scratch, so
 * the real pass allocates nothing). Where cmd is dry, or this thread is
 * already inside the real pass of an enclosing vka_record_dry_first (whose
 * dry pass ran this same call with the same arguments), record runs once,
 * as it is: one dry pass per public call however deep the ops nest. */
vkattn_result vka_record_dry_first(struct vkattn_context *ctx, VkCommandBuffer cmd,
                                   vka_record_fn record, const void *op);

/* Whether every check of a recording on ctx into cmd has already passed in
 * a dry pass: cmd is dry, or an enclosing vka_record_dry_first on ctx is in
 * its real pass on this thread. */
bool vka_record_checked(const struct vkattn_context *ctx, VkCommandBuffer cmd);

#endif /* VKA_PREPARE_H */
