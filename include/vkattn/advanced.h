/* vkattn/advanced.h - overrides for benchmarking and testing, outside the main API.
 *
 * Not included by vkattn/vkattn.h: an app never needs it. What is here changes
 * only how fast vkattn runs, never what it computes (each op and layer stays
 * within its stated bound either way), and may change between minor versions.
 *
 * Call sequence:
 *   #include <vkattn/vkattn.h>
 *   #include <vkattn/advanced.h>
 *   vkattn_context_advanced adv = {.tuning = VKATTN_TUNING_GPU};
 *   vkattn_context_desc desc = {.advanced = &adv};   // read during create only
 *   vkattn_context_create(&desc, &ctx);
 */
#ifndef VKATTN_ADVANCED_H
#define VKATTN_ADVANCED_H

#include "vkattn/context.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Which kind of processor kernel shapes are tuned for. Results agree within
 * each op's stated bound either way; only speed differs. */
typedef enum vkattn_tuning {
    VKATTN_TUNING_AUTO = 0, /* by device type: CPU for CPU devices (lavapipe), else GPU */
    VKATTN_TUNING_GPU = 1,  /* many invocations per row, subgroup reductions, tiled
                               fused attention, vec4/double-buffered matmul (f32 and
                               f16 alike), split long softmax rows, kernels within a
                               register budget (docs/PORTABILITY.md) */
    VKATTN_TUNING_CPU = 2,  /* SIMD lanes as rows: few invocations per row, few barriers */
} vkattn_tuning;

/* vkattn_context_desc.advanced points at one (NULL = all defaults). Zero
 * fields are defaults; the struct grows only by appending fields. */
/* vkattn_context_advanced.cooperative_matrix. */
typedef enum vkattn_coopmat_mode {
    VKATTN_COOPMAT_AUTO = 0,
    VKATTN_COOPMAT_OFF = 1,
    VKATTN_COOPMAT_ON = 2,
} vkattn_coopmat_mode;

/* vkattn_context_advanced.variants: the kernel families whose tiles a
 * benchmark may pick, and how many prepared variants each has (indices 1 ..
 * count; docs/PERFORMANCE.md, "Variant sweep"). */
typedef enum vkattn_variant_family {
    VKATTN_VARIANT_MATMUL = 0,         /* matmul_gpu.comp (GPU tuning, f32 and f16) */
    VKATTN_VARIANT_MATMUL_COOPMAT = 1, /* matmul_coopmat_*.comp (tensor cores, f16) */
    VKATTN_VARIANT_FLASH = 2,          /* flash_tiled*.comp (fused SDPA, GPU tuning) */
    VKATTN_VARIANT_FLASH_COOPMAT = 3,  /* flash_coopmat_*.comp (fused SDPA, f16) */
    VKATTN_VARIANT_FLASH_BACKWARD = 4, /* flash_backward_*_gpu*.comp (fused SDPA backward) */
    VKATTN_VARIANT_FAMILIES = 5,
} vkattn_variant_family;

#define VKATTN_VARIANTS_MATMUL 7u
#define VKATTN_VARIANTS_MATMUL_COOPMAT 6u
#define VKATTN_VARIANTS_FLASH 6u
#define VKATTN_VARIANTS_FLASH_COOPMAT 6u
#define VKATTN_VARIANTS_FLASH_BACKWARD 6u

