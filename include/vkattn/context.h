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
 * An app that loads Vulkan itself (volk, or its own loader) must define
 * VK_NO_PROTOTYPES before including this header, best project-wide; else the
 * prototypes of <vulkan/vulkan_core.h> clash with volk's pointer globals (see
 * vkattn/vkattn.h). An app that imports its device may hand vkattn its own
 * loader's entry point (vkattn_import_desc.get_instance_proc_addr).
 *
 * What the library needs from a device: Vulkan 1.1 and a queue with
 * VK_QUEUE_COMPUTE_BIT. Everything else is optional and used when present
 * (vkattn_optional_device_extensions lists each extension and what it buys):
 * VK_KHR_push_descriptor (else descriptor sets from pools vkattn grows),
 * timestamps (else timers report VKATTN_ERROR_UNSUPPORTED).
 *
 * Device profiles (vkattn_context_desc.profile) make vkattn assume the limits
 * of a smaller device than the one it runs on: the shared memory, workgroup
 * sizes, buffer ranges and optional features of a phone, say. A profile only
 * clamps what vkattn believes; it never changes what is asked of the driver
 * beyond leaving optional extensions disabled. docs/PORTABILITY.md lists them.
 *
 * Descriptors: with VK_KHR_push_descriptor (vkattn_context_info.push_descriptors)
 * every dispatch pushes its bindings into the command buffer. Without it
 * vkattn binds descriptor sets it allocates from pools it grows, writes once
 * and caches per (pipeline, bound buffer ranges): recording the same op on the
 * same tensors again, or replaying a recorded command buffer, allocates
 * nothing. A recorded set stays valid until a tensor it binds is destroyed
 * (vkattn_tensor_destroy, which the app calls only once the GPU is done with
 * that tensor), or the context is. So destroying a tensor invalidates the
 * app's recorded command buffers that bind it: on the pooled path always, on
 * the push path where vkattn owns the tensor's memory.
 *
 * Queues: vkattn records into whatever command buffer it is given and submits
 * only its own one-shot work (VKATTN_RUN_NOW, uploads, downloads, fills), on one queue.
 * Its own device uses a compute-only (async compute) family where the device
 * has one, else the first family with compute. An app that wants vkattn on its
 * async-compute queue imports that queue (import.queue, queue_family_index,
 * queue_index) and records vkattn's work into command buffers of that family.
 * Sharing tensors with passes on another family (graphics): vkattn supports
 * buffers created with VK_SHARING_MODE_CONCURRENT over both families (wrap
 * them with vkattn_tensor_wrap; vkattn's own tensors are EXCLUSIVE to the
 * context's family), ordered across queues by the app's semaphores, and
 * EXCLUSIVE ones through a queue-family ownership transfer: vkattn records its
 * halves with vkattn_tensor_release / vkattn_tensor_acquire given the app's
 * family, the app records the other halves (vkattn/tensor.h). Submissions from several
 * threads to one queue go through import.lock_queue.
 *
 * Thread safety, in Vulkan's terms. Safe concurrently on one context, from
 * any number of threads: recording (every *_record) and preparing (every
 * *_record with VKATTN_PREPARE) of *different* layers and tensors, into different command
 * buffers; vkattn_context_get_info, _get_stats, _memory_usage,
 * _last_error (each thread gets its own copy of the message) and
 * _get_pipeline_cache_data. Each recording thread gets its own library-managed
 * scratch (the ops' workspace, the pack buffer), so each thread's command
 * buffers must run in the order that thread recorded them, as for its own
 * tensors. Externally synchronized on the context (one thread at a time, and
 * not while others record): everything that uses the context's queue
 * (VKATTN_RUN_NOW, vkattn_tensor_upload/_download/_fill, begin_commands/
 * submit_and_wait, timers), tensor, layer and timer creation and
 * destruction, vkattn_context_reset_peak_memory and vkattn_context_destroy.
 * A layer or tensor is itself externally synchronized: two threads never
 * record the same layer, or calls that write the same tensor, at once.
 */
#ifndef VKATTN_CONTEXT_H
#define VKATTN_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vulkan/vulkan_core.h>

#include "vkattn/export.h"
#include "vkattn/result.h"
#include "vkattn/version.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkattn_context vkattn_context;

/* What the app hands over when vkattn should run on its own device. All four
 * handles are required together; vkattn does not destroy any of them. */
typedef struct vkattn_import_desc {
    VkInstance instance;
    VkPhysicalDevice physical_device;
    VkDevice device;
    VkQueue queue;               /* must support compute */
    uint32_t queue_family_index; /* the queue's family */
    uint32_t api_version;        /* version the instance was created with; 0 = 1.1 */
    /* The app's loader entry point; NULL = vkattn opens the system loader. */
    PFN_vkGetInstanceProcAddr get_instance_proc_addr;
    /* The device extensions the app enabled (vkattn uses the ones it knows,
     * vkattn_optional_device_extensions). Count 0 = not given: vkattn then
     * uses push descriptors iff the device returns vkCmdPushDescriptorSetKHR. */
    const char *const *enabled_extensions;
    uint32_t enabled_extension_count;

    /* Appended in 0.2. The queue's index within queue_family_index (as given
     * to vkGetDeviceQueue); only passed to the lock callbacks. */
    uint32_t queue_index;
    /* The app's queue lock, as libplacebo's lock_queue: vkattn calls
     * lock_queue before and unlock_queue after every vkQueueSubmit it makes
     * on the imported queue (VKATTN_RUN_NOW, upload, download, fill, set_weights,
     * vkattn_context_submit_and_wait), from the thread making the call, never
     * nested. Give both or neither (NULL = the app promises no other thread
     * uses the queue during those calls). */
    void (*lock_queue)(void *user, uint32_t queue_family_index, uint32_t queue_index);
    void (*unlock_queue)(void *user, uint32_t queue_family_index, uint32_t queue_index);
    void *queue_lock_user;
} vkattn_import_desc;

/* Benchmarking and testing overrides (kernel tuning): vkattn/advanced.h. */
struct vkattn_context_advanced;

/* App-owned device memory (vkattn_context_desc.allocator).
 *
 * By default vkattn sub-allocates its buffers from a few large VkDeviceMemory
 * blocks it allocates itself (docs/INTEGRATION.md, "Memory"). An app that
 * manages device memory itself (VMA, its own heaps, a budget) passes an
 * allocator: vkattn then asks it for every buffer it creates (tensors,
 * scratch, staging, its own small internal buffers) and makes no
 * vkAllocateMemory call of its own. vkattn creates the VkBuffer, asks for
 * memory that fits its VkMemoryRequirements and binds the buffer at the
 * answer's offset. */
typedef struct vkattn_allocation_request {
    VkDevice device;           /* the context's device (its own or the imported one) */
    VkDeviceSize size;         /* bytes; > 0 */
    VkDeviceSize alignment;    /* the answer's offset must be a multiple (a power of two) */
    uint32_t memory_type_bits; /* VkMemoryRequirements.memoryTypeBits: allowed types */
    uint32_t memory_type_index; /* the type vkattn would use itself: a hint */
    /* vkattn reads and writes the memory from the host (staging copies): the
     * memory must be HOST_VISIBLE | HOST_COHERENT and the answer's `mapped`
     * set. false: device-local memory is best; mapped is optional. */
    bool host_visible;
} vkattn_allocation_request;

typedef struct vkattn_allocation {
    VkDeviceMemory memory; /* non-NULL on success */
    VkDeviceSize offset;   /* a multiple of the request's alignment */
    /* Host pointer to byte `offset` of `memory`, or NULL. Required when the
     * request was host_visible; otherwise set it only for HOST_COHERENT
     * memory, and vkattn then uploads and downloads through it directly. */
    void *mapped;
    void *user_data; /* the app's own, handed back to free */
} vkattn_allocation;

typedef struct vkattn_allocator {
    void *user; /* passed to both functions */
    /* Fills *out with memory for `req`, or returns an error (usually
     * VKATTN_ERROR_OUT_OF_DEVICE_MEMORY), which the vkattn call that needed
     * the memory returns after undoing what it had done (a negative
     * vkattn_result other than a vkattn code reads as out of device memory). */
    vkattn_result (*allocate)(void *user, const vkattn_allocation_request *req,
                              vkattn_allocation *out);
    /* Takes back an allocation once vkattn has destroyed the buffer bound to
     * it: when its tensor, layer or staging copy goes, or at
     * vkattn_context_destroy. Never called for a failed allocate. */
    void (*free)(void *user, const vkattn_allocation *a);
} vkattn_allocator;

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

    /* Device profile to assume (vkattn_profile_names lists them): "desktop"
     * or NULL = the device's own limits; "mobile-min" = the Vulkan 1.1
     * minimums; "mali", "adreno" = those GPUs' typical limits. Limits and
     * features are clamped to min(device, profile). Unknown name:
     * VKATTN_ERROR_INVALID_ARGUMENT. */
    const char *profile;

    /* Work one dispatch may do, in multiply-adds (roughly: flops / 2), so no
     * single dispatch trips an OS watchdog (Windows TDR at about 2 s, Android
     * hang detection, mobile GPUs that cannot preempt compute). Long calls are
     * split into several dispatches along rows or keys. 0 = the profile's
     * budget (none for "desktop"). */
    uint64_t max_dispatch_work;

    /* Appended in 0.2. Initial contents of the pipeline cache vkattn creates
     * when pipeline_cache is VK_NULL_HANDLE: bytes an earlier
     * vkattn_context_get_pipeline_cache_data returned (copied; the app may
     * free them after create). Data from another device, driver or a
     * corrupted file is ignored, as Vulkan allows, with a WARN log message:
     * pipelines are then compiled as without it. NULL/0 = an empty cache.
     * Ignored (with a WARN) when pipeline_cache is set: seed the app's cache. */
    const void *pipeline_cache_data;
    size_t pipeline_cache_size;
    /* Benchmarking and testing overrides (vkattn/advanced.h, not included by
     * vkattn/vkattn.h); NULL = defaults. Read during vkattn_context_create only. */
    const struct vkattn_context_advanced *advanced;
    /* App-owned memory: with allocator.allocate set (and allocator.free,
     * both or neither), vkattn takes every buffer's memory from it instead of
     * sub-allocating its own blocks. The functions are called from whichever
     * thread calls the vkattn function that creates or destroys the buffer,
     * never concurrently for one context (calls on a context are externally
     * synchronized); contexts sharing one allocator may call it
     * concurrently. The allocator must stay valid until
     * vkattn_context_destroy returns. Zero = vkattn allocates. */
    vkattn_allocator allocator;
} vkattn_context_desc;

/* Creates a context. On failure *out is NULL and vkattn_last_error() holds the
 * reason. Codes: VKATTN_ERROR_INVALID_ARGUMENT, _NO_VULKAN (no loader),
 * _NO_DEVICE (no device, or none matching the choice), _UNSUPPORTED (a needed
 * feature is missing: the message names it), _VULKAN, _OUT_OF_*_MEMORY.
 * The header calls the library of its own minor version only: the function is
 * exported as vkattn_context_create_abi_<major>_<minor> (vkattn/version.h), so
 * an app built against another minor fails to load instead of reading or
 * writing past the structs it was built with. Source code calls
 * vkattn_context_create as before. */
#define vkattn_context_create VKATTN_ABI_NAME(vkattn_context_create)
VKATTN_API vkattn_result vkattn_context_create(const vkattn_context_desc *desc,
                                               vkattn_context **out);

/* Waits for the context's own queue work, frees everything the context created.
 * Tensors, layers and timers must be destroyed first. NULL is a no-op. */
VKATTN_API void vkattn_context_destroy(vkattn_context *ctx);

/* The specific message of the last failure on this context ("" if none), as
 * a copy in the calling thread's storage, valid until this thread calls it
 * again. */
VKATTN_API const char *vkattn_context_last_error(const vkattn_context *ctx);

typedef enum vkattn_device_type {
    VKATTN_DEVICE_OTHER = 0,
    VKATTN_DEVICE_INTEGRATED = 1,
    VKATTN_DEVICE_DISCRETE = 2,
    VKATTN_DEVICE_VIRTUAL = 3,
    VKATTN_DEVICE_CPU = 4,
} vkattn_device_type;

/* The cooperative-matrix kernel families: bits of
 * vkattn_context_info.coopmat_flavours (what the device offers),
 * coopmat_built, coopmat_running and vkattn_context_advanced.coopmat_families;
 * a family's index in coopmat_check is the bit's position. */
#define VKATTN_COOPMAT_NV 1u       /* VK_NV_cooperative_matrix (coopmat1, NVIDIA) */
#define VKATTN_COOPMAT_KHR 2u      /* VK_KHR_cooperative_matrix (AMD, Intel, NVIDIA, phones) */
#define VKATTN_COOPMAT_NV2 4u      /* VK_NV_cooperative_matrix2 (tensor layouts; NVIDIA) */
#define VKATTN_COOPMAT_EMULATED 8u /* the fragments emulated in plain shader code (any device) */
#define VKATTN_COOPMAT_FAMILIES 4

/* A family's on-device self-test: a few small f16 products and masked,
 * causal attention tiles on the family's own kernels, each compared with the
 * same call on the scalar kernels (docs/PORTABILITY.md, "Tensor cores"). */
typedef enum vkattn_coopmat_check_state {
    VKATTN_COOPMAT_NOT_TRIED = 0, /* `detail` says why (not offered, not built, OFF, ...) */
    VKATTN_COOPMAT_PASSED = 1,
    VKATTN_COOPMAT_FAILED = 2, /* the family's kernels do not run on this context */
    VKATTN_COOPMAT_FORCED = 3, /* cooperative_matrix ON: runs untested */
} vkattn_coopmat_check_state;

typedef struct vkattn_coopmat_check {
    vkattn_coopmat_check_state state;
    /* PASSED: what was checked; FAILED: the check and its first wrong
     * element, e.g. "matmul 2x37x29x45: c[40] = 3.5, expected 1.25", or the
     * error that stopped it; NOT_TRIED: why. */
    char detail[96];
    /* FAILED: the first wrong element of the first failing check. */
    uint64_t index;
    float got, expected;
    bool cached; /* the outcome of an earlier context's test of the same device */
} vkattn_coopmat_check;

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

    /* Appended in 0.2. Every limit above and below is already clamped by
     * the profile. */
    char profile[32];                       /* the profile in force ("desktop") */
    uint32_t max_storage_buffers_per_stage; /* maxPerStageDescriptorStorageBuffers */
    bool push_descriptors;                  /* VK_KHR_push_descriptor in use; else pooled sets */
    bool storage_buffer_16bit;              /* storageBuffer16BitAccess */
    bool subgroup_operations;               /* basic + arithmetic subgroup ops in compute */
    bool portability_subset;                /* VK_KHR_portability_subset (MoltenVK) */
    uint64_t max_dispatch_work;             /* multiply-adds per dispatch; 0 = unbounded */

    /* Appended in 0.3: cooperative matrices (tensor cores). */
    uint32_t coopmat_flavours; /* VKATTN_COOPMAT_NV | _KHR | _NV2 the device offers */
    /* The device lists the f16 x f16 -> f32 16x16x16 subgroup shape, the one
     * vkattn's kernels use (NV list; KHR list where the loader has it). */
    bool coopmat_f16_16x16x16;
    /* vkattn enabled a cooperative-matrix family's features on this context:
     * the device offers it with that shape, this build holds its kernels,
     * vkattn created the device (it enables the features), the profile
     * allows it and vkattn_context_advanced.cooperative_matrix is not OFF.
     * Whether the kernels then run is coopmat_running's to say. (Their
     * emulation, vkattn_context_advanced.coopmat_emulate, needs no feature.) */
    bool coopmat_enabled;
    /* The fused attention forward (vkattn_sdpa_*, the layers' attention)
     * takes its cooperative-matrix kernel, or that kernel's emulation
     * (vkattn_context_advanced.coopmat_emulate), for calls whose q, k and v
     * are all f16 (dk <= 256, dv <= 128, GPU tuning): such calls then carry
     * the extra f16 term of docs/SEMANTICS.md (SDPA). Set where a family's
     * attention kernel runs (fixed subgroups of 32, 8 storage buffers, the
     * self-test passed, or ON). */
    bool coopmat_attention;

    /* Appended after 0.3.0: the cooperative-matrix kernel families
     * (VKATTN_COOPMAT_* bits; docs/PORTABILITY.md, "Tensor cores"). Under
     * AUTO a family runs only once its known-answer self-test passed on this
     * device: vkattn_context_create runs the self-test of every candidate
     * family (a few small products and attention tiles, one fused backward;
     * once per device, driver and process, later contexts reuse the outcome)
     * and a failing family is logged at WARN and left for the scalar kernels. */
    uint32_t coopmat_built; /* families whose kernels this build of the library holds */
    /* The families the matmul's, the fused attention's and the fused
     * backward's kernels run on now: one bit, or more where a family's
     * self-test passed one kernel and not another; 0 = the scalar kernels. */
    uint32_t coopmat_running;
    vkattn_coopmat_check coopmat_check[VKATTN_COOPMAT_FAMILIES]; /* by family index */
} vkattn_context_info;

