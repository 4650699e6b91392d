/* Decode attention with soft-capping (params.softcap) and attention sinks
 * (params.has_sinks, io->sinks (H) f32).
 *
 * Softcap: against vkattn_reference_sdpa_decode with the same softcap
 * (c tanh(s / c) of the scaled score, before the masks), on q and k drawn
 * in [-3, 3] so that the cap bends most logits; f32, f16 and int8 caches
 * (the reference on the f16 values / the int8 storage dequantized), dropout
 * in some cases. Bound: decode's, 2e-5 max|ref| (the device tanh is
 * tanh_robust.glsl's, a few ulps).
 * Sinks: against vkattn_reference_sdpa on the equivalent problem: each
 * sequence's L keys with one key prepended, k = 0 and v = 0, whose logit is
 * the bias sink_h (a bias (1, H, 1, L + 1)), bottom-right causal (prepending
 * keeps the alignment), masked rows zero; the value mask gets 1 on the new
 * column. Rows with no key (Tq > L) are zeros in both. All sequences hold L
 * keys (vkattn_reference_sdpa has one Tv), f32 cache (app tensors), grouped
 * heads, value mask, Tq 1..4; dk 160 takes the tiles layout on lavapipe.
 * Bound 2e-5 max|ref|. Bad inputs: a negative or NaN softcap, sinks missing
 * or unexpected, the reference refusing has_sinks. Default profile and
 * mobile-min. */
#include "harness.h"
#include "kv_rows.h"

#include <vkattn/reference.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOUND 2e-5

/* An int8 storage tensor (vkattn/kv_cache.h) dequantized, q * scale. */
static void dequantize(vkattn_tensor *t, size_t rows, uint32_t width, float *x)
{
    const size_t w4 = width / 4, nw = rows * w4 + rows;
    uint32_t *words = malloc(nw * 4);
    assert_non_null(words);
    TH_OK(NULL, vkattn_tensor_download_raw(t, words, 0, nw));
    for (size_t r = 0; r < rows; r++) {
        float s;
        memcpy(&s, &words[rows * w4 + r], 4);
        for (uint32_t e = 0; e < width; e++)
            x[r * width + e] = (float)(int8_t)(words[r * w4 + e / 4] >> (8 * (e % 4))) * s;
    }
    free(words);
}

/* A cache of type `dtype` holding L random keys per sequence (appended);
 * k, v get the values the cache holds, (B, Hkv, cap, d). */
static vkattn_kv_cache *filled_cache(vkattn_context *ctx, vkattn_dtype dtype, uint32_t B,
                                     uint32_t kvh, uint32_t cap, uint32_t L, uint32_t dk,
                                     uint32_t dv, float a, float *k, float *v)
{
    vkattn_kv_cache_desc cd = {.batch = B, .kv_heads = kvh, .capacity = cap, .key_dim = dk,
                               .value_dim = dv, .dtype = dtype};
    vkattn_kv_cache *cache;
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    const size_t nk = (size_t)B * kvh * L * dk, nv = (size_t)B * kvh * L * dv;
    float *nk_ = tu_floats(nk), *nv_ = tu_floats(nv);
    tu_fill_uniform(nk_, nk, -a, a);
    tu_fill_uniform(nv_, nv, -1, 1);
    if (dtype == VKATTN_DTYPE_F16)
        th_round_f16(nk_, nk), th_round_f16(nv_, nv);
    vkattn_tensor *tk = th_rows_tensor(ctx, B, kvh, L, dk, VKATTN_DTYPE_F32, nk_);
    vkattn_tensor *tv = th_rows_tensor(ctx, B, kvh, L, dv, VKATTN_DTYPE_F32, nv_);
    const vkattn_kv_append_io io = {.k = tk, .v = tv};
    TH_OK(ctx, vkattn_kv_cache_append_record(cache, VKATTN_RUN_NOW, &io));
    memset(k, 0, sizeof(float) * B * kvh * cap * dk);
    memset(v, 0, sizeof(float) * B * kvh * cap * dv);
    const size_t rows = (size_t)B * kvh * cap;
    if (dtype == VKATTN_DTYPE_I8) {
        dequantize(vkattn_kv_cache_get_desc(cache).keys, rows, dk, k);
        dequantize(vkattn_kv_cache_get_desc(cache).values, rows, dv, v);
    } else {
        for (size_t bh = 0; bh < (size_t)B * kvh; bh++) {
            memcpy(k + bh * cap * dk, nk_ + bh * L * dk, sizeof(float) * L * dk);
            memcpy(v + bh * cap * dv, nv_ + bh * L * dv, sizeof(float) * L * dv);
        }
    }
    vkattn_tensor_destroy(tk), vkattn_tensor_destroy(tv);
    free(nk_), free(nv_);
    return cache;
}

