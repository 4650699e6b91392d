/* MultiHeadAttention: create and destroy, weights in Keras layout.
 *
 * Keras stores the projection kernels as (D_in, H, head_dim) and the output
 * kernel as (H, value_dim, D_out); row-major, these are exactly the
 * (D_in, H*head_dim) and (H*value_dim, D_out) matrices the matmuls need, and
 * the (H, head_dim) biases are bias rows of H*head_dim. So weights are copied
 * as they are, with no transposition. */
#include <stdlib.h>

#include "core/dtype.h"
#include "core/error.h"
#include "layers/mha_internal.h"

/* The layer's weights as the table walks them. */
static vka_layer_weights weights_of(const vkattn_mha *layer)
{
    vka_layer_weights lw = {.table = &vka_mha_weight_table,
                            .offsets = vka_mha_tensor_offsets,
                            .options = vka_mha_weight_options(&layer->d),
                            .tensors = (void *)(uintptr_t)&layer->w,
                            .init = layer->d.init};
    vka_mha_weight_axes(&layer->d, lw.axes);
    return lw;
}

vkattn_result vka_mha_create_dims(vkattn_context *ctx, const char *caller, const vka_mha_dims *dp,
                                  vkattn_dtype dtype, vkattn_mha **out)
{
    *out = NULL;
    vkattn_result r0 = vka_dtype_check_desc(ctx, caller, dtype, VKA_DTYPE_USE_LAYER);
    if (r0)
        return r0;
    vkattn_mha *layer = calloc(1, sizeof *layer);
    if (!layer)
        return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", caller);
    const vka_mha_dims d = *dp;
    layer->ctx = ctx;
    layer->d = d;
    layer->dtype = dtype;
    /* the activations follow the layer's type; the combined mask, the
     * log-sum-exp and the backward's intermediate gradients stay f32 (an f16
     * layer's gradients are rounded once, into the caller's tensors) */
    for (int i = 0; i < MHA_SLOTS; i++)
        layer->scratch[i].dtype = i == MHA_MASK || i >= MHA_LSE ? VKATTN_DTYPE_F32 : dtype;
    vka_layer_weights lw = weights_of(layer);
    vkattn_result r = vka_layer_weights_create(ctx, caller, &lw, dtype);
    if (r || (r = vka_mha_head_prep_create(layer, caller)))
        goto fail;
    *out = layer;
    return VKATTN_SUCCESS;

fail:
    vkattn_mha_destroy(layer);
    return r;
}

vkattn_result vkattn_mha_create(vkattn_context *ctx, const vkattn_mha_desc *desc,
                                vkattn_mha **out)
{
    VKA_CREATE_ARGS(ctx, out);
    vka_mha_dims d;
    vkattn_result r = vka_mha_resolve_desc(ctx, __func__, desc, &d);
    return r ? r : vka_mha_create_dims(ctx, __func__, &d, desc->dtype, out);
}

void vkattn_mha_destroy(vkattn_mha *layer)
{
    if (!layer)
        return;
    vka_layer_weights lw = weights_of(layer);
    vka_layer_weights_destroy(&lw);
    vkattn_tensor_destroy(layer->rope_inv_freq);
    for (int i = 0; i < MHA_SLOTS; i++)
        vka_scratch_release(&layer->scratch[i]);
    free(layer);
}

vkattn_result vka_mha_set_weights_as(const char *caller, vkattn_mha *layer,
                                     const vkattn_mha_weights *w)
{
    VKA_REQUIRE_OWNER_AND(caller, layer, layer->ctx, w);
    vka_layer_weights lw = weights_of(layer);
    return vka_layer_weights_set(layer->ctx, caller, &lw, w);
}

vkattn_result vka_mha_get_weights_as(const char *caller, const vkattn_mha *layer,
                                     vkattn_mha_weights *w)
{
    VKA_REQUIRE_OWNER_AND(caller, layer, layer->ctx, w);
    vka_layer_weights lw = weights_of(layer);
    return vka_layer_weights_get(layer->ctx, caller, &lw, w);
}

vkattn_result vkattn_mha_set_weights(vkattn_mha *layer, const vkattn_mha_weights *w)
{
    return vka_mha_set_weights_as(__func__, layer, w);
}

vkattn_result vkattn_mha_get_weights(const vkattn_mha *layer, vkattn_mha_weights *w)
{
    return vka_mha_get_weights_as(__func__, layer, w);
}
