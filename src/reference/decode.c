/* CPU reference of decode attention against a KV cache: one query row at a
 * time over its visible keys, in double. */
#include "vkattn/reference.h"

#include <math.h>
#include <stdlib.h>

#include "core/check.h"
#include "core/dropout_host.h"
#include "core/error.h"
#include "reference/ref_internal.h"
#include "reference/typed_io.h"
#include "vkattn/philox.h"

static const char fn[] = "vkattn_reference_sdpa_decode";

vkattn_result vkattn_reference_sdpa_decode(const vkattn_sdpa_decode_params *p,
                                                 const vkattn_sdpa_dtypes *types, const void *q,
                                                 const void *k, const void *v,
                                                 const uint32_t *lengths,
                                                 const float *value_mask, void *out)
{
    vkattn_result r;
    const vkattn_sdpa_dtypes ty = types ? *types : (vkattn_sdpa_dtypes){0};
    const vkattn_dtype all[4] = {ty.q, ty.k, ty.v, ty.out};
    static const char *const names[4] = {"q", "k", "v", "out"};
    if ((r = vka_ref_require_ptr(fn, "p", p)) || (r = vka_ref_check_dtypes(fn, all, names, 4)) || (r = vka_ref_require_dim(fn, "batch", p->batch)) ||
        (r = vka_ref_require_dim(fn, "heads", p->heads)) ||
        (r = vka_ref_require_dim(fn, "tq", p->tq)) ||
        (r = vka_ref_require_dim(fn, "capacity", p->capacity)) ||
        (r = vka_ref_require_dim(fn, "dk", p->dk)) ||
        (r = vka_ref_require_finite(fn, "scale", p->scale)) ||
        (r = vka_ref_check_dropout(fn, &p->dropout)) || (r = vka_ref_require_ptr(fn, "q", q)) ||
        (r = vka_ref_require_ptr(fn, "k", k)) || (r = vka_ref_require_ptr(fn, "v", v)) ||
        (r = vka_ref_require_ptr(fn, "lengths", lengths)) ||
        (r = vka_ref_require_ptr(fn, "out", out)) ||
        (r = vka_ref_require_flagged(fn, "value_mask", "has_value_mask", p->has_value_mask,
                                     value_mask)))
        return r;
    const uint32_t kvh = vka_default_u32(p->kv_heads, p->heads), dv = vka_default_u32(p->dv, p->dk);
    if (p->tq > VKATTN_DECODE_MAX_TQ || p->heads % kvh)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: tq (%u) must be <= %u and kv_heads (%u) must divide heads (%u)", fn,
                        p->tq, VKATTN_DECODE_MAX_TQ, kvh, p->heads);
    const uint32_t dmax = p->dk > dv ? p->dk : dv;
    const uint64_t kd[4] = {p->batch, kvh, p->capacity, dmax};
    const uint64_t qd[4] = {p->batch, p->heads, p->tq, dmax};
    if ((r = vka_ref_count(fn, "the cache", kd, 4, NULL)) ||
        (r = vka_ref_count(fn, "q and out", qd, 4, NULL)))
        return r;
    for (uint32_t b = 0; b < p->batch; b++)
        if (lengths[b] > p->capacity)
            return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                            "%s: lengths[%u] is %u; the capacity is %u", fn, b, lengths[b],
                            p->capacity);
    double *w = malloc(sizeof(double) * p->capacity);
    if (!w)
        return vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    const double scale = vka_ref_attention_scale(p->scale, p->dk);
    const bool drop = vka_dropout_active(&p->dropout);
    const uint32_t threshold = vka_dropout_threshold(p->dropout.rate);
    const double dscale = vka_dropout_scale(p->dropout.rate);
    const uint32_t group = p->heads / kvh;
    for (uint32_t b = 0; b < p->batch; b++)
        for (uint32_t h = 0; h < p->heads; h++) {
            const size_t bh = (size_t)b * p->heads + h, bhk = (size_t)b * kvh + h / group;
            const size_t kb = bhk * p->capacity * p->dk, vb = bhk * p->capacity * dv;
            for (uint32_t i = 0; i < p->tq; i++) {
                const size_t qi = (bh * p->tq + i) * p->dk, oi = (bh * p->tq + i) * dv;
                const int64_t end = (int64_t)lengths[b] - p->tq + i + 1;
                const uint32_t n = end > 0 ? (uint32_t)end : 0;
                /* the sliding window: keys j > end - 1 - w, i.e. j >= end - w */
                const int64_t first = p->sliding_window ? end - (int64_t)p->sliding_window : 0;
                double mx = -INFINITY, sum = 0.0;
                for (uint32_t j = 0; j < n; j++) {
                    const bool ok = (int64_t)j >= first &&
                                    (!p->has_value_mask ||
                                     value_mask[(size_t)b * p->capacity + j] != 0.0f);
                    double dot = 0.0;
                    for (uint32_t e = 0; e < p->dk; e++)
                        dot += vka_ref_load(q, ty.q, qi + e) *
                               vka_ref_load(k, ty.k, kb + (size_t)j * p->dk + e);
                    w[j] = ok ? dot * scale : -INFINITY;
                    if (w[j] > mx)
                        mx = w[j];
                }
                for (uint32_t j = 0; j < n; j++) {
                    w[j] = w[j] == -INFINITY ? 0.0 : exp(w[j] - mx);
                    sum += w[j];
                }
                for (uint32_t j = 0; j < n; j++) {
                    w[j] = sum > 0.0 ? w[j] / sum : 0.0;
                    if (drop)
                        w[j] = vkattn_dropout_keep(p->dropout.seed, p->dropout.offset, threshold,
                                                   (uint32_t)bh, i, j)
                                   ? w[j] * dscale
                                   : 0.0;
                }
                for (uint32_t e = 0; e < dv; e++) {
                    double acc = 0.0;
                    for (uint32_t j = 0; j < n; j++)
                        acc += w[j] * vka_ref_load(v, ty.v, vb + (size_t)j * dv + e);
                    vka_ref_store(out, ty.out, oi + e, acc);
                }
            }
        }
    free(w);
    return VKATTN_SUCCESS;
}

