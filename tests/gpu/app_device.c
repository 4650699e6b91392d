/* The app side of the embedding tests: see app_device.h. */
#include "app_device.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ad_lock_stats ad_stats;
static atomic_uint messages; /* the messenger may be called on any thread */
static uint32_t locked_family = UINT32_MAX;

/* The hooks below run on whichever thread vkattn records or submits from:
 * test_threads records on two threads at once, so every update of ad_stats
 * (and locked_family) happens under this lock. A spin lock on an atomic_flag:
 * C11 only, no platform threads (most tests using this file link none), and
 * held for a few stores. Readers (the tests) look after their threads joined. */
static atomic_flag stats_busy = ATOMIC_FLAG_INIT;

static void stats_lock(void)
{
    while (atomic_flag_test_and_set_explicit(&stats_busy, memory_order_acquire))
        ;
}

static void stats_unlock(void) { atomic_flag_clear_explicit(&stats_busy, memory_order_release); }

unsigned ad_messages(void) { return messages; }

static VKAPI_ATTR VkBool32 VKAPI_CALL messenger(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                VkDebugUtilsMessageTypeFlagsEXT types,
                                                const VkDebugUtilsMessengerCallbackDataEXT *data,
                                                void *user)
{
    (void)types, (void)user;
    if (severity & (VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT)) {
        messages++;
        fprintf(stderr, "APP VALIDATION: %s\n", data->pMessage);
    }
    return VK_FALSE;
}

/* ---- the queue lock, and vkattn's vkQueueSubmit seen through its loader entry */

static void lock_queue(void *user, uint32_t family, uint32_t index)
{
    ad_app *app = user;
    stats_lock();
    if (ad_stats.depth != 0 || family != app->family || index != 0)
        ad_stats.bad_pairs++;
    ad_stats.locks++;
    ad_stats.depth++;
    locked_family = family;
    stats_unlock();
}

static void unlock_queue(void *user, uint32_t family, uint32_t index)
{
    ad_app *app = user;
    stats_lock();
    if (ad_stats.depth != 1 || family != app->family || index != 0)
        ad_stats.bad_pairs++;
    ad_stats.unlocks++;
    ad_stats.depth--;
    stats_unlock();
}

/* The real entry points: written by wrapped_gdpa while vkattn loads its
 * device functions (context creation, before any recording thread starts),
 * only read afterwards. */
static PFN_vkQueueSubmit real_submit;
static VkDevice wrapped_device; /* only the app's device gets the counting submit */

static VKAPI_ATTR VkResult VKAPI_CALL counted_submit(VkQueue queue, uint32_t n,
                                                     const VkSubmitInfo *submits, VkFence fence)
{
    stats_lock();
    if (ad_stats.depth == 1)
        ad_stats.submits_locked++;
    else
        ad_stats.submits_unlocked++;
    stats_unlock();
    return real_submit(queue, n, submits, fence);
}

/* The commands vkattn records, counted: what a failed record must leave out. */
static PFN_vkCmdDispatch real_dispatch;
static PFN_vkCmdCopyBuffer real_copy;
static PFN_vkCmdFillBuffer real_fill;
static PFN_vkCmdPipelineBarrier real_barrier;
static uint32_t extra_family = UINT32_MAX; /* the fake family's index, if any */

static VKAPI_ATTR void VKAPI_CALL counted_dispatch(VkCommandBuffer cmd, uint32_t x, uint32_t y,
                                                   uint32_t z)
{
    stats_lock();
    ad_stats.commands++;
    stats_unlock();
    real_dispatch(cmd, x, y, z);
}

static VKAPI_ATTR void VKAPI_CALL counted_copy(VkCommandBuffer cmd, VkBuffer src, VkBuffer dst,
                                               uint32_t n, const VkBufferCopy *regions)
{
    stats_lock();
    ad_stats.commands++;
    stats_unlock();
    real_copy(cmd, src, dst, n, regions);
}

static VKAPI_ATTR void VKAPI_CALL counted_fill(VkCommandBuffer cmd, VkBuffer dst,
                                               VkDeviceSize offset, VkDeviceSize size,
                                               uint32_t data)
{
    stats_lock();
    ad_stats.commands++;
    stats_unlock();
    real_fill(cmd, dst, offset, size, data);
}

