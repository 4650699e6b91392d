/* Cooperative-matrix detection and enabling (vk/coopmat.h). The KHR
 * flavour is reported by name only: Debian 12's Vulkan headers (1.3.239)
 * predate VK_KHR_cooperative_matrix, and its glslc cannot compile KHR
 * kernels, so this build has NV kernels alone. */
#include "vk/coopmat.h"

#include "vk/context.h"
#include "vk/instance.h"
#include "vkattn/advanced.h"

#include <stdlib.h>
#include <string.h>

#define KHR_COOPMAT "VK_KHR_cooperative_matrix"

static bool nv_lists_f16_shape(struct vkattn_context *ctx, VkPhysicalDevice pd)
{
    PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV get =
        ctx->vki.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV;
    uint32_t n = 0;
    if (!get || get(pd, &n, NULL) != VK_SUCCESS || !n)
        return false;
    VkCooperativeMatrixPropertiesNV *p = calloc(n, sizeof *p);
    bool found = false;
    if (p) {
        for (uint32_t i = 0; i < n; i++)
            p[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV;
        if (get(pd, &n, p) == VK_SUCCESS)
            for (uint32_t i = 0; i < n && !found; i++)
                found = p[i].MSize == 16 && p[i].NSize == 16 && p[i].KSize == 16 &&
                        p[i].AType == VK_COMPONENT_TYPE_FLOAT16_NV &&
                        p[i].BType == VK_COMPONENT_TYPE_FLOAT16_NV &&
                        p[i].CType == VK_COMPONENT_TYPE_FLOAT32_NV &&
                        p[i].DType == VK_COMPONENT_TYPE_FLOAT32_NV &&
                        p[i].scope == VK_SCOPE_SUBGROUP_NV;
    }
    free(p);
    return found;
}

void vka_coopmat_query(struct vkattn_context *ctx, VkPhysicalDevice pd, vka_coopmat_support *out)
{
    memset(out, 0, sizeof *out);
    const bool nv = vka_device_has_extension(ctx, pd, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    if (nv)
        out->flavours |= VKATTN_COOPMAT_NV;
    if (vka_device_has_extension(ctx, pd, KHR_COOPMAT))
        out->flavours |= VKATTN_COOPMAT_KHR;
    if (!nv)
        return;
    out->f16_16x16x16 = nv_lists_f16_shape(ctx, pd);
    const bool f16_ext = vka_device_has_extension(ctx, pd, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
    const bool vmm_ext = vka_device_has_extension(ctx, pd, VK_KHR_VULKAN_MEMORY_MODEL_EXTENSION_NAME);
    if (!f16_ext || !vmm_ext)
        return;
    vka_coopmat_enable f;
    memset(&f, 0, sizeof f);
    f.coopmat.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV;
    f.f16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR;
    f.memory_model.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES_KHR;
    f.coopmat.pNext = &f.f16;
    f.f16.pNext = &f.memory_model;
    VkPhysicalDeviceFeatures2 feats = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
        .pNext = &f.coopmat,
    };
    ctx->vki.vkGetPhysicalDeviceFeatures2(pd, &feats);
    /* Device scope too: once the memory model is on, validation refuses any
     * shader using device scope (barriers and atomics of the other kernels)
     * unless vulkanMemoryModelDeviceScope is on as well. */
    out->kernels_can_run = out->f16_16x16x16 && f.coopmat.cooperativeMatrix &&
                           f.f16.shaderFloat16 && f.memory_model.vulkanMemoryModel &&
                           f.memory_model.vulkanMemoryModelDeviceScope;
}

void *vka_coopmat_chain(vka_coopmat_enable *e, void *next, const char **extensions, uint32_t *n)
{
    memset(e, 0, sizeof *e);
    e->coopmat.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV;
    e->coopmat.cooperativeMatrix = VK_TRUE;
    e->coopmat.pNext = &e->f16;
    e->f16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR;
    e->f16.shaderFloat16 = VK_TRUE;
    e->f16.pNext = &e->memory_model;
    e->memory_model.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES_KHR;
    e->memory_model.vulkanMemoryModel = VK_TRUE;
    e->memory_model.vulkanMemoryModelDeviceScope = VK_TRUE;
    e->memory_model.pNext = next;
    extensions[(*n)++] = VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME;
    extensions[(*n)++] = VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME;
    extensions[(*n)++] = VK_KHR_VULKAN_MEMORY_MODEL_EXTENSION_NAME;
    return &e->coopmat;
}

/* The device classes whose cooperative-matrix results were verified on the
 * hardware (the whole GPU suite under validation with the path on) and written
 * in docs/PERFORMANCE.md; AUTO runs the path on these only. */
static const struct {
    uint32_t vendor_id, device_id;
    unsigned kernels; /* vka_coopmat_kernel bits verified */
    const char *what;
} verified[] = {
    {0x10de, 0x2330, VKA_COOPMAT_MATMUL, "NVIDIA H100 80GB HBM3, driver 580.159.04, 2026-11-26"},
};

static unsigned verified_kernels(const VkPhysicalDeviceProperties *props)
{
    for (size_t i = 0; i < sizeof verified / sizeof verified[0]; i++)
        if (props->vendorID == verified[i].vendor_id && props->deviceID == verified[i].device_id)
            return verified[i].kernels;
    return 0;
}

bool vka_coopmat_wanted(int mode, const VkPhysicalDeviceProperties *props)
{
    if (mode != VKATTN_COOPMAT_AUTO)
        return mode == VKATTN_COOPMAT_ON;
    return verified_kernels(props) != 0;
}

bool vka_coopmat_attention_runs(const struct vkattn_context *ctx)
{
    const vkattn_context_info *info = &ctx->info;
    const bool hardware = ctx->coopmat_flash && info->coopmat_enabled &&
                          info->subgroup_size == 32 && info->min_subgroup_size == 32 &&
                          info->max_subgroup_size == 32;
    return (ctx->coopmat_emulate || hardware) && !info->cpu_tuning &&
           info->max_storage_buffers_per_stage >= 8;
}

vka_coopmat_matmul vka_coopmat_matmul_runs(const struct vkattn_context *ctx)
{
    if (ctx->info.cpu_tuning)
        return VKA_COOPMAT_MATMUL_NONE;
    if (ctx->coopmat_emulate)
        return VKA_COOPMAT_MATMUL_EMULATED;
    return ctx->info.coopmat_enabled && ctx->loop_budget == UINT64_MAX
               ? VKA_COOPMAT_MATMUL_HARDWARE
               : VKA_COOPMAT_MATMUL_NONE;
}

bool vka_coopmat_kernel_wanted(int mode, const VkPhysicalDeviceProperties *props,
                               vka_coopmat_kernel kernel)
{
    if (mode != VKATTN_COOPMAT_AUTO)
        return mode == VKATTN_COOPMAT_ON;
    return (verified_kernels(props) & kernel) != 0;
}
