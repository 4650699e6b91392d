/* Shared pieces of the layer backward references (reference/layer_grad.h):
 * the attention core's forward and backward in double, the single-head io
 * checks and tail, overlap checks, and double scratch. */
#include "reference/layer_grad.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dropout_host.h"
#include "core/error.h"
#include "vkattn/reference.h"

/* ---------------------------------------------------------------- scratch */

vkattn_result vka_grad_alloc(const char *fn, const char *what, uint64_t n, double **out)
{
    *out = NULL;
    if (n == 0)
        n = 1;
    if (n > SIZE_MAX / sizeof(double) || !(*out = calloc((size_t)n, sizeof(double))))
        return vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY,
                        "%s: cannot allocate %s (%llu doubles)", fn, what, (unsigned long long)n);
    return VKATTN_SUCCESS;
}

void vka_grad_widen(const float *src, size_t n, double *dst)
{
    if (!src)
        return;
    for (size_t i = 0; i < n; i++)
        dst[i] = src[i];
}

void vka_grad_store(const double *src, size_t n, float *dst)
{
    if (!dst)
        return;
    for (size_t i = 0; i < n; i++)
        dst[i] = (float)src[i];
}

void vka_grad_matmul_acc(size_t rows, size_t n, size_t k, const double *a, bool ta,
                         const double *b, bool tb, double *out)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < n; c++) {
            double acc = 0.0;
            for (size_t x = 0; x < k; x++)
                acc += (ta ? a[x * rows + r] : a[r * k + x]) * (tb ? b[c * k + x] : b[x * n + c]);
            out[r * n + c] += acc;
        }
}

/* ---------------------------------------------------------------- overlap */

static bool overlaps(const vka_grad_span *a, const vka_grad_span *b)
{
    if (!a->p || !b->p)
        return false;
    const uintptr_t a0 = (uintptr_t)a->p, b0 = (uintptr_t)b->p;
    const uintptr_t a1 = a0 + (uintptr_t)(a->count ? a->count : 1) * sizeof(float);
    const uintptr_t b1 = b0 + (uintptr_t)(b->count ? b->count : 1) * sizeof(float);
    return a0 < b1 && b0 < a1;
}

vkattn_result vka_grad_check_disjoint(const char *fn, const vka_grad_span *outs, size_t n_outs,
                                      const vka_grad_span *ins, size_t n_ins)
{
    for (size_t o = 0; o < n_outs; o++) {
        for (size_t i = 0; i < n_ins; i++)
            if (overlaps(&outs[o], &ins[i]))
                return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                                "%s: %s overlaps %s; a gradient must not alias an input", fn,
                                outs[o].name, ins[i].name);
        for (size_t p = o + 1; p < n_outs; p++)
            if (overlaps(&outs[o], &outs[p]))
                return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                                "%s: %s overlaps %s; gradient arrays must be distinct", fn,
                                outs[o].name, outs[p].name);
    }
    return VKATTN_SUCCESS;
}

/* ---------------------------------------------------------------- io checks */

vkattn_result vka_grad_forward_io(const char *fn, const vkattn_layer_call *call,
                                  const vkattn_layer_host_io *io, const float *grad_output,
                                  vkattn_layer_call *fwd_call, vkattn_layer_host_io *fwd_io)
{
    vkattn_result r;
    if ((r = vka_ref_require_ptr(fn, "grad_output", grad_output)) ||
        (r = vka_ref_require_ptr(fn, "io", io)))
        return r;
    *fwd_call = *call;
    fwd_call->return_attention_scores = false;
    *fwd_io = *io;
    fwd_io->output = (float *)grad_output; /* only tested for presence */
    fwd_io->scores = NULL;
    return VKATTN_SUCCESS;
}

vkattn_result vka_grad_require_own_grads(const char *fn, const void *w, const void *grad_w)
{
    if (grad_w == w)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: grad_w is w; give its own struct",
                        fn);
    return VKATTN_SUCCESS;
}

