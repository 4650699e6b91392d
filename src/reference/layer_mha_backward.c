/* keras.layers.MultiHeadAttention: the CPU reference backward
 * (vkattn/reference_backward.h). The forward is recomputed in double as the
 * forward reference composes it,
 *   Q = xq Wq + bq, K = xk Wk + bk, V = xv Wv + bv      (then split into heads)
 *   [use_qk_norm/use_rope: Q_h, K_h prepared per row (reference/head_prep.h)]
 *   ctx_h = dropout(softmax(Q_h K_h^T / sqrt(key_dim), masks)) V_h
 *   [use_gate: ctx = merge(ctx) * sigmoid(xq Wg + bg)]
 *   out = merge(ctx) Wo + bo
 * keeping the weights and the dropout factors; the backward runs those steps
 * in reverse. The query mask is folded into the attention mask as the
 * forward does (its rows get zero weights, hence no gradient but the output
 * bias's). GroupedQueryAttention is the same with kv_heads K/V heads: each
 * is repeated for its group of query heads, and its gradient is the group's
 * sum. */
#include "reference/layer_grad.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/error.h"
#include "reference/head_prep.h"
#include "reference/layer_ref.h"
#include "shape/mha_shape.h"


/* Every double tensor of one call; x* are inputs (B*T, width), *p the
 * projections (B*T, H*d), *h those split into heads (B, H, T, d). */
typedef struct scratch {
    double *xq, *xk, *xv, *wq, *wk, *wv, *wo;
    double *qp, *kp, *vp, *qh, *kh, *vh, *s, *ctx;
    double *dout, *dctx, *dctxh, *ds, *dqh, *dkh, *dvh, *dqp, *dkp, *dvp;
    double *dxq, *dxk, *dxv, *dwq, *dwk, *dwv, *dwo, *dbq, *dbk, *dbv, *dbo;
    /* use_gate: its kernel, pre-activation, sigmoid, the gated context and
     * their gradients (each 1 double without the gate) */
    double *wg, *gp, *gs, *gated, *dgated, *dgp, *dwg, *dbg;
    /* QK-norm/rotary embedding: the heads before them, the norm weights'
     * gradients (each 1 double without them) */
    double *qh0, *kh0, *dwqn, *dwkn;
    double *dsinks; /* use_sinks: (H), else 1 double */
    vka_ref_mha_mask mask; /* what the forward's SDPA reads */
} scratch;

#define SCRATCH_DOUBLES(X)                                                                     \
    X(xq) X(xk) X(xv) X(wq) X(wk) X(wv) X(wo) X(qp) X(kp) X(vp) X(qh) X(kh) X(vh) X(s) X(ctx) \
    X(dout) X(dctx) X(dctxh) X(ds) X(dqh) X(dkh) X(dvh) X(dqp) X(dkp) X(dvp) X(dxq) X(dxk)     \
    X(dxv) X(dwq) X(dwk) X(dwv) X(dwo) X(dbq) X(dbk) X(dbv) X(dbo) X(wg) X(gp) X(gs) X(gated) \
    X(dgated) X(dgp) X(dwg) X(dbg) X(qh0) X(kh0) X(dwqn) X(dwkn) X(dsinks)

static void scratch_free(scratch *t)
{
#define FREE_ONE(name) free(t->name);
    SCRATCH_DOUBLES(FREE_ONE)
#undef FREE_ONE
    vka_ref_mha_mask_free(&t->mask);
}

