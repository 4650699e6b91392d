/* What MultiHeadAttention and GroupedQueryAttention share in attnbench: the
 * same thirteen weights, told apart only by their head counts and widths. */
#ifndef ATTNBENCH_LAYER_KIND_MULTIHEAD_H
#define ATTNBENCH_LAYER_KIND_MULTIHEAD_H

#include "layer_kind.h"

typedef struct ab_multihead_shape {
    uint32_t query_width, key_width, value_width, output_width;
    uint32_t query_heads, key_value_heads; /* MultiHeadAttention: both num_heads */
    uint32_t key_dim, value_dim;           /* per head; GroupedQueryAttention: both head_dim */
    bool bias, gate, qk_norm, sinks;
} ab_multihead_shape;

/* The members both descs spell alike (d: a vkattn_mha_desc or vkattn_gqa_desc). */
#define AB_MULTIHEAD_SHAPE_COMMON(d)                                                              \
    .query_width = (d)->query_width, .value_width = (d)->value_width,                             \
    .key_width = (d)->key_width ? (d)->key_width : (d)->value_width, .bias = !(d)->no_bias,       \
    .gate = (d)->use_gate, .qk_norm = (d)->use_qk_norm, .sinks = (d)->use_sinks

/* Fills the 13 slots (layer_kind.h's order) and returns 13. */
uint32_t ab_multihead_weight_slots(const ab_multihead_shape *m, ab_weight_slot s[AB_LAYER_WEIGHTS]);

/* The widths (heads x head width) of a multi-head kind's projections, for
 * its bench weights: the query's, key's and value's, the output kernel's
 * input and the gate's. */
typedef struct ab_multihead_widths {
    size_t query, key, value, output_in, gate;
} ab_multihead_widths;

struct ab_layer_bench;
struct ab_weight_maker;
/* The random weights of `attnbench bench mha | gqa` in slot order (the
 * biases near 0, --qk-norm's scales near 1, --sinks' logits +-1); false on
 * host out of memory. */
bool ab_multihead_bench_weights(const struct ab_layer_bench *b, const ab_multihead_widths *widths,
                                vkattn_mha_weights *w, struct ab_weight_maker *m);

struct ab_rounder;
/* Rounds each weight the slots s hold (ab_round_values), but the sinks (they
 * stay f32). */
void ab_multihead_round(const ab_weight_slot s[AB_LAYER_WEIGHTS], vkattn_mha_weights *w,
                        struct ab_rounder *r);

/* backward_record, reference_backward, weights_free and use_dtype of a
 * multi-head kind: its weight structs hold the thirteen slots in the same
 * order. The kind file defines weight_slots. */
#define AB_MULTIHEAD_KIND_CALLS(member, name)                                                     \
    static vkattn_result backward_record(const ab_layer_any *l, VkCommandBuffer cmd,              \
                                         const vkattn_layer_call *call,                           \
                                         const vkattn_layer_io *io, const vkattn_layer_grads *g,  \
                                         vkattn_tensor *const w[])                                \
    {                                                                                             \
        vkattn_##name##_weight_tensors gw = {w[0], w[1], w[2],  w[3],  w[4], w[5], w[6],          \
                                             w[7], w[8], w[9], w[10], w[11], w[12]};              \
        return vkattn_##name##_backward_record(l->handle.member, cmd, call, io, g, &gw);          \
    }                                                                                             \
    static vkattn_result reference_backward(                                                      \
        const ab_layer_any *l, const vkattn_layer_call *call, const vkattn_layer_host_io *io,     \
        const float *grad_output, const vkattn_layer_host_grads *g, float *const w[])             \
    {                                                                                             \
        vkattn_##name##_weights gw = {w[0], w[1], w[2],  w[3],  w[4], w[5], w[6],                 \
                                      w[7], w[8], w[9], w[10], w[11], w[12]};                     \
        return vkattn_reference_##name##_backward(&l->desc.member, &l->w.member, call, io,        \
                                                  grad_output, g, &gw);                           \
    }                                                                                             \
    static void weights_free(ab_layer_weights *w) { vkattn_##name##_weights_free(&w->member); }  \
    static uint32_t weight_slots(const ab_layer_desc *d, ab_weight_slot s[AB_LAYER_WEIGHTS]);     \
    static void use_dtype(ab_layer_desc *d, ab_layer_weights *w, ab_rounder *r)                   \
    {                                                                                             \
        ab_weight_slot s[AB_LAYER_WEIGHTS];                                                       \
        weight_slots(d, s);                                                                       \
        d->member.dtype = r->dtype;                                                               \
        ab_multihead_round(s, &w->member, r);                                                     \
    }

#endif
