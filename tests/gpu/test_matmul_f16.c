/* f16 tensors and the f16 matmul vs the typed CPU reference.
 *
 * Tensors: f16 upload/download/fill and the raw functions round-trip, odd
 * counts and partial ranges included; an f16 mask is refused.
 * Matmul: random shapes (odd sizes, batch 1, transposes, bias, head-strided C
 * views with odd row strides, a K long enough to be split on lavapipe), each
 * of A, B, bias, C f32 or f16 at random, outputs poisoned with NaN first;
 * elements of C's span that are not outputs must keep their NaN. The bound is
 * the one vkattn/matmul.h states:
 *   |got - exact| <= ulp16(exact) [f16 C] + (k + 2) 2^-23 (|alpha| sum|a||b| + |bias|)
 * Run under the default profile (16-bit storage on lavapipe: matmul_f16) and
 * mobile-min (no 16-bit storage: the packed kernel, asserted via the info),
 * then both again under the GPU tuning (matmul_gpu.comp reads f16 as words of
 * halves and writes an f16 C a word per invocation on every device), where
 * test_kernel_choice checks that f16 calls take matmul_gpu, never the scalar
 * f16 kernels. */
#include "harness.h"

#include <vkattn/half.h>
#include <vkattn/reference.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static vkattn_tensor *tensor16(vkattn_context *ctx, size_t n, vkattn_dtype dtype)
{
    vkattn_tensor_desc desc = {.rank = 1, .dims = {(uint32_t)n}, .dtype = dtype};
    vkattn_tensor *t = NULL;
    TH_OK(ctx, vkattn_tensor_create(ctx, &desc, &t));
    TH_OK(ctx, vkattn_tensor_fill(t, NAN));
    return t;
}

static void test_tensor_f16(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const size_t n = 37; /* odd: the last word is half padding */
    vkattn_tensor *t = tensor16(ctx, n, VKATTN_DTYPE_F16);
    assert_int_equal(vkattn_tensor_get_info(t).desc.dtype, VKATTN_DTYPE_F16);
    assert_int_equal(vkattn_tensor_get_info(t).buffer.size, 76); /* 74 bytes padded to words */
    float x[37], y[37];
    for (size_t i = 0; i < n; i++)
        x[i] = (float)i * 0.1f - 1.7f;
    x[3] = 70000.0f; /* beyond f16: inf */
    TH_OK(ctx, vkattn_tensor_upload(t, x, 0, n));
    TH_OK(ctx, vkattn_tensor_download(t, y, 0, n));
    for (size_t i = 0; i < n; i++)
        assert_true(y[i] == tu_f16_to_f32(tu_f16_bits(x[i])));
    assert_true(isinf(y[3]));
    uint16_t h[5] = {0x3c00, 0xc000, 0x7e00, 0x0001, 0x8000}, g[5];
    TH_OK(ctx, vkattn_tensor_upload_raw(t, h, 31, 5)); /* odd first, partial words */
    TH_OK(ctx, vkattn_tensor_download_raw(t, g, 31, 5));
    assert_memory_equal(h, g, sizeof h);
    TH_OK(ctx, vkattn_tensor_download(t, y, 30, 1));
    assert_true(y[0] == tu_f16_to_f32(tu_f16_bits(x[30])));
    TH_OK(ctx, vkattn_tensor_fill(t, 0.5f));
    TH_OK(ctx, vkattn_tensor_download(t, y, 0, n));
    for (size_t i = 0; i < n; i++)
        assert_true(y[i] == 0.5f);
    assert_int_equal(vkattn_tensor_download_raw(t, g, 35, 5), VKATTN_ERROR_INVALID_ARGUMENT);
    /* raw on f32 is the float API */
    vkattn_tensor *f = th_tensor(ctx, 4, NULL);
    const float v[4] = {1, 2, 3, 4};
    TH_OK(ctx, vkattn_tensor_upload_raw(f, v, 0, 4));
    float w[4];
    TH_OK(ctx, vkattn_tensor_download(f, w, 0, 4));
    assert_memory_equal(v, w, sizeof v);
    vkattn_tensor_desc bad = {.rank = 1, .dims = {4}, .dtype = (vkattn_dtype)7};
    vkattn_tensor *u = NULL;
    assert_int_equal(vkattn_tensor_create(ctx, &bad, &u), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_context_last_error(ctx), "dtype"));
    vkattn_tensor_destroy(t);
    vkattn_tensor_destroy(f);
    th_assert_validation_clean();
}

