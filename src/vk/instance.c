/* vkattn's own headless instance, its validation messenger, and the choice of
 * a physical device. */
#include "vk/instance.h"

#include "core/error.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VALIDATION_LAYER "VK_LAYER_KHRONOS_validation"

static bool layer_present(const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateInstanceLayerProperties(&n, NULL) != VK_SUCCESS || n == 0)
        return false;
    VkLayerProperties *props = calloc(n, sizeof *props);
    if (!props)
        return false;
    bool found = false;
    if (vkEnumerateInstanceLayerProperties(&n, props) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++)
            found = strcmp(props[i].layerName, name) == 0;
    free(props);
    return found;
}

static bool instance_extension_present(const char *name)
{
    uint32_t n = 0;
    if (vkEnumerateInstanceExtensionProperties(NULL, &n, NULL) != VK_SUCCESS || n == 0)
        return false;
    VkExtensionProperties *props = calloc(n, sizeof *props);
    if (!props)
        return false;
    bool found = false;
    if (vkEnumerateInstanceExtensionProperties(NULL, &n, props) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++)
            found = strcmp(props[i].extensionName, name) == 0;
    free(props);
    return found;
}

static VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
    struct vkattn_context *ctx = user;
    vkattn_log_level level = VKATTN_LOG_DEBUG;
    if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)
        level = VKATTN_LOG_ERROR;
    else if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT)
        level = VKATTN_LOG_WARN;
    else if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT)
        level = VKATTN_LOG_INFO;
    vka_logger_emit(&ctx->logger, level, VKATTN_LOG_SOURCE_VALIDATION,
                    data && data->pMessage ? data->pMessage : "(no message)");
    return VK_FALSE;
}

vkattn_result vka_instance_create(struct vkattn_context *ctx, bool validation)
{
    if (volkGetInstanceVersion() < VK_API_VERSION_1_1)
        return vka_fail(ctx, VKATTN_ERROR_NO_DEVICE,
                        "vkattn_context_create: the Vulkan loader supports only Vulkan 1.0; "
                        "vkattn needs 1.1");
    if (validation && !layer_present(VALIDATION_LAYER))
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED,
                        "vkattn_context_create: enable_validation is set but %s is not "
                        "installed (Debian: vulkan-validationlayers)",
                        VALIDATION_LAYER);

    /* 1.3 where the loader has it: the NV coopmat2 kernels are SPIR-V 1.6,
     * which a device accepts only from an instance of 1.3 or newer. Every
     * other kernel keeps to 1.1. */
    const uint32_t loader_version = volkGetInstanceVersion();
    ctx->instance_api_version =
        loader_version >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3 : VK_API_VERSION_1_1;
    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pEngineName = "vkattn",
        .apiVersion = ctx->instance_api_version,
    };
    const char *layers[] = {VALIDATION_LAYER};
    const char *extensions[3];
    uint32_t n_extensions = 0;
    if (validation) {
        extensions[n_extensions++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
        extensions[n_extensions++] = VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME;
    }
    /* Recent loaders list portability drivers (MoltenVK on Apple) only to
     * instances that ask for them. */
    const bool portability = instance_extension_present(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
    if (portability)
        extensions[n_extensions++] = VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME;
    VkValidationFeatureEnableEXT enables[] = {
        VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
    VkValidationFeaturesEXT features = {
        .sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
        .enabledValidationFeatureCount = 1,
        .pEnabledValidationFeatures = enables,
    };
    VkDebugUtilsMessengerCreateInfoEXT messenger_info = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .pNext = &features,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        .pfnUserCallback = on_validation_message,
        .pUserData = ctx,
    };
    VkInstanceCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
        .pNext = validation ? &messenger_info : NULL,
        .flags = portability ? VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR : 0,
        .pApplicationInfo = &app,
        .enabledLayerCount = validation ? 1 : 0,
        .ppEnabledLayerNames = layers,
        .enabledExtensionCount = n_extensions,
        .ppEnabledExtensionNames = extensions,
    };
    VkResult vr = vkCreateInstance(&info, NULL, &ctx->instance);
    if (vr == VK_ERROR_INCOMPATIBLE_DRIVER)
        return vka_fail(ctx, VKATTN_ERROR_NO_DEVICE,
                        "vkattn_context_create: no Vulkan driver is installed "
                        "(vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER)");
    if (vr != VK_SUCCESS)
        return vka_vk_fail(ctx, vr, "vkattn_context_create: vkCreateInstance");
    ctx->owns_instance = true;
    ctx->info.validation = validation;
    vka_instance_table_load(ctx->instance, &ctx->vki);

    if (validation) {
        if (!ctx->vki.vkCreateDebugUtilsMessengerEXT)
            return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED,
                            "vkattn_context_create: VK_EXT_debug_utils is not available");
        messenger_info.pNext = NULL;
        vr = ctx->vki.vkCreateDebugUtilsMessengerEXT(ctx->instance, &messenger_info, NULL,
                                            &ctx->messenger);
        if (vr != VK_SUCCESS)
            return vka_vk_fail(ctx, vr, "vkattn_context_create: vkCreateDebugUtilsMessengerEXT");
    }
    return VKATTN_SUCCESS;
}