typedef struct vkattn_context_advanced {
    /* Kernel tuning; 0 = VKATTN_TUNING_AUTO. Tests use it to run the GPU
     * shapes on lavapipe too. Not a vkattn_tuning value:
     * VKATTN_ERROR_INVALID_ARGUMENT naming advanced->tuning. */
    vkattn_tuning tuning;
    /* Appended in 0.3. */
    /* Kernels use no subgroup operations even where the device offers them
     * (their shared-memory paths run instead): to test those paths, or to
     * step around a driver's subgroup bug. */
    bool no_subgroups;
    /* Ask the driver for each pipeline's statistics (registers, spills, ...)
     * at creation, for vkattn_context_pipeline_stats: enables
     * VK_KHR_pipeline_executable_properties on the device vkattn creates where
     * the device offers it. Pipelines may compile a little slower. */
    bool capture_pipeline_stats;
    /* Cooperative-matrix (tensor-core) kernels: VKATTN_COOPMAT_AUTO (0) runs
     * a family's kernels only where its on-device self-test passed
     * (vkattn_context_info.coopmat_check; docs/PORTABILITY.md, "Tensor
     * cores"); OFF never; ON wherever the device offers a family this build
     * holds and the profile allows it, untested. Not a vkattn_coopmat_mode
     * value: VKATTN_ERROR_INVALID_ARGUMENT naming advanced->cooperative_matrix. */
    vkattn_coopmat_mode cooperative_matrix;
    /* Run the cooperative-matrix kernels on an emulation of their 16x16
     * fragments in plain shader code, on any device (lavapipe too): the fused
     * attention kernel wherever a call would take it (GPU tuning, f16 q, k
     * and v, widths it serves), and the matmul for f16 A and B under the GPU
     * tuning where its tiles fit. Tests their tiling, edge padding, masks,
     * online softmax, dropout, LSE and output rules where no device has
     * cooperative matrices. Results are within each kernel's bound
     * (docs/SEMANTICS.md); speed is poor. The emulation is then the one
     * family (VKATTN_COOPMAT_EMULATED) and takes its self-test under AUTO
     * like a hardware family; ON runs it untested. */
    bool coopmat_emulate;
    /* Appended after 0.3.0. The families (VKATTN_COOPMAT_* bits) the kernels
     * may run on, to compare them or to step around one's driver bug; 0 =
     * any. Where several pass, the order is NV2, KHR, NV. Bits outside
     * VKATTN_COOPMAT_NV | _KHR | _NV2 | _EMULATED: VKATTN_ERROR_INVALID_ARGUMENT
     * naming advanced->coopmat_families. */
    uint32_t coopmat_families;
    /* For vkattn's own tests: the emulated fragments compute a wrong product
     * (one element of every 16x16 product off by one), to show that the
     * self-test refuses a device that computes wrong and that the calls then
     * take the scalar kernels. Only with coopmat_emulate. */
    bool coopmat_test_fault;
    /* Appended in 0.4. For benchmarking only (attnbench --variant, the
     * variant sweep of scripts/gpu-check.sh --sweep): variants[f] forces
     * prepared variant 1 .. VKATTN_VARIANTS_<f> of kernel family f (its tile
     * sizes: specialization constants, no new shaders) wherever the library
     * would run that family; 0 = the library's choice. A variant that does not
     * fit the device or the call (shared memory, invocations, the register
     * budget, the head widths) is logged at WARN, naming the field, and the
     * call runs as though the family's tiles did not fit (another kernel).
     * An index above the family's count: VKATTN_ERROR_INVALID_ARGUMENT naming
     * advanced->variants[f]. */
    uint32_t variants[VKATTN_VARIANT_FAMILIES];
} vkattn_context_advanced;

/* Called once per statistic: `pipeline` is the kernel's name ("flash_tiled",
 * "matmul", ...; several pipelines of one kernel, specialized differently,
 * share it, and `index` tells them apart), `stat` the driver's name for the
 * statistic, `value` its value (booleans as 0 or 1). The strings live only
 * for the call. */
typedef void (*vkattn_pipeline_stat_fn)(void *user, uint32_t index, const char *pipeline,
                                        const char *stat, double value);

/* Reports the statistics the driver gives for every pipeline the context has
 * created so far, in creation order. VKATTN_ERROR_UNSUPPORTED when the
 * context was not created with capture_pipeline_stats, or its device lacks
 * VK_KHR_pipeline_executable_properties (e.g. an imported device, which
 * vkattn cannot enable it on). Thread safety: may run concurrently with
 * recording; pipelines created meanwhile may be missed. */
VKATTN_API vkattn_result vkattn_context_pipeline_stats(vkattn_context *ctx,
                                                       vkattn_pipeline_stat_fn fn, void *user);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_ADVANCED_H */
