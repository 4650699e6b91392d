/* One value f32 <-> f16 on the host (core/half.c): what the public array
 * forms of vkattn/half.h apply to each element. */
#ifndef VKA_CORE_HALF_H
#define VKA_CORE_HALF_H

#include <stdint.h>

/* Rounded to nearest even; beyond 65504 in magnitude +-inf; NaN stays a
 * (quiet) NaN. */
uint16_t vka_f32_to_f16(float value);
/* Exact. */
float vka_f16_to_f32(uint16_t bits);
/* double -> f16, rounded once to nearest even (no detour through f32, which
 * could round twice); beyond the f16 range +-inf, NaN a quiet NaN: the CPU
 * reference's rounding (core/dtype.h). */
uint16_t vka_f16_from_double(double v);

#endif /* VKA_CORE_HALF_H */
