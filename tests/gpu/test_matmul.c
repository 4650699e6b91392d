/* Batched matmul vs the CPU reference, one file for every operand type.
 *
 * f32: random shapes from 1x1x1 through primes and non-multiples of every
 * tile, both transposes, broadcast (stride 0) operands, head-strided views,
 * padded row strides, alpha != 1, bias; the desktop and mobile-min limits,
 * and the GPU tuning's kernel in every mode. Fresh random inputs every run;
 * outputs poisoned with NaN first. Bound: fp32 with K-long sums of products
 * of values in [-1, 1]: the relative error (max|got-ref| / max|ref|) stays
 * below 1e-5 * sqrt-ish(K); we state 2e-5 for K <= 256 and 1e-4 above.
 *
 * 16-bit types, one row of `dtypes` each (f16, bf16): random shapes (odd
 * sizes, batch 1, transposes, bias, head-strided C views with odd row
 * strides, a K long enough to be split on lavapipe), each of A, B, bias, C
 * of the row's type or another at random (the bf16 row mixes f32, f16 and
 * bf16), outputs poisoned with NaN first; elements of C's span that are not
 * outputs must keep their NaN. The bounds are the ones vkattn/matmul.h states,
 * with S = (k + 2) 2^-23 (|alpha| sum|a||b| + |bias|):
 *   f32 C: S + 2^-24 |exact|;  f16 C: S + spacing(exact) (the device rounds);
 *   bf16 C: S + 0.5 spacing(|exact| + S) (vkattn's own round to nearest even)
 * with spacing the C type's (f16: 2^(e - 10), 2^-24 below 2^-14; bf16:
 * 2^(e - 7), 2^-133 below 2^-126). Run under the default profile (16-bit
 * storage on lavapipe: matmul_f16 for f16; bf16 always takes the packed
 * kernel) and mobile-min (no 16-bit storage: the packed kernel, asserted via
 * the info), then both again under the GPU tuning (matmul_gpu.comp reads
 * 16-bit operands as words and writes a 16-bit C a word per invocation on
 * every device), where the kernel-choice tests check that 16-bit calls take
 * matmul_gpu, never the scalar typed kernels. Also f16 tensors' round trips
 * and the f16 mask refusal. */
#include "harness.h"

#include <vkattn/advanced.h>
#include <vkattn/half.h>
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

static const vkattn_dtype F32 = VKATTN_DTYPE_F32, F16 = VKATTN_DTYPE_F16;

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

/* One 16-bit type: what differs between them. */
typedef struct mm_dtype {
    vkattn_dtype dtype;
    int frac, emin;       /* fraction bits; the smallest normal exponent */
    /* a C of this type is rounded by vkattn's own code, to nearest even
     * (bf16), not by the device's f32 -> f16 conversion, whose mode Vulkan
     * leaves open (one spacing) */
    bool own_rounding;
    int randoms, randoms_gpu; /* test_random_shapes16's cases (default, GPU tuning) */
} mm_dtype;

static const mm_dtype dtypes[] = {
    {VKATTN_DTYPE_F16, 10, -14, false, 40, 12},
    /* fewer random cases: the f16 ones cover the shapes, bf16 adds its rounding */
    {VKATTN_DTYPE_BF16, 7, -126, true, 10, 4},
};
#define NDTYPES (sizeof dtypes / sizeof dtypes[0])

static const mm_dtype *row_of(vkattn_dtype t)
{
    for (size_t i = 0; i < NDTYPES; i++)
        if (dtypes[i].dtype == t)
            return &dtypes[i];
    return NULL;
}

/* The spacing of type `d` at |x| (the subnormals' below the normal range). */
static double spacing(const mm_dtype *d, double x)
{
    x = fabs(x);
    return ldexp(1.0, (x < ldexp(1.0, d->emin) ? d->emin : ilogb(x)) - d->frac);
}

