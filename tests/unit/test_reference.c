/* CPU reference of matmul, additive scoring and the head split/merge, on cases
 * small enough to check by hand, plus consistency checks on random data. */
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "vkattn/reference.h"

/* |got[i] - want[i]| <= tol for all i. */
static void expect_near(const float *got, const double *want, size_t n, double tol)
{
    for (size_t i = 0; i < n; i++)
        if (!TU_WITHIN(fabs((double)got[i] - want[i]), tol))
            fail_msg("element %zu: got %.9g, want %.9g", i, (double)got[i], want[i]);
}

/* ---------------------------------------------------------------- matmul */

static void matmul_2x3_by_hand(void **state)
{
    (void)state;
    const float a[6] = {1, 2, 3, 4, 5, 6};         /* 2 x 3 */
    const float b[6] = {7, 8, 9, 10, 11, 12};      /* 3 x 2 */
    float c[4];
    vkattn_matmul_params p = {.m = 2, .n = 2, .k = 3};
    assert_int_equal(vkattn_reference_matmul(&p, NULL, a, b, NULL, c), VKATTN_SUCCESS);
    const double want[4] = {58, 64, 139, 154};
    expect_near(c, want, 4, 0.0);
}

/* Stored transposes, alpha and the bias row. */
static void matmul_transposes_alpha_bias(void **state)
{
    (void)state;
    const float at[6] = {1, 4, 2, 5, 3, 6};        /* A^T, 3 x 2 */
    const float bt[6] = {7, 9, 11, 8, 10, 12};     /* B^T, 2 x 3 */
    const float bias[2] = {1, -1};
    float c[4];
    vkattn_matmul_params p = {.m = 2, .n = 2, .k = 3, .transpose_a = true, .transpose_b = true,
                              .has_bias = true, .alpha = 2.0f};
    assert_int_equal(vkattn_reference_matmul(&p, NULL, at, bt, bias, c), VKATTN_SUCCESS);
    const double want[4] = {117, 127, 279, 307};
    expect_near(c, want, 4, 0.0);
}

/* A varies per (b, h), B is one broadcast matrix, C packed by default:
 * C[b,h] = [b*2+h+1, 1] @ [[1],[10]] = b*2+h+11. */
static void matmul_batch_heads_broadcast(void **state)
{
    (void)state;
    float a[8], b[2] = {1, 10}, c[4];
    for (int i = 0; i < 4; i++) {
        a[2 * i] = (float)(i + 1);
        a[2 * i + 1] = 1;
    }
    vkattn_matmul_params p = {.batch = 2, .heads = 2, .m = 1, .n = 1, .k = 2,
                              .a = {.batch_stride = 4, .head_stride = 2}};
    assert_int_equal(vkattn_reference_matmul(&p, NULL, a, b, NULL, c), VKATTN_SUCCESS);
    const double want[4] = {11, 12, 13, 14};
    expect_near(c, want, 4, 0.0);
}

/* Row strides wider than the matrix: padding is never read or written. */
static void matmul_row_strides(void **state)
{
    (void)state;
    const float n = NAN;
    const float a[10] = {1, 2, 3, n, n, 4, 5, 6, n, n}; /* 2 x 3, row_stride 5 */
    const float b[6] = {7, 8, 9, 10, 11, 12};
    float c[8];
    tu_poison(c, 8);
    vkattn_matmul_params p = {.m = 2, .n = 2, .k = 3, .a = {.row_stride = 5},
                              .c = {.row_stride = 4}};
    assert_int_equal(vkattn_reference_matmul(&p, NULL, a, b, NULL, c), VKATTN_SUCCESS);
    assert_true(c[0] == 58 && c[1] == 64 && c[4] == 139 && c[5] == 154);
    assert_true(isnan(c[2]) && isnan(c[3]) && isnan(c[6]) && isnan(c[7]));
}

/* C written straight into a (B, M, H, N) layout, as a head merge would. */
static void matmul_c_interleaved_heads(void **state)
{
    (void)state;
    enum { B = 2, H = 3, M = 2, K = 2, N = 2 };
    float a[B * H * M * K], bm[K * N] = {1, 0, 0, 1}, c[B * M * H * N];
    for (int i = 0; i < B * H * M * K; i++)
        a[i] = (float)i;
    /* A's zero strides would broadcast (unlike C's), so A gives them */
    vkattn_matmul_params p = {.batch = B, .heads = H, .m = M, .n = N, .k = K,
                              .a = {.batch_stride = H * M * K, .head_stride = M * K},
                              .c = {.batch_stride = M * H * N, .head_stride = N,
                                    .row_stride = H * N}};
    assert_int_equal(vkattn_reference_matmul(&p, NULL, a, bm, NULL, c), VKATTN_SUCCESS);
    /* identity B: C[b, m, h, :] = A[b, h, m, :] */
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int m = 0; m < M; m++)
                for (int e = 0; e < N; e++)
                    assert_true(c[((b * M + m) * H + h) * N + e] ==
                                a[((b * H + h) * M + m) * K + e]);
}

