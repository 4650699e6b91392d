/* Additive-scoring gradients (dq, dk, ds) vs the CPU reference: fixed and
 * random shapes (batch 1, Tq = 1, Tv = 1, Tq != Tv, dim 1, odd sizes), with and
 * without the scale vector, inner/outer scales != 1 and negative,
 * large-magnitude inputs (|q + k| up to 100, where 1 - tanh^2 underflows),
 * each gradient omitted at random, a watchdog-budget split that must be
 * bit-identical, two runs bit-identical (no atomics), and bad arguments.
 * Fresh random inputs every run; gradients poisoned with NaN first.
 *
 * Bound, max|got - ref| against the double reference, relative to the largest
 * sum of term magnitudes the gradient adds up (not to max|ref|: with a few
 * terms of both signs, say Tv = 9 and an inner scale near 0, the sum cancels
 * to far below its terms, and fp32 rounding of the terms is all that remains).
 * A dq or dk term is dS * (1 - tanh^2); its scale here is |dS| * (1 + tanh^2),
 * which bounds it and does not vanish where the reference's 1 - tanh^2
 * underflows to 0 (|q + k| large); a ds term's is |dS * tanh|. 1e-5 for dq and
 * dk (sums of Tv or Tq <= 100 terms, each within a few ulp), 2e-5 for ds (a
 * sum over B * Tq * Tv terms). f16 (test_f16): any tensor f16, inputs rounded
 * to f16 before the reference, an f16 gradient's bound plus its one rounding,
 * 2^-11 of |ref| <= 2^-11 of its term magnitudes. bf16 (test_bf16) the same
 * way, its one rounding half a bf16 spacing (8 significand bits): 2^-8 of
 * |ref|. */
#include "harness.h"

#include <vkattn/additive_backward.h>
#include <vkattn/reference_backward.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOUND_QK 1e-5
#define BOUND_S 2e-5

static double worst_qk, worst_s;

/* The element types of q, k, scale, dS, dq, dk, ds in the next run (zero:
 * f32); test_f16 and test_bf16 set them. */
enum { T_Q, T_K, T_S, T_DS, T_GQ, T_GK, T_GS, N_T };
static vkattn_dtype types[N_T];

/* A 16-bit gradient's one rounding: 2^-11 (f16), 2^-8 (bf16) of |ref| <=
 * that of its terms. */
static double rounding(int t)
{
    return types[t] == VKATTN_DTYPE_F16 ? 0x1p-11 : types[t] == VKATTN_DTYPE_BF16 ? 0x1p-8 : 0.0;
}

/* x[i] cut to bf16 (its top half), in place: a value a bf16 tensor holds. */
static void cut_bf16(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &x[i], sizeof u);
        u &= 0xffff0000u;
        memcpy(&x[i], &u, sizeof u);
    }
}

typedef struct grads {
    float *q, *k, *s;
} grads;

/* Runs the GPU backward on ctx; returns the gradients asked for (NULL others). */
static grads run_gpu(vkattn_context *ctx, const vkattn_additive_params *p, const float *q,
                     const float *k, const float *s, const float *ds, bool wq, bool wk, bool ws)
{
    const size_t nq = (size_t)p->batch * p->tq * p->dim, nk = (size_t)p->batch * p->tv * p->dim;
    const size_t ns = (size_t)p->batch * p->tq * p->tv;
    float *poison = tu_floats(nq > nk ? nq : nk);
    tu_poison(poison, nq > nk ? nq : nk);
    vkattn_tensor *tq = th_typed_tensor(ctx, nq, types[T_Q], q);
    vkattn_tensor *tk = th_typed_tensor(ctx, nk, types[T_K], k);
    vkattn_tensor *ts = p->has_scale_vector ? th_typed_tensor(ctx, p->dim, types[T_S], s) : NULL;
    vkattn_tensor *tds = th_typed_tensor(ctx, ns, types[T_DS], ds);
    vkattn_tensor *gq = wq ? th_typed_tensor(ctx, nq, types[T_GQ], poison) : NULL;
    vkattn_tensor *gk = wk ? th_typed_tensor(ctx, nk, types[T_GK], poison) : NULL;
    vkattn_tensor *gs = ws ? th_typed_tensor(ctx, p->dim, types[T_GS], poison) : NULL;
    vkattn_additive_backward_io io = {.q = tq, .k = tk, .scale = ts, .grad_scores = tds,
                                      .grad_q = gq, .grad_k = gk, .grad_scale = gs};
    TH_OK(ctx, vkattn_additive_backward_record(ctx, VKATTN_RUN_NOW, p, &io));
    grads g = {gq ? th_download(gq, nq) : NULL, gk ? th_download(gk, nk) : NULL,
               gs ? th_download(gs, p->dim) : NULL};
    th_assert_validation_clean();
    vkattn_tensor_destroy(tq), vkattn_tensor_destroy(tk), vkattn_tensor_destroy(ts);
    vkattn_tensor_destroy(tds), vkattn_tensor_destroy(gq), vkattn_tensor_destroy(gk);
    vkattn_tensor_destroy(gs);
    free(poison);
    return g;
}

