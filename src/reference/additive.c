/* CPU reference of additive (tanh) scoring, double accumulation. */
#include "vkattn/reference.h"

#include <math.h>

#include "core/check.h"
#include "core/error.h"
#include "reference/ref_internal.h"
#include "reference/typed_io.h"

vkattn_result vka_ref_additive_check(const char *fn, const vkattn_additive_params *p,
                                     const void *q, const void *k, const void *scale_vec,
                                     const void *scores, const char *scores_name)
{
    vkattn_result r;
    if ((r = vka_ref_require_ptr(fn, "p", p)))
        return r;
    if ((r = vka_ref_require_dim(fn, "batch", p->batch)) ||
        (r = vka_ref_require_dim(fn, "tq", p->tq)) || (r = vka_ref_require_dim(fn, "tv", p->tv)) ||
        (r = vka_ref_require_dim(fn, "dim", p->dim)) ||
        (r = vka_ref_require_finite(fn, "inner_scale", p->inner_scale)) ||
        (r = vka_ref_require_finite(fn, "outer_scale", p->outer_scale)) ||
        (r = vka_ref_require_ptr(fn, "q", q)) || (r = vka_ref_require_ptr(fn, "k", k)) ||
        (r = vka_ref_require_ptr(fn, scores_name, scores)))
        return r;
    if ((r = vka_ref_require_flagged(fn, "scale_vec", "has_scale_vector", p->has_scale_vector,
                                     scale_vec)))
        return r;
    const uint64_t qd[3] = {p->batch, p->tq, p->dim}, kd[3] = {p->batch, p->tv, p->dim};
    const uint64_t sd[3] = {p->batch, p->tq, p->tv};
    if ((r = vka_ref_count(fn, "q (B, Tq, dim)", qd, 3, NULL)) ||
        (r = vka_ref_count(fn, "k (B, Tv, dim)", kd, 3, NULL)) ||
        (r = vka_ref_count(fn, "scores (B, Tq, Tv)", sd, 3, NULL)))
        return r;
    return VKATTN_SUCCESS;
}

static vkattn_result additive_typed(const char *fn, const vkattn_additive_params *p,
                                    const vkattn_additive_dtypes *types, const void *q,
                                    const void *k, const void *scale_vec, void *scores)
{
    const vkattn_additive_dtypes ty = types ? *types : (vkattn_additive_dtypes){0};
    vkattn_result r;
    if ((r = vka_ref_check_dtype(fn, "q", ty.q)) || (r = vka_ref_check_dtype(fn, "k", ty.k)) ||
        (r = vka_ref_check_dtype(fn, "scale", ty.scale)) ||
        (r = vka_ref_check_dtype(fn, "scores", ty.scores)) ||
        (r = vka_ref_additive_check(fn, p, q, k, scale_vec, scores, "scores")))
        return r;
    const double inner = vka_default_f32(p->inner_scale, 1.0f);
    const double outer = vka_default_f32(p->outer_scale, 1.0f);
    const size_t dim = p->dim;
    for (size_t b = 0; b < p->batch; b++)
        for (size_t i = 0; i < p->tq; i++) {
            const size_t qi = (b * p->tq + i) * dim, si = (b * p->tq + i) * p->tv;
            for (size_t j = 0; j < p->tv; j++) {
                const size_t kj = (b * p->tv + j) * dim;
                double s = 0.0;
                for (size_t d = 0; d < dim; d++) {
                    double w = p->has_scale_vector ? vka_ref_load(scale_vec, ty.scale, d) : 1.0;
                    s += w * tanh(inner * (vka_ref_load(q, ty.q, qi + d) +
                                           vka_ref_load(k, ty.k, kj + d)));
                }
                vka_ref_store(scores, ty.scores, si + j, outer * s);
            }
        }
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_reference_additive(const vkattn_additive_params *p,
                                              const vkattn_additive_dtypes *types, const void *q,
                                              const void *k, const void *scale_vec, void *scores)
{
    return additive_typed(__func__, p, types, q, k, scale_vec, scores);
}
