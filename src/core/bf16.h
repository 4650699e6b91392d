/* One value, or n of them, f32 / double <-> bf16 on the host (core/bf16.c):
 * the bf16 row of core/dtype.c. Internal: an app converts by uploading f32
 * values into a bf16 tensor (vkattn/dtype.h). */
#ifndef VKA_CORE_BF16_H
#define VKA_CORE_BF16_H

#include <stddef.h>
#include <stdint.h>

/* Rounded to nearest even; past the largest finite bf16 as RNE says (+-inf);
 * NaN stays a quiet NaN of the same sign (its top payload bits kept);
 * subnormals kept. */
uint16_t vka_f32_to_bf16(float value);
/* Exact. */
float vka_bf16_to_f32(uint16_t bits);
/* double -> bf16, rounded once to nearest even (no detour through f32, which
 * could round twice), otherwise as vka_f32_to_bf16: the CPU reference's
 * rounding (core/dtype.h). */
uint16_t vka_bf16_from_double(double v);

void vka_f32_to_bf16_array(uint16_t *dst, const float *src, size_t n);
void vka_bf16_to_f32_array(float *dst, const uint16_t *src, size_t n);

#endif /* VKA_CORE_BF16_H */
