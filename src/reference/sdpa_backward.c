/* CPU reference of the gradients of scaled dot-product attention: each query
 * row's forward is recomputed in double (scores, masked softmax, dropout from
 * the same Philox stream), then its softmax gradient, and the row's shares of
 * dQ, dK and dV. dK and dV accumulate in double over all rows. */
#include "vkattn/reference_backward.h"

#include <stdlib.h>

#include "core/check.h"
#include "core/dropout_host.h"
#include "core/error.h"
#include "reference/backward_internal.h"
#include "vkattn/philox.h"

static const char fn_public[] = "vkattn_reference_sdpa_backward";

/* Scratch of one call: rows of Tv doubles and the dK, dV accumulators. */
typedef struct scratch {
    double *w, *g, *tmp, *dk, *dv;
    unsigned char *allowed, *unused1, *unused2;
} scratch;

static void free_scratch(scratch *x)
{
    free(x->w);
    free(x->g);
    free(x->tmp);
    free(x->dk);
    free(x->dv);
}

static vkattn_result alloc_scratch(const char *fn, const vka_sdpa_shape *s, scratch *x)
{
    *x = (scratch){0};
    vkattn_result r;
    if ((r = vka_ref_alloc_row(fn, s->tv, &x->w, &x->allowed)) ||
        (r = vka_ref_alloc_row(fn, s->tv, &x->g, &x->unused1)) ||
        (r = vka_ref_alloc_row(fn, s->tv, &x->tmp, &x->unused2))) {
        free_scratch(x);
        return r;
    }
    x->dk = calloc((size_t)s->k, sizeof(double));
    x->dv = calloc((size_t)s->v, sizeof(double));
    if (!x->dk || !x->dv) {
        free_scratch(x);
        return vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    }
    return VKATTN_SUCCESS;
}

/* The public op reference takes no sinks (its signature is fixed): the
 * layer references reach them through vka_ref_sdpa_backward. */
vkattn_result vkattn_reference_sdpa_backward(const vkattn_sdpa_params *p, const float *q,
                                             const float *k, const float *v, const float *bias,
                                             const float *value_mask, const float *mask,
                                             const float *grad_out, float *grad_q,
                                             float *grad_k, float *grad_v)
{
    if (p && p->has_sinks)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: p->has_sinks is not accepted here (no sinks operand); "
                        "vkattn_reference_mha_backward and vkattn_reference_gqa_backward "
                        "compute sinks",
                        fn_public);
    return vka_ref_sdpa_backward(fn_public, p, q, k, v, bias, value_mask, mask, NULL, grad_out,
                                 grad_q, grad_k, grad_v, NULL);
}

