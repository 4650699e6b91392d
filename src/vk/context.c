/* Context lifetime: own device or the app's, and the small per-context state
 * (logger, one-shot command buffer, pipeline cache, dummy buffer). */
#include "vk/context.h"

#include "vk/coopmat.h"

#include "core/error.h"
#include "vk/instance.h"
#include "vk/profile.h"
#include "vk/kept.h"
#include "vk/submit.h"
#include "vkattn/advanced.h"
#include "vkattn/tensor.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* core/error.c reads the logger through the context pointer itself. */
_Static_assert(offsetof(struct vkattn_context, logger) == 0,
               "vka_logger must be the first member of struct vkattn_context");

static vkattn_result check_import(struct vkattn_context *ctx, const vkattn_import_desc *im)
{
    const char *missing = !im->instance          ? "import.instance"
                          : !im->physical_device ? "import.physical_device"
                          : !im->queue           ? "import.queue"
                                                 : NULL;
    if (missing)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "vkattn_context_create: import.device is set but %s is NULL", missing);
    if (!im->lock_queue != !im->unlock_queue)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "vkattn_context_create: import.%s is set but import.%s is NULL; give "
                        "both or neither",
                        im->lock_queue ? "lock_queue" : "unlock_queue",
                        im->lock_queue ? "unlock_queue" : "lock_queue");
    return VKATTN_SUCCESS;
}

/* Whether the app enabled VK_KHR_push_descriptor on the device it hands over:
 * its list when it gives one, else whether the device returns the command. */
static bool imported_push_descriptors(struct vkattn_context *ctx, const vkattn_import_desc *im)
{
    if (!ctx->vk.vkCmdPushDescriptorSetKHR)
        return false;
    if (!im->enabled_extension_count)
        return true;
    for (uint32_t i = 0; i < im->enabled_extension_count; i++)
        if (im->enabled_extensions[i] &&
            strcmp(im->enabled_extensions[i], VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME) == 0)
            return true;
    return false;
}

static vkattn_result open_device(struct vkattn_context *ctx, const vkattn_context_desc *desc)
{
    const vkattn_import_desc *im = &desc->import;
    vkattn_result r = vka_loader_init(ctx, im->device ? im->get_instance_proc_addr : NULL);
    if (r != VKATTN_SUCCESS)
        return r;
    if (im->device) {
        if ((r = check_import(ctx, im)) != VKATTN_SUCCESS)
            return r;
        ctx->instance = im->instance;
        ctx->physical_device = im->physical_device;
        ctx->device = im->device;
        ctx->queue = im->queue;
        ctx->queue_family_index = im->queue_family_index;
        ctx->queue_index = im->queue_index;
        ctx->lock_queue = im->lock_queue;
        ctx->unlock_queue = im->unlock_queue;
        ctx->queue_lock_user = im->queue_lock_user;
        ctx->info.imported = true;
        vka_instance_table_load(ctx->instance, &ctx->vki);
        const char *why = "";
        if (!vka_device_usable(ctx, ctx->physical_device, &why))
            return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED,
                            "vkattn_context_create: the imported device is not usable: %s "
                            "(enable the extensions from vkattn_required_device_extensions)",
                            why);
        vka_device_table_load(&ctx->vki, ctx->device, &ctx->vk);
        ctx->push_descriptor_enabled = !ctx->profile->no_push_descriptors &&
                                       imported_push_descriptors(ctx, im);
        return vka_device_query(ctx, im->api_version ? im->api_version : VK_API_VERSION_1_1);
    }
    if ((r = vka_instance_create(ctx, desc->enable_validation)) != VKATTN_SUCCESS)
        return r;
    if ((r = vka_device_choose(ctx, desc)) != VKATTN_SUCCESS)
        return r;
    if ((r = vka_device_create(ctx)) != VKATTN_SUCCESS)
        return r;
    vka_device_table_load(&ctx->vki, ctx->device, &ctx->vk);
    ctx->vk.vkGetDeviceQueue(ctx->device, ctx->queue_family_index, 0, &ctx->queue);
    return vka_device_query(ctx, ctx->instance_api_version);
}

static bool init_locks(struct vkattn_context *ctx)
{
    if (!vka_mutex_init(&ctx->pipeline_lock))
        return false;
    if (!vka_rmutex_init(&ctx->lock)) {
        vka_mutex_destroy(&ctx->pipeline_lock);
        return false;
    }
    if (!vka_logger_init(&ctx->logger)) {
        vka_rmutex_destroy(&ctx->lock);
        vka_mutex_destroy(&ctx->pipeline_lock);
        return false;
    }
    ctx->locks_ready = true;
    return true;
}

