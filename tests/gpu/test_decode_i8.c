/* An int8 KV cache (vkattn_kv_cache_desc.dtype VKATTN_DTYPE_I8): appends of
 * f16 and f32 rows quantized on the device, and decode reading the int8
 * cache in place.
 *
 * The quantization twin here is written from the documented rule
 * (vkattn/kv_cache.h), not from the library: per row, scale = max|x| / 127
 * (fp32), q = clamp(rint(x / scale), -127, 127), a zero row scale 0 and q 0.
 * The cache's storage (vkattn_kv_cache_get_desc(...).keys: the int8 words,
 * then the fp32 scales) must equal it: bit for bit where division is
 * correctly rounded (lavapipe); elsewhere Vulkan allows 2.5 ulp divisions,
 * so a scale may be off by a few ulps and a q by 1 where x / scale is
 * within 1e-4 of a rounding tie. Checks:
 *   1. decode vs vkattn_reference_sdpa_decode on the cache dequantized on
 *      the host (k = q * scale): the fp32 bounds of vkattn/decode.h,
 *      2e-5 max|ref| (f32 out), (2e-5 + 2^-10) max|ref| (f16 out);
 *   2. without dropout, decode vs the reference on the unquantized values,
 *      per query row (docs/SEMANTICS.md, "Int8 KV cache"):
 *        |out - ref| <= (expm1(2 eps) + 1/254) Vmax + 2e-5 max|ref|,
 *        eps = scale * ||q||_1 * Kmax / 254,
 *      Kmax, Vmax the largest |k|, |v| of the row's (b, K/V head).
 * Random shapes: B 1..3 ragged (counts), grouped heads, Tq 1..4, dk != dv
 * (multiples of 4), rows of magnitudes 0.01..10 and one zero row, value
 * mask, dropout, q and out f32 or f16; dk 160 takes the tiles layout on
 * lavapipe (the lanes layout stops at 128). Bad inputs: widths not a
 * multiple of 4 (naming the field), app tensors, I8 where only the cache
 * takes it. Run under the default
 * profile and mobile-min (decode_packed.comp). */
#include "harness.h"
#include "kv_rows.h"

#include <vkattn/half.h>
#include <vkattn/mha.h>
#include <vkattn/reference.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOUND 2e-5
#define BOUND_OUT16 (2e-5 + 1.0 / 1024)

/* The documented rule, on the host. */
static void quantize_row(const float *x, uint32_t w, int8_t *q, float *scale)
{
    float mx = 0.0f;
    for (uint32_t e = 0; e < w; e++)
        mx = fmaxf(mx, fabsf(x[e]));
    const float s = mx / 127.0f;
    for (uint32_t e = 0; e < w; e++)
        q[e] = s > 0.0f ? (int8_t)fminf(fmaxf(rintf(x[e] / s), -127.0f), 127.0f) : 0;
    *scale = s;
}

/* The storage of rows [0, len_b) against the twin of the host values; fills
 * deq (B, Hkv, cap, width) with the stored rows dequantized (0 elsewhere). */
static void check_storage(vkattn_tensor *t, const float *want, const vkattn_kv_cache_desc *cd,
                          uint32_t width, const uint32_t *len, float *deq, const char *what)
{
    const size_t rows = (size_t)cd->batch * cd->kv_heads * cd->capacity;
    const size_t w4 = width / 4, nw = rows * w4 + rows;
    assert_int_equal(vkattn_tensor_get_info(t).count, nw);
    uint32_t *words = malloc(nw * 4);
    int8_t q[256];
    assert_non_null(words);
    TH_OK(NULL, vkattn_tensor_download_raw(t, words, 0, nw));
    memset(deq, 0, sizeof(float) * rows * width);
    for (size_t bh = 0; bh < (size_t)cd->batch * cd->kv_heads; bh++)
        for (uint32_t r = 0; r < len[bh / cd->kv_heads]; r++) {
            const size_t row = bh * cd->capacity + r;
            float s, gs;
            quantize_row(want + row * width, width, q, &s);
            memcpy(&gs, &words[rows * w4 + row], 4);
            if (!(fabsf(gs - s) <= 4 * 1.2e-7f * s))
                fail_msg("%s row %zu: scale %.9g, the rule gives %.9g", what, row, gs, s);
            for (uint32_t e = 0; e < width; e++) {
                const int8_t g = (int8_t)(words[row * w4 + e / 4] >> (8 * (e % 4)));
                const double u = s > 0 ? fabs((double)want[row * width + e] / s) : 0.0;
                const bool tie = fabs(u - floor(u) - 0.5) < 1e-4;
                if (g != q[e] && !(tie && abs(g - q[e]) == 1))
                    fail_msg("%s row %zu e %u: q %d, the rule gives %d (x %.9g, scale %.9g)",
                             what, row, e, g, q[e], (double)want[row * width + e], (double)s);
                deq[row * width + e] = (float)g * gs;
            }
        }
    free(words);
}

