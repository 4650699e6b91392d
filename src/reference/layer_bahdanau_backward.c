/* Bahdanau attention with learned projections: the CPU reference backward
 * (vkattn/reference_backward.h). Recomputed in double:
 *   qp = query @ Wq (B, Tq, U), kp = key @ Wk (B, Tv, U)
 *   s_ij = sum_u v_u tanh(qp_iu + kp_ju) + score_bias
 * then the shared single-head tail gives dL/ds and the value's gradient;
 * ds_ij sends v_u (1 - t^2) ds_ij to qp_iu and kp_ju and t ds_ij to v_u, and
 * the projections pass those on to the inputs and the kernels. score_bias
 * shifts every score of a row alike, so its gradient is 0. */
#include "reference/layer_grad.h"

#include <math.h>
#include <stdlib.h>

static const char fn[] = "vkattn_reference_bahdanau_backward";

/* Every double tensor of one call. */
typedef struct scratch {
    double *q, *k, *wq, *wk, *qp, *kp, *s, *ds, *dqp, *dkp, *dq, *dk, *dv, *dwq, *dwk, *dsk;
} scratch;

static void scratch_free(scratch *t)
{
    double **all[] = {&t->q,  &t->k,   &t->wq,  &t->wk, &t->qp, &t->kp,  &t->s,   &t->ds,
                      &t->dqp, &t->dkp, &t->dq, &t->dk, &t->dv, &t->dwq, &t->dwk, &t->dsk};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(*all[i]);
}

static vkattn_result scratch_alloc(const vkattn_layer_call *call, const vka_layer_widths *w,
                                   scratch *t)
{
    *t = (scratch){0};
    const uint64_t b = call->batch, tq = call->tq, tv = call->tv, u = w->units;
    vkattn_result r;
    if ((r = vka_grad_alloc(fn, "the query", b * tq * w->dq, &t->q)) ||
        (r = vka_grad_alloc(fn, "the key", b * tv * w->dk, &t->k)) ||
        (r = vka_grad_alloc(fn, "the query kernel", (uint64_t)w->dq * u, &t->wq)) ||
        (r = vka_grad_alloc(fn, "the key kernel", (uint64_t)w->dk * u, &t->wk)) ||
        (r = vka_grad_alloc(fn, "the query projection", b * tq * u, &t->qp)) ||
        (r = vka_grad_alloc(fn, "the key projection", b * tv * u, &t->kp)) ||
        (r = vka_grad_alloc(fn, "the scores", b * tq * tv, &t->s)) ||
        (r = vka_grad_alloc(fn, "the score gradient", b * tq * tv, &t->ds)) ||
        (r = vka_grad_alloc(fn, "the query projection gradient", b * tq * u, &t->dqp)) ||
        (r = vka_grad_alloc(fn, "the key projection gradient", b * tv * u, &t->dkp)) ||
        (r = vka_grad_alloc(fn, "the query gradient", b * tq * w->dq, &t->dq)) ||
        (r = vka_grad_alloc(fn, "the key gradient", b * tv * w->dk, &t->dk)) ||
        (r = vka_grad_alloc(fn, "the value gradient", b * tv * w->dv, &t->dv)) ||
        (r = vka_grad_alloc(fn, "the query kernel gradient", (uint64_t)w->dq * u, &t->dwq)) ||
        (r = vka_grad_alloc(fn, "the key kernel gradient", (uint64_t)w->dk * u, &t->dwk)) ||
        (r = vka_grad_alloc(fn, "the score kernel gradient", u, &t->dsk)))
        scratch_free(t);
    return r;
}