static vkattn_result scratch_alloc(const char *fn, const vka_mha_dims *d, const vka_mha_call *c,
                                   scratch *t)
{
    *t = (scratch){0};
    const uint64_t scores = c->mask_per_head, out = c->output;
    /* K and V heads repeated for every query head (B, H, Tv, d): at most the
     * scores' count times d, each factor checked */
    uint64_t kh, vh;
    const uint64_t kd[3] = {c->batch, c->tv, d->qk}, vd[3] = {c->batch, c->tv, d->hv};
    if (!vka_product_u64(kd, 3, &kh) || !vka_product_u64(vd, 3, &vh))
        return vka_fail(NULL, VKATTN_ERROR_SIZE_OVERFLOW, "%s: the key/value heads overflow",
                        fn);
    vka_mha_weight_counts wc;
    vka_mha_weight_counts_of(d, &wc);
    const uint64_t gate = d->use_gate ? c->context : 0;
    const bool prep = vka_ref_mha_has_head_prep(d);
    const struct {
        double **p;
        uint64_t n;
    } all[] = {
        {&t->xq, c->query}, {&t->xk, c->key}, {&t->xv, c->value},
        {&t->wq, wc.query_kernel}, {&t->wk, wc.key_kernel}, {&t->wv, wc.value_kernel},
        {&t->wo, wc.output_kernel}, {&t->qp, c->q_proj}, {&t->kp, c->k_proj},
        {&t->vp, c->v_proj}, {&t->qh, c->q_proj}, {&t->kh, kh}, {&t->vh, vh},
        {&t->s, scores}, {&t->ctx, c->context}, {&t->dout, out}, {&t->dctx, c->context},
        {&t->dctxh, c->context}, {&t->ds, scores}, {&t->dqh, c->q_proj}, {&t->dkh, kh},
        {&t->dvh, vh}, {&t->dqp, c->q_proj}, {&t->dkp, c->k_proj}, {&t->dvp, c->v_proj},
        {&t->dxq, c->query}, {&t->dxk, c->key}, {&t->dxv, c->value},
        {&t->dwq, wc.query_kernel}, {&t->dwk, wc.key_kernel}, {&t->dwv, wc.value_kernel},
        {&t->dwo, wc.output_kernel}, {&t->dbq, wc.query_bias}, {&t->dbk, wc.key_bias},
        {&t->dbv, wc.value_bias}, {&t->dbo, wc.output_bias},
        {&t->wg, wc.gate_kernel}, {&t->gp, gate}, {&t->gs, gate}, {&t->gated, gate},
        {&t->dgated, gate}, {&t->dgp, gate}, {&t->dwg, wc.gate_kernel},
        {&t->dbg, wc.gate_bias},
        {&t->qh0, prep ? c->q_proj : 0}, {&t->kh0, prep ? kh : 0},
        {&t->dwqn, d->use_qk_norm ? d->key_dim : 0}, {&t->dwkn, d->use_qk_norm ? d->key_dim : 0},
        {&t->dsinks, d->use_sinks ? d->heads : 0},
    };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        vkattn_result r = vka_grad_alloc(fn, "scratch", all[i].n, all[i].p);
        if (r) {
            scratch_free(t);
            return r;
        }
    }
    return VKATTN_SUCCESS;
}

/* The forward's weight checks, plus: no bias gradient without biases, and
 * grad_w is not w. */
static vkattn_result check_weights(const char *fn, const vka_mha_dims *d,
                                   const vkattn_mha_weights *w, const vkattn_mha_weights *gw)
{
    const vka_weight_table *table = &vka_mha_weight_table;
    const uint32_t options = vka_mha_weight_options(d);
    vkattn_result r;
    if ((r = vka_ref_require_ptr(fn, "w", w)) ||
        (r = vka_ref_require_weights(fn, table, options, false, w)))
        return r;
    if ((r = vka_grad_require_own_grads(fn, w, gw)))
        return r;
    const char *extra = vka_ref_weight_lacked(table, options, VKA_WEIGHT_IF_GATE, gw);
    if (extra)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: grad_w->%s is given but desc->use_gate is false (no gate)", fn,
                        extra);
    if (d->use_bias)
        return vka_ref_require_weights(fn, table, options, true, w);
    if ((extra = vka_ref_weight_lacked(table, options, VKA_WEIGHT_IF_BIAS, gw)))
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: grad_w->%s is given but desc->no_bias is true (no biases)", fn, extra);
    return VKATTN_SUCCESS;
}

/* The forward's io checks (io->output and io->scores ignored), grad_output,
 * grad_key only with io->key, and no gradient overlapping anything else. */
