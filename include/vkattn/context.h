/* vkattn/context.h - a vkattn context: one Vulkan device and queue.
 *
 * A context either creates its own headless instance and device, or imports an
 * app's instance, physical device, device and compute queue so vkattn records
 * into the app's command buffers next to its renderer. Everything else in vkattn
 * (tensors, ops, layers, timers) belongs to a context.
 *
 * Call sequence:
 *   vkattn_context_desc desc = {0};            // defaults: best device, no validation
 *   vkattn_context *ctx;
 *   if (vkattn_context_create(&desc, &ctx) != VKATTN_SUCCESS)
 *       puts(vkattn_last_error());
 *   ... tensors, ops ...
 *   vkattn_context_destroy(ctx);
 *
 * Vulkan functions are loaded at run time (volk), privately per context: a
 * process without a Vulkan loader gets VKATTN_ERROR_NO_VULKAN, never a crash at
 * load time, and vkattn never rewrites function pointers the app owns.
 *
 * What the library needs from a device (publish these when you create the device
 * you import): Vulkan 1.1, a queue with VK_QUEUE_COMPUTE_BIT, and the device
 * extension VK_KHR_push_descriptor (see vkattn_required_device_extensions).
 * Timestamps are optional (timers report VKATTN_ERROR_UNSUPPORTED without them).
 *
 * Thread safety: a context may be used from several threads only if the caller
 * synchronizes access to it, as for a VkQueue: functions taking a context are
 * externally synchronized on it, except vkattn_context_get_info.
 */
#ifndef VKATTN_CONTEXT_H
#define VKATTN_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vulkan/vulkan.h>

#include "vkattn/export.h"
#include "vkattn/result.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkattn_context vkattn_context;

/* What the app hands over when vkattn should run on its own device. All four
 * handles are required together; vkattn does not destroy any of them. The
 * device must have been created with the extensions vkattn needs enabled. */
typedef struct vkattn_import_desc {
    VkInstance instance;
    VkPhysicalDevice physical_device;
    VkDevice device;
    VkQueue queue;               /* must support compute */
    uint32_t queue_family_index; /* the queue's family */
    uint32_t api_version;        /* version the instance was created with; 0 = 1.1 */
    /* The app's loader entry point; NULL = vkattn opens the system loader. */
    PFN_vkGetInstanceProcAddr get_instance_proc_addr;
} vkattn_import_desc;

/* Which kind of processor kernel shapes are tuned for. Results agree within
 * each op's stated bound either way; only speed differs. */
typedef enum vkattn_tuning {
    VKATTN_TUNING_AUTO = 0, /* by device type: CPU for CPU devices (lavapipe), else GPU */
    VKATTN_TUNING_GPU = 1,  /* many invocations per row, shared-memory reductions */
    VKATTN_TUNING_CPU = 2,  /* SIMD lanes as rows: few invocations per row, few barriers */
} vkattn_tuning;

typedef struct vkattn_context_desc {
    /* Own device: choose by index (as listed by vkattn_enumerate_devices) ... */
    bool use_device_index;
    uint32_t device_index;
    /* ... or by a case-insensitive substring of the device name; NULL = no
     * filter. Neither given: prefer discrete, then integrated, then virtual,
     * then CPU devices (lavapipe). */
    const char *device_name;
    /* Own device only: enable VK_LAYER_KHRONOS_validation with synchronization
     * validation, its messages forwarded to the logger with
     * VKATTN_LOG_SOURCE_VALIDATION. Fails with VKATTN_ERROR_UNSUPPORTED if the
     * layer is not installed. */
    bool enable_validation;

    /* Import instead of creating: set import.device (and the rest of import). */
    vkattn_import_desc import;

    /* Logger; NULL = messages are only stored (vkattn_context_last_error). */
    vkattn_log_fn log;
    void *log_user;
    vkattn_log_level log_level; /* highest level sent; 0 = VKATTN_LOG_ERROR only */

    /* Optional app pipeline cache used when creating pipelines; not destroyed. */
    VkPipelineCache pipeline_cache;

    /* Kernel tuning; 0 = VKATTN_TUNING_AUTO. Tests use it to run the GPU
     * shapes on lavapipe too. */
    vkattn_tuning tuning;
} vkattn_context_desc;