static void free_grads(grads g) { free(g.q), free(g.k), free(g.s); }

/* Per element of each gradient, the sum of the magnitudes of the terms it
 * adds (see the bound above). */
static void term_magnitudes(const vkattn_additive_params *p, const float *q, const float *k,
                            const float *s, const float *ds, float *mq, float *mk, float *ms)
{
    const size_t B = p->batch, tq = p->tq, tv = p->tv, dim = p->dim;
    const double inner = p->inner_scale != 0.0f ? p->inner_scale : 1.0;
    const double outer = p->outer_scale != 0.0f ? p->outer_scale : 1.0;
    for (size_t d = 0; d < dim; d++) {
        const double scale = fabs(outer * inner * (p->has_scale_vector ? s[d] : 1.0));
        double sum_s = 0.0;
        for (size_t b = 0; b < B; b++)
            for (size_t i = 0; i < tq; i++)
                for (size_t j = 0; j < tv; j++) {
                    const double t = tanh(inner * ((double)q[(b * tq + i) * dim + d] +
                                                   (double)k[(b * tv + j) * dim + d]));
                    const double g = fabs((double)ds[(b * tq + i) * tv + j]);
                    const size_t iq = (b * tq + i) * dim + d, ik = (b * tv + j) * dim + d;
                    mq[iq] = (float)((j ? mq[iq] : 0.0) + scale * g * (1.0 + t * t));
                    mk[ik] = (float)((i ? mk[ik] : 0.0) + scale * g * (1.0 + t * t));
                    sum_s += g * fabs(t);
                }
        ms[d] = (float)(fabs(outer) * sum_s);
    }
}

static void check_one(const char *what, const char *grad, const float *got, const float *ref,
                      const float *terms, size_t n, double bound, double *worst)
{
    const double e = tu_max_err_vs_terms(got, ref, terms, n, 1e-30);
    if (!TU_WITHIN(e, bound))
        fail_msg("%s %s: max error %.3g of the largest sum of term magnitudes exceeds bound %.3g",
                 what, grad, e, bound);
    if (e > *worst)
        *worst = e;
}

/* One case on the GPU and the reference (on bctx too when given: a context
 * with a dispatch budget, whose split run must be bit-identical). */
