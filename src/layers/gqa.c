/* GroupedQueryAttention: a thin shell over the MultiHeadAttention layer
 * (mha_internal.h) with num_key_value_heads key/value heads. Its desc is
 * resolved into the same dims (shape/mha_shape.h, vka_gqa_resolve_desc);
 * every call is the MHA layer's, with messages naming the GQA function. */
#include "vkattn/gqa.h"
#include "vkattn/layer_backward.h"

#include <stdlib.h>

#include "core/error.h"
#include "layers/mha_internal.h"
#include "ops/kv_cache.h"
#include "vk/record_mode.h"

struct vkattn_gqa {
    vkattn_mha *mha; /* kv_heads = num_key_value_heads */
};

vkattn_result vkattn_gqa_create(vkattn_context *ctx, const vkattn_gqa_desc *desc,
                                vkattn_gqa **out)
{
    VKA_CREATE_ARGS(ctx, out);
    vka_mha_dims d;
    vkattn_result r = vka_gqa_resolve_desc(ctx, __func__, desc, &d);
    if (r)
        return r;
    vkattn_gqa *layer = calloc(1, sizeof *layer);
    if (!layer)
        return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", __func__);
    if ((r = vka_mha_create_dims(ctx, __func__, &d, desc->dtype, &layer->mha))) {
        free(layer);
        return r;
    }
    *out = layer;
    return VKATTN_SUCCESS;
}

void vkattn_gqa_destroy(vkattn_gqa *layer)
{
    if (!layer)
        return;
    vkattn_mha_destroy(layer->mha);
    free(layer);
}

vkattn_result vkattn_gqa_set_weights(vkattn_gqa *layer, const vkattn_gqa_weights *w)
{
    if (!layer)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: layer is NULL", __func__);
    return vka_mha_set_weights_as(__func__, layer->mha, w);
}

vkattn_result vkattn_gqa_get_weights(const vkattn_gqa *layer, vkattn_gqa_weights *w)
{
    if (!layer)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: layer is NULL", __func__);
    return vka_mha_get_weights_as(__func__, layer->mha, w);
}

vkattn_result vkattn_gqa_record(vkattn_gqa *layer, VkCommandBuffer cmd,
                                const vkattn_layer_call *call, const vkattn_layer_io *io)
{
    VKA_RECORD_MODES(layer, layer->mha->ctx, cmd, vkattn_gqa_record(layer, cmd, call, io));
    return vka_mha_record_as(__func__, layer->mha, cmd, call, io);
}

vkattn_result vkattn_gqa_record_cached(vkattn_gqa *layer, VkCommandBuffer cmd,
                                       const vkattn_layer_call *call, const vkattn_layer_io *io,
                                       vkattn_kv_cache *cache)
{
    VKA_RECORD_MODES_THEN(layer, layer->mha->ctx, cmd, vkattn_gqa_record_cached(layer, cmd, call, io, cache),
                          vka_kv_cache_refresh(cache, __func__));
    return vka_mha_record_cached_as(__func__, layer->mha, cmd, call, io, cache);
}

vkattn_result vkattn_gqa_backward_record(vkattn_gqa *layer, VkCommandBuffer cmd,
                                         const vkattn_layer_call *call, const vkattn_layer_io *io,
                                         const vkattn_layer_grads *grads,
                                         const vkattn_gqa_weight_tensors *grad_w)
{
    VKA_RECORD_MODES(layer, layer->mha->ctx, cmd,
                     vkattn_gqa_backward_record(layer, cmd, call, io, grads, grad_w));
    return vka_mha_backward_as(__func__, layer->mha, cmd, call, io, grads, grad_w);
}

vkattn_result vkattn_gqa_get_weight_tensors(vkattn_gqa *layer, vkattn_gqa_weight_tensors *out)
{
    VKA_REQUIRE_OWNER_AND(__func__, layer, layer->mha->ctx, out);
    return vkattn_mha_get_weight_tensors(layer->mha, out);
}
