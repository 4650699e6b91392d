/* Bahdanau attention with learned projections (seed 001): two projection
 * matmuls, the additive scoring op with v as its scale vector, then the tail
 * shared by the single-head layers. score_bias is not recorded: softmax is
 * shift-invariant (see vkattn/bahdanau.h). */
#include "vkattn/bahdanau.h"

#include <stdlib.h>

#include "core/check.h"
#include "core/error.h"
#include "layers/layer_util.h"
#include "layers/layer_weights.h"
#include "layers/single_internal.h"
#include "vkattn/additive.h"
#include "vkattn/matmul.h"
#include "vk/record_mode.h"
#include "vk/view.h"

struct vkattn_bahdanau {
    vkattn_context *ctx;
    vkattn_bahdanau_desc desc;
    vka_layer_widths w;
    vkattn_bahdanau_weight_tensors wt; /* score_bias is never read by the forward */
    vka_layer_kept *kept;       /* the last forward, for the backward */
    vka_scratch qp, kp, scores; /* projections (B*Tq, U), (B*Tv, U); scores (B, Tq, Tv) */
    vka_scratch mask;           /* an attention mask expanded to a full key axis */
};

/* The layer's weights as the table walks them. */
static vka_layer_weights weights_of(const vkattn_bahdanau *layer)
{
    vka_layer_weights lw = vka_single_layer_weights(
        &vka_bahdanau_weight_table, vka_bahdanau_tensor_offsets, VKA_WEIGHT_ALWAYS, &layer->w,
        &layer->wt);
    lw.init = (vka_weight_init){layer->desc.kernel_initializer, layer->desc.bias_initializer,
                                layer->desc.initializer_seed};
    return lw;
}

vkattn_result vkattn_bahdanau_create(vkattn_context *ctx, const vkattn_bahdanau_desc *desc,
                                     vkattn_bahdanau **out)
{
    VKA_CREATE_ARGS(ctx, out);
    vka_layer_widths w;
    vkattn_result r = vka_bahdanau_check_desc(ctx, __func__, desc, &w);
    if (r != VKATTN_SUCCESS)
        return r;
    vkattn_bahdanau *layer = calloc(1, sizeof *layer);
    if (!layer)
        return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", __func__);
    *layer = (vkattn_bahdanau){.ctx = ctx, .desc = *desc, .w = w};
    /* f16 and bf16: weights, projections and scores in the dtype; the expanded mask stays f32 */
    const vkattn_dtype dt = desc->dtype;
    layer->qp.dtype = layer->kp.dtype = layer->scores.dtype = dt;
    const vka_layer_weights lw = weights_of(layer);
    if ((r = vka_layer_weights_create(ctx, __func__, &lw, dt))) {
        vkattn_bahdanau_destroy(layer);
        return r;
    }
    *out = layer;
    return VKATTN_SUCCESS;
}

void vkattn_bahdanau_destroy(vkattn_bahdanau *layer)
{
    if (!layer)
        return;
    vka_scratch_release(&layer->qp);
    vka_scratch_release(&layer->kp);
    vka_scratch_release(&layer->scores);
    vka_scratch_release(&layer->mask);
    const vka_layer_weights lw = weights_of(layer);
    vka_layer_weights_destroy(&lw);
    vka_layer_kept_destroy(layer->kept);
    free(layer);
}

vkattn_result vkattn_bahdanau_set_weights(vkattn_bahdanau *layer, const vkattn_bahdanau_weights *w)
{
    VKA_REQUIRE_OWNER_AND(__func__, layer, layer->ctx, w);
    const vka_layer_weights lw = weights_of(layer);
    return vka_layer_weights_set(layer->ctx, __func__, &lw, w);
}

vkattn_result vkattn_bahdanau_get_weights(const vkattn_bahdanau *layer, vkattn_bahdanau_weights *w)
{
    VKA_REQUIRE_OWNER_AND(__func__, layer, layer->ctx, w);
    const vka_layer_weights lw = weights_of(layer);
    return vka_layer_weights_get(layer->ctx, __func__, &lw, w);
}

vka_bahdanau_parts vka_bahdanau_parts_of(vkattn_bahdanau *layer)
{
    return (vka_bahdanau_parts){.ctx = layer->ctx, .desc = &layer->desc, .w = layer->w,
                                .wq = layer->wt.query_kernel, .wk = layer->wt.key_kernel,
                                .v = layer->wt.score_kernel, .score_bias = layer->wt.score_bias,
                                .weights = weights_of(layer), .kept = &layer->kept};
}

