/* Keras Attention (Luong) in attnbench: its descriptor (layer_kind.h). */
#include "layer_kind_calls.h"

AB_LAYER_KIND_CALLS(att, attention)

static uint32_t weight_slots(const ab_layer_desc *d, ab_weight_slot s[AB_LAYER_WEIGHTS])
{
    (void)d; /* both scalars are always there */
    s[0] = ab_weight_slot_of("scale", true, 0, 0, 0, 0);
    s[1] = ab_weight_slot_of("concat_score_weight", true, 0, 0, 0, 0);
    return 2;
}

static vkattn_result backward_record(const ab_layer_any *l, VkCommandBuffer cmd,
                                     const vkattn_layer_call *call, const vkattn_layer_io *io,
                                     const vkattn_layer_grads *g, vkattn_tensor *const w[])
{
    vkattn_attention_weight_tensors gw = {w[0], w[1]};
    return vkattn_attention_backward_record(l->handle.att, cmd, call, io, g, &gw);
}

/* The scalars' gradients are always written by the reference. */
static vkattn_result reference_backward(const ab_layer_any *l, const vkattn_layer_call *call,
                                        const vkattn_layer_host_io *io, const float *grad_output,
                                        const vkattn_layer_host_grads *g, float *const w[])
{
    vkattn_attention_weights gw = {0};
    vkattn_result r = vkattn_reference_attention_backward(&l->desc.att, &l->w.att, call, io,
                                                          grad_output, g, &gw);
    if (!r && w[0])
        w[0][0] = gw.scale;
    if (!r && w[1])
        w[1][0] = gw.concat_score_weight;
    return r;
}

const ab_layer_kind_info ab_layer_kind_attention = {
    .kind = AB_LAYER_ATTENTION, .keras_name = "Attention", .bench_name = "attention",
    AB_LAYER_KIND_CALLS_INIT, .weight_slots = weight_slots, .backward_record = backward_record,
    .reference_backward = reference_backward, .weights_free = NULL, /* scalars */
};
