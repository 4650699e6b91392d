/* MultiHeadAttention and GroupedQueryAttention with an int8 KV cache
 * (vkattn_mha_record_cached, vkattn_gqa_record_cached; cache dtype
 * VKATTN_DTYPE_I8) vs the CPU reference of one causal call over the whole
 * sequence (VKATTN_CAUSAL_TOP_LEFT), f32 and f16 layers.
 *
 * Batch 2, a prefill of 9 tokens, steps of 1, 1 and 2; MHA 2 heads of
 * key_dim 8 and value_dim 4 (int8 widths are multiples of 4), GQA 4 query
 * heads over 2 K/V heads of head_dim 8; query/value width 10, MHA output 7.
 * Bound: the layer's fp bound (f32: 2e-5, f16: 8 * 2^-10, times
 * max(max|ref|, 1); tests test_mha_cache.c, test_mha_cache_f16.c) plus the
 * int8 cache's (docs/SEMANTICS.md), carried through the output projection:
 *   ctx error <= (expm1(2 eps) + 1/254) Vmax, eps = scale ||q||_1 Kmax / 254
 *   out error <= ctx error * max_c sum_r |W_o[r, c]|
 * with q, k, v the projected heads of every token (computed here in double;
 * Kmax, Vmax, ||q||_1 their largest), 1% on top for the f16 layer's rounded
 * projections. */
#include "cached_steps.h"

#include <vkattn/gqa.h>
#include <vkattn/mha.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define B 2u
#define W 10u
#define N 13u /* prefill 9, steps 1, 1, 2 */
#define CAP 16u

typedef struct layer_case {
    bool gqa;
    uint32_t hq, hkv, dk, dv, dout;
    vkattn_dtype dtype;
} layer_case;

/* The int8 term of the bound (header comment), from x (B * N rows). */
static double int8_bound(const layer_case *c, const vkattn_mha_weights *w, const float *x)
{
    double q1 = 0, kmax = 0, vmax = 0, wo1 = 0;
    for (size_t t = 0; t < (size_t)B * N; t++) {
        const float *xt = x + t * W;
        for (uint32_t h = 0; h < c->hq; h++) {
            double l1 = 0;
            for (uint32_t e = 0; e < c->dk; e++) {
                const size_t col = (size_t)h * c->dk + e;
                double s = w->query_bias[col];
                for (uint32_t i = 0; i < W; i++)
                    s += (double)xt[i] * w->query_kernel[i * c->hq * c->dk + col];
                l1 += fabs(s);
            }
            q1 = fmax(q1, l1);
        }
        for (size_t col = 0; col < (size_t)c->hkv * c->dk; col++) {
            double s = w->key_bias[col];
            for (uint32_t i = 0; i < W; i++)
                s += (double)xt[i] * w->key_kernel[i * c->hkv * c->dk + col];
            kmax = fmax(kmax, fabs(s));
        }
        for (size_t col = 0; col < (size_t)c->hkv * c->dv; col++) {
            double s = w->value_bias[col];
            for (uint32_t i = 0; i < W; i++)
                s += (double)xt[i] * w->value_kernel[i * c->hkv * c->dv + col];
            vmax = fmax(vmax, fabs(s));
        }
    }
    for (uint32_t o = 0; o < c->dout; o++) {
        double s = 0;
        for (size_t r = 0; r < (size_t)c->hq * c->dv; r++)
            s += fabs(w->output_kernel[r * c->dout + o]);
        wo1 = fmax(wo1, s);
    }
    const double eps = q1 * kmax / 254.0 / sqrt(c->dk);
    return (expm1(2 * eps) + 1.0 / 254) * vmax * wo1 * 1.01;
}

