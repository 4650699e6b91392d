/* tests/abi/vkattn_0_1.h - what an app built against vkattn 0.1.0 (2026-11-21,
 * commit 18b7fa1) saw of the context API: the 0.1 layouts of the structs that
 * cross vkattn_context_create and vkattn_context_get_info, frozen, and the 0.1
 * symbol names. Since 0.1, vkattn_context_info grew by 7 appended fields (0.2)
 * and vkattn_context_desc changed: a 0.3 library run by this app would write
 * past its vkattn_context_info and read past its vkattn_context_desc. The ABI
 * rule (docs/INTEGRATION.md, "ABI and versions") makes the loader refuse it;
 * tests/abi/loader_refuses.sh proves that. Never edit: this is history. */
#ifndef VKATTN_ABI_0_1_H
#define VKATTN_ABI_0_1_H

#include <stdbool.h>
#include <stdint.h>

#include <vulkan/vulkan_core.h>

#if defined(__GNUC__) || defined(__clang__)
#define VKATTN_0_1_API __attribute__((visibility("default")))
#else
#define VKATTN_0_1_API
#endif

typedef struct vkattn_context vkattn_context;

typedef struct vkattn_import_desc {
    VkInstance instance;
    VkPhysicalDevice physical_device;
    VkDevice device;
    VkQueue queue;
    uint32_t queue_family_index;
    uint32_t api_version;
    PFN_vkGetInstanceProcAddr get_instance_proc_addr;
} vkattn_import_desc;

typedef struct vkattn_context_desc {
    bool use_device_index;
    uint32_t device_index;
    const char *device_name;
    bool enable_validation;
    vkattn_import_desc import;
    void (*log)(void *user, int level, int source, const char *message); /* vkattn_log_fn */
    void *log_user;
    int log_level;                 /* vkattn_log_level */
    VkPipelineCache pipeline_cache;
    int tuning;                    /* vkattn_tuning */
} vkattn_context_desc;

typedef struct vkattn_context_info {
    char device_name[256];
    uint32_t vendor_id;
    uint32_t device_id;
    int device_type; /* vkattn_device_type */
    uint32_t api_version;
    uint32_t driver_version;
    uint32_t subgroup_size;
    uint32_t min_subgroup_size, max_subgroup_size;
    uint32_t max_shared_memory;
    uint32_t max_workgroup_size[3];
    uint32_t max_workgroup_invocations;
    uint32_t max_workgroup_count[3];
    uint64_t max_storage_buffer_range;
    uint32_t min_storage_buffer_offset_alignment;
    bool fp16;
    bool timestamps;
    float timestamp_period_ns;
    bool unified_memory;
    bool imported;
    bool validation;
    bool cpu_tuning;
} vkattn_context_info;

/* 0.1's exported names: no ABI suffix yet, soname libvkattn.so.0 */
VKATTN_0_1_API uint32_t vkattn_get_version(void);
VKATTN_0_1_API int vkattn_context_create(const vkattn_context_desc *desc, vkattn_context **out);
VKATTN_0_1_API int vkattn_context_get_info(const vkattn_context *ctx, vkattn_context_info *info);
VKATTN_0_1_API void vkattn_context_destroy(vkattn_context *ctx);

#endif /* VKATTN_ABI_0_1_H */