/* Fills *info. Thread safety: may be called concurrently with anything. */
VKATTN_API vkattn_result vkattn_context_get_info(const vkattn_context *ctx,
                                                 vkattn_context_info *info);

/* Peak and current device memory bound to vkattn's live buffers on this
 * context, in bytes (vkattn_memory_stats.used_bytes; the VkDeviceMemory
 * behind them is vkattn_memory_stats.device_bytes). */
VKATTN_API vkattn_result vkattn_context_memory_usage(const vkattn_context *ctx,
                                                     uint64_t *current, uint64_t *peak);
/* Sets the peak back to the current usage (for measuring one call). */
VKATTN_API void vkattn_context_reset_peak_memory(vkattn_context *ctx);

/* Where a context's device memory is. vkattn binds each buffer (tensor,
 * scratch, staging) into a sub-range of a large block, a dedicated
 * allocation, or the app's allocator's memory. */
typedef struct vkattn_memory_stats {
    /* VkDeviceMemory objects vkattn allocated from the driver and still
     * holds (blocks and dedicated allocations; 0 with an app allocator),
     * and their total bytes. */
    uint64_t device_allocations;
    uint64_t device_bytes;
    uint64_t dedicated_allocations; /* of device_allocations: one buffer each */
    /* Bytes bound to live buffers (= vkattn_context_memory_usage's current)
     * and their peak; live buffers; live allocations from the app's
     * allocator. */
    uint64_t used_bytes;
    uint64_t peak_used_bytes;
    uint64_t buffers;
    uint64_t app_allocations;
} vkattn_memory_stats;