static void destroy_locks(struct vkattn_context *ctx)
{
    if (!ctx->locks_ready)
        return;
    vka_logger_destroy(&ctx->logger);
    vka_rmutex_destroy(&ctx->lock);
    vka_mutex_destroy(&ctx->pipeline_lock);
    ctx->locks_ready = false;
}

/* Whether `data` has a pipeline cache header (version one) of this very
 * device; else vkattn would hand the driver bytes it may not check as
 * carefully as the spec asks. */
static bool cache_data_matches(struct vkattn_context *ctx, const uint8_t *data, size_t size,
                               const char **why)
{
    VkPhysicalDeviceProperties props;
    ctx->vki.vkGetPhysicalDeviceProperties(ctx->physical_device, &props);
    uint32_t header[4];
    if (size < 16 + VK_UUID_SIZE) {
        *why = "it is shorter than a pipeline cache header";
        return false;
    }
    memcpy(header, data, sizeof header);
    if (header[0] < 16 + VK_UUID_SIZE || header[1] != VK_PIPELINE_CACHE_HEADER_VERSION_ONE) {
        *why = "its header is not a Vulkan pipeline cache header";
        return false;
    }
    /* headerSize past the end: a driver would read beyond the data */
    if (header[0] > size) {
        *why = "its header's headerSize is larger than the data";
        return false;
    }
    if (header[2] != props.vendorID || header[3] != props.deviceID ||
        memcmp(data + 16, props.pipelineCacheUUID, VK_UUID_SIZE) != 0) {
        *why = "it comes from another device or driver version";
        return false;
    }
    return true;
}

/* vkattn's own VkPipelineCache, seeded with desc->pipeline_cache_data, when
 * the app gave none. A cache that cannot be created only costs compile time. */
static vkattn_result create_pipeline_cache(struct vkattn_context *ctx,
                                           const vkattn_context_desc *desc)
{
    const uint8_t *data = desc->pipeline_cache_data;
    size_t size = data ? desc->pipeline_cache_size : 0;
    if (ctx->pipeline_cache) {
        if (size)
            vka_log(ctx, VKATTN_LOG_WARN, "vkattn_context_create: pipeline_cache_data is ignored "
                                          "because pipeline_cache is set");
        return VKATTN_SUCCESS;
    }
    const char *why = NULL;
    if (size && !cache_data_matches(ctx, data, size, &why)) {
        vka_log(ctx, VKATTN_LOG_WARN,
                "vkattn_context_create: pipeline_cache_data (%zu bytes) is ignored: %s; "
                "pipelines are compiled afresh",
                size, why);
        size = 0;
    }
    VkPipelineCacheCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
        .initialDataSize = size,
        .pInitialData = size ? data : NULL,
    };
    VkResult vr = ctx->vk.vkCreatePipelineCache(ctx->device, &info, NULL, &ctx->pipeline_cache);
    if (vr != VK_SUCCESS) {
        vka_log(ctx, VKATTN_LOG_WARN, "vkCreatePipelineCache failed (VkResult %d); pipelines are "
                                      "created without a cache", (int)vr);
        ctx->pipeline_cache = VK_NULL_HANDLE;
        return VKATTN_SUCCESS;
    }
    ctx->owns_pipeline_cache = true;
    if (size)
        vka_log(ctx, VKATTN_LOG_INFO, "pipeline cache seeded with %zu bytes", size);
    return VKATTN_SUCCESS;
}