static vkattn_result check_io(const char *fn, const vka_mha_dims *d, const vka_mha_call *c,
                              const vkattn_layer_call *call, const vkattn_layer_host_io *io,
                              const float *grad_output, const vkattn_layer_host_grads *g,
                              const vkattn_mha_weights *w, const vkattn_mha_weights *gw,
                              vka_mask_layout *ml)
{
    vkattn_result r;
    vkattn_layer_call fwd_call;
    vkattn_layer_host_io fwd_io;
    if ((r = vka_grad_forward_io(fn, call, io, grad_output, &fwd_call, &fwd_io)) ||
        (r = vka_ref_mha_check_io(fn, d, &fwd_call, &fwd_io, ml)))
        return r;
    const vka_weight_table *table = &vka_mha_weight_table;
    const uint32_t options = vka_mha_weight_options(d);
    uint64_t axes[VKA_AXIS_COUNT];
    vka_mha_weight_axes(d, axes);
    vka_grad_span ws[VKA_WEIGHTS_MAX], gws[VKA_WEIGHTS_MAX];
    vka_grad_span_name w_names[VKA_WEIGHTS_MAX], gw_names[VKA_WEIGHTS_MAX];
    const size_t n_w = vka_grad_weight_spans(table, options, axes, w, "w->", ws, w_names);
    vka_grad_weight_spans(table, options, axes, gw, "grad_w->", gws, gw_names);
    const vka_grad_io_counts n = {
        .query = c->query, .key = c->key, .value = c->value, .query_mask = c->query_mask,
        .value_mask = c->value_mask, .attention_mask = io->attention_mask ? ml->count : 0,
        .output = c->output,
    };
    return vka_grad_check_arrays(fn, io, grad_output, g, &n, ws, n_w, gws, n_w);
}

/* (B, T, H*hd) <-> (B, H, T, hd) */
/* (B*T, (H/G)*hd) -> (B, H, T, hd), head h reading source head h / G (G = 1:
 * the plain split; G > 1 repeats each key/value head for its query heads). */
static void split_heads(size_t batch, size_t seq, size_t heads, size_t group, size_t hd,
                        const double *src, double *dst)
{
    const size_t src_heads = heads / group;
    for (size_t b = 0; b < batch; b++)
        for (size_t h = 0; h < heads; h++)
            for (size_t t = 0; t < seq; t++)
                memcpy(dst + ((b * heads + h) * seq + t) * hd,
                       src + (b * seq + t) * src_heads * hd + h / group * hd, hd * sizeof(double));
}

/* The reverse: (B, H, T, hd) -> (B*T, (H/G)*hd), summing each group of G
 * heads (the gradient of the repetition). */
static void merge_heads(size_t batch, size_t seq, size_t heads, size_t group, size_t hd,
                        const double *src, double *dst)
{
    const size_t dst_heads = heads / group;
    memset(dst, 0, batch * seq * dst_heads * hd * sizeof(double));
    for (size_t b = 0; b < batch; b++)
        for (size_t h = 0; h < heads; h++)
            for (size_t t = 0; t < seq; t++)
                for (size_t e = 0; e < hd; e++)
                    dst[(b * seq + t) * dst_heads * hd + h / group * hd + e] +=
                        src[((b * heads + h) * seq + t) * hd + e];
}

static void dense(size_t rows, size_t k, size_t n, const double *x, const double *w,
                  const float *bias, double *dst)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < n; j++)
            dst[r * n + j] = bias ? bias[j] : 0.0;
    vka_grad_matmul_acc(rows, n, k, x, false, w, false, dst);
}

/* The backward of dense: dx += dy w^T, dw += x^T dy, db += column sums of dy. */
static void dense_backward(size_t rows, size_t k, size_t n, const double *x, const double *w,
                           const double *dy, double *dx, double *dw, double *db)
{
    vka_grad_matmul_acc(rows, k, n, dy, false, w, true, dx);
    vka_grad_matmul_acc(k, n, rows, x, true, dy, false, dw);
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < n; j++)
            db[j] += dy[r * n + j];
}

/* The forward after the weights: ctx (B, H, Tq, dv) = (weights * dropout) @ V,
 * kept merged for Wo's gradient, and with use_gate gated = ctx * sigmoid(xq Wg
 * + bg). */
