/* BahdanauAttention in attnbench: its descriptor (layer_kind.h). */
#include "layer_kind_calls.h"

AB_LAYER_KIND_CALLS(bah, bahdanau)

static uint32_t weight_slots(const ab_layer_desc *desc, ab_weight_slot s[AB_LAYER_WEIGHTS])
{
    const vkattn_bahdanau_desc *d = &desc->bah;
    uint32_t dk = d->key_width ? d->key_width : d->value_width;
    s[0] = ab_weight_slot_of("query_kernel", true, 2, d->query_width, d->units, 0);
    s[1] = ab_weight_slot_of("key_kernel", true, 2, dk, d->units, 0);
    s[2] = ab_weight_slot_of("score_kernel", true, 1, d->units, 0, 0);
    s[3] = ab_weight_slot_of("score_bias", true, 0, 0, 0, 0);
    return 4;
}

static vkattn_result backward_record(const ab_layer_any *l, VkCommandBuffer cmd,
                                     const vkattn_layer_call *call, const vkattn_layer_io *io,
                                     const vkattn_layer_grads *g, vkattn_tensor *const w[])
{
    vkattn_bahdanau_weight_tensors gw = {w[0], w[1], w[2], w[3]};
    return vkattn_bahdanau_backward_record(l->handle.bah, cmd, call, io, g, &gw);
}

/* score_bias is a scalar in the weights struct: copied out to its slot. */
static vkattn_result reference_backward(const ab_layer_any *l, const vkattn_layer_call *call,
                                        const vkattn_layer_host_io *io, const float *grad_output,
                                        const vkattn_layer_host_grads *g, float *const w[])
{
    vkattn_bahdanau_weights gw = {w[0], w[1], w[2], 0.0f};
    vkattn_result r = vkattn_reference_bahdanau_backward(&l->desc.bah, &l->w.bah, call, io,
                                                         grad_output, g, &gw);
    if (!r && w[3])
        w[3][0] = gw.score_bias;
    return r;
}

static void weights_free(ab_layer_weights *w) { vkattn_bahdanau_weights_free(&w->bah); }

const ab_layer_kind_info ab_layer_kind_bahdanau = {
    .kind = AB_LAYER_BAHDANAU, .keras_name = "BahdanauAttention", .bench_name = "bahdanau",
    AB_LAYER_KIND_CALLS_INIT, .weight_slots = weight_slots, .backward_record = backward_record,
    .reference_backward = reference_backward, .weights_free = weights_free,
};
