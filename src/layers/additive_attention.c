/* keras.layers.AdditiveAttention: the additive scoring op with the layer's
 * scale vector, then the tail shared by the single-head layers. */
#include "vkattn/additive_attention.h"

#include <stdlib.h>

#include "core/error.h"
#include "layers/layer_util.h"
#include "layers/layer_weights.h"
#include "layers/single_internal.h"
#include "vkattn/additive.h"
#include "vk/record_mode.h"
#include "vk/view.h"

struct vkattn_additive_attention {
    vkattn_context *ctx;
    vkattn_additive_attention_desc desc;
    vka_layer_widths w;
    vkattn_additive_attention_weight_tensors wt; /* scale NULL with no_scale */
    vka_scratch scratch;  /* the scores when they are not returned */
    vka_scratch mask;     /* an attention mask expanded to a full key axis */
    vka_layer_kept *kept; /* the last forward, for the backward */
};

/* The layer's weights as the table walks them. */
static vka_layer_weights weights_of(const vkattn_additive_attention *layer)
{
    vka_layer_weights lw = vka_single_layer_weights(
        &vka_additive_weight_table, vka_additive_tensor_offsets,
        vka_additive_weight_options(&layer->desc), &layer->w, &layer->wt);
    lw.init = (vka_weight_init){.kernel = layer->desc.scale_initializer,
                                .seed = layer->desc.initializer_seed};
    return lw;
}

vkattn_result vkattn_additive_attention_create(vkattn_context *ctx,
                                               const vkattn_additive_attention_desc *desc,
                                               vkattn_additive_attention **out)
{
    VKA_CREATE_ARGS(ctx, out);
    vka_layer_widths w;
    vkattn_result r = vka_additive_attention_check_desc(ctx, __func__, desc, &w);
    if (r != VKATTN_SUCCESS)
        return r;
    vkattn_additive_attention *layer = calloc(1, sizeof *layer);
    if (!layer)
        return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", __func__);
    *layer = (vkattn_additive_attention){.ctx = ctx, .desc = *desc, .w = w};
    layer->scratch.dtype = desc->dtype; /* the scores; the expanded mask stays f32 */
    const vka_layer_weights lw = weights_of(layer);
    if ((r = vka_layer_weights_create(ctx, __func__, &lw, desc->dtype))) {
        vkattn_additive_attention_destroy(layer);
        return r;
    }
    *out = layer;
    return VKATTN_SUCCESS;
}

void vkattn_additive_attention_destroy(vkattn_additive_attention *layer)
{
    if (!layer)
        return;
    vka_scratch_release(&layer->scratch);
    vka_scratch_release(&layer->mask);
    const vka_layer_weights lw = weights_of(layer);
    vka_layer_weights_destroy(&lw);
    vka_layer_kept_destroy(layer->kept);
    free(layer);
}

vkattn_result vkattn_additive_attention_set_weights(vkattn_additive_attention *layer,
                                                    const vkattn_additive_attention_weights *w)
{
    VKA_REQUIRE_OWNER_AND(__func__, layer, layer->ctx, w);
    const vka_layer_weights lw = weights_of(layer);
    return vka_layer_weights_set(layer->ctx, __func__, &lw, w);
}

vkattn_result vkattn_additive_attention_get_weights(const vkattn_additive_attention *layer,
                                                    vkattn_additive_attention_weights *w)
{
    VKA_REQUIRE_OWNER_AND(__func__, layer, layer->ctx, w);
    const vka_layer_weights lw = weights_of(layer);
    return vka_layer_weights_get(layer->ctx, __func__, &lw, w);
}

vka_additive_attention_parts vka_additive_attention_parts_of(vkattn_additive_attention *layer)
{
    return (vka_additive_attention_parts){.ctx = layer->ctx, .desc = &layer->desc,
                                          .w = layer->w, .scale = layer->wt.scale,
                                          .weights = weights_of(layer), .kept = &layer->kept};
}

vkattn_result vkattn_additive_attention_record(vkattn_additive_attention *layer,
                                               VkCommandBuffer cmd, const vkattn_layer_call *call,
                                               const vkattn_layer_io *io)
{
    VKA_RECORD_MODES(layer, layer->ctx, cmd,
                     vkattn_additive_attention_record(layer, cmd, call, io));
    vkattn_context *ctx = layer->ctx;
    const vka_layer_shape shape = {.dq = layer->w.dq, .dk = layer->w.dk, .dv = layer->w.dv,
                                   .dout = layer->w.dv, .heads = 1,
                                   .data_dtype = layer->desc.dtype};
    vkattn_result r;
    vka_mask_layout ml = {0};
    vka_layer_mask m;
    if ((r = vka_layer_check_call(ctx, __func__, call)) ||
        (r = vka_layer_check_io(ctx, __func__, call, io, &shape, &ml)) ||
        (r = vka_layer_check_unfused_path(ctx, __func__, call, "AdditiveAttention")))
        return r;
    vkattn_tensor *s = io->scores;
    if ((!s && (r = vka_scratch_get(ctx, __func__, &layer->scratch,
                                    (uint64_t)call->batch * call->tq * call->tv, &s))) ||
        (r = vka_layer_mask_record(ctx, cmd, __func__, &layer->mask, call, io, &ml, false, &m)))
        return r;
    const vkattn_additive_params ap = {
        .batch = call->batch, .tq = call->tq, .tv = call->tv, .dim = layer->w.dq,
        .has_scale_vector = !layer->desc.no_scale,
    };
    const vkattn_additive_io aio = {.q = io->query, .k = io->key ? io->key : io->value,
                                    .scale = layer->wt.scale, .scores = s};
    if ((r = vkattn_additive_record(ctx, cmd, &ap, &aio)) ||
        (r = vka_layer_finish_record(ctx, cmd, __func__, call, io, &m, layer->w.dv,
                                     layer->desc.dropout, s)))
        return r;
    return vka_layer_keep(ctx, __func__, &layer->kept, call, io);
}
