/* Additive (tanh) scores vs the CPU reference: fixed and random shapes (batch 1,
 * Tq = 1, primes, Tq != Tv, dim 1, sizes not multiples of any tile or of the
 * dim chunk), with and without the scale vector, inner/outer scales != 1 and
 * negative, large-magnitude inputs (|q + k| up to 100, and up to 300 after the
 * inner scale, where a naive tanh overflows to NaN), a per-element tanh sweep,
 * recording into one command buffer with a consumer, and bad arguments. Fresh
 * random inputs every run; outputs poisoned with NaN first.
 *
 * Bound: max|S - ref| / max|ref| <= 1e-5 against the double reference. The
 * shader's tanh is within ~3 ulp (~2e-7) of the true value for every argument
 * (measured on the host for the same fp32 formula, and checked per element by
 * test_tanh_sweep at 1e-5 each); fp32 rounding of inner * (q + k) adds ~1e-7
 * relative and the fp32 sum over dim ~dim * 6e-8 of its largest partial sums,
 * so dims up to a few hundred stay well inside 1e-5. */
#include "op_table.h"

#include <vkattn/reference.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOUND 1e-5

/* The largest error seen, printed per test to show the margin to BOUND. */
static double worst_seen;

static void report_worst(const char *test)
{
    printf("# %s: max relative error %.3g (bound %.0e)\n", test, worst_seen, BOUND);
    worst_seen = 0.0;
}

typedef struct inputs {
    float lo, hi; /* q and k uniform in [lo, hi] */
} inputs;

/* One case on the GPU and the reference; compares with BOUND. */
static void check_case(vkattn_context *ctx, const vkattn_additive_params *p, inputs in)
{
    size_t nq = (size_t)p->batch * p->tq * p->dim, nk = (size_t)p->batch * p->tv * p->dim;
    size_t ns = (size_t)p->batch * p->tq * p->tv;
    float *q = tu_floats(nq), *k = tu_floats(nk), *s = tu_floats(p->dim), *ref = tu_floats(ns);
    tu_fill_uniform(q, nq, in.lo, in.hi);
    tu_fill_uniform(k, nk, in.lo, in.hi);
    tu_fill_uniform(s, p->dim, -1.5f, 1.5f);
    tu_poison(ref, ns);
    const float *sv = p->has_scale_vector ? s : NULL;
    TH_OK(ctx, vkattn_reference_additive(p, NULL, q, k, sv, ref));

    vkattn_tensor *tq = th_tensor(ctx, nq, q), *tk = th_tensor(ctx, nk, k);
    vkattn_tensor *ts = sv ? th_tensor(ctx, p->dim, s) : NULL, *out = th_tensor(ctx, ns, NULL);
    vkattn_additive_io io = {.q = tq, .k = tk, .scale = ts, .scores = out};
    TH_OK(ctx, vkattn_additive_record(ctx, VKATTN_RUN_NOW, p, &io));
    float *got = th_download(out, ns);

    char what[200];
    snprintf(what, sizeof what,
             "additive B=%u Tq=%u Tv=%u dim=%u scale_vec=%d inner=%g outer=%g inputs [%g, %g]",
             p->batch, p->tq, p->tv, p->dim, p->has_scale_vector, p->inner_scale, p->outer_scale,
             in.lo, in.hi);
    TU_ASSERT_CLOSE(got, ref, ns, BOUND, what);
    double err = tu_max_rel_err(got, ref, ns, 1e-30);
    worst_seen = err > worst_seen ? err : worst_seen;
    th_assert_validation_clean();

    vkattn_tensor_destroy(tq), vkattn_tensor_destroy(tk), vkattn_tensor_destroy(ts);
    vkattn_tensor_destroy(out);
    free(q), free(k), free(s), free(ref), free(got);
}

static void shape_case(vkattn_context *ctx, uint32_t b, uint32_t tq, uint32_t tv, uint32_t dim,
                       bool scale_vec, float inner, float outer, inputs in)
{
    vkattn_additive_params p = {.batch = b, .tq = tq, .tv = tv, .dim = dim,
                                .inner_scale = inner, .outer_scale = outer,
                                .has_scale_vector = scale_vec};
    check_case(ctx, &p, in);
}

