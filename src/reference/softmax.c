/* CPU reference of the masked softmax (docs/SEMANTICS.md, "Common rules"), and the
 * row-per-invocation kernel that vkattn_reference_sdpa shares. Everything is in double:
 * logits of +-3e38 times a scale must neither overflow nor lose the ordering. */
#include "vkattn/reference.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/broadcast.h"
#include "core/check.h"
#include "core/dtype.h"
#include "core/error.h"
#include "reference/ref_internal.h"
#include "reference/typed_io.h"
#include "shape/softmax_plan.h"

vkattn_result vka_ref_check_mask(const char *fn, const vka_ref_mask *m)
{
    /* the enums were checked by the op's plan (vka_softmax_shape_plan,
     * vka_sdpa_plan), which every caller ran first */
    const vkattn_mask_params *p = m->p;
    vkattn_result r;
    if ((r = vka_ref_require_flagged(fn, "bias", "mask.has_bias", p->has_bias, m->bias)) ||
        (r = vka_ref_require_flagged(fn, "value_mask", "mask.has_value_mask", p->has_value_mask,
                                     m->value_mask)) ||
        (r = vka_ref_require_flagged(fn, "mask", "mask.has_mask", p->has_mask, m->mask)))
        return r;
    return VKATTN_SUCCESS;
}

/* Index of (b, h, i, j) in a (B|1, H|1, Tq|1, Tv) operand. Never overflows: the
 * caller checked that the full (B, H, Tq, Tv) count fits in size_t. */
static size_t bcast_index(const vka_ref_mask *m, vkattn_broadcast bc, uint32_t b, uint32_t h,
                          uint32_t i, uint32_t j)
{
    size_t hs = bc.heads ? 1 : m->heads, qs = bc.rows ? 1 : m->tq;
    size_t bb = bc.batch ? 0 : b, hh = bc.heads ? 0 : h, ii = bc.rows ? 0 : i;
    return ((bb * hs + hh) * qs + ii) * m->tv + j;
}

static bool causal_allows(vkattn_causal c, uint32_t i, uint32_t j, uint32_t tq, uint32_t tv)
{
    switch (c) {
    case VKATTN_CAUSAL_TOP_LEFT:
        return j <= i;
    case VKATTN_CAUSAL_BOTTOM_RIGHT:
        /* signed: i + Tv - Tq is negative for the first rows when Tq > Tv */
        return (int64_t)j <= (int64_t)i + (int64_t)tv - (int64_t)tq;
    default:
        return true;
    }
}

/* The sliding window |pos(i) - j| < w, pos(i) anchored where the causal mask
 * is: i, or i + Tv - Tq with bottom-right causal. */
static bool window_allows(vkattn_causal c, uint32_t w, uint32_t i, uint32_t j, uint32_t tq,
                          uint32_t tv)
{
    if (w == 0)
        return true;
    int64_t pos = (int64_t)i;
    if (c == VKATTN_CAUSAL_BOTTOM_RIGHT)
        pos += (int64_t)tv - (int64_t)tq;
    const int64_t d = pos - (int64_t)j;
    return (d < 0 ? -d : d) < (int64_t)w;
}

static bool allowed_at(const vka_ref_mask *m, uint32_t b, uint32_t h, uint32_t i, uint32_t j)
{
    const vkattn_mask_params *p = m->p;
    if (!causal_allows(p->causal, i, j, m->tq, m->tv) ||
        !window_allows(p->causal, m->window, i, j, m->tq, m->tv))
        return false;
    /* "nonzero = may attend": written as != 0 so that NaN counts as nonzero */
    if (p->has_value_mask && m->value_mask[(size_t)b * m->tv + j] == 0.0f)
        return false;
    if (p->has_mask && m->mask[bcast_index(m, p->mask_broadcast, b, h, i, j)] == 0.0f)
        return false;
    return true;
}

/* Weights of a row with nothing to attend to: never NaN (docs/SEMANTICS.md). */
static void fill_masked_row(double *row, uint32_t tv, vkattn_masked_row policy)
{
    double w = policy == VKATTN_MASKED_ROW_UNIFORM ? 1.0 / tv : 0.0;
    for (uint32_t j = 0; j < tv; j++)
        row[j] = w;
}

void vka_ref_softmax_row(const vka_ref_mask *m, uint32_t b, uint32_t h, uint32_t i,
                         double *row, unsigned char *allowed)
{
    vka_ref_softmax_row_sink(m, b, h, i, row, allowed, NULL);
}

