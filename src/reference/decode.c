/* CPU reference of decode attention against a KV cache: one query row at a
 * time over its visible keys, in double. The params are resolved by the GPU
 * op's plan (shape/decode_plan.h), so the two accept the same calls. */
#include "vkattn/reference.h"

#include <math.h>
#include <stdlib.h>

#include "core/dropout_host.h"
#include "core/error.h"
#include "reference/ref_internal.h"
#include "reference/typed_io.h"
#include "shape/decode_plan.h"
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
    vka_decode_shape s;
    if (p && p->has_sinks) /* no sinks operand: the layer references compute sinks */
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: p->has_sinks is not accepted here (no sinks operand); "
                        "vkattn_reference_mha and vkattn_reference_gqa compute sinks",
                        fn);
    /* the op's plan first (params NULL too): the op's refusals and messages */
    if ((r = vka_decode_plan(NULL, fn, p, &s)) || (r = vka_ref_check_dtypes(fn, all, names, 4)) ||
        (r = vka_ref_require_ptr(fn, "q", q)) ||
        (r = vka_ref_require_ptr(fn, "k", k)) || (r = vka_ref_require_ptr(fn, "v", v)) ||
        (r = vka_ref_require_ptr(fn, "lengths", lengths)) ||
        (r = vka_ref_require_ptr(fn, "out", out)) ||
        (r = vka_ref_require_flagged(fn, "value_mask", "has_value_mask", p->has_value_mask,
                                     value_mask)))
        return r;
    /* the loops index with size_t: the host's own limit, beyond the plan's */
    const uint32_t dmax = s.dk > s.dv ? s.dk : s.dv;
    const uint64_t kd[4] = {s.batch, s.kv_heads, s.capacity, dmax};
    const uint64_t qd[4] = {s.batch, s.heads, s.tq, dmax};
    if ((r = vka_ref_count(fn, "the cache", kd, 4, NULL)) ||
        (r = vka_ref_count(fn, "q and out", qd, 4, NULL)))
        return r;
    for (uint32_t b = 0; b < s.batch; b++)
        if (lengths[b] > s.capacity)
            return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                            "%s: lengths[%u] is %u; the capacity is %u", fn, b, lengths[b],
                            s.capacity);
    double *w = malloc(sizeof(double) * s.capacity);
    if (!w)
        return vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    const double scale = vka_ref_attention_scale(p->scale, s.dk);
    const uint32_t threshold = s.drop_threshold;
    const double dscale = s.drop_scale;
    for (uint32_t b = 0; b < s.batch; b++)
        for (uint32_t h = 0; h < s.heads; h++) {
            const size_t bh = (size_t)b * s.heads + h, bhk = (size_t)b * s.kv_heads + h / s.group;
            const size_t kb = bhk * s.capacity * s.dk, vb = bhk * s.capacity * s.dv;
            for (uint32_t i = 0; i < s.tq; i++) {
                const size_t qi = (bh * s.tq + i) * s.dk, oi = (bh * s.tq + i) * s.dv;
                const int64_t end = (int64_t)lengths[b] - s.tq + i + 1;
                const uint32_t n = end > 0 ? (uint32_t)end : 0;
                /* the sliding window: keys j > end - 1 - w, i.e. j >= end - w */
                const int64_t first = s.window ? end - (int64_t)s.window : 0;
                double mx = -INFINITY, sum = 0.0;
                for (uint32_t j = 0; j < n; j++) {
                    const bool ok = (int64_t)j >= first &&
                                    (!p->has_value_mask ||
                                     value_mask[(size_t)b * s.capacity + j] != 0.0f);
                    double dot = 0.0;
                    for (uint32_t e = 0; e < s.dk; e++)
                        dot += vka_ref_load(q, ty.q, qi + e) *
                               vka_ref_load(k, ty.k, kb + (size_t)j * s.dk + e);
                    double sc = dot * scale;
                    vka_ref_softcap_row(p->softcap, &sc, 1);
                    w[j] = ok ? sc : -INFINITY;
                    if (w[j] > mx)
                        mx = w[j];
                }
                for (uint32_t j = 0; j < n; j++) {
                    w[j] = w[j] == -INFINITY ? 0.0 : exp(w[j] - mx);
                    sum += w[j];
                }
                for (uint32_t j = 0; j < n; j++) {
                    w[j] = sum > 0.0 ? w[j] / sum : 0.0;
                    if (s.drop)
                        w[j] = vkattn_dropout_keep(p->dropout.seed, p->dropout.offset, threshold,
                                                   (uint32_t)bh, i, j)
                                   ? w[j] * dscale
                                   : 0.0;
                }
                for (uint32_t e = 0; e < s.dv; e++) {
                    double acc = 0.0;
                    for (uint32_t j = 0; j < n; j++)
                        acc += w[j] * vka_ref_load(v, ty.v, vb + (size_t)j * s.dv + e);
                    vka_ref_store(out, ty.out, oi + e, acc);
                }
            }
        }
    free(w);
    return VKATTN_SUCCESS;
}