static float bf16_value(uint16_t h)
{
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* x stored as type t, for the typed reference (free it) */
static void *stored(const float *x, size_t n, vkattn_dtype t)
{
    if (t == VKATTN_DTYPE_F32) {
        float *f = tu_floats(n ? n : 1);
        memcpy(f, x, n * sizeof *f);
        return f;
    }
    uint16_t *h = tu_alloc(n ? 2 * n : 2);
    if (t == VKATTN_DTYPE_F16)
        vkattn_f32_to_f16_array(h, x, n);
    for (size_t i = 0; t == VKATTN_DTYPE_BF16 && i < n; i++)
        h[i] = th_bf16_bits(x[i]);
    return h;
}

static float stored_value(const uint16_t *h, size_t i, vkattn_dtype t)
{
    return t == VKATTN_DTYPE_BF16 ? bf16_value(h[i]) : tu_f16_to_f32(h[i]);
}

static void typed_case(vkattn_context *ctx, const vkattn_matmul_params *p, size_t na, size_t nb,
                       size_t nc, vkattn_matmul_dtypes ty)
{
    float *a = th_operand(na, ty.a), *b = th_operand(nb, ty.b);
    float *bias = th_operand(p->n, ty.bias);
    float *ref = tu_floats(nc), *mag = tu_floats(nc);
    float *aa = tu_floats(na), *ab = tu_floats(nb), *abias = tu_floats(p->n);
    for (size_t i = 0; i < na; i++)
        aa[i] = fabsf(a[i]);
    for (size_t i = 0; i < nb; i++)
        ab[i] = fabsf(b[i]);
    for (size_t i = 0; i < p->n; i++)
        abias[i] = fabsf(bias[i]);
    /* exact products of the stored values (f32 reference: inputs already
     * hold 16-bit values), and the magnitudes for the bound */
    for (size_t i = 0; i < nc; i++)
        ref[i] = mag[i] = NAN;
    TH_OK(ctx, vkattn_reference_matmul(p, NULL, a, b, p->has_bias ? bias : NULL, ref));
    vkattn_matmul_params pm = *p;
    pm.alpha = fabsf(p->alpha);
    TH_OK(ctx, vkattn_reference_matmul(&pm, NULL, aa, ab, p->has_bias ? abias : NULL, mag));
    /* the typed reference rounds a 16-bit C once: within half a spacing */
    const mm_dtype *c16 = row_of(ty.c);
    uint16_t *ref16 = NULL;
    if (c16) {
        ref16 = tu_alloc(nc * 2);
        memset(ref16, 0xff, nc * 2);
        void *a16 = stored(a, na, ty.a), *b16 = stored(b, nb, ty.b);
        void *bias16 = stored(bias, p->n, ty.bias);
        TH_OK(ctx, vkattn_reference_matmul(p, &ty, a16, b16, p->has_bias ? bias16 : NULL, ref16));
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
        const double sums = (p->k + 2) * 0x1p-23 * mag[i] + 0x1p-30;
        double bound = sums;
        if (c16) {
            /* own rounding: the f32 result v is within `sums` of the exact
             * one, RNE(v) within half the spacing at |v| <= |exact| + sums */
            bound += c16->own_rounding ? 0.5 * spacing(c16, fabs(ref[i]) + sums)
                                       : spacing(c16, ref[i]);
            double r16 = stored_value(ref16, i, ty.c);
            if (fabs(r16 - ref[i]) > 0.5 * spacing(c16, ref[i]) + 0x1p-30)
                fail_msg("typed reference %zu: %g vs %g", i, r16, (double)ref[i]);
        } else {
            bound += 0x1p-24 * fabs(ref[i]);
        }
        if (!TU_WITHIN(fabs((double)got[i] - ref[i]), bound))
            fail_msg("matmul 16-bit batch=%u heads=%u m=%u n=%u k=%u ta=%d tb=%d bias=%d types "
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

/* At least one operand of d's type; the others f32 (bf16 row: f32 or f16). */
static vkattn_matmul_dtypes random_types(const mm_dtype *d)
{
    uint32_t r = tu_rand_range(1, 15);
    vkattn_dtype t[4];
    for (int i = 0; i < 4; i++) {
        const bool other16 = d->dtype != VKATTN_DTYPE_F16 && tu_rand_range(0, 1);
        t[i] = (r >> i) & 1 ? d->dtype : other16 ? VKATTN_DTYPE_F16 : VKATTN_DTYPE_F32;
    }
    return (vkattn_matmul_dtypes){.a = t[0], .b = t[1], .bias = t[2], .c = t[3]};
}

/* Every operand of type t (F32 where `f32` has its bit: a 1, b 2, bias 4, c 8). */
static vkattn_matmul_dtypes types_of(vkattn_dtype t, unsigned f32)
{
    const vkattn_dtype f = VKATTN_DTYPE_F32;
    return (vkattn_matmul_dtypes){.a = f32 & 1 ? f : t, .b = f32 & 2 ? f : t,
                                  .bias = f32 & 4 ? f : t, .c = f32 & 8 ? f : t};
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
    typed_case(ctx, &p, (size_t)batch * heads * m * k, (size_t)batch * heads * k * n, nc, ty);
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

static void test_fixed_shapes16(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const uint32_t shapes[][4] = {
        {1, 1, 1, 1}, {1, 1, 7, 1}, {1, 7, 1, 5}, {1, 37, 53, 61}, {2, 65, 63, 17},
        {3, 16, 16, 16}, {1, 129, 65, 33}, {1, 1, 200, 130}, {2, 3, 5, 7},
    };
    for (size_t r = 0; r < NDTYPES; r++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
            for (int t = 0; t < 4; t++) {
                vkattn_matmul_dtypes ty = types_of(dtypes[r].dtype, t & 1 ? 0 : 8);
                if (t >= 2)
                    ty = random_types(&dtypes[r]);
                one_case(ctx, shapes[i][0], 1, shapes[i][1], shapes[i][2], shapes[i][3], false,
                         t & 1, i % 2 == 0, 0, ty);
            }
}

static void test_random_shapes16(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (size_t r = 0; r < NDTYPES; r++)
        for (int i = 0; i < dtypes[r].randoms; i++) {
            uint32_t heads = tu_rand_range(1, 3);
            one_case(ctx, tu_rand_range(1, 3), heads, tu_rand_range(1, 90), tu_rand_range(1, 90),
                     tu_rand_range(1, 150), tu_rand_range(0, 1), tu_rand_range(0, 1),
                     tu_rand_range(0, 1), tu_rand_range(0, 2), random_types(&dtypes[r]));
        }
}

/* Fewer random shapes under the GPU tuning (lavapipe runs its kernel slowly). */
static void test_random_shapes16_gpu(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (size_t r = 0; r < NDTYPES; r++)
        for (int i = 0; i < dtypes[r].randoms_gpu; i++)
            one_case(ctx, tu_rand_range(1, 2), tu_rand_range(1, 2), tu_rand_range(1, 70),
                     tu_rand_range(1, 70), tu_rand_range(1, 90), tu_rand_range(0, 1),
                     tu_rand_range(0, 1), tu_rand_range(0, 1), tu_rand_range(0, 2),
                     random_types(&dtypes[r]));
}

/* The split K under the GPU tuning: one case per type, a 16-bit C through
 * f32 sums (bf16: A f16, the rest bf16; an odd row start as well). */
static void test_long_k16_gpu(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    one_case(ctx, 1, 2, 3, 5, 70001, false, false, true, 1, types_of(VKATTN_DTYPE_F16, 0));
    vkattn_matmul_dtypes ty = types_of(VKATTN_DTYPE_BF16, 0);
    ty.a = VKATTN_DTYPE_F16;
    one_case(ctx, 1, 2, 3, 5, 70001, false, true, true, 1, ty);
}

/* A K long enough that lavapipe's loop budget splits it: a 16-bit C must
 * still get f32 sums (bf16: B f32, odd row starts too). */
static void test_long_k16(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_matmul_dtypes ty = types_of(VKATTN_DTYPE_F16, 0);
    one_case(ctx, 1, 1, 3, 5, 70001, false, true, true, 0, ty);
    one_case(ctx, 1, 2, 3, 5, 70001, false, false, false, 1, ty);
    one_case(ctx, 1, 2, 3, 5, 70001, true, false, true, 1, types_of(VKATTN_DTYPE_BF16, 2));
}

/* The rule of issue 20: a 16-bit product takes the kernel family the same
 * f32 product takes under the same tuning (the context's, from the group);
 * with a bf16 operand never the float16_t views (matmul_f16): the packed
 * kernel, or matmul_gpu. */
static void kernel_choice(vkattn_context *base, vkattn_dtype t)
{
    vkattn_context_info info;
    TH_OK(base, vkattn_context_get_info(base, &info));
    th_pipelines seen;
    vkattn_context_advanced adv = th_advanced();
    vkattn_context *ctx = th_logged_context(&adv, &seen);
    const uint32_t m = 9, n = 11, k = 13;
    vkattn_matmul_params p = {.m = m, .n = n, .k = k, .has_bias = true};
    static const unsigned f32_masks[] = {0, 14, 7}; /* all 16-bit; A only; C only */
    for (size_t i = 0; i < sizeof f32_masks / sizeof f32_masks[0]; i++) {
        vkattn_matmul_dtypes ty = types_of(t, f32_masks[i]);
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
        fail_msg("%s tuning, %s products: matmul_gpu %s, matmul_f16* %s", gpu ? "GPU" : "CPU",
                 t == VKATTN_DTYPE_BF16 ? "bf16" : "f16", used_gpu ? "used" : "unused",
                 used_f16 ? "used" : "unused");
    if (t == VKATTN_DTYPE_BF16 && th_pipeline_seen(&seen, "matmul_f16", false))
        fail_msg("a bf16 product took matmul_f16 (float16_t views)");
    vkattn_context_destroy(ctx);
    th_assert_validation_clean();
}

static void test_kernel_choice16(void **state)
{
    vkattn_context *base = TH_CTX(state);
    for (size_t r = 0; r < NDTYPES; r++)
        kernel_choice(base, dtypes[r].dtype);
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
            vkattn_matmul_dtypes ty = {.a = F16, .b = F16, .bias = (i + t) & 1 ? F16 : F32,
                                       .c = t & 1 ? F16 : F32};
            one_case(ctx, shapes[i][0], 1, shapes[i][1], shapes[i][2], shapes[i][3], t & 1,
                     t >> 1, i % 2 == 0, 0, ty);
        }
    for (int i = 0; i < randoms; i++) {
        vkattn_matmul_dtypes ty = {.a = F16, .b = F16, .bias = tu_rand_range(0, 1) ? F16 : F32,
                                   .c = tu_rand_range(0, 1) ? F16 : F32};
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
    vkattn_matmul_dtypes all16 = types_of(F16, 0);
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
    vkattn_matmul_dtypes all16 = types_of(F16, 0);
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
    vkattn_matmul_dtypes all16 = types_of(F16, 0);
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
    one_case(ctx, 1, 1, 3, 5, 2100, false, true, true, 0, types_of(F16, 12));
    /* a bf16 bias and C on the fragments (A and B f16): C's words (even row
     * starts), the split K's f32 sums, an odd row start's f32 scratch */
    const vkattn_matmul_dtypes c_bf16 = {F16, F16, VKATTN_DTYPE_BF16, VKATTN_DTYPE_BF16};
    one_case(ctx, 2, 1, 33, 48, 64, false, true, true, 0, c_bf16);
    one_case(ctx, 1, 2, 17, 24, 9, true, false, true, 2, c_bf16);
    one_case(ctx, 1, 2, 5, 3, 2100, true, false, true, 0, c_bf16);
    one_case(ctx, 1, 2, 17, 23, 9, false, false, true, 1, c_bf16);
    assert_false(th_pipeline_seen(&seen, "matmul_gpu", false));
    vkattn_matmul_dtypes a32 = types_of(F16, 1);
    one_case(ctx, 1, 1, 9, 11, 13, false, false, true, 0, a32);
    assert_true(th_pipeline_seen(&seen, "matmul_gpu", false));
    seen.count = 0; /* only what the next call creates */
    /* a bf16 A or B keeps matmul_gpu too: the fragments are f16 */
    one_case(ctx, 1, 1, 9, 11, 13, false, false, true, 0, types_of(VKATTN_DTYPE_BF16, 10));
    assert_true(th_pipeline_seen(&seen, "matmul_gpu", false));
    print_message("coopmat emulated: %s ran matmul_coopmat_emu\n", info.device_name);
    vkattn_context_destroy(ctx);
    th_assert_validation_clean();
}

int main(void)
{
    const struct CMUnitTest tests[] = {TU_TESTS(
        test_fixed_shapes, test_random_shapes, test_head_views, test_large,
        test_chained_in_one_command_buffer, test_bad_arguments, test_dispatch_budget,
        test_path, test_tensor_f16, test_unsupported_ops, test_fixed_shapes16,
        test_random_shapes16, test_long_k16, test_kernel_choice16)};
    /* Then under the mobile-min limits (16 KiB shared memory, 128 invocations,
     * no 16-bit storage): the smaller tiles, the packed kernel. */
    int failed = TH_RUN_WITH_MOBILE("matmul", tests);
    const struct CMUnitTest gpu_tests[] = {TU_TESTS(
        test_gpu_shapes, test_fixed_shapes, test_dispatch_budget, test_kernel_choice,
        test_kernel_choice16, test_fixed_shapes16, test_random_shapes16_gpu, test_long_k16_gpu,
        test_coopmat, test_coopmat_emulated)};
    /* under the GPU tuning in every mode: its kernel on the shapes above */
    failed += cmocka_run_group_tests_name("matmul, GPU tuning", gpu_tests, th_setup_gpu_tuning,
                                          th_teardown_gpu_tuning);
    const struct CMUnitTest gpu_tests16[] = {TU_TESTS(
        test_kernel_choice16, test_fixed_shapes16, test_random_shapes16_gpu, test_long_k16_gpu,
        test_coopmat, test_coopmat_emulated)};
    return failed + cmocka_run_group_tests_name("matmul 16-bit, GPU tuning, mobile-min",
                                                gpu_tests16, th_setup_gpu_tuning_mobile,
                                                th_teardown_gpu_tuning);
}
