/* Kind dispatch of the layer gradients for ab_layer_any (layer_any.h): the
 * GPU backward (vkattn/layer_backward.h) and its CPU reference, with the
 * weight gradients as numbered slots so bench and check share one loop. */
#include "layer_any.h"

static ab_weight_slot slot(const char *name, bool present, uint32_t rank, uint32_t d0,
                           uint32_t d1, uint32_t d2)
{
    ab_weight_slot s = {.name = name, .rank = rank, .dims = {d0, d1, d2}};
    s.n = present ? 1 : 0;
    for (uint32_t i = 0; i < rank; i++)
        s.n *= s.dims[i];
    return s;
}

uint32_t ab_layer_any_weight_slots(const ab_layer_any *l, ab_weight_slot s[AB_LAYER_WEIGHTS])
{
    switch (l->kind) {
    case AB_LAYER_ATTENTION:
        s[0] = slot("scale", true, 0, 0, 0, 0);
        s[1] = slot("concat_score_weight", true, 0, 0, 0, 0);
        return 2;
    case AB_LAYER_ADDITIVE:
        s[0] = slot("scale", !l->desc.add.no_scale, 1, l->desc.add.query_width, 0, 0);
        return 1;
    case AB_LAYER_BAHDANAU: {
        const vkattn_bahdanau_desc *d = &l->desc.bah;
        uint32_t dk = d->key_width ? d->key_width : d->value_width;
        s[0] = slot("query_kernel", true, 2, d->query_width, d->units, 0);
        s[1] = slot("key_kernel", true, 2, dk, d->units, 0);
        s[2] = slot("score_kernel", true, 1, d->units, 0, 0);
        s[3] = slot("score_bias", true, 0, 0, 0, 0);
        return 4;
    }
    case AB_LAYER_MHA: {
        const vkattn_mha_desc *d = &l->desc.mha;
        uint32_t H = d->num_heads, kd = d->key_dim, vd = d->value_dim ? d->value_dim : kd;
        uint32_t dk = d->key_width ? d->key_width : d->value_width;
        uint32_t dout = d->output_dim ? d->output_dim : d->query_width;
        bool bias = !d->no_bias;
        s[0] = slot("query_kernel", true, 3, d->query_width, H, kd);
        s[1] = slot("query_bias", bias, 2, H, kd, 0);
        s[2] = slot("key_kernel", true, 3, dk, H, kd);
        s[3] = slot("key_bias", bias, 2, H, kd, 0);
        s[4] = slot("value_kernel", true, 3, d->value_width, H, vd);
        s[5] = slot("value_bias", bias, 2, H, vd, 0);
        s[6] = slot("output_kernel", true, 3, H, vd, dout);
        s[7] = slot("output_bias", bias, 1, dout, 0, 0);
        s[8] = slot("gate_kernel", d->use_gate, 3, d->query_width, H, vd);
        s[9] = slot("gate_bias", d->use_gate && bias, 2, H, vd, 0);
        s[10] = slot("query_norm", d->use_qk_norm, 1, kd, 0, 0);
        s[11] = slot("key_norm", d->use_qk_norm, 1, kd, 0, 0);
        s[12] = slot("sinks", d->use_sinks, 1, H, 0, 0);
        return 13;
    }
    case AB_LAYER_GQA: {
        const vkattn_gqa_desc *d = &l->desc.gqa;
        uint32_t nq = d->num_query_heads, nkv = d->num_key_value_heads, h = d->head_dim;
        uint32_t dk = d->key_width ? d->key_width : d->value_width, dq = d->query_width;
        bool bias = !d->no_bias;
        s[0] = slot("query_kernel", true, 3, dq, nq, h);
        s[1] = slot("query_bias", bias, 2, nq, h, 0);
        s[2] = slot("key_kernel", true, 3, dk, nkv, h);
        s[3] = slot("key_bias", bias, 2, nkv, h, 0);
        s[4] = slot("value_kernel", true, 3, d->value_width, nkv, h);
        s[5] = slot("value_bias", bias, 2, nkv, h, 0);
        s[6] = slot("output_kernel", true, 3, nq, h, dq);
        s[7] = slot("output_bias", bias, 1, dq, 0, 0);
        s[8] = slot("gate_kernel", d->use_gate, 3, dq, nq, h);
        s[9] = slot("gate_bias", d->use_gate && bias, 2, nq, h, 0);
        s[10] = slot("query_norm", d->use_qk_norm, 1, h, 0, 0);
        s[11] = slot("key_norm", d->use_qk_norm, 1, h, 0, 0);
        s[12] = slot("sinks", d->use_sinks, 1, nq, 0, 0);
        return 13;
    }
    }
    return 0;
}

