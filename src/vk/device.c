/* What a physical device offers, whether vkattn can use it, and creating
 * vkattn's own logical device on it. */
#include "vk/coopmat.h"
#include "vkattn/advanced.h"
#include "vk/instance.h"

#include "core/error.h"
#include "vk/profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* vulkan_beta.h names it; vkattn does not include the beta header. */
#define PORTABILITY_SUBSET "VK_KHR_portability_subset"

/* Nothing beyond Vulkan 1.1 is required. The array is never read (count 0)
 * but must not be NULL for callers that iterate it. */
static const char *const no_extensions[] = {NULL};

const char *const *vkattn_required_device_extensions(uint32_t *count)
{
    if (count)
        *count = 0;
    return no_extensions;
}

static const vkattn_optional_extension optional_extensions[] = {
    {VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME,
     "descriptors pushed into the command buffer; without it vkattn binds descriptor sets "
     "from pools it grows, cached per bound buffers, which costs host time the first time a "
     "dispatch binds new buffers"},
    {PORTABILITY_SUBSET,
     "must be enabled where the device offers it (MoltenVK); vkattn runs within its limits"},
};

const vkattn_optional_extension *vkattn_optional_device_extensions(uint32_t *count)
{
    if (count)
        *count = (uint32_t)(sizeof optional_extensions / sizeof optional_extensions[0]);
    return optional_extensions;
}

bool vka_device_has_extension(struct vkattn_context *ctx, VkPhysicalDevice pd, const char *name)
{
    uint32_t n = 0;
    if (ctx->vki.vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL) != VK_SUCCESS || n == 0)
        return false;
    VkExtensionProperties *props = calloc(n, sizeof *props);
    if (!props)
        return false;
    bool found = false;
    if (ctx->vki.vkEnumerateDeviceExtensionProperties(pd, NULL, &n, props) == VK_SUCCESS)
        for (uint32_t i = 0; i < n && !found; i++)
            found = strcmp(props[i].extensionName, name) == 0;
    free(props);
    return found;
}

/* The queue family for vkattn's own device: a compute family without graphics
 * (async compute, which runs beside a renderer's work) if the device has one,
 * else the first family with compute. */
static bool find_compute_family(struct vkattn_context *ctx, VkPhysicalDevice pd, uint32_t *family)
{
    uint32_t n = 0;
    ctx->vki.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
    VkQueueFamilyProperties *props = calloc(n ? n : 1, sizeof *props);
    if (!props)
        return false;
    ctx->vki.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, props);
    bool found = false;
    for (uint32_t i = 0; i < n; i++) {
        VkQueueFlags f = props[i].queueFlags;
        if (!(f & VK_QUEUE_COMPUTE_BIT) || props[i].queueCount == 0)
            continue;
        if (!found || !(f & VK_QUEUE_GRAPHICS_BIT)) {
            *family = i;
            found = true;
        }
        if (!(f & VK_QUEUE_GRAPHICS_BIT))
            break;
    }
    free(props);
    return found;
}

bool vka_device_usable(struct vkattn_context *ctx, VkPhysicalDevice pd, const char **why)
{
    VkPhysicalDeviceProperties props;
    ctx->vki.vkGetPhysicalDeviceProperties(pd, &props);
    uint32_t family;
    if (props.apiVersion < VK_API_VERSION_1_1) {
        *why = "Vulkan 1.1 is required";
        return false;
    }
    if (!find_compute_family(ctx, pd, &family)) {
        *why = "no queue family supports compute";
        return false;
    }
    return true;
}

static vkattn_device_type device_type_of(VkPhysicalDeviceType t)
{
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
        return VKATTN_DEVICE_INTEGRATED;
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
        return VKATTN_DEVICE_DISCRETE;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
        return VKATTN_DEVICE_VIRTUAL;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
        return VKATTN_DEVICE_CPU;
    default:
        return VKATTN_DEVICE_OTHER;
    }
}