static VKAPI_ATTR void VKAPI_CALL counted_barrier(
    VkCommandBuffer cmd, VkPipelineStageFlags src, VkPipelineStageFlags dst,
    VkDependencyFlags flags, uint32_t n_memory, const VkMemoryBarrier *memory, uint32_t n_buffer,
    const VkBufferMemoryBarrier *buffer, uint32_t n_image, const VkImageMemoryBarrier *image)
{
    stats_lock();
    ad_stats.commands++;
    ad_stats.last_src_stages = src;
    ad_stats.last_dst_stages = dst;
    ad_stats.last_n_buffer = n_buffer;
    ad_stats.last_buffer = n_buffer ? buffer[0] : (VkBufferMemoryBarrier){0};
    VkBufferMemoryBarrier plain[16];
    bool rewrite = false;
    for (uint32_t i = 0; i < n_buffer && i < 16; i++) {
        plain[i] = buffer[i];
        if (buffer[i].srcQueueFamilyIndex != VK_QUEUE_FAMILY_IGNORED ||
            buffer[i].dstQueueFamilyIndex != VK_QUEUE_FAMILY_IGNORED) {
            ad_stats.family_barriers++;
            rewrite = true;
            plain[i].srcQueueFamilyIndex = plain[i].dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        }
    }
    stats_unlock();
    if (rewrite && extra_family != UINT32_MAX && n_buffer <= 16)
        buffer = plain;
    real_barrier(cmd, src, dst, flags, n_memory, memory, n_buffer, buffer, n_image, image);
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL wrapped_gdpa(VkDevice device, const char *name)
{
    if (device != wrapped_device)
        return vkGetDeviceProcAddr(device, name);
    if (strcmp(name, "vkQueueSubmit") == 0) {
        real_submit = (PFN_vkQueueSubmit)vkGetDeviceProcAddr(device, name);
        return (PFN_vkVoidFunction)counted_submit;
    }
    if (strcmp(name, "vkCmdDispatch") == 0) {
        real_dispatch = (PFN_vkCmdDispatch)vkGetDeviceProcAddr(device, name);
        return (PFN_vkVoidFunction)counted_dispatch;
    }
    if (strcmp(name, "vkCmdCopyBuffer") == 0) {
        real_copy = (PFN_vkCmdCopyBuffer)vkGetDeviceProcAddr(device, name);
        return (PFN_vkVoidFunction)counted_copy;
    }
    if (strcmp(name, "vkCmdFillBuffer") == 0) {
        real_fill = (PFN_vkCmdFillBuffer)vkGetDeviceProcAddr(device, name);
        return (PFN_vkVoidFunction)counted_fill;
    }
    if (strcmp(name, "vkCmdPipelineBarrier") == 0) {
        real_barrier = (PFN_vkCmdPipelineBarrier)vkGetDeviceProcAddr(device, name);
        return (PFN_vkVoidFunction)counted_barrier;
    }
    return vkGetDeviceProcAddr(device, name);
}

/* ad_options.extra_family: one more family, a copy of the last one */
static VKAPI_ATTR void VKAPI_CALL extra_family_properties(VkPhysicalDevice pd, uint32_t *count,
                                                          VkQueueFamilyProperties *props)
{
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
    if (!props) {
        *count = n + 1;
        return;
    }
    uint32_t want = *count;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &want, props);
    if (*count > n && n > 0) {
        props[n] = props[n - 1];
        want = n + 1;
    }
    *count = want;
}

static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL wrapped_gipa(VkInstance instance, const char *name)
{
    if (extra_family != UINT32_MAX && strcmp(name, "vkGetPhysicalDeviceQueueFamilyProperties") == 0)
        return (PFN_vkVoidFunction)extra_family_properties;
    if (strcmp(name, "vkGetDeviceProcAddr") == 0)
        return (PFN_vkVoidFunction)wrapped_gdpa;
    return vkGetInstanceProcAddr(instance, name);
}

/* ---- the app */

static bool has_device_extension(VkPhysicalDevice pd, const char *name)
{
    uint32_t n = 0;
    vkEnumerateDeviceExtensionProperties(pd, NULL, &n, NULL);
    VkExtensionProperties *props = calloc(n ? n : 1, sizeof *props);
    vkEnumerateDeviceExtensionProperties(pd, NULL, &n, props);
    bool found = false;
    for (uint32_t i = 0; i < n && !found; i++)
        found = strcmp(props[i].extensionName, name) == 0;
    free(props);
    return found;
}

/* Everything create_app made (any handle may be null). */
static void destroy_app(ad_app *app)
{
    if (app->pool)
        vkDestroyCommandPool(app->device, app->pool, NULL);
    if (app->device)
        vkDestroyDevice(app->device, NULL);
    if (app->messenger) {
        PFN_vkDestroyDebugUtilsMessengerEXT destroy = (PFN_vkDestroyDebugUtilsMessengerEXT)
            vkGetInstanceProcAddr(app->instance, "vkDestroyDebugUtilsMessengerEXT");
        destroy(app->instance, app->messenger, NULL);
    }
    if (app->instance)
        vkDestroyInstance(app->instance, NULL);
}

