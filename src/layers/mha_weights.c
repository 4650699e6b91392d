/* MultiHeadAttention: create and destroy, weights in Keras layout.
 *
 * Keras stores the projection kernels as (D_in, H, head_dim) and the output
 * kernel as (H, value_dim, D_out); row-major, these are exactly the
 * (D_in, H*head_dim) and (H*value_dim, D_out) matrices the matmuls need, and
 * the (H, head_dim) biases are bias rows of H*head_dim. So weights are copied
 * as they are, with no transposition. */
#include <stdlib.h>

#include "core/error.h"
#include "layers/mha_internal.h"

static vkattn_result dense_create(vkattn_context *ctx, const char *caller,
                                  uint64_t kernel_count, uint64_t bias_count, bool use_bias,
                                  vkattn_dtype dtype, mha_dense *out)
{
    vkattn_result r;
    out->kernel_count = kernel_count;
    out->bias_count = bias_count;
    if ((r = vka_layer_weight_create_typed(ctx, caller, kernel_count, dtype, 0.0f, &out->kernel)))
        return r;
    if (use_bias && (r = vka_layer_weight_create_typed(ctx, caller, bias_count, dtype, 0.0f, &out->bias)))
        return r;
    return VKATTN_SUCCESS;
}

static void dense_destroy(mha_dense *d)
{
    vkattn_tensor_destroy(d->kernel);
    vkattn_tensor_destroy(d->bias);
}

vkattn_result vka_mha_create_dims(vkattn_context *ctx, const char *caller, const vka_mha_dims *dp,
                                  vkattn_dtype dtype, vkattn_mha **out)
{
    *out = NULL;
    if (dtype != VKATTN_DTYPE_F32 && dtype != VKATTN_DTYPE_F16)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: desc->dtype is %d; must be VKATTN_DTYPE_F32 or VKATTN_DTYPE_F16",
                        caller, (int)dtype);
    vkattn_mha *layer = calloc(1, sizeof *layer);
    if (!layer)
        return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", caller);
    const vka_mha_dims d = *dp;
    layer->ctx = ctx;
    layer->d = d;
    layer->dtype = dtype;
    /* the activations follow the layer's type; the combined mask, the
     * log-sum-exp and the gradients (the backward is f32) stay f32 */
    for (int i = 0; i < MHA_SLOTS; i++)
        layer->scratch[i].dtype = i == MHA_MASK || i >= MHA_LSE ? VKATTN_DTYPE_F32 : dtype;
    vka_mha_weight_counts n;
    vka_mha_weight_counts_of(&d, &n);
    vkattn_result r;
    if ((r = dense_create(ctx, caller, n.query_kernel, n.query_bias, d.use_bias, dtype,
                          &layer->query)) ||
        (r = dense_create(ctx, caller, n.key_kernel, n.key_bias, d.use_bias, dtype,
                          &layer->key)) ||
        (r = dense_create(ctx, caller, n.value_kernel, n.value_bias, d.use_bias, dtype,
                          &layer->value)) ||
        (r = dense_create(ctx, caller, n.output_kernel, n.output_bias, d.use_bias, dtype,
                          &layer->output)) ||
        (d.use_gate && (r = dense_create(ctx, caller, n.gate_kernel, n.gate_bias, d.use_bias,
                                         dtype, &layer->gate))))
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
    if (!out)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: out is NULL", __func__);
    *out = NULL;
    if (!ctx)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: ctx is NULL", __func__);
    vka_mha_dims d;
    vkattn_result r = vka_mha_resolve_desc(ctx, __func__, desc, &d);
    return r ? r : vka_mha_create_dims(ctx, __func__, &d, desc->dtype, out);
}

void vkattn_mha_destroy(vkattn_mha *layer)
{
    if (!layer)
        return;
    dense_destroy(&layer->query);
    dense_destroy(&layer->key);
    dense_destroy(&layer->value);
    dense_destroy(&layer->output);
    dense_destroy(&layer->gate);
    for (int i = 0; i < MHA_SLOTS; i++)
        vka_scratch_release(&layer->scratch[i]);
    free(layer);
}

/* The ten arrays of a weights struct with their names, in one table so that
 * set and get walk them identically. */
