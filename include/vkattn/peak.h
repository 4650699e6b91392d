/* vkattn/peak.h - the device's own ceilings: fp32 FMA rate and copy bandwidth.
 *
 * Public, but not included by vkattn/vkattn.h: include it yourself
 * (#include <vkattn/peak.h>) where you judge speed against the device.
 *
 * A benchmark figure means little without the device's ceiling next to it: 2
 * GFLOP/s is good on lavapipe and poor on a datacenter GPU. vkattn_measure_peak
 * runs two simple compute kernels and times them with GPU timestamps:
 * - FMA: every invocation runs many independent chains of fp32 fma() (no memory
 *   traffic inside the loop); each fma counts as 2 flops. Variants with 16 and
 *   32 chains per invocation and 256 and 8192 workgroups are tried and the
 *   fastest counts, so both GPUs (parallel across invocations) and CPU devices
 *   (parallel across chains, with per-invocation overhead to amortize) reach
 *   their rate. The loop count grows until one run takes >= ~20 ms.
 * - Cooperative matrices (where the context runs them): every subgroup
 *   multiplies f16 16x16 fragments held in registers into four independent
 *   f32 accumulators; the loop count grows the same way.
 * - Copy: a shader copies one large buffer (up to 256 MiB, at most
 *   maxStorageBufferRange) into another with vec4 loads and stores; bytes read
 *   plus bytes written count.
 * Each is warmed up, then timed several times; the median counts.
 *
 * Call sequence:
 *   vkattn_peak_result peak;
 *   if (vkattn_measure_peak(ctx, &peak) == VKATTN_SUCCESS)
 *       printf("%.1f GFLOP/s, %.1f GB/s\n", peak.fma_gflops, peak.copy_gbps);
 *
 * It takes from well under a second (a GPU) to a few seconds (lavapipe), and
 * allocates two buffers of up to 256 MiB for the time of the call. Results
 * vary by a few percent from run to run; tools cache them (attnbench does).
 *
 * Results: VKATTN_ERROR_INVALID_ARGUMENT (NULL), VKATTN_ERROR_UNSUPPORTED (the
 * queue has no timestamps), VKATTN_ERROR_OUT_OF_DEVICE_MEMORY, Vulkan failures.
 * Thread safety: externally synchronized on ctx; uses the context's one-shot
 * command buffer (vkattn_context_begin_commands), so none may be open.
 */
#ifndef VKATTN_PEAK_H
#define VKATTN_PEAK_H

#include <stdint.h>

#include "vkattn/context.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkattn_peak_result {
    double fma_gflops;  /* fp32 FMA rate, 1e9 flops per second (an fma is 2 flops) */
    double copy_gbps;   /* copy bandwidth, 1e9 bytes (read + written) per second */
    double fma_ms;      /* median GPU time of one timed FMA run */
    double copy_ms;     /* median GPU time of one timed copy */
    uint64_t fma_flops; /* flops of one FMA run */
    uint64_t copy_bytes; /* bytes read + written by one copy */

    /* Appended in 0.3: the f16 x f16 -> f32 cooperative-matrix (tensor-core)
     * rate, 1e9 flops per second (a 16x16x16 product is 8192 flops), where
     * the context runs cooperative-matrix kernels
     * (vkattn_context_info.coopmat_enabled); 0 elsewhere. */
    double coopmat_gflops;
    double coopmat_ms;      /* median GPU time of one timed run */
    uint64_t coopmat_flops; /* flops of one run */
} vkattn_peak_result;

/* Measures the device's ceilings (see above) into *out. On failure *out is
 * zeroed. */
VKATTN_API vkattn_result vkattn_measure_peak(vkattn_context *ctx, vkattn_peak_result *out);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_PEAK_H */