void vka_instance_destroy(struct vkattn_context *ctx)
{
    if (!ctx->owns_instance || !ctx->instance)
        return;
    if (ctx->messenger)
        ctx->vki.vkDestroyDebugUtilsMessengerEXT(ctx->instance, ctx->messenger, NULL);
    ctx->vki.vkDestroyInstance(ctx->instance, NULL);
    ctx->instance = VK_NULL_HANDLE;
}

static int type_rank(VkPhysicalDeviceType type)
{
    switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
        return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
        return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
        return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
        return 3;
    default:
        return 4;
    }
}

static bool contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return true;
    }
    return n == 0;
}

vkattn_result vka_device_choose(struct vkattn_context *ctx, const vkattn_context_desc *desc)
{
    uint32_t n = 0;
    VkResult vr = ctx->vki.vkEnumeratePhysicalDevices(ctx->instance, &n, NULL);
    if (vr != VK_SUCCESS)
        return vka_vk_fail(ctx, vr, "vkattn_context_create: vkEnumeratePhysicalDevices");
    if (n == 0)
        return vka_fail(ctx, VKATTN_ERROR_NO_DEVICE,
                        "vkattn_context_create: the Vulkan loader lists no device; install a "
                        "driver (mesa-vulkan-drivers gives lavapipe)");
    VkPhysicalDevice *pds = calloc(n, sizeof *pds);
    if (!pds)
        return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "vkattn_context_create: out of memory");
    vr = ctx->vki.vkEnumeratePhysicalDevices(ctx->instance, &n, pds);
    if (vr != VK_SUCCESS && vr != VK_INCOMPLETE) {
        free(pds);
        return vka_vk_fail(ctx, vr, "vkattn_context_create: vkEnumeratePhysicalDevices");
    }

    vkattn_result r = VKATTN_SUCCESS;
    const char *why = "";
    if (desc->use_device_index) {
        if (desc->device_index >= n)
            r = vka_fail(ctx, VKATTN_ERROR_NO_DEVICE,
                         "vkattn_context_create: device_index %u is out of range; %u device(s)",
                         desc->device_index, n);
        else if (!vka_device_usable(ctx, pds[desc->device_index], &why))
            r = vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED,
                         "vkattn_context_create: device %u is not usable: %s",
                         desc->device_index, why);
        else
            ctx->physical_device = pds[desc->device_index];
    } else {
        int best_rank = 99;
        for (uint32_t i = 0; i < n; i++) {
            VkPhysicalDeviceProperties props;
            ctx->vki.vkGetPhysicalDeviceProperties(pds[i], &props);
            if (desc->device_name && !contains_nocase(props.deviceName, desc->device_name))
                continue;
            if (!vka_device_usable(ctx, pds[i], &why))
                continue;
            int rank = type_rank(props.deviceType);
            if (rank < best_rank) {
                best_rank = rank;
                ctx->physical_device = pds[i];
            }
        }
        if (!ctx->physical_device)
            r = vka_fail(ctx, VKATTN_ERROR_NO_DEVICE,
                         "vkattn_context_create: no usable device%s%s%s among %u (%s)",
                         desc->device_name ? " named like \"" : "",
                         desc->device_name ? desc->device_name : "",
                         desc->device_name ? "\"" : "", n, *why ? why : "no match");
    }
    free(pds);
    return r;
}