vkattn_result vka_context_create(const vkattn_context_desc *desc, vkattn_context **out)
{
    /* not __func__: that is the versioned symbol (VKATTN_ABI_NAME) */
    static const char fn[] = "vkattn_context_create";
    if (!out)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    if (!desc)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: desc is NULL", fn);
    if (desc->import.device && desc->enable_validation)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "vkattn_context_create: enable_validation applies to vkattn's own "
                        "device only; enable the layer on the instance you import");

    struct vkattn_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of memory", fn);
    ctx->logger.fn = desc->log;
    ctx->logger.user = desc->log_user;
    ctx->logger.max_level = desc->log_level;
    ctx->pipeline_cache = desc->pipeline_cache;
    if (!init_locks(ctx)) {
        free(ctx);
        return vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY,
                        "%s: creating the context's mutexes failed", fn);
    }

    const vkattn_tuning tuning = desc->advanced ? desc->advanced->tuning : VKATTN_TUNING_AUTO;
    if ((unsigned)tuning > VKATTN_TUNING_CPU) {
        destroy_locks(ctx);
        free(ctx);
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "vkattn_context_create: advanced->tuning is %d; not a vkattn_tuning "
                        "value",
                        (int)tuning);
    }
    if (desc->advanced && (unsigned)desc->advanced->cooperative_matrix > VKATTN_COOPMAT_ON) {
        destroy_locks(ctx);
        free(ctx);
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "vkattn_context_create: advanced->cooperative_matrix is %d; not a "
                        "vkattn_coopmat_mode value (AUTO, OFF, ON)",
                        (int)desc->advanced->cooperative_matrix);
    }
    if (desc->advanced && (desc->advanced->coopmat_families & ~VKA_COOPMAT_ALL)) {
        destroy_locks(ctx);
        free(ctx);
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "vkattn_context_create: advanced->coopmat_families is 0x%x; only the "
                        "VKATTN_COOPMAT_NV, _KHR, _NV2 and _EMULATED bits (0x%x) are families",
                        (unsigned)desc->advanced->coopmat_families, (unsigned)VKA_COOPMAT_ALL);
    }
    /* the indices were checked against the families' counts by
     * vkattn_context_create (ops/context_create.c: ops own the variants) */
    for (uint32_t f = 0; desc->advanced && f < VKATTN_VARIANT_FAMILIES; f++)
        ctx->variants[f] = desc->advanced->variants[f];
    ctx->profile = vka_profile_find(desc->profile);
    if (!ctx->profile) {
        destroy_locks(ctx);
        free(ctx);
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "vkattn_context_create: profile \"%s\" is unknown (see "
                        "vkattn_profile_names: desktop, mobile-min, mali, adreno)",
                        desc->profile);
    }
    ctx->max_dispatch_work = desc->max_dispatch_work;
    ctx->want_pipeline_stats = desc->advanced && desc->advanced->capture_pipeline_stats;
    ctx->coopmat_mode = desc->advanced ? (int)desc->advanced->cooperative_matrix : 0;
    ctx->coopmat_emulate = desc->advanced && desc->advanced->coopmat_emulate;
    ctx->coopmat_test_fault = desc->advanced && desc->advanced->coopmat_test_fault;
    ctx->coopmat_families = desc->advanced ? desc->advanced->coopmat_families : 0;
    if (!desc->allocator.allocate != !desc->allocator.free) {
        free(ctx);
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "vkattn_context_create: allocator.%s is NULL but allocator.%s is set; "
                        "give both or neither",
                        desc->allocator.allocate ? "free" : "allocate",
                        desc->allocator.allocate ? "allocate" : "free");
    }
    ctx->mem.app = desc->allocator;
    if (desc->import.enabled_extension_count && !desc->import.enabled_extensions) {
        destroy_locks(ctx);
        free(ctx);
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "vkattn_context_create: import.enabled_extension_count is %u but "
                        "import.enabled_extensions is NULL",
                        desc->import.enabled_extension_count);
    }
    vkattn_result r = vka_tracker_init(ctx);
    if (r == VKATTN_SUCCESS)
        r = open_device(ctx, desc);
    if (r == VKATTN_SUCCESS)
        ctx->info.cpu_tuning = tuning == VKATTN_TUNING_AUTO
                                   ? ctx->info.device_type == VKATTN_DEVICE_CPU
                                   : tuning == VKATTN_TUNING_CPU;
    if (r == VKATTN_SUCCESS && desc->advanced && desc->advanced->no_subgroups)
        ctx->info.subgroup_operations = ctx->subgroup_shuffle = false;
    if (r == VKATTN_SUCCESS)
        vka_coopmat_setup(ctx);
    if (r == VKATTN_SUCCESS)
        r = vka_submit_init(ctx);
    if (r == VKATTN_SUCCESS)
        r = vka_buffer_create(ctx, 256, VKA_MEMORY_DEVICE, &ctx->dummy);
    if (r == VKATTN_SUCCESS)
        r = create_pipeline_cache(ctx, desc);
    if (r != VKATTN_SUCCESS)
        goto fail;
    *out = ctx;
    return VKATTN_SUCCESS;

fail:
    vkattn_context_destroy(ctx);
    return r;
}

void vkattn_context_destroy(vkattn_context *ctx)
{
    if (!ctx)
        return;
    if (ctx->device && ctx->vk.vkQueueWaitIdle && ctx->queue && ctx->owns_device)
        ctx->vk.vkQueueWaitIdle(ctx->queue);
    if (ctx->device && ctx->vk.vkDestroyPipeline) {
        vka_kept_destroy(ctx);
        vka_thread_scratch_destroy(ctx);
        vka_descriptors_destroy(ctx);
        vka_pipelines_destroy(ctx);
        if (ctx->owns_pipeline_cache)
            ctx->vk.vkDestroyPipelineCache(ctx->device, ctx->pipeline_cache, NULL);
        vka_buffer_destroy(ctx, &ctx->dummy);
        vka_memory_destroy(ctx);
        vka_submit_destroy(ctx);
    }
    if (ctx->owns_device && ctx->device)
        ctx->vk.vkDestroyDevice(ctx->device, NULL);
    vka_tracker_destroy(ctx);
    vka_instance_destroy(ctx);
    destroy_locks(ctx);
    free(ctx);
}

