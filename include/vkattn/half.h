/* vkattn/half.h - IEEE 754 binary16 (f16) <-> binary32 (f32) conversion on the host.
 *
 * Pure C, no Vulkan and no context: use them to prepare f16 tensor data, to read
 * it back, or to compute what the GPU should produce. f16 values travel as their
 * bit patterns (uint16_t), since C11 has no half type.
 *
 * f32 -> f16 rounds to nearest, ties to even; magnitudes that round above the
 * largest finite f16 (65504) become +-inf; results below 2^-14 become f16
 * subnormals (or +-0); NaN stays NaN (sign and the top 10 payload bits kept,
 * quiet bit set). f16 -> f32 is exact for every pattern (subnormals included);
 * a NaN keeps its sign and payload.
 *
 * Thread safety: pure; any thread. The array versions accept count 0 and then
 * touch no pointer; the arrays must not overlap.
 */
#ifndef VKATTN_HALF_H
#define VKATTN_HALF_H

#include <stddef.h>
#include <stdint.h>

#include "vkattn/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dst[i] = src[i] rounded to f16, for i < count (one value: count 1). */
VKATTN_API void vkattn_f32_to_f16_array(uint16_t *dst, const float *src, size_t count);
/* dst[i] = the f32 value of the f16 pattern src[i], for i < count. */
VKATTN_API void vkattn_f16_to_f32_array(float *dst, const uint16_t *src, size_t count);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_HALF_H */
