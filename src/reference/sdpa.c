/* CPU reference of scaled dot-product attention with grouped K/V heads:
 * scores, masked softmax and dropout of one query row at a time, in double. */
#include "vkattn/reference.h"

#include <stdlib.h>

#include "core/check.h"
#include "core/dropout_host.h"
#include "core/error.h"
#include "reference/ref_internal.h"
#include "reference/typed_io.h"
#include "vkattn/philox.h"

static const char fn_public[] = "vkattn_reference_sdpa";

static void store_row(float *dst, const double *row, uint32_t tv)
{
    for (uint32_t j = 0; j < tv; j++)
        dst[j] = (float)row[j];
}

/* Inverted dropout of one weight row (b, h, i), docs/SEMANTICS.md's Philox stream. */
static void dropout_row(const vkattn_dropout_params *d, const vka_sdpa_shape *s, uint32_t bh,
                        uint32_t i, double *row, uint32_t tv)
{
    const uint32_t threshold = s->drop_threshold;
    const double scale = s->drop_scale;
    for (uint32_t j = 0; j < tv; j++)
        row[j] = vkattn_dropout_keep(d->seed, d->offset, threshold, bh, i, j) ? row[j] * scale
                                                                              : 0.0;
}

/* out_i = sum_j w_j v_j over every key, masked ones included (weight 0): a
 * non-finite value row gives NaN even when masked, as a plain W @ V does. */
static void weighted_sum(const double *w, const void *v, vkattn_dtype vt, size_t v0, uint32_t tv,
                         uint32_t dv, void *out, vkattn_dtype ot, size_t o0)
{
    for (uint32_t e = 0; e < dv; e++) {
        double acc = 0.0;
        for (uint32_t j = 0; j < tv; j++)
            acc += w[j] * vka_ref_load(v, vt, v0 + (size_t)j * dv + e);
        vka_ref_store(out, ot, o0 + e, acc);
    }
}

/* The public op reference takes no sinks (its signature is fixed): the
 * layer references reach them through vka_ref_sdpa. */
vkattn_result vkattn_reference_sdpa(const vkattn_sdpa_params *p,
                                          const vkattn_sdpa_dtypes *types, const void *q,
                                          const void *k, const void *v, const float *bias,
                                          const float *value_mask, const float *mask, void *out,
                                          float *weights)
{
    if (p && p->has_sinks)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: p->has_sinks is not accepted here (no sinks operand); "
                        "vkattn_reference_mha and vkattn_reference_gqa compute sinks",
                        fn_public);
    return vka_ref_sdpa(fn_public, p, types, q, k, v, bias, value_mask, mask, NULL, out, weights);
}

vkattn_result vka_ref_sdpa(const char *fn, const vkattn_sdpa_params *p,
                           const vkattn_sdpa_dtypes *types, const void *q, const void *k,
                           const void *v, const float *bias, const float *value_mask,
                           const float *mask, const float *sinks, void *out, float *weights)
{
    vkattn_result r;
    vka_sdpa_shape s;
    const vkattn_sdpa_dtypes ty = types ? *types : (vkattn_sdpa_dtypes){0};
    const vkattn_dtype all[4] = {ty.q, ty.k, ty.v, ty.out};
    static const char *const names[4] = {"q", "k", "v", "out"};
    if ((r = vka_ref_sdpa_plan(fn, p, sizeof(float), &s)) || /* params NULL too */
        (r = vka_ref_check_dtypes(fn, all, names, 4)) ||
        (r = vka_ref_require_ptr(fn, "q", q)) || (r = vka_ref_require_ptr(fn, "k", k)) ||
        (r = vka_ref_require_ptr(fn, "v", v)) || (r = vka_ref_require_ptr(fn, "out", out)))
        return r;
    if ((r = vka_ref_require_flagged(fn, "weights", "return_weights", p->return_weights,
                                     weights)) ||
        (r = vka_ref_require_flagged(fn, "sinks", "has_sinks", p->has_sinks, sinks)))
        return r;
    const vka_ref_mask m = {&p->mask, s.batch, s.heads, s.tq, s.tv, bias, value_mask, mask,
                            p->sliding_window};
    if ((r = vka_ref_check_mask(fn, &m)))
        return r;
    double *row;
    unsigned char *allowed;
    if ((r = vka_ref_alloc_row(fn, s.tv, &row, &allowed)))
        return r;

    const double scale = vka_ref_attention_scale(p->scale, s.dk);
    const bool drop = s.drop;
    const uint32_t group = s.heads / s.kv_heads;
    for (uint32_t b = 0; b < s.batch; b++)
        for (uint32_t h = 0; h < s.heads; h++) {
            const size_t bh = (size_t)b * s.heads + h;
            const size_t bhk = (size_t)b * s.kv_heads + h / group;
            const size_t kb = bhk * s.tv * s.dk, vb = bhk * s.tv * s.dv;
            for (uint32_t i = 0; i < s.tq; i++) {
                const size_t qi = (bh * s.tq + i) * s.dk;
                float *wi = p->return_weights ? weights + (bh * s.tq + i) * s.tv : NULL;
                for (uint32_t j = 0; j < s.tv; j++) {
                    double dot = 0.0;
                    for (uint32_t e = 0; e < s.dk; e++)
                        dot += vka_ref_load(q, ty.q, qi + e) *
                               vka_ref_load(k, ty.k, kb + (size_t)j * s.dk + e);
                    row[j] = dot * scale;
                }
                vka_ref_softcap_row(p->softcap, row, s.tv);
                const double sink = sinks ? sinks[h] : 0.0;
                vka_ref_softmax_row_sink(&m, b, h, i, row, allowed, sinks ? &sink : NULL);
                if (wi && !p->weights_after_dropout)
                    store_row(wi, row, s.tv);
                if (drop) /* the dropout stream's bh is uint32, wrapping as on the GPU */
                    dropout_row(&p->dropout, &s, (uint32_t)bh, i, row, s.tv);
                if (wi && p->weights_after_dropout)
                    store_row(wi, row, s.tv);
                weighted_sum(row, v, ty.v, vb, s.tv, s.dv, out, ty.out, (bh * s.tq + i) * s.dv);
            }
        }
    free(row);
    return VKATTN_SUCCESS;
}

