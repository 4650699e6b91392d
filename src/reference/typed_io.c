/* f32/f16 host-array elements for the typed CPU reference (typed_io.h). */
#include "reference/typed_io.h"

#include <math.h>

#include "core/error.h"
#include "vkattn/half.h"
#include "core/half.h"

double vka_ref_load(const void *x, vkattn_dtype t, size_t i)
{
    return t == VKATTN_DTYPE_F16 ? (double)vka_f16_to_f32(((const uint16_t *)x)[i])
                                 : (double)((const float *)x)[i];
}

/* Scales by the f16 spacing at |v| and rounds with nearbyint (to even). */
uint16_t vka_ref_f16_from_double(double v)
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

void vka_ref_store(void *x, vkattn_dtype t, size_t i, double v)
{
    if (t == VKATTN_DTYPE_F16)
        ((uint16_t *)x)[i] = vka_ref_f16_from_double(v);
    else
        ((float *)x)[i] = (float)v;
}

vkattn_result vka_ref_check_dtype(const char *fn, const char *name, vkattn_dtype t)
{
    if (t != VKATTN_DTYPE_F32 && t != VKATTN_DTYPE_F16)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: types->%s is %d; must be VKATTN_DTYPE_F32 or VKATTN_DTYPE_F16", fn,
                        name, (int)t);
    return VKATTN_SUCCESS;
}

vkattn_result vka_ref_check_dtypes(const char *fn, const vkattn_dtype *types,
                                   const char *const *names, int n)
{
    for (int i = 0; i < n; i++) {
        vkattn_result r = vka_ref_check_dtype(fn, names[i], types[i]);
        if (r)
            return r;
    }
    return VKATTN_SUCCESS;
}

size_t vka_ref_dtype_size(vkattn_dtype t) { return t == VKATTN_DTYPE_F16 ? 2 : 4; }