static void test_fixed_shapes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    /* B, Tq, Tv, dim: tile edges (1, 8, 32, 64), one past them, primes, the
     * decode tile (Tq = 1, Tv > 64), dims below, at and past the 32-long chunk */
    static const uint32_t shapes[][4] = {
        {1, 1, 1, 1},    {1, 1, 7, 1},   {1, 7, 1, 5},    {2, 13, 17, 1},  {1, 37, 53, 61},
        {3, 64, 64, 32}, {1, 65, 63, 33}, {2, 1, 200, 16}, {1, 200, 1, 3},  {1, 5, 300, 7},
        {1, 9, 33, 64},  {2, 129, 67, 100}, {1, 1, 65, 97}, {1, 8, 8, 31},
    };
    const inputs unit = {-1.0f, 1.0f};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int mode = 0; mode < 2; mode++) {
            /* mode 0: Keras AdditiveAttention (scale vector, scalars default);
             * mode 1: Keras Attention concat (no vector, inner and outer set) */
            bool vec = mode == 0;
            float inner = vec ? 0.0f : 0.7f, outer = vec ? 0.0f : -1.3f;
            shape_case(ctx, shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], vec, inner,
                       outer, unit);
        }
    report_worst("fixed shapes");
}

static void test_random_shapes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 24; i++) {
        float inner = tu_rand_range(0, 3) == 0 ? 0.0f : tu_rand_float(-2.5f, 2.5f);
        float outer = tu_rand_range(0, 3) == 0 ? 0.0f : tu_rand_float(-2.5f, 2.5f);
        float mag = tu_rand_range(0, 1) ? 1.0f : 4.0f;
        shape_case(ctx, tu_rand_range(1, 3), tu_rand_range(1, 100), tu_rand_range(1, 100),
                   tu_rand_range(1, 80), tu_rand_range(0, 1), inner, outer,
                   (inputs){-mag, mag});
    }
    report_worst("random shapes");
}

/* |q + k| up to 100 (and up to 300 after the inner scale): exp(2|x|) overflows
 * fp32 past |x| ~ 44, where (e^2x - 1)/(e^2x + 1) would give inf/inf = NaN. */
static void test_large_magnitude(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const inputs big = {-50.0f, 50.0f};
    shape_case(ctx, 2, 19, 23, 40, true, 0.0f, 0.0f, big);
    shape_case(ctx, 1, 70, 66, 9, false, 3.0f, 0.5f, big);
    shape_case(ctx, 1, 1, 130, 64, true, -3.0f, 2.0f, big);
    shape_case(ctx, 3, 33, 5, 1, false, 1.0f, 1.0f, big);
    /* a mix of saturated and small arguments in one sum */
    shape_case(ctx, 1, 31, 29, 50, true, 0.0f, 0.0f, (inputs){-8.0f, 8.0f});
    shape_case(ctx, 1, 17, 41, 33, false, 0.01f, 10.0f, big);
    report_worst("large magnitude");
}

/* Per-element check of the device tanh: dim 1, k = {0, 50, -50, 1e-3}, q
 * log-uniform in magnitude from 1e-6 to 200 with both signs, so S[i, 0] =
 * tanh(inner * q_i) element by element (no sum to hide an error in). */
static void test_tanh_sweep(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const uint32_t tq = 257, tv = 4;
    float q[257], k[4] = {0.0f, 50.0f, -50.0f, 1e-3f}, ref[257 * 4];
    for (uint32_t i = 0; i < tq; i++) {
        float mag = powf(10.0f, tu_rand_float(-6.0f, 2.3f));
        q[i] = (i % 2 ? -mag : mag);
    }
    q[0] = 0.0f, q[1] = -0.0f, q[2] = 0.625f, q[3] = -0.625f, q[4] = 44.5f, q[5] = -44.5f;
    for (int pass = 0; pass < 2; pass++) {
        vkattn_additive_params p = {.batch = 1, .tq = tq, .tv = tv, .dim = 1,
                                    .inner_scale = pass ? 3.0f : 0.0f};
        TH_OK(ctx, vkattn_reference_additive(&p, NULL, q, k, NULL, ref));
        vkattn_tensor *tqt = th_tensor(ctx, tq, q), *tkt = th_tensor(ctx, tv, k);
        vkattn_tensor *out = th_tensor(ctx, tq * tv, NULL);
        vkattn_additive_io io = {.q = tqt, .k = tkt, .scores = out};
        TH_OK(ctx, vkattn_additive_record(ctx, VKATTN_RUN_NOW, &p, &io));
        float *got = th_download(out, tq * tv);
        double worst = 0.0;
        uint32_t at = 0;
        for (uint32_t e = 0; e < tq * tv; e++) {
            double err = ref[e] == 0.0f ? fabs((double)got[e])
                                        : fabs(((double)got[e] - ref[e]) / ref[e]);
            if (isnan(err))
                err = INFINITY;
            if (err > worst)
                worst = err, at = e;
        }
        if (!TU_WITHIN(worst, BOUND))
            fail_msg("tanh sweep (inner %g): element %u: got %.9g, ref %.9g (relative %.3g)",
                     p.inner_scale ? p.inner_scale : 1.0, at, got[at], ref[at], worst);
        printf("# tanh sweep, inner %g: max per-element relative error %.3g\n",
               p.inner_scale ? p.inner_scale : 1.0, worst);
        vkattn_tensor_destroy(tqt), vkattn_tensor_destroy(tkt), vkattn_tensor_destroy(out);
        free(got);
    }
    th_assert_validation_clean();
}