/* Masks stay f32: an f16 one is refused, naming the argument and both types
 * (the f16 data paths of the other ops: test_typed_ops.c). */
static void test_unsupported_ops(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_tensor *h = tensor16(ctx, 16, VKATTN_DTYPE_F16), *f = th_tensor(ctx, 16, NULL);
    vkattn_softmax_params sp = {.batch = 1, .tq = 4, .tv = 4, .mask = {.has_mask = true}};
    vkattn_softmax_io sio = {.scores = f, .mask = h, .out = f};
    assert_int_equal(vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &sp, &sio), VKATTN_ERROR_INVALID_ARGUMENT);
    const char *msg = vkattn_context_last_error(ctx);
    assert_non_null(strstr(msg, "io->mask"));
    assert_non_null(strstr(msg, "is an f16 tensor; it must be f32"));
    vkattn_tensor_destroy(h);
    vkattn_tensor_destroy(f);
    th_assert_validation_clean();
}

static vkattn_tensor *upload(vkattn_context *ctx, const float *x, size_t n, vkattn_dtype t)
{
    vkattn_tensor *d = tensor16(ctx, n, t);
    TH_OK(ctx, vkattn_tensor_upload(d, x, 0, n));
    return d;
}

/* The spacing of f16 at |x| (2^-24 below the normal range). */
static double ulp16(double x)
{
    x = fabs(x);
    if (x < 0x1p-14)
        return 0x1p-24;
    return ldexp(1.0, ilogb(x) - 10);
}