static void check_case(vkattn_context *ctx, vkattn_context *bctx, const vkattn_additive_params *p,
                       float lo, float hi)
{
    const size_t nq = (size_t)p->batch * p->tq * p->dim, nk = (size_t)p->batch * p->tv * p->dim;
    const size_t ns = (size_t)p->batch * p->tq * p->tv;
    float *q = tu_floats(nq), *k = tu_floats(nk), *s = tu_floats(p->dim), *ds = tu_floats(ns);
    tu_fill_uniform(q, nq, lo, hi), tu_fill_uniform(k, nk, lo, hi);
    tu_fill_uniform(s, p->dim, -1, 1), tu_fill_uniform(ds, ns, -1, 1);
    float *const arrays[4] = {q, k, s, ds}; /* the reference takes what 16-bit tensors hold */
    const size_t counts[4] = {nq, nk, p->dim, ns};
    for (int i = 0; i < 4; i++)
        if (types[i] == VKATTN_DTYPE_F16)
            th_round_f16(arrays[i], counts[i]);
        else if (types[i] == VKATTN_DTYPE_BF16)
            cut_bf16(arrays[i], counts[i]);
    bool wq, wk, ws;
    do {
        wq = tu_rand_range(0, 3) != 0, wk = tu_rand_range(0, 3) != 0;
        ws = p->has_scale_vector && tu_rand_range(0, 3) != 0;
    } while (!wq && !wk && !ws);
    float *rq = tu_floats(nq), *rk = tu_floats(nk), *rs = tu_floats(p->dim);
    TH_OK(ctx, vkattn_reference_additive_backward(p, q, k, p->has_scale_vector ? s : NULL, ds,
                                                  wq ? rq : NULL, wk ? rk : NULL,
                                                  ws ? rs : NULL));
    float *mq = tu_floats(nq), *mk = tu_floats(nk), *ms = tu_floats(p->dim);
    term_magnitudes(p, q, k, s, ds, mq, mk, ms);
    grads g = run_gpu(ctx, p, q, k, s, ds, wq, wk, ws);
    char what[200];
    snprintf(what, sizeof what,
             "additive_backward B=%u tq=%u tv=%u dim=%u scale=%d inner=%g outer=%g in [%g,%g]",
             p->batch, p->tq, p->tv, p->dim, p->has_scale_vector, (double)p->inner_scale,
             (double)p->outer_scale, (double)lo, (double)hi);
    if (wq)
        check_one(what, "dq", g.q, rq, mq, nq, BOUND_QK + rounding(T_GQ), &worst_qk);
    if (wk)
        check_one(what, "dk", g.k, rk, mk, nk, BOUND_QK + rounding(T_GK), &worst_qk);
    if (ws)
        check_one(what, "ds", g.s, rs, ms, p->dim, BOUND_S + rounding(T_GS), &worst_s);
    grads again = run_gpu(bctx ? bctx : ctx, p, q, k, s, ds, wq, wk, ws);
    if ((wq && memcmp(g.q, again.q, nq * sizeof(float))) ||
        (wk && memcmp(g.k, again.k, nk * sizeof(float))) ||
        (ws && memcmp(g.s, again.s, p->dim * sizeof(float))))
        fail_msg("%s: a second run%s is not bit-identical", what, bctx ? " (split)" : "");
    free_grads(g), free_grads(again);
    free(q), free(k), free(s), free(ds), free(rq), free(rk), free(rs);
    free(mq), free(mk), free(ms);
}

static void report(const char *test)
{
    printf("# %s: max error / term magnitudes dq/dk %.3g (bound %.0e), ds %.3g (bound %.0e)\n",
           test, worst_qk, BOUND_QK, worst_s, BOUND_S);
    worst_qk = worst_s = 0;
}

static vkattn_additive_params random_params(uint32_t b, uint32_t tq, uint32_t tv, uint32_t dim)
{
    vkattn_additive_params p = {.batch = b, .tq = tq, .tv = tv, .dim = dim,
                                .has_scale_vector = tu_rand_range(0, 1)};
    if (tu_rand_range(0, 1))
        p.inner_scale = tu_rand_float(-2, 2), p.outer_scale = tu_rand_float(-2, 2);
    return p;
}

static void test_fixed_shapes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const uint32_t shapes[][4] = {
        {1, 1, 1, 1}, {1, 1, 9, 5}, {1, 7, 1, 3}, {2, 5, 3, 1}, {3, 17, 31, 9}, {1, 40, 64, 33},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int rep = 0; rep < 3; rep++) {
            vkattn_additive_params p = random_params(shapes[i][0], shapes[i][1], shapes[i][2],
                                                     shapes[i][3]);
            check_case(ctx, NULL, &p, -1, 1);
        }
    report("fixed shapes");
}

static void test_random_shapes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 16; i++) {
        vkattn_additive_params p = random_params(tu_rand_range(1, 3), tu_rand_range(1, 60),
                                                 tu_rand_range(1, 60), tu_rand_range(1, 40));
        check_case(ctx, NULL, &p, -1.5f, 1.5f);
    }
    report("random shapes");
}