typedef struct weight_ref {
    const char *name;
    float *host;
    mha_dense *dense;
    bool is_bias;
    bool is_gate; /* used only with use_gate */
} weight_ref;

enum { N_WEIGHTS = 10 };

static void weight_table(vkattn_mha *layer, const vkattn_mha_weights *w, weight_ref t[N_WEIGHTS])
{
    t[0] = (weight_ref){"w->query_kernel", w->query_kernel, &layer->query, false, false};
    t[1] = (weight_ref){"w->query_bias", w->query_bias, &layer->query, true, false};
    t[2] = (weight_ref){"w->key_kernel", w->key_kernel, &layer->key, false, false};
    t[3] = (weight_ref){"w->key_bias", w->key_bias, &layer->key, true, false};
    t[4] = (weight_ref){"w->value_kernel", w->value_kernel, &layer->value, false, false};
    t[5] = (weight_ref){"w->value_bias", w->value_bias, &layer->value, true, false};
    t[6] = (weight_ref){"w->output_kernel", w->output_kernel, &layer->output, false, false};
    t[7] = (weight_ref){"w->output_bias", w->output_bias, &layer->output, true, false};
    t[8] = (weight_ref){"w->gate_kernel", w->gate_kernel, &layer->gate, false, true};
    t[9] = (weight_ref){"w->gate_bias", w->gate_bias, &layer->gate, true, true};
}

vkattn_result vka_mha_set_weights_as(const char *caller, vkattn_mha *layer,
                                     const vkattn_mha_weights *w)
{
    if (!layer || !w)
        return vka_fail(layer ? layer->ctx : NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL",
                        caller, !layer ? "layer" : "w");
    weight_ref t[N_WEIGHTS];
    weight_table(layer, w, t);
    /* check every array before uploading any, so a failure changes nothing */
    for (int i = 0; i < N_WEIGHTS; i++)
        if (!t[i].host && (!t[i].is_bias || layer->d.use_bias) &&
            (!t[i].is_gate || layer->d.use_gate))
            return vka_fail(layer->ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL%s", caller,
                            t[i].name,
                            t[i].is_gate   ? " (the layer has use_gate)"
                            : t[i].is_bias ? " (the layer uses biases)"
                                           : "");
    for (int i = 0; i < N_WEIGHTS; i++) {
        vkattn_tensor *dst = t[i].is_bias ? t[i].dense->bias : t[i].dense->kernel;
        if (!dst)
            continue; /* a bias of a no_bias layer, the gate of a layer without one */
        uint64_t count = t[i].is_bias ? t[i].dense->bias_count : t[i].dense->kernel_count;
        vkattn_result r =
            vka_layer_weight_set(layer->ctx, caller, dst, t[i].host, count, t[i].name);
        if (r)
            return r;
    }
    return VKATTN_SUCCESS;
}

vkattn_result vka_mha_get_weights_as(const char *caller, const vkattn_mha *layer,
                                     vkattn_mha_weights *w)
{
    if (!layer || !w)
        return vka_fail(layer ? layer->ctx : NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL",
                        caller, !layer ? "layer" : "w");
    weight_ref t[N_WEIGHTS];
    /* the tensors are read, not changed; the table just holds non-const pointers */
    weight_table((vkattn_mha *)layer, w, t);
    for (int i = 0; i < N_WEIGHTS; i++) {
        vkattn_tensor *src = t[i].is_bias ? t[i].dense->bias : t[i].dense->kernel;
        if (!src)
            continue; /* a bias of a no_bias layer, the gate of a layer without one: the
                       * caller's array is left alone */
        uint64_t count = t[i].is_bias ? t[i].dense->bias_count : t[i].dense->kernel_count;
        vkattn_result r = vka_layer_weight_get(layer->ctx, caller, src, t[i].host, count);
        if (r)
            return r;
    }
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_mha_set_weights(vkattn_mha *layer, const vkattn_mha_weights *w)
{
    return vka_mha_set_weights_as(__func__, layer, w);
}

vkattn_result vkattn_mha_get_weights(const vkattn_mha *layer, vkattn_mha_weights *w)
{
    return vka_mha_get_weights_as(__func__, layer, w);
}