vkattn_result vka_ref_sdpa_backward(const char *fn, const vkattn_sdpa_params *p, const float *q,
                                    const float *k, const float *v, const float *bias,
                                    const float *value_mask, const float *mask,
                                    const float *sinks, const float *grad_out, float *grad_q,
                                    float *grad_k, float *grad_v, float *grad_sinks)
{
    vkattn_result r;
    vka_sdpa_shape s;
    if ((r = vka_ref_sdpa_plan(fn, p, sizeof(double), &s)) || /* params NULL too */
        (r = vka_ref_require_ptr(fn, "q", q)) || (r = vka_ref_require_ptr(fn, "k", k)) ||
        (r = vka_ref_require_ptr(fn, "v", v)) ||
        (r = vka_ref_require_ptr(fn, "grad_out", grad_out)) ||
        (r = vka_ref_require_ptr(fn, "grad_q", grad_q)) ||
        (r = vka_ref_require_ptr(fn, "grad_k", grad_k)) ||
        (r = vka_ref_require_ptr(fn, "grad_v", grad_v)) ||
        (r = vka_ref_require_flagged(fn, "sinks", "has_sinks", p->has_sinks, sinks)) ||
        (r = vka_ref_require_flagged(fn, "grad_sinks", "has_sinks", p->has_sinks, grad_sinks)))
        return r;
    const vka_ref_mask m = {&p->mask, s.batch, s.heads, s.tq, s.tv, bias, value_mask, mask,
                            p->sliding_window};
    if ((r = vka_ref_check_mask(fn, &m)))
        return r;
    scratch x;
    if ((r = alloc_scratch(fn, &s, &x)))
        return r;

    const double scale = vka_ref_attention_scale(p->scale, s.dk);
    const bool drop = s.drop;
    const uint32_t threshold = s.drop_threshold;
    const double drop_scale = s.drop_scale;
    const uint32_t group = s.heads / s.kv_heads;
    const double softcap = p->softcap;
    for (uint32_t h = 0; sinks && h < s.heads; h++)
        grad_sinks[h] = 0.0f;
    for (uint32_t h = 0; h < s.heads; h++) {
        double dsink = 0.0; /* summed over the batch and the rows */
        for (uint32_t b = 0; b < s.batch; b++) {
            const size_t bh = (size_t)b * s.heads + h;
            const size_t bhk = (size_t)b * s.kv_heads + h / group;
            const float *kb = k + bhk * s.tv * s.dk, *vb = v + bhk * s.tv * s.dv;
            double *dkb = x.dk + bhk * s.tv * s.dk, *dvb = x.dv + bhk * s.tv * s.dv;
            for (uint32_t i = 0; i < s.tq; i++) {
                const float *qi = q + (bh * s.tq + i) * s.dk;
                const float *doi = grad_out + (bh * s.tq + i) * s.dv;
                const bool live = vka_ref_row_live(&m, b, h, i, x.tmp, x.allowed);
                for (uint32_t j = 0; j < s.tv; j++) {
                    double dot = 0.0;
                    for (uint32_t e = 0; e < s.dk; e++)
                        dot += (double)qi[e] * (double)kb[(size_t)j * s.dk + e];
                    x.w[j] = dot * scale;
                }
                vka_ref_softcap_row(softcap, x.w, s.tv);
                /* d capped / d raw = 1 - (capped / c)^2, kept in tmp (bias not yet added) */
                for (uint32_t j = 0; softcap > 0.0 && j < s.tv; j++)
                    x.tmp[j] = 1.0 - (x.w[j] / softcap) * (x.w[j] / softcap);
                const double sink = sinks ? sinks[h] : 0.0;
                const double p_sink =
                    vka_ref_softmax_row_sink(&m, b, h, i, x.w, x.unused2, sinks ? &sink : NULL);
                /* g = dL/dW through dropout; dV += dropout(W)^T dO */
                for (uint32_t j = 0; j < s.tv; j++) {
                    const double keep =
                        !drop ? 1.0
                        : vkattn_dropout_keep(p->dropout.seed, p->dropout.offset, threshold,
                                              (uint32_t)bh, i, j)
                            ? drop_scale
                            : 0.0;
                    double dpd = 0.0;
                    for (uint32_t e = 0; e < s.dv; e++) {
                        dpd += (double)doi[e] * (double)vb[(size_t)j * s.dv + e];
                        dvb[(size_t)j * s.dv + e] += x.w[j] * keep * (double)doi[e];
                    }
                    x.g[j] = dpd * keep;
                }
                /* dL/dsink = -p_sink * sum_j p_j g_j (the sink takes no value) */
                double wg = 0.0;
                for (uint32_t j = 0; j < s.tv; j++)
                    wg += x.allowed[j] ? x.w[j] * x.g[j] : 0.0;
                if (live)
                    dsink -= p_sink * wg;
                vka_ref_softmax_row_backward(x.w, x.g, x.allowed, live, s.tv);
                for (uint32_t j = 0; softcap > 0.0 && j < s.tv; j++)
                    x.g[j] *= x.tmp[j];
                float *dqi = grad_q + (bh * s.tq + i) * s.dk;
                for (uint32_t e = 0; e < s.dk; e++) {
                    double acc = 0.0;
                    for (uint32_t j = 0; j < s.tv; j++)
                        acc += x.g[j] * (double)kb[(size_t)j * s.dk + e];
                    dqi[e] = (float)(acc * scale);
                }
                for (uint32_t j = 0; j < s.tv; j++)
                    if (x.g[j] != 0.0)
                        for (uint32_t e = 0; e < s.dk; e++)
                            dkb[(size_t)j * s.dk + e] += x.g[j] * scale * (double)qi[e];
            }
        }
        if (grad_sinks)
            grad_sinks[h] = (float)dsink;
    }
    for (size_t n = 0; n < (size_t)s.k; n++)
        grad_k[n] = (float)x.dk[n];
    for (size_t n = 0; n < (size_t)s.v; n++)
        grad_v[n] = (float)x.dv[n];
    free_scratch(&x);
    return VKATTN_SUCCESS;
}
