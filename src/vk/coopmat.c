/* Cooperative-matrix families: what the device offers, what a device vkattn
 * creates enables, and the candidates of a context (vk/coopmat.h). */
#include "vk/coopmat.h"

#include "core/threads.h"
#include "vk/context.h"
#include "vk/instance.h"
#include "vk/profile.h"
#include "vkattn/advanced.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KHR_COOPMAT "VK_KHR_cooperative_matrix"
#define NV2_COOPMAT "VK_NV_cooperative_matrix2"
#define KHR_FEATURES_STYPE ((VkStructureType)1000506000)
#define KHR_PROPERTIES_STYPE ((VkStructureType)1000506001)
#define NV2_FEATURES_STYPE ((VkStructureType)1000593000)

/* VkCooperativeMatrixPropertiesKHR; its component types and scope take the
 * NV enums' values (VK_COMPONENT_TYPE_FLOAT16 = 0, FLOAT32 = 1, subgroup
 * scope 3). */
typedef struct khr_properties {
    VkStructureType sType;
    void *pNext;
    uint32_t MSize, NSize, KSize;
    int32_t AType, BType, CType, ResultType;
    VkBool32 saturatingAccumulation;
    int32_t scope;
} khr_properties;
typedef VkResult(VKAPI_PTR *khr_properties_fn)(VkPhysicalDevice, uint32_t *, khr_properties *);

const uint32_t vka_coopmat_preference[VKATTN_COOPMAT_FAMILIES] = {
    VKATTN_COOPMAT_NV2, VKATTN_COOPMAT_KHR, VKATTN_COOPMAT_NV, VKATTN_COOPMAT_EMULATED};

uint32_t vka_coopmat_index(uint32_t family)
{
    uint32_t i = 0;
    while (i + 1 < VKATTN_COOPMAT_FAMILIES && !(family & 1u << i))
        i++;
    return i;
}

const char *vka_coopmat_name(uint32_t family)
{
    static const char *const names[VKATTN_COOPMAT_FAMILIES] = {"NV", "KHR", "NV2", "emulated"};
    return names[vka_coopmat_index(family)];
}

static bool is_f16_shape(uint32_t m, uint32_t n, uint32_t k, int32_t a, int32_t b, int32_t c,
                         int32_t d, int32_t scope)
{
    return m == 16 && n == 16 && k == 16 && a == VK_COMPONENT_TYPE_FLOAT16_NV &&
           b == VK_COMPONENT_TYPE_FLOAT16_NV && c == VK_COMPONENT_TYPE_FLOAT32_NV &&
           d == VK_COMPONENT_TYPE_FLOAT32_NV && scope == VK_SCOPE_SUBGROUP_NV;
}

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
                found = is_f16_shape(p[i].MSize, p[i].NSize, p[i].KSize, (int32_t)p[i].AType,
                                     (int32_t)p[i].BType, (int32_t)p[i].CType,
                                     (int32_t)p[i].DType, (int32_t)p[i].scope);
    }
    free(p);
    return found;
}

/* The KHR query is not in Debian 12's headers, so not in the instance table:
 * loaded by name for the instance at hand. */