static void check_case(vkattn_context *ctx, const vkattn_matmul_params *p, size_t na, size_t nb,
                       size_t nc, vkattn_matmul_dtypes ty)
{
    float *a = th_operand(na, ty.a), *b = th_operand(nb, ty.b), *bias = th_operand(p->n, ty.bias);
    float *ref = tu_floats(nc), *mag = tu_floats(nc);
    float *aa = tu_floats(na), *ab = tu_floats(nb), *abias = tu_floats(p->n);
    for (size_t i = 0; i < na; i++)
        aa[i] = fabsf(a[i]);
    for (size_t i = 0; i < nb; i++)
        ab[i] = fabsf(b[i]);
    for (size_t i = 0; i < p->n; i++)
        abias[i] = fabsf(bias[i]);
    /* exact products of the stored values (f32 reference: inputs already
     * hold f16 values), and the magnitudes for the bound */
    for (size_t i = 0; i < nc; i++)
        ref[i] = mag[i] = NAN;
    TH_OK(ctx, vkattn_reference_matmul(p, NULL, a, b, p->has_bias ? bias : NULL, ref));
    vkattn_matmul_params pm = *p;
    pm.alpha = fabsf(p->alpha);
    TH_OK(ctx, vkattn_reference_matmul(&pm, NULL, aa, ab, p->has_bias ? abias : NULL, mag));
    /* the typed reference rounds an f16 C once: within half an f16 ulp */
    uint16_t *ref16 = NULL;
    if (ty.c == VKATTN_DTYPE_F16) {
        ref16 = tu_alloc(nc * 2);
        memset(ref16, 0xff, nc * 2);
        uint16_t *a16 = tu_alloc(na * 2), *b16 = tu_alloc(nb * 2), *bias16 = tu_alloc(p->n * 2);
        vkattn_f32_to_f16_array(a16, a, na);
        vkattn_f32_to_f16_array(b16, b, nb);
        vkattn_f32_to_f16_array(bias16, bias, p->n);
        TH_OK(ctx, vkattn_reference_matmul(
                       p, &ty, ty.a ? (void *)a16 : a, ty.b ? (void *)b16 : b,
                       p->has_bias ? (ty.bias ? (void *)bias16 : bias) : NULL, ref16));
        free(a16), free(b16), free(bias16);
    }

    vkattn_tensor *ta = upload(ctx, a, na, ty.a), *tb = upload(ctx, b, nb, ty.b);
    vkattn_tensor *tbias = p->has_bias ? upload(ctx, bias, p->n, ty.bias) : NULL;
    vkattn_tensor *tc = tensor16(ctx, nc, ty.c);
    vkattn_matmul_io io = {.a = ta, .b = tb, .bias = tbias, .c = tc};
    TH_OK(ctx, vkattn_matmul_record(ctx, VKATTN_RUN_NOW, p, &io));
    float *got = th_download(tc, nc);

    for (size_t i = 0; i < nc; i++) {
        if (isnan(ref[i])) {
            if (!isnan(got[i]))
                fail_msg("element %zu of C's span is no output but was written (%g)", i,
                         (double)got[i]);
            continue;
        }
        double bound = (p->k + 2) * 0x1p-23 * mag[i] + 0x1p-30;
        if (ty.c == VKATTN_DTYPE_F16) {
            bound += ulp16(ref[i]);
            double r16 = tu_f16_to_f32(ref16[i]);
            if (fabs(r16 - ref[i]) > 0.5 * ulp16(ref[i]) + 0x1p-30)
                fail_msg("typed reference %zu: %g vs %g", i, r16, (double)ref[i]);
        } else {
            bound += 0x1p-24 * fabs(ref[i]);
        }
        if (!TU_WITHIN(fabs((double)got[i] - ref[i]), bound))
            fail_msg("matmul f16 batch=%u heads=%u m=%u n=%u k=%u ta=%d tb=%d bias=%d types "
                     "a%d b%d bias%d c%d ldc=%u: C[%zu] = %.8g, want %.8g +- %.3g",
                     p->batch, p->heads, p->m, p->n, p->k, p->transpose_a, p->transpose_b,
                     p->has_bias, ty.a, ty.b, ty.bias, ty.c, p->c.row_stride, i, (double)got[i],
                     (double)ref[i], bound);
    }
    th_assert_validation_clean();
    vkattn_tensor_destroy(ta), vkattn_tensor_destroy(tb), vkattn_tensor_destroy(tbias);
    vkattn_tensor_destroy(tc);
    free(a), free(b), free(bias), free(ref), free(mag), free(aa), free(ab), free(abias);
    free(got), free(ref16);
}

static vkattn_matmul_dtypes random_types(void)
{
    uint32_t r = tu_rand_range(1, 15); /* at least one f16 */
    return (vkattn_matmul_dtypes){.a = r & 1, .b = (r >> 1) & 1, .bias = (r >> 2) & 1,
                                  .c = (r >> 3) & 1};
}

/* batch x m x k @ k x n; `heads_view`: C as [batch, m, heads, n] with odd or
 * even widths (head stride n, row stride heads * n + pad). */
static void one_case(vkattn_context *ctx, uint32_t batch, uint32_t heads, uint32_t m, uint32_t n,
                     uint32_t k, bool ta, bool tb, bool bias, uint32_t pad, vkattn_matmul_dtypes ty)
{
    vkattn_matmul_params p = {
        .batch = batch, .heads = heads, .m = m, .n = n, .k = k, .transpose_a = ta,
        .transpose_b = tb, .has_bias = bias, .alpha = tu_rand_range(0, 1) ? 0.0f : 0.625f,
    };
    size_t nc = (size_t)batch * heads * m * n;
    if (heads > 1 || pad) {
        p.c.row_stride = heads * n + pad;
        p.c.head_stride = n;
        p.c.batch_stride = (uint64_t)m * p.c.row_stride;
        nc = (size_t)batch * m * p.c.row_stride;
    }
    check_case(ctx, &p, (size_t)batch * heads * m * k, (size_t)batch * heads * k * n, nc, ty);
}

