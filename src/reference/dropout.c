/* CPU reference of inverted dropout on a (B, H, Tq, Tv) tensor, drawing from
 * the Philox stream of vkattn/philox.h. Exact: the GPU op must match bit for bit. */
#include "vkattn/reference.h"
#include "vkattn/reference_backward.h"

#include <string.h>

#include "core/check.h"
#include "core/dtype.h"
#include "core/error.h"
#include "reference/ref_internal.h"
#include "reference/typed_io.h"
#include "shape/dropout_plan.h"
#include "vkattn/philox.h"

/* The op's plan (shape/dropout_plan.h: the same params refused with the
 * same messages), then the arrays and the host's address space. */
static vkattn_result check(const char *fn, const vkattn_dropout_op_params *p, const void *in,
                           const void *out, vka_dropout_shape *s, size_t *n)
{
    vkattn_result r = vka_dropout_plan(NULL, fn, p, s);
    if (r != VKATTN_SUCCESS || (r = vka_ref_require_ptr(fn, "in", in)) ||
        (r = vka_ref_require_ptr(fn, "out", out)))
        return r;
    const uint64_t dims[4] = {p->batch, s->heads, p->tq, p->tv};
    return vka_ref_count(fn, "the tensor (B, H, Tq, Tv)", dims, 4, n);
}

/* keep[idx] = 1 where element idx, in (b, h, i, j) order, is kept, else 0. */
static void fill_keep(const vkattn_dropout_op_params *p, const vka_dropout_shape *s,
                      uint8_t *keep)
{
    const vkattn_dropout_params *d = &p->dropout;
    const uint32_t heads = s->heads;
    size_t idx = 0;
    for (uint32_t b = 0; b < p->batch; b++)
        for (uint32_t h = 0; h < heads; h++)
            for (uint32_t i = 0; i < p->tq; i++)
                for (uint32_t j = 0; j < p->tv; j++)
                    keep[idx++] = vkattn_dropout_keep(d->seed, d->offset, s->threshold,
                                                      b * heads + h, i, j);
}

vkattn_result vkattn_reference_dropout_mask(const vkattn_dropout_op_params *p, uint8_t *keep)
{
    vka_dropout_shape s;
    size_t n;
    vkattn_result r = check(__func__, p, keep, keep, &s, &n);
    if (r)
        return r;
    if (s.active)
        fill_keep(p, &s, keep);
    else
        memset(keep, 1, n);
    return VKATTN_SUCCESS;
}

static vkattn_result dropout_typed(const char *fn, const vkattn_dropout_op_params *p,
                                   const vkattn_io_dtypes *types, const void *in, void *out)
{
    const vkattn_io_dtypes ty = types ? *types : (vkattn_io_dtypes){0};
    vka_dropout_shape s;
    size_t n;
    vkattn_result r;
    if ((r = vka_ref_check_dtype(fn, "in", ty.in)) || (r = vka_ref_check_dtype(fn, "out", ty.out)))
        return r;
    if ((r = check(fn, p, in, out, &s, &n)))
        return r;
    if (in == out && ty.in != ty.out)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: in and out are the same array but types->in is %s and types->out %s",
                        fn, vka_dtype_name(ty.in), vka_dtype_name(ty.out));
    const bool active = s.active;
    const vkattn_dropout_params *d = &p->dropout;
    const uint32_t heads = s.heads, threshold = s.threshold;
    /* One f32 multiply by the f32 scale: what a shader does, so results are
     * exact; an f16 out gets that f32 product rounded once. */
    const float scale = s.scale;
    size_t idx = 0;
    for (uint32_t b = 0; b < p->batch; b++)
        for (uint32_t h = 0; h < heads; h++)
            for (uint32_t i = 0; i < p->tq; i++)
                for (uint32_t j = 0; j < p->tv; j++, idx++) {
                    const float x = (float)vka_ref_load(in, ty.in, idx);
                    float y = x;
                    if (active)
                        y = vkattn_dropout_keep(d->seed, d->offset, threshold, b * heads + h, i, j)
                                ? x * scale
                                : 0.0f;
                    vka_ref_store(out, ty.out, idx, y);
                }
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_reference_dropout(const vkattn_dropout_op_params *p,
                                             const vkattn_io_dtypes *types, const void *in,
                                             void *out)
{
    return dropout_typed(__func__, p, types, in, out);
}
