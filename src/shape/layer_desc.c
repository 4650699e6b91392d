/* The desc rules of the single-head layers (Attention, AdditiveAttention,
 * Bahdanau), shared by the GPU layers and their CPU references. */
#include "shape/layer_shape.h"

#include <stddef.h>

#include "core/error.h"

vkattn_result vka_attention_check_desc(struct vkattn_context *ctx, const char *fn,
                                       const vkattn_attention_desc *d, vka_layer_widths *w)
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
                        "%s: desc->key_width is %u%s; must equal desc->query_width (%u): Attention "
                        "compares query and key features directly",
                        fn, w->dk, d->key_width ? "" : " (0 = value_width)", w->dq);
    if (d->score_mode != VKATTN_SCORE_DOT && d->score_mode != VKATTN_SCORE_CONCAT)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: desc->score_mode is %d; must be VKATTN_SCORE_DOT or "
                        "VKATTN_SCORE_CONCAT",
                        fn, (int)d->score_mode);
    if (!(d->dropout >= 0.0f && d->dropout <= 1.0f)) /* NaN fails too */
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: desc->dropout is %g; must be in [0, 1]", fn, (double)d->dropout);
    return VKATTN_SUCCESS;
}

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

vkattn_result vka_bahdanau_check_desc(struct vkattn_context *ctx, const char *fn,
                                      const vkattn_bahdanau_desc *d, vka_layer_widths *w)
{
    if (!d)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: desc is NULL", fn);
    const char *zero = !d->query_width ? "query_width"
                       : !d->value_width ? "value_width"
                       : !d->units     ? "units"
                                       : NULL;
    if (zero)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: desc->%s is 0; must be >= 1",
                        fn, zero);
    if (!(d->dropout >= 0.0f && d->dropout <= 1.0f))
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: desc->dropout is %g; must be in [0, 1]", fn, (double)d->dropout);
    *w = (vka_layer_widths){.dq = d->query_width, .dk = d->key_width ? d->key_width : d->value_width,
                            .dv = d->value_width, .units = d->units};
    return VKATTN_SUCCESS;
}
