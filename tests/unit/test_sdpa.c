/* CPU reference of the dropout op and of scaled dot-product attention: hand
 * cases, grouped-query heads, masked rows, and agreement with the composition
 * matmul -> softmax -> dropout -> matmul built from the other references. */
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "vkattn/philox.h"
#include "vkattn/reference.h"

#define LN3 1.0986122886681098

static void expect_near(const float *got, const double *want, size_t n, double tol)
{
    for (size_t i = 0; i < n; i++)
        if (!TU_WITHIN(fabs((double)got[i] - want[i]), tol))
            fail_msg("element %zu: got %.9g, want %.9g", i, (double)got[i], want[i]);
}

/* ---------------------------------------------------------------- dropout */

static void dropout_inactive_is_exact_copy(void **state)
{
    (void)state;
    enum { N = 2 * 3 * 4 };
    float in[N], out[N];
    tu_fill_uniform(in, N, -5, 5);
    in[3] = NAN;
    in[4] = INFINITY;
    vkattn_dropout_op_params p = {.batch = 2, .heads = 3, .tq = 1, .tv = 4,
                                  .dropout = {.rate = 0.5f, .seed = 1}};
    assert_int_equal(vkattn_reference_dropout(&p, NULL, in, out), VKATTN_SUCCESS); /* !training */
    assert_memory_equal(in, out, sizeof in);
    p.dropout.training = true;
    p.dropout.rate = 0;
    assert_int_equal(vkattn_reference_dropout(&p, NULL, in, out), VKATTN_SUCCESS);
    assert_memory_equal(in, out, sizeof in);
    uint8_t keep[N];
    assert_int_equal(vkattn_reference_dropout_mask(&p, keep), VKATTN_SUCCESS);
    for (int i = 0; i < N; i++)
        assert_int_equal(keep[i], 1);
}

static void dropout_rate_one_zeroes(void **state)
{
    (void)state;
    float x[8] = {1, -2, INFINITY, NAN, 5, 6, 7, 8};
    vkattn_dropout_op_params p = {.batch = 1, .tq = 2, .tv = 4,
                                  .dropout = {.rate = 1.0f, .training = true, .seed = 3}};
    assert_int_equal(vkattn_reference_dropout(&p, NULL, x, x), VKATTN_SUCCESS); /* in place */
    for (int i = 0; i < 8; i++)
        assert_true(x[i] == 0.0f && !signbit(x[i]));
}

/* Each element follows vkattn_dropout_keep with bh = b*H + h, scaled in f32. */
static void dropout_follows_the_stream(void **state)
{
    (void)state;
    enum { B = 2, H = 3, TQ = 4, TV = 9, N = B * H * TQ * TV };
    float in[N], out[N];
    uint8_t keep[N];
    tu_fill_uniform(in, N, -1, 1);
    const vkattn_dropout_params d = {.rate = 0.3f, .training = true,
                                     .seed = 0xdeadbeefcafef00dull, .offset = 12};
    vkattn_dropout_op_params p = {.batch = B, .heads = H, .tq = TQ, .tv = TV, .dropout = d};
    assert_int_equal(vkattn_reference_dropout(&p, NULL, in, out), VKATTN_SUCCESS);
    assert_int_equal(vkattn_reference_dropout_mask(&p, keep), VKATTN_SUCCESS);
    const uint32_t t = vkattn_dropout_threshold(d.rate);
    const float scale = (float)(1.0 / (1.0 - 0.3f));
    int kept = 0;
    for (uint32_t b = 0, idx = 0; b < B; b++)
        for (uint32_t h = 0; h < H; h++)
            for (uint32_t i = 0; i < TQ; i++)
                for (uint32_t j = 0; j < TV; j++, idx++) {
                    bool k = vkattn_dropout_keep(d.seed, d.offset, t, b * H + h, i, j);
                    assert_int_equal(keep[idx], k);
                    assert_true(out[idx] == (k ? in[idx] * scale : 0.0f));
                    kept += k;
                }
    assert_true(kept > 0 && kept < N);
}