static void softcap_case(vkattn_context *ctx, vkattn_dtype dtype, uint32_t B, uint32_t kvh,
                         uint32_t group, uint32_t tq, uint32_t L, uint32_t dk, uint32_t dv,
                         float softcap, float rate)
{
    const uint32_t cap = L + 3, H = kvh * group;
    float *k = tu_floats((size_t)B * kvh * cap * dk), *v = tu_floats((size_t)B * kvh * cap * dv);
    vkattn_kv_cache *cache = filled_cache(ctx, dtype, B, kvh, cap, L, dk, dv, 3.0f, k, v);
    uint32_t len[4];
    for (uint32_t b = 0; b < B; b++)
        len[b] = L;
    const vkattn_sdpa_decode_params p = {
        .batch = B, .heads = H, .tq = tq, .kv_heads = kvh, .capacity = cap, .dk = dk, .dv = dv,
        .softcap = softcap,
        .dropout = {.rate = rate, .training = rate > 0, .seed = tu_rand_u32()},
    };
    const size_t nq = (size_t)B * H * tq * dk, nout = (size_t)B * H * tq * dv;
    float *q = tu_floats(nq), *ref = tu_floats(nout);
    tu_fill_uniform(q, nq, -3, 3);
    TH_OK(ctx, vkattn_reference_sdpa_decode(&p, NULL, q, k, v, len, NULL, ref));
    vkattn_sdpa_decode_io io = {.q = th_tensor(ctx, nq, q), .cache = cache,
                                .out = th_tensor(ctx, nout, NULL)};
    TH_OK(ctx, vkattn_sdpa_decode_record(ctx, VKATTN_RUN_NOW, &p, &io));
    float *got = th_download(io.out, nout);
    char what[160];
    snprintf(what, sizeof what, "softcap %g cache dtype %d B=%u Hkv=%u G=%u Tq=%u L=%u dk=%u "
             "dv=%u rate=%g", (double)softcap, (int)dtype, B, kvh, group, tq, L, dk, dv,
             (double)rate);
    TU_ASSERT_CLOSE(got, ref, nout, BOUND, what);
    th_assert_validation_clean();
    vkattn_tensor_destroy(io.q), vkattn_tensor_destroy(io.out);
    vkattn_kv_cache_destroy(cache);
    free(k), free(v), free(q), free(ref), free(got);
}

