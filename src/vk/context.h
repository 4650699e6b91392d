/* The context's private state, shared by the vk/ modules only: ops and layers
 * see it through vk/view.h's functions (scripts/check-layering.sh). */
#ifndef VKA_CONTEXT_H
#define VKA_CONTEXT_H

#include "vkattn/advanced.h"
#include "vkattn/context.h"

#include "core/logger.h"
#include "vk/barrier.h"
#include "vk/coopmat.h"
#include "vk/descriptors.h"
#include "vk/memory.h"
#include "vk/pipeline.h"
#include "vk/scratch.h"
#include "vk/view.h"
#include "vk/vk.h"

#include <stdbool.h>
#include "core/threads.h"

struct vkattn_context {
    vka_logger logger;

    VkInstance instance;
    VkPhysicalDevice physical_device;
    VkDevice device;
    VkQueue queue;
    uint32_t queue_family_index;
    uint32_t queue_index;
    uint32_t queue_family_count; /* of the physical device (ownership transfers) */
    /* The app's queue lock (vkattn_import_desc.lock_queue), NULL if none. */
    void (*lock_queue)(void *user, uint32_t queue_family_index, uint32_t queue_index);
    void (*unlock_queue)(void *user, uint32_t queue_family_index, uint32_t queue_index);
    void *queue_lock_user;
    uint32_t timestamp_valid_bits; /* of the queue's family */
    bool owns_instance, owns_device;
    VkDebugUtilsMessengerEXT messenger;
    vka_instance_table vki;    /* instance-level functions of ctx->instance */
    struct VolkDeviceTable vk; /* device-level functions of this context */

    vkattn_context_info info;
    const struct vka_profile *profile; /* never NULL once created */
    uint64_t max_dispatch_work;        /* as asked in the desc; 0 = the profile's */
    bool push_descriptor_enabled;      /* VK_KHR_push_descriptor enabled on the device */
    VkPhysicalDeviceMemoryProperties memory_properties;
    bool subgroup_size_control; /* pipelines may require a subgroup size */
    /* Subgroup shuffles in compute (GL_KHR_shader_subgroup_shuffle), on top
     * of info.subgroup_operations (so a profile without those has none). */
    bool subgroup_shuffle;
    /* vkattn_context_advanced.capture_pipeline_stats as asked, and whether
     * the device has VK_KHR_pipeline_executable_properties enabled for it:
     * pipelines are then created with statistics captured. */
    bool want_pipeline_stats, pipeline_stats;
    /* Cooperative matrices (vk/coopmat.h): vkattn_context_advanced's
     * cooperative_matrix (a vkattn_coopmat_mode), coopmat_emulate,
     * coopmat_families (0 = any) and coopmat_test_fault as asked; the
     * hardware families whose features vkattn enabled on the device it
     * created; per kernel (index: its bit's position, vk/coopmat.c slot) the candidate
     * families and, once decided (by the self-test, or at once under ON),
     * the family it runs on. The decision is written once, under `lock`. */
    int coopmat_mode;
    bool coopmat_emulate, coopmat_test_fault;
    uint32_t instance_api_version; /* of vkattn's own instance (vk/instance.c) */
    uint32_t coopmat_families;
    uint32_t variants[VKATTN_VARIANT_FAMILIES]; /* advanced->variants (ops/variant_select.h) */
    uint32_t coopmat_enabled_families;
    uint32_t coopmat_candidates[3]; /* per vka_coopmat_kernel: matmul, flash, backward */
    uint32_t coopmat_chosen[3];
    bool coopmat_decided;
    vka_coopmat_support coopmat_support; /* queried once per physical device */
    /* Loop iterations one shader invocation may run in total. lavapipe
     * (llvmpipe) silently ends an invocation's loops after 65535 iterations
     * (LP_MAX_TGSI_LOOP_ITERATIONS): kernels with long loops split their work
     * or refuse past it. UINT64_MAX elsewhere. */
    uint64_t loop_budget;

    /* one-shot submissions (VKATTN_RUN_NOW, upload/download, begin_commands) */
    VkCommandPool command_pool;
    VkCommandBuffer command_buffer;
    VkFence fence;
    bool command_buffer_open;
    uint64_t oneshot_serial; /* counts one-shot recordings (vk/barrier.h) */
    /* The slicer capture under way (vk/capture.h), guarded by `lock`, and
     * the count of captures, their recording numbers. */
    struct vka_capture *capture;
    uint64_t capture_serial;

    /* Access state per range of memory, shared by the views of it. */
    vka_tracker tracker;

    VkPipelineCache pipeline_cache; /* the app's, vkattn's own, or VK_NULL_HANDLE */
    bool owns_pipeline_cache;
    /* Guards the pipeline list, which creation reallocates. Not held while a
     * pipeline compiles (seconds on lavapipe), so other threads keep recording. */
    vka_mutex pipeline_lock;
    vka_pipeline **pipelines;
    uint32_t n_pipelines, cap_pipelines;

    /* Guards the state recording threads share: the descriptor-set cache,
     * the tensor list, memory accounting, the per-thread scratch list and the
     * stats. Recursive: scratch growth creates a tensor under it. */
    vka_rmutex lock;
    bool locks_ready;
    vkattn_context_stats stats;

    /* Descriptor sets where push descriptors are off (vk/descriptors.h), and
     * the context's live tensors, which decide when a cached set may go. */
    vka_descriptor_cache descriptors;
    struct vkattn_tensor *tensors;

    vka_buffer dummy; /* bound where an optional input is absent; never written */

    /* The pack buffer (vk/pack.h), the sink and the ops' scratch kinds
     * (ops/scratch_kinds.h), one set per recording thread (vk/scratch.h). */
    vka_thread_scratch **thread_scratch;
    uint32_t n_thread_scratch;

    /* Tensors kept for the context's life (vk/kept.h), under lock: recorded
     * command buffers read them long after the call. */
    struct vka_kept *kept;
    uint32_t n_kept;

    /* Device memory (vk/memory.h). memory_current is the bytes bound to live
     * buffers, memory_peak its high-water mark. */
    vka_memory mem;
    uint64_t memory_current, memory_peak;
};

#endif /* VKA_CONTEXT_H */