/* False only if `push` and the device lacks VK_KHR_push_descriptor. */
static bool create_app(ad_app *app, const char *device_name, bool push)
{
    bool validation = getenv("VKATTN_TEST_NO_VALIDATION") == NULL;
    const char *layers[] = {"VK_LAYER_KHRONOS_validation"};
    const char *exts[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME,
                          VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME};
    VkValidationFeatureEnableEXT sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
    VkValidationFeaturesEXT features = {.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
                                        .enabledValidationFeatureCount = 1,
                                        .pEnabledValidationFeatures = &sync};
    VkApplicationInfo ai = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                            .apiVersion = VK_API_VERSION_1_1};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                .pNext = validation ? &features : NULL,
                                .pApplicationInfo = &ai,
                                .enabledLayerCount = validation,
                                .ppEnabledLayerNames = layers,
                                .enabledExtensionCount = validation ? 2 : 0,
                                .ppEnabledExtensionNames = exts};
    assert_int_equal(vkCreateInstance(&ici, NULL, &app->instance), VK_SUCCESS);
    if (validation) {
        PFN_vkCreateDebugUtilsMessengerEXT create = (PFN_vkCreateDebugUtilsMessengerEXT)
            vkGetInstanceProcAddr(app->instance, "vkCreateDebugUtilsMessengerEXT");
        VkDebugUtilsMessengerCreateInfoEXT mi = {
            .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
            .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT,
            .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT,
            .pfnUserCallback = messenger};
        create(app->instance, &mi, NULL, &app->messenger);
    }
    uint32_t n = 8;
    VkPhysicalDevice pds[8];
    vkEnumeratePhysicalDevices(app->instance, &n, pds);
    for (uint32_t i = 0; i < n && !app->physical_device; i++) {
        VkPhysicalDeviceProperties props;
        vkGetPhysicalDeviceProperties(pds[i], &props);
        if (strcmp(props.deviceName, device_name) == 0)
            app->physical_device = pds[i];
    }
    assert_non_null(app->physical_device);
    uint32_t nq = 16;
    VkQueueFamilyProperties qf[16];
    vkGetPhysicalDeviceQueueFamilyProperties(app->physical_device, &nq, qf);
    app->family = UINT32_MAX;
    for (uint32_t i = 0; i < nq && app->family == UINT32_MAX; i++)
        if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT)
            app->family = i;
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                  .queueFamilyIndex = app->family,
                                  .queueCount = 1,
                                  .pQueuePriorities = &prio};
    uint32_t next = 0;
    const char *const *needed = vkattn_required_device_extensions(&next);
    assert_true(next < 8);
    for (uint32_t i = 0; i < next; i++)
        app->extensions[app->n_extensions++] = needed[i];
    if (push) {
        if (!has_device_extension(app->physical_device, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME))
            return false;
        app->extensions[app->n_extensions++] = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
    }
    VkDeviceCreateInfo di = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                             .queueCreateInfoCount = 1,
                             .pQueueCreateInfos = &qi,
                             .enabledExtensionCount = app->n_extensions,
                             .ppEnabledExtensionNames = app->extensions};
    assert_int_equal(vkCreateDevice(app->physical_device, &di, NULL, &app->device), VK_SUCCESS);
    vkGetDeviceQueue(app->device, app->family, 0, &app->queue);
    wrapped_device = app->device;
    VkCommandPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .queueFamilyIndex = app->family};
    assert_int_equal(vkCreateCommandPool(app->device, &pi, NULL, &app->pool), VK_SUCCESS);
    return true;
}