static void run_sequence(vkattn_context *ctx, const layer_case *c)
{
    const bool h16 = c->dtype == VKATTN_DTYPE_F16;
    const size_t n[8] = {W * c->hq * c->dk, c->hq * c->dk, W * c->hkv * c->dk, c->hkv * c->dk,
                         W * c->hkv * c->dv, c->hkv * c->dv, c->hq * c->dv * c->dout, c->dout};
    float *a[8];
    for (int i = 0; i < 8; i++) {
        a[i] = tu_floats(n[i]);
        tu_fill_uniform(a[i], n[i], -0.5f, 0.5f);
        if (h16)
            th_round_f16(a[i], n[i]);
    }
    const vkattn_mha_weights w = {a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]};
    const size_t nx = (size_t)B * N * W, no = (size_t)B * N * c->dout;
    float *x = tu_floats(nx), *ref = tu_floats(no), *got = tu_floats(no);
    tu_fill_uniform(x, nx, -1.0f, 1.0f);
    if (h16)
        th_round_f16(x, nx);
    tu_poison(got, no);
    const vkattn_layer_call full = {.batch = B, .tq = N, .tv = N,
                                    .causal = VKATTN_CAUSAL_TOP_LEFT};
    const vkattn_layer_host_io hio = {.query = x, .value = x, .output = ref};
    const vkattn_gqa_desc gd = {.head_dim = c->dk, .num_query_heads = c->hq,
                                .num_key_value_heads = c->hkv, .query_width = W,
                                .value_width = W};
    const vkattn_mha_desc md = {.num_heads = c->hq, .key_dim = c->dk, .value_dim = c->dv,
                                .query_width = W, .value_width = W, .output_dim = c->dout,
                                .dtype = c->dtype};
    vkattn_gqa_desc gd32 = gd;
    vkattn_mha_desc md32 = md;
    md32.dtype = VKATTN_DTYPE_F32;
    TH_OK(ctx, c->gqa ? vkattn_reference_gqa(&gd32, &w, &full, &hio)
                      : vkattn_reference_mha(&md32, &w, &full, &hio));
    vkattn_gqa *gqa = NULL;
    vkattn_mha *mha = NULL;
    vkattn_gqa_desc gdt = gd;
    gdt.dtype = c->dtype;
    if (c->gqa) {
        TH_OK(ctx, vkattn_gqa_create(ctx, &gdt, &gqa));
        TH_OK(ctx, vkattn_gqa_set_weights(gqa, &w));
    } else {
        TH_OK(ctx, vkattn_mha_create(ctx, &md, &mha));
        TH_OK(ctx, vkattn_mha_set_weights(mha, &w));
    }
    const vkattn_kv_cache_desc cd = {.batch = B, .kv_heads = c->hkv, .capacity = CAP,
                                     .key_dim = c->dk, .value_dim = c->dv,
                                     .dtype = VKATTN_DTYPE_I8};
    vkattn_kv_cache *cache;
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    static const uint32_t steps[] = {9, 1, 1, 2};
    const th_cached_run r = {.mha = mha, .gqa = gqa, .cache = cache, .batch = B, .len = N,
                             .width = W, .out_width = c->dout, .io_type = c->dtype};
    th_cached_steps(ctx, &r, x, 0, steps, sizeof steps / sizeof steps[0], got);
    double rmax = 1, err = 0;
    for (size_t i = 0; i < no; i++)
        rmax = fmax(rmax, fabs(ref[i]));
    for (size_t i = 0; i < no; i++)
        err = isnan(got[i]) ? INFINITY : fmax(err, fabs(got[i] - ref[i]));
    const double fp = (h16 ? 8.0 / 1024 : 2e-5) * rmax, i8 = int8_bound(c, &w, x);
    char what[100];
    snprintf(what, sizeof what, "%s %s layer, int8 cache", c->gqa ? "gqa" : "mha",
             h16 ? "f16" : "f32");
    if (!TU_WITHIN(err, fp + i8))
        fail_msg("%s: cached calls vs the full causal call: error %.3g exceeds %.3g (fp %.3g "
                 "+ int8 %.3g)",
                 what, err, fp + i8, fp, i8);
    print_message("%s: error %.3g, %.2g of the bound (fp %.3g + int8 %.3g)\n", what, err,
                  err / (fp + i8), fp, i8);
    th_assert_validation_clean();
    vkattn_kv_cache_destroy(cache);
    vkattn_gqa_destroy(gqa);
    vkattn_mha_destroy(mha);
    for (int i = 0; i < 8; i++)
        free(a[i]);
    free(x), free(ref), free(got);
}

static void test_mha(void **state)
{
    const layer_case f32 = {false, 2, 2, 8, 4, 7, VKATTN_DTYPE_F32};
    const layer_case f16 = {false, 2, 2, 8, 4, 7, VKATTN_DTYPE_F16};
    run_sequence(TH_CTX(state), &f32);
    run_sequence(TH_CTX(state), &f16);
}

static void test_gqa(void **state)
{
    const layer_case f32 = {true, 4, 2, 8, 8, W, VKATTN_DTYPE_F32};
    const layer_case f16 = {true, 4, 2, 8, 8, W, VKATTN_DTYPE_F16};
    run_sequence(TH_CTX(state), &f32);
    run_sequence(TH_CTX(state), &f16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {TU_TESTS(test_mha, test_gqa)};
    return cmocka_run_group_tests_name("mha/gqa cache int8", tests, th_setup, th_teardown);
}