static void test_path(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_context_info info;
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    print_message("f16 matmul path: %s\n",
                  info.storage_buffer_16bit ? "16-bit storage" : "packed halves");
    if (info.profile && strcmp(info.profile, TH_MOBILE_PROFILE) == 0)
        assert_false(info.storage_buffer_16bit);
}

static void test_fixed_shapes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const uint32_t shapes[][4] = {
        {1, 1, 1, 1}, {1, 1, 7, 1}, {1, 7, 1, 5}, {1, 37, 53, 61}, {2, 65, 63, 17},
        {3, 16, 16, 16}, {1, 129, 65, 33}, {1, 1, 200, 130}, {2, 3, 5, 7},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int t = 0; t < 4; t++) {
            vkattn_matmul_dtypes ty = {.a = 1, .b = 1, .bias = 1, .c = (vkattn_dtype)(t & 1)};
            if (t >= 2)
                ty = random_types();
            one_case(ctx, shapes[i][0], 1, shapes[i][1], shapes[i][2], shapes[i][3], false,
                     t & 1, i % 2 == 0, 0, ty);
        }
}

static void test_random_shapes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 40; i++) {
        uint32_t heads = tu_rand_range(1, 3);
        one_case(ctx, tu_rand_range(1, 3), heads, tu_rand_range(1, 90), tu_rand_range(1, 90),
                 tu_rand_range(1, 150), tu_rand_range(0, 1), tu_rand_range(0, 1),
                 tu_rand_range(0, 1), tu_rand_range(0, 2), random_types());
    }
}

/* Fewer random shapes under the GPU tuning (lavapipe runs its kernel slowly). */
static void test_random_shapes_gpu(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 12; i++)
        one_case(ctx, tu_rand_range(1, 2), tu_rand_range(1, 2), tu_rand_range(1, 70),
                 tu_rand_range(1, 70), tu_rand_range(1, 90), tu_rand_range(0, 1),
                 tu_rand_range(0, 1), tu_rand_range(0, 1), tu_rand_range(0, 2), random_types());
}

/* The split K under the GPU tuning: one case, f16 C through f32 sums. */
static void test_long_k_gpu(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_matmul_dtypes ty = {.a = 1, .b = 1, .bias = 1, .c = 1};
    one_case(ctx, 1, 2, 3, 5, 70001, false, false, true, 1, ty);
}

/* A K long enough that lavapipe's loop budget splits it: the f16 C must still
 * get f32 sums. */
static void test_long_k(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_matmul_dtypes ty = {.a = 1, .b = 1, .bias = 1, .c = 1};
    one_case(ctx, 1, 1, 3, 5, 70001, false, true, true, 0, ty);
    one_case(ctx, 1, 2, 3, 5, 70001, false, false, false, 1, ty);
}

/* The rule of issue 20: an f16 product takes the kernel family the same f32
 * product takes under the same tuning (the context's, from the group). */
static void test_kernel_choice(void **state)
{
    vkattn_context *base = TH_CTX(state);
    vkattn_context_info info;
    TH_OK(base, vkattn_context_get_info(base, &info));
    th_pipelines seen;
    vkattn_context_advanced adv = th_advanced();
    vkattn_context *ctx = th_logged_context(&adv, &seen);
    const uint32_t m = 9, n = 11, k = 13;
    vkattn_matmul_params p = {.m = m, .n = n, .k = k, .has_bias = true};
    static const vkattn_matmul_dtypes types[] = {{1, 1, 1, 1}, {1, 0, 0, 0}, {0, 0, 0, 1}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        vkattn_matmul_dtypes ty = types[i];
        vkattn_tensor *a = tensor16(ctx, m * k, ty.a), *b = tensor16(ctx, k * n, ty.b);
        vkattn_tensor *bias = tensor16(ctx, n, ty.bias), *c = tensor16(ctx, m * n, ty.c);
        TH_OK(ctx, vkattn_tensor_fill(a, 0.5f));
        TH_OK(ctx, vkattn_tensor_fill(b, 0.25f));
        TH_OK(ctx, vkattn_tensor_fill(bias, 1.0f));
        vkattn_matmul_io io = {.a = a, .b = b, .bias = bias, .c = c};
        TH_OK(ctx, vkattn_matmul_record(ctx, VKATTN_RUN_NOW, &p, &io));
        float *got = th_download(c, m * n);
        for (uint32_t e = 0; e < m * n; e++)
            assert_true(got[e] == 1.0f + 0.125f * k);
        free(got);
        vkattn_tensor_destroy(a), vkattn_tensor_destroy(b), vkattn_tensor_destroy(bias);
        vkattn_tensor_destroy(c);
    }
    const bool gpu = !info.cpu_tuning;
    const bool used_gpu = th_pipeline_seen(&seen, "matmul_gpu", false);
    const bool used_f16 = th_pipeline_seen(&seen, "matmul_f16", true);
    if (used_gpu != gpu || used_f16 == gpu)
        fail_msg("%s tuning, f16 products: matmul_gpu %s, matmul_f16* %s", gpu ? "GPU" : "CPU",
                 used_gpu ? "used" : "unused", used_f16 ? "used" : "unused");
    vkattn_context_destroy(ctx);
    th_assert_validation_clean();
}

