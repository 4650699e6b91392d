/* The desc rules of the single-head layers (Attention, AdditiveAttention,
 * Bahdanau), shared by the GPU layers and their CPU references. */
#include "shape/layer_shape.h"

#include <stddef.h>

#include "core/dtype.h"
#include "core/error.h"
#include "shape/weight_init.h"

/* desc->dropout in [0, 1] (NaN fails too). */
static vkattn_result check_dropout(struct vkattn_context *ctx, const char *fn, float rate)
{
    if (!(rate >= 0.0f && rate <= 1.0f))
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: desc->dropout is %g; must be in [0, 1]", fn, (double)rate);
    return VKATTN_SUCCESS;
}

/* The widths of the two layers that compare query and key features directly
 * (Attention, AdditiveAttention): query_width and value_width required,
 * key_width 0 = value_width, and key_width must equal query_width. */
static vkattn_result check_same_width(struct vkattn_context *ctx, const char *fn,
                                      const char *layer, const char *how, uint32_t query_width,
                                      uint32_t key_width, uint32_t value_width,
                                      vka_layer_widths *w)
{
    const char *zero = !query_width ? "query_width" : !value_width ? "value_width" : NULL;
    if (zero)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: desc->%s is 0; must be >= 1",
                        fn, zero);
    *w = (vka_layer_widths){.dq = query_width, .dk = key_width ? key_width : value_width,
                            .dv = value_width};
    if (w->dk != w->dq)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: desc->key_width is %u%s; must equal desc->query_width (%u): %s "
                        "%s query and key features directly",
                        fn, w->dk, key_width ? "" : " (0 = value_width)", w->dq, layer, how);
    return VKATTN_SUCCESS;
}

vkattn_result vka_attention_check_desc(struct vkattn_context *ctx, const char *fn,
                                       const vkattn_attention_desc *d, vka_layer_widths *w)
{
    if (!d)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: desc is NULL", fn);
    vkattn_result r = check_same_width(ctx, fn, "Attention", "compares", d->query_width,
                                       d->key_width, d->value_width, w);
    if (r != VKATTN_SUCCESS)
        return r;
    if (d->score_mode != VKATTN_SCORE_DOT && d->score_mode != VKATTN_SCORE_CONCAT)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: desc->score_mode is %d; must be VKATTN_SCORE_DOT or "
                        "VKATTN_SCORE_CONCAT",
                        fn, (int)d->score_mode);
    r = check_dropout(ctx, fn, d->dropout);
    return r != VKATTN_SUCCESS ? r : vka_dtype_check_desc(ctx, fn, d->dtype, VKA_DTYPE_USE_LAYER);
}

vkattn_result vka_additive_attention_check_desc(struct vkattn_context *ctx, const char *fn,
                                                const vkattn_additive_attention_desc *d,
                                                vka_layer_widths *w)
{
    if (!d)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: desc is NULL", fn);
    vkattn_result r = check_same_width(ctx, fn, "AdditiveAttention", "adds", d->query_width,
                                       d->key_width, d->value_width, w);
    if (r == VKATTN_SUCCESS)
        r = check_dropout(ctx, fn, d->dropout);
    if (r == VKATTN_SUCCESS)
        r = vka_check_initializer(ctx, fn, "desc->scale_initializer", d->scale_initializer);
    return r != VKATTN_SUCCESS ? r : vka_dtype_check_desc(ctx, fn, d->dtype, VKA_DTYPE_USE_LAYER);
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
    *w = (vka_layer_widths){.dq = d->query_width, .dk = d->key_width ? d->key_width : d->value_width,
                            .dv = d->value_width, .units = d->units};
    vkattn_result r = check_dropout(ctx, fn, d->dropout);
    if (r == VKATTN_SUCCESS &&
        (r = vka_check_initializer(ctx, fn, "desc->kernel_initializer", d->kernel_initializer)) ==
            VKATTN_SUCCESS)
        r = vka_check_initializer(ctx, fn, "desc->bias_initializer", d->bias_initializer);
    return r != VKATTN_SUCCESS ? r : vka_dtype_check_desc(ctx, fn, d->dtype, VKA_DTYPE_USE_LAYER);
}