/* Scores recorded into one command buffer and consumed there by a matmul
 * (S @ V), then the scores recomputed into the same tensor after that read:
 * vkattn's tracked barriers must make both exact and validation-clean. */
static void test_recorded_with_consumer(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const uint32_t tq = 21, tv = 34, dim = 40, dv = 7;
    float *q = tu_floats(tq * dim), *k = tu_floats(tv * dim), *v = tu_floats(tv * dv);
    float *s = tu_floats(tq * tv), *o = tu_floats(tq * dv);
    tu_fill_uniform(q, tq * dim, -1, 1);
    tu_fill_uniform(k, tv * dim, -1, 1);
    tu_fill_uniform(v, tv * dv, -1, 1);
    vkattn_additive_params ap = {.batch = 1, .tq = tq, .tv = tv, .dim = dim, .inner_scale = 0.5f};
    vkattn_matmul_params mp = {.m = tq, .n = dv, .k = tv};
    TH_OK(ctx, vkattn_reference_additive(&ap, NULL, q, k, NULL, s));
    TH_OK(ctx, vkattn_reference_matmul(&mp, NULL, s, v, NULL, o));

    vkattn_tensor *tqt = th_tensor(ctx, tq * dim, q), *tkt = th_tensor(ctx, tv * dim, k);
    vkattn_tensor *tvt = th_tensor(ctx, tv * dv, v), *ts = th_tensor(ctx, tq * tv, NULL);
    vkattn_tensor *to = th_tensor(ctx, tq * dv, NULL);
    VkCommandBuffer cmd;
    TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
    vkattn_additive_io aio = {.q = tqt, .k = tkt, .scores = ts};
    vkattn_matmul_io mio = {.a = ts, .b = tvt, .c = to};
    TH_OK(ctx, vkattn_additive_record(ctx, cmd, &ap, &aio));
    TH_OK(ctx, vkattn_matmul_record(ctx, cmd, &mp, &mio));
    TH_OK(ctx, vkattn_additive_record(ctx, cmd, &ap, &aio)); /* write after read */
    TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd));

    float *got_o = th_download(to, tq * dv), *got_s = th_download(ts, tq * tv);
    TU_ASSERT_CLOSE(got_s, s, tq * tv, BOUND, "recorded scores");
    TU_ASSERT_CLOSE(got_o, o, tq * dv, 2e-5, "scores @ V");
    th_assert_validation_clean();
    vkattn_tensor_destroy(tqt), vkattn_tensor_destroy(tkt), vkattn_tensor_destroy(tvt);
    vkattn_tensor_destroy(ts), vkattn_tensor_destroy(to);
    free(q), free(k), free(v), free(s), free(o), free(got_o), free(got_s);
}

