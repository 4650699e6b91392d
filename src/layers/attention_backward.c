/* keras.layers.Attention's backward (vkattn/layer_backward.h): the scores
 * are recomputed from the query, the key and the weights as the forward
 * computes them, on scaled copies Qs = scale * query, Ks = scale * key
 * (use_scale), then the shared tail gives dS, and:
 *   dot:    S = Qs K^T            dQs = dS K, dK = dS^T Qs
 *   concat: S = sum_d csw tanh(Qs_d + Ks_d)   (the additive op's backward,
 *           with csw expanded to its scale vector)
 *   dquery = scale * dQs, dkey = scale * dKs (concat) or dK (dot),
 *   dscale = sum(dQs * query) (+ sum(dKs * key) in concat mode),
 *   dcsw = the additive op's scale-vector gradient summed over its dims. */
#include "vkattn/layer_backward.h"

#include "core/error.h"
#include "layers/single_internal.h"
#include "ops/elementwise.h"
#include "ops/scale.h"
#include "vk/prepare.h"
#include "vkattn/additive.h"
#include "vkattn/additive_backward.h"
#include "vkattn/matmul.h"
#include "vk/record_mode.h"

vkattn_result vkattn_attention_get_weight_tensors(vkattn_attention *layer,
                                                  vkattn_attention_weight_tensors *out)
{
    VKA_REQUIRE_OWNER_AND(__func__, layer, vka_attention_parts_of(layer).ctx, out);
    const vka_attention_parts p = vka_attention_parts_of(layer);
    *out = (vkattn_attention_weight_tensors){.scale = p.scale, .concat_score_weight = p.csw};
    return VKATTN_SUCCESS;
}

/* The state of one backward record. */
typedef struct bwd {
    vka_attention_parts p;
    vka_layer_kept *kept;
    VkCommandBuffer cmd;
    const char *fn;
    const vkattn_layer_call *call;
    const vkattn_layer_io *io;
    const vkattn_layer_grads *grads;
    const vkattn_attention_weight_tensors *gw;
    vkattn_tensor *key;      /* io->key, or the value */
    uint64_t nq, nk;         /* elements of query and key */
} bwd;

/* *out = scale * in into scratch `s`, or `in` itself without use_scale. */
static vkattn_result scaled(bwd *b, vka_scratch *s, uint64_t n, vkattn_tensor *in,
                            const char *what, vkattn_tensor **out)
{
    *out = in;
    if (!b->p.desc->use_scale)
        return VKATTN_SUCCESS;
    vkattn_result r = vka_scratch_get(b->p.ctx, b->fn, s, n, out);
    if (r != VKATTN_SUCCESS)
        return r;
    return vka_scale_record(b->p.ctx, b->cmd, b->fn, what, n, b->p.scale, in, *out);
}

/* The gradient of a scaled input: `dst` = scale * dScaled when use_scale
 * (dScaled in scratch `s`), else the gradient is written to dst directly:
 * *target is where the op writes (NULL: not wanted at all). */
static vkattn_result scaled_grad_target(bwd *b, vka_scratch *s, uint64_t n, vkattn_tensor *dst,
                                        vkattn_tensor **target)
{
    const bool need = dst || (b->p.desc->use_scale && b->gw && b->gw->scale);
    *target = NULL;
    if (!need)
        return VKATTN_SUCCESS;
    if (!b->p.desc->use_scale) {
        *target = dst;
        return VKATTN_SUCCESS;
    }
    return vka_scratch_get(b->p.ctx, b->fn, s, n, target);
}

static vkattn_result unscale(bwd *b, uint64_t n, vkattn_tensor *dscaled, vkattn_tensor *dst,
                             const char *what)
{
    if (!b->p.desc->use_scale || !dst)
        return VKATTN_SUCCESS;
    return vka_scale_record(b->p.ctx, b->cmd, b->fn, what, n, b->p.scale, dscaled, dst);
}