static bool khr_lists_f16_shape(struct vkattn_context *ctx, VkPhysicalDevice pd)
{
    khr_properties_fn get = (khr_properties_fn)(void (*)(void))vkGetInstanceProcAddr(
        ctx->instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
    uint32_t n = 0;
    if (!get || get(pd, &n, NULL) != VK_SUCCESS || !n)
        return false;
    khr_properties *p = calloc(n, sizeof *p);
    bool found = false;
    if (p) {
        for (uint32_t i = 0; i < n; i++)
            p[i].sType = KHR_PROPERTIES_STYPE;
        if (get(pd, &n, p) == VK_SUCCESS)
            for (uint32_t i = 0; i < n && !found; i++)
                found = !p[i].saturatingAccumulation &&
                        is_f16_shape(p[i].MSize, p[i].NSize, p[i].KSize, p[i].AType, p[i].BType,
                                     p[i].CType, p[i].ResultType, p[i].scope);
    }
    free(p);
    return found;
}

/* The features every family's kernels need besides their own: f16
 * arithmetic, and the Vulkan memory model with its device scope (glslang
 * emits the subgroup scopes under the model, and with the model on, every
 * other kernel's device scope needs vulkanMemoryModelDeviceScope). */
static void chain_common(vka_coopmat_enable *e, void *next)
{
    e->f16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR;
    e->f16.pNext = &e->memory_model;
    e->memory_model.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES_KHR;
    e->memory_model.pNext = next;
}

/* The family structs in front of e->f16 for `families`; returns the head.
 * Only structs of extensions the device lists are chained (the validation
 * layer refuses others). */
static void *chain_families(vka_coopmat_enable *e, uint32_t families)
{
    void *head = &e->f16;
    if (families & (VKATTN_COOPMAT_KHR | VKATTN_COOPMAT_NV2)) {
        e->khr.sType = KHR_FEATURES_STYPE;
        e->khr.pNext = head;
        head = &e->khr;
    }
    if (families & VKATTN_COOPMAT_NV2) {
        e->maintenance4.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_FEATURES;
        e->maintenance4.pNext = head;
        e->nv2.sType = NV2_FEATURES_STYPE;
        e->nv2.pNext = &e->maintenance4;
        head = &e->nv2;
    }
    if (families & VKATTN_COOPMAT_NV) {
        e->nv.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV;
        e->nv.pNext = head;
        head = &e->nv;
    }
    return head;
}

/* The NV2 features vkattn's coopmat2 kernels use: workgroup-scope matrices
 * of the tiles' sizes, tensor-layout loads, the matmul's per-element output,
 * and maintenance4 for the workgroup size SPIR-V 1.6 takes as an id. Whether
 * the driver's flexible dimensions cover a tile shows in the self-test (a
 * pipeline it refuses fails the family). */
static bool nv2_features_suffice(const vka_coopmat_enable *f)
{
    return f->nv2.cooperativeMatrixWorkgroupScope && f->nv2.cooperativeMatrixTensorAddressing &&
           f->nv2.cooperativeMatrixFlexibleDimensions &&
           f->nv2.cooperativeMatrixPerElementOperations && f->maintenance4.maintenance4;
}

void vka_coopmat_query(struct vkattn_context *ctx, VkPhysicalDevice pd, vka_coopmat_support *out)
{
    memset(out, 0, sizeof *out);
    if (vka_device_has_extension(ctx, pd, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME))
        out->flavours |= VKATTN_COOPMAT_NV;
    if (vka_device_has_extension(ctx, pd, KHR_COOPMAT))
        out->flavours |= VKATTN_COOPMAT_KHR;
    if ((out->flavours & VKATTN_COOPMAT_KHR) && vka_device_has_extension(ctx, pd, NV2_COOPMAT))
        out->flavours |= VKATTN_COOPMAT_NV2;
    const bool nv_shape = (out->flavours & VKATTN_COOPMAT_NV) && nv_lists_f16_shape(ctx, pd);
    const bool khr_shape = (out->flavours & VKATTN_COOPMAT_KHR) && khr_lists_f16_shape(ctx, pd);
    out->f16_16x16x16 = nv_shape || khr_shape;
    if (!out->flavours ||
        !vka_device_has_extension(ctx, pd, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME) ||
        !vka_device_has_extension(ctx, pd, VK_KHR_VULKAN_MEMORY_MODEL_EXTENSION_NAME))
        return;
    vka_coopmat_enable f;
    memset(&f, 0, sizeof f);
    chain_common(&f, NULL);
    VkPhysicalDeviceFeatures2 feats = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
        .pNext = chain_families(&f, out->flavours),
    };
    ctx->vki.vkGetPhysicalDeviceFeatures2(pd, &feats);
    if (!f.f16.shaderFloat16 || !f.memory_model.vulkanMemoryModel ||
        !f.memory_model.vulkanMemoryModelDeviceScope)
        return;
    if (nv_shape && f.nv.cooperativeMatrix)
        out->runnable |= VKATTN_COOPMAT_NV;
    if (khr_shape && f.khr.cooperativeMatrix) {
        out->runnable |= VKATTN_COOPMAT_KHR;
        if ((out->flavours & VKATTN_COOPMAT_NV2) && nv2_features_suffice(&f))
            out->runnable |= VKATTN_COOPMAT_NV2;
    }
}

void *vka_coopmat_chain(vka_coopmat_enable *e, uint32_t families, void *next,
                        const char **extensions, uint32_t *n)
{
    memset(e, 0, sizeof *e);
    chain_common(e, next);
    e->f16.shaderFloat16 = VK_TRUE;
    e->memory_model.vulkanMemoryModel = VK_TRUE;
    e->memory_model.vulkanMemoryModelDeviceScope = VK_TRUE;
    void *head = chain_families(e, families);
    e->nv.cooperativeMatrix = e->khr.cooperativeMatrix = VK_TRUE;
    e->nv2.cooperativeMatrixWorkgroupScope = VK_TRUE;
    e->nv2.cooperativeMatrixTensorAddressing = VK_TRUE;
    e->nv2.cooperativeMatrixFlexibleDimensions = VK_TRUE;
    e->nv2.cooperativeMatrixPerElementOperations = VK_TRUE;
    e->maintenance4.maintenance4 = VK_TRUE;
    if (families & VKATTN_COOPMAT_NV)
        extensions[(*n)++] = VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME;
    if (families & (VKATTN_COOPMAT_KHR | VKATTN_COOPMAT_NV2))
        extensions[(*n)++] = KHR_COOPMAT;
    if (families & VKATTN_COOPMAT_NV2)
        extensions[(*n)++] = NV2_COOPMAT;
    extensions[(*n)++] = VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME;
    extensions[(*n)++] = VK_KHR_VULKAN_MEMORY_MODEL_EXTENSION_NAME;
    return head;
}