/* Check 2: per query row against the unquantized reference ref32. */
static void check_vs_f32(const vkattn_sdpa_decode_params *p, const float *q, const float *hk,
                         const float *hv, const uint32_t *len, const float *got,
                         const float *ref32, const char *what)
{
    const uint32_t G = p->heads / p->kv_heads;
    const size_t nout = (size_t)p->batch * p->heads * p->tq * p->dv;
    double rmax = 0, worst = 0;
    for (size_t i = 0; i < nout; i++)
        rmax = fmax(rmax, fabs(ref32[i]));
    const double scale = p->scale != 0 ? p->scale : 1.0 / sqrt(p->dk);
    for (uint32_t b = 0; b < p->batch; b++)
        for (uint32_t h = 0; h < p->heads; h++) {
            const size_t bhk = (size_t)b * p->kv_heads + h / G;
            double kmax = 0, vmax = 0;
            for (uint32_t r = 0; r < len[b]; r++) {
                for (uint32_t e = 0; e < p->dk; e++)
                    kmax = fmax(kmax, fabs(hk[(bhk * p->capacity + r) * p->dk + e]));
                for (uint32_t e = 0; e < p->dv; e++)
                    vmax = fmax(vmax, fabs(hv[(bhk * p->capacity + r) * p->dv + e]));
            }
            for (uint32_t i = 0; i < p->tq; i++) {
                const size_t row = ((size_t)b * p->heads + h) * p->tq + i;
                double q1 = 0;
                for (uint32_t e = 0; e < p->dk; e++)
                    q1 += fabs(q[row * p->dk + e]);
                const double eps = scale * q1 * kmax / 254.0;
                const double bound = (expm1(2 * eps) + 1.0 / 254) * vmax + BOUND * rmax;
                for (uint32_t e = 0; e < p->dv; e++) {
                    const double err = fabs(got[row * p->dv + e] - ref32[row * p->dv + e]);
                    if (!(err <= bound))
                        fail_msg("%s: row %zu e %u: error %.3g vs the f32 cache exceeds the "
                                 "int8 bound %.3g",
                                 what, row, e, err, bound);
                    worst = fmax(worst, err / bound);
                }
            }
        }
    print_message("%s: error vs the f32 cache at most %.2g of the int8 bound\n", what, worst);
}

static void run_case(vkattn_context *ctx, uint32_t B, uint32_t kvh, uint32_t group, uint32_t tq,
                     uint32_t cap, uint32_t dk, uint32_t dv, bool vmask, float rate, bool q16,
                     bool out16)
{
    vkattn_kv_cache_desc cd = {.batch = B, .kv_heads = kvh, .capacity = cap, .key_dim = dk,
                               .value_dim = dv, .dtype = VKATTN_DTYPE_I8};
    vkattn_kv_cache *cache;
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    const size_t nk = (size_t)B * kvh * cap * dk, nv = (size_t)B * kvh * cap * dv;
    float *hk = tu_floats(nk), *hv = tu_floats(nv), *dqk = tu_floats(nk), *dqv = tu_floats(nv);
    memset(hk, 0, nk * 4), memset(hv, 0, nv * 4);
    uint32_t len[3] = {0}, count[3];
    for (int step = 0; step < 2; step++) {
        const uint32_t tnew = tu_rand_range(1, cap / 2);
        for (uint32_t b = 0; b < B; b++)
            count[b] = tu_rand_range(0, tnew);
        th_kv_append_random(ctx, cache, &cd, tnew, len, count, step == 0, true, hk, hv);
        for (uint32_t b = 0; b < B; b++)
            len[b] += count[b];
    }
    char what[200];
    snprintf(what, sizeof what, "int8 cache B=%u Hkv=%u G=%u Tq=%u cap=%u dk=%u dv=%u vm=%d "
             "rate=%g q16=%d out16=%d", B, kvh, group, tq, cap, dk, dv, vmask, (double)rate,
             q16, out16);
    const vkattn_kv_cache_desc got_d = vkattn_kv_cache_get_desc(cache);
    assert_int_equal(got_d.dtype, VKATTN_DTYPE_I8);
    check_storage(got_d.keys, hk, &cd, dk, len, dqk, what);
    check_storage(got_d.values, hv, &cd, dv, len, dqv, what);

    const uint32_t H = kvh * group;
    vkattn_sdpa_decode_params p = {
        .batch = B, .heads = H, .tq = tq, .kv_heads = kvh, .capacity = cap, .dk = dk, .dv = dv,
        .scale = tu_rand_range(0, 1) ? 0.0f : tu_rand_float(0.1f, 1.0f), .has_value_mask = vmask,
        .dropout = {.rate = rate, .training = rate > 0, .seed = tu_rand_u32(),
                    .offset = tu_rand_u32()},
    };
    const size_t nq = (size_t)B * H * tq * dk, nout = (size_t)B * H * tq * dv;
    const size_t nvm = (size_t)B * cap;
    float *q = tu_floats(nq), *vm = tu_floats(nvm), *ref = tu_floats(nout);
    tu_fill_uniform(q, nq, -1, 1);
    if (q16)
        th_round_f16(q, nq);
    tu_fill_mask(vm, nvm, 0.8f);
    TH_OK(ctx, vkattn_reference_sdpa_decode(&p, NULL, q, dqk, dqv, len, vmask ? vm : NULL, ref));
    vkattn_sdpa_decode_io io = {
        .q = q16 ? th_rows_tensor(ctx, B, H, tq, dk, VKATTN_DTYPE_F16, q) : th_tensor(ctx, nq, q),
        .cache = cache, .value_mask = vmask ? th_tensor(ctx, nvm, vm) : NULL,
        .out = out16 ? th_rows_tensor(ctx, B, H, tq, dv, VKATTN_DTYPE_F16, NULL)
                     : th_tensor(ctx, nout, NULL)};
    if (out16)
        TH_OK(ctx, vkattn_tensor_fill(io.out, NAN));
    TH_OK(ctx, vkattn_sdpa_decode_record(ctx, VKATTN_RUN_NOW, &p, &io));
    float *got = th_download(io.out, nout);
    TU_ASSERT_CLOSE(got, ref, nout, out16 ? BOUND_OUT16 : BOUND, what);
    if (rate == 0.0f && !out16) {
        TH_OK(ctx, vkattn_reference_sdpa_decode(&p, NULL, q, hk, hv, len, vmask ? vm : NULL,
                                                ref));
        check_vs_f32(&p, q, hk, hv, len, got, ref, what);
    }
    th_assert_validation_clean();
    vkattn_tensor_destroy(io.q);
    vkattn_tensor_destroy(io.value_mask);
    vkattn_tensor_destroy(io.out);
    vkattn_kv_cache_destroy(cache);
    void *fs[] = {hk, hv, dqk, dqv, q, vm, ref, got};
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
        free(fs[i]);
}