vkattn_result vkattn_reference_bahdanau_backward(const vkattn_bahdanau_desc *desc,
                                                 const vkattn_bahdanau_weights *w,
                                                 const vkattn_layer_call *call,
                                                 const vkattn_layer_host_io *io,
                                                 const float *grad_output,
                                                 const vkattn_layer_host_grads *grads,
                                                 vkattn_bahdanau_weights *grad_w)
{
    vka_layer_widths wd;
    vkattn_result r;
    if ((r = vka_ref_bahdanau_check(fn, desc, w, &wd)) ||
        (r = vka_grad_require_own_grads(fn, w, grad_w)))
        return r;
    /* the arrays of w and grad_w, from the table (score_bias, a scalar, is absent) */
    uint64_t axes[VKA_AXIS_COUNT];
    vka_layer_weight_axes(&wd, axes);
    vka_grad_span wspans[VKA_WEIGHTS_MAX], gspans[VKA_WEIGHTS_MAX];
    vka_grad_span_name wnames[VKA_WEIGHTS_MAX], gnames[VKA_WEIGHTS_MAX];
    const vka_weight_table *table = &vka_bahdanau_weight_table;
    const size_t n =
        vka_grad_weight_spans(table, VKA_WEIGHT_ALWAYS, axes, w, "w->", wspans, wnames);
    vka_grad_weight_spans(table, VKA_WEIGHT_ALWAYS, axes, grad_w, "grad_w->", gspans, gnames);
    if ((r = vka_grad_single_check(fn, call, io, &wd, grad_output, grads, wspans, n, gspans, n)))
        return r;
    const uint64_t u = wd.units;
    scratch t;
    if ((r = scratch_alloc(call, &wd, &t)))
        return r;
    const size_t nq = (size_t)call->batch * call->tq, nk = (size_t)call->batch * call->tv;
    const size_t tv = call->tv;
    vka_grad_widen(io->query, nq * wd.dq, t.q);
    vka_grad_widen(io->key ? io->key : io->value, nk * wd.dk, t.k);
    vka_grad_widen(w->query_kernel, (size_t)wd.dq * u, t.wq);
    vka_grad_widen(w->key_kernel, (size_t)wd.dk * u, t.wk);
    vka_grad_matmul_acc(nq, u, wd.dq, t.q, false, t.wq, false, t.qp);
    vka_grad_matmul_acc(nk, u, wd.dk, t.k, false, t.wk, false, t.kp);
    for (size_t b = 0; b < call->batch; b++)
        for (size_t i = 0; i < call->tq; i++)
            for (size_t j = 0; j < tv; j++) {
                const double *qi = t.qp + (b * call->tq + i) * u, *kj = t.kp + (b * tv + j) * u;
                double acc = w->score_bias;
                for (size_t x = 0; x < u; x++)
                    acc += w->score_kernel[x] * tanh(qi[x] + kj[x]);
                t.s[(b * call->tq + i) * tv + j] = acc;
            }
    if ((r = vka_grad_single_tail(fn, call, io, &wd, desc->dropout, t.s, grad_output, t.ds, t.dv)))
        goto done;
    for (size_t b = 0; b < call->batch; b++)
        for (size_t i = 0; i < call->tq; i++)
            for (size_t j = 0; j < tv; j++) {
                const double g = t.ds[(b * call->tq + i) * tv + j];
                if (g == 0.0)
                    continue;
                const size_t qo = (b * call->tq + i) * u, ko = (b * tv + j) * u;
                for (size_t x = 0; x < u; x++) {
                    const double th = tanh(t.qp[qo + x] + t.kp[ko + x]);
                    const double gt = g * w->score_kernel[x] * (1.0 - th * th);
                    t.dqp[qo + x] += gt;
                    t.dkp[ko + x] += gt;
                    t.dsk[x] += g * th;
                }
            }
    /* qp = q @ Wq: dq = dqp @ Wq^T, dWq = q^T @ dqp (and alike for the key) */
    vka_grad_matmul_acc(nq, wd.dq, u, t.dqp, false, t.wq, true, t.dq);
    vka_grad_matmul_acc(nk, wd.dk, u, t.dkp, false, t.wk, true, t.dk);
    vka_grad_matmul_acc(wd.dq, u, nq, t.q, true, t.dqp, false, t.dwq);
    vka_grad_matmul_acc(wd.dk, u, nk, t.k, true, t.dkp, false, t.dwk);
    vka_grad_single_store(call, io, &wd, grads, t.dq, t.dk, t.dv);
    if (grad_w) {
        vka_grad_store(t.dwq, (size_t)wd.dq * u, grad_w->query_kernel);
        vka_grad_store(t.dwk, (size_t)wd.dk * u, grad_w->key_kernel);
        vka_grad_store(t.dsk, u, grad_w->score_kernel);
        grad_w->score_bias = 0.0f; /* softmax is shift-invariant */
    }
done:
    scratch_free(&t);
    return r;
}