const char *vkattn_context_last_error(const vkattn_context *ctx)
{
    /* the logger's lock is the context's own state, not part of what const promises */
    return ctx ? vka_logger_last_error(&((vkattn_context *)ctx)->logger)
               : "vkattn_context_last_error: ctx is NULL";
}

vkattn_result vkattn_context_get_pipeline_cache_data(vkattn_context *ctx, void *data, size_t *size)
{
    if (!ctx || !size)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", __func__,
                        !ctx ? "ctx" : "size");
    if (!ctx->pipeline_cache) {
        *size = 0;
        return VKATTN_SUCCESS;
    }
    size_t need = 0;
    VkResult vr = ctx->vk.vkGetPipelineCacheData(ctx->device, ctx->pipeline_cache, &need, NULL);
    if (vr != VK_SUCCESS)
        return vka_vk_fail(ctx, vr, "vkGetPipelineCacheData");
    if (!data) {
        *size = need;
        return VKATTN_SUCCESS;
    }
    if (*size < need) {
        size_t given = *size;
        *size = need;
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: *size is %zu; the data needs %zu bytes (call with data NULL first)",
                        __func__, given, need);
    }
    /* VK_INCOMPLETE: the cache grew between the two calls (another thread compiled) */
    size_t got = *size;
    vr = ctx->vk.vkGetPipelineCacheData(ctx->device, ctx->pipeline_cache, &got, data);
    if (vr != VK_SUCCESS && vr != VK_INCOMPLETE)
        return vka_vk_fail(ctx, vr, "vkGetPipelineCacheData");
    *size = got;
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_context_get_stats(const vkattn_context *ctx, vkattn_context_stats *stats)
{
    if (!ctx || !stats)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", __func__,
                        !ctx ? "ctx" : "stats");
    vkattn_context *c = (vkattn_context *)ctx; /* the lock is not what const promises */
    vka_lock(c);
    *stats = c->stats;
    vka_unlock(c);
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_context_get_info(const vkattn_context *ctx, vkattn_context_info *info)
{
    if (!ctx || !info)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", __func__,
                        !ctx ? "ctx" : "info");
    *info = ctx->info;
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_context_memory_usage(const vkattn_context *ctx, uint64_t *current,
                                          uint64_t *peak)
{
    if (!ctx)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: ctx is NULL", __func__);
    vkattn_context *c = (vkattn_context *)ctx; /* the lock is not what const promises */
    vka_lock(c);
    if (current)
        *current = ctx->memory_current;
    if (peak)
        *peak = ctx->memory_peak;
    vka_unlock(c);
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_context_memory_stats(const vkattn_context *ctx, vkattn_memory_stats *stats)
{
    if (!ctx || !stats)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s is NULL", __func__, !ctx ? "ctx" : "stats");
    *stats = (vkattn_memory_stats){
        .device_allocations = ctx->mem.device_allocations,
        .device_bytes = ctx->mem.device_bytes,
        .dedicated_allocations = ctx->mem.dedicated_allocations,
        .used_bytes = ctx->memory_current,
        .peak_used_bytes = ctx->memory_peak,
        .buffers = ctx->mem.buffers,
        .app_allocations = ctx->mem.app_allocations,
    };
    return VKATTN_SUCCESS;
}

void vkattn_context_reset_peak_memory(vkattn_context *ctx)
{
    if (ctx) {
        vka_lock(ctx);
        ctx->memory_peak = ctx->memory_current;
        vka_unlock(ctx);
    }
}

vkattn_result vkattn_context_begin_commands(vkattn_context *ctx, VkCommandBuffer *cmd)
{
    if (!ctx || !cmd)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", __func__,
                        !ctx ? "ctx" : "cmd");
    return vka_begin(ctx, cmd);
}

vkattn_result vkattn_context_submit_and_wait(vkattn_context *ctx, VkCommandBuffer cmd)
{
    if (!ctx || !cmd)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s is NULL", __func__, !ctx ? "ctx" : "cmd");
    if (cmd != ctx->command_buffer || !ctx->command_buffer_open)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "vkattn_context_submit_and_wait: cmd is not the context's open command "
                        "buffer from vkattn_context_begin_commands");
    return vka_end_submit_wait(ctx, cmd, VKATTN_SUCCESS);
}
