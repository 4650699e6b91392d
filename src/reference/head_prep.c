/* QK-norm and the rotary embedding on the references' head tensors
 * (head_prep.h); the arithmetic of a row is reference/rope.c's. */
#include "reference/head_prep.h"

#include <math.h>
#include <stdlib.h>

#include "core/error.h"
#include "reference/rope.h"

static vkattn_result check_one(const char *fn, const vka_mha_dims *d, const char *name,
                               const float *pos, uint64_t count)
{
    if (!pos)
        return VKATTN_SUCCESS;
    if (!d->use_rope)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s is given but desc->use_rope is false (positions only turn the "
                        "rotary embedding)",
                        fn, name);
    for (uint64_t i = 0; i < count; i++)
        if (!(pos[i] >= 0.0f && pos[i] == floorf(pos[i]) && pos[i] <= 3.0e38f))
            return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                            "%s: %s[%llu] is %g; positions are non-negative integers", fn, name,
                            (unsigned long long)i, (double)pos[i]);
    return VKATTN_SUCCESS;
}

vkattn_result vka_ref_mha_check_positions(const char *fn, const vka_mha_dims *d,
                                          const vka_mha_call *c, const vkattn_layer_host_io *io)
{
    vkattn_result r = check_one(fn, d, "io->query_positions", io->query_positions,
                                (uint64_t)c->batch * c->tq);
    return r ? r : check_one(fn, d, "io->key_positions", io->key_positions,
                             (uint64_t)c->batch * c->tv);
}

bool vka_ref_mha_has_head_prep(const vka_mha_dims *d)
{
    return d->use_qk_norm || d->use_rope;
}

static vka_ref_head_prep prep_of(const vka_mha_dims *d, const float *norm_w)
{
    return (vka_ref_head_prep){.dim = d->key_dim, .norm = d->use_qk_norm, .w = norm_w,
                               .eps = d->qk_norm_epsilon, .rope = d->use_rope,
                               .params = d->rope};
}

static double position(const float *positions, uint32_t seq, uint32_t b, uint32_t t)
{
    return positions ? (double)positions[(uint64_t)b * seq + t] : (double)t;
}

void vka_ref_mha_head_prep_f64(const vka_mha_dims *d, const float *norm_w, uint32_t batch,
                               uint32_t heads, uint32_t seq, const float *positions, double *x)
{
    const vka_ref_head_prep hp = prep_of(d, norm_w);
    for (uint32_t b = 0; b < batch; b++)
        for (uint32_t h = 0; h < heads; h++)
            for (uint32_t t = 0; t < seq; t++) {
                double *row = x + (((uint64_t)b * heads + h) * seq + t) * d->key_dim;
                vka_ref_head_prep_row(&hp, position(positions, seq, b, t), row, row);
            }
}

vkattn_result vka_ref_mha_head_prep_f32(const char *fn, const vka_mha_dims *d,
                                        const float *norm_w, uint32_t batch, uint32_t heads,
                                        uint32_t seq, const float *positions, float *x)
{
    const vka_ref_head_prep hp = prep_of(d, norm_w);
    double *row = malloc(d->key_dim * sizeof *row);
    if (!row)
        return vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    for (uint32_t b = 0; b < batch; b++)
        for (uint32_t h = 0; h < heads; h++)
            for (uint32_t t = 0; t < seq; t++) {
                float *xr = x + (((uint64_t)b * heads + h) * seq + t) * d->key_dim;
                for (uint32_t e = 0; e < d->key_dim; e++)
                    row[e] = xr[e];
                vka_ref_head_prep_row(&hp, position(positions, seq, b, t), row, row);
                for (uint32_t e = 0; e < d->key_dim; e++)
                    xr[e] = (float)row[e];
            }
    free(row);
    return VKATTN_SUCCESS;
}

void vka_ref_mha_head_prep_backward_f64(const vka_mha_dims *d, const float *norm_w,
                                        uint32_t batch, uint32_t heads, uint32_t seq,
                                        const float *positions, const double *x, double *dx,
                                        double *dw)
{
    const vka_ref_head_prep hp = prep_of(d, norm_w);
    for (uint32_t b = 0; b < batch; b++)
        for (uint32_t h = 0; h < heads; h++)
            for (uint32_t t = 0; t < seq; t++) {
                const uint64_t o = (((uint64_t)b * heads + h) * seq + t) * d->key_dim;
                vka_ref_head_prep_row_backward(&hp, position(positions, seq, b, t), x + o,
                                               dx + o, dx + o, dw);
            }
}
