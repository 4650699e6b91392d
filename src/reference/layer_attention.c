/* keras.layers.Attention: its CPU reference, composed from the matmul,
 * additive, softmax and dropout references (desc rules in shape/layer_desc.c). */
#include "reference/layer_ref.h"

#include <stdlib.h>

#include "reference/ref_internal.h"
#include "vkattn/reference.h"

/* Multiplies n scores by a literal factor; used where the op's "0 = default"
 * convention cannot express a factor of exactly 0. */
static void scale_scores(float *s, size_t n, float factor)
{
    for (size_t i = 0; i < n; i++)
        s[i] *= factor;
}

static vkattn_result scores_dot(const vkattn_attention_desc *d, const vkattn_attention_weights *wt,
                                const vkattn_layer_call *call, const float *q, const float *k,
                                float *s)
{
    const float alpha = d->use_scale ? wt->scale : 1.0f;
    const vkattn_matmul_params mp = {
        .batch = call->batch, .m = call->tq, .n = call->tv, .k = d->query_width,
        .transpose_b = true, .alpha = alpha != 0.0f ? alpha : 1.0f,
        .a = {.batch_stride = (uint64_t)call->tq * d->query_width},
        .b = {.batch_stride = (uint64_t)call->tv * d->query_width},
    };
    vkattn_result r = vkattn_reference_matmul(&mp, NULL, q, k, NULL, s);
    if (r == VKATTN_SUCCESS && alpha == 0.0f)
        scale_scores(s, (size_t)call->batch * call->tq * call->tv, 0.0f);
    return r;
}

static vkattn_result scores_concat(const vkattn_attention_desc *d,
                                   const vkattn_attention_weights *wt,
                                   const vkattn_layer_call *call, const float *q, const float *k,
                                   float *s)
{
    const float inner = d->use_scale ? wt->scale : 1.0f, outer = wt->concat_score_weight;
    const vkattn_additive_params ap = {
        .batch = call->batch, .tq = call->tq, .tv = call->tv, .dim = d->query_width,
        .inner_scale = inner != 0.0f ? inner : 1.0f,
        .outer_scale = outer != 0.0f ? outer : 1.0f,
    };
    vkattn_result r = vkattn_reference_additive(&ap, NULL, q, k, NULL, s);
    if (r == VKATTN_SUCCESS && (inner == 0.0f || outer == 0.0f))
        scale_scores(s, (size_t)call->batch * call->tq * call->tv, 0.0f);
    return r;
}

vkattn_result vka_ref_attention_check(const char *fn, const vkattn_attention_desc *desc,
                                      const vkattn_attention_weights *w, vka_layer_widths *wd)
{
    vkattn_result r;
    if ((r = vka_attention_check_desc(NULL, fn, desc, wd)) ||
        (r = vka_ref_require_ptr(fn, "w", w)) ||
        (r = vka_layer_check_scalar(NULL, fn, "w->scale", w->scale)))
        return r;
    return vka_layer_check_scalar(NULL, fn, "w->concat_score_weight", w->concat_score_weight);
}

vkattn_result vkattn_reference_attention(const vkattn_attention_desc *desc,
                                         const vkattn_attention_weights *w,
                                         const vkattn_layer_call *call,
                                         const vkattn_layer_host_io *io)
{
    vka_layer_widths wd;
    vkattn_result r;
    float *s;
    if ((r = vka_ref_attention_check(__func__, desc, w, &wd)) ||
        (r = vka_ref_layer_start(__func__, call, io, &wd, &s)))
        return r;
    const float *key = io->key ? io->key : io->value;
    r = desc->score_mode == VKATTN_SCORE_DOT ? scores_dot(desc, w, call, io->query, key, s)
                                             : scores_concat(desc, w, call, io->query, key, s);
    if (r == VKATTN_SUCCESS)
        r = vka_ref_layer_finish(__func__, call, io, &wd, desc->dropout, s);
    free(s);
    return r;
}
