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

#ifdef __cplusplus
extern "C" {
#endif

/* Which kind of processor kernel shapes are tuned for. Results agree within
 * each op's stated bound either way; only speed differs. */
typedef enum vkattn_tuning {
    VKATTN_TUNING_AUTO = 0, /* by device type: CPU for CPU devices (lavapipe), else GPU */
    VKATTN_TUNING_GPU = 1,  /* many invocations per row, shared-memory reductions */
    VKATTN_TUNING_CPU = 2,  /* SIMD lanes as rows: few invocations per row, few barriers */
} vkattn_tuning;

/* vkattn_context_desc.advanced points at one (NULL = all defaults). Zero
 * fields are defaults; the struct grows only by appending fields. */
typedef struct vkattn_context_advanced {
    /* Kernel tuning; 0 = VKATTN_TUNING_AUTO. Tests use it to run the GPU
     * shapes on lavapipe too. Not a vkattn_tuning value:
     * VKATTN_ERROR_INVALID_ARGUMENT naming advanced->tuning. */
    vkattn_tuning tuning;
} vkattn_context_advanced;

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_ADVANCED_H */