static void sinks_case(vkattn_context *ctx, uint32_t B, uint32_t kvh, uint32_t group,
                       uint32_t tq, uint32_t L, uint32_t dk, uint32_t dv, bool vmask)
{
    const uint32_t cap = L + 2, H = kvh * group, T1 = L + 1;
    float *k = tu_floats((size_t)B * kvh * cap * dk), *v = tu_floats((size_t)B * kvh * cap * dv);
    vkattn_kv_cache *cache =
        L ? filled_cache(ctx, VKATTN_DTYPE_F32, B, kvh, cap, L, dk, dv, 1.0f, k, v) : NULL;
    if (!L) {
        const vkattn_kv_cache_desc cd = {.batch = B, .kv_heads = kvh, .capacity = cap,
                                         .key_dim = dk, .value_dim = dv};
        TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    }
    const size_t nq = (size_t)B * H * tq * dk, nout = (size_t)B * H * tq * dv;
    float *q = tu_floats(nq), *ref = tu_floats(nout), sinks[16];
    float *vm = tu_floats((size_t)B * cap), *vm1 = tu_floats((size_t)B * T1);
    tu_fill_uniform(q, nq, -1, 1);
    tu_fill_uniform(sinks, H, -2, 2);
    tu_fill_mask(vm, (size_t)B * cap, 0.7f);
    /* the equivalent SDPA: key 0 (zeros) then the cached keys */
    float *k1 = tu_floats((size_t)B * kvh * T1 * dk), *v1 = tu_floats((size_t)B * kvh * T1 * dv);
    float *bias = tu_floats((size_t)H * T1);
    for (size_t bh = 0; bh < (size_t)B * kvh; bh++) {
        memset(k1 + bh * T1 * dk, 0, sizeof(float) * dk);
        memset(v1 + bh * T1 * dv, 0, sizeof(float) * dv);
        memcpy(k1 + (bh * T1 + 1) * dk, k + bh * cap * dk, sizeof(float) * L * dk);
        memcpy(v1 + (bh * T1 + 1) * dv, v + bh * cap * dv, sizeof(float) * L * dv);
    }
    for (uint32_t h = 0; h < H; h++)
        for (uint32_t j = 0; j < T1; j++)
            bias[(size_t)h * T1 + j] = j == 0 ? sinks[h] : 0.0f;
    for (uint32_t b = 0; b < B; b++) {
        vm1[(size_t)b * T1] = 1.0f;
        memcpy(vm1 + (size_t)b * T1 + 1, vm + (size_t)b * cap, sizeof(float) * L);
    }
    const vkattn_sdpa_params sp = {
        .batch = B, .heads = H, .tq = tq, .tv = T1, .dk = dk, .dv = dv, .kv_heads = kvh,
        .mask = {.causal = VKATTN_CAUSAL_BOTTOM_RIGHT, .masked_row = VKATTN_MASKED_ROW_ZERO,
                 .has_value_mask = vmask, .has_bias = true,
                 .bias_broadcast = {.batch = true, .rows = true}},
    };
    TH_OK(ctx, vkattn_reference_sdpa(&sp, NULL, q, k1, v1, bias, vmask ? vm1 : NULL, NULL, ref,
                                     NULL));
    const vkattn_sdpa_decode_params p = {
        .batch = B, .heads = H, .tq = tq, .kv_heads = kvh, .capacity = cap, .dk = dk, .dv = dv,
        .has_value_mask = vmask, .has_sinks = true,
    };
    vkattn_sdpa_decode_io io = {.q = th_tensor(ctx, nq, q), .cache = cache,
                                .value_mask = vmask ? th_tensor(ctx, (size_t)B * cap, vm) : NULL,
                                .out = th_tensor(ctx, nout, NULL), .sinks = th_tensor(ctx, H, sinks)};
    TH_OK(ctx, vkattn_sdpa_decode_record(ctx, VKATTN_RUN_NOW, &p, &io));
    float *got = th_download(io.out, nout);
    char what[160];
    snprintf(what, sizeof what, "sinks B=%u Hkv=%u G=%u Tq=%u L=%u dk=%u dv=%u vm=%d", B, kvh,
             group, tq, L, dk, dv, vmask);
    if (L == 0) { /* no key at all: zeros */
        for (size_t i = 0; i < nout; i++)
            if (got[i] != 0.0f)
                fail_msg("%s: out[%zu] is %g; a row with no key is 0", what, i, (double)got[i]);
    } else {
        TU_ASSERT_CLOSE(got, ref, nout, BOUND, what);
    }
    th_assert_validation_clean();
    vkattn_tensor_destroy(io.q), vkattn_tensor_destroy(io.out);
    vkattn_tensor_destroy(io.value_mask), vkattn_tensor_destroy(io.sinks);
    vkattn_kv_cache_destroy(cache);
    void *fs[] = {k, v, q, ref, vm, vm1, k1, v1, bias, got};
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
        free(fs[i]);
}