double vka_ref_softmax_row_sink(const vka_ref_mask *m, uint32_t b, uint32_t h, uint32_t i,
                                double *row, unsigned char *allowed, const double *sink)
{
    const vkattn_mask_params *p = m->p;
    const uint32_t tv = m->tv;
    double max = -INFINITY;
    bool has_nan = false;
    for (uint32_t j = 0; j < tv; j++) {
        allowed[j] = allowed_at(m, b, h, i, j);
        if (p->has_bias)
            row[j] += m->bias[bcast_index(m, p->bias_broadcast, b, h, i, j)];
        if (!allowed[j])
            continue;
        if (isnan(row[j]))
            has_nan = true;
        else if (row[j] > max)
            max = row[j];
    }
    /* No allowed key, or every allowed logit is -inf (a -inf bias used as a
     * mask): the masked-row policy, not the 0/0 = NaN of the naive formula.
     * A GPU kernel that starts its running max at a finite very negative value
     * and guards the zero denominator reaches the same answer. With a sink the
     * row's weights are 0 whatever the policy (the sink takes it all). */
    if (!has_nan && max == -INFINITY) {
        if (sink) {
            fill_masked_row(row, tv, VKATTN_MASKED_ROW_ZERO);
            return 1.0;
        }
        fill_masked_row(row, tv, p->masked_row);
        return 0.0;
    }
    /* A sink joins the max and the denominator and takes no value. */
    if (sink && *sink > max)
        max = *sink;
    double sum = sink ? exp(*sink - max) : 0.0;
    const double sink_share = sum;
    /* NaN among the allowed logits propagates naturally to this row only. */
    for (uint32_t j = 0; j < tv; j++) {
        row[j] = allowed[j] ? exp(row[j] - max) : 0.0;
        sum += row[j];
    }
    for (uint32_t j = 0; j < tv; j++)
        if (allowed[j])
            row[j] /= sum;
    return sink_share / sum;
}

void vka_ref_softcap_row(double softcap, double *row, uint32_t tv)
{
    if (softcap > 0.0)
        for (uint32_t j = 0; j < tv; j++)
            row[j] = softcap * tanh(row[j] / softcap);
}

vkattn_result vka_ref_softmax_check(const char *fn, const vkattn_softmax_params *p,
                                    const char *const *names, const void *const *arrays, int n,
                                    const void *bias, const float *value_mask, const float *mask,
                                    vka_ref_mask *m)
{
    /* the op's plan: the same params refused with the same messages */
    vka_softmax_shape s;
    vkattn_result r = vka_softmax_shape_plan(NULL, fn, p, names[0], &s);
    if (r != VKATTN_SUCCESS)
        return r;
    const uint32_t heads = s.heads;
    for (int i = 0; i < n; i++)
        if ((r = vka_ref_require_ptr(fn, names[i], arrays[i])))
            return r;
    char what[64];
    snprintf(what, sizeof what, "%s (B, H, Tq, Tv)", names[0]);
    const uint64_t dims[4] = {p->batch, heads, p->tq, p->tv};
    if ((r = vka_ref_count(fn, what, dims, 4, NULL)))
        return r;
    *m = (vka_ref_mask){&p->mask, p->batch, heads, p->tq, p->tv, bias, value_mask, mask,
                        p->sliding_window};
    return vka_ref_check_mask(fn, m);
}

static vkattn_result softmax_typed(const char *fn, const vkattn_softmax_params *p,
                                   const vkattn_softmax_dtypes *types, const void *scores,
                                   const void *bias, const float *value_mask, const float *mask,
                                   void *out)
{
    const vkattn_softmax_dtypes ty = types ? *types : (vkattn_softmax_dtypes){0};
    vkattn_result r;
    if ((r = vka_ref_check_dtype(fn, "scores", ty.scores)) ||
        (r = vka_ref_check_dtype(fn, "bias", ty.bias)) ||
        (r = vka_ref_check_dtype(fn, "out", ty.out)))
        return r;
    const char *names[] = {"scores", "out"};
    const void *arrays[] = {scores, out};
    vka_ref_mask m;
    if ((r = vka_ref_softmax_check(fn, p, names, arrays, 2, bias, value_mask, mask, &m)))
        return r;
    const uint32_t heads = m.heads;
    /* a bias not stored as f32 is read through an exact f32 copy */
    float *bias32 = NULL;
    if (p->mask.has_bias && vka_dtype_info_of(ty.bias)->from_f32) {
        uint64_t n = 0;
        vka_bcast_count(p->mask.bias_broadcast, p->batch, heads, p->tq, p->tv, &n);
        if (!(bias32 = malloc(n * sizeof *bias32)))
            return vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
        for (uint64_t i = 0; i < n; i++)
            bias32[i] = (float)vka_ref_load(bias, ty.bias, i);
        m.bias = bias32;
    }

    double *row;
    unsigned char *allowed;
    if ((r = vka_ref_alloc_row(fn, p->tv, &row, &allowed))) {
        free(bias32);
        return r;
    }
    const double scale = vka_default_f32(p->scale, 1.0f);
    size_t base = 0;
    for (uint32_t b = 0; b < p->batch; b++)
        for (uint32_t h = 0; h < heads; h++)
            for (uint32_t i = 0; i < p->tq; i++, base += p->tv) {
                /* The whole row is read before any of it is written: out may be scores. */
                for (uint32_t j = 0; j < p->tv; j++)
                    row[j] = vka_ref_load(scores, ty.scores, base + j) * scale;
                vka_ref_softmax_row(&m, b, h, i, row, allowed);
                for (uint32_t j = 0; j < p->tv; j++)
                    vka_ref_store(out, ty.out, base + j, row[j]);
            }
    free(row);
    free(bias32);
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_reference_softmax(const vkattn_softmax_params *p,
                                             const vkattn_softmax_dtypes *types,
                                             const void *scores, const void *bias,
                                             const float *value_mask, const float *mask, void *out)
{
    return softmax_typed(__func__, p, types, scores, bias, value_mask,
                         mask, out);
}
