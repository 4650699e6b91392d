/* Dry recording, what every *_record given VKATTN_PREPARE runs
 * (vk/record_mode.h): the record path as it is, with VKA_DRY_CMD in place of the command buffer. Dispatches, copies and barriers
 * then resolve their pipelines, grow scratch and allocate descriptor sets, but
 * record no vkCmd* and leave every tracked access as it was. A marker rather
 * than a context flag, so that one thread's prepare never turns another's
 * record dry. The layers need only this of the dispatch machinery. */
#ifndef VKA_PREPARE_H
#define VKA_PREPARE_H

#include "vk/vk.h"

#include <stdbool.h>
#include <stdint.h>

struct vkattn_context;

extern const char vka_dry_marker;
#define VKA_DRY_CMD ((VkCommandBuffer)(uintptr_t)&vka_dry_marker)
static inline bool vka_is_dry(VkCommandBuffer cmd) { return cmd == VKA_DRY_CMD; }

#endif /* VKA_PREPARE_H */
