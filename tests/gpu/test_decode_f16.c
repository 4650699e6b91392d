/* An f16 KV cache: appends of f16 and f32 rows (converted to the cache's
 * type), and decode reading the f16 cache vs
 * vkattn_reference_sdpa_decode on the cache's own bits.
 *
 * Random shapes: B 1..3 with ragged lengths (a counts tensor), grouped heads,
 * Tq 1..4, dk != dv (even: an f16 cache needs even widths), value mask,
 * dropout; two appends per case, the first from f16 rows, the second from
 * f32 rows. The appended rows are checked bit for bit: f16 sources exactly,
 * f32 sources rounded to the nearest f16 (within one f16 spacing, for
 * devices whose packHalf2x16 truncates). Outputs poisoned with NaN first.
 * q and out are f32 or f16, each picked at random (and each pairing forced
 * once); an f16 q holds exact f16 values, which the reference takes as they
 * are. Bounds (vkattn/decode.h): max|got - ref| <= 2e-5 max|ref| with an f32
 * out; with an f16 out, against the f32-out reference, (2e-5 + 2^-10)
 * max|ref| (the f32 bound plus one rounding to f16: 2^-11 relative, 2^-10
 * where packHalf2x16 truncates). Odd output counts check the padding half of the
 * last word. Bad inputs: odd widths, a bad dtype, app tensors of the other
 * type, an f16 value mask. Run under the default profile and mobile-min
 * (4 storage buffers). */
#include "harness.h"
#include "kv_rows.h"

#include <vkattn/half.h>
#include <vkattn/reference.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOUND 2e-5
#define BOUND_OUT16 (2e-5 + 1.0 / 1024)

/* The cache's bits of rows [0, len_b) against the host values: equal to the
 * nearest f16, or one spacing off towards zero. */
static void check_rows(const uint16_t *got, const float *want, const vkattn_kv_cache_desc *cd,
                       uint32_t width, const uint32_t *len)
{
    for (uint32_t bh = 0; bh < cd->batch * cd->kv_heads; bh++)
        for (uint32_t t = 0; t < len[bh / cd->kv_heads]; t++)
            for (uint32_t e = 0; e < width; e++) {
                const size_t i = ((size_t)bh * cd->capacity + t) * width + e;
                const uint16_t n = tu_f16_bits(want[i]);
                if (!(got[i] == n || got[i] + 1 == n))
                    fail_msg("cache bh %u row %u e %u: bits %04x, nearest %04x", bh, t, e,
                             got[i], n);
            }
}

static void run_case(vkattn_context *ctx, uint32_t B, uint32_t kvh, uint32_t group, uint32_t tq,
                     uint32_t cap, uint32_t dk, uint32_t dv, bool vmask, float rate, bool q16,
                     bool out16)
{
    vkattn_kv_cache_desc cd = {.batch = B, .kv_heads = kvh, .capacity = cap, .key_dim = dk,
                               .value_dim = dv, .dtype = VKATTN_DTYPE_F16};
    vkattn_kv_cache *cache;
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    const size_t nk = (size_t)B * kvh * cap * dk, nv = (size_t)B * kvh * cap * dv;
    float *hk = tu_floats(nk), *hv = tu_floats(nv);
    uint32_t len[3] = {0}, count[3];
    for (int step = 0; step < 2; step++) {
        const uint32_t tnew = tu_rand_range(1, cap / 2);
        for (uint32_t b = 0; b < B; b++)
            count[b] = tu_rand_range(0, tnew);
        th_kv_append_random(ctx, cache, &cd, tnew, len, count, step == 0, false, hk, hv);
        for (uint32_t b = 0; b < B; b++)
            len[b] += count[b];
    }
    uint32_t dev_len[3];
    TH_OK(ctx, vkattn_kv_cache_lengths(cache, dev_len, NULL));
    assert_memory_equal(dev_len, len, sizeof(uint32_t) * B);
    uint16_t *k16 = malloc(nk * 2), *v16 = malloc(nv * 2);
    assert_true(k16 && v16);
    TH_OK(ctx, vkattn_tensor_download_raw(vkattn_kv_cache_get_desc(cache).keys, k16, 0, nk));
    TH_OK(ctx, vkattn_tensor_download_raw(vkattn_kv_cache_get_desc(cache).values, v16, 0, nv));
    check_rows(k16, hk, &cd, dk, len);
    check_rows(v16, hv, &cd, dv, len);

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
    const vkattn_sdpa_dtypes ty = {.k = VKATTN_DTYPE_F16, .v = VKATTN_DTYPE_F16};
    TH_OK(ctx, vkattn_reference_sdpa_decode(&p, &ty, q, k16, v16, len, vmask ? vm : NULL,
                                                  ref));
    vkattn_sdpa_decode_io io = {
        .q = q16 ? th_rows_tensor(ctx, B, H, tq, dk, VKATTN_DTYPE_F16, q) : th_tensor(ctx, nq, q),
        .cache = cache, .value_mask = vmask ? th_tensor(ctx, nvm, vm) : NULL,
        .out = out16 ? th_rows_tensor(ctx, B, H, tq, dv, VKATTN_DTYPE_F16, NULL)
                     : th_tensor(ctx, nout, NULL)};
    if (out16) { /* poison: every half NaN */
        uint16_t *nan16 = malloc(nout * 2);
        assert_non_null(nan16);
        for (size_t i = 0; i < nout; i++)
            nan16[i] = 0x7e00;
        TH_OK(ctx, vkattn_tensor_upload_raw(io.out, nan16, 0, nout));
        free(nan16);
    }
    TH_OK(ctx, vkattn_sdpa_decode_record(ctx, VKATTN_RUN_NOW, &p, &io));
    float *got = th_download(io.out, nout);
    char what[200];
    snprintf(what, sizeof what, "decode f16 cache B=%u Hkv=%u G=%u Tq=%u cap=%u dk=%u dv=%u "
             "vm=%d rate=%g q16=%d out16=%d", B, kvh, group, tq, cap, dk, dv, vmask,
             (double)rate, q16, out16);
    TU_ASSERT_CLOSE(got, ref, nout, out16 ? BOUND_OUT16 : BOUND, what);
    th_assert_validation_clean();
    vkattn_tensor_destroy(io.q);
    vkattn_tensor_destroy(io.value_mask);
    vkattn_tensor_destroy(io.out);
    vkattn_kv_cache_destroy(cache);
    void *fs[] = {hk, hv, k16, v16, q, vm, ref, got};
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
        free(fs[i]);
}