vkattn_result vka_grad_check_arrays(const char *fn, const vkattn_layer_host_io *io,
                                    const float *grad_output, const vkattn_layer_host_grads *g,
                                    const vka_grad_io_counts *n, const vka_grad_span *weights,
                                    size_t n_weights, const vka_grad_span *weight_grads,
                                    size_t n_weight_grads)
{
    if (g && g->grad_key && !io->key)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: grads->grad_key is given but io->key is NULL (key = value: the key "
                        "path's gradient is part of grads->grad_value)",
                        fn);
    enum { N_IN = 7, N_OUT = 3 };
    vka_grad_span ins[N_IN + VKA_WEIGHTS_MAX] = {
        {"io->query", io->query, n->query},
        {"io->key", io->key, n->key},
        {"io->value", io->value, n->value},
        {"io->query_mask", io->query_mask, n->query_mask},
        {"io->value_mask", io->value_mask, n->value_mask},
        {"io->attention_mask", io->attention_mask, n->attention_mask},
        {"grad_output", grad_output, n->output},
    };
    vka_grad_span outs[N_OUT + VKA_WEIGHTS_MAX] = {
        {"grads->grad_query", g ? g->grad_query : NULL, n->query},
        {"grads->grad_key", g ? g->grad_key : NULL, n->key},
        {"grads->grad_value", g ? g->grad_value : NULL, n->value},
    };
    size_t n_ins = N_IN, n_outs = N_OUT;
    for (size_t i = 0; i < n_weights && i < VKA_WEIGHTS_MAX; i++)
        ins[n_ins++] = weights[i];
    for (size_t i = 0; i < n_weight_grads && i < VKA_WEIGHTS_MAX; i++)
        outs[n_outs++] = weight_grads[i];
    return vka_grad_check_disjoint(fn, outs, n_outs, ins, n_ins);
}

/* ---------------------------------------------------------------- attention core */

void vka_grad_core_state_free(vka_grad_core_state *st)
{
    free(st->p), free(st->drop), free(st->live), free(st->dcap), free(st->p_sink);
    *st = (vka_grad_core_state){0};
}

vkattn_result vka_grad_core_forward(const char *fn, const vka_grad_core *c, const double *s,
                                    vka_grad_core_state *st)
{
    *st = (vka_grad_core_state){0};
    const size_t rows = (size_t)c->batch * c->heads * c->tq, n = rows * c->tv;
    vkattn_result r;
    unsigned char *allowed = NULL, *keep = NULL;
    if ((r = vka_grad_alloc(fn, "the attention weights", n, &st->p)) ||
        (c->softcap > 0.0 && (r = vka_grad_alloc(fn, "the soft-capping slopes", n, &st->dcap))) ||
        (c->sinks && (r = vka_grad_alloc(fn, "the sink weights", rows, &st->p_sink))))
        goto fail;
    st->live = calloc(rows, 1);
    allowed = malloc(c->tv);
    if (!st->live || !allowed) {
        r = vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: cannot allocate row flags", fn);
        goto fail;
    }
    const vka_ref_mask m = {&c->mask, c->batch, c->heads, c->tq, c->tv,
                            NULL, c->value_mask, c->attention_mask, c->sliding_window};
    size_t row = 0;
    for (uint32_t b = 0; b < c->batch; b++)
        for (uint32_t h = 0; h < c->heads; h++)
            for (uint32_t i = 0; i < c->tq; i++, row++) {
                double *p = st->p + row * c->tv;
                memcpy(p, s + row * c->tv, c->tv * sizeof(double));
                vka_ref_softcap_row(c->softcap, p, c->tv);
                for (uint32_t j = 0; st->dcap && j < c->tv; j++)
                    st->dcap[row * c->tv + j] = 1.0 - (p[j] / c->softcap) * (p[j] / c->softcap);
                const double sink = c->sinks ? c->sinks[h] : 0.0;
                const double p_sink =
                    vka_ref_softmax_row_sink(&m, b, h, i, p, allowed, c->sinks ? &sink : NULL);
                if (st->p_sink)
                    st->p_sink[row] = p_sink;
                for (uint32_t j = 0; j < c->tv; j++)
                    st->live[row] |= allowed[j];
            }
    if (vka_dropout_active(&c->dropout.dropout)) {
        if ((r = vka_grad_alloc(fn, "the dropout factors", n, &st->drop)))
            goto fail;
        if (!(keep = malloc(n))) {
            r = vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY,
                         "%s: cannot allocate the dropout mask", fn);
            goto fail;
        }
        if ((r = vkattn_reference_dropout_mask(&c->dropout, keep)))
            goto fail;
        /* the forward multiplies kept weights by this f32 factor */
        const double scale = vka_dropout_scale(c->dropout.dropout.rate);
        for (size_t e = 0; e < n; e++)
            st->drop[e] = keep[e] ? scale : 0.0;
    }
    free(allowed), free(keep);
    return VKATTN_SUCCESS;
fail:
    free(allowed), free(keep);
    vka_grad_core_state_free(st);
    return r;
}

