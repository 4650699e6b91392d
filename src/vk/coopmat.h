/* Cooperative matrices (tensor cores): what the device offers, and the
 * features a device vkattn creates must enable for vkattn's
 * GL_NV_cooperative_matrix kernels (shaders/matmul_coopmat_nv.comp). */
#ifndef VKA_VK_COOPMAT_H
#define VKA_VK_COOPMAT_H

#include <stdbool.h>

#include "vk/vk.h"
#include "vkattn/context.h"

struct vkattn_context;

/* What the physical device offers: flavours (VKATTN_COOPMAT_* bits), the
 * f16 x f16 -> f32 16x16x16 subgroup shape, and the features the kernels
 * need besides (cooperativeMatrix, shaderFloat16, vulkanMemoryModel and its
 * device scope: the kernels use subgroup scopes, which glslang emits under
 * the Vulkan memory model, and with the model on every other kernel's device
 * scope needs vulkanMemoryModelDeviceScope). */
typedef struct vka_coopmat_support {
    uint32_t flavours;
    bool f16_16x16x16;
    bool kernels_can_run; /* NV extension, the shape and every feature above */
} vka_coopmat_support;

void vka_coopmat_query(struct vkattn_context *ctx, VkPhysicalDevice pd, vka_coopmat_support *out);

/* Feature structs to chain into VkDeviceCreateInfo when the kernels are to
 * run, and the extensions to enable (appended to `extensions`). */
typedef struct vka_coopmat_enable {
    VkPhysicalDeviceCooperativeMatrixFeaturesNV coopmat;
    VkPhysicalDeviceShaderFloat16Int8FeaturesKHR f16;
    VkPhysicalDeviceVulkanMemoryModelFeaturesKHR memory_model;
} vka_coopmat_enable;

/* Fills *e, chains it in front of *next (returns the new head) and appends
 * its extensions to extensions[*n]. */
void *vka_coopmat_chain(vka_coopmat_enable *e, void *next, const char **extensions, uint32_t *n);

/* Whether vkattn's cooperative-matrix kernels are to run on a device that
 * can run them, for `mode` (a vkattn_coopmat_mode): ON yes, OFF no, AUTO only
 * on the device classes whose results were verified on real hardware
 * (docs/PERFORMANCE.md). Decided before the device is created, which enables
 * the features only then. */
bool vka_coopmat_wanted(int mode, const VkPhysicalDeviceProperties *props);

/* The kernels a device class was verified with, each on its own: the fused
 * attention kernel (shaders/flash_coopmat_nv.comp) came after the matmul
 * and is not verified on any device yet. */
typedef enum vka_coopmat_kernel {
    VKA_COOPMAT_MATMUL = 1u,
    VKA_COOPMAT_FLASH = 2u,
} vka_coopmat_kernel;

/* Whether `kernel` is to run on a context whose device has the path enabled
 * (vka_coopmat_wanted said yes): under ON always, under AUTO only where the
 * device class was verified with that kernel. */
bool vka_coopmat_kernel_wanted(int mode, const VkPhysicalDeviceProperties *props,
                               vka_coopmat_kernel kernel);

/* Whether the fused attention forward takes its cooperative-matrix kernel
 * on this context (vkattn_context_info.coopmat_attention): emulated where
 * vkattn_context_advanced.coopmat_emulate asks, else on hardware where
 * ctx->coopmat_flash and the subgroup is fixed at 32 (the kernel's warps are
 * subgroups); and in either case the GPU tuning and 8 storage buffers (the
 * unpacked layout). Call once the tuning is known. */
bool vka_coopmat_attention_runs(const struct vkattn_context *ctx);

/* Which cooperative-matrix matmul f16 products (f16 A and B) take on this
 * context, where the GPU tuning's tiles fit: the emulation
 * (shaders/matmul_coopmat_emu.comp) where
 * vkattn_context_advanced.coopmat_emulate asks, else the NV kernel where the
 * device has the path enabled and no loop budget (that kernel does not count
 * its loops; lavapipe has none anyway), else none. */
typedef enum vka_coopmat_matmul {
    VKA_COOPMAT_MATMUL_NONE = 0,
    VKA_COOPMAT_MATMUL_HARDWARE,
    VKA_COOPMAT_MATMUL_EMULATED,
} vka_coopmat_matmul;
vka_coopmat_matmul vka_coopmat_matmul_runs(const struct vkattn_context *ctx);

#endif /* VKA_VK_COOPMAT_H */
