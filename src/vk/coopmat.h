/* Cooperative matrices (tensor cores): which kernel families the device
 * offers, the features a device vkattn creates enables for them, and which
 * families a context may run (its candidates). Whether a candidate then runs
 * is decided by its on-device self-test (ops/coopmat_selftest.h) at the end
 * of context creation, which sits above vk/ because it runs ops.
 *
 * The families (VKATTN_COOPMAT_* bits, vkattn/context.h), one kernel body
 * each, compiled per family (shaders/common/coopmat_frag.glsl):
 *   NV        GL_NV_cooperative_matrix, subgroup 16x16x16 f16 -> f32
 *   KHR       GL_KHR_cooperative_matrix, the same shape, typed by use
 *   NV2       GL_NV_cooperative_matrix2 (tensor layouts; SPIR-V 1.6)
 *   EMULATED  the fragments in plain GLSL, any device
 * Debian 12's Vulkan headers (1.3.239) predate the KHR and NV2 extensions:
 * their structs are declared here, layout for layout, and the KHR query is
 * loaded by name. */
#ifndef VKA_VK_COOPMAT_H
#define VKA_VK_COOPMAT_H

#include <stdbool.h>

#include "vk/vk.h"
#include "vkattn/context.h"

struct vkattn_context;

/* The families a build holds: cmake/ShaderFamilies.cmake defines
 * VKA_COOPMAT_BUILT from what its glslc compiled (src/CMakeLists.txt). */
#ifndef VKA_COOPMAT_BUILT
#define VKA_COOPMAT_BUILT (VKATTN_COOPMAT_NV | VKATTN_COOPMAT_EMULATED)
#endif
#define VKA_COOPMAT_ALL                                                                  \
    (VKATTN_COOPMAT_NV | VKATTN_COOPMAT_KHR | VKATTN_COOPMAT_NV2 | VKATTN_COOPMAT_EMULATED)

/* Families in the order AUTO prefers them where several pass. */
extern const uint32_t vka_coopmat_preference[VKATTN_COOPMAT_FAMILIES];

/* Index of a family bit in vkattn_context_info.coopmat_check, and its name
 * in messages ("NV", "KHR", "NV2", "emulated"). */
uint32_t vka_coopmat_index(uint32_t family);
const char *vka_coopmat_name(uint32_t family);

/* VK_KHR_cooperative_matrix and VK_NV_cooperative_matrix2, as Vulkan 1.4
 * declares them. */
typedef struct vka_khr_coopmat_features {
    VkStructureType sType; /* 1000506000 */
    void *pNext;
    VkBool32 cooperativeMatrix;
    VkBool32 cooperativeMatrixRobustBufferAccess;
} vka_khr_coopmat_features;

typedef struct vka_nv2_coopmat_features {
    VkStructureType sType; /* 1000593000 */
    void *pNext;
    VkBool32 cooperativeMatrixWorkgroupScope;
    VkBool32 cooperativeMatrixFlexibleDimensions;
    VkBool32 cooperativeMatrixReductions;
    VkBool32 cooperativeMatrixConversions;
    VkBool32 cooperativeMatrixPerElementOperations;
    VkBool32 cooperativeMatrixTensorAddressing;
    VkBool32 cooperativeMatrixBlockLoads;
} vka_nv2_coopmat_features;

/* What the physical device offers. */
typedef struct vka_coopmat_support {
    uint32_t flavours; /* families whose extension the device lists */
    /* Families whose kernels can run there: the extension, the f16 x f16 ->
     * f32 16x16x16 subgroup shape in its list, and every feature they need
     * (see vka_coopmat_query). */
    uint32_t runnable;
    bool f16_16x16x16; /* some family lists that shape */
} vka_coopmat_support;

void vka_coopmat_query(struct vkattn_context *ctx, VkPhysicalDevice pd, vka_coopmat_support *out);

/* Feature structs to chain into VkDeviceCreateInfo for `families`, and the
 * extensions to enable. */
