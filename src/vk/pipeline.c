/* Pipelines created on first use and kept for the context's lifetime, keyed by
 * shader and specialization constants (never created per call). */
#include "vk/pipeline.h"

#include "core/error.h"
#include "vk/context.h"

#include <stdlib.h>
#include <string.h>

static bool same_kernel(const vka_kernel *a, const vka_kernel *b)
{
    return a->code == b->code && a->n_spec == b->n_spec &&
           memcmp(a->spec, b->spec, a->n_spec * sizeof a->spec[0]) == 0;
}

static vkattn_result create_layouts(struct vkattn_context *ctx, vka_pipeline *p)
{
    if (p->key.n_bindings > ctx->info.max_storage_buffers_per_stage)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s binds %u storage buffers; maxPerStageDescriptorStorageBuffers is %u",
                        p->key.name, p->key.n_bindings, ctx->info.max_storage_buffers_per_stage);
    VkDescriptorSetLayoutBinding bindings[VKA_MAX_BINDINGS];
    for (uint32_t i = 0; i < p->key.n_bindings; i++)
        bindings[i] = (VkDescriptorSetLayoutBinding){
            .binding = i,
            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            .descriptorCount = 1,
            .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        };
    VkDescriptorSetLayoutCreateInfo set_info = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        /* else sets come from the context's cache (vk/descriptors.h) */
        .flags = ctx->info.push_descriptors ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR
                                            : 0,
        .bindingCount = p->key.n_bindings,
        .pBindings = bindings,
    };
    VkResult vr = ctx->vk.vkCreateDescriptorSetLayout(ctx->device, &set_info, NULL, &p->set_layout);
    if (vr != VK_SUCCESS)
        return vka_vk_fail(ctx, vr, "vkCreateDescriptorSetLayout");
    VkPushConstantRange push = {
        .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        .size = p->key.push_size,
    };
    VkPipelineLayoutCreateInfo layout_info = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = 1,
        .pSetLayouts = &p->set_layout,
        .pushConstantRangeCount = p->key.push_size ? 1 : 0,
        .pPushConstantRanges = &push,
    };
    vr = ctx->vk.vkCreatePipelineLayout(ctx->device, &layout_info, NULL, &p->layout);
    if (vr != VK_SUCCESS)
        return vka_vk_fail(ctx, vr, "vkCreatePipelineLayout");
    return VKATTN_SUCCESS;
}

static vkattn_result create_pipeline(struct vkattn_context *ctx, vka_pipeline *p)
{
    vkattn_result r = create_layouts(ctx, p);
    if (r != VKATTN_SUCCESS)
        return r;
    VkShaderModuleCreateInfo module_info = {
        .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
        .codeSize = p->key.code_size,
        .pCode = p->key.code,
    };
    VkShaderModule module;
    VkResult vr = ctx->vk.vkCreateShaderModule(ctx->device, &module_info, NULL, &module);
    if (vr != VK_SUCCESS)
        return vka_vk_fail(ctx, vr, "vkCreateShaderModule");

    VkSpecializationMapEntry entries[VKA_MAX_SPEC];
    for (uint32_t i = 0; i < p->key.n_spec; i++)
        entries[i] = (VkSpecializationMapEntry){.constantID = i,
                                                .offset = i * (uint32_t)sizeof(uint32_t),
                                                .size = sizeof(uint32_t)};
    VkSpecializationInfo spec = {
        .mapEntryCount = p->key.n_spec,
        .pMapEntries = entries,
        .dataSize = p->key.n_spec * sizeof(uint32_t),
        .pData = p->key.spec,
    };
    VkComputePipelineCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage =
            {
                .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = module,
                .pName = "main",
                .pSpecializationInfo = p->key.n_spec ? &spec : NULL,
            },
        .layout = p->layout,
        .flags = ctx->pipeline_stats ? VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR : 0,
    };
    vr = ctx->vk.vkCreateComputePipelines(ctx->device, ctx->pipeline_cache, 1, &info, NULL,
                                          &p->pipeline);
    ctx->vk.vkDestroyShaderModule(ctx->device, module, NULL);
    if (vr != VK_SUCCESS)
        return vka_vk_fail(ctx, vr, "vkCreateComputePipelines");
    return VKATTN_SUCCESS;
}