static void transpose(const float *x, int rows, int cols, float *xt)
{
    for (int r = 0; r < rows; r++)
        for (int s = 0; s < cols; s++)
            xt[s * rows + r] = x[r * cols + s];
}

/* op(A) with a stored transpose equals A with the transpose written out. */
static void matmul_transpose_consistency(void **state)
{
    (void)state;
    enum { M = 5, K = 7, N = 3 };
    float a[M * K], b[K * N], at[K * M], bt[N * K], c1[M * N], c2[M * N];
    tu_fill_uniform(a, M * K, -1, 1);
    tu_fill_uniform(b, K * N, -1, 1);
    transpose(a, M, K, at);
    transpose(b, K, N, bt);
    vkattn_matmul_params p = {.m = M, .n = N, .k = K};
    assert_int_equal(vkattn_reference_matmul(&p, NULL, a, b, NULL, c1), VKATTN_SUCCESS);
    p.transpose_a = p.transpose_b = true;
    assert_int_equal(vkattn_reference_matmul(&p, NULL, at, bt, NULL, c2), VKATTN_SUCCESS);
    assert_memory_equal(c1, c2, sizeof c1);
}

/* ---------------------------------------------------------------- additive */

static void additive_by_hand(void **state)
{
    (void)state;
    const float q[2] = {0.5f, -0.25f}, k[4] = {0.125f, 0.25f, -0.375f, 0.5f};
    const float s[2] = {2.0f, -1.0f};
    float out[2];
    vkattn_additive_params p = {.batch = 1, .tq = 1, .tv = 2, .dim = 2, .inner_scale = 1.5f,
                                .outer_scale = 0.75f, .has_scale_vector = true};
    assert_int_equal(vkattn_reference_additive(&p, NULL, q, k, s, out), VKATTN_SUCCESS);
    const double want[2] = {0.75 * (2 * tanh(1.5 * 0.625) - tanh(1.5 * 0.0)),
                            0.75 * (2 * tanh(1.5 * 0.125) - tanh(1.5 * 0.25))};
    expect_near(out, want, 2, 1e-7);
    /* sizes past the address space are refused before any array is read,
     * the message spelling the product out */
    vkattn_additive_params huge = p;
    huge.batch = huge.tq = huge.dim = UINT32_MAX;
    assert_int_equal(vkattn_reference_additive(&huge, NULL, q, k, s, out),
                     VKATTN_ERROR_SIZE_OVERFLOW);
    assert_non_null(strstr(vkattn_last_error(), "q (B, Tq, dim) = 4294967295 x 4294967295 x "
                                                "4294967295 elements overflows the address space"));

    /* defaults: no scale vector (all ones), inner = outer = 1 */
    vkattn_additive_params d = {.batch = 1, .tq = 1, .tv = 2, .dim = 2};
    assert_int_equal(vkattn_reference_additive(&d, NULL, q, k, NULL, out), VKATTN_SUCCESS);
    const double want_d[2] = {tanh(0.625) + tanh(0.0), tanh(0.125) + tanh(0.25)};
    expect_near(out, want_d, 2, 1e-7);
}

/* Batches and rows index the right q and k: S[b,i,j] with q = b, k = -j. */
static void additive_indexing(void **state)
{
    (void)state;
    enum { B = 2, TQ = 3, TV = 4, D = 1 };
    float q[B * TQ * D], k[B * TV * D], out[B * TQ * TV];
    double want[B * TQ * TV];
    for (int b = 0; b < B; b++) {
        for (int i = 0; i < TQ; i++)
            q[b * TQ + i] = 0.1f * (float)(b * TQ + i);
        for (int j = 0; j < TV; j++)
            k[b * TV + j] = -0.05f * (float)(b * TV + j);
        for (int i = 0; i < TQ; i++)
            for (int j = 0; j < TV; j++)
                want[(b * TQ + i) * TV + j] =
                    tanh((double)q[b * TQ + i] + (double)k[b * TV + j]);
    }
    vkattn_additive_params p = {.batch = B, .tq = TQ, .tv = TV, .dim = D};
    assert_int_equal(vkattn_reference_additive(&p, NULL, q, k, NULL, out), VKATTN_SUCCESS);
    expect_near(out, want, B * TQ * TV, 1e-7);
}

/* ---------------------------------------------------------------- heads */

