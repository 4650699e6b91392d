/* Keras GroupedQueryAttention in attnbench: its descriptor (layer_kind.h). */
#include "layer_kind_calls.h"
#include "layer_kind_multihead.h"

AB_LAYER_KIND_CALLS(gqa, gqa)
AB_MULTIHEAD_KIND_CALLS(gqa, gqa)

static uint32_t weight_slots(const ab_layer_desc *desc, ab_weight_slot s[AB_LAYER_WEIGHTS])
{
    const vkattn_gqa_desc *d = &desc->gqa;
    const ab_multihead_shape m = {
        AB_MULTIHEAD_SHAPE_COMMON(d), .output_width = d->query_width,
        .query_heads = d->num_query_heads, .key_value_heads = d->num_key_value_heads,
        .key_dim = d->head_dim, .value_dim = d->head_dim};
    return ab_multihead_weight_slots(&m, s);
}

const ab_layer_kind_info ab_layer_kind_gqa = {
    .kind = AB_LAYER_GQA, .keras_name = "GroupedQueryAttention",
    .keras_alias = "GroupQueryAttention", .bench_name = "gqa", AB_LAYER_KIND_CALLS_INIT,
    .weight_slots = weight_slots, .backward_record = backward_record,
    .reference_backward = reference_backward, .weights_free = weights_free,
};