bool ad_open_with(vkattn_context *own, const ad_options *o, ad_app *app)
{
    vkattn_context_info own_info;
    TH_OK(own, vkattn_context_get_info(own, &own_info));
    *app = (ad_app){0};
    messages = 0;
    memset(&ad_stats, 0, sizeof ad_stats);
    extra_family = UINT32_MAX;
    if (!create_app(app, own_info.device_name, o->push_descriptors)) {
        destroy_app(app);
        *app = (ad_app){0};
        return false;
    }
    vkattn_context_desc desc = th_context_desc();
    desc.enable_validation = false; /* the app's instance has the layer */
    desc.import = (vkattn_import_desc){.instance = app->instance,
                                       .physical_device = app->physical_device,
                                       .device = app->device,
                                       .queue = app->queue,
                                       .queue_family_index = app->family,
                                       .get_instance_proc_addr = wrapped_gipa};
    if (o->push_descriptors) {
        desc.import.enabled_extensions = app->extensions;
        desc.import.enabled_extension_count = app->n_extensions;
    }
    desc.allocator = o->allocator;
    if (o->log) {
        desc.log = o->log;
        desc.log_user = o->log_user;
        desc.log_level = o->log_level;
    }
    if (o->lock) {
        desc.import.lock_queue = lock_queue;
        desc.import.unlock_queue = unlock_queue;
        desc.import.queue_lock_user = app;
    }
    if (o->extra_family) {
        uint32_t n = 0;
        vkGetPhysicalDeviceQueueFamilyProperties(app->physical_device, &n, NULL);
        extra_family = n;
    }
    TH_OK(own, vkattn_context_create(&desc, &app->ctx));
    return true;
}

void ad_open(vkattn_context *own, bool lock, ad_app *app)
{
    const ad_options o = {.lock = lock};
    ad_open_with(own, &o, app);
}

void ad_close(ad_app *app)
{
    vkattn_context_destroy(app->ctx);
    destroy_app(app);
    assert_int_equal(messages, 0);
}

void ad_buffer_create(ad_app *app, VkDeviceSize size, VkBufferUsageFlags usage, bool host,
                      ad_buffer *out)
{
    *out = (ad_buffer){.size = size};
    VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                             .size = size,
                             .usage = usage,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    assert_int_equal(vkCreateBuffer(app->device, &bi, NULL, &out->buffer), VK_SUCCESS);
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(app->device, out->buffer, &req);
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(app->physical_device, &mp);
    const VkMemoryPropertyFlags want =
        host ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
             : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    uint32_t type = UINT32_MAX;
    for (uint32_t i = 0; i < mp.memoryTypeCount && type == UINT32_MAX; i++)
        if ((req.memoryTypeBits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want)
            type = i;
    assert_true(type != UINT32_MAX);
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                               .allocationSize = req.size,
                               .memoryTypeIndex = type};
    assert_int_equal(vkAllocateMemory(app->device, &ai, NULL, &out->memory), VK_SUCCESS);
    assert_int_equal(vkBindBufferMemory(app->device, out->buffer, out->memory, 0), VK_SUCCESS);
    if (host)
        assert_int_equal(vkMapMemory(app->device, out->memory, 0, VK_WHOLE_SIZE, 0, &out->mapped),
                         VK_SUCCESS);
}

void ad_buffer_destroy(ad_app *app, ad_buffer *buf)
{
    vkDestroyBuffer(app->device, buf->buffer, NULL);
    vkFreeMemory(app->device, buf->memory, NULL);
    *buf = (ad_buffer){0};
}

VkCommandBuffer ad_begin(ad_app *app, VkCommandBufferUsageFlags flags)
{
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = app->pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    VkCommandBuffer cmd;
    assert_int_equal(vkAllocateCommandBuffers(app->device, &ai, &cmd), VK_SUCCESS);
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = flags};
    assert_int_equal(vkBeginCommandBuffer(cmd, &bi), VK_SUCCESS);
    return cmd;
}

VkCommandBuffer ad_begin_secondary(ad_app *app, VkCommandBufferUsageFlags flags)
{
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = app->pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_SECONDARY,
                                      .commandBufferCount = 1};
    VkCommandBuffer cmd;
    assert_int_equal(vkAllocateCommandBuffers(app->device, &ai, &cmd), VK_SUCCESS);
    VkCommandBufferInheritanceInfo inherit = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = flags,
                                   .pInheritanceInfo = &inherit};
    assert_int_equal(vkBeginCommandBuffer(cmd, &bi), VK_SUCCESS);
    return cmd;
}

void ad_submit(ad_app *app, VkCommandBuffer cmd, VkFence fence)
{
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &cmd};
    assert_int_equal(vkQueueSubmit(app->queue, 1, &si, fence), VK_SUCCESS);
}

void ad_barrier(VkCommandBuffer cmd, VkBuffer buffer, VkPipelineStageFlags src_stage,
                VkAccessFlags src_access, VkPipelineStageFlags dst_stage, VkAccessFlags dst_access)
{
    VkBufferMemoryBarrier b = {.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER,
                               .srcAccessMask = src_access,
                               .dstAccessMask = dst_access,
                               .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                               .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                               .buffer = buffer,
                               .size = VK_WHOLE_SIZE};
    vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 0, NULL, 1, &b, 0, NULL);
}