static void test_random(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 8; i++)
        run_case(ctx, tu_rand_range(1, 3), tu_rand_range(1, 2), tu_rand_range(1, 2),
                 tu_rand_range(1, 4), tu_rand_range(5, 80), 8, 12, tu_rand_range(0, 1),
                 tu_rand_range(0, 2) ? 0.0f : 0.3f, tu_rand_range(0, 1), tu_rand_range(0, 1));
    run_case(ctx, 2, 2, 4, 3, 40, 64, 32, true, 0.0f, false, false); /* wide, f32 bound */
    run_case(ctx, 1, 1, 3, 1, 33, 4, 4, false, 0.0f, true, false);   /* f16 q */
    run_case(ctx, 2, 1, 2, 2, 50, 160, 8, true, 0.0f, false, false); /* tiles layout */
}

static void test_bad_inputs(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_kv_cache *cache = NULL;
    vkattn_kv_cache_desc cd = {.batch = 1, .kv_heads = 1, .capacity = 4, .key_dim = 6,
                               .value_dim = 4, .dtype = VKATTN_DTYPE_I8};
    TH_EXPECT_ERROR(vkattn_kv_cache_create(ctx, &cd, &cache), VKATTN_ERROR_UNSUPPORTED,
                    "desc->key_dim (6)");
    cd.key_dim = 4, cd.value_dim = 2;
    TH_EXPECT_ERROR(vkattn_kv_cache_create(ctx, &cd, &cache), VKATTN_ERROR_UNSUPPORTED,
                    "desc->value_dim (2)");
    cd.value_dim = 4;
    cd.keys = th_tensor(ctx, 16, NULL);
    TH_EXPECT_ERROR(vkattn_kv_cache_create(ctx, &cd, &cache), VKATTN_ERROR_UNSUPPORTED,
                    "desc->keys");
    vkattn_tensor_destroy(cd.keys);
    cd.keys = NULL;
    assert_null(cache);
    /* only the cache takes I8: tensors, layers and the references refuse it */
    vkattn_tensor *t = NULL;
    const vkattn_tensor_desc td = {.rank = 1, .dims = {4}, .dtype = VKATTN_DTYPE_I8};
    TH_EXPECT_ERROR(vkattn_tensor_create(ctx, &td, &t), VKATTN_ERROR_INVALID_ARGUMENT,
                    "desc->dtype is 2");
    vkattn_mha *mha = NULL;
    const vkattn_mha_desc md = {.num_heads = 1, .key_dim = 4, .query_width = 4, .value_width = 4,
                                .dtype = VKATTN_DTYPE_I8};
    TH_EXPECT_ERROR(vkattn_mha_create(ctx, &md, &mha), VKATTN_ERROR_INVALID_ARGUMENT,
                    "desc->dtype is 2");
    vkattn_sdpa_decode_params p = {.batch = 1, .heads = 1, .tq = 1, .capacity = 4, .dk = 4};
    float h[16] = {0};
    uint32_t len = 1;
    const vkattn_sdpa_dtypes ty = {.k = VKATTN_DTYPE_I8};
    TH_EXPECT_ERROR(vkattn_reference_sdpa_decode(&p, &ty, h, h, h, &len, NULL, h),
                    VKATTN_ERROR_INVALID_ARGUMENT, "types->k is 2");
    th_assert_validation_clean();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_random),
    };
    int failed = cmocka_run_group_tests_name("decode int8", tests, th_setup, th_teardown);
    return failed + cmocka_run_group_tests_name("decode int8, mobile-min", tests,
                                                th_setup_mobile, th_teardown);
}
