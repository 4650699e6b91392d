#include "shape/additive_shape.h"

#include <math.h>

#include "core/check.h"
#include "core/error.h"

/* *out = a * b * c elements, checked to fit 64 bits and 32-bit indexing. */
static vkattn_result count3(struct vkattn_context *ctx, const char *caller, const char *what,
                            uint32_t a, uint32_t b, uint32_t c, uint64_t *out)
{
    const uint64_t dims[3] = {a, b, c};
    if (!vka_product_u64(dims, 3, out))
        return vka_fail(ctx, VKATTN_ERROR_SIZE_OVERFLOW, "%s: the size of %s overflows", caller,
                        what);
    if (*out > UINT32_MAX)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: %s (%llu elements) does not fit the kernel's 32-bit indexing", caller,
                        what, (unsigned long long)*out);
    return VKATTN_SUCCESS;
}

vkattn_result vka_additive_check(struct vkattn_context *ctx, const char *caller,
                                 const vkattn_additive_params *p, vka_additive_sizes *out)
{
    if (!p)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: params is NULL", caller);
    const char *zero = !p->batch ? "batch" : !p->tq ? "tq" : !p->tv ? "tv" : !p->dim ? "dim" : NULL;
    if (zero)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: params->%s is 0; must be >= 1",
                        caller, zero);
    if (!isfinite(p->inner_scale) || !isfinite(p->outer_scale))
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: params->%s is %g; must be finite",
                        caller, isfinite(p->inner_scale) ? "outer_scale" : "inner_scale",
                        isfinite(p->inner_scale) ? p->outer_scale : p->inner_scale);
    vkattn_result r;
    if ((r = count3(ctx, caller, "q (B, Tq, dim)", p->batch, p->tq, p->dim, &out->q)) ||
        (r = count3(ctx, caller, "k (B, Tv, dim)", p->batch, p->tv, p->dim, &out->k)))
        return r;
    return count3(ctx, caller, "scores (B, Tq, Tv)", p->batch, p->tq, p->tv, &out->scores);
}