static void test_softcap(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    softcap_case(ctx, VKATTN_DTYPE_F32, 2, 2, 2, 3, 70, 16, 8, 2.0f, 0.0f);
    softcap_case(ctx, VKATTN_DTYPE_F16, 1, 1, 4, 1, 45, 8, 12, 5.0f, 0.3f);
    softcap_case(ctx, VKATTN_DTYPE_I8, 3, 1, 2, 2, 33, 12, 8, 3.0f, 0.0f);
    softcap_case(ctx, VKATTN_DTYPE_F32, 1, 2, 1, 2, 50, 160, 8, 4.0f, 0.0f); /* tiles */
}

static void test_sinks(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    sinks_case(ctx, 2, 2, 2, 3, 40, 16, 8, true);
    sinks_case(ctx, 1, 1, 4, 1, 70, 8, 12, false);
    sinks_case(ctx, 2, 1, 3, 4, 2, 8, 8, false);  /* rows 0, 1 see no key: 0 */
    sinks_case(ctx, 1, 2, 2, 2, 30, 160, 8, true); /* tiles */
    sinks_case(ctx, 1, 1, 2, 1, 0, 8, 8, false);   /* an empty cache */
}

static void test_bad_inputs(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_kv_cache *cache;
    const vkattn_kv_cache_desc cd = {.batch = 1, .kv_heads = 1, .capacity = 4, .key_dim = 4};
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    vkattn_tensor *q = th_tensor(ctx, 4, NULL), *out = th_tensor(ctx, 4, NULL);
    vkattn_tensor *sk = th_tensor(ctx, 1, NULL);
    vkattn_sdpa_decode_io io = {.q = q, .cache = cache, .out = out};
    vkattn_sdpa_decode_params p = {.batch = 1, .heads = 1, .tq = 1, .capacity = 4, .dk = 4,
                                   .softcap = -1.0f};
    float h[16] = {0};
    uint32_t len = 1;
    TH_EXPECT_ERROR(vkattn_sdpa_decode_record(ctx, VKATTN_RUN_NOW, &p, &io),
                    VKATTN_ERROR_INVALID_ARGUMENT, "params->softcap is -1");
    p.softcap = NAN;
    TH_EXPECT_ERROR(vkattn_reference_sdpa_decode(&p, NULL, h, h, h, &len, NULL, h),
                    VKATTN_ERROR_INVALID_ARGUMENT, "params->softcap");
    p.softcap = 0.0f, p.has_sinks = true;
    TH_EXPECT_ERROR(vkattn_sdpa_decode_record(ctx, VKATTN_RUN_NOW, &p, &io),
                    VKATTN_ERROR_INVALID_ARGUMENT, "io->sinks");
    TH_EXPECT_ERROR(vkattn_reference_sdpa_decode(&p, NULL, h, h, h, &len, NULL, h),
                    VKATTN_ERROR_INVALID_ARGUMENT, "p->has_sinks is not accepted here");
    p.has_sinks = false, io.sinks = sk;
    TH_EXPECT_ERROR(vkattn_sdpa_decode_record(ctx, VKATTN_RUN_NOW, &p, &io),
                    VKATTN_ERROR_INVALID_ARGUMENT, "params->has_sinks is false");
    vkattn_tensor_destroy(q), vkattn_tensor_destroy(out), vkattn_tensor_destroy(sk);
    vkattn_kv_cache_destroy(cache);
    th_assert_validation_clean();
}

int main(void)
{
    const struct CMUnitTest tests[] = {TU_TESTS(test_bad_inputs, test_softcap, test_sinks)};
    int failed = cmocka_run_group_tests_name("decode softcap, sinks", tests, th_setup,
                                             th_teardown);
    return failed + cmocka_run_group_tests_name("decode softcap, sinks, mobile-min", tests,
                                                th_setup_mobile, th_teardown);
}