/* Fills *stats. Codes: VKATTN_ERROR_INVALID_ARGUMENT (ctx or stats NULL).
 * Externally synchronized on ctx. */
VKATTN_API vkattn_result vkattn_context_memory_stats(const vkattn_context *ctx,
                                                     vkattn_memory_stats *stats);

/* The device extensions vkattn needs, for an app creating a device to import.
 * Since 0.2 none is required: *count is 0 (the array is not NULL). */
VKATTN_API const char *const *vkattn_required_device_extensions(uint32_t *count);

/* A device extension vkattn uses when the device it imports enables it. */
typedef struct vkattn_optional_extension {
    const char *name;
    const char *benefit; /* one sentence: what vkattn does with it */
} vkattn_optional_extension;

/* The device extensions vkattn uses when present (enable them on a device
 * you import to get their benefit). Returns a static array of *count. */
VKATTN_API const vkattn_optional_extension *vkattn_optional_device_extensions(uint32_t *count);

/* The names vkattn_context_desc.profile accepts: a static array of *count
 * strings, "desktop" first. */
VKATTN_API const char *const *vkattn_profile_names(uint32_t *count);

/* A device as seen before choosing one (an output of vkattn_enumerate_devices,
 * not a creation struct). */
typedef struct vkattn_device_info {
    uint32_t index;
    char name[256];
    uint32_t vendor_id;
    vkattn_device_type device_type;
    uint32_t api_version;
    bool usable; /* has everything vkattn needs */
} vkattn_device_info;

