/* Keras MultiHeadAttention in attnbench: its descriptor (layer_kind.h). */
#include "layer_kind_calls.h"
#include "layer_kind_multihead.h"

AB_LAYER_KIND_CALLS(mha, mha)
AB_MULTIHEAD_KIND_CALLS(mha, mha)

static uint32_t weight_slots(const ab_layer_desc *desc, ab_weight_slot s[AB_LAYER_WEIGHTS])
{
    const vkattn_mha_desc *d = &desc->mha;
    const ab_multihead_shape m = {
        AB_MULTIHEAD_SHAPE_COMMON(d),
        .output_width = d->output_dim ? d->output_dim : d->query_width,
        .query_heads = d->num_heads, .key_value_heads = d->num_heads, .key_dim = d->key_dim,
        .value_dim = d->value_dim ? d->value_dim : d->key_dim};
    return ab_multihead_weight_slots(&m, s);
}

const ab_layer_kind_info ab_layer_kind_mha = {
    .kind = AB_LAYER_MHA, .keras_name = "MultiHeadAttention", .bench_name = "mha",
    AB_LAYER_KIND_CALLS_INIT, .weight_slots = weight_slots, .backward_record = backward_record,
    .reference_backward = reference_backward, .weights_free = weights_free,
};