static void context_forward(const vka_mha_dims *d, const vka_mha_call *c,
                            const vkattn_mha_weights *w, const vka_grad_core_state *st,
                            scratch *t)
{
    const size_t B = c->batch, H = d->heads, tq = c->tq, tv = c->tv, dv = d->value_dim;
    double *ctxh = t->dctxh; /* borrowed: dctxh is filled only later */
    memset(ctxh, 0, c->context * sizeof(double));
    for (size_t bh = 0; bh < B * H; bh++)
        for (size_t i = 0; i < tq; i++) {
            const size_t row = bh * tq + i;
            for (size_t j = 0; j < tv; j++) {
                const double p = st->p[row * tv + j] * (st->drop ? st->drop[row * tv + j] : 1.0);
                for (size_t e = 0; e < dv; e++)
                    ctxh[row * dv + e] += p * t->vh[(bh * tv + j) * dv + e];
            }
        }
    merge_heads(B, tq, H, 1, dv, ctxh, t->ctx);
    if (!d->use_gate)
        return;
    vka_mha_weight_counts wc;
    vka_mha_weight_counts_of(d, &wc);
    vka_grad_widen(w->gate_kernel, wc.gate_kernel, t->wg);
    dense(B * tq, d->query_dim, d->hv, t->xq, t->wg, d->use_bias ? w->gate_bias : NULL, t->gp);
    for (size_t i = 0; i < c->context; i++) {
        t->gs[i] = vka_ref_sigmoid(t->gp[i]);
        t->gated[i] = t->ctx[i] * t->gs[i];
    }
}

/* dL/d(ctx) from dL/d(output) through the output projection (and the gate:
 * its weights' gradients and its part of dxq, to which the query path adds). */
static void output_backward(const vka_mha_dims *d, const vka_mha_call *c, scratch *t)
{
    const size_t nq = c->batch * c->tq;
    if (!d->use_gate) {
        dense_backward(nq, d->hv, d->output_dim, t->ctx, t->wo, t->dout, t->dctx, t->dwo,
                       t->dbo);
        return;
    }
    dense_backward(nq, d->hv, d->output_dim, t->gated, t->wo, t->dout, t->dgated, t->dwo, t->dbo);
    for (size_t i = 0; i < c->context; i++) {
        t->dctx[i] = t->dgated[i] * t->gs[i];
        t->dgp[i] = t->dgated[i] * t->ctx[i] * t->gs[i] * (1.0 - t->gs[i]);
    }
    dense_backward(nq, d->query_dim, d->hv, t->xq, t->wg, t->dgp, t->dxq, t->dwg, t->dbg);
}