static void destroy_one(struct vkattn_context *ctx, vka_pipeline *p)
{
    if (p->pipeline)
        ctx->vk.vkDestroyPipeline(ctx->device, p->pipeline, NULL);
    if (p->layout)
        ctx->vk.vkDestroyPipelineLayout(ctx->device, p->layout, NULL);
    if (p->set_layout)
        ctx->vk.vkDestroyDescriptorSetLayout(ctx->device, p->set_layout, NULL);
}

static const vka_pipeline *find(struct vkattn_context *ctx, const vka_kernel *kernel)
{
    for (uint32_t i = 0; i < ctx->n_pipelines; i++)
        if (same_kernel(&ctx->pipelines[i]->key, kernel))
            return ctx->pipelines[i];
    return NULL;
}

/* Adds `p` unless another thread added the same kernel meanwhile; *out is
 * the one in the list. Called with pipeline_lock held. */
static vkattn_result insert(struct vkattn_context *ctx, vka_pipeline *p, const vka_pipeline **out)
{
    const vka_pipeline *other = find(ctx, &p->key);
    if (other) {
        *out = other;
        destroy_one(ctx, p);
        free(p);
        return VKATTN_SUCCESS;
    }
    if (ctx->n_pipelines == ctx->cap_pipelines) {
        uint32_t cap = ctx->cap_pipelines ? ctx->cap_pipelines * 2 : 16;
        vka_pipeline **grown = realloc(ctx->pipelines, cap * sizeof *grown);
        if (!grown) {
            destroy_one(ctx, p);
            free(p);
            return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "out of host memory (pipelines)");
        }
        ctx->pipelines = grown;
        ctx->cap_pipelines = cap;
    }
    ctx->pipelines[ctx->n_pipelines++] = p;
    *out = p;
    return VKATTN_SUCCESS;
}

vkattn_result vka_pipeline_get(struct vkattn_context *ctx, const vka_kernel *kernel,
                               const vka_pipeline **out)
{
    vka_mutex_lock(&ctx->pipeline_lock);
    *out = find(ctx, kernel);
    vka_mutex_unlock(&ctx->pipeline_lock);
    if (*out)
        return VKATTN_SUCCESS;
    /* each pipeline has its own allocation: pointers handed out stay valid */
    vka_pipeline *p = calloc(1, sizeof *p);
    if (!p)
        return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "out of host memory (pipelines)");
    p->key = *kernel;
    /* compiled without the lock: other threads' lookups go on meanwhile */
    vkattn_result r = create_pipeline(ctx, p);
    if (r != VKATTN_SUCCESS) {
        destroy_one(ctx, p);
        free(p);
        return vka_fail(ctx, r, "creating the %s pipeline failed: %s", kernel->name,
                        vkattn_context_last_error(ctx));
    }
    vka_lock(ctx);
    ctx->stats.pipelines_created++;
    vka_unlock(ctx);
    vka_log(ctx, VKATTN_LOG_DEBUG, "pipeline %s created (%u spec constants)", kernel->name,
            kernel->n_spec);
    vka_mutex_lock(&ctx->pipeline_lock);
    r = insert(ctx, p, out);
    vka_mutex_unlock(&ctx->pipeline_lock);
    return r;
}

void vka_pipelines_destroy(struct vkattn_context *ctx)
{
    for (uint32_t i = 0; i < ctx->n_pipelines; i++) {
        destroy_one(ctx, ctx->pipelines[i]);
        free(ctx->pipelines[i]);
    }
    free(ctx->pipelines);
    ctx->pipelines = NULL;
    ctx->n_pipelines = ctx->cap_pipelines = 0;
}
