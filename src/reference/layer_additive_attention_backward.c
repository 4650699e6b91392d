/* keras.layers.AdditiveAttention: the CPU reference backward
 * (vkattn/reference_backward.h). Scores recomputed in double,
 *   s_ij = sum_d w_d tanh(q_id + k_jd)   (w = the scale vector, or 1 with no_scale)
 * (the additive op's scores, vka_grad_tanh_scores), then the shared
 * single-head tail gives dL/ds and the value's gradient; ds_ij sends
 * w_d (1 - t^2) ds_ij to q_id and k_jd and t ds_ij to w_d. */
#include "reference/layer_grad.h"

#include <stdlib.h>

#include "core/error.h"

static const char fn[] = "vkattn_reference_additive_attention_backward";

vkattn_result vkattn_reference_additive_attention_backward(
    const vkattn_additive_attention_desc *desc, const vkattn_additive_attention_weights *w,
    const vkattn_layer_call *call, const vkattn_layer_host_io *io, const float *grad_output,
    const vkattn_layer_host_grads *grads, vkattn_additive_attention_weights *grad_w)
{
    vka_layer_widths wd;
    vkattn_result r;
    if ((r = vka_ref_additive_attention_check(fn, desc, w, &wd)))
        return r;
    if (desc->no_scale && grad_w && grad_w->scale)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: grad_w->scale is given but desc->no_scale is true (no scale weight)",
                        fn);
    const float *scale = desc->no_scale ? NULL : w->scale;
    const vka_grad_span wspan = {"w->scale", scale, wd.dq};
    const vka_grad_span gspan = {"grad_w->scale", grad_w ? grad_w->scale : NULL, wd.dq};
    if ((r = vka_grad_single_check(fn, call, io, &wd, grad_output, grads, &wspan, 1, &gspan, 1)))
        return r;
    const vka_grad_score_dims z = {call->batch, call->tq, call->tv, wd.dq};
    const float *key = io->key ? io->key : io->value;
    double *s = NULL, *ds = NULL, *dq = NULL, *dk = NULL, *dv = NULL, *dscale = NULL;
    if ((r = vka_grad_alloc(fn, "the scores", z.batch * z.tq * z.tv, &s)) ||
        (r = vka_grad_alloc(fn, "the score gradient", z.batch * z.tq * z.tv, &ds)) ||
        (r = vka_grad_alloc(fn, "the query gradient", z.batch * z.tq * z.d, &dq)) ||
        (r = vka_grad_alloc(fn, "the key gradient", z.batch * z.tv * z.d, &dk)) ||
        (r = vka_grad_alloc(fn, "the value gradient", z.batch * z.tv * wd.dv, &dv)) ||
        (r = vka_grad_alloc(fn, "the scale gradient", z.d, &dscale)))
        goto done;
    vka_grad_tanh_scores(&z, io->query, key, scale, 1.0, 1.0, s);
    if ((r = vka_grad_single_tail(fn, call, io, &wd, desc->dropout, s, grad_output, ds, dv)))
        goto done;
    vka_grad_tanh_scores_backward(&z, io->query, key, scale, 1.0, 1.0, ds, dq, dk, dscale, NULL,
                                  NULL);
    vka_grad_single_store(call, io, &wd, grads, dq, dk, dv);
    if (grad_w)
        vka_grad_store(dscale, z.d, grad_w->scale);
done:
    free(s), free(ds), free(dq), free(dk), free(dv), free(dscale);
    return r;
}