typedef struct vka_coopmat_enable {
    VkPhysicalDeviceCooperativeMatrixFeaturesNV nv;
    vka_khr_coopmat_features khr;
    vka_nv2_coopmat_features nv2;
    VkPhysicalDeviceMaintenance4Features maintenance4; /* NV2's SPIR-V 1.6 LocalSizeId */
    VkPhysicalDeviceShaderFloat16Int8FeaturesKHR f16;
    VkPhysicalDeviceVulkanMemoryModelFeaturesKHR memory_model;
} vka_coopmat_enable;

/* Fills *e for the hardware families in `families` (nonzero), chains it in
 * front of *next (returns the new head) and appends its extensions to
 * extensions[*n] (room for 5). */
void *vka_coopmat_chain(vka_coopmat_enable *e, uint32_t families, void *next,
                        const char **extensions, uint32_t *n);

/* The hardware families a device vkattn creates enables: runnable there,
 * built, allowed by the profile, the mode (not OFF) and
 * vkattn_context_advanced.coopmat_families, and within the instance's API
 * version (NV2's SPIR-V 1.6 needs Vulkan 1.3). */
uint32_t vka_coopmat_to_enable(const struct vkattn_context *ctx, uint32_t api_version);

/* The kernels of a family, each on its own: the self-test passes or fails
 * them one by one, so a driver bug in one leaves the other running. */
typedef enum vka_coopmat_kernel {
    VKA_COOPMAT_MATMUL = 1u,
    VKA_COOPMAT_FLASH = 2u,
    /* the fused SDPA backward (ops/flash_backward_coopmat.h): its own check,
     * so a driver that runs the forward right but miscompiles the backward
     * keeps the forward; candidates: the attention's less NV2 (no backward) */
    VKA_COOPMAT_BACKWARD = 4u,
} vka_coopmat_kernel;

/* Once the context's device and tuning are known: its candidate families per
 * kernel (ctx->coopmat_candidates), what info reports before any self-test
 * (coopmat_built, each family's "not tried" reason, coopmat_attention), and
 * under ON the family forced without a test. */
void vka_coopmat_setup(struct vkattn_context *ctx);

/* The family `kernel` runs on (0 = the scalar kernels): the override of the
 * self-test running on this thread if any, else the one decided when the
 * context was created. */
uint32_t vka_coopmat_family_now(const struct vkattn_context *ctx, vka_coopmat_kernel kernel);

/* The self-test's override on this thread: the kernels of this context take
 * `family` (0 = the scalar kernels) until it is cleared with ctx NULL. */
void vka_coopmat_override(const struct vkattn_context *ctx, uint32_t family);

/* An op took a cooperative-matrix kernel (ops call it when they do), and
 * whether one did since the override was set on this thread: a self-test
 * check whose call found no tile for the family proves nothing. */
void vka_coopmat_note_taken(void);
bool vka_coopmat_taken(void);

/* The decision's state, for the self-test that makes it
 * (ops/coopmat_selftest.c): the candidate families of `kernel`, whether the
 * test is to fail on purpose (coopmat_test_fault), whether it was decided. */
uint32_t vka_coopmat_candidates(const struct vkattn_context *ctx, vka_coopmat_kernel kernel);
bool vka_coopmat_test_fault(const struct vkattn_context *ctx);
bool vka_coopmat_decided(const struct vkattn_context *ctx);
/* One family's self-test: `check` becomes its info.coopmat_check, and each
 * kernel in `passed` (a mask of vka_coopmat_kernel) that has no family yet
 * and had this one as a candidate takes it. */
void vka_coopmat_record(struct vkattn_context *ctx, uint32_t family,
                        const vkattn_coopmat_check *check, unsigned passed);
/* The decision is made: info.coopmat_running and coopmat_attention follow. */
void vka_coopmat_finish(struct vkattn_context *ctx);

#endif /* VKA_VK_COOPMAT_H */