/* Lists the devices of the system loader. With devices NULL, *count receives
 * the number; otherwise up to *count entries are written and *count is set to
 * the number written. VKATTN_ERROR_NO_VULKAN without a loader. */
VKATTN_API vkattn_result vkattn_enumerate_devices(vkattn_device_info *devices, uint32_t *count);

/* ------------------------------------------------------- pipelines, stats */

/* The context's pipeline cache contents, in Vulkan's two-call idiom: with
 * data NULL, *size becomes the bytes needed; else the data is written and
 * *size becomes the bytes written. If *size is too small (the cache grew since
 * the first call), nothing is written, *size becomes the size needed and the
 * result is VKATTN_ERROR_INVALID_ARGUMENT: call again. 0 bytes when the
 * context has no pipeline cache (creating one failed). Save them and pass them back as
 * vkattn_context_desc.pipeline_cache_data, so a later process compiles
 * nothing it compiled before (seconds per fused kernel on CPU drivers). With
 * an app's VkPipelineCache this returns that cache's data. Thread safety: may
 * be called while other threads record. */
VKATTN_API vkattn_result vkattn_context_get_pipeline_cache_data(vkattn_context *ctx, void *data,
                                                                size_t *size);

/* What the context created so far, to check that preparing ahead works: a
 * frame recorded after a VKATTN_PREPARE recording with the same (or smaller) shapes changes
 * none of these counts. */
