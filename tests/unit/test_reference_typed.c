/* The typed CPU references of SDPA and decode (vkattn_reference_sdpa,
 * vkattn_reference_sdpa_decode): f16 inputs give exactly what the f32
 * reference gives on the same values; an f16 out is that result rounded once
 * to nearest (checked against the double computation, not against a double
 * rounding through f32); bf16 likewise; unknown types are refused. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vkattn/half.h"
#include "vkattn/reference.h"

/* Random f16 patterns in [-1, 1] and their exact f32 values. */
static void halves(uint16_t *h, float *f, size_t n)
{
    tu_fill_uniform(f, n, -1, 1);
    for (size_t i = 0; i < n; i++) {
        h[i] = tu_f16_bits(f[i]);
        f[i] = tu_f16_to_f32(h[i]);
    }
}

/* Random bf16 patterns in [-1, 1] (floats cut to their top half) and their
 * exact f32 values. */
static void bf16s(uint16_t *h, float *f, size_t n)
{
    tu_fill_uniform(f, n, -1, 1);
    for (size_t i = 0; i < n; i++) {
        uint32_t x;
        memcpy(&x, &f[i], sizeof x);
        h[i] = (uint16_t)(x >> 16);
        x &= 0xffff0000u;
        memcpy(&f[i], &x, sizeof x);
    }
}

