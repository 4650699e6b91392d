/* keras.layers.Attention: dot mode through the SDPA op (which brings the fused
 * kernel), concat mode through the additive scoring op and the shared tail.
 * The scalar weights live in device tensors and are applied on the device
 * (scaled copies of Q and K, the additive op's scale vector), so a command
 * buffer recorded before set_weights follows the new values, as in every
 * other layer. */
#include "vkattn/attention.h"

#include <stdlib.h>

#include "core/dtype.h"
#include "core/error.h"
#include "layers/layer_util.h"
#include "layers/layer_weights.h"
#include "layers/single_internal.h"
#include "ops/scale.h"
#include "vkattn/additive.h"
#include "vkattn/sdpa.h"
#include "vk/record_mode.h"
#include "vk/view.h"

struct vkattn_attention {
    vkattn_context *ctx;
    vkattn_attention_desc desc;
    vka_layer_widths w;
    vkattn_attention_weight_tensors wt; /* scale read only with use_scale,
                                         * concat_score_weight only in concat mode */
    vkattn_tensor *ones, *csw_vec; /* concat: (dq) ones, and csw * ones, the
                                    * additive op's scale vector */
    vka_scratch scratch;  /* concat: the scores; dot: the SDPA workspace */
    vka_scratch mask;     /* an attention mask expanded to a full key axis */
    vka_scratch q_scaled, k_scaled; /* scale * query, scale * key (use_scale) */
    vka_layer_kept *kept; /* the last forward, for the backward */
};

/* The layer's weights as the table walks them. Both scalars whatever the
 * options: get_weights gives back what set_weights was given. */
static vka_layer_weights weights_of(const vkattn_attention *layer)
{
    return vka_single_layer_weights(&vka_attention_weight_table, vka_attention_tensor_offsets,
                                    VKA_WEIGHT_IF_SCALE | VKA_WEIGHT_IF_CONCAT, &layer->w,
                                    &layer->wt);
}

vkattn_result vkattn_attention_create(vkattn_context *ctx, const vkattn_attention_desc *desc,
                                      vkattn_attention **out)
{
    VKA_CREATE_ARGS(ctx, out);
    vka_layer_widths w;
    vkattn_result r = vka_attention_check_desc(ctx, __func__, desc, &w);
    if (r != VKATTN_SUCCESS)
        return r;
    vkattn_attention *layer = calloc(1, sizeof *layer);
    if (!layer)
        return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", __func__);
    *layer = (vkattn_attention){.ctx = ctx, .desc = *desc, .w = w};
    /* f16 and bf16: weights and activations in the dtype; the SDPA workspace (dot mode's
     * scratch) and the expanded mask stay f32 */
    const vkattn_dtype dt = desc->dtype;
    const bool concat = desc->score_mode == VKATTN_SCORE_CONCAT;
    layer->q_scaled.dtype = layer->k_scaled.dtype = dt;
    if (concat)
        layer->scratch.dtype = dt;
    const vka_layer_weights lw = weights_of(layer);
    if ((r = vka_layer_weights_create(ctx, __func__, &lw, dt)) ||
        (concat && (r = vka_layer_weight_create_typed(ctx, __func__, w.dq, dt, 1.0f, &layer->ones))) ||
        (concat &&
         (r = vka_layer_weight_create_typed(ctx, __func__, w.dq, dt, 1.0f, &layer->csw_vec)))) {
        vkattn_attention_destroy(layer);
        return r;
    }
    *out = layer;
    return VKATTN_SUCCESS;
}

void vkattn_attention_destroy(vkattn_attention *layer)
{
    if (!layer)
        return;
    vka_scratch_release(&layer->scratch);
    vka_scratch_release(&layer->mask);
    vka_scratch_release(&layer->q_scaled);
    vka_scratch_release(&layer->k_scaled);
    const vka_layer_weights lw = weights_of(layer);
    vka_layer_weights_destroy(&lw);
    vkattn_tensor_destroy(layer->ones);
    vkattn_tensor_destroy(layer->csw_vec);
    vka_layer_kept_destroy(layer->kept);
    free(layer);
}

