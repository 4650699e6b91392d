/* Keras AdditiveAttention in attnbench: its descriptor (layer_kind.h). */
#include "layer_kind_calls.h"

AB_LAYER_KIND_CALLS(add, additive_attention)

static uint32_t weight_slots(const ab_layer_desc *d, ab_weight_slot s[AB_LAYER_WEIGHTS])
{
    s[0] = ab_weight_slot_of("scale", !d->add.no_scale, 1, d->add.query_width, 0, 0);
    return 1;
}

static vkattn_result backward_record(const ab_layer_any *l, VkCommandBuffer cmd,
                                     const vkattn_layer_call *call, const vkattn_layer_io *io,
                                     const vkattn_layer_grads *g, vkattn_tensor *const w[])
{
    vkattn_additive_attention_weight_tensors gw = {w[0]};
    return vkattn_additive_attention_backward_record(l->handle.add, cmd, call, io, g, &gw);
}

static vkattn_result reference_backward(const ab_layer_any *l, const vkattn_layer_call *call,
                                        const vkattn_layer_host_io *io, const float *grad_output,
                                        const vkattn_layer_host_grads *g, float *const w[])
{
    vkattn_additive_attention_weights gw = {w[0]};
    return vkattn_reference_additive_attention_backward(&l->desc.add, &l->w.add, call, io,
                                                        grad_output, g, &gw);
}

static void weights_free(ab_layer_weights *w) { vkattn_additive_attention_weights_free(&w->add); }

const ab_layer_kind_info ab_layer_kind_additive = {
    .kind = AB_LAYER_ADDITIVE, .keras_name = "AdditiveAttention",
    .bench_name = "additive_attention", AB_LAYER_KIND_CALLS_INIT, .weight_slots = weight_slots,
    .backward_record = backward_record, .reference_backward = reference_backward,
    .weights_free = weights_free,
};