/* 16-bit tensors of type h: each of the seven h or f32 at random (the first
 * case all h), inputs rounded to h before the reference; an h gradient's
 * bound adds its one rounding (rounding()). */
static void half_cases(vkattn_context *ctx, vkattn_dtype h)
{
    for (int i = 0; i < 10; i++) {
        for (int t = 0; t < N_T; t++)
            types[t] = i == 0 || tu_rand_range(0, 2) ? h : VKATTN_DTYPE_F32;
        vkattn_additive_params p = random_params(tu_rand_range(1, 3), tu_rand_range(1, 30),
                                                 tu_rand_range(1, 30), tu_rand_range(1, 20));
        check_case(ctx, NULL, &p, -1.5f, 1.5f);
    }
    for (int t = 0; t < N_T; t++)
        types[t] = VKATTN_DTYPE_F32;
}

static void test_f16(void **state)
{
    half_cases(TH_CTX(state), VKATTN_DTYPE_F16);
    report("f16 (an f16 gradient's bound: these + 2^-11)");
}

static void test_bf16(void **state)
{
    half_cases(TH_CTX(state), VKATTN_DTYPE_BF16);
    report("bf16 (a bf16 gradient's bound: these + 2^-8)");
}

/* |q + k| up to 100: sech^2 underflows to 0 for most pairs, tanh is +-1. */
static void test_large_magnitude(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 4; i++) {
        vkattn_additive_params p = random_params(tu_rand_range(1, 2), tu_rand_range(1, 30),
                                                 tu_rand_range(1, 30), tu_rand_range(1, 20));
        check_case(ctx, NULL, &p, -50, 50);
    }
    report("large magnitude");
}

/* max_dispatch_work = 2^12: every pass split over several dispatches. */
static void test_dispatch_budget(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    void *bstate = NULL;
    assert_int_equal(th_setup_with(&bstate, NULL, 1u << 12), 0);
    for (int i = 0; i < 3; i++) {
        vkattn_additive_params p = random_params(2, tu_rand_range(20, 40), tu_rand_range(20, 40),
                                                 tu_rand_range(5, 20));
        check_case(ctx, bstate, &p, -1, 1);
    }
    report("dispatch budget");
    assert_int_equal(th_teardown(&bstate), 0);
}

/* After *_prepare, recording the same call creates no pipeline or scratch. */
static void test_prepare(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_additive_params p = {.batch = 2, .tq = 5, .tv = 7, .dim = 3, .has_scale_vector = true};
    vkattn_tensor *q = th_tensor(ctx, 30, NULL), *k = th_tensor(ctx, 42, NULL);
    vkattn_tensor *s = th_tensor(ctx, 3, NULL), *ds = th_tensor(ctx, 70, NULL);
    vkattn_tensor *gq = th_tensor(ctx, 30, NULL), *gk = th_tensor(ctx, 42, NULL);
    vkattn_tensor *gs = th_tensor(ctx, 3, NULL);
    vkattn_additive_backward_io io = {.q = q, .k = k, .scale = s, .grad_scores = ds,
                                      .grad_q = gq, .grad_k = gk, .grad_scale = gs};
    TH_OK(ctx, vkattn_additive_backward_record(ctx, VKATTN_PREPARE, &p, &io));
    vkattn_context_stats before, after;
    TH_OK(ctx, vkattn_context_get_stats(ctx, &before));
    TH_OK(ctx, vkattn_additive_backward_record(ctx, VKATTN_RUN_NOW, &p, &io));
    TH_OK(ctx, vkattn_context_get_stats(ctx, &after));
    assert_int_equal(before.pipelines_created, after.pipelines_created);
    assert_int_equal(before.scratch_allocations, after.scratch_allocations);
    p.tv = 0;
    assert_int_equal(vkattn_additive_backward_record(ctx, VKATTN_PREPARE, &p, &io),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_context_last_error(ctx), "vkattn_additive_backward_record"));
    vkattn_tensor_destroy(q), vkattn_tensor_destroy(k), vkattn_tensor_destroy(s);
    vkattn_tensor_destroy(ds), vkattn_tensor_destroy(gq), vkattn_tensor_destroy(gk);
    vkattn_tensor_destroy(gs);
    th_assert_validation_clean();
}

