/* See kv_rows.h. */
#include "kv_rows.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

vkattn_tensor *th_rows_tensor(vkattn_context *ctx, uint32_t b, uint32_t h, uint32_t t,
                              uint32_t w, vkattn_dtype dtype, const float *x)
{
    vkattn_tensor_desc desc = {.rank = 4, .dims = {b, h, t, w}, .dtype = dtype};
    vkattn_tensor *d = NULL;
    TH_OK(ctx, vkattn_tensor_create(ctx, &desc, &d));
    if (x)
        TH_OK(ctx, vkattn_tensor_upload(d, x, 0, (uint64_t)b * h * t * w));
    else
        TH_OK(ctx, vkattn_tensor_fill(d, NAN));
    return d;
}

/* rows of width w uniform in [-1, 1], each scaled by 10^U(-2, 1) when varied
 * (row 0 by 0 when zero_first): an int8 cache's scales then span 3 decades */
static void fill_rows(float *x, size_t rows, uint32_t w, bool varied, bool zero_first)
{
    tu_fill_uniform(x, rows * w, -1, 1);
    for (size_t r = 0; varied && r < rows; r++) {
        const float m = zero_first && r == 0 ? 0.0f : powf(10.0f, tu_rand_float(-2.0f, 1.0f));
        for (uint32_t e = 0; e < w; e++)
            x[r * w + e] *= m;
    }
}

void th_kv_append_random(vkattn_context *ctx, vkattn_kv_cache *cache,
                         const vkattn_kv_cache_desc *cd, uint32_t tnew, const uint32_t *len,
                         const uint32_t *count, vkattn_dtype src, bool varied, float *hk,
                         float *hv)
{
    const bool src16 = src != VKATTN_DTYPE_F32;
    const uint32_t B = cd->batch, H = cd->kv_heads, cap = cd->capacity;
    const uint32_t dk = cd->key_dim, dv = cd->value_dim;
    const size_t nk = (size_t)B * H * tnew * dk, nv = (size_t)B * H * tnew * dv;
    float *k = tu_floats(nk), *v = tu_floats(nv), *counts = tu_floats(B);
    fill_rows(k, (size_t)B * H * tnew, dk, varied, src16);
    fill_rows(v, (size_t)B * H * tnew, dv, varied, src16);
    th_round_to(k, nk, src), th_round_to(v, nv, src);
    for (uint32_t b = 0; b < B; b++)
        counts[b] = (float)count[b];
    vkattn_tensor *tk = th_rows_tensor(ctx, B, H, tnew, dk, src, k);
    vkattn_tensor *tv = th_rows_tensor(ctx, B, H, tnew, dv, src, v);
    vkattn_tensor *tc = th_tensor(ctx, B, counts);
    vkattn_kv_append_io io = {.k = tk, .v = tv, .counts = tc};
    TH_OK(ctx, vkattn_kv_cache_append_record(cache, VKATTN_RUN_NOW, &io));
    for (uint32_t bh = 0; bh < B * H; bh++)
        for (uint32_t t = 0; t < count[bh / H]; t++) {
            const size_t row = (size_t)bh * cap + len[bh / H] + t;
            memcpy(hk + row * dk, k + ((size_t)bh * tnew + t) * dk, sizeof(float) * dk);
            memcpy(hv + row * dv, v + ((size_t)bh * tnew + t) * dv, sizeof(float) * dv);
        }
    vkattn_tensor_destroy(tk), vkattn_tensor_destroy(tv), vkattn_tensor_destroy(tc);
    free(k), free(v), free(counts);
}