static void test_bad_arguments(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const vkattn_result INVALID = VKATTN_ERROR_INVALID_ARGUMENT;
    vkattn_additive_params p = {.batch = 1, .tq = 3, .tv = 4, .dim = 5, .has_scale_vector = true};
    vkattn_tensor *q = th_tensor(ctx, 15, NULL), *k = th_tensor(ctx, 20, NULL);
    vkattn_tensor *s = th_tensor(ctx, 5, NULL), *out = th_tensor(ctx, 12, NULL);
    vkattn_additive_io io = {.q = q, .k = k, .scale = s, .scores = out};
    TH_OK(ctx, vkattn_additive_record(ctx, VKATTN_RUN_NOW, &p, &io));

    assert_int_equal(vkattn_additive_record(NULL, VKATTN_RUN_NOW, &p, &io), INVALID);
    th_expect_error(ctx, vkattn_additive_record(ctx, VK_NULL_HANDLE, &p, &io), INVALID, "cmd is NULL");
    th_expect_error(ctx, vkattn_additive_record(ctx, VKATTN_RUN_NOW, NULL, &io), INVALID, "params is NULL");
    th_expect_error(ctx, vkattn_additive_record(ctx, VKATTN_RUN_NOW, &p, NULL), INVALID, "io is NULL");
    const char *names[4] = {"batch is 0", "tq is 0", "tv is 0", "dim is 0"};
    for (int i = 0; i < 4; i++) {
        vkattn_additive_params z = p;
        uint32_t *fields[4] = {&z.batch, &z.tq, &z.tv, &z.dim};
        *fields[i] = 0;
        th_expect_error(ctx, vkattn_additive_record(ctx, VKATTN_RUN_NOW, &z, &io), INVALID, names[i]);
    }
    vkattn_additive_params f = p;
    f.inner_scale = NAN;
    th_expect_error(ctx, vkattn_additive_record(ctx, VKATTN_RUN_NOW, &f, &io), INVALID, "inner_scale");
    f.inner_scale = 1.0f, f.outer_scale = INFINITY;
    th_expect_error(ctx, vkattn_additive_record(ctx, VKATTN_RUN_NOW, &f, &io), INVALID, "outer_scale");

    vkattn_additive_params big = p;
    big.tv = 5; /* k would need 25 elements, scores 15 */
    th_expect_error(ctx, vkattn_additive_record(ctx, VKATTN_RUN_NOW, &big, &io), INVALID, "io->k");
    big = p, big.batch = 2;
    th_expect_error(ctx, vkattn_additive_record(ctx, VKATTN_RUN_NOW, &big, &io), INVALID, "io->q");
    big = p, big.dim = 6; /* the scale vector is too short too, q first */
    th_expect_error(ctx, vkattn_additive_record(ctx, VKATTN_RUN_NOW, &big, &io), INVALID, "io->q");

    vkattn_additive_io bad = io;
    bad.scale = NULL;
    th_expect_error(ctx, vkattn_additive_record(ctx, VKATTN_RUN_NOW, &p, &bad), INVALID, "io->scale is NULL");
    vkattn_additive_params nov = p;
    nov.has_scale_vector = false;
    th_expect_error(ctx, vkattn_additive_record(ctx, VKATTN_RUN_NOW, &nov, &io), INVALID, "has_scale_vector is false");
    bad = io, bad.scores = q;
    th_expect_error(ctx, vkattn_additive_record(ctx, VKATTN_RUN_NOW, &p, &bad), INVALID, "must not be an input");
    bad = io, bad.k = NULL;
    th_expect_error(ctx, vkattn_additive_record(ctx, VKATTN_RUN_NOW, &p, &bad), INVALID, "io->k is NULL");

    vkattn_additive_params huge = {.batch = UINT32_MAX, .tq = UINT32_MAX, .tv = 1,
                                   .dim = UINT32_MAX};
    th_expect_error(ctx, vkattn_additive_record(ctx, VKATTN_RUN_NOW, &huge, &io), VKATTN_ERROR_SIZE_OVERFLOW, "overflows");
    huge = (vkattn_additive_params){.batch = 65536, .tq = 65536, .tv = 1, .dim = 1};
    th_expect_error(ctx, vkattn_additive_record(ctx, VKATTN_RUN_NOW, &huge, &io), VKATTN_ERROR_DEVICE_LIMIT, "32-bit");

    /* more batches than workgroups along z (65535 is the Vulkan minimum limit) */
    vkattn_context_info info;
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    if (info.max_workgroup_count[2] < 1000000) {
        uint32_t nb = info.max_workgroup_count[2] + 1;
        vkattn_tensor *wide = th_tensor(ctx, nb, NULL), *wide_out = th_tensor(ctx, nb, NULL);
        vkattn_additive_params many = {.batch = nb, .tq = 1, .tv = 1, .dim = 1};
        vkattn_additive_io wio = {.q = wide, .k = wide, .scores = wide_out};
        th_expect_error(ctx, vkattn_additive_record(ctx, VKATTN_RUN_NOW, &many, &wio), VKATTN_ERROR_DEVICE_LIMIT, "along z");
        vkattn_tensor_destroy(wide), vkattn_tensor_destroy(wide_out);
    }

    TH_OK(ctx, vkattn_additive_record(ctx, VKATTN_RUN_NOW, &p, &io)); /* still usable */
    vkattn_tensor_destroy(q), vkattn_tensor_destroy(k), vkattn_tensor_destroy(s);
    vkattn_tensor_destroy(out);
    th_assert_validation_clean();
}