/* The cooperative-matrix kernels' cases, f16 A and B: each of `count`
 * shapes (batch, m, n, k) with every pair of transposes, f16 or f32 C and
 * bias, then `randoms` random ones (batch and heads up to 3, m and n up to
 * `most_mn`, k up to `most_k`, bias f16 or f32 or none, C f16 or f32, padded
 * row strides). */
static void coopmat_cases(vkattn_context *ctx, const uint32_t (*shapes)[4], size_t count,
                          int randoms, uint32_t most_mn, uint32_t most_k)
{
    for (size_t i = 0; i < count; i++)
        for (int t = 0; t < 4; t++) {
            vkattn_matmul_dtypes ty = {.a = 1, .b = 1, .bias = (i + t) & 1, .c = t & 1};
            one_case(ctx, shapes[i][0], 1, shapes[i][1], shapes[i][2], shapes[i][3], t & 1,
                     t >> 1, i % 2 == 0, 0, ty);
        }
    for (int i = 0; i < randoms; i++) {
        vkattn_matmul_dtypes ty = {.a = 1, .b = 1, .bias = tu_rand_range(0, 1),
                                   .c = tu_rand_range(0, 1)};
        one_case(ctx, tu_rand_range(1, 3), tu_rand_range(1, 3), tu_rand_range(1, most_mn),
                 tu_rand_range(1, most_mn), tu_rand_range(1, most_k), tu_rand_range(0, 1),
                 tu_rand_range(0, 1), tu_rand_range(0, 1), tu_rand_range(0, 3), ty);
    }
}

/* Tensor cores, per hardware family (vkattn_context_advanced.coopmat_families
 * one bit, cooperative_matrix ON): where the device offers the family and
 * this build holds it, f16 products must take its kernel
 * (shaders/matmul_coopmat_<family>.comp, one body) and meet the same bound
 * as every f16 product above (f16 products are exact in f32 and the sums are
 * f32, as in matmul_gpu.comp): shapes on both tile sizes (64 and 128), edges
 * off the tiles, several BK steps, transposes, bias, f16 or f32 C,
 * head-strided C views with odd row strides. Where it does not (lavapipe, the
 * phone profiles), the context says why (coopmat_check) and the family is
 * reported as skipped. */
static const struct {
    uint32_t family, index; /* the bit, and its position (coopmat_check's index) */
    const char *kernel;
} hardware_families[] = {
    {VKATTN_COOPMAT_NV, 0, "matmul_coopmat_nv"},
    {VKATTN_COOPMAT_KHR, 1, "matmul_coopmat_khr"},
    {VKATTN_COOPMAT_NV2, 2, "matmul_coopmat2_nv"},
};

/* One hardware family's products; false (and a line saying why) where the
 * context does not run it. */