/* ---------------------------------------------------------------- sdpa */

/* dk 4 so the default scale is 1/2: logits 0 and ln 3, weights 1/4 and 3/4. */
static void sdpa_by_hand(void **state)
{
    (void)state;
    const float l = (float)(LN3 / 2);
    const float q[4] = {1, 1, 1, 1}, k[8] = {0, 0, 0, 0, l, l, l, l};
    const float v[4] = {1, 2, 3, 4};
    float out[2], w[2];
    vkattn_sdpa_params p = {.batch = 1, .tq = 1, .tv = 2, .dk = 4, .dv = 2,
                            .return_weights = true};
    assert_int_equal(vkattn_reference_sdpa(&p, NULL, q, k, v, NULL, NULL, NULL, out, w),
                     VKATTN_SUCCESS);
    const double want_w[2] = {0.25, 0.75}, want_o[2] = {2.5, 3.5};
    expect_near(w, want_w, 2, 1e-7);
    expect_near(out, want_o, 2, 1e-6);
}

/* kv_heads 2 of heads 4 equals every K/V head written out twice. */
static void sdpa_gqa_equals_repeated_heads(void **state)
{
    (void)state;
    enum { B = 2, H = 4, HKV = 2, TQ = 3, TV = 5, DK = 4, DV = 3 };
    float q[B * H * TQ * DK], k[B * HKV * TV * DK], v[B * HKV * TV * DV];
    float kr[B * H * TV * DK], vr[B * H * TV * DV];
    float o1[B * H * TQ * DV], o2[B * H * TQ * DV];
    tu_fill_uniform(q, sizeof q / sizeof *q, -1, 1);
    tu_fill_uniform(k, sizeof k / sizeof *k, -1, 1);
    tu_fill_uniform(v, sizeof v / sizeof *v, -1, 1);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            int src = b * HKV + h / (H / HKV), dst = b * H + h;
            memcpy(kr + dst * TV * DK, k + src * TV * DK, TV * DK * sizeof(float));
            memcpy(vr + dst * TV * DV, v + src * TV * DV, TV * DV * sizeof(float));
        }
    vkattn_sdpa_params p = {.batch = B, .heads = H, .kv_heads = HKV, .tq = TQ, .tv = TV,
                            .dk = DK, .dv = DV,
                            .mask = {.causal = VKATTN_CAUSAL_BOTTOM_RIGHT},
                            .dropout = {.rate = 0.25f, .training = true, .seed = 5}};
    assert_int_equal(vkattn_reference_sdpa(&p, NULL, q, k, v, NULL, NULL, NULL, o1, NULL),
                     VKATTN_SUCCESS);
    p.kv_heads = 0;
    assert_int_equal(vkattn_reference_sdpa(&p, NULL, q, kr, vr, NULL, NULL, NULL, o2, NULL),
                     VKATTN_SUCCESS);
    assert_memory_equal(o1, o2, sizeof o1);
}

/* A fully masked row: zero weights and output, or uniform weights and the mean of V. */
static void sdpa_fully_masked_row(void **state)
{
    (void)state;
    const float q[2] = {1, -1}, k[6] = {1, 2, 3, 4, 5, 6}, v[3] = {1, 2, 6};
    const float vmask[3] = {0, 0, 0};
    float out[1], w[3];
    vkattn_sdpa_params p = {.batch = 1, .tq = 1, .tv = 3, .dk = 2, .dv = 1,
                            .return_weights = true, .mask = {.has_value_mask = true}};
    assert_int_equal(vkattn_reference_sdpa(&p, NULL, q, k, v, NULL, vmask, NULL, out, w),
                     VKATTN_SUCCESS);
    const double zero[3] = {0, 0, 0};
    expect_near(w, zero, 3, 0.0);
    expect_near(out, zero, 1, 0.0);
    p.mask.masked_row = VKATTN_MASKED_ROW_UNIFORM;
    assert_int_equal(vkattn_reference_sdpa(&p, NULL, q, k, v, NULL, vmask, NULL, out, w),
                     VKATTN_SUCCESS);
    const double third[3] = {1 / 3.0, 1 / 3.0, 1 / 3.0}, mean[1] = {3};
    expect_near(w, third, 3, 1e-7);
    expect_near(out, mean, 1, 1e-6);
}