static uint32_t allowed_by_desc(const struct vkattn_context *ctx)
{
    return ctx->coopmat_families ? ctx->coopmat_families : VKA_COOPMAT_ALL;
}

uint32_t vka_coopmat_to_enable(const struct vkattn_context *ctx, uint32_t api_version)
{
    if (ctx->profile->no_coopmat || ctx->coopmat_mode == VKATTN_COOPMAT_OFF ||
        ctx->coopmat_emulate)
        return 0;
    uint32_t f = ctx->coopmat_support.runnable & VKA_COOPMAT_BUILT & allowed_by_desc(ctx);
    if (api_version < VK_API_VERSION_1_3)
        f &= ~VKATTN_COOPMAT_NV2;
    return f;
}

/* Why a family is not a candidate of this context, or NULL if it is one. */
static const char *why_not(const struct vkattn_context *ctx, uint32_t family)
{
    const vkattn_context_info *info = &ctx->info;
    if (!(allowed_by_desc(ctx) & family))
        return "left out by vkattn_context_advanced.coopmat_families";
    /* OFF means no cooperative-matrix kernel at all, the emulation's included */
    if (family == VKATTN_COOPMAT_EMULATED)
        return !ctx->coopmat_emulate                      ? "coopmat_emulate is not set"
               : ctx->coopmat_mode == VKATTN_COOPMAT_OFF ? "cooperative_matrix is OFF"
                                                         : NULL;
    if (ctx->coopmat_emulate)
        return "replaced by the emulation (coopmat_emulate)";
    if (!(ctx->coopmat_support.flavours & family))
        return "the device does not offer it";
    if (!(VKA_COOPMAT_BUILT & family))
        return "not built: this library's glslc cannot compile it";
    if (!(ctx->coopmat_support.runnable & family))
        return "the device lacks the f16 16x16x16 shape or a feature it needs";
    if (ctx->coopmat_mode == VKATTN_COOPMAT_OFF)
        return "cooperative_matrix is OFF";
    if (ctx->profile->no_coopmat)
        return "the profile has no cooperative matrices";
    if (info->imported)
        return "imported device: vkattn enables no feature on it";
    if (!(ctx->coopmat_enabled_families & family))
        return "needs Vulkan 1.3 (SPIR-V 1.6)";
    return NULL;
}

/* The attention kernel's warps are subgroups of exactly 32 on NV and KHR
 * (NV2's and the emulation's are 32 consecutive invocations whatever the
 * subgroup); the unpacked layout needs 8 storage buffers. */
static bool flash_fits(const struct vkattn_context *ctx, uint32_t family)
{
    const vkattn_context_info *info = &ctx->info;
    const bool warps = family == VKATTN_COOPMAT_EMULATED || family == VKATTN_COOPMAT_NV2 ||
                       (info->subgroup_size == 32 && info->min_subgroup_size == 32 &&
                        info->max_subgroup_size == 32);
    return warps && info->max_storage_buffers_per_stage >= 8;
}

static void say(vkattn_coopmat_check *c, vkattn_coopmat_check_state state, const char *detail)
{
    memset(c, 0, sizeof *c);
    c->state = state;
    snprintf(c->detail, sizeof c->detail, "%s", detail);
}

/* A kernel's index in ctx->coopmat_candidates and _chosen (its bit's). */
static unsigned slot(vka_coopmat_kernel kernel)
{
    return kernel == VKA_COOPMAT_BACKWARD ? 2u : (unsigned)kernel - 1u;
}

static uint32_t running(const struct vkattn_context *ctx)
{
    return ctx->coopmat_chosen[0] | ctx->coopmat_chosen[1] | ctx->coopmat_chosen[2];
}

