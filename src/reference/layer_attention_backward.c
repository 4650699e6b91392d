/* keras.layers.Attention: the CPU reference backward (vkattn/reference_backward.h).
 * The forward's scores are recomputed in double,
 *   dot:    s_ij = a * q_i . k_j
 *   concat: s_ij = c * sum_d tanh(a * (q_id + k_jd))   (the additive op's, vka_grad_tanh_scores)
 * (a = scale if use_scale else 1, c = concat_score_weight), then the shared
 * single-head tail gives dL/ds and the value's gradient, and each score's
 * derivative sends dL/ds back to q, k, a and c. */
#include "reference/layer_grad.h"

#include <stdlib.h>

static const char fn[] = "vkattn_reference_attention_backward";

/* dot mode: s_ij = a * q_i . k_j */
static void dot_scores(double a, const vka_grad_score_dims *z, const float *q, const float *k,
                       double *s)
{
    for (size_t b = 0; b < z->batch; b++)
        for (size_t i = 0; i < z->tq; i++)
            for (size_t j = 0; j < z->tv; j++) {
                const float *qi = q + (b * z->tq + i) * z->d, *kj = k + (b * z->tv + j) * z->d;
                double acc = 0.0;
                for (size_t e = 0; e < z->d; e++)
                    acc += (double)qi[e] * kj[e];
                s[(b * z->tq + i) * z->tv + j] = a * acc;
            }
}

/* dq, dk and *da += the derivatives of the dot scores against ds. */
static void dot_scores_backward(double a, const vka_grad_score_dims *z, const float *q,
                                const float *k, const double *ds, double *dq, double *dk,
                                double *da)
{
    for (size_t b = 0; b < z->batch; b++)
        for (size_t i = 0; i < z->tq; i++)
            for (size_t j = 0; j < z->tv; j++) {
                const double g = ds[(b * z->tq + i) * z->tv + j];
                if (g == 0.0)
                    continue;
                const size_t qo = (b * z->tq + i) * z->d, ko = (b * z->tv + j) * z->d;
                for (size_t e = 0; e < z->d; e++) {
                    const double qe = q[qo + e], ke = k[ko + e];
                    dq[qo + e] += g * a * ke;
                    dk[ko + e] += g * a * qe;
                    *da += g * qe * ke;
                }
            }
}

vkattn_result vkattn_reference_attention_backward(const vkattn_attention_desc *desc,
                                                  const vkattn_attention_weights *w,
                                                  const vkattn_layer_call *call,
                                                  const vkattn_layer_host_io *io,
                                                  const float *grad_output,
                                                  const vkattn_layer_host_grads *grads,
                                                  vkattn_attention_weights *grad_w)
{
    vka_layer_widths wd;
    vkattn_result r;
    if ((r = vka_ref_attention_check(fn, desc, w, &wd)) ||
        (r = vka_grad_require_own_grads(fn, w, grad_w)) ||
        (r = vka_grad_single_check(fn, call, io, &wd, grad_output, grads, NULL, 0, NULL, 0)))
        return r;
    const vka_grad_score_dims z = {call->batch, call->tq, call->tv, wd.dq};
    const double a = desc->use_scale ? w->scale : 1.0, c = w->concat_score_weight;
    const float *key = io->key ? io->key : io->value;
    double *s = NULL, *ds = NULL, *dq = NULL, *dk = NULL, *dv = NULL;
    if ((r = vka_grad_alloc(fn, "the scores", z.batch * z.tq * z.tv, &s)) ||
        (r = vka_grad_alloc(fn, "the score gradient", z.batch * z.tq * z.tv, &ds)) ||
        (r = vka_grad_alloc(fn, "the query gradient", z.batch * z.tq * z.d, &dq)) ||
        (r = vka_grad_alloc(fn, "the key gradient", z.batch * z.tv * z.d, &dk)) ||
        (r = vka_grad_alloc(fn, "the value gradient", z.batch * z.tv * wd.dv, &dv)))
        goto done;
    const bool dot = desc->score_mode == VKATTN_SCORE_DOT;
    if (dot)
        dot_scores(a, &z, io->query, key, s);
    else
        vka_grad_tanh_scores(&z, io->query, key, NULL, a, c, s);
    if ((r = vka_grad_single_tail(fn, call, io, &wd, desc->dropout, s, grad_output, ds, dv)))
        goto done;
    double da = 0.0, dc = 0.0;
    if (dot)
        dot_scores_backward(a, &z, io->query, key, ds, dq, dk, &da);
    else
        vka_grad_tanh_scores_backward(&z, io->query, key, NULL, a, c, ds, dq, dk, NULL, &da, &dc);
    vka_grad_single_store(call, io, &wd, grads, dq, dk, dv);
    if (grad_w) {
        grad_w->scale = desc->use_scale ? (float)da : 0.0f;
        grad_w->concat_score_weight = desc->score_mode == VKATTN_SCORE_CONCAT ? (float)dc : 0.0f;
    }
done:
    free(s), free(ds), free(dq), free(dk), free(dv);
    return r;
}
