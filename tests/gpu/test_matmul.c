/* Batched matmul vs the CPU reference: random shapes from 1x1x1 through primes
 * and non-multiples of every tile, both transposes, broadcast (stride 0)
 * operands, head-strided views, padded row strides, alpha != 1, bias; the
 * desktop and mobile-min limits, and the GPU tuning's kernel in every mode.
 * Fresh random inputs every run; outputs poisoned with NaN first.
 *
 * Bound: fp32 with K-long sums of products of values in [-1, 1]: the relative
 * error (max|got-ref| / max|ref|) stays below 1e-5 * sqrt-ish(K); we state
 * 2e-5 for K <= 256 and 1e-4 above. */
#include "harness.h"

#include <vkattn/advanced.h>
#include <vkattn/reference.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double bound_for(uint32_t k) { return k <= 256 ? 2e-5 : 1e-4; }

/* Runs one case on the GPU and the reference; compares. */
static void check_case(vkattn_context *ctx, const vkattn_matmul_params *p, uint64_t na, uint64_t nb,
                       uint64_t nc)
{
    float *a = tu_floats(na), *b = tu_floats(nb), *bias = tu_floats(p->n);
    float *ref = tu_floats(nc);
    tu_fill_uniform(a, na, -1, 1);
    tu_fill_uniform(b, nb, -1, 1);
    tu_fill_uniform(bias, p->n, -1, 1);
    tu_poison(ref, nc);
    TH_OK(ctx, vkattn_reference_matmul(p, NULL, a, b, p->has_bias ? bias : NULL, ref));

    vkattn_tensor *ta = th_tensor(ctx, na, a), *tb = th_tensor(ctx, nb, b);
    vkattn_tensor *tbias = p->has_bias ? th_tensor(ctx, p->n, bias) : NULL;
    vkattn_tensor *tc = th_tensor(ctx, nc, NULL);
    vkattn_matmul_io io = {.a = ta, .b = tb, .bias = tbias, .c = tc};
    TH_OK(ctx, vkattn_matmul_record(ctx, VKATTN_RUN_NOW, p, &io));
    float *got = th_download(tc, nc);

    char what[160];
    snprintf(what, sizeof what, "matmul batch=%u heads=%u m=%u n=%u k=%u ta=%d tb=%d bias=%d",
             p->batch, p->heads, p->m, p->n, p->k, p->transpose_a, p->transpose_b, p->has_bias);
    TU_ASSERT_CLOSE(got, ref, nc, bound_for(p->k), what);
    th_assert_validation_clean();

    vkattn_tensor_destroy(ta);
    vkattn_tensor_destroy(tb);
    vkattn_tensor_destroy(tbias);
    vkattn_tensor_destroy(tc);
    free(a), free(b), free(bias), free(ref), free(got);
}

/* Packed operands; A and/or B broadcast over the batch at random. */
static void packed_case(vkattn_context *ctx, uint32_t batch, uint32_t m, uint32_t n, uint32_t k,
                        bool ta, bool tb, bool bias, float alpha)
{
    bool bcast_a = batch > 1 && tu_rand_range(0, 3) == 0;
    bool bcast_b = batch > 1 && tu_rand_range(0, 2) == 0;
    vkattn_matmul_params p = {
        .batch = batch, .m = m, .n = n, .k = k, .transpose_a = ta, .transpose_b = tb,
        .has_bias = bias, .alpha = alpha,
        .a = {.batch_stride = bcast_a ? 0 : (uint64_t)m * k},
        .b = {.batch_stride = bcast_b ? 0 : (uint64_t)k * n},
    };
    check_case(ctx, &p, (bcast_a ? 1 : batch) * (uint64_t)m * k, (bcast_b ? 1 : batch) * (uint64_t)k * n,
               (uint64_t)batch * m * n);
}

static void test_fixed_shapes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const uint32_t shapes[][4] = {
        {1, 1, 1, 1}, {1, 1, 7, 1}, {1, 7, 1, 5}, {1, 37, 53, 61}, {2, 65, 63, 17},
        {3, 16, 16, 16}, {1, 64, 64, 64}, {1, 129, 65, 33}, {1, 1, 200, 130}, {2, 200, 1, 3},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int t = 0; t < 4; t++)
            packed_case(ctx, shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], t & 1, t >> 1,
                        i % 2 == 0, i % 3 == 0 ? 0.0f : 0.75f);
}