/* Creates a context. On failure *out is NULL and vkattn_last_error() holds the
 * reason. Codes: VKATTN_ERROR_INVALID_ARGUMENT, _NO_VULKAN (no loader),
 * _NO_DEVICE (no device, or none matching the choice), _UNSUPPORTED (a needed
 * feature is missing: the message names it), _VULKAN, _OUT_OF_*_MEMORY. */
VKATTN_API vkattn_result vkattn_context_create(const vkattn_context_desc *desc,
                                               vkattn_context **out);

/* Waits for the context's own queue work, frees everything the context created.
 * Tensors, layers and timers must be destroyed first. NULL is a no-op. */
VKATTN_API void vkattn_context_destroy(vkattn_context *ctx);

/* The specific message of the last failure on this context ("" if none). */
VKATTN_API const char *vkattn_context_last_error(const vkattn_context *ctx);

typedef enum vkattn_device_type {
    VKATTN_DEVICE_OTHER = 0,
    VKATTN_DEVICE_INTEGRATED = 1,
    VKATTN_DEVICE_DISCRETE = 2,
    VKATTN_DEVICE_VIRTUAL = 3,
    VKATTN_DEVICE_CPU = 4,
} vkattn_device_type;

typedef struct vkattn_context_info {
    char device_name[256];
    uint32_t vendor_id;
    uint32_t device_id;
    vkattn_device_type device_type;
    uint32_t api_version;
    uint32_t driver_version;
    uint32_t subgroup_size;
    uint32_t min_subgroup_size, max_subgroup_size; /* = subgroup_size without size control */
    uint32_t max_shared_memory;                    /* maxComputeSharedMemorySize, bytes */
    uint32_t max_workgroup_size[3];
    uint32_t max_workgroup_invocations;
    uint32_t max_workgroup_count[3];
    uint64_t max_storage_buffer_range; /* bytes */
    uint32_t min_storage_buffer_offset_alignment;
    bool fp16;                          /* shaderFloat16 */
    bool timestamps;                    /* compute-queue timestamps available */
    float timestamp_period_ns;
    bool unified_memory;                /* device-local memory is host-visible */
    bool imported;                      /* true if the app's device was imported */
    bool validation;                    /* validation layer enabled by vkattn */
    bool cpu_tuning;                    /* kernels use their CPU shapes (vkattn_tuning) */
} vkattn_context_info;

/* Fills *info. Thread safety: may be called concurrently with anything. */
VKATTN_API vkattn_result vkattn_context_get_info(const vkattn_context *ctx,
                                                 vkattn_context_info *info);

/* Peak and current device memory vkattn allocated on this context, in bytes. */
VKATTN_API vkattn_result vkattn_context_memory_usage(const vkattn_context *ctx,
                                                     uint64_t *current, uint64_t *peak);
/* Sets the peak back to the current usage (for measuring one call). */
VKATTN_API void vkattn_context_reset_peak_memory(vkattn_context *ctx);

/* The device extensions vkattn needs, for an app creating a device to import.
 * Returns a static array of *count names. */
VKATTN_API const char *const *vkattn_required_device_extensions(uint32_t *count);

/* A device as seen before choosing one. */
typedef struct vkattn_device_desc {
    uint32_t index;
    char name[256];
    uint32_t vendor_id;
    vkattn_device_type device_type;
    uint32_t api_version;
    bool usable; /* has everything vkattn needs */
} vkattn_device_desc;

/* Lists the devices of the system loader. With devices NULL, *count receives
 * the number; otherwise up to *count entries are written and *count is set to
 * the number written. VKATTN_ERROR_NO_VULKAN without a loader. */
VKATTN_API vkattn_result vkattn_enumerate_devices(vkattn_device_desc *devices, uint32_t *count);

/* ------------------------------------------------------------------ commands */

/* A one-shot command buffer on the context's queue, for apps and tools that do
 * not manage their own: begin, record vkattn ops (and timers) into it, then
 * submit and wait (a fence wait, never a spin). One at a time per context. */
VKATTN_API vkattn_result vkattn_context_begin_commands(vkattn_context *ctx,
                                                       VkCommandBuffer *cmd);
VKATTN_API vkattn_result vkattn_context_submit_and_wait(vkattn_context *ctx,
                                                        VkCommandBuffer cmd);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_CONTEXT_H */
