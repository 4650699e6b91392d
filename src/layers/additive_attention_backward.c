/* keras.layers.AdditiveAttention's backward (vkattn/layer_backward.h): the
 * scores are recomputed by the additive op, the shared tail gives dS, and the
 * additive op's backward gives dquery, dkey and the scale vector's gradient. */
#include "vkattn/layer_backward.h"

#include "core/error.h"
#include "layers/single_internal.h"
#include "vk/prepare.h"
#include "vkattn/additive.h"
#include "vkattn/additive_backward.h"
#include "vk/record_mode.h"

vkattn_result vkattn_additive_attention_get_weight_tensors(
    vkattn_additive_attention *layer, vkattn_additive_attention_weight_tensors *out)
{
    VKA_REQUIRE_OWNER_AND(__func__, layer, vka_additive_attention_parts_of(layer).ctx, out);
    *out = (vkattn_additive_attention_weight_tensors){
        .scale = vka_additive_attention_parts_of(layer).scale};
    return VKATTN_SUCCESS;
}

static vkattn_result record_all(const vka_additive_attention_parts *p, VkCommandBuffer cmd,
                                const char *fn, const vkattn_layer_call *call,
                                const vkattn_layer_io *io, const vkattn_layer_grads *grads,
                                const vkattn_additive_attention_weight_tensors *grad_w)
{
    vkattn_context *ctx = p->ctx;
    vka_layer_kept *kept = *p->kept;
    const bool scale = !p->desc->no_scale;
    const vka_layer_shape shape = {.dq = p->w.dq, .dk = p->w.dk, .dv = p->w.dv, .dout = p->w.dv,
                                   .heads = 1, .data_dtype = p->desc->dtype};
    vka_weight_slots ws;
    vka_layer_weight_slots(&p->weights, grad_w, &ws);
    vka_mask_layout ml = {0};
    vka_layer_tail t;
    vkattn_tensor *dkey;
    vkattn_result r;
    if ((r = vka_layer_backward_check(ctx, fn, kept, &shape, call, io, grads, ws.grads, ws.n,
                                      ws.weights, ws.n, &ml)) ||
        (r = vka_layer_check_unfused_path(ctx, fn, call, "AdditiveAttention")) ||
        (r = vka_layer_tail_begin(ctx, cmd, fn, kept, call, io, grads, &ml, p->w.dv, &t)) ||
        (r = vka_layer_key_grad_target(ctx, fn, kept, call, io, grads, p->w.dk, &dkey)))
        return r;
    const vkattn_additive_params ap = {
        .batch = call->batch, .tq = call->tq, .tv = call->tv, .dim = p->w.dq,
        .has_scale_vector = scale,
    };
    vkattn_tensor *key = io->key ? io->key : io->value;
    vkattn_tensor *dscale = grad_w ? grad_w->scale : NULL;
    if ((r = vkattn_additive_record(ctx, cmd, &ap,
                                    &(vkattn_additive_io){.q = io->query, .k = key,
                                                          .scale = p->scale,
                                                          .scores = t.scores})) ||
        (r = vka_layer_tail_backward(ctx, cmd, fn, kept, call, io, grads, p->w.dv,
                                     p->desc->dropout, &t)))
        return r;
    if ((grads->grad_query || dkey || dscale) &&
        (r = vkattn_additive_backward_record(
             ctx, cmd, &ap,
             &(vkattn_additive_backward_io){.q = io->query, .k = key, .scale = p->scale,
                                            .grad_scores = t.scores,
                                            .grad_q = grads->grad_query, .grad_k = dkey,
                                            .grad_scale = dscale})))
        return r;
    return vka_layer_value_grad_finish(ctx, cmd, fn, call, io, grads, p->w.dv, &t, dkey);
}

/* record_all as vka_record_dry_first calls it. */
static vkattn_result record_call(vkattn_context *ctx, VkCommandBuffer cmd, const void *args)
{
    const vka_backward_call *a = args;
    return record_all(a->parts, cmd, a->fn, a->call, a->io, a->grads, a->grad_w);
}

vkattn_result vkattn_additive_attention_backward_record(
    vkattn_additive_attention *layer, VkCommandBuffer cmd, const vkattn_layer_call *call,
    const vkattn_layer_io *io, const vkattn_layer_grads *grads,
    const vkattn_additive_attention_weight_tensors *grad_w)
{
    VKA_RECORD_MODES(layer, vka_additive_attention_parts_of(layer).ctx, cmd,
                     vkattn_additive_attention_backward_record(layer, cmd, call, io, grads, grad_w));
    const vka_additive_attention_parts p = vka_additive_attention_parts_of(layer);
    const vka_backward_call a = {&p, __func__, call, io, grads, grad_w};
    return vka_record_dry_first(p.ctx, cmd, record_call, &a);
}