static vkattn_result run(const char *fn, const vka_mha_dims *d, const vka_mha_call *c,
                         const vkattn_mha_weights *w, const vkattn_layer_call *call,
                         const vkattn_layer_host_io *io, const float *grad_output, scratch *t,
                         vka_grad_core_state *st)
{
    vkattn_result r;
    const size_t B = c->batch, H = d->heads, tq = c->tq, tv = c->tv;
    const size_t dk = d->key_dim, dv = d->value_dim, nq = B * tq, nkv = B * tv;
    const size_t G = d->heads / d->kv_heads; /* query heads per key/value head */
    const bool bias = d->use_bias;
    vka_mha_weight_counts wc;
    vka_mha_weight_counts_of(d, &wc);
    vka_grad_widen(io->query, c->query, t->xq);
    vka_grad_widen(io->key ? io->key : io->value, c->key, t->xk);
    vka_grad_widen(io->value, c->value, t->xv);
    vka_grad_widen(w->query_kernel, wc.query_kernel, t->wq);
    vka_grad_widen(w->key_kernel, wc.key_kernel, t->wk);
    vka_grad_widen(w->value_kernel, wc.value_kernel, t->wv);
    vka_grad_widen(w->output_kernel, wc.output_kernel, t->wo);

    /* ---- forward */
    dense(nq, d->query_dim, d->qk, t->xq, t->wq, bias ? w->query_bias : NULL, t->qp);
    dense(nkv, d->key_width, d->kv_qk, t->xk, t->wk, bias ? w->key_bias : NULL, t->kp);
    dense(nkv, d->value_width, d->kv_hv, t->xv, t->wv, bias ? w->value_bias : NULL, t->vp);
    split_heads(B, tq, H, 1, dk, t->qp, t->qh);
    split_heads(B, tv, H, G, dk, t->kp, t->kh);
    split_heads(B, tv, H, G, dv, t->vp, t->vh);
    const bool prep = vka_ref_mha_has_head_prep(d);
    if (prep) { /* each repeated key head is prepared alike; its gradients sum below */
        memcpy(t->qh0, t->qh, c->q_proj * sizeof(double));
        memcpy(t->kh0, t->kh, B * H * tv * dk * sizeof(double));
        vka_ref_mha_head_prep_f64(d, w->query_norm, B, H, tq, io->query_positions, t->qh);
        vka_ref_mha_head_prep_f64(d, w->key_norm, B, H, tv, io->key_positions, t->kh);
    }
    const double scale = 1.0 / sqrt((double)dk);
    for (size_t bh = 0; bh < B * H; bh++)
        for (size_t i = 0; i < tq; i++)
            for (size_t j = 0; j < tv; j++) {
                const double *qi = t->qh + (bh * tq + i) * dk, *kj = t->kh + (bh * tv + j) * dk;
                double acc = 0.0;
                for (size_t e = 0; e < dk; e++)
                    acc += qi[e] * kj[e];
                t->s[(bh * tq + i) * tv + j] = acc * scale;
            }
    vkattn_sdpa_params sp;
    const float *mask = vka_ref_mha_sdpa_params(d, c, call, io, &t->mask, &sp);
    const vka_grad_core core = {
        .batch = c->batch, .heads = d->heads, .tq = c->tq, .tv = c->tv, .dv = d->value_dim,
        .mask = sp.mask, .value_mask = io->value_mask, .attention_mask = mask,
        .dropout = {.batch = c->batch, .heads = d->heads, .tq = c->tq, .tv = c->tv,
                    .dropout = sp.dropout},
        .sliding_window = sp.sliding_window,
        .softcap = sp.softcap,
        .sinks = d->use_sinks ? w->sinks : NULL,
        .dsinks = d->use_sinks ? t->dsinks : NULL,
    };
    if ((r = vka_grad_core_forward(fn, &core, t->s, st)))
        return r;
    context_forward(d, c, w, st, t);

    /* ---- backward */
    vka_grad_widen(grad_output, c->output, t->dout);
    output_backward(d, c, t);
    split_heads(B, tq, H, 1, dv, t->dctx, t->dctxh);
    vka_grad_core_backward(&core, st, t->vh, t->dctxh, t->ds, t->dvh);
    for (size_t bh = 0; bh < B * H; bh++)
        for (size_t i = 0; i < tq; i++)
            for (size_t j = 0; j < tv; j++) {
                const double g = t->ds[(bh * tq + i) * tv + j] * scale;
                if (g == 0.0)
                    continue;
                const size_t qo = (bh * tq + i) * dk, ko = (bh * tv + j) * dk;
                for (size_t e = 0; e < dk; e++) {
                    t->dqh[qo + e] += g * t->kh[ko + e];
                    t->dkh[ko + e] += g * t->qh[qo + e];
                }
            }
    if (prep) {
        vka_ref_mha_head_prep_backward_f64(d, w->query_norm, B, H, tq, io->query_positions,
                                           t->qh0, t->dqh, t->dwqn);
        vka_ref_mha_head_prep_backward_f64(d, w->key_norm, B, H, tv, io->key_positions, t->kh0,
                                           t->dkh, t->dwkn);
    }
    merge_heads(B, tq, H, 1, dk, t->dqh, t->dqp);
    merge_heads(B, tv, H, G, dk, t->dkh, t->dkp);
    merge_heads(B, tv, H, G, dv, t->dvh, t->dvp);
    dense_backward(nq, d->query_dim, d->qk, t->xq, t->wq, t->dqp, t->dxq, t->dwq, t->dbq);
    dense_backward(nkv, d->key_width, d->kv_qk, t->xk, t->wk, t->dkp, t->dxk, t->dwk, t->dbk);
    dense_backward(nkv, d->value_width, d->kv_hv, t->xv, t->wv, t->dvp, t->dxv, t->dwv, t->dbv);
    if (!io->key) /* key = value: both paths reach the value */
        for (size_t i = 0; i < c->value; i++)
            t->dxv[i] += t->dxk[i];
    return VKATTN_SUCCESS;
}