static void test_bad_arguments(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    float ones[16];
    for (int i = 0; i < 16; i++)
        ones[i] = 1.0f;
    vkattn_tensor *q = th_tensor(ctx, 16, ones), *k = th_tensor(ctx, 16, ones);
    vkattn_tensor *ds = th_tensor(ctx, 16, ones), *gq = th_tensor(ctx, 16, ones);
    vkattn_tensor *gk = th_tensor(ctx, 16, ones), *s = th_tensor(ctx, 4, ones);
    vkattn_tensor *gs = th_tensor(ctx, 4, ones);
    vkattn_additive_params p = {.batch = 1, .tq = 4, .tv = 4, .dim = 4};
    vkattn_additive_backward_io io = {.q = q, .k = k, .grad_scores = ds, .grad_q = gq,
                                      .grad_k = gk};
    const vkattn_result bad = VKATTN_ERROR_INVALID_ARGUMENT;
    assert_int_equal(vkattn_additive_backward_record(ctx, VKATTN_RUN_NOW, NULL, &io), bad);
    assert_int_equal(vkattn_additive_backward_record(ctx, VKATTN_RUN_NOW, &p, NULL), bad);
    p.dim = 0;
    assert_int_equal(vkattn_additive_backward_record(ctx, VKATTN_RUN_NOW, &p, &io), bad);
    p.dim = 5; /* shape mismatch: q and k would need 20 elements */
    assert_int_equal(vkattn_additive_backward_record(ctx, VKATTN_RUN_NOW, &p, &io), bad);
    p.dim = 4, p.inner_scale = NAN;
    assert_int_equal(vkattn_additive_backward_record(ctx, VKATTN_RUN_NOW, &p, &io), bad);
    p.inner_scale = 0;
    io.grad_scale = gs; /* without a scale vector */
    assert_int_equal(vkattn_additive_backward_record(ctx, VKATTN_RUN_NOW, &p, &io), bad);
    io.grad_scale = NULL, p.has_scale_vector = true; /* scale vector missing */
    assert_int_equal(vkattn_additive_backward_record(ctx, VKATTN_RUN_NOW, &p, &io), bad);
    io.scale = s, io.grad_k = k; /* a gradient aliasing an input */
    assert_int_equal(vkattn_additive_backward_record(ctx, VKATTN_RUN_NOW, &p, &io), bad);
    assert_non_null(strstr(vkattn_context_last_error(ctx), "io->grad_k"));
    io.grad_k = gk, io.grad_scale = s;
    assert_int_equal(vkattn_additive_backward_record(ctx, VKATTN_RUN_NOW, &p, &io), bad);
    io.grad_scale = NULL, io.grad_k = gq; /* two gradients in one tensor */
    assert_int_equal(vkattn_additive_backward_record(ctx, VKATTN_RUN_NOW, &p, &io), bad);

    /* nothing recorded: a failed record leaves grad_q as it was */
    io.grad_k = ds;
    VkCommandBuffer cmd;
    TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
    assert_int_equal(vkattn_additive_backward_record(ctx, cmd, &p, &io), bad);
    TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd));
    float *got = th_download(gq, 16);
    assert_memory_equal(got, ones, sizeof ones);
    free(got);
    vkattn_additive_backward_io none = {.q = q, .k = k, .scale = s, .grad_scores = ds};
    TH_OK(ctx, vkattn_additive_backward_record(ctx, VKATTN_RUN_NOW, &p, &none));

    vkattn_tensor_destroy(q), vkattn_tensor_destroy(k), vkattn_tensor_destroy(ds);
    vkattn_tensor_destroy(gq), vkattn_tensor_destroy(gk), vkattn_tensor_destroy(s);
    vkattn_tensor_destroy(gs);
    th_assert_validation_clean();
}

int main(void)
{
    const struct CMUnitTest tests[] = {TU_TESTS(
        test_fixed_shapes, test_random_shapes, test_large_magnitude, test_f16, test_bf16, test_dispatch_budget,
        test_prepare, test_bad_arguments)};
    return cmocka_run_group_tests_name("additive_backward", tests, th_setup, th_teardown);
}
