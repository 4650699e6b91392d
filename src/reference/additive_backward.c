/* CPU reference of the gradients of additive (tanh) scoring, double
 * accumulation. */
#include "vkattn/reference_backward.h"

#include <math.h>

#include "core/check.h"
#include "core/error.h"
#include "reference/ref_internal.h"

static const char fn[] = "vkattn_reference_additive_backward";

static vkattn_result check(const vkattn_additive_params *p, const float *q, const float *k,
                           const float *scale_vec, const float *grad_scores, const float *grad_q,
                           const float *grad_k, const float *grad_scale)
{
    vkattn_result r;
    if ((r = vka_ref_additive_check(fn, p, q, k, scale_vec, grad_scores, "grad_scores")))
        return r;
    if (grad_scale && !p->has_scale_vector)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: grad_scale is given but has_scale_vector is false", fn);
    const void *ins[] = {q, k, scale_vec, grad_scores};
    const void *outs[] = {grad_q, grad_k, grad_scale};
    for (int i = 0; i < 3; i++) {
        if (!outs[i])
            continue;
        for (int j = 0; j < 4; j++)
            if (outs[i] == ins[j] || (j < 3 && j > i && outs[i] == outs[j]))
                return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                                "%s: a gradient array must not be an input or another gradient",
                                fn);
    }
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_reference_additive_backward(const vkattn_additive_params *p, const float *q,
                                                 const float *k, const float *scale_vec,
                                                 const float *grad_scores, float *grad_q,
                                                 float *grad_k, float *grad_scale)
{
    vkattn_result r;
    if ((r = check(p, q, k, scale_vec, grad_scores, grad_q, grad_k, grad_scale)))
        return r;
    const double inner = vka_default_f32(p->inner_scale, 1.0f);
    const double outer = vka_default_f32(p->outer_scale, 1.0f);
    const size_t B = p->batch, tq = p->tq, tv = p->tv, dim = p->dim;
    for (size_t d = 0; d < dim; d++) {
        const double s = p->has_scale_vector ? scale_vec[d] : 1.0;
        double ds = 0.0;
        for (size_t b = 0; b < B; b++) {
            /* dq: each query row against every key */
            for (size_t i = 0; i < tq; i++) {
                double gq = 0.0;
                for (size_t j = 0; j < tv; j++) {
                    const double t = tanh(inner * ((double)q[(b * tq + i) * dim + d] +
                                                   (double)k[(b * tv + j) * dim + d]));
                    const double g = grad_scores[(b * tq + i) * tv + j];
                    gq += g * (1.0 - t * t);
                    ds += g * t;
                }
                if (grad_q)
                    grad_q[(b * tq + i) * dim + d] = (float)(outer * inner * s * gq);
            }
            for (size_t j = 0; grad_k && j < tv; j++) {
                double gk = 0.0;
                for (size_t i = 0; i < tq; i++) {
                    const double t = tanh(inner * ((double)q[(b * tq + i) * dim + d] +
                                                   (double)k[(b * tv + j) * dim + d]));
                    gk += grad_scores[(b * tq + i) * tv + j] * (1.0 - t * t);
                }
                grad_k[(b * tv + j) * dim + d] = (float)(outer * inner * s * gk);
            }
        }
        if (grad_scale)
            grad_scale[d] = (float)(outer * ds);
    }
    return VKATTN_SUCCESS;
}
