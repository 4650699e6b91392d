/* Private Vulkan entry: volk's declarations, compiled without prototypes so
 * every call goes through pointers vkattn loaded itself. Only the loader-level
 * entry points (vkGetInstanceProcAddr, vkCreateInstance, vkEnumerateInstance*)
 * are volk's globals, and those stay private to this library: hidden in the
 * shared library, made local in the static archive (src/CMakeLists.txt), so
 * they never meet an app's own volk or libvulkan. Instance-level pointers live
 * in each context's vka_instance_table, device-level ones in its
 * VolkDeviceTable. */
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

/* Instance-level functions vkattn calls, loaded per instance: with layers
 * enabled, pointers from one instance must not be used with another. */
#define VKA_INSTANCE_FUNCTIONS(X)                                                        \
    X(vkDestroyInstance)                                                                 \
    X(vkEnumeratePhysicalDevices)                                                        \
    X(vkGetPhysicalDeviceProperties)                                                     \
    X(vkGetPhysicalDeviceProperties2)                                                    \
    X(vkGetPhysicalDeviceFeatures2)                                                      \
    X(vkGetPhysicalDeviceQueueFamilyProperties)                                          \
    X(vkGetPhysicalDeviceMemoryProperties)                                               \
    X(vkEnumerateDeviceExtensionProperties)                                              \
    X(vkCreateDevice)                                                                    \
    X(vkGetDeviceProcAddr)                                                               \
    X(vkGetPhysicalDeviceCooperativeMatrixPropertiesNV)                                  \
    X(vkCreateDebugUtilsMessengerEXT)                                                    \
    X(vkDestroyDebugUtilsMessengerEXT)

typedef struct vka_instance_table {
#define VKA_X_FIELD(name) PFN_##name name;
    VKA_INSTANCE_FUNCTIONS(VKA_X_FIELD)
#undef VKA_X_FIELD
} vka_instance_table;

/* Loads `table` for `instance`; extension functions may stay NULL. */
void vka_instance_table_load(VkInstance instance, vka_instance_table *table);

/* Loads a device's functions with the device's own instance's vkGetDeviceProcAddr. */
void vka_device_table_load(const vka_instance_table *instance_table, VkDevice device,
                           struct VolkDeviceTable *table);

/* Maps a failed VkResult to a vkattn_result, reporting `what` failed. */
vkattn_result vka_vk_fail(struct vkattn_context *ctx, VkResult vr, const char *what);

#endif /* VKA_VK_H */
