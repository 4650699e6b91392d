/* f16 <-> f32 on the host, by integer arithmetic on the bit patterns so that
 * the result does not depend on the compiler's or the FPU's rounding mode. */
#include "core/half.h"
#include "vkattn/half.h"

#include <math.h>
#include <string.h>

uint16_t vka_f32_to_f16(float value)
{
    uint32_t x;
    memcpy(&x, &value, sizeof x);
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    const uint32_t exp = (x >> 23) & 0xffu, mant = x & 0x7fffffu;
    if (exp == 0xff) /* inf stays inf; NaN keeps its top payload bits, made quiet */
        return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u | (mant >> 13) : 0));
    const int e = (int)exp - 127 + 15; /* f16 biased exponent */
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        /* subnormal f16 (or 0): shift the full significand right, then round */
        if (e < -10)
            return sign; /* below half the smallest subnormal: rounds to 0 */
        const uint32_t m = mant | 0x800000u;
        const unsigned shift = (unsigned)(14 - e); /* 14..24 */
        uint32_t h = m >> shift;
        const uint32_t rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rest > half || (rest == half && (h & 1u)))
            h++; /* may carry into the smallest normal: still the right pattern */
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)e << 10) | (mant >> 13);
    const uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        h++; /* a carry may reach the exponent, up to inf: both are correct */
    return (uint16_t)(sign | h);
}

float vka_f16_to_f32(uint16_t bits)
{
    const uint32_t sign = (uint32_t)(bits & 0x8000u) << 16;
    uint32_t exp = (bits >> 10) & 0x1fu, mant = bits & 0x3ffu, x;
    if (exp == 0x1f) {
        x = sign | 0x7f800000u | (mant << 13);
    } else if (exp == 0) {
        if (mant == 0) {
            x = sign;
        } else { /* subnormal: normalise */
            int e = -1;
            do {
                mant <<= 1;
                e++;
            } while (!(mant & 0x400u));
            x = sign | ((uint32_t)(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
        }
    } else {
        x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

void vkattn_f32_to_f16_array(uint16_t *dst, const float *src, size_t count)
{
    for (size_t i = 0; i < count; i++)
        dst[i] = vka_f32_to_f16(src[i]);
}

void vkattn_f16_to_f32_array(float *dst, const uint16_t *src, size_t count)
{
    for (size_t i = 0; i < count; i++)
        dst[i] = vka_f16_to_f32(src[i]);
}

/* Scales by the f16 spacing at |v| and rounds with nearbyint (to even). */
uint16_t vka_f16_from_double(double v)
{
    if (isnan(v))
        return 0x7e00;
    const uint16_t sign = signbit(v) ? 0x8000 : 0;
    const double a = fabs(v);
    if (a >= 65520.0) /* 65504 + half its spacing: the tie rounds to even, 2^16 */
        return sign | 0x7c00;
    int e = a > 0 ? ilogb(a) : -14;
    if (e < -14)
        e = -14;
    const double q = nearbyint(ldexp(a, 10 - e)); /* in units of the spacing */
    if (e == -14 && q < 1024)
        return (uint16_t)(sign | (uint16_t)q); /* subnormal or zero */
    if (q >= 2048) /* rounded up into the next binade */
        return (uint16_t)(sign | (uint16_t)((e + 16) << 10));
    return (uint16_t)(sign | (uint16_t)(((e + 15) << 10) | ((uint32_t)q - 1024)));
}
