/* The table-driven weight loops of layers/layer_weights.h. */
#include "layers/layer_weights.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/error.h"
#include "layers/layer_util.h"

#define OFFSET(type, m, ...) offsetof(type, m),
#define MHA_OFFSET(...) OFFSET(vkattn_mha_weight_tensors, __VA_ARGS__)
#define ATTENTION_OFFSET(...) OFFSET(vkattn_attention_weight_tensors, __VA_ARGS__)
#define ADDITIVE_OFFSET(...) OFFSET(vkattn_additive_attention_weight_tensors, __VA_ARGS__)
#define BAHDANAU_OFFSET(...) OFFSET(vkattn_bahdanau_weight_tensors, __VA_ARGS__)
const size_t vka_mha_tensor_offsets[] = {VKA_MHA_WEIGHTS(MHA_OFFSET)};
const size_t vka_attention_tensor_offsets[] = {VKA_ATTENTION_WEIGHTS(ATTENTION_OFFSET)};
const size_t vka_additive_tensor_offsets[] = {VKA_ADDITIVE_WEIGHTS(ADDITIVE_OFFSET)};
const size_t vka_bahdanau_tensor_offsets[] = {VKA_BAHDANAU_WEIGHTS(BAHDANAU_OFFSET)};

/* The host data of w in a host weights struct: its array, or the scalar
 * itself (rank 0). */
static float *host_data(const void *host, const vka_weight_info *w)
{
    return w->rank ? *(float **)vka_weight_host(host, w) : (float *)vka_weight_host(host, w);
}

vka_layer_weights vka_single_layer_weights(const vka_weight_table *table, const size_t *offsets,
                                           uint32_t options, const vka_layer_widths *widths,
                                           const void *tensors)
{
    vka_layer_weights lw = {.table = table, .offsets = offsets, .options = options,
                            .tensors = (void *)(uintptr_t)tensors};
    vka_layer_weight_axes(widths, lw.axes);
    return lw;
}

/* The initializer weight w starts with: its entry's, else the desc's
 * choice for its kind, else Keras's default for that kind. */
static vkattn_initializer initializer_of(const vka_weight_info *w, const vka_weight_init *init)
{
    if (w->device & VKA_DEVICE_ONES)
        return VKATTN_INIT_ONES;
    if (w->device & VKA_DEVICE_ZEROS)
        return VKATTN_INIT_ZEROS;
    if (w->device & VKA_DEVICE_KERNEL)
        return init->kernel ? init->kernel : VKATTN_INIT_GLOROT_UNIFORM;
    return init->bias ? init->bias : VKATTN_INIT_ZEROS;
}

/* Draws weight i into t, CHUNK elements at a time (a bounded host buffer
 * whatever the weight's size). */
static vkattn_result draw(vkattn_context *ctx, const char *caller, const vka_layer_weights *lw,
                          uint32_t i, vkattn_initializer kind, uint64_t n, vkattn_tensor *t)
{
    enum { CHUNK = 16384 };
    uint64_t fan_in, fan_out;
    vka_weight_fans(&lw->table->w[i], lw->axes, &fan_in, &fan_out);
    float *buf = malloc((n < CHUNK ? n : CHUNK) * sizeof *buf);
    if (!buf)
        return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", caller);
    vkattn_result r = VKATTN_SUCCESS;
    for (uint64_t first = 0; first < n && !r; first += CHUNK) {
        const uint64_t k = n - first < CHUNK ? n - first : CHUNK;
        vka_weight_init_values(kind, fan_in, fan_out, lw->init.seed, i, first, k, buf);
        r = vkattn_tensor_upload(t, buf, first, k);
    }
    free(buf);
    return r;
}

vkattn_result vka_layer_weights_create(vkattn_context *ctx, const char *caller,
                                       const vka_layer_weights *lw, vkattn_dtype dtype)
{
    const vka_weight_table *t = lw->table;
    for (uint32_t i = 0; i < t->count; i++) {
        if (!vka_weight_exists(&t->w[i], lw->options))
            continue;
        const uint8_t dev = t->w[i].device;
        const vkattn_initializer kind = initializer_of(&t->w[i], &lw->init);
        const bool constant = kind == VKATTN_INIT_ZEROS || kind == VKATTN_INIT_ONES;
        uint64_t dims[3];
        const uint64_t n = vka_weight_shape(&t->w[i], lw->axes, dims);
        vkattn_tensor **dst = vka_weight_tensor(lw->tensors, lw->offsets, i);
        vkattn_result r = vka_layer_weight_create_typed(
            ctx, caller, n, dev & VKA_DEVICE_F32 ? VKATTN_DTYPE_F32 : dtype,
            kind == VKATTN_INIT_ONES ? 1.0f : 0.0f, dst);
        if (!r && !constant)
            r = draw(ctx, caller, lw, i, kind, n, *dst);
        if (r)
            return r;
    }
    return VKATTN_SUCCESS;
}

