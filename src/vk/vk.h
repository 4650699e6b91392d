/* Private Vulkan entry: volk's declarations, compiled without prototypes so
 * every call goes through pointers vkattn loaded itself. Instance-level
 * pointers are volk's globals inside this library (hidden, never the app's);
 * device-level pointers live in each context's VolkDeviceTable. */
#ifndef VKA_VK_H
#define VKA_VK_H

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <volk.h>

#include "vkattn/result.h"

struct vkattn_context;

/* Opens the Vulkan loader once per process (or uses the app's entry point).
 * VKATTN_ERROR_NO_VULKAN with a message when there is none. */
vkattn_result vka_loader_init(struct vkattn_context *ctx, PFN_vkGetInstanceProcAddr gipa);

/* Loads instance-level pointers for `instance` (idempotent). */
void vka_loader_load_instance(VkInstance instance);

/* Maps a failed VkResult to a vkattn_result, reporting `what` failed. */
vkattn_result vka_vk_fail(struct vkattn_context *ctx, VkResult vr, const char *what);

#endif /* VKA_VK_H */