void vka_coopmat_setup(struct vkattn_context *ctx)
{
    vkattn_context_info *info = &ctx->info;
    info->coopmat_built = VKA_COOPMAT_BUILT;
    info->coopmat_enabled = ctx->coopmat_enabled_families != 0;
    info->coopmat_running = 0;
    memset(ctx->coopmat_candidates, 0, sizeof ctx->coopmat_candidates);
    for (uint32_t i = 0; i < VKATTN_COOPMAT_FAMILIES; i++) {
        const uint32_t f = 1u << i;
        const char *why = why_not(ctx, f);
        if (!why && info->cpu_tuning)
            why = "the CPU tuning (the kernels are GPU-shaped)";
        if (!why && f != VKATTN_COOPMAT_EMULATED && ctx->loop_budget != UINT64_MAX)
            why = "a loop budget (the hardware kernels do not count their loops)";
        if (!why) {
            ctx->coopmat_candidates[VKA_COOPMAT_MATMUL - 1] |= f;
            if (flash_fits(ctx, f))
                ctx->coopmat_candidates[VKA_COOPMAT_FLASH - 1] |= f;
            if (flash_fits(ctx, f) && f != VKATTN_COOPMAT_NV2)
                ctx->coopmat_candidates[slot(VKA_COOPMAT_BACKWARD)] |= f;
        }
        say(&info->coopmat_check[i], VKATTN_COOPMAT_NOT_TRIED,
            why ? why : "not tried yet (the self-test runs at the end of context creation)");
    }
    memset(ctx->coopmat_chosen, 0, sizeof ctx->coopmat_chosen);
    const bool any = ctx->coopmat_candidates[0] || ctx->coopmat_candidates[1];
    ctx->coopmat_decided = !any || ctx->coopmat_mode == VKATTN_COOPMAT_ON;
    if (any && ctx->coopmat_mode == VKATTN_COOPMAT_ON) {
        for (int k = 0; k < 3; k++)
            for (uint32_t i = 0; i < VKATTN_COOPMAT_FAMILIES && !ctx->coopmat_chosen[k]; i++)
                ctx->coopmat_chosen[k] = ctx->coopmat_candidates[k] & vka_coopmat_preference[i];
        for (uint32_t i = 0; i < VKATTN_COOPMAT_FAMILIES; i++)
            if (running(ctx) & 1u << i)
                say(&info->coopmat_check[i], VKATTN_COOPMAT_FORCED,
                    "cooperative_matrix ON: runs without its self-test");
            else if ((ctx->coopmat_candidates[0] | ctx->coopmat_candidates[1]) & 1u << i)
                say(&info->coopmat_check[i], VKATTN_COOPMAT_NOT_TRIED,
                    "cooperative_matrix ON takes the first of NV2, KHR, NV");
        info->coopmat_running = running(ctx);
    }
    info->coopmat_attention = ctx->coopmat_candidates[VKA_COOPMAT_FLASH - 1] != 0;
}

/* The self-test's override: one context and family per thread at a time. */
static VKA_THREAD_LOCAL const struct vkattn_context *override_ctx;
static VKA_THREAD_LOCAL uint32_t override_family;

static VKA_THREAD_LOCAL bool override_taken;

void vka_coopmat_override(const struct vkattn_context *ctx, uint32_t family)
{
    override_ctx = ctx;
    override_family = family;
    override_taken = false;
}

void vka_coopmat_note_taken(void) { override_taken = true; }

bool vka_coopmat_taken(void) { return override_taken; }

uint32_t vka_coopmat_family_now(const struct vkattn_context *ctx, vka_coopmat_kernel kernel)
{
    if (override_ctx == ctx)
        return override_family;
    return ctx->coopmat_chosen[slot(kernel)];
}

uint32_t vka_coopmat_candidates(const struct vkattn_context *ctx, vka_coopmat_kernel kernel)
{
    return ctx->coopmat_candidates[slot(kernel)];
}

bool vka_coopmat_test_fault(const struct vkattn_context *ctx) { return ctx->coopmat_test_fault; }

bool vka_coopmat_decided(const struct vkattn_context *ctx) { return ctx->coopmat_decided; }

void vka_coopmat_record(struct vkattn_context *ctx, uint32_t family,
                        const vkattn_coopmat_check *check, unsigned passed)
{
    ctx->info.coopmat_check[vka_coopmat_index(family)] = *check;
    for (int k = 0; k < 3; k++)
        if (!ctx->coopmat_chosen[k] && (ctx->coopmat_candidates[k] & family) &&
            (passed & (1u << k)))
            ctx->coopmat_chosen[k] = family;
}

void vka_coopmat_finish(struct vkattn_context *ctx)
{
    ctx->coopmat_decided = true;
    ctx->info.coopmat_running = running(ctx);
    ctx->info.coopmat_attention = ctx->coopmat_chosen[VKA_COOPMAT_FLASH - 1] != 0;
}