void vka_layer_weights_destroy(const vka_layer_weights *lw)
{
    for (uint32_t i = 0; i < lw->table->count; i++) {
        vkattn_tensor **t = vka_weight_tensor(lw->tensors, lw->offsets, i);
        vkattn_tensor_destroy(*t);
        *t = NULL;
    }
}

vkattn_result vka_layer_weights_set(vkattn_context *ctx, const char *caller,
                                    const vka_layer_weights *lw, const void *host)
{
    const vka_weight_table *t = lw->table;
    char name[64];
    /* check every weight before uploading any, so a failure changes nothing */
    for (uint32_t i = 0; i < t->count; i++) {
        const vka_weight_info *w = &t->w[i];
        if (!vka_weight_exists(w, lw->options))
            continue;
        snprintf(name, sizeof name, "w->%s", w->member);
        if (w->rank == 0) {
            vkattn_result r = vka_layer_check_scalar(ctx, caller, name, *host_data(host, w));
            if (r)
                return r;
        } else if (!host_data(host, w)) {
            return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL%s", caller, name,
                            w->needs & VKA_WEIGHT_IF_GATE   ? " (the layer has use_gate)"
                            : w->needs & VKA_WEIGHT_IF_BIAS ? " (the layer uses biases)"
                                                            : "");
        }
    }
    for (uint32_t i = 0; i < t->count; i++) {
        const vka_weight_info *w = &t->w[i];
        vkattn_tensor *dst = *vka_weight_tensor(lw->tensors, lw->offsets, i);
        if (!dst)
            continue; /* a weight this desc does not have */
        uint64_t dims[3];
        snprintf(name, sizeof name, "w->%s", w->member);
        vkattn_result r = vka_layer_weight_set(ctx, caller, dst, host_data(host, w),
                                               vka_weight_shape(w, lw->axes, dims), name);
        if (r)
            return r;
    }
    return VKATTN_SUCCESS;
}

vkattn_result vka_layer_weights_get(vkattn_context *ctx, const char *caller,
                                    const vka_layer_weights *lw, void *host)
{
    const vka_weight_table *t = lw->table;
    for (uint32_t i = 0; i < t->count; i++) {
        const vka_weight_info *w = &t->w[i];
        vkattn_tensor *src = *vka_weight_tensor(lw->tensors, lw->offsets, i);
        if (!src)
            continue; /* a weight this desc does not have: the caller's array is left alone */
        uint64_t dims[3];
        vkattn_result r = vka_layer_weight_get(ctx, caller, src, host_data(host, w),
                                               vka_weight_shape(w, lw->axes, dims));
        if (r)
            return r;
    }
    return VKATTN_SUCCESS;
}

void vka_layer_weight_slots(const vka_layer_weights *lw, const void *grad_w,
                            vka_weight_slots *s)
{
    const vka_weight_table *t = lw->table;
    s->n = t->count;
    for (uint32_t i = 0; i < t->count; i++) {
        const vka_weight_info *w = &t->w[i];
        uint64_t dims[3];
        snprintf(s->grad_names[i], sizeof s->grad_names[i], "grad_w->%s", w->member);
        snprintf(s->weight_names[i], sizeof s->weight_names[i], "the layer's %s", w->member);
        s->grads[i] = (vka_grad_slot){
            .t = grad_w ? *vka_weight_tensor(grad_w, lw->offsets, i) : NULL,
            .count = vka_weight_exists(w, lw->options) ? vka_weight_shape(w, lw->axes, dims) : 0,
            .name = s->grad_names[i]};
        s->weights[i] = (vka_named_tensor){*vka_weight_tensor(lw->tensors, lw->offsets, i),
                                           s->weight_names[i]};
    }
}