/* out (rows, U) = x (rows, D) @ kernel (D, U): one tall matmul over the batch,
 * so a decoder's single query row per batch still fills the tiles. */
static vkattn_result project(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                             uint64_t rows, uint32_t dim, uint32_t units, vkattn_tensor *x,
                             vkattn_tensor *kernel, vkattn_tensor *out)
{
    if (rows > UINT32_MAX)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: %llu projection rows exceed 32-bit indexing", caller,
                        (unsigned long long)rows);
    const vkattn_matmul_params mp = {.m = (uint32_t)rows, .n = units, .k = dim};
    const vkattn_matmul_io mio = {.a = x, .b = kernel, .c = out};
    return vkattn_matmul_record(ctx, cmd, &mp, &mio);
}

vkattn_result vka_bahdanau_projection_sizes(vkattn_context *ctx, const char *fn,
                                            const vkattn_layer_call *call, uint32_t units,
                                            uint64_t *rq, uint64_t *rk, uint64_t *nq, uint64_t *nk)
{
    *rq = (uint64_t)call->batch * call->tq, *rk = (uint64_t)call->batch * call->tv;
    *nq = *nk = 0; /* set on every path: the compiler cannot see vka_fail never returns success */
    if (!vka_mul_u64(*rq, units, nq) || !vka_mul_u64(*rk, units, nk))
        return vka_fail(ctx, VKATTN_ERROR_SIZE_OVERFLOW, "%s: the projections overflow 64 bits",
                        fn);
    if (*rq > UINT32_MAX || *rk > UINT32_MAX)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: %llu projection rows exceed 32-bit indexing", fn,
                        (unsigned long long)(*rq > *rk ? *rq : *rk));
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_bahdanau_record(vkattn_bahdanau *layer, VkCommandBuffer cmd,
                                     const vkattn_layer_call *call, const vkattn_layer_io *io)
{
    VKA_RECORD_MODES(layer, layer->ctx, cmd, vkattn_bahdanau_record(layer, cmd, call, io));
    vkattn_context *ctx = layer->ctx;
    const vka_layer_widths *d = &layer->w;
    const vka_layer_shape shape = {.dq = d->dq, .dk = d->dk, .dv = d->dv, .dout = d->dv,
                                   .heads = 1, .data_dtype = layer->desc.dtype};
    vkattn_result r;
    vka_mask_layout ml = {0};
    vka_layer_mask m;
    if ((r = vka_layer_check_call(ctx, __func__, call)) ||
        (r = vka_layer_check_io(ctx, __func__, call, io, &shape, &ml)) ||
        (r = vka_layer_check_unfused_path(ctx, __func__, call, "BahdanauAttention")))
        return r;
    uint64_t rq, rk, nq, nk;
    if ((r = vka_bahdanau_projection_sizes(ctx, __func__, call, d->units, &rq, &rk, &nq, &nk)))
        return r;
    vkattn_tensor *qp, *kp, *s = io->scores;
    if ((r = vka_scratch_get(ctx, __func__, &layer->qp, nq, &qp)) ||
        (r = vka_scratch_get(ctx, __func__, &layer->kp, nk, &kp)) ||
        (!s && (r = vka_scratch_get(ctx, __func__, &layer->scores,
                                    (uint64_t)call->batch * call->tq * call->tv, &s))) ||
        (r = vka_layer_mask_record(ctx, cmd, __func__, &layer->mask, call, io, &ml, false, &m)))
        return r;
    const vkattn_bahdanau_weight_tensors *wt = &layer->wt;
    if ((r = project(ctx, cmd, __func__, rq, d->dq, d->units, io->query, wt->query_kernel, qp)) ||
        (r = project(ctx, cmd, __func__, rk, d->dk, d->units, io->key ? io->key : io->value,
                     wt->key_kernel, kp)))
        return r;
    const vkattn_additive_params ap = {
        .batch = call->batch, .tq = call->tq, .tv = call->tv, .dim = d->units,
        .has_scale_vector = true,
    };
    const vkattn_additive_io aio = {.q = qp, .k = kp, .scale = wt->score_kernel, .scores = s};
    if ((r = vkattn_additive_record(ctx, cmd, &ap, &aio)) ||
        (r = vka_layer_finish_record(ctx, cmd, __func__, call, io, &m, d->dv, layer->desc.dropout, s)))
        return r;
    return vka_layer_keep(ctx, __func__, &layer->kept, call, io);
}