static void test_random_shapes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 24; i++)
        packed_case(ctx, tu_rand_range(1, 4), tu_rand_range(1, 150), tu_rand_range(1, 150),
                    tu_rand_range(1, 150), tu_rand_range(0, 1), tu_rand_range(0, 1),
                    tu_rand_range(0, 1), tu_rand_float(-2, 2));
}

static void test_large(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    packed_case(ctx, 1, 256, 256, 256, false, false, false, 1.0f);
    packed_case(ctx, 1, 255, 257, 300, false, true, true, 1.0f);
}

/* Head-strided views, as attention reads Q (B, T, H, d) in place:
 * A = Q viewed per (b, h) with row stride H*d and head stride d. */
static void test_head_views(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 6; i++) {
        uint32_t B = tu_rand_range(1, 3), H = tu_rand_range(1, 4), T = tu_rand_range(1, 40);
        uint32_t S = tu_rand_range(1, 40), d = tu_rand_range(1, 24);
        vkattn_matmul_params p = {
            .batch = B, .heads = H, .m = T, .n = S, .k = d, .transpose_b = true,
            .a = {.batch_stride = (uint64_t)T * H * d, .head_stride = d, .row_stride = H * d},
            .b = {.batch_stride = (uint64_t)S * H * d, .head_stride = d, .row_stride = H * d},
        };
        check_case(ctx, &p, (uint64_t)B * T * H * d, (uint64_t)B * S * H * d, (uint64_t)B * H * T * S);
    }
}

/* Two products in one command buffer, the second reading the first's output and
 * then overwriting an input of the first: the barriers vkattn records between
 * them (read-after-write, write-after-read) must make this exact and clean
 * under synchronization validation. Timestamps around it exercise the timer. */
static void test_chained_in_one_command_buffer(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const uint32_t n = 33;
    float *a = tu_floats(n * n), *b = tu_floats(n * n), *c1 = tu_floats(n * n), *c2 = tu_floats(n * n);
    tu_fill_uniform(a, n * n, -1, 1);
    tu_fill_uniform(b, n * n, -1, 1);
    vkattn_matmul_params p = {.m = n, .n = n, .k = n};
    TH_OK(ctx, vkattn_reference_matmul(&p, NULL, a, b, NULL, c1));
    TH_OK(ctx, vkattn_reference_matmul(&p, NULL, c1, b, NULL, c2));

    vkattn_tensor *ta = th_tensor(ctx, n * n, a), *tb = th_tensor(ctx, n * n, b);
    vkattn_tensor *tc = th_tensor(ctx, n * n, NULL), *td = th_tensor(ctx, n * n, NULL);
    /* timed where the device (or profile) has timestamps */
    vkattn_context_info info;
    vkattn_context_get_info(ctx, &info);
    vkattn_timer *timer = NULL;
    if (info.timestamps)
        TH_OK(ctx, vkattn_timer_create(ctx, 2, &timer));
    VkCommandBuffer cmd;
    TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
    if (timer) {
        TH_OK(ctx, vkattn_timer_reset(timer, cmd));
        TH_OK(ctx, vkattn_timer_mark(timer, cmd, 0));
    }
    vkattn_matmul_io first = {.a = ta, .b = tb, .c = tc};
    vkattn_matmul_io second = {.a = tc, .b = tb, .c = td};
    vkattn_matmul_io third = {.a = td, .b = tb, .c = ta}; /* overwrites A after it was read */
    TH_OK(ctx, vkattn_matmul_record(ctx, cmd, &p, &first));
    TH_OK(ctx, vkattn_matmul_record(ctx, cmd, &p, &second));
    TH_OK(ctx, vkattn_matmul_record(ctx, cmd, &p, &third));
    if (timer)
        TH_OK(ctx, vkattn_timer_mark(timer, cmd, 1));
    TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd));
    double ms = -1;
    if (timer) {
        TH_OK(ctx, vkattn_timer_elapsed_ms(timer, 0, 1, &ms));
        assert_true(ms >= 0);
    }

    float *got = th_download(td, n * n);
    TU_ASSERT_CLOSE(got, c2, n * n, 2e-5, "chained matmul");
    th_assert_validation_clean();
    vkattn_timer_destroy(timer);
    vkattn_tensor_destroy(ta), vkattn_tensor_destroy(tb), vkattn_tensor_destroy(tc);
    vkattn_tensor_destroy(td);
    free(a), free(b), free(c1), free(c2), free(got);
}

