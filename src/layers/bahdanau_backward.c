/* BahdanauAttention's backward (vkattn/layer_backward.h): the projections
 * Pq = query Wq and Pk = key Wk and the scores are recomputed as the forward
 * does, the shared tail gives dS, the additive op's backward gives dPq, dPk
 * and dv (the score kernel's gradient), and the matmul backward carries dPq
 * and dPk to the inputs and the kernels. score_bias's gradient is exactly 0:
 * softmax is shift-invariant. */
#include "vkattn/layer_backward.h"

#include "core/check.h"
#include "core/error.h"
#include "layers/single_internal.h"
#include "ops/elementwise.h"
#include "vk/prepare.h"
#include "vkattn/additive.h"
#include "vkattn/additive_backward.h"
#include "vkattn/matmul.h"
#include "vkattn/matmul_backward.h"
#include "vk/record_mode.h"

vkattn_result vkattn_bahdanau_get_weight_tensors(vkattn_bahdanau *layer,
                                                 vkattn_bahdanau_weight_tensors *out)
{
    VKA_REQUIRE_OWNER_AND(__func__, layer, vka_bahdanau_parts_of(layer).ctx, out);
    const vka_bahdanau_parts p = vka_bahdanau_parts_of(layer);
    *out = (vkattn_bahdanau_weight_tensors){.query_kernel = p.wq, .key_kernel = p.wk,
                                            .score_kernel = p.v, .score_bias = p.score_bias};
    return VKATTN_SUCCESS;
}

/* out (rows, U) = x (rows, D) @ kernel (D, U), as the forward projects. */
static vkattn_matmul_params projection(uint64_t rows, uint32_t dim, uint32_t units)
{
    return (vkattn_matmul_params){.m = (uint32_t)rows, .n = units, .k = dim};
}

static vkattn_result record_all(const vka_bahdanau_parts *p, VkCommandBuffer cmd,
                                const char *fn, const vkattn_layer_call *call,
                                const vkattn_layer_io *io, const vkattn_layer_grads *grads,
                                const vkattn_bahdanau_weight_tensors *grad_w)
{
    vkattn_context *ctx = p->ctx;
    vka_layer_kept *kept = *p->kept;
    const vka_layer_widths *d = &p->w;
    const vka_layer_shape shape = {.dq = d->dq, .dk = d->dk, .dv = d->dv, .dout = d->dv,
                                   .heads = 1, .data_dtype = p->desc->dtype};
    const vkattn_bahdanau_weight_tensors none = {0};
    const vkattn_bahdanau_weight_tensors *gw = grad_w ? grad_w : &none;
    vka_weight_slots ws;
    vka_layer_weight_slots(&p->weights, gw, &ws);
    vka_mask_layout ml = {0};
    vka_layer_tail t;
    vkattn_tensor *dkey;
    vkattn_result r;
    if ((r = vka_layer_backward_check(ctx, fn, kept, &shape, call, io, grads, ws.grads, ws.n,
                                      ws.weights, ws.n, &ml)) ||
        (r = vka_layer_check_unfused_path(ctx, fn, call, "BahdanauAttention")))
        return r;
    uint64_t rq, rk, nq, nk;
    if ((r = vka_bahdanau_projection_sizes(ctx, fn, call, d->units, &rq, &rk, &nq, &nk)))
        return r;
    vkattn_tensor *key = io->key ? io->key : io->value;
    vkattn_tensor *pq, *pk, *dpq = NULL, *dpk = NULL;
    const bool want_q = grads->grad_query || gw->query_kernel;
    if ((r = vka_layer_tail_begin(ctx, cmd, fn, kept, call, io, grads, &ml, d->dv, &t)) ||
        (r = vka_layer_key_grad_target(ctx, fn, kept, call, io, grads, d->dk, &dkey)) ||
        (r = vka_scratch_get(ctx, fn, &kept->q, nq, &pq)) ||
        (r = vka_scratch_get(ctx, fn, &kept->k, nk, &pk)) ||
        (want_q && (r = vka_scratch_get(ctx, fn, &kept->dq, nq, &dpq))) ||
        ((dkey || gw->key_kernel) && (r = vka_scratch_get(ctx, fn, &kept->dk_scaled, nk, &dpk))))
        return r;
    const vkattn_matmul_params mq = projection(rq, d->dq, d->units);
    const vkattn_matmul_params mk = projection(rk, d->dk, d->units);
    const vkattn_additive_params ap = {
        .batch = call->batch, .tq = call->tq, .tv = call->tv, .dim = d->units,
        .has_scale_vector = true,
    };
    if ((r = vkattn_matmul_record(ctx, cmd, &mq,
                                  &(vkattn_matmul_io){.a = io->query, .b = p->wq, .c = pq})) ||
        (r = vkattn_matmul_record(ctx, cmd, &mk,
                                  &(vkattn_matmul_io){.a = key, .b = p->wk, .c = pk})) ||
        (r = vkattn_additive_record(ctx, cmd, &ap,
                                    &(vkattn_additive_io){.q = pq, .k = pk, .scale = p->v,
                                                          .scores = t.scores})) ||
        (r = vka_layer_tail_backward(ctx, cmd, fn, kept, call, io, grads, d->dv,
                                     p->desc->dropout, &t)))
        return r;
    if ((dpq || dpk || gw->score_kernel) &&
        (r = vkattn_additive_backward_record(
             ctx, cmd, &ap,
             &(vkattn_additive_backward_io){.q = pq, .k = pk, .scale = p->v,
                                            .grad_scores = t.scores, .grad_q = dpq,
                                            .grad_k = dpk, .grad_scale = gw->score_kernel})))
        return r;
    if (dpq && (r = vkattn_matmul_backward_record(
                    ctx, cmd, &mq,
                    &(vkattn_matmul_backward_io){.a = io->query, .b = p->wq, .grad_c = dpq,
                                                 .grad_a = grads->grad_query,
                                                 .grad_b = gw->query_kernel})))
        return r;
    if (dpk && (r = vkattn_matmul_backward_record(
                    ctx, cmd, &mk,
                    &(vkattn_matmul_backward_io){.a = key, .b = p->wk, .grad_c = dpk,
                                                 .grad_a = dkey, .grad_b = gw->key_kernel})))
        return r;
    if (gw->score_bias &&
        (r = vka_fill_record(ctx, cmd, fn, "grad_w->score_bias", 1, 0.0f, gw->score_bias)))
        return r;
    return vka_layer_value_grad_finish(ctx, cmd, fn, call, io, grads, d->dv, &t, dkey);
}

/* record_all as vka_record_dry_first calls it. */
static vkattn_result record_call(vkattn_context *ctx, VkCommandBuffer cmd, const void *args)
{
    const vka_backward_call *a = args;
    return record_all(a->parts, cmd, a->fn, a->call, a->io, a->grads, a->grad_w);
}

vkattn_result vkattn_bahdanau_backward_record(vkattn_bahdanau *layer, VkCommandBuffer cmd,
                                              const vkattn_layer_call *call,
                                              const vkattn_layer_io *io,
                                              const vkattn_layer_grads *grads,
                                              const vkattn_bahdanau_weight_tensors *grad_w)
{
    VKA_RECORD_MODES(layer, vka_bahdanau_parts_of(layer).ctx, cmd,
                     vkattn_bahdanau_backward_record(layer, cmd, call, io, grads, grad_w));
    const vka_bahdanau_parts p = vka_bahdanau_parts_of(layer);
    const vka_backward_call a = {&p, __func__, call, io, grads, grad_w};
    return vka_record_dry_first(p.ctx, cmd, record_call, &a);
}