/* dot mode: raw scores S[b] = Qs[b] K[b]^T, then the tail, then dQs and dK. */
static vkattn_result record_dot(bwd *b, vka_layer_tail *t, vkattn_tensor *dkey)
{
    vkattn_context *ctx = b->p.ctx;
    const uint32_t B = b->call->batch, tq = b->call->tq, tv = b->call->tv, d = b->p.w.dq;
    vkattn_tensor *qs, *dqs;
    vkattn_result r;
    if ((r = scaled(b, &b->kept->q, b->nq, b->io->query, "io->query", &qs)))
        return r;
    const vkattn_matmul_params sp = {
        .batch = B, .m = tq, .n = tv, .k = d, .transpose_b = true,
        .a = {.batch_stride = (uint64_t)tq * d}, .b = {.batch_stride = (uint64_t)tv * d},
    };
    if ((r = vkattn_matmul_record(ctx, b->cmd, &sp, &(vkattn_matmul_io){.a = qs, .b = b->key,
                                                                         .c = t->scores})) ||
        (r = vka_layer_tail_backward(ctx, b->cmd, b->fn, b->kept, b->call, b->io, b->grads,
                                     b->p.w.dv, b->p.desc->dropout, t)) ||
        (r = scaled_grad_target(b, &b->kept->dq, b->nq, b->grads->grad_query, &dqs)))
        return r;
    if (dqs) { /* dQs[b] = dS[b] (Tq x Tv) @ K[b] (Tv x d) */
        const vkattn_matmul_params mp = {
            .batch = B, .m = tq, .n = d, .k = tv,
            .a = {.batch_stride = (uint64_t)tq * tv}, .b = {.batch_stride = (uint64_t)tv * d},
        };
        if ((r = vkattn_matmul_record(ctx, b->cmd, &mp,
                                      &(vkattn_matmul_io){.a = t->scores, .b = b->key,
                                                          .c = dqs})))
            return r;
    }
    if (dkey) { /* dK[b] = dS[b]^T (Tv x Tq) @ Qs[b] (Tq x d) */
        const vkattn_matmul_params mp = {
            .batch = B, .m = tv, .n = d, .k = tq, .transpose_a = true,
            .a = {.batch_stride = (uint64_t)tq * tv}, .b = {.batch_stride = (uint64_t)tq * d},
        };
        if ((r = vkattn_matmul_record(ctx, b->cmd, &mp,
                                      &(vkattn_matmul_io){.a = t->scores, .b = qs, .c = dkey})))
            return r;
    }
    if ((r = unscale(b, b->nq, dqs, b->grads->grad_query, "grads->grad_query")))
        return r;
    if (b->gw && b->gw->scale) { /* S is linear in scale: dscale = sum(dQs * query) */
        r = b->p.desc->use_scale
                ? vka_layer_dot_record(ctx, b->cmd, b->fn, b->nq, dqs, b->io->query, b->gw->scale)
                : vka_fill_record(ctx, b->cmd, b->fn, "grad_w->scale", 1, 0.0f, b->gw->scale);
        if (r)
            return r;
    }
    if (b->gw && b->gw->concat_score_weight)
        return vka_fill_record(ctx, b->cmd, b->fn, "grad_w->concat_score_weight", 1, 0.0f,
                               b->gw->concat_score_weight);
    return VKATTN_SUCCESS;
}

/* concat mode: the additive op on Qs, Ks and csw's vector, its backward. */
static vkattn_result record_concat(bwd *b, vka_layer_tail *t, vkattn_tensor *dkey)
{
    vkattn_context *ctx = b->p.ctx;
    const uint32_t d = b->p.w.dq;
    vkattn_tensor *qs, *ks, *vec, *dqs, *dks, *dvec = NULL;
    vkattn_result r;
    if ((r = scaled(b, &b->kept->q, b->nq, b->io->query, "io->query", &qs)) ||
        (r = scaled(b, &b->kept->k, b->nk, b->key, b->io->key ? "io->key" : "io->value", &ks)) ||
        (r = vka_scratch_get(ctx, b->fn, &b->kept->vec, d, &vec)) ||
        (r = vka_scale_record(ctx, b->cmd, b->fn, "the concat score weights", d, b->p.csw,
                              b->p.ones, vec)))
        return r;
    const vkattn_additive_params ap = {
        .batch = b->call->batch, .tq = b->call->tq, .tv = b->call->tv, .dim = d,
        .has_scale_vector = true,
    };
    const bool want_csw = b->gw && b->gw->concat_score_weight;
    if ((r = vkattn_additive_record(ctx, b->cmd, &ap,
                                    &(vkattn_additive_io){.q = qs, .k = ks, .scale = vec,
                                                          .scores = t->scores})) ||
        (r = vka_layer_tail_backward(ctx, b->cmd, b->fn, b->kept, b->call, b->io, b->grads,
                                     b->p.w.dv, b->p.desc->dropout, t)) ||
        (r = scaled_grad_target(b, &b->kept->dq, b->nq, b->grads->grad_query, &dqs)) ||
        (r = scaled_grad_target(b, &b->kept->dk_scaled, b->nk, dkey, &dks)) ||
        (want_csw && (r = vka_scratch_get(ctx, b->fn, &b->kept->dvec, d, &dvec))))
        return r;
    if ((dqs || dks || dvec) &&
        (r = vkattn_additive_backward_record(
             ctx, b->cmd, &ap,
             &(vkattn_additive_backward_io){.q = qs, .k = ks, .scale = vec,
                                            .grad_scores = t->scores, .grad_q = dqs,
                                            .grad_k = dks, .grad_scale = dvec})))
        return r;
    if ((r = unscale(b, b->nq, dqs, b->grads->grad_query, "grads->grad_query")) ||
        (r = unscale(b, b->nk, dks, dkey, "the key's gradient")))
        return r;
    if (b->gw && b->gw->scale) {
        if (!b->p.desc->use_scale) {
            r = vka_fill_record(ctx, b->cmd, b->fn, "grad_w->scale", 1, 0.0f, b->gw->scale);
        } else { /* dscale = sum(dQs * query) + sum(dKs * key) */
            vkattn_tensor *pq, *pk;
            if ((r = vka_scratch_get(ctx, b->fn, &b->kept->part1, 1, &pq)) ||
                (r = vka_scratch_get(ctx, b->fn, &b->kept->part2, 1, &pk)) ||
                (r = vka_layer_dot_record(ctx, b->cmd, b->fn, b->nq, dqs, b->io->query, pq)) ||
                (r = vka_layer_dot_record(ctx, b->cmd, b->fn, b->nk, dks, b->key, pk)))
                return r;
            r = vka_add_record(ctx, b->cmd, b->fn, "grad_w->scale", 1, pq, pk, b->gw->scale);
        }
        if (r)
            return r;
    }
    if (want_csw) /* dcsw = sum_d dvec[d]: ones (1 x d) @ dvec (d x 1) */
        return vka_layer_dot_record(ctx, b->cmd, b->fn, d, b->p.ones, dvec,
                                    b->gw->concat_score_weight);
    return VKATTN_SUCCESS;
}