vkattn_result vkattn_attention_set_weights(vkattn_attention *layer,
                                           const vkattn_attention_weights *w)
{
    VKA_REQUIRE_OWNER_AND(__func__, layer, layer->ctx, w);
    const vka_layer_weights lw = weights_of(layer);
    return vka_layer_weights_set(layer->ctx, __func__, &lw, w);
}

vka_attention_parts vka_attention_parts_of(vkattn_attention *layer)
{
    return (vka_attention_parts){.ctx = layer->ctx, .desc = &layer->desc, .w = layer->w,
                                 .scale = layer->wt.scale,
                                 .csw = layer->wt.concat_score_weight, .ones = layer->ones,
                                 .weights = weights_of(layer), .kept = &layer->kept};
}

vkattn_result vkattn_attention_get_weights(const vkattn_attention *layer,
                                           vkattn_attention_weights *w)
{
    VKA_REQUIRE_OWNER_AND(__func__, layer, layer->ctx, w);
    const vka_layer_weights lw = weights_of(layer);
    return vka_layer_weights_get(layer->ctx, __func__, &lw, w);
}

/* *out = `in` (rows x dq floats) times the layer's scale, into scratch `s`;
 * `in` itself without use_scale (the scale is then 1). */
static vkattn_result scaled(vkattn_attention *layer, VkCommandBuffer cmd, const char *caller,
                            const char *what, vka_scratch *s, uint64_t rows, vkattn_tensor *in,
                            vkattn_tensor **out)
{
    *out = in;
    if (!layer->desc.use_scale)
        return VKATTN_SUCCESS;
    const uint64_t n = rows * layer->w.dq; /* the io checks bounded it */
    vkattn_result r = vka_scratch_get(layer->ctx, caller, s, n, out);
    if (r != VKATTN_SUCCESS)
        return r;
    return vka_scale_record(layer->ctx, cmd, caller, what, n, layer->wt.scale, in, *out);
}

static vkattn_result record_dot(vkattn_attention *layer, VkCommandBuffer cmd, const char *caller,
                                const vkattn_layer_call *call, const vkattn_layer_io *io,
                                const vka_layer_mask *m)
{
    vkattn_context *ctx = layer->ctx;
    const vkattn_sdpa_params p = {
        .batch = call->batch, .heads = 1, .tq = call->tq, .tv = call->tv,
        .dk = layer->w.dq, .dv = layer->w.dv,
        .scale = 1.0f, /* the query comes scaled (0 here would mean 1/sqrt(dk)) */
        .mask = vka_layer_mask_params(call, VKATTN_MASKED_ROW_UNIFORM, io->value_mask != NULL,
                                      m->tensor ? &m->broadcast : NULL),
        .dropout = vka_layer_dropout_params(call, layer->desc.dropout, 1).dropout,
        .return_weights = call->return_attention_scores,
        .weights_after_dropout = true, /* Keras returns the weights after dropout */
        .path = call->path,
    };
    uint64_t floats;
    vkattn_result r = vkattn_sdpa_workspace_size(ctx, &p, &floats);
    if (r == VKATTN_SUCCESS && io->scores &&
        vka_dtype_info_of(vkattn_tensor_get_info(io->scores).desc.dtype)->is_16bit)
        floats = (uint64_t)call->batch * call->tq * call->tv; /* 16-bit weights: f32 scores */
    vkattn_tensor *ws = NULL;
    if (r == VKATTN_SUCCESS && floats)
        r = vka_scratch_get(ctx, caller, &layer->scratch, floats, &ws);
    vkattn_tensor *q;
    if (r == VKATTN_SUCCESS)
        r = scaled(layer, cmd, caller, "io->query", &layer->q_scaled,
                   (uint64_t)call->batch * call->tq, io->query, &q);
    if (r != VKATTN_SUCCESS)
        return r;
    const vkattn_sdpa_io sio = {
        .q = q, .k = io->key ? io->key : io->value, .v = io->value,
        .value_mask = io->value_mask, .mask = m->tensor,
        .out = io->output, .weights = io->scores, .workspace = ws,
    };
    return vkattn_sdpa_record(ctx, cmd, &p, &sio);
}

