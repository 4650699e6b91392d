/* Opening the Vulkan loader at run time, so a process without Vulkan gets
 * VKATTN_ERROR_NO_VULKAN instead of failing to start. */
#include "vk/vk.h"

#include "core/error.h"

#include "core/threads.h"

static vka_once loader_once = VKA_ONCE_INIT;
static VkResult loader_status = VK_ERROR_INITIALIZATION_FAILED;
static vka_mutex loader_lock;

static void loader_open(void)
{
    vka_mutex_init(&loader_lock);
    loader_status = volkInitialize();
}

vkattn_result vka_loader_init(struct vkattn_context *ctx, PFN_vkGetInstanceProcAddr gipa)
{
    vka_call_once(&loader_once, loader_open);
    if (gipa) {
        vka_mutex_lock(&loader_lock);
        volkInitializeCustom(gipa);
        loader_status = VK_SUCCESS;
        vka_mutex_unlock(&loader_lock);
        return VKATTN_SUCCESS;
    }
    if (loader_status != VK_SUCCESS)
        return vka_fail(ctx, VKATTN_ERROR_NO_VULKAN,
                        "no Vulkan loader (libvulkan.so.1) could be opened; install one "
                        "(Debian: libvulkan1) and a driver (mesa-vulkan-drivers for lavapipe)");
    return VKATTN_SUCCESS;
}

void vka_instance_table_load(VkInstance instance, vka_instance_table *table)
{
#define VKA_X_LOAD(name) table->name = (PFN_##name)vkGetInstanceProcAddr(instance, #name);
    VKA_INSTANCE_FUNCTIONS(VKA_X_LOAD)
#undef VKA_X_LOAD
}

void vka_device_table_load(const vka_instance_table *instance_table, VkDevice device,
                           struct VolkDeviceTable *table)
{
    /* volkLoadDeviceTable reads volk's global vkGetDeviceProcAddr (private to
     * this library): point it at this instance's for the duration. */
    vka_mutex_lock(&loader_lock);
    vkGetDeviceProcAddr = instance_table->vkGetDeviceProcAddr;
    volkLoadDeviceTable(table, device);
    vka_mutex_unlock(&loader_lock);
}

vkattn_result vka_vk_fail(struct vkattn_context *ctx, VkResult vr, const char *what)
{
    vkattn_result code = VKATTN_ERROR_VULKAN;
    switch (vr) {
    case VK_ERROR_OUT_OF_HOST_MEMORY:
        code = VKATTN_ERROR_OUT_OF_HOST_MEMORY;
        break;
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
        code = VKATTN_ERROR_OUT_OF_DEVICE_MEMORY;
        break;
    case VK_ERROR_DEVICE_LOST:
        code = VKATTN_ERROR_DEVICE_LOST;
        break;
    case VK_ERROR_EXTENSION_NOT_PRESENT:
    case VK_ERROR_FEATURE_NOT_PRESENT:
    case VK_ERROR_LAYER_NOT_PRESENT:
    case VK_ERROR_INCOMPATIBLE_DRIVER:
        code = VKATTN_ERROR_UNSUPPORTED;
        break;
    default:
        break;
    }
    return vka_fail(ctx, code, "%s failed with VkResult %d", what, (int)vr);
}