/* The whole backward into cmd (vka_record_dry_first runs it dry first). */
static vkattn_result record_all(vkattn_context *ctx, VkCommandBuffer cmd, const void *b_)
{
    bwd pass = *(const bwd *)b_;
    bwd *b = &pass;
    b->cmd = cmd;
    vka_layer_tail t;
    vkattn_tensor *dkey;
    vka_mask_layout ml = {0};
    const vka_layer_shape shape = {.dq = b->p.w.dq, .dk = b->p.w.dk, .dv = b->p.w.dv,
                                   .dout = b->p.w.dv, .heads = 1,
                                   .data_dtype = b->p.desc->dtype};
    vka_weight_slots ws;
    vka_layer_weight_slots(&b->p.weights, b->gw, &ws);
    vkattn_result r;
    if ((r = vka_layer_backward_check(ctx, b->fn, b->kept, &shape, b->call, b->io, b->grads,
                                      ws.grads, ws.n, ws.weights, ws.n, &ml)))
        return r;
    if (b->p.desc->score_mode == VKATTN_SCORE_CONCAT &&
        (r = vka_layer_check_unfused_path(ctx, b->fn, b->call, "Attention's concat mode")))
        return r;
    if ((r = vka_layer_tail_begin(ctx, cmd, b->fn, b->kept, b->call, b->io, b->grads, &ml,
                                  b->p.w.dv, &t)) ||
        (r = vka_layer_key_grad_target(ctx, b->fn, b->kept, b->call, b->io, b->grads,
                                       b->p.w.dk, &dkey)))
        return r;
    r = b->p.desc->score_mode == VKATTN_SCORE_DOT ? record_dot(b, &t, dkey)
                                                  : record_concat(b, &t, dkey);
    if (r != VKATTN_SUCCESS)
        return r;
    return vka_layer_value_grad_finish(ctx, cmd, b->fn, b->call, b->io, b->grads, b->p.w.dv, &t,
                                       dkey);
}

vkattn_result vkattn_attention_backward_record(vkattn_attention *layer, VkCommandBuffer cmd,
                                               const vkattn_layer_call *call,
                                               const vkattn_layer_io *io,
                                               const vkattn_layer_grads *grads,
                                               const vkattn_attention_weight_tensors *grad_w)
{
    VKA_RECORD_MODES(layer, vka_attention_parts_of(layer).ctx, cmd,
                     vkattn_attention_backward_record(layer, cmd, call, io, grads, grad_w));
    const vka_attention_parts p = vka_attention_parts_of(layer);
    bwd b = {.p = p, .kept = *p.kept, .fn = __func__, .call = call, .io = io, .grads = grads,
             .gw = grad_w};
    if (call && io) {
        b.key = io->key ? io->key : io->value;
        b.nq = (uint64_t)call->batch * call->tq * p.w.dq;
        b.nk = (uint64_t)call->batch * call->tv * p.w.dq;
    }
    return vka_record_dry_first(p.ctx, cmd, record_all, &b);
}
