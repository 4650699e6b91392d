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
#include "vk/prepare.h"
#include "vk/submit.h"
#include "vk/record_mode.h"

struct vkattn_gqa {
    vkattn_mha *mha; /* kv_heads = num_key_value_heads */
};

vkattn_result vkattn_gqa_create(vkattn_context *ctx, const vkattn_gqa_desc *desc,
                                vkattn_gqa **out)
{
    static const char fn[] = "vkattn_gqa_create";
    if (!out)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    if (!ctx)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    vka_mha_dims d;
    vkattn_result r = vka_gqa_resolve_desc(ctx, fn, desc, &d);
    if (r)
        return r;
    vkattn_gqa *layer = calloc(1, sizeof *layer);
    if (!layer)
        return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    if ((r = vka_mha_create_dims(ctx, fn, &d, desc->dtype, &layer->mha))) {
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
    static const char fn[] = "vkattn_gqa_set_weights";
    if (!layer)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: layer is NULL", fn);
    return vka_mha_set_weights_as(fn, layer->mha, w);
}

vkattn_result vkattn_gqa_get_weights(const vkattn_gqa *layer, vkattn_gqa_weights *w)
{
    static const char fn[] = "vkattn_gqa_get_weights";
    if (!layer)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: layer is NULL", fn);
    return vka_mha_get_weights_as(fn, layer->mha, w);
}

vkattn_result vkattn_gqa_record(vkattn_gqa *layer, VkCommandBuffer cmd,
                                const vkattn_layer_call *call, const vkattn_layer_io *io)
{
    VKA_RECORD_MODES(layer, layer->mha->ctx, cmd, vkattn_gqa_record(layer, cmd, call, io));
    static const char fn[] = "vkattn_gqa_record";
    if (!layer)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: layer is NULL", fn);
    return vka_mha_record_as(fn, layer->mha, cmd, call, io);
}

vkattn_result vkattn_gqa_prepare(vkattn_gqa *layer, const vkattn_layer_call *call,
                                 const vkattn_layer_io *io)
{
    static const char fn[] = "vkattn_gqa_prepare";
    if (!layer)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: layer is NULL", fn);
    return vka_prepare_result(layer->mha->ctx, fn,
                              vka_mha_record_as(fn, layer->mha, VKA_DRY_CMD, call, io));
}

vkattn_result vkattn_gqa_run(vkattn_gqa *layer, const vkattn_layer_call *call,
                             const vkattn_layer_io *io)
{
    if (!layer)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "vkattn_gqa_run: layer is NULL");
    VKA_RUN(layer->mha->ctx, vka_mha_record_as("vkattn_gqa_run", layer->mha, cmd, call, io));
}

vkattn_result vkattn_gqa_record_cached(vkattn_gqa *layer, VkCommandBuffer cmd,
                                       const vkattn_layer_call *call, const vkattn_layer_io *io,
                                       vkattn_kv_cache *cache)
{
    VKA_RECORD_MODES_THEN(layer, layer->mha->ctx, cmd, vkattn_gqa_record_cached(layer, cmd, call, io, cache),
                          vka_kv_cache_refresh(cache, __func__));
    static const char fn[] = "vkattn_gqa_record_cached";
    if (!layer)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: layer is NULL", fn);
    return vka_mha_record_cached_as(fn, layer->mha, cmd, call, io, cache);
}

vkattn_result vkattn_gqa_prepare_cached(vkattn_gqa *layer, const vkattn_layer_call *call,
                                        const vkattn_layer_io *io, vkattn_kv_cache *cache)
{
    static const char fn[] = "vkattn_gqa_prepare_cached";
    if (!layer)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: layer is NULL", fn);
    return vka_prepare_result(layer->mha->ctx, fn,
                              vka_mha_record_cached_as(fn, layer->mha, VKA_DRY_CMD, call, io,
                                                       cache));
}

vkattn_result vkattn_gqa_run_cached(vkattn_gqa *layer, const vkattn_layer_call *call,
                                    const vkattn_layer_io *io, vkattn_kv_cache *cache)
{
    static const char fn[] = "vkattn_gqa_run_cached";
    if (!layer)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: layer is NULL", fn);
    return vka_mha_run_cached_as(fn, layer->mha, call, io, cache);
}

vkattn_result vkattn_gqa_backward_record(vkattn_gqa *layer, VkCommandBuffer cmd,
                                         const vkattn_layer_call *call, const vkattn_layer_io *io,
                                         const vkattn_layer_grads *grads,
                                         const vkattn_gqa_weight_tensors *grad_w)
{
    VKA_RECORD_MODES(layer, layer->mha->ctx, cmd,
                     vkattn_gqa_backward_record(layer, cmd, call, io, grads, grad_w));
    static const char fn[] = "vkattn_gqa_backward_record";
    if (!layer)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: layer is NULL", fn);
    return vka_mha_backward_as(fn, layer->mha, cmd, call, io, grads, grad_w);
}

vkattn_result vkattn_gqa_backward_prepare(vkattn_gqa *layer, const vkattn_layer_call *call,
                                          const vkattn_layer_io *io,
                                          const vkattn_layer_grads *grads,
                                          const vkattn_gqa_weight_tensors *grad_w)
{
    static const char fn[] = "vkattn_gqa_backward_prepare";
    if (!layer)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: layer is NULL", fn);
    return vka_prepare_result(layer->mha->ctx, fn,
                              vka_mha_backward_as(fn, layer->mha, VKA_DRY_CMD, call, io, grads,
                                                  grad_w));
}

vkattn_result vkattn_gqa_backward_run(vkattn_gqa *layer, const vkattn_layer_call *call,
                                      const vkattn_layer_io *io, const vkattn_layer_grads *grads,
                                      const vkattn_gqa_weight_tensors *grad_w)
{
    static const char fn[] = "vkattn_gqa_backward_run";
    if (!layer)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: layer is NULL", fn);
    VKA_RUN(layer->mha->ctx, vka_mha_backward_as(fn, layer->mha, cmd, call, io, grads, grad_w));
}

vkattn_result vkattn_gqa_get_weight_tensors(vkattn_gqa *layer, vkattn_gqa_weight_tensors *out)
{
    static const char fn[] = "vkattn_gqa_get_weight_tensors";
    if (!layer || !out)
        return vka_fail(layer ? layer->mha->ctx : NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s is NULL", fn, !layer ? "layer" : "out");
    return vkattn_mha_get_weight_tensors(layer->mha, out);
}
