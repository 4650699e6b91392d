/* Argument and size checks shared by the CPU reference ops. Each failure names
 * the function and the offending argument, as every vkattn failure does. */
#include "reference/ref_internal.h"

#include <math.h>
#include <stdlib.h>

#include "core/check.h"
#include "core/error.h"
#include "core/shape_text.h"

vkattn_result vka_ref_require_dim(const char *fn, const char *name, uint32_t v)
{
    if (v == 0)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is 0; must be >= 1", fn,
                        name);
    return VKATTN_SUCCESS;
}

vkattn_result vka_ref_require_ptr(const char *fn, const char *name, const void *p)
{
    if (!p)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, name);
    return VKATTN_SUCCESS;
}

vkattn_result vka_ref_require_flagged(const char *fn, const char *name, const char *flag,
                                      bool set, const void *p)
{
    if (set && !p)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL but %s is set", fn,
                        name, flag);
    return VKATTN_SUCCESS;
}

vkattn_result vka_ref_require_finite(const char *fn, const char *name, float v)
{
    if (!isfinite(v))
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is %g; must be finite", fn,
                        name, (double)v);
    return VKATTN_SUCCESS;
}

vkattn_result vka_ref_count(const char *fn, const char *what, const uint64_t *dims, int n,
                            size_t *out)
{
    uint64_t total;
    /* Callers index with size_t and the arrays are f32, so the byte size must
     * fit too, not just the element count. */
    if (!vka_product_u64(dims, n, &total) || total > SIZE_MAX / sizeof(float)) {
        char shape[160];
        vka_dims_text(dims, n, shape, sizeof shape);
        return vka_fail(NULL, VKATTN_ERROR_SIZE_OVERFLOW,
                        "%s: %s = %s elements overflows the address space", fn, what,
                        shape);
    }
    if (out)
        *out = (size_t)total;
    return VKATTN_SUCCESS;
}

double vka_ref_attention_scale(float scale, uint32_t dk)
{
    return scale != 0.0f ? (double)scale : 1.0 / sqrt((double)dk);
}

vkattn_result vka_ref_alloc_row(const char *fn, uint32_t tv, double **row,
                                unsigned char **allowed)
{
    const size_t per = sizeof(double) + 1;
    if ((uint64_t)tv > SIZE_MAX / per)
        return vka_fail(NULL, VKATTN_ERROR_SIZE_OVERFLOW,
                        "%s: a row of tv = %u logits overflows the address space", fn, tv);
    double *mem = malloc((size_t)tv * per);
    if (!mem)
        return vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY,
                        "%s: could not allocate a row of %u logits", fn, tv);
    *row = mem;
    *allowed = (unsigned char *)(mem + tv);
    return VKATTN_SUCCESS;
}

vkattn_result vka_ref_sdpa_plan(const char *fn, const vkattn_sdpa_params *p, size_t elt_size,
                                vka_sdpa_shape *s)
{
    vkattn_result r = vka_sdpa_plan(NULL, fn, p, s);
    if (r != VKATTN_SUCCESS)
        return r;
    const uint64_t largest[] = {s->q, s->k, s->v, s->out, s->scores, s->bias, s->mask};
    for (size_t i = 0; i < sizeof largest / sizeof largest[0]; i++)
        if (largest[i] > SIZE_MAX / elt_size)
            return vka_fail(NULL, VKATTN_ERROR_SIZE_OVERFLOW,
                            "%s: an operand of %llu elements overflows the address space", fn,
                            (unsigned long long)largest[i]);
    return VKATTN_SUCCESS;
}