/* One call of the kind's backward: record (cmd), prepare (no cmd, !run) or run. */
static vkattn_result backward(const ab_layer_any *l, VkCommandBuffer cmd, bool run,
                              const vkattn_layer_call *call, const vkattn_layer_io *io,
                              const vkattn_layer_grads *g, vkattn_tensor *const w[])
{
    if (!cmd)
        cmd = run ? VKATTN_RUN_NOW : VKATTN_PREPARE;
#define DISPATCH(fn, handle, gw) fn##_record(handle, cmd, call, io, g, gw)
    switch (l->kind) {
    case AB_LAYER_ATTENTION: {
        vkattn_attention_weight_tensors gw = {w[0], w[1]};
        return DISPATCH(vkattn_attention_backward, l->handle.att, &gw);
    }
    case AB_LAYER_ADDITIVE: {
        vkattn_additive_attention_weight_tensors gw = {w[0]};
        return DISPATCH(vkattn_additive_attention_backward, l->handle.add, &gw);
    }
    case AB_LAYER_BAHDANAU: {
        vkattn_bahdanau_weight_tensors gw = {w[0], w[1], w[2], w[3]};
        return DISPATCH(vkattn_bahdanau_backward, l->handle.bah, &gw);
    }
    case AB_LAYER_MHA: {
        vkattn_mha_weight_tensors gw = {w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9], w[10], w[11], w[12]};
        return DISPATCH(vkattn_mha_backward, l->handle.mha, &gw);
    }
    case AB_LAYER_GQA: {
        vkattn_gqa_weight_tensors gw = {w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9], w[10], w[11], w[12]};
        return DISPATCH(vkattn_gqa_backward, l->handle.gqa, &gw);
    }
    }
#undef DISPATCH
    return VKATTN_ERROR_INVALID_ARGUMENT;
}

vkattn_result ab_layer_any_backward_record(const ab_layer_any *l, VkCommandBuffer cmd,
                                           const vkattn_layer_call *call,
                                           const vkattn_layer_io *io, const vkattn_layer_grads *g,
                                           vkattn_tensor *const gw[AB_LAYER_WEIGHTS])
{
    if (!cmd)
        return VKATTN_ERROR_INVALID_ARGUMENT;
    return backward(l, cmd, false, call, io, g, gw);
}

vkattn_result ab_layer_any_backward_prepare(const ab_layer_any *l, const vkattn_layer_call *call,
                                            const vkattn_layer_io *io, const vkattn_layer_grads *g,
                                            vkattn_tensor *const gw[AB_LAYER_WEIGHTS])
{
    return backward(l, VK_NULL_HANDLE, false, call, io, g, gw);
}

vkattn_result ab_layer_any_backward_run(const ab_layer_any *l, const vkattn_layer_call *call,
                                        const vkattn_layer_io *io, const vkattn_layer_grads *g,
                                        vkattn_tensor *const gw[AB_LAYER_WEIGHTS])
{
    return backward(l, VK_NULL_HANDLE, true, call, io, g, gw);
}

vkattn_result ab_layer_any_reference_backward(const ab_layer_any *l,
                                              const vkattn_layer_call *call,
                                              const vkattn_layer_host_io *io,
                                              const float *grad_output,
                                              const vkattn_layer_host_grads *g,
                                              float *const w[AB_LAYER_WEIGHTS])
{
    vkattn_result r = VKATTN_ERROR_INVALID_ARGUMENT;
    switch (l->kind) {
    case AB_LAYER_ATTENTION: { /* scalars: always written by the reference */
        vkattn_attention_weights gw = {0};
        r = vkattn_reference_attention_backward(&l->desc.att, &l->w.att, call, io, grad_output,
                                                g, &gw);
        if (!r && w[0])
            w[0][0] = gw.scale;
        if (!r && w[1])
            w[1][0] = gw.concat_score_weight;
        return r;
    }
    case AB_LAYER_ADDITIVE: {
        vkattn_additive_attention_weights gw = {w[0]};
        return vkattn_reference_additive_attention_backward(&l->desc.add, &l->w.add, call, io,
                                                            grad_output, g, &gw);
    }
    case AB_LAYER_BAHDANAU: {
        vkattn_bahdanau_weights gw = {w[0], w[1], w[2], 0.0f};
        r = vkattn_reference_bahdanau_backward(&l->desc.bah, &l->w.bah, call, io, grad_output, g,
                                               &gw);
        if (!r && w[3])
            w[3][0] = gw.score_bias;
        return r;
    }
    case AB_LAYER_MHA: {
        vkattn_mha_weights gw = {w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9], w[10], w[11], w[12]};
        return vkattn_reference_mha_backward(&l->desc.mha, &l->w.mha, call, io, grad_output, g,
                                             &gw);
    }
    case AB_LAYER_GQA: {
        vkattn_gqa_weights gw = {w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9], w[10], w[11], w[12]};
        return vkattn_reference_gqa_backward(&l->desc.gqa, &l->w.gqa, call, io, grad_output, g,
                                             &gw);
    }
    }
    return r;
}
