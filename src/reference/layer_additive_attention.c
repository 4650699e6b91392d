/* keras.layers.AdditiveAttention: its CPU reference (desc rules in
 * shape/layer_desc.c): additive scores with the per-feature scale vector,
 * then the common softmax/dropout/W @ V tail. */
#include "reference/layer_ref.h"

#include <stdlib.h>

#include "core/error.h"
#include "reference/ref_internal.h"
#include "vkattn/reference.h"

vkattn_result vka_ref_additive_attention_check(const char *fn,
                                               const vkattn_additive_attention_desc *desc,
                                               const vkattn_additive_attention_weights *w,
                                               vka_layer_widths *wd)
{
    vkattn_result r;
    if ((r = vka_additive_attention_check_desc(NULL, fn, desc, wd)) ||
        (r = vka_ref_require_ptr(fn, "w", w)))
        return r;
    if (!desc->no_scale && !w->scale)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: w->scale is NULL but desc->no_scale is false", fn);
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_reference_additive_attention(const vkattn_additive_attention_desc *desc,
                                                  const vkattn_additive_attention_weights *w,
                                                  const vkattn_layer_call *call,
                                                  const vkattn_layer_host_io *io)
{
    vka_layer_widths wd;
    vkattn_result r;
    float *s;
    if ((r = vka_ref_additive_attention_check(__func__, desc, w, &wd)) ||
        (r = vka_ref_layer_start(__func__, call, io, &wd, &s)))
        return r;
    const vkattn_additive_params ap = {
        .batch = call->batch, .tq = call->tq, .tv = call->tv, .dim = wd.dq,
        .has_scale_vector = !desc->no_scale,
    };
    r = vkattn_reference_additive(&ap, NULL, io->query, io->key ? io->key : io->value,
                                  desc->no_scale ? NULL : w->scale, s);
    if (r == VKATTN_SUCCESS)
        r = vka_ref_layer_finish(__func__, call, io, &wd, desc->dropout, s);
    free(s);
    return r;
}
