/* vkattn's own instance and device: creation, the validation messenger,
 * listing and choosing physical devices, querying what a device offers. */
#ifndef VKA_INSTANCE_H
#define VKA_INSTANCE_H

#include "vk/context.h"

/* Creates ctx->instance (validation layer + messenger on request). */
vkattn_result vka_instance_create(struct vkattn_context *ctx, bool validation);
void vka_instance_destroy(struct vkattn_context *ctx);

/* Picks ctx->physical_device per desc (index, name, or type preference). */
vkattn_result vka_device_choose(struct vkattn_context *ctx, const vkattn_context_desc *desc);

/* Creates ctx->device and ctx->queue on the chosen physical device. */
vkattn_result vka_device_create(struct vkattn_context *ctx);

/* Fills ctx->info and memory properties from ctx->physical_device; checks what
 * vkattn needs (naming what is missing), incl. the queue family. */
vkattn_result vka_device_query(struct vkattn_context *ctx, uint32_t api_version);

/* Whether the physical device offers device extension `name`. */
bool vka_device_has_extension(struct vkattn_context *ctx, VkPhysicalDevice pd, const char *name);

/* Whether a physical device has what vkattn needs; if not, *why says what. */
bool vka_device_usable(struct vkattn_context *ctx, VkPhysicalDevice pd, const char **why);

#endif /* VKA_INSTANCE_H */