static void test_random(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 10; i++)
        run_case(ctx, tu_rand_range(1, 3), tu_rand_range(1, 2), tu_rand_range(1, 2),
                 tu_rand_range(1, 4), tu_rand_range(5, 80), 8, 6, tu_rand_range(0, 1),
                 tu_rand_range(0, 2) ? 0.0f : 0.3f, tu_rand_range(0, 1), tu_rand_range(0, 1));
    run_case(ctx, 1, 1, 1, 1, 70, 2, 2, false, 0.0f, false, false); /* narrow, non-vec4 */
    run_case(ctx, 2, 2, 4, 3, 40, 16, 24, true, 0.0f, true, true);  /* vec4 loads */
    run_case(ctx, 1, 1, 3, 1, 33, 4, 6, false, 0.0f, true, false);  /* f16 q, f32 out */
    run_case(ctx, 3, 1, 1, 1, 50, 8, 2, true, 0.3f, false, true);   /* odd count, f16 out */
}

static void test_bad_inputs(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_kv_cache *cache = NULL;
    vkattn_kv_cache_desc cd = {.batch = 1, .kv_heads = 1, .capacity = 4, .key_dim = 3,
                               .value_dim = 4, .dtype = VKATTN_DTYPE_F16};
    assert_int_equal(vkattn_kv_cache_create(ctx, &cd, &cache), VKATTN_ERROR_UNSUPPORTED);
    assert_non_null(strstr(vkattn_context_last_error(ctx), "even"));
    cd.key_dim = 4, cd.dtype = (vkattn_dtype)9;
    assert_int_equal(vkattn_kv_cache_create(ctx, &cd, &cache), VKATTN_ERROR_INVALID_ARGUMENT);
    cd.dtype = VKATTN_DTYPE_F16;
    cd.keys = th_tensor(ctx, 16, NULL); /* f32: not the cache's type */
    assert_int_equal(vkattn_kv_cache_create(ctx, &cd, &cache), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_context_last_error(ctx), "desc->keys"));
    vkattn_tensor_destroy(cd.keys);
    cd.keys = NULL;
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    vkattn_tensor_desc h4 = {.rank = 1, .dims = {4}, .dtype = VKATTN_DTYPE_F16};
    vkattn_tensor *vm = NULL, *q = th_tensor(ctx, 4, NULL), *out = th_tensor(ctx, 4, NULL);
    TH_OK(ctx, vkattn_tensor_create(ctx, &h4, &vm));
    vkattn_sdpa_decode_params p = {.batch = 1, .heads = 1, .tq = 1, .capacity = 4, .dk = 4,
                                   .has_value_mask = true};
    vkattn_sdpa_decode_io io = {.q = q, .cache = cache, .value_mask = vm, .out = out};
    assert_int_equal(vkattn_sdpa_decode_record(ctx, VKATTN_RUN_NOW, &p, &io), VKATTN_ERROR_UNSUPPORTED);
    assert_non_null(strstr(vkattn_context_last_error(ctx), "io->value_mask"));
    vkattn_tensor_destroy(vm);
    vkattn_tensor_destroy(q);
    vkattn_tensor_destroy(out);
    vkattn_kv_cache_destroy(cache);
    th_assert_validation_clean();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_random),
    };
    int failed = cmocka_run_group_tests_name("decode f16", tests, th_setup, th_teardown);
    return failed + cmocka_run_group_tests_name("decode f16, mobile-min", tests, th_setup_mobile,
                                                th_teardown);
}