static float bf16_value(uint16_t h)
{
    const uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

static void sdpa_typed_matches_f32(void **state)
{
    (void)state;
    enum { B = 2, H = 4, HKV = 2, TQ = 5, TV = 7, DK = 6, DV = 3 };
    enum { NQ = B * H * TQ * DK, NK = B * HKV * TV * DK, NV = B * HKV * TV * DV };
    enum { NO = B * H * TQ * DV };
    uint16_t q16[NQ], k16[NK], v16[NV], o16[NO];
    float q[NQ], k[NK], v[NV], ref[NO], got[NO];
    halves(q16, q, NQ), halves(k16, k, NK), halves(v16, v, NV);
    vkattn_sdpa_params p = {.batch = B, .heads = H, .kv_heads = HKV, .tq = TQ, .tv = TV,
                            .dk = DK, .dv = DV, .mask = {.causal = VKATTN_CAUSAL_BOTTOM_RIGHT},
                            .dropout = {.rate = 0.25f, .training = true, .seed = 7}};
    assert_int_equal(vkattn_reference_sdpa(&p, NULL, q, k, v, NULL, NULL, NULL, ref, NULL), 0);
    vkattn_sdpa_dtypes ty = {VKATTN_DTYPE_F16, VKATTN_DTYPE_F16, VKATTN_DTYPE_F16,
                             VKATTN_DTYPE_F32};
    assert_int_equal(
        vkattn_reference_sdpa(&p, &ty, q16, k16, v16, NULL, NULL, NULL, got, NULL), 0);
    assert_memory_equal(got, ref, sizeof ref);
    /* mixed: f32 q, f16 k/v */
    ty.q = VKATTN_DTYPE_F32;
    assert_int_equal(vkattn_reference_sdpa(&p, &ty, q, k16, v16, NULL, NULL, NULL, got,
                                                 NULL), 0);
    assert_memory_equal(got, ref, sizeof ref);
    /* f16 out: each element within half an f16 spacing of the result (the
     * f32 out holds it to 2^-24 relative) */
    ty.out = VKATTN_DTYPE_F16;
    assert_int_equal(vkattn_reference_sdpa(&p, &ty, q, k16, v16, NULL, NULL, NULL, o16,
                                                 NULL), 0);
    for (size_t i = 0; i < NO; i++) {
        const double g = tu_f16_to_f32(o16[i]);
        assert_true(fabs(g - ref[i]) <= 0x1p-11 * fabs(ref[i]) + 0x1p-25);
    }
    vkattn_sdpa_dtypes bad = {.v = (vkattn_dtype)9};
    assert_int_equal(vkattn_reference_sdpa(&p, &bad, q, k, v, NULL, NULL, NULL, got, NULL),
                     VKATTN_ERROR_INVALID_ARGUMENT);
}

static void decode_typed_matches_f32(void **state)
{
    (void)state;
    enum { B = 2, H = 2, TQ = 2, CAP = 9, DK = 4, DV = 5 };
    enum { NQ = B * H * TQ * DK, NK = B * H * CAP * DK, NV = B * H * CAP * DV };
    enum { NO = B * H * TQ * DV };
    uint16_t k16[NK], v16[NV], o16[NO];
    float q[NQ], k[NK], v[NV], ref[NO], got[NO];
    tu_fill_uniform(q, NQ, -1, 1);
    halves(k16, k, NK), halves(v16, v, NV);
    const uint32_t lengths[B] = {9, 3};
    vkattn_sdpa_decode_params p = {.batch = B, .heads = H, .tq = TQ, .capacity = CAP, .dk = DK,
                                   .dv = DV};
    assert_int_equal(vkattn_reference_sdpa_decode(&p, NULL, q, k, v, lengths, NULL, ref), 0);
    vkattn_sdpa_dtypes ty = {.k = VKATTN_DTYPE_F16, .v = VKATTN_DTYPE_F16};
    assert_int_equal(vkattn_reference_sdpa_decode(&p, &ty, q, k16, v16, lengths, NULL, got),
                     0);
    assert_memory_equal(got, ref, sizeof ref);
    ty.out = VKATTN_DTYPE_F16;
    assert_int_equal(vkattn_reference_sdpa_decode(&p, &ty, q, k16, v16, lengths, NULL, o16),
                     0);
    for (size_t i = 0; i < NO; i++)
        assert_true(fabs(tu_f16_to_f32(o16[i]) - ref[i]) <=
                    0x1p-11 * fabs(ref[i]) + 0x1p-25);
    vkattn_sdpa_dtypes bad = {.q = (vkattn_dtype)2};
    assert_int_equal(vkattn_reference_sdpa_decode(&p, &bad, q, k, v, lengths, NULL, got),
                     VKATTN_ERROR_INVALID_ARGUMENT);
}

/* bf16 operands as f16's: exact inputs give the f32 result; a bf16 out is
 * within half a bf16 spacing (2^-8 relative) of it. */
static void bf16_typed_matches_f32(void **state)
{
    (void)state;
    enum { B = 1, H = 2, TQ = 3, TV = 5, CAP = 5, DK = 4, DV = 3 };
    enum { NQ = B * H * TQ * DK, NK = B * H * TV * DK, NV = B * H * TV * DV };
    enum { NO = B * H * TQ * DV };
    uint16_t q16[NQ], k16[NK], v16[NV], o16[NO];
    float q[NQ], k[NK], v[NV], ref[NO], got[NO];
    bf16s(q16, q, NQ), bf16s(k16, k, NK), bf16s(v16, v, NV);
    const vkattn_sdpa_params p = {.batch = B, .heads = H, .tq = TQ, .tv = TV, .dk = DK, .dv = DV};
    assert_int_equal(vkattn_reference_sdpa(&p, NULL, q, k, v, NULL, NULL, NULL, ref, NULL), 0);
    vkattn_sdpa_dtypes ty = {VKATTN_DTYPE_BF16, VKATTN_DTYPE_BF16, VKATTN_DTYPE_BF16,
                             VKATTN_DTYPE_F32};
    assert_int_equal(vkattn_reference_sdpa(&p, &ty, q16, k16, v16, NULL, NULL, NULL, got, NULL),
                     0);
    assert_memory_equal(got, ref, sizeof ref);
    ty.out = VKATTN_DTYPE_BF16;
    assert_int_equal(vkattn_reference_sdpa(&p, &ty, q16, k16, v16, NULL, NULL, NULL, o16, NULL),
                     0);
    for (size_t i = 0; i < NO; i++)
        assert_true(fabs(bf16_value(o16[i]) - ref[i]) <= 0x1p-8 * fabs(ref[i]) + 0x1p-30);
    /* decode: bf16 keys and values (a cache of capacity TV, all of it used) */
    const uint32_t lengths[B] = {CAP};
    const vkattn_sdpa_decode_params dp = {.batch = B, .heads = H, .tq = TQ, .capacity = CAP,
                                          .dk = DK, .dv = DV};
    assert_int_equal(vkattn_reference_sdpa_decode(&dp, NULL, q, k, v, lengths, NULL, ref), 0);
    const vkattn_sdpa_dtypes dty = {.k = VKATTN_DTYPE_BF16, .v = VKATTN_DTYPE_BF16};
    assert_int_equal(vkattn_reference_sdpa_decode(&dp, &dty, q, k16, v16, lengths, NULL, got), 0);
    assert_memory_equal(got, ref, sizeof ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TU_TESTS(sdpa_typed_matches_f32, decode_typed_matches_f32, bf16_typed_matches_f32)};
    return cmocka_run_group_tests_name("typed references", tests, NULL, NULL);
}
