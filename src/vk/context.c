/* Context lifetime: own device or the app's, and the small per-context state
 * (logger, one-shot command buffer, pipeline cache, dummy buffer). */
#include "vk/context.h"

#include "core/error.h"
#include "vk/instance.h"
#include "vk/profile.h"
#include "vk/submit.h"
#include "vkattn/tensor.h"

#include <stdlib.h>
#include <string.h>

vka_logger *vka_context_logger(struct vkattn_context *ctx) { return ctx ? &ctx->logger : NULL; }

static vkattn_result check_import(struct vkattn_context *ctx, const vkattn_import_desc *im)
{
    const char *missing = !im->instance          ? "import.instance"
                          : !im->physical_device ? "import.physical_device"
                          : !im->queue           ? "import.queue"
                                                 : NULL;
    if (missing)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "vkattn_context_create: import.device is set but %s is NULL", missing);
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
    return vka_device_query(ctx, VK_API_VERSION_1_1);
}

vkattn_result vkattn_context_create(const vkattn_context_desc *desc, vkattn_context **out)
{
    if (!out)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "vkattn_context_create: out is NULL");
    *out = NULL;
    if (!desc)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "vkattn_context_create: desc is NULL");
    if (desc->import.device && desc->enable_validation)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "vkattn_context_create: enable_validation applies to vkattn's own "
                        "device only; enable the layer on the instance you import");

    struct vkattn_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "vkattn_context_create: out of memory");
    ctx->logger.fn = desc->log;
    ctx->logger.user = desc->log_user;
    ctx->logger.max_level = desc->log_level;
    ctx->pipeline_cache = desc->pipeline_cache;

    if ((unsigned)desc->tuning > VKATTN_TUNING_CPU) {
        free(ctx);
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "vkattn_context_create: tuning is %d; not a vkattn_tuning value",
                        (int)desc->tuning);
    }
    ctx->profile = vka_profile_find(desc->profile);
    if (!ctx->profile) {
        free(ctx);
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "vkattn_context_create: profile \"%s\" is unknown (see "
                        "vkattn_profile_names: desktop, mobile-min, mali, adreno)",
                        desc->profile);
    }
    ctx->max_dispatch_work = desc->max_dispatch_work;
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
        free(ctx);
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "vkattn_context_create: import.enabled_extension_count is %u but "
                        "import.enabled_extensions is NULL",
                        desc->import.enabled_extension_count);
    }
    vkattn_result r = open_device(ctx, desc);
    if (r == VKATTN_SUCCESS)
        ctx->info.cpu_tuning = desc->tuning == VKATTN_TUNING_AUTO
                                   ? ctx->info.device_type == VKATTN_DEVICE_CPU
                                   : desc->tuning == VKATTN_TUNING_CPU;
    if (r == VKATTN_SUCCESS)
        r = vka_submit_init(ctx);
    if (r == VKATTN_SUCCESS)
        r = vka_buffer_create(ctx, 256, VKA_MEMORY_DEVICE, &ctx->dummy);
    if (r == VKATTN_SUCCESS)
        r = vka_buffer_create(ctx, 256, VKA_MEMORY_DEVICE, &ctx->sink);
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
        vka_growable_destroy(&ctx->workspace);
        vka_growable_destroy(&ctx->pack);
        vka_descriptors_destroy(ctx);
        vka_pipelines_destroy(ctx);
        vka_buffer_destroy(ctx, &ctx->dummy);
        vka_buffer_destroy(ctx, &ctx->sink);
        vka_memory_destroy(ctx);
        vka_submit_destroy(ctx);
    }
    if (ctx->owns_device && ctx->device)
        ctx->vk.vkDestroyDevice(ctx->device, NULL);
    vka_instance_destroy(ctx);
    free(ctx);
}

vkattn_result vka_check_loop_budget(struct vkattn_context *ctx, const char *caller,
                                    uint64_t iterations, const char *what)
{
    if (iterations <= ctx->loop_budget)
        return VKATTN_SUCCESS;
    return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                    "%s: %s is too large for %s, which ends a shader invocation after %llu loop "
                    "iterations (this call needs about %llu)",
                    caller, what, ctx->info.device_name, (unsigned long long)ctx->loop_budget,
                    (unsigned long long)iterations);
}

const char *vkattn_context_last_error(const vkattn_context *ctx)
{
    return ctx ? ctx->logger.last_error : "vkattn_context_last_error: ctx is NULL";
}

vkattn_result vkattn_context_get_info(const vkattn_context *ctx, vkattn_context_info *info)
{
    if (!ctx || !info)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "vkattn_context_get_info: %s is NULL",
                        !ctx ? "ctx" : "info");
    *info = ctx->info;
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_context_memory_usage(const vkattn_context *ctx, uint64_t *current,
                                          uint64_t *peak)
{
    if (!ctx)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "vkattn_context_memory_usage: ctx is NULL");
    if (current)
        *current = ctx->memory_current;
    if (peak)
        *peak = ctx->memory_peak;
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_context_memory_stats(const vkattn_context *ctx, vkattn_memory_stats *stats)
{
    if (!ctx || !stats)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "vkattn_context_memory_stats: %s is NULL", !ctx ? "ctx" : "stats");
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
    if (ctx)
        ctx->memory_peak = ctx->memory_current;
}

vkattn_result vkattn_context_begin_commands(vkattn_context *ctx, VkCommandBuffer *cmd)
{
    if (!ctx || !cmd)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "vkattn_context_begin_commands: %s is NULL",
                        !ctx ? "ctx" : "cmd");
    return vka_begin(ctx, cmd);
}

vkattn_result vkattn_context_submit_and_wait(vkattn_context *ctx, VkCommandBuffer cmd)
{
    if (!ctx || !cmd)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "vkattn_context_submit_and_wait: %s is NULL", !ctx ? "ctx" : "cmd");
    if (cmd != ctx->command_buffer || !ctx->command_buffer_open)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "vkattn_context_submit_and_wait: cmd is not the context's open command "
                        "buffer from vkattn_context_begin_commands");
    return vka_end_submit_wait(ctx, cmd, VKATTN_SUCCESS);
}