static void store(const vka_mha_dims *d, const vka_mha_call *c, const scratch *t,
                  const vkattn_layer_host_grads *g, vkattn_mha_weights *gw)
{
    if (g) {
        vka_grad_store(t->dxq, c->query, g->grad_query);
        vka_grad_store(t->dxk, c->key, g->grad_key);
        vka_grad_store(t->dxv, c->value, g->grad_value);
    }
    if (!gw)
        return;
    vka_mha_weight_counts wc;
    vka_mha_weight_counts_of(d, &wc);
    vka_grad_store(t->dwq, wc.query_kernel, gw->query_kernel);
    vka_grad_store(t->dwk, wc.key_kernel, gw->key_kernel);
    vka_grad_store(t->dwv, wc.value_kernel, gw->value_kernel);
    vka_grad_store(t->dwo, wc.output_kernel, gw->output_kernel);
    vka_grad_store(t->dbq, wc.query_bias, gw->query_bias);
    vka_grad_store(t->dbk, wc.key_bias, gw->key_bias);
    vka_grad_store(t->dbv, wc.value_bias, gw->value_bias);
    vka_grad_store(t->dbo, wc.output_bias, gw->output_bias);
    vka_grad_store(t->dwg, wc.gate_kernel, gw->gate_kernel);
    vka_grad_store(t->dbg, wc.gate_bias, gw->gate_bias);
    if (d->use_qk_norm) {
        vka_grad_store(t->dwqn, d->key_dim, gw->query_norm);
        vka_grad_store(t->dwkn, d->key_dim, gw->key_norm);
    }
    if (d->use_sinks)
        vka_grad_store(t->dsinks, d->heads, gw->sinks);
}

/* The layer of resolved dims d (MultiHeadAttention or GroupedQueryAttention);
 * fn names the public function. */
static vkattn_result backward_dims(const char *fn, const vka_mha_dims *d,
                                   const vkattn_mha_weights *w, const vkattn_layer_call *call,
                                   const vkattn_layer_host_io *io, const float *grad_output,
                                   const vkattn_layer_host_grads *grads,
                                   vkattn_mha_weights *grad_w)
{
    vkattn_result r;
    vka_mha_call c;
    vka_mask_layout ml = {.dims = {1, 1, 1, 1}};
    if ((r = check_weights(fn, d, w, grad_w)) ||
        (r = vka_mha_resolve_call(NULL, fn, d, call, &c)) ||
        (r = check_io(fn, d, &c, call, io, grad_output, grads, w, grad_w, &ml)) ||
        (r = vka_ref_mha_check_positions(fn, d, &c, io)))
        return r;
    scratch t;
    vka_grad_core_state st = {0};
    if ((r = scratch_alloc(fn, d, &c, &t)))
        return r;
    if ((r = vka_ref_mha_mask_make(fn, &c, call, io, &ml, &t.mask)) ||
        (r = run(fn, d, &c, w, call, io, grad_output, &t, &st)))
        goto done;
    store(d, &c, &t, grads, grad_w);
done:
    vka_grad_core_state_free(&st);
    scratch_free(&t);
    return r;
}

vkattn_result vkattn_reference_mha_backward(const vkattn_mha_desc *desc,
                                            const vkattn_mha_weights *w,
                                            const vkattn_layer_call *call,
                                            const vkattn_layer_host_io *io,
                                            const float *grad_output,
                                            const vkattn_layer_host_grads *grads,
                                            vkattn_mha_weights *grad_w)
{
    vka_mha_dims d;
    vkattn_result r = vka_mha_resolve_desc(NULL, __func__, desc, &d);
    return r ? r : backward_dims(__func__, &d, w, call, io, grad_output, grads, grad_w);
}

vkattn_result vkattn_reference_gqa_backward(const vkattn_gqa_desc *desc,
                                            const vkattn_gqa_weights *w,
                                            const vkattn_layer_call *call,
                                            const vkattn_layer_host_io *io,
                                            const float *grad_output,
                                            const vkattn_layer_host_grads *grads,
                                            vkattn_gqa_weights *grad_w)
{
    vka_mha_dims d;
    vkattn_result r = vka_gqa_resolve_desc(NULL, __func__, desc, &d);
    return r ? r : backward_dims(__func__, &d, w, call, io, grad_output, grads, grad_w);
}