/* One call on ctx and on bctx (small dispatch budget: split along Tq): the
 * outputs must be bit-identical and match the reference. */
static void budget_case(vkattn_context *ctx, vkattn_context *bctx, uint32_t b, uint32_t tq,
                        uint32_t tv, uint32_t dim, bool scale_vec)
{
    vkattn_additive_params p = {.batch = b, .tq = tq, .tv = tv, .dim = dim, .inner_scale = 0.8f,
                                .outer_scale = 1.3f, .has_scale_vector = scale_vec};
    size_t nq = (size_t)b * tq * dim, nk = (size_t)b * tv * dim, ns = (size_t)b * tq * tv;
    float *q = tu_floats(nq), *k = tu_floats(nk), *s = tu_floats(dim), *ref = tu_floats(ns);
    tu_fill_uniform(q, nq, -2, 2);
    tu_fill_uniform(k, nk, -2, 2);
    tu_fill_uniform(s, dim, -1.5f, 1.5f);
    TH_OK(ctx, vkattn_reference_additive(&p, NULL, q, k, scale_vec ? s : NULL, ref));
    float *got[2];
    vkattn_context *ctxs[2] = {ctx, bctx};
    for (int i = 0; i < 2; i++) {
        vkattn_tensor *tq_ = th_tensor(ctxs[i], nq, q), *tk = th_tensor(ctxs[i], nk, k);
        vkattn_tensor *ts = scale_vec ? th_tensor(ctxs[i], dim, s) : NULL;
        vkattn_tensor *out = th_tensor(ctxs[i], ns, NULL);
        vkattn_additive_io io = {.q = tq_, .k = tk, .scale = ts, .scores = out};
        TH_OK(ctxs[i], vkattn_additive_record(ctxs[i], VKATTN_RUN_NOW, &p, &io));
        got[i] = th_download(out, ns);
        vkattn_tensor_destroy(tq_), vkattn_tensor_destroy(tk), vkattn_tensor_destroy(ts);
        vkattn_tensor_destroy(out);
    }
    char what[160];
    snprintf(what, sizeof what, "budget additive B=%u Tq=%u Tv=%u dim=%u scale_vec=%d", b, tq,
             tv, dim, scale_vec);
    TU_ASSERT_CLOSE(got[1], ref, ns, BOUND, what);
    if (memcmp(got[0], got[1], ns * sizeof(float)) != 0)
        fail_msg("%s: the split call differs from the single dispatch", what);
    th_assert_validation_clean();
    free(q), free(k), free(s), free(ref), free(got[0]), free(got[1]);
}

/* max_dispatch_work = 2^14 multiply-adds (B * Tq * Tv * dim): calls split
 * into blocks of query rows, and a single row over the budget refused. */
static void test_dispatch_budget(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    void *bstate = NULL;
    assert_int_equal(th_setup_with(&bstate, NULL, 1u << 14), 0);
    vkattn_context *bctx = bstate;
    budget_case(ctx, bctx, 2, 37, 11, 13, true);   /* 57 rows per dispatch, under one tile */
    budget_case(ctx, bctx, 1, 131, 7, 9, false);   /* 260 -> 256: one dispatch per 4 tiles */
    budget_case(ctx, bctx, 3, 5, 41, 130, false);  /* 1 row per dispatch */

    vkattn_additive_params p = {.batch = 1, .tq = 2, .tv = 200, .dim = 100};
    vkattn_tensor *q = th_tensor(bctx, 200, NULL), *k = th_tensor(bctx, 20000, NULL);
    vkattn_tensor *s = th_tensor(bctx, 400, NULL);
    vkattn_additive_io io = {.q = q, .k = k, .scores = s};
    assert_int_equal(vkattn_additive_record(bctx, VKATTN_RUN_NOW, &p, &io), VKATTN_ERROR_DEVICE_LIMIT);
    assert_non_null(strstr(vkattn_context_last_error(bctx), "max_dispatch_work"));
    vkattn_tensor_destroy(q), vkattn_tensor_destroy(k), vkattn_tensor_destroy(s);
    assert_int_equal(th_teardown(&bstate), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {TU_TESTS(
        test_fixed_shapes, test_random_shapes, test_large_magnitude, test_tanh_sweep,
        test_recorded_with_consumer, test_bad_arguments, test_dispatch_budget)};
    /* Then under the mobile-min limits (16 KiB shared memory, 128 invocations):
     * more outputs per invocation, a shorter DK. */
    return TH_RUN_WITH_MOBILE("additive", tests);
}
