/* keras.layers.AdditiveAttention: its desc rules (shared with the GPU layer)
 * and its CPU reference: additive scores with the per-feature scale vector,
 * then the common softmax/dropout/W @ V tail. */
#include "reference/layer_ref.h"

#include <stdlib.h>

#include "core/error.h"
#include "vkattn/reference.h"

vkattn_result vka_additive_attention_check_desc(struct vkattn_context *ctx, const char *fn,
                                                const vkattn_additive_attention_desc *d,
                                                vka_layer_widths *w)
{
    if (!d)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: desc is NULL", fn);
    const char *zero = !d->query_width ? "query_width" : !d->value_width ? "value_width" : NULL;
    if (zero)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: desc->%s is 0; must be >= 1",
                        fn, zero);
    *w = (vka_layer_widths){.dq = d->query_width, .dk = d->key_width ? d->key_width : d->value_width,
                            .dv = d->value_width};
    if (w->dk != w->dq)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: desc->key_width is %u%s; must equal desc->query_width (%u): "
                        "AdditiveAttention adds query and key features directly",
                        fn, w->dk, d->key_width ? "" : " (0 = value_width)", w->dq);
    if (!(d->dropout >= 0.0f && d->dropout <= 1.0f))
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: desc->dropout is %g; must be in [0, 1]", fn, (double)d->dropout);
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_reference_additive_attention(const vkattn_additive_attention_desc *desc,
                                                  const vkattn_additive_attention_weights *w,
                                                  const vkattn_layer_call *call,
                                                  const vkattn_layer_host_io *io)
{
    static const char fn[] = "vkattn_reference_additive_attention";
    vka_layer_widths wd;
    vkattn_result r;
    if ((r = vka_additive_attention_check_desc(NULL, fn, desc, &wd)))
        return r;
    if (!w)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: w is NULL", fn);
    if (!desc->no_scale && !w->scale)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: w->scale is NULL but desc->no_scale is false", fn);
    if ((r = vka_layer_check_call(NULL, fn, call)) || (r = vka_ref_layer_check_io(fn, call, io, &wd)))
        return r;
    float *s;
    if ((r = vka_ref_layer_alloc(fn, "the scores", (uint64_t)call->batch * call->tq * call->tv, &s)))
        return r;
    const vkattn_additive_params ap = {
        .batch = call->batch, .tq = call->tq, .tv = call->tv, .dim = wd.dq,
        .has_scale_vector = !desc->no_scale,
    };
    r = vkattn_reference_additive(&ap, io->query, io->key ? io->key : io->value,
                                  desc->no_scale ? NULL : w->scale, s);
    if (r == VKATTN_SUCCESS)
        r = vka_ref_layer_finish(fn, call, io, &wd, desc->dropout, s);
    free(s);
    return r;
}