static void heads_split_by_hand(void **state)
{
    (void)state;
    const float in[8] = {0, 1, 2, 3, 4, 5, 6, 7}; /* (B=1, T=2, H=2, d=2) */
    float out[8];
    vkattn_heads_params p = {.batch = 1, .seq = 2, .heads = 2, .head_dim = 2};
    assert_int_equal(vkattn_reference_heads_split(&p, NULL, in, out), VKATTN_SUCCESS);
    const double want[8] = {0, 1, 4, 5, 2, 3, 6, 7};
    expect_near(out, want, 8, 0.0);
    float back[8];
    assert_int_equal(vkattn_reference_heads_merge(&p, NULL, out, back), VKATTN_SUCCESS);
    assert_memory_equal(back, in, sizeof in);
}

static void heads_round_trip(void **state)
{
    (void)state;
    enum { N = 2 * 3 * 4 * 5 };
    float x[N], y[N], z[N];
    tu_fill_uniform(x, N, -10, 10);
    vkattn_heads_params p = {.batch = 2, .seq = 3, .heads = 4, .head_dim = 5};
    assert_int_equal(vkattn_reference_heads_split(&p, NULL, x, y), VKATTN_SUCCESS);
    assert_int_equal(vkattn_reference_heads_merge(&p, NULL, y, z), VKATTN_SUCCESS);
    assert_memory_equal(x, z, sizeof x);
    /* and the other way round */
    assert_int_equal(vkattn_reference_heads_merge(&p, NULL, x, y), VKATTN_SUCCESS);
    assert_int_equal(vkattn_reference_heads_split(&p, NULL, y, z), VKATTN_SUCCESS);
    assert_memory_equal(x, z, sizeof x);
}

static void heads_reject_in_place(void **state)
{
    (void)state;
    float x[4] = {0};
    vkattn_heads_params p = {.batch = 1, .seq = 2, .heads = 2, .head_dim = 1};
    assert_int_equal(vkattn_reference_heads_split(&p, NULL, x, x), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "vkattn_reference_heads_split"));
    assert_int_equal(vkattn_reference_heads_merge(&p, NULL, x, x), VKATTN_ERROR_INVALID_ARGUMENT);
}

/* Decode's soft-capping is SDPA's: a full cache (lengths = capacity = Tv) is
 * SDPA with bottom-right causal. Decode refuses sinks (no operand). */
static void decode_softcap_matches_sdpa(void **state)
{
    (void)state;
    enum { B = 1, H = 2, TQ = 3, TV = 6, DK = 4, DV = 3 };
    float q[B * H * TQ * DK], k[B * H * TV * DK], v[B * H * TV * DV];
    float ref[B * H * TQ * DV], got[B * H * TQ * DV];
    tu_fill_uniform(q, B * H * TQ * DK, -2, 2);
    tu_fill_uniform(k, B * H * TV * DK, -2, 2);
    tu_fill_uniform(v, B * H * TV * DV, -1, 1);
    const vkattn_sdpa_params sp = {.batch = B, .heads = H, .tq = TQ, .tv = TV, .dk = DK,
                                   .dv = DV, .softcap = 0.5f,
                                   .mask = {.causal = VKATTN_CAUSAL_BOTTOM_RIGHT}};
    assert_int_equal(vkattn_reference_sdpa(&sp, NULL, q, k, v, NULL, NULL, NULL, ref, NULL), 0);
    const uint32_t lengths[B] = {TV};
    vkattn_sdpa_decode_params dp = {.batch = B, .heads = H, .tq = TQ, .capacity = TV, .dk = DK,
                                    .dv = DV, .softcap = 0.5f};
    assert_int_equal(vkattn_reference_sdpa_decode(&dp, NULL, q, k, v, lengths, NULL, got), 0);
    for (int i = 0; i < B * H * TQ * DV; i++)
        assert_true(fabsf(got[i] - ref[i]) <= 1e-6f);
    dp.softcap = 0.0f;
    assert_int_equal(vkattn_reference_sdpa_decode(&dp, NULL, q, k, v, lengths, NULL, got), 0);
    float diff = 0.0f; /* without the cap the output moves: the cap was applied */
    for (int i = 0; i < B * H * TQ * DV; i++)
        diff = fmaxf(diff, fabsf(got[i] - ref[i]));
    assert_true(diff > 1e-3f);
    dp.has_sinks = true;
    assert_int_equal(vkattn_reference_sdpa_decode(&dp, NULL, q, k, v, lengths, NULL, got),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "has_sinks"));
}

int main(void)
{
    tu_seed();
    const struct CMUnitTest tests[] = {TU_TESTS(
        matmul_2x3_by_hand, matmul_transposes_alpha_bias, matmul_batch_heads_broadcast,
        matmul_row_strides, matmul_c_interleaved_heads, matmul_transpose_consistency,
        additive_by_hand, additive_indexing, heads_split_by_hand, heads_round_trip,
        heads_reject_in_place, decode_softcap_matches_sdpa)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
