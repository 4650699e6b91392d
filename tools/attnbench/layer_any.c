/* Kind dispatch for ab_layer_any (layer_any.h). */
#include "layer_any.h"

vkattn_result ab_layer_any_new(vkattn_context *ctx, ab_layer_any *l)
{
    switch (l->kind) {
    case AB_LAYER_ATTENTION: return vkattn_attention_create(ctx, &l->desc.att, &l->handle.att);
    case AB_LAYER_ADDITIVE:
        return vkattn_additive_attention_create(ctx, &l->desc.add, &l->handle.add);
    case AB_LAYER_BAHDANAU: return vkattn_bahdanau_create(ctx, &l->desc.bah, &l->handle.bah);
    case AB_LAYER_MHA: return vkattn_mha_create(ctx, &l->desc.mha, &l->handle.mha);
    case AB_LAYER_GQA: return vkattn_gqa_create(ctx, &l->desc.gqa, &l->handle.gqa);
    }
    return VKATTN_ERROR_INVALID_ARGUMENT;
}

vkattn_result ab_layer_any_set_weights(ab_layer_any *l)
{
    switch (l->kind) {
    case AB_LAYER_ATTENTION: return vkattn_attention_set_weights(l->handle.att, &l->w.att);
    case AB_LAYER_ADDITIVE:
        return vkattn_additive_attention_set_weights(l->handle.add, &l->w.add);
    case AB_LAYER_BAHDANAU: return vkattn_bahdanau_set_weights(l->handle.bah, &l->w.bah);
    case AB_LAYER_MHA: return vkattn_mha_set_weights(l->handle.mha, &l->w.mha);
    case AB_LAYER_GQA: return vkattn_gqa_set_weights(l->handle.gqa, &l->w.gqa);
    }
    return VKATTN_ERROR_INVALID_ARGUMENT;
}

vkattn_result ab_layer_any_create(vkattn_context *ctx, ab_layer_any *l)
{
    vkattn_result r = ab_layer_any_new(ctx, l);
    return r != VKATTN_SUCCESS ? r : ab_layer_any_set_weights(l);
}

void ab_layer_any_destroy(ab_layer_any *l)
{
    switch (l->kind) {
    case AB_LAYER_ATTENTION: vkattn_attention_destroy(l->handle.att); break;
    case AB_LAYER_ADDITIVE: vkattn_additive_attention_destroy(l->handle.add); break;
    case AB_LAYER_BAHDANAU: vkattn_bahdanau_destroy(l->handle.bah); break;
    case AB_LAYER_MHA: vkattn_mha_destroy(l->handle.mha); break;
    case AB_LAYER_GQA: vkattn_gqa_destroy(l->handle.gqa); break;
    }
    l->handle = (ab_layer_handle){0};
}

vkattn_result ab_layer_any_record(const ab_layer_any *l, VkCommandBuffer cmd,
                                  const vkattn_layer_call *call, const vkattn_layer_io *io)
{
    switch (l->kind) {
    case AB_LAYER_ATTENTION: return vkattn_attention_record(l->handle.att, cmd, call, io);
    case AB_LAYER_ADDITIVE: return vkattn_additive_attention_record(l->handle.add, cmd, call, io);
    case AB_LAYER_BAHDANAU: return vkattn_bahdanau_record(l->handle.bah, cmd, call, io);
    case AB_LAYER_MHA: return vkattn_mha_record(l->handle.mha, cmd, call, io);
    case AB_LAYER_GQA: return vkattn_gqa_record(l->handle.gqa, cmd, call, io);
    }
    return VKATTN_ERROR_INVALID_ARGUMENT;
}

vkattn_result ab_layer_any_prepare(const ab_layer_any *l, const vkattn_layer_call *call,
                                   const vkattn_layer_io *io)
{
    switch (l->kind) {
    case AB_LAYER_ATTENTION: return vkattn_attention_record(l->handle.att, VKATTN_PREPARE, call, io);
    case AB_LAYER_ADDITIVE: return vkattn_additive_attention_record(l->handle.add, VKATTN_PREPARE, call, io);
    case AB_LAYER_BAHDANAU: return vkattn_bahdanau_record(l->handle.bah, VKATTN_PREPARE, call, io);
    case AB_LAYER_MHA: return vkattn_mha_record(l->handle.mha, VKATTN_PREPARE, call, io);
    case AB_LAYER_GQA: return vkattn_gqa_record(l->handle.gqa, VKATTN_PREPARE, call, io);
    }
    return VKATTN_ERROR_INVALID_ARGUMENT;
}

vkattn_result ab_layer_any_run(const ab_layer_any *l, const vkattn_layer_call *call,
                               const vkattn_layer_io *io)
{
    switch (l->kind) {
    case AB_LAYER_ATTENTION: return vkattn_attention_record(l->handle.att, VKATTN_RUN_NOW, call, io);
    case AB_LAYER_ADDITIVE: return vkattn_additive_attention_record(l->handle.add, VKATTN_RUN_NOW, call, io);
    case AB_LAYER_BAHDANAU: return vkattn_bahdanau_record(l->handle.bah, VKATTN_RUN_NOW, call, io);
    case AB_LAYER_MHA: return vkattn_mha_record(l->handle.mha, VKATTN_RUN_NOW, call, io);
    case AB_LAYER_GQA: return vkattn_gqa_record(l->handle.gqa, VKATTN_RUN_NOW, call, io);
    }
    return VKATTN_ERROR_INVALID_ARGUMENT;
}

vkattn_result ab_layer_any_reference(const ab_layer_any *l, const vkattn_layer_call *call,
                                     const vkattn_layer_host_io *io)
{
    switch (l->kind) {
    case AB_LAYER_ATTENTION: return vkattn_reference_attention(&l->desc.att, &l->w.att, call, io);
    case AB_LAYER_ADDITIVE:
        return vkattn_reference_additive_attention(&l->desc.add, &l->w.add, call, io);
    case AB_LAYER_BAHDANAU: return vkattn_reference_bahdanau(&l->desc.bah, &l->w.bah, call, io);
    case AB_LAYER_MHA: return vkattn_reference_mha(&l->desc.mha, &l->w.mha, call, io);
    case AB_LAYER_GQA: return vkattn_reference_gqa(&l->desc.gqa, &l->w.gqa, call, io);
    }
    return VKATTN_ERROR_INVALID_ARGUMENT;
}