static bool unified_memory(const VkPhysicalDeviceMemoryProperties *mp)
{
    /* Every device-local type is also host-visible and coherent (lavapipe, UMA). */
    bool any = false;
    for (uint32_t i = 0; i < mp->memoryTypeCount; i++) {
        VkMemoryPropertyFlags f = mp->memoryTypes[i].propertyFlags;
        if (!(f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
            continue;
        if (!(f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) || !(f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT))
            return false;
        any = true;
    }
    return any;
}

/* MoltenVK before 1.3.0 replaced specialization constants that size arrays
 * with their defaults (Metal cannot size arrays with function constants; the
 * fix recompiles per specialization, KhronosGroup/MoltenVK#2441), and several
 * kernels size register and shared arrays that way: they would write out of
 * bounds there. MoltenVK reports its version as major*10000 + minor*100 +
 * patch. */
static bool old_moltenvk(struct vkattn_context *ctx, VkPhysicalDevice pd, uint32_t *version)
{
    if (!vka_device_has_extension(ctx, pd, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME))
        return false;
    VkPhysicalDeviceDriverProperties driver = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES,
    };
    VkPhysicalDeviceProperties2 props2 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
        .pNext = &driver,
    };
    ctx->vki.vkGetPhysicalDeviceProperties2(pd, &props2);
    *version = props2.properties.driverVersion;
    return driver.driverID == VK_DRIVER_ID_MOLTENVK && *version < 10300;
}

/* The properties of the context's queue family, which must do compute. */
static vkattn_result query_queue_family(struct vkattn_context *ctx, VkPhysicalDevice pd,
                                        VkQueueFamilyProperties *out)
{
    uint32_t nq = 0;
    ctx->vki.vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, NULL);
    if (ctx->queue_family_index >= nq)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "vkattn_context_create: queue_family_index %u is out of range (%u families)",
                        ctx->queue_family_index, nq);
    ctx->queue_family_count = nq;
    VkQueueFamilyProperties *qprops = calloc(nq, sizeof *qprops);
    if (!qprops)
        return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "vkattn_context_create: out of memory");
    ctx->vki.vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qprops);
    const VkQueueFamilyProperties q = qprops[ctx->queue_family_index];
    free(qprops);
    if (!(q.queueFlags & VK_QUEUE_COMPUTE_BIT))
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED,
                        "vkattn_context_create: queue family %u does not support compute",
                        ctx->queue_family_index);
    *out = q;
    return VKATTN_SUCCESS;
}

static void copy_limits(const VkPhysicalDeviceLimits *lim, vkattn_context_info *info)
{
    info->max_shared_memory = lim->maxComputeSharedMemorySize;
    for (int i = 0; i < 3; i++) {
        info->max_workgroup_size[i] = lim->maxComputeWorkGroupSize[i];
        info->max_workgroup_count[i] = lim->maxComputeWorkGroupCount[i];
    }
    info->max_workgroup_invocations = lim->maxComputeWorkGroupInvocations;
    info->max_storage_buffer_range = lim->maxStorageBufferRange;
    info->min_storage_buffer_offset_alignment = (uint32_t)lim->minStorageBufferOffsetAlignment;
}