static void test_bad_arguments(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_tensor *t = th_tensor(ctx, 16, NULL);
    vkattn_matmul_params p = {.m = 4, .n = 4, .k = 4};
    vkattn_matmul_io io = {.a = t, .b = t, .c = th_tensor(ctx, 16, NULL)};
    assert_int_equal(vkattn_matmul_record(ctx, VKATTN_RUN_NOW, NULL, &io), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_matmul_record(ctx, VKATTN_RUN_NOW, &p, NULL), VKATTN_ERROR_INVALID_ARGUMENT);
    p.k = 0;
    assert_int_equal(vkattn_matmul_record(ctx, VKATTN_RUN_NOW, &p, &io), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_context_last_error(ctx), "k is 0"));
    p.k = 5; /* A would need 20 elements */
    assert_int_equal(vkattn_matmul_record(ctx, VKATTN_RUN_NOW, &p, &io), VKATTN_ERROR_INVALID_ARGUMENT);
    p.k = 4;
    p.batch = 2; /* C is too small for 2 batches */
    assert_int_equal(vkattn_matmul_record(ctx, VKATTN_RUN_NOW, &p, &io), VKATTN_ERROR_INVALID_ARGUMENT);
    p.batch = 1;
    p.has_bias = true; /* no bias tensor */
    assert_int_equal(vkattn_matmul_record(ctx, VKATTN_RUN_NOW, &p, &io), VKATTN_ERROR_INVALID_ARGUMENT);
    p.has_bias = false;
    p.a.row_stride = 2; /* narrower than the matrix */
    assert_int_equal(vkattn_matmul_record(ctx, VKATTN_RUN_NOW, &p, &io), VKATTN_ERROR_INVALID_ARGUMENT);
    p.a.row_stride = 0;
    p.alpha = INFINITY; /* refused as the reference refuses it (core/matmul_shape.c) */
    assert_int_equal(vkattn_matmul_record(ctx, VKATTN_RUN_NOW, &p, &io), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_context_last_error(ctx), "alpha is inf; must be finite"));
    float host[16] = {0};
    assert_int_equal(vkattn_reference_matmul(&p, NULL, host, host, NULL, host),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    p.alpha = 0.0f;
    p.batch = 70000; /* over the z workgroup limit or too small tensors: never a crash */
    p.a.batch_stride = 0;
    p.b.batch_stride = 0;
    assert_int_not_equal(vkattn_matmul_record(ctx, VKATTN_RUN_NOW, &p, &io), VKATTN_SUCCESS);
    TH_OK(ctx, (p.batch = 1, vkattn_matmul_record(ctx, VKATTN_RUN_NOW, &p, &io)));
    vkattn_tensor_destroy(io.c);
    vkattn_tensor_destroy(t);
    th_assert_validation_clean();
}

/* One packed matmul on ctx and on bctx (a context with a small dispatch
 * budget, so the call is split along M): the outputs must be bit-identical
 * and match the reference. */