typedef struct vkattn_context_stats {
    uint64_t pipelines_created;         /* compute pipelines compiled */
    uint64_t scratch_allocations;       /* scratch buffers created or grown (context, layers) */
    uint64_t descriptor_sets_allocated; /* pooled sets (no push descriptors); 0 otherwise */
} vkattn_context_stats;

/* Fills *stats. Thread safety: may be called while other threads record. */
VKATTN_API vkattn_result vkattn_context_get_stats(const vkattn_context *ctx,
                                                  vkattn_context_stats *stats);

/* ------------------------------------------------------------------ commands */

/* A one-shot command buffer on the context's queue, for apps and tools that do
 * not manage their own: begin, record vkattn ops (and timers) into it, then
 * submit and wait (a fence wait, never a spin). One at a time per context. */
VKATTN_API vkattn_result vkattn_context_begin_commands(vkattn_context *ctx,
                                                       VkCommandBuffer *cmd);
VKATTN_API vkattn_result vkattn_context_submit_and_wait(vkattn_context *ctx,
                                                        VkCommandBuffer cmd);

/* ------------------------------------------------------------ record modes
 *
 * Every *_record (ops, layers, backward passes, the cached MHA/GQA calls, the
 * KV cache's append and reset) takes, in place of the app's command buffer,
 * one of two sentinels:
 *
 *   VKATTN_PREPARE  creates ahead what the recording would create on first use
 *                   (pipelines, library-managed scratch, descriptor sets) and
 *                   checks every argument, but records nothing and changes no
 *                   tensor's tracked access: recording it later with the same
 *                   (or smaller) sizes creates nothing and cannot stall a frame
 *                   (vkattn_context_get_stats shows it). The same sizes and
 *                   the same optional inputs present (NULL or not) make the
 *                   same call; scratch prepared for a call also serves smaller
 *                   ones, but kernels may pick tiles by size: prepare each
 *                   shape you will record. The tensors are only checked.
 *                   Thread safety: as *_record.
 *   VKATTN_RUN_NOW  records into the context's own one-shot command buffer,
 *                   submits it on the context's queue and waits (a fence wait)
 *                   before returning; externally synchronized on the context,
 *                   as vkattn_context_begin_commands. The KV cache's append and
 *                   reset, and the cached MHA/GQA calls, then also read the
 *                   sequence lengths back, so later calls check the capacity.
 *
 * Both are invalid handle values, never a real command buffer; a NULL command
 * buffer stays an error (VKATTN_ERROR_INVALID_ARGUMENT). A failure in either
 * mode is reported as the *_record's, and nothing is submitted. */
#define VKATTN_PREPARE ((VkCommandBuffer)(uintptr_t)1)
#define VKATTN_RUN_NOW ((VkCommandBuffer)(uintptr_t)2)

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_CONTEXT_H */