vkattn_result vka_device_query(struct vkattn_context *ctx, uint32_t api_version)
{
    VkPhysicalDevice pd = ctx->physical_device;
    const char *why = "";
    if (!vka_device_usable(ctx, pd, &why))
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED, "vkattn_context_create: device not usable: %s",
                        why);

    VkPhysicalDeviceSubgroupSizeControlPropertiesEXT size_control = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES_EXT,
    };
    VkPhysicalDeviceSubgroupProperties subgroup = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES,
    };
    bool has_size_control = vka_device_has_extension(ctx, pd, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
    if (has_size_control)
        subgroup.pNext = &size_control;
    VkPhysicalDeviceProperties2 props2 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
        .pNext = &subgroup,
    };
    ctx->vki.vkGetPhysicalDeviceProperties2(pd, &props2);
    const VkPhysicalDeviceProperties *p = &props2.properties;
    const VkPhysicalDeviceLimits *lim = &p->limits;

    VkPhysicalDeviceShaderFloat16Int8FeaturesKHR f16 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR,
    };
    const bool has_f16 = vka_device_has_extension(ctx, pd, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
    VkPhysicalDevice16BitStorageFeatures storage16 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
        .pNext = has_f16 ? &f16 : NULL,
    };
    VkPhysicalDeviceFeatures2 feats2 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
        .pNext = &storage16,
    };
    ctx->vki.vkGetPhysicalDeviceFeatures2(pd, &feats2);

    VkQueueFamilyProperties q = {0};
    vkattn_result r = query_queue_family(ctx, pd, &q);
    if (r)
        return r;

    vkattn_context_info *info = &ctx->info;
    snprintf(info->device_name, sizeof info->device_name, "%s", p->deviceName);
    info->vendor_id = p->vendorID;
    info->device_id = p->deviceID;
    info->device_type = device_type_of(p->deviceType);
    info->api_version = api_version < p->apiVersion ? api_version : p->apiVersion;
    info->driver_version = p->driverVersion;
    info->subgroup_size = subgroup.subgroupSize;
    info->min_subgroup_size = has_size_control ? size_control.minSubgroupSize : subgroup.subgroupSize;
    info->max_subgroup_size = has_size_control ? size_control.maxSubgroupSize : subgroup.subgroupSize;
    copy_limits(lim, info);
    info->fp16 = has_f16 && f16.shaderFloat16;
    /* 16-bit storage must be enabled at device creation: vkattn enables it on
     * its own device; on an imported one it cannot tell, so it assumes not. */
    info->storage_buffer_16bit = ctx->owns_device && storage16.storageBuffer16BitAccess;
    info->max_storage_buffers_per_stage = lim->maxPerStageDescriptorStorageBuffers;
    const VkSubgroupFeatureFlags needed_ops =
        VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
    info->subgroup_operations = (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                                (subgroup.supportedOperations & needed_ops) == needed_ops;
    info->portability_subset = vka_device_has_extension(ctx, pd, PORTABILITY_SUBSET);
    uint32_t mvk = 0;
    if (info->portability_subset && old_moltenvk(ctx, pd, &mvk))
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED,
                        "vkattn_context_create: %s runs MoltenVK %u.%u.%u; vkattn needs 1.3.0 or "
                        "newer, which specializes array sizes (older releases write out of bounds)",
                        info->device_name, mvk / 10000, mvk / 100 % 100, mvk % 100);
    info->push_descriptors = ctx->push_descriptor_enabled;
    info->timestamps = q.timestampValidBits > 0 && lim->timestampPeriod > 0;
    ctx->timestamp_valid_bits = q.timestampValidBits;
    info->timestamp_period_ns = lim->timestampPeriod;
    ctx->vki.vkGetPhysicalDeviceMemoryProperties(pd, &ctx->memory_properties);
    info->unified_memory = unified_memory(&ctx->memory_properties);
    ctx->subgroup_size_control = false;
    bool llvmpipe = info->device_type == VKATTN_DEVICE_CPU && strstr(info->device_name, "llvmpipe");
    ctx->loop_budget = llvmpipe ? 65535 : UINT64_MAX;

    if (!ctx->owns_device) /* vka_device_create queried it for its own device */
        vka_coopmat_query(ctx, pd, &ctx->coopmat_support);
    info->coopmat_flavours = ctx->coopmat_support.flavours;
    info->coopmat_f16_16x16x16 = ctx->coopmat_support.f16_16x16x16;
    vka_profile_clamp(ctx->profile, info);
    ctx->subgroup_shuffle = info->subgroup_operations &&
                            (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT);
    info->max_dispatch_work = ctx->max_dispatch_work ? ctx->max_dispatch_work
                                                     : ctx->profile->max_dispatch_work;
    return VKATTN_SUCCESS;
}