static vkattn_result record_concat(vkattn_attention *layer, VkCommandBuffer cmd,
                                   const char *caller, const vkattn_layer_call *call,
                                   const vkattn_layer_io *io, const vka_layer_mask *m)
{
    vkattn_context *ctx = layer->ctx;
    vkattn_tensor *s = io->scores;
    vkattn_result r;
    if (!s && (r = vka_scratch_get(ctx, caller, &layer->scratch,
                                   (uint64_t)call->batch * call->tq * call->tv, &s)))
        return r;
    /* csw * sum_d tanh(scale * (q_d + k_d)) = sum_d csw * tanh(scale*q_d + scale*k_d):
     * scaled copies of Q and K, and csw as the op's per-dim scale vector */
    vkattn_tensor *q, *k;
    if ((r = scaled(layer, cmd, caller, "io->query", &layer->q_scaled,
                    (uint64_t)call->batch * call->tq, io->query, &q)) ||
        (r = scaled(layer, cmd, caller, io->key ? "io->key" : "io->value", &layer->k_scaled,
                    (uint64_t)call->batch * call->tv, io->key ? io->key : io->value, &k)))
        return r;
    const vkattn_additive_params ap = {
        .batch = call->batch, .tq = call->tq, .tv = call->tv, .dim = layer->w.dq,
        .has_scale_vector = true,
    };
    const vkattn_additive_io aio = {.q = q, .k = k, .scale = layer->csw_vec, .scores = s};
    if ((r = vka_scale_record(ctx, cmd, caller, "the concat score weights", layer->w.dq,
                              layer->wt.concat_score_weight, layer->ones, layer->csw_vec)) ||
        (r = vkattn_additive_record(ctx, cmd, &ap, &aio)))
        return r;
    return vka_layer_finish_record(ctx, cmd, caller, call, io, m, layer->w.dv, layer->desc.dropout, s);
}

vkattn_result vkattn_attention_record(vkattn_attention *layer, VkCommandBuffer cmd,
                                      const vkattn_layer_call *call, const vkattn_layer_io *io)
{
    VKA_RECORD_MODES(layer, layer->ctx, cmd, vkattn_attention_record(layer, cmd, call, io));
    const vka_layer_shape shape = {.dq = layer->w.dq, .dk = layer->w.dk, .dv = layer->w.dv,
                                   .dout = layer->w.dv, .heads = 1,
                                   .data_dtype = layer->desc.dtype};
    vkattn_result r;
    vka_mask_layout ml = {0};
    vka_layer_mask m;
    if ((r = vka_layer_check_call(layer->ctx, __func__, call)) ||
        (r = vka_layer_check_io(layer->ctx, __func__, call, io, &shape, &ml)))
        return r;
    if (layer->desc.score_mode == VKATTN_SCORE_CONCAT &&
        (r = vka_layer_check_unfused_path(layer->ctx, __func__, call, "Attention's concat mode")))
        return r;
    if (layer->desc.score_mode == VKATTN_SCORE_DOT && call->path == VKATTN_SDPA_FUSED &&
        call->return_attention_scores)
        return vka_fail(layer->ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: call->path is VKATTN_SDPA_FUSED but "
                        "call->return_attention_scores is set; the fused kernel never forms "
                        "the weights (use AUTO or UNFUSED)",
                        __func__);
    if ((r = vka_layer_mask_record(layer->ctx, cmd, __func__, &layer->mask, call, io, &ml, false, &m)))
        return r;
    if (layer->desc.score_mode == VKATTN_SCORE_DOT) {
        if ((r = record_dot(layer, cmd, __func__, call, io, &m)) ||
            (r = vka_layer_query_mask_record(layer->ctx, cmd, __func__, call, io, layer->w.dv)))
            return r;
    } else if ((r = record_concat(layer, cmd, __func__, call, io, &m))) {
        return r;
    }
    return vka_layer_keep(layer->ctx, __func__, &layer->kept, call, io);
}