static bool coopmat_family(const vkattn_context_info *base_info, uint32_t family,
                           uint32_t index, const char *kernel)
{
    vkattn_context_advanced adv = th_advanced();
    adv.cooperative_matrix = VKATTN_COOPMAT_ON;
    adv.coopmat_families = family;
    th_pipelines seen;
    vkattn_context *ctx = th_logged_context_profile(&adv, base_info->profile, &seen);
    vkattn_context_info info;
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    vkattn_matmul_dtypes all16 = {.a = 1, .b = 1, .bias = 1, .c = 1};
    one_case(ctx, 1, 1, 70, 66, 40, false, true, true, 0, all16);
    const bool used = th_pipeline_seen(&seen, kernel, false);
    if (strcmp(info.profile, "desktop") != 0)
        assert_false(info.coopmat_enabled); /* the phone profiles have none */
    if (!(info.coopmat_running & family)) {
        assert_false(used);
        print_message("coopmat: %s skipped: %s (profile %s): %s\n", kernel, info.device_name,
                      info.profile, info.coopmat_check[index].detail);
        vkattn_context_destroy(ctx);
        th_assert_validation_clean();
        return false;
    }
    if (!used)
        fail_msg("coopmat: %s runs but an f16 product did not take %s", kernel, kernel);
    static const uint32_t shapes[][4] = {
        /* batch, m, n, k */
        {1, 128, 128, 32}, {1, 256, 128, 96}, {2, 130, 200, 70}, {1, 64, 64, 16},
        {1, 1, 300, 33},   {1, 300, 1, 17},   {1, 257, 129, 1000}, {3, 17, 23, 9},
        {1, 129, 257, 8},  {2, 96, 160, 48},
    };
    coopmat_cases(ctx, shapes, sizeof shapes / sizeof shapes[0], 24, 300, 300);
    print_message("coopmat: %s ran %s\n", info.device_name, kernel);
    vkattn_context_destroy(ctx);
    th_assert_validation_clean();
    return true;
}