vkattn_result vka_device_create(struct vkattn_context *ctx)
{
    uint32_t family = 0;
    find_compute_family(ctx, ctx->physical_device, &family);
    ctx->queue_family_index = family;
    float priority = 1.0f;
    VkDeviceQueueCreateInfo queue = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
        .queueFamilyIndex = family,
        .queueCount = 1,
        .pQueuePriorities = &priority,
    };
    /* Optional extensions and features: enabled where the device has them and
     * the profile allows them, so that a profile without them proves vkattn
     * never depends on them (validation reports any use). */
    const char *extensions[10];
    uint32_t n_extensions = 0;
    const bool push = !ctx->profile->no_push_descriptors &&
                      vka_device_has_extension(ctx, ctx->physical_device, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
    if (push)
        extensions[n_extensions++] = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
    /* The spec requires enabling it wherever it is offered. */
    if (vka_device_has_extension(ctx, ctx->physical_device, PORTABILITY_SUBSET))
        extensions[n_extensions++] = PORTABILITY_SUBSET;
    /* Pipeline statistics only when asked (vkattn_context_advanced). */
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executables = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR,
    };
    const bool stats_offered =
        ctx->want_pipeline_stats &&
        vka_device_has_extension(ctx, ctx->physical_device,
                      VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    VkPhysicalDevice16BitStorageFeatures storage16 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
        .pNext = stats_offered ? &executables : NULL,
    };
    VkPhysicalDeviceFeatures2 supported = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
        .pNext = &storage16,
    };
    ctx->vki.vkGetPhysicalDeviceFeatures2(ctx->physical_device, &supported);
    VkPhysicalDevice16BitStorageFeatures enable16 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
        .storageBuffer16BitAccess = storage16.storageBuffer16BitAccess && !ctx->profile->no_storage_16bit,
    };
    const bool stats = stats_offered && executables.pipelineExecutableInfo;
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR enable_stats = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR,
        .pipelineExecutableInfo = VK_TRUE,
    };
    if (stats) {
        extensions[n_extensions++] = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
        enable16.pNext = &enable_stats;
    }
    /* Cooperative-matrix features for every family the kernels may run on
     * (vk/coopmat.h); the self-test then decides which do. */
    vka_coopmat_query(ctx, ctx->physical_device, &ctx->coopmat_support);
    const uint32_t coopmat = vka_coopmat_to_enable(ctx, ctx->instance_api_version);
    vka_coopmat_enable enable_coopmat;
    void *chain = &enable16;
    if (coopmat)
        chain = vka_coopmat_chain(&enable_coopmat, coopmat, chain, extensions, &n_extensions);
    VkDeviceCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
        .pNext = chain,
        .queueCreateInfoCount = 1,
        .pQueueCreateInfos = &queue,
        .enabledExtensionCount = n_extensions,
        .ppEnabledExtensionNames = extensions,
    };
    VkResult vr = ctx->vki.vkCreateDevice(ctx->physical_device, &info, NULL, &ctx->device);
    if (vr != VK_SUCCESS)
        return vka_vk_fail(ctx, vr, "vkattn_context_create: vkCreateDevice");
    ctx->owns_device = true;
    ctx->push_descriptor_enabled = push;
    ctx->pipeline_stats = stats;
    ctx->coopmat_enabled_families = coopmat;
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_enumerate_devices(vkattn_device_info *devices, uint32_t *count)
{
    if (!count)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: count is NULL", __func__);
    struct vkattn_context tmp;
    memset(&tmp, 0, sizeof tmp);
    vkattn_result r = vka_loader_init(NULL, NULL);
    if (r != VKATTN_SUCCESS)
        return r;
    r = vka_instance_create(&tmp, false);
    if (r != VKATTN_SUCCESS) {
        vka_instance_destroy(&tmp);
        return r;
    }
    uint32_t n = 0;
    tmp.vki.vkEnumeratePhysicalDevices(tmp.instance, &n, NULL);
    VkPhysicalDevice *pds = calloc(n ? n : 1, sizeof *pds);
    if (!pds) {
        vka_instance_destroy(&tmp);
        return vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", __func__);
    }
    tmp.vki.vkEnumeratePhysicalDevices(tmp.instance, &n, pds);
    if (!devices) {
        *count = n;
    } else {
        uint32_t written = n < *count ? n : *count;
        for (uint32_t i = 0; i < written; i++) {
            VkPhysicalDeviceProperties props;
            tmp.vki.vkGetPhysicalDeviceProperties(pds[i], &props);
            const char *why;
            vkattn_device_info *d = &devices[i];
            memset(d, 0, sizeof *d);
            d->index = i;
            snprintf(d->name, sizeof d->name, "%s", props.deviceName);
            d->vendor_id = props.vendorID;
            d->device_type = device_type_of(props.deviceType);
            d->api_version = props.apiVersion;
            d->usable = vka_device_usable(&tmp, pds[i], &why);
        }
        *count = written;
    }
    free(pds);
    vka_instance_destroy(&tmp);
    return VKATTN_SUCCESS;
}