void vka_grad_core_backward(const vka_grad_core *c, const vka_grad_core_state *st,
                            const double *v, const double *dout, double *ds, double *dv)
{
    const size_t tv = c->tv, d = c->dv;
    size_t row = 0;
    for (size_t bh = 0; bh < (size_t)c->batch * c->heads; bh++) {
        const double *vb = v + bh * tv * d;
        double *dvb = dv + bh * tv * d;
        for (uint32_t i = 0; i < c->tq; i++, row++) {
            const double *p = st->p + row * tv, *go = dout + row * d;
            const double *drop = st->drop ? st->drop + row * tv : NULL;
            double *dsr = ds + row * tv;
            /* out_i = sum_j (p_j * drop_j) v_j: dL/dv_j += p_j drop_j go,
             * dL/dp_j = drop_j (go . v_j) (held in dsr for now) */
            for (size_t j = 0; j < tv; j++) {
                const double f = drop ? drop[j] : 1.0;
                double dot = 0.0;
                for (size_t e = 0; e < d; e++) {
                    dot += go[e] * vb[j * d + e];
                    dvb[j * d + e] += p[j] * f * go[e];
                }
                dsr[j] = dot * f;
            }
            /* softmax: ds_j = p_j (dp_j - sum_k p_k dp_k); a row with no allowed
             * key has constant weights (the masked-row policy): nothing flows back */
            if (!st->live[row]) {
                memset(dsr, 0, tv * sizeof(double));
                continue;
            }
            double sum = 0.0;
            for (size_t j = 0; j < tv; j++)
                sum += p[j] * dsr[j];
            for (size_t j = 0; j < tv; j++)
                dsr[j] = p[j] * (dsr[j] - sum);
            /* the sink's logit: -p_sink * sum_j p_j dp_j (it takes no value) */
            if (c->dsinks)
                c->dsinks[bh % c->heads] -= st->p_sink[row] * sum;
            /* through the soft-capping: d capped / d s = 1 - (capped / c)^2 */
            for (size_t j = 0; st->dcap && j < tv; j++)
                dsr[j] *= st->dcap[row * tv + j];
        }
    }
}

/* ---------------------------------------------------------------- tanh scores */

void vka_grad_tanh_scores(const vka_grad_score_dims *z, const float *q, const float *k,
                          const float *w, double inner, double outer, double *s)
{
    for (size_t b = 0; b < z->batch; b++)
        for (size_t i = 0; i < z->tq; i++)
            for (size_t j = 0; j < z->tv; j++) {
                const float *qi = q + (b * z->tq + i) * z->d, *kj = k + (b * z->tv + j) * z->d;
                double acc = 0.0;
                for (size_t e = 0; e < z->d; e++)
                    acc += (w ? (double)w[e] : 1.0) * tanh(inner * ((double)qi[e] + kj[e]));
                s[(b * z->tq + i) * z->tv + j] = outer * acc;
            }
}

void vka_grad_tanh_scores_backward(const vka_grad_score_dims *z, const float *q, const float *k,
                                   const float *w, double inner, double outer, const double *ds,
                                   double *dq, double *dk, double *dw, double *d_inner,
                                   double *d_outer)
{
    for (size_t b = 0; b < z->batch; b++)
        for (size_t i = 0; i < z->tq; i++)
            for (size_t j = 0; j < z->tv; j++) {
                const double g = ds[(b * z->tq + i) * z->tv + j];
                if (g == 0.0)
                    continue;
                const size_t qo = (b * z->tq + i) * z->d, ko = (b * z->tv + j) * z->d;
                for (size_t e = 0; e < z->d; e++) {
                    const double qe = q[qo + e], ke = k[ko + e];
                    const double t = tanh(inner * (qe + ke));
                    const double gt = g * outer * (w ? (double)w[e] : 1.0) * (1.0 - t * t);
                    dq[qo + e] += gt * inner;
                    dk[ko + e] += gt * inner;
                    if (dw)
                        dw[e] += g * t;
                    if (d_inner)
                        *d_inner += gt * (qe + ke);
                    if (d_outer)
                        *d_outer += g * t;
                }
            }
}

/* ---------------------------------------------------------------- single-head layers */

vkattn_result vka_grad_single_check(const char *fn, const vkattn_layer_call *call,
                                    const vkattn_layer_host_io *io, const vka_layer_widths *w,
                                    const float *grad_output, const vkattn_layer_host_grads *g,
                                    const vka_grad_span *weights, size_t n_weights,
                                    const vka_grad_span *weight_grads, size_t n_weight_grads)
{
    vkattn_result r;
    vkattn_layer_call fwd_call;
    vkattn_layer_host_io fwd_io;
    if ((r = vka_layer_check_call(NULL, fn, call)) ||
        (r = vka_grad_forward_io(fn, call, io, grad_output, &fwd_call, &fwd_io)) ||
        (r = vka_ref_layer_check_io(fn, &fwd_call, &fwd_io, w)))
        return r;
    vka_mask_layout ml = {.count = 0};
    if (io->attention_mask && (r = vka_ref_mask_layout(fn, call, io, 1, false, &ml)))
        return r;
    const uint64_t b = call->batch, tq = call->tq, tv = call->tv;
    const vka_grad_io_counts n = {
        .query = b * tq * w->dq, .key = b * tv * w->dk, .value = b * tv * w->dv,
        .query_mask = b * tq, .value_mask = b * tv,
        .attention_mask = io->attention_mask ? ml.count : 0, .output = b * tq * w->dv,
    };
    return vka_grad_check_arrays(fn, io, grad_output, g, &n, weights, n_weights, weight_grads,
                                 n_weight_grads);
}