/* Random problem with every option: SDPA equals matmul -> softmax -> dropout ->
 * matmul, and its two kinds of returned weights are the ones before and after
 * the dropout op. */
/* The sliding window is the band |pos(i) - j| < w (pos(i) = i, + Tv - Tq with
 * bottom-right causal) AND-ed with the other masks: the reference with a
 * window equals it with the band written into an explicit mask by hand,
 * bit for bit, for every causal kind, Tq < Tv and Tq > Tv, windows 1 to past
 * both lengths; a window >= Tq + Tv equals none. */
static void sdpa_window_is_a_band_mask(void **state)
{
    (void)state;
    enum { B = 2, H = 2, D = 3, MAXT = 9 };
    static const uint32_t lens[][2] = {{5, 9}, {9, 5}, {7, 7}, {1, 6}};
    float q[B * H * MAXT * D], k[B * H * MAXT * D], v[B * H * MAXT * D], vm[B * MAXT];
    float mask[B * H * MAXT * MAXT], out_w[B * H * MAXT * D], out_m[B * H * MAXT * D];
    float w_w[B * H * MAXT * MAXT], w_m[B * H * MAXT * MAXT];
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
        for (int causal = 0; causal < 3; causal++)
            for (uint32_t win = 1; win <= 16; win += 3) {
                const uint32_t tq = lens[l][0], tv = lens[l][1];
                tu_fill_uniform(q, B * H * tq * D, -1, 1);
                tu_fill_uniform(k, B * H * tv * D, -1, 1);
                tu_fill_uniform(v, B * H * tv * D, -1, 1);
                tu_fill_mask(vm, B * tv, 0.8f);
                for (uint32_t bh = 0; bh < B * H; bh++)
                    for (uint32_t i = 0; i < tq; i++)
                        for (uint32_t j = 0; j < tv; j++) {
                            const int64_t pos = (int64_t)i + (causal == VKATTN_CAUSAL_BOTTOM_RIGHT
                                                                  ? (int64_t)tv - tq
                                                                  : 0);
                            const int64_t d = pos - (int64_t)j;
                            mask[(bh * tq + i) * tv + j] = (d < 0 ? -d : d) < (int64_t)win;
                        }
                vkattn_sdpa_params p = {.batch = B, .heads = H, .tq = tq, .tv = tv, .dk = D,
                                        .mask = {.causal = (vkattn_causal)causal,
                                                 .has_value_mask = true},
                                        .dropout = {.rate = 0.3f, .training = true, .seed = 5},
                                        .return_weights = true, .sliding_window = win};
                assert_int_equal(vkattn_reference_sdpa(&p, NULL, q, k, v, NULL, vm, NULL, out_w, w_w),
                                 VKATTN_SUCCESS);
                p.sliding_window = 0, p.mask.has_mask = true;
                assert_int_equal(vkattn_reference_sdpa(&p, NULL, q, k, v, NULL, vm, mask, out_m, w_m),
                                 VKATTN_SUCCESS);
                assert_memory_equal(out_w, out_m, sizeof(float) * B * H * tq * D);
                assert_memory_equal(w_w, w_m, sizeof(float) * B * H * tq * tv);
                /* wider than both lengths: no window at all */
                p.mask.has_mask = false, p.sliding_window = tq + tv + win;
                assert_int_equal(vkattn_reference_sdpa(&p, NULL, q, k, v, NULL, vm, NULL, out_w, w_w),
                                 VKATTN_SUCCESS);
                p.sliding_window = 0;
                assert_int_equal(vkattn_reference_sdpa(&p, NULL, q, k, v, NULL, vm, NULL, out_m, w_m),
                                 VKATTN_SUCCESS);
                assert_memory_equal(out_w, out_m, sizeof(float) * B * H * tq * D);
            }
}