static void test_coopmat(void **state)
{
    vkattn_context *base = TH_CTX(state);
    vkattn_context_info base_info;
    TH_OK(base, vkattn_context_get_info(base, &base_info));
    vkattn_context_advanced adv = th_advanced();
    adv.cooperative_matrix = (vkattn_coopmat_mode)7;
    vkattn_context_desc bad = th_context_desc();
    bad.advanced = &adv;
    vkattn_context *none = NULL;
    assert_int_equal(vkattn_context_create(&bad, &none), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_null(none);
    assert_non_null(strstr(vkattn_last_error(), "advanced->cooperative_matrix"));

    unsigned ran = 0;
    for (size_t i = 0; i < sizeof hardware_families / sizeof hardware_families[0]; i++)
        ran += coopmat_family(&base_info, hardware_families[i].family,
                              hardware_families[i].index, hardware_families[i].kernel);

    th_pipelines seen;
    adv.cooperative_matrix = VKATTN_COOPMAT_OFF;
    vkattn_context *ctx = th_logged_context_profile(&adv, base_info.profile, &seen);
    vkattn_context_info info;
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    assert_false(info.coopmat_enabled);
    assert_int_equal(info.coopmat_running, 0);
    vkattn_matmul_dtypes all16 = {.a = 1, .b = 1, .bias = 1, .c = 1};
    one_case(ctx, 1, 1, 70, 66, 40, false, true, true, 0, all16);
    assert_false(th_pipeline_seen(&seen, "matmul_coopmat", true));
    vkattn_context_destroy(ctx);
    th_assert_validation_clean();
    if (!ran)
        skip();
}

/* The cooperative-matrix matmul's kernel on emulated fragments
 * (vkattn_context_advanced.coopmat_emulate: matmul_coopmat_emu.comp, the body
 * matmul_coopmat_nv.comp runs on tensor cores), so that lavapipe runs its
 * tiling, edge padding, double buffering and output rules: f16 products must
 * take it and meet the bound of every f16 product above (the emulation sums
 * exact f16 products in f32 too). Shapes off the 16x16 fragments and the
 * tiles, several BK steps, transposes, batch and heads, bias f16 or f32,
 * alpha, f16 or f32 C with odd row strides, and a K long enough for lavapipe's
 * loop budget to split it (the accumulate pass). Products with an f32 operand
 * keep matmul_gpu. Where the GPU tuning's cooperative-matrix tiles do not fit
 * (mobile-min's 16 KiB of shared memory) or the tuning is the CPU's, skipped. */
static void test_coopmat_emulated(void **state)
{
    vkattn_context *base = TH_CTX(state);
    vkattn_context_info base_info;
    TH_OK(base, vkattn_context_get_info(base, &base_info));
    vkattn_context_advanced adv = th_advanced();
    adv.coopmat_emulate = true;
    th_pipelines seen;
    vkattn_context *ctx = th_logged_context_profile(&adv, base_info.profile, &seen);
    vkattn_context_info info;
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    vkattn_matmul_dtypes all16 = {.a = 1, .b = 1, .bias = 1, .c = 1};
    one_case(ctx, 1, 1, 70, 66, 40, false, true, true, 0, all16);
    if (!th_pipeline_seen(&seen, "matmul_coopmat_emu", false)) {
        if (!info.cpu_tuning && strcmp(info.profile, "desktop") == 0)
            fail_msg("coopmat emulated: an f16 product under the GPU tuning did not take "
                     "matmul_coopmat_emu");
        print_message("coopmat emulated: skipped: %s (profile %s, %u bytes of shared memory, "
                      "%s tuning) has no tile for matmul_coopmat_emu\n",
                      info.device_name, info.profile, info.max_shared_memory,
                      info.cpu_tuning ? "CPU" : "GPU");
        vkattn_context_destroy(ctx);
        th_assert_validation_clean();
        skip();
    }
    assert_false(th_pipeline_seen(&seen, "matmul_coopmat_nv", false));
    static const uint32_t shapes[][4] = {
        /* batch, m, n, k */
        {1, 64, 64, 32}, {2, 65, 130, 100}, {1, 1, 67, 97}, {1, 67, 1, 33},
        {3, 17, 23, 9},  {1, 129, 80, 161}, {1, 16, 16, 16}, {2, 33, 47, 64},
    };
    coopmat_cases(ctx, shapes, sizeof shapes / sizeof shapes[0], 8, 100, 200);
    /* lavapipe's loop budget splits this K into dispatches that accumulate */
    one_case(ctx, 1, 2, 5, 3, 2100, true, false, true, 1, all16);
    one_case(ctx, 1, 1, 3, 5, 2100, false, true, true, 0,
             (vkattn_matmul_dtypes){.a = 1, .b = 1, .bias = 0, .c = 0});
    assert_false(th_pipeline_seen(&seen, "matmul_gpu", false));
    vkattn_matmul_dtypes a32 = {.a = 0, .b = 1, .bias = 1, .c = 1};
    one_case(ctx, 1, 1, 9, 11, 13, false, false, true, 0, a32);
    assert_true(th_pipeline_seen(&seen, "matmul_gpu", false));
    print_message("coopmat emulated: %s ran matmul_coopmat_emu\n", info.device_name);
    vkattn_context_destroy(ctx);
    th_assert_validation_clean();
}

int main(void)
{
    const struct CMUnitTest tests[] = {TU_TESTS(
        test_path, test_tensor_f16, test_unsupported_ops, test_fixed_shapes, test_random_shapes,
        test_long_k, test_kernel_choice)};
    int failed = TH_RUN_WITH_MOBILE("matmul f16", tests);
    const struct CMUnitTest gpu_tests[] = {TU_TESTS(
        test_kernel_choice, test_fixed_shapes, test_random_shapes_gpu, test_long_k_gpu,
        test_coopmat, test_coopmat_emulated)};
    failed += cmocka_run_group_tests_name("matmul f16, GPU tuning", gpu_tests,
                                          th_setup_gpu_tuning, th_teardown_gpu_tuning);
    return failed + cmocka_run_group_tests_name("matmul f16, GPU tuning, mobile-min", gpu_tests,
                                                th_setup_gpu_tuning_mobile,
                                                th_teardown_gpu_tuning);
}
