/* bf16 <-> f32 and double -> bf16 on the host, by integer arithmetic on the
 * bit patterns (f32) or by scaling and nearbyint (double, as core/half.c), so
 * that the result does not depend on the compiler's choices. bf16 is the top
 * half of a binary32: same sign and exponent, 7 fraction bits. */
#include "core/bf16.h"

#include <math.h>
#include <string.h>

uint16_t vka_f32_to_bf16(float value)
{
    uint32_t x;
    memcpy(&x, &value, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u) /* NaN: made quiet, sign and top payload kept */
        return (uint16_t)((x >> 16) | 0x40u);
    /* add just under half an ulp, plus one where the kept part is odd: ties to
     * even; a carry into the exponent (up to inf) is the right pattern */
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

float vka_bf16_to_f32(uint16_t bits)
{
    const uint32_t x = (uint32_t)bits << 16;
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

/* Scales by the bf16 spacing at |v| and rounds with nearbyint (to even). */
uint16_t vka_bf16_from_double(double v)
{
    const uint16_t sign = signbit(v) ? 0x8000 : 0;
    if (isnan(v)) { /* quiet, with the top 7 payload bits, as from f32 */
        uint64_t x;
        memcpy(&x, &v, sizeof x);
        return (uint16_t)(sign | 0x7fc0u | (uint16_t)((x >> 45) & 0x3fu));
    }
    const double a = fabs(v);
    /* the largest finite, (2 - 2^-7) 2^127, plus half its spacing: the tie
     * rounds to even, 2^128 (inf) */
    if (a >= ldexp(2.0 - 1.0 / 256, 127))
        return sign | 0x7f80;
    int e = a > 0 ? ilogb(a) : -126;
    if (e < -126)
        e = -126;
    const double q = nearbyint(ldexp(a, 7 - e)); /* in units of the spacing */
    if (e == -126 && q < 128)
        return (uint16_t)(sign | (uint16_t)q); /* subnormal or zero */
    if (q >= 256)                              /* rounded up into the next binade */
        return (uint16_t)(sign | (uint16_t)((e + 128) << 7));
    return (uint16_t)(sign | (uint16_t)(((e + 127) << 7) | ((uint32_t)q - 128)));
}

void vka_f32_to_bf16_array(uint16_t *dst, const float *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = vka_f32_to_bf16(src[i]);
}

void vka_bf16_to_f32_array(float *dst, const uint16_t *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = vka_bf16_to_f32(src[i]);
}