static void sdpa_equals_composition(void **state)
{
    (void)state;
    enum { B = 2, H = 2, TQ = 6, TV = 7, DK = 5, DV = 3 };
    enum { NQ = B * H * TQ * DK, NK = B * H * TV * DK, NV = B * H * TV * DV };
    enum { NW = B * H * TQ * TV, NO = B * H * TQ * DV };
    float q[NQ], k[NK], v[NV], bias[TQ * TV], mask[B * TV];
    float s[NW], w_ref[NW], wd_ref[NW], o_ref[NO], w[NW], o[NO];
    tu_fill_uniform(q, NQ, -2, 2);
    tu_fill_uniform(k, NK, -2, 2);
    tu_fill_uniform(v, NV, -2, 2);
    tu_fill_uniform(bias, TQ * TV, -1, 1);
    tu_fill_mask(mask, B * TV, 0.8f);
    const vkattn_mask_params mp = {.causal = VKATTN_CAUSAL_TOP_LEFT, .has_bias = true,
                                   .bias_broadcast = {.batch = true, .heads = true},
                                   .has_value_mask = true};
    const vkattn_dropout_params dp = {.rate = 0.2f, .training = true, .seed = 77, .offset = 3};
    const float scale = (float)(1.0 / sqrt(DK));

    vkattn_matmul_params qk = {.batch = B * H, .m = TQ, .n = TV, .k = DK, .transpose_b = true,
                               .alpha = scale, .a = {.batch_stride = TQ * DK},
                               .b = {.batch_stride = TV * DK}};
    assert_int_equal(vkattn_reference_matmul(&qk, NULL, q, k, NULL, s), VKATTN_SUCCESS);
    vkattn_softmax_params sp = {.batch = B, .heads = H, .tq = TQ, .tv = TV, .mask = mp};
    assert_int_equal(vkattn_reference_softmax(&sp, NULL, s, bias, mask, NULL, w_ref), VKATTN_SUCCESS);
    vkattn_dropout_op_params dop = {.batch = B, .heads = H, .tq = TQ, .tv = TV, .dropout = dp};
    assert_int_equal(vkattn_reference_dropout(&dop, NULL, w_ref, wd_ref), VKATTN_SUCCESS);
    vkattn_matmul_params wv = {.batch = B * H, .m = TQ, .n = DV, .k = TV,
                               .a = {.batch_stride = TQ * TV}, .b = {.batch_stride = TV * DV}};
    assert_int_equal(vkattn_reference_matmul(&wv, NULL, wd_ref, v, NULL, o_ref), VKATTN_SUCCESS);

    vkattn_sdpa_params p = {.batch = B, .heads = H, .tq = TQ, .tv = TV, .dk = DK, .dv = DV,
                            .mask = mp, .dropout = dp, .return_weights = true};
    assert_int_equal(vkattn_reference_sdpa(&p, NULL, q, k, v, bias, mask, NULL, o, w), VKATTN_SUCCESS);
    TU_ASSERT_CLOSE(w, w_ref, NW, 1e-6, "weights before dropout");
    TU_ASSERT_CLOSE(o, o_ref, NO, 1e-5, "output");
    p.weights_after_dropout = true;
    assert_int_equal(vkattn_reference_sdpa(&p, NULL, q, k, v, bias, mask, NULL, o, w), VKATTN_SUCCESS);
    TU_ASSERT_CLOSE(w, wd_ref, NW, 1e-6, "weights after dropout");
    for (int i = 0; i < NW; i++) /* the same elements are dropped */
        assert_int_equal(w[i] == 0.0f, wd_ref[i] == 0.0f);
}

int main(void)
{
    tu_seed();
    const struct CMUnitTest tests[] = {TU_TESTS(
        dropout_inactive_is_exact_copy, dropout_rate_one_zeroes, dropout_follows_the_stream,
        sdpa_by_hand, sdpa_gqa_equals_repeated_heads, sdpa_fully_masked_row,
        sdpa_equals_composition, sdpa_window_is_a_band_mask)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