static void budget_case(vkattn_context *ctx, vkattn_context *bctx, uint32_t batch, uint32_t m,
                        uint32_t n, uint32_t k, bool ta, bool bias)
{
    vkattn_matmul_params p = {.batch = batch, .m = m, .n = n, .k = k, .transpose_a = ta,
                              .has_bias = bias, .alpha = 0.5f};
    const size_t na = (size_t)batch * m * k, nb = (size_t)batch * k * n, nc = (size_t)batch * m * n;
    float *a = tu_floats(na), *b = tu_floats(nb), *bv = tu_floats(n), *ref = tu_floats(nc);
    tu_fill_uniform(a, na, -1, 1);
    tu_fill_uniform(b, nb, -1, 1);
    tu_fill_uniform(bv, n, -1, 1);
    TH_OK(ctx, vkattn_reference_matmul(&p, NULL, a, b, bias ? bv : NULL, ref));
    float *got[2];
    vkattn_context *ctxs[2] = {ctx, bctx};
    for (int i = 0; i < 2; i++) {
        vkattn_tensor *ta_ = th_tensor(ctxs[i], na, a), *tb = th_tensor(ctxs[i], nb, b);
        vkattn_tensor *tbias = bias ? th_tensor(ctxs[i], n, bv) : NULL;
        vkattn_tensor *tc = th_tensor(ctxs[i], nc, NULL);
        vkattn_matmul_io io = {.a = ta_, .b = tb, .bias = tbias, .c = tc};
        TH_OK(ctxs[i], vkattn_matmul_record(ctxs[i], VKATTN_RUN_NOW, &p, &io));
        got[i] = th_download(tc, nc);
        vkattn_tensor_destroy(ta_), vkattn_tensor_destroy(tb), vkattn_tensor_destroy(tbias);
        vkattn_tensor_destroy(tc);
    }
    char what[160];
    snprintf(what, sizeof what, "budget matmul batch=%u m=%u n=%u k=%u ta=%d bias=%d", batch, m,
             n, k, ta, bias);
    TU_ASSERT_CLOSE(got[1], ref, nc, bound_for(k), what);
    if (memcmp(got[0], got[1], nc * sizeof(float)) != 0)
        fail_msg("%s: the split call differs from the single dispatch", what);
    th_assert_validation_clean();
    free(a), free(b), free(bv), free(ref), free(got[0]), free(got[1]);
}

/* max_dispatch_work = 2^14 multiply-adds: calls are split into row blocks
 * (odd shapes, blocks that are and are not tile multiples, with a K split on
 * lavapipe for the long K), and a single row over the budget is refused. */
static void test_dispatch_budget(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    void *bstate = NULL;
    assert_int_equal(th_setup_with(&bstate, NULL, 1u << 14), 0);
    vkattn_context *bctx = bstate;
    budget_case(ctx, bctx, 2, 67, 33, 29, false, true);  /* 8 rows per dispatch */
    budget_case(ctx, bctx, 1, 301, 5, 40, true, false);  /* 81 -> 64 rows (a tile multiple) */
    budget_case(ctx, bctx, 3, 9, 61, 89, false, false);  /* 1 row per dispatch */
    budget_case(ctx, bctx, 1, 16, 16, 16, false, true);  /* fits one dispatch */

    vkattn_matmul_params p = {.m = 3, .n = 200, .k = 100};
    vkattn_tensor *a = th_tensor(bctx, 300, NULL), *b = th_tensor(bctx, 20000, NULL);
    vkattn_tensor *c = th_tensor(bctx, 600, NULL);
    vkattn_matmul_io io = {.a = a, .b = b, .c = c};
    assert_int_equal(vkattn_matmul_record(bctx, VKATTN_RUN_NOW, &p, &io), VKATTN_ERROR_DEVICE_LIMIT);
    assert_non_null(strstr(vkattn_context_last_error(bctx), "max_dispatch_work"));
    vkattn_tensor_destroy(a), vkattn_tensor_destroy(b), vkattn_tensor_destroy(c);
    assert_int_equal(th_teardown(&bstate), 0);
}

/* One batch of 2 with stored rows padded by `pad` elements (row, batch and
 * head strides then are or are not multiples of 4, choosing the GPU kernel's
 * vec4 or scalar loads). */
static void strided_case(vkattn_context *ctx, uint32_t m, uint32_t n, uint32_t k, bool ta, bool tb,
                         uint32_t pad)
{
    const uint64_t a_rows = ta ? k : m, a_ld = (ta ? m : k) + pad;
    const uint64_t b_rows = tb ? n : k, b_ld = (tb ? k : n) + pad;
    vkattn_matmul_params p = {
        .batch = 2, .m = m, .n = n, .k = k, .transpose_a = ta, .transpose_b = tb,
        .has_bias = pad % 2 == 1, .alpha = 1.5f,
        .a = {.batch_stride = a_rows * a_ld, .row_stride = a_ld},
        .b = {.batch_stride = b_rows * b_ld, .row_stride = b_ld},
    };
    check_case(ctx, &p, 2 * a_rows * a_ld, 2 * b_rows * b_ld, 2ull * m * n);
}