vkattn_result vka_grad_single_tail(const char *fn, const vkattn_layer_call *call,
                                   const vkattn_layer_host_io *io, const vka_layer_widths *w,
                                   float rate, const double *s, const float *grad_output,
                                   double *ds, double *dvalue)
{
    vkattn_result r;
    float *mask = NULL; /* (B, 1, Tq, Tv), as the forward expands it */
    double *v = NULL, *dout = NULL;
    vka_grad_core_state st = {0};
    vka_mask_layout ml;
    if (io->attention_mask && ((r = vka_ref_mask_layout(fn, call, io, 1, false, &ml)) ||
                               (r = vka_ref_mask_expand(fn, call, io->attention_mask, &ml, &mask))))
        return r;
    const vkattn_broadcast one_head = {.heads = true};
    const vka_grad_core c = {
        .batch = call->batch, .heads = 1, .tq = call->tq, .tv = call->tv, .dv = w->dv,
        .mask = vka_layer_mask_params(call, VKATTN_MASKED_ROW_UNIFORM, io->value_mask != NULL,
                                      mask ? &one_head : NULL),
        .value_mask = io->value_mask, .attention_mask = mask,
        .dropout = vka_layer_dropout_params(call, rate, 1),
    };
    const size_t nv = (size_t)call->batch * call->tv * w->dv;
    const size_t rows = (size_t)call->batch * call->tq, no = rows * w->dv;
    if ((r = vka_grad_core_forward(fn, &c, s, &st)) ||
        (r = vka_grad_alloc(fn, "the value", nv, &v)) ||
        (r = vka_grad_alloc(fn, "the output gradient", no, &dout)))
        goto done;
    vka_grad_widen(io->value, nv, v);
    vka_grad_widen(grad_output, no, dout);
    /* output rows whose query_mask is 0 are multiplied by 0: no gradient */
    if (io->query_mask)
        for (size_t q = 0; q < rows; q++)
            if (io->query_mask[q] == 0.0f)
                memset(dout + q * w->dv, 0, w->dv * sizeof(double));
    memset(ds, 0, rows * call->tv * sizeof(double));
    memset(dvalue, 0, nv * sizeof(double));
    vka_grad_core_backward(&c, &st, v, dout, ds, dvalue);
done:
    vka_grad_core_state_free(&st);
    free(mask), free(v), free(dout);
    return r;
}

void vka_grad_single_store(const vkattn_layer_call *call, const vkattn_layer_host_io *io,
                           const vka_layer_widths *w, const vkattn_layer_host_grads *g,
                           const double *dq, const double *dk, double *dvalue)
{
    if (!g)
        return;
    const size_t nq = (size_t)call->batch * call->tq * w->dq;
    const size_t nk = (size_t)call->batch * call->tv * w->dk;
    const size_t nv = (size_t)call->batch * call->tv * w->dv;
    vka_grad_store(dq, nq, g->grad_query);
    if (io->key) {
        vka_grad_store(dk, nk, g->grad_key);
    } else { /* key = value: both paths reach the value */
        for (size_t i = 0; i < nv; i++)
            dvalue[i] += dk[i];
    }
    vka_grad_store(dvalue, nv, g->grad_value);
}

size_t vka_grad_weight_spans(const vka_weight_table *table, uint32_t options,
                             const uint64_t *axes, const void *w, const char *prefix,
                             vka_grad_span *spans, vka_grad_span_name *names)
{
    for (uint32_t i = 0; i < table->count; i++) {
        const vka_weight_info *wi = &table->w[i];
        uint64_t dims[3];
        snprintf(names[i], sizeof names[i], "%s%s", prefix, wi->member);
        const bool has = w && wi->rank != 0 && vka_weight_exists(wi, options);
        spans[i] = (vka_grad_span){names[i], has ? *(float *const *)vka_weight_host(w, wi) : NULL,
                                   vka_weight_shape(wi, axes, dims)};
    }
    return table->count;
}
