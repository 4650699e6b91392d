/* The weight slots of the multi-head kinds, their 16-bit rounding and their
 * bench weights (layer_kind_multihead.h). */
#include "layer_kind_multihead.h"

#include "common.h"
#include "layer_bench.h"

uint32_t ab_multihead_weight_slots(const ab_multihead_shape *m, ab_weight_slot s[AB_LAYER_WEIGHTS])
{
    const uint32_t hq = m->query_heads, hkv = m->key_value_heads, kd = m->key_dim,
                   vd = m->value_dim;
    s[0] = ab_weight_slot_of("query_kernel", true, 3, m->query_width, hq, kd);
    s[1] = ab_weight_slot_of("query_bias", m->bias, 2, hq, kd, 0);
    s[2] = ab_weight_slot_of("key_kernel", true, 3, m->key_width, hkv, kd);
    s[3] = ab_weight_slot_of("key_bias", m->bias, 2, hkv, kd, 0);
    s[4] = ab_weight_slot_of("value_kernel", true, 3, m->value_width, hkv, vd);
    s[5] = ab_weight_slot_of("value_bias", m->bias, 2, hkv, vd, 0);
    s[6] = ab_weight_slot_of("output_kernel", true, 3, hq, vd, m->output_width);
    s[7] = ab_weight_slot_of("output_bias", m->bias, 1, m->output_width, 0, 0);
    s[8] = ab_weight_slot_of("gate_kernel", m->gate, 3, m->query_width, hq, vd);
    s[9] = ab_weight_slot_of("gate_bias", m->gate && m->bias, 2, hq, vd, 0);
    s[10] = ab_weight_slot_of("query_norm", m->qk_norm, 1, kd, 0, 0);
    s[11] = ab_weight_slot_of("key_norm", m->qk_norm, 1, kd, 0, 0);
    s[12] = ab_weight_slot_of("sinks", m->sinks, 1, hq, 0, 0);
    return 13;
}

void ab_multihead_round(const ab_weight_slot s[AB_LAYER_WEIGHTS], vkattn_mha_weights *w,
                        ab_rounder *r)
{
    float *const slot_arrays[AB_LAYER_WEIGHTS - 1] = {
        w->query_kernel, w->query_bias,  w->key_kernel,    w->key_bias,
        w->value_kernel, w->value_bias,  w->output_kernel, w->output_bias,
        w->gate_kernel,  w->gate_bias,   w->query_norm,    w->key_norm};
    for (uint32_t i = 0; i < AB_LAYER_WEIGHTS - 1; i++)
        if (s[i].n)
            ab_round_values(r, slot_arrays[i], s[i].n);
}

/* --qk-norm's scales, near 1 as a trained model's (0.5 .. 1.5), and --sinks'
 * logits (+-1); false on host out-of-memory. */
static bool open_model_weights(const ab_layer_bench *b, ab_weight_maker *m, vkattn_mha_weights *w)
{
    const uint32_t head = b->d.dk, heads = b->d.heads; /* key_dim or head_dim; query heads */
    if (b->qk_norm) {
        if (!(w->query_norm = m->make(m, 10, head, 12)) ||
            !(w->key_norm = m->make(m, 11, head, 12)))
            return false;
        for (uint32_t i = 0; i < head; i++)
            w->query_norm[i] += 1.0f, w->key_norm[i] += 1.0f;
    }
    return !b->sinks || (w->sinks = m->make(m, 12, heads, 3)) != NULL;
}

bool ab_multihead_bench_weights(const ab_layer_bench *b, const ab_multihead_widths *widths,
                                vkattn_mha_weights *w, ab_weight_maker *m)
{
    const uint32_t D = b->dmodel;
    w->query_kernel = m->make(m, 0, D * widths->query, D);
    w->key_kernel = m->make(m, 1, D * widths->key, D);
    w->value_kernel = m->make(m, 2, D * widths->value, D);
    w->output_kernel = m->make(m, 3, widths->output_in * D, (uint32_t)widths->output_in);
    w->query_bias = m->make(m, 4, widths->query, 30);
    w->key_bias = m->make(m, 5, widths->key, 30);
    w->value_bias = m->make(m, 6, widths->value, 30);
    w->output_bias = m->make(m, 7, D, 30);
    if (b->gate && (!(w->gate_kernel = m->make(m, 8, D * widths->gate, D)) ||
                    !(w->gate_bias = m->make(m, 9, widths->gate, 30))))
        return false;
    if (!open_model_weights(b, m, w))
        return false;
    return w->query_kernel && w->key_kernel && w->value_kernel && w->output_kernel &&
           w->query_bias && w->key_bias && w->value_bias && w->output_bias;
}