/* The GPU tuning's kernel (matmul_gpu.comp; any tuning runs these shapes):
 * sizes that are and are not multiples of its tiles and of 4, each
 * transpose, aligned operands (vec4 loads, with the scalar tail where a row
 * ends inside a group of four) and unaligned ones (scalar loads), several
 * steps of BK (the double-buffered tiles alternate). */
static void test_gpu_shapes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const uint32_t shapes[][3] = {
        {64, 64, 64}, {128, 64, 48}, {256, 256, 32}, {68, 36, 20}, {33, 65, 18},
        {5, 7, 3},    {1, 130, 9},   {97, 1, 41},    {260, 132, 17},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int t = 0; t < 4; t++)
            strided_case(ctx, shapes[i][0], shapes[i][1], shapes[i][2], t & 1, t >> 1,
                         (uint32_t)((i + t) % 3) * 2); /* pads 0, 2, 4 */
    for (int i = 0; i < 6; i++)
        strided_case(ctx, tu_rand_range(1, 90), tu_rand_range(1, 90), tu_rand_range(1, 90),
                     tu_rand_range(0, 1), tu_rand_range(0, 1), tu_rand_range(0, 5));
}

/* Which kernel served a call, from the context's debug log ("pipeline NAME
 * created"): matmul_gpu for f32 under the GPU tuning, the existing kernels
 * for the CPU tuning and for f16 operands. */
static void test_kernel_choice(void **state)
{
    (void)TH_CTX(state);
    for (int tuning = VKATTN_TUNING_GPU; tuning <= VKATTN_TUNING_CPU; tuning++) {
        th_pipelines seen;
        vkattn_context *ctx = th_tuning_context(tuning, &seen);
        const uint32_t m = 9, n = 11, k = 13;
        vkattn_matmul_params p = {.m = m, .n = n, .k = k};
        vkattn_tensor *a = th_tensor(ctx, m * k, NULL), *b = th_tensor(ctx, k * n, NULL);
        vkattn_tensor *c = th_tensor(ctx, m * n, NULL), *c16 = NULL;
        vkattn_matmul_io io = {.a = a, .b = b, .c = c};
        TH_OK(ctx, vkattn_matmul_record(ctx, VKATTN_RUN_NOW, &p, &io));
        const vkattn_tensor_desc half = {.rank = 2, .dims = {m, n}, .dtype = VKATTN_DTYPE_F16};
        TH_OK(ctx, vkattn_tensor_create(ctx, &half, &c16));
        io.c = c16;
        TH_OK(ctx, vkattn_matmul_record(ctx, VKATTN_RUN_NOW, &p, &io));
        const bool gpu = tuning == VKATTN_TUNING_GPU;
        const bool used_gpu = th_pipeline_seen(&seen, "matmul_gpu", false);
        const bool used_plain = th_pipeline_seen(&seen, "matmul", false);
        const bool used_f16 = th_pipeline_seen(&seen, "matmul_f16", true);
        /* an f16 call takes the same family as the f32 one (issue 20) */
        if (used_gpu != gpu || used_plain == gpu || used_f16 == gpu)
            fail_msg("%s tuning: matmul_gpu %s, matmul %s, matmul_f16* %s", gpu ? "GPU" : "CPU",
                     used_gpu ? "used" : "unused", used_plain ? "used" : "unused",
                     used_f16 ? "used" : "unused");
        vkattn_tensor_destroy(a), vkattn_tensor_destroy(b), vkattn_tensor_destroy(c);
        vkattn_tensor_destroy(c16);
        vkattn_context_destroy(ctx);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {TU_TESTS(
        test_fixed_shapes, test_random_shapes, test_head_views, test_large,
        test_chained_in_one_command_buffer, test_bad_arguments, test_dispatch_budget)};
    /* Then under the mobile-min limits (16 KiB shared memory, 128 invocations):
     * the smaller tiles. */
    int failed = TH_RUN_WITH_MOBILE("matmul", tests);
    const struct CMUnitTest gpu_tests[] = {TU_TESTS(
        test_gpu_shapes, test_fixed_shapes, test_dispatch_budget, test_kernel_choice)};
    /* under the GPU tuning in every mode: its kernel on the shapes above */
    return failed + cmocka_run_group_tests_name("matmul, GPU tuning", gpu_tests, th_setup_gpu_tuning,
                                                th_teardown_gpu_tuning);
}
