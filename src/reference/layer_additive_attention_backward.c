/* keras.layers.AdditiveAttention: the CPU reference backward
 * (vkattn/reference_backward.h). Scores recomputed in double,
 *   s_ij = sum_d w_d tanh(q_id + k_jd)   (w = the scale vector, or 1 with no_scale)
 * then the shared single-head tail gives dL/ds and the value's gradient;
 * ds_ij sends w_d (1 - t^2) ds_ij to q_id and k_jd and t ds_ij to w_d. */
#include "reference/layer_grad.h"

#include <math.h>
#include <stdlib.h>

#include "core/error.h"

static const char fn[] = "vkattn_reference_additive_attention_backward";

typedef struct dims {
    size_t batch, tq, tv, d;
} dims;

static void scores(const dims *z, const float *q, const float *k, const float *scale, double *s)
{
    for (size_t b = 0; b < z->batch; b++)
        for (size_t i = 0; i < z->tq; i++)
            for (size_t j = 0; j < z->tv; j++) {
                const float *qi = q + (b * z->tq + i) * z->d, *kj = k + (b * z->tv + j) * z->d;
                double acc = 0.0;
                for (size_t e = 0; e < z->d; e++)
                    acc += (scale ? (double)scale[e] : 1.0) * tanh((double)qi[e] + kj[e]);
                s[(b * z->tq + i) * z->tv + j] = acc;
            }
}

static void scores_backward(const dims *z, const float *q, const float *k, const float *scale,
                            const double *ds, double *dq, double *dk, double *dscale)
{
    for (size_t b = 0; b < z->batch; b++)
        for (size_t i = 0; i < z->tq; i++)
            for (size_t j = 0; j < z->tv; j++) {
                const double g = ds[(b * z->tq + i) * z->tv + j];
                if (g == 0.0)
                    continue;
                const size_t qo = (b * z->tq + i) * z->d, ko = (b * z->tv + j) * z->d;
                for (size_t e = 0; e < z->d; e++) {
                    const double t = tanh((double)q[qo + e] + k[ko + e]);
                    const double gt = g * (scale ? (double)scale[e] : 1.0) * (1.0 - t * t);
                    dq[qo + e] += gt;
                    dk[ko + e] += gt;
                    dscale[e] += g * t;
                }
            }
}

vkattn_result vkattn_reference_additive_attention_backward(
    const vkattn_additive_attention_desc *desc, const vkattn_additive_attention_weights *w,
    const vkattn_layer_call *call, const vkattn_layer_host_io *io, const float *grad_output,
    const vkattn_layer_host_grads *grads, vkattn_additive_attention_weights *grad_w)
{
    vka_layer_widths wd;
    vkattn_result r;
    if ((r = vka_additive_attention_check_desc(NULL, fn, desc, &wd)) ||
        (r = vka_ref_require_ptr(fn, "w", w)))
        return r;
    if (!desc->no_scale && !w->scale)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: w->scale is NULL but desc->no_scale is false", fn);
    if (desc->no_scale && grad_w && grad_w->scale)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: grad_w->scale is given but desc->no_scale is true (no scale weight)",
                        fn);
    const float *scale = desc->no_scale ? NULL : w->scale;
    const vka_grad_span wspan = {"w->scale", scale, wd.dq};
    const vka_grad_span gspan = {"grad_w->scale", grad_w ? grad_w->scale : NULL, wd.dq};
    if ((r = vka_grad_single_check(fn, call, io, &wd, grad_output, grads, &wspan, 1, &gspan, 1)))
        return r;
    const dims z = {call->batch, call->tq, call->tv, wd.dq};
    const float *key = io->key ? io->key : io->value;
    double *s = NULL, *ds = NULL, *dq = NULL, *dk = NULL, *dv = NULL, *dscale = NULL;
    if ((r = vka_grad_alloc(fn, "the scores", z.batch * z.tq * z.tv, &s)) ||
        (r = vka_grad_alloc(fn, "the score gradient", z.batch * z.tq * z.tv, &ds)) ||
        (r = vka_grad_alloc(fn, "the query gradient", z.batch * z.tq * z.d, &dq)) ||
        (r = vka_grad_alloc(fn, "the key gradient", z.batch * z.tv * z.d, &dk)) ||
        (r = vka_grad_alloc(fn, "the value gradient", z.batch * z.tv * wd.dv, &dv)) ||
        (r = vka_grad_alloc(fn, "the scale gradient", z.d, &dscale)))
        goto done;
    scores(&z, io->query, key, scale, s);
    if ((r = vka_grad_single_tail(fn, call, io, &wd, desc->dropout, s, grad_output, ds, dv)))
        goto done;
    scores_backward(&z, io->query, key, scale, ds, dq, dk, dscale);
    vka_grad_single_store(call, io, &wd, grads, dq, dk, dv);
    if (grad_w)
        vka_grad_store(dscale, z.d, grad_w->scale);
done:
    free(s), free(ds), free(dq), free(dk), free(dv), free(dscale);
    return r;
}
