/* The CPU reference of the matmul and additive-scoring gradients against
 * central finite differences of the forward, on small random shapes: every
 * input element is perturbed in turn and L = sum(dY * Y) re-evaluated in
 * double by a local double-precision forward (itself checked against
 * vkattn_reference_matmul / vkattn_reference_additive), so the difference
 * quotient is accurate to ~1e-9 and the bound below is the float rounding of
 * the reference's gradients plus margin:
 *   max|grad - fd| / max|fd| <= 1e-5 per gradient.
 * Also: broadcast operands' gradients summed over the batch, elements outside
 * a strided view left alone, and the argument checks. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vkattn/reference_backward.h"

#define FD_BOUND 1e-5
#define FD_STEP 1e-4

static double *to_double(const float *x, size_t n)
{
    double *d = tu_alloc(n * sizeof *d);
    for (size_t i = 0; i < n; i++)
        d[i] = x[i];
    return d;
}

/* max|got - want| / max|want| over the elements `mask` marks (all if NULL). */
static double rel_err(const float *got, const double *want, const unsigned char *mask, size_t n)
{
    double num = 0, den = 1e-30;
    for (size_t i = 0; i < n; i++) {
        if (mask && !mask[i])
            continue;
        double e = fabs((double)got[i] - want[i]);
        if (!TU_WITHIN(e, num))
            num = e; /* NaN propagates */
        if (fabs(want[i]) > den)
            den = fabs(want[i]);
    }
    return num / den;
}

/* ---------------------------------------------------------------- matmul */

typedef struct mm_case {
    vkattn_matmul_params p;
    size_t na, nb, nc; /* extents of the stored arrays */
    size_t ast[3], bst[3], cst[3]; /* resolved batch, head, row strides */
} mm_case;

static size_t idx(const size_t *st, bool tr, size_t b, size_t h, size_t r, size_t c)
{
    return tr ? b * st[0] + h * st[1] + c * st[2] + r : b * st[0] + h * st[1] + r * st[2] + c;
}

/* L = sum over outputs of w * C, in double. */
static double mm_loss(const mm_case *mc, const double *a, const double *b, const double *bias,
                      const float *w)
{
    const vkattn_matmul_params *p = &mc->p;
    const double alpha = p->alpha != 0.0f ? p->alpha : 1.0;
    const size_t B = p->batch ? p->batch : 1, H = p->heads ? p->heads : 1;
    double l = 0;
    for (size_t bi = 0; bi < B; bi++)
        for (size_t hi = 0; hi < H; hi++)
            for (size_t i = 0; i < p->m; i++)
                for (size_t n = 0; n < p->n; n++) {
                    double c = 0;
                    for (size_t kk = 0; kk < p->k; kk++)
                        c += a[idx(mc->ast, p->transpose_a, bi, hi, i, kk)] *
                             b[idx(mc->bst, p->transpose_b, bi, hi, kk, n)];
                    c = alpha * c + (p->has_bias ? bias[n] : 0.0);
                    l += w[idx(mc->cst, false, bi, hi, i, n)] * c;
                }
    return l;
}

/* d L / d x[e] for every element of x, by central differences. */
static void fd_grad(const mm_case *mc, double *a, double *b, double *bias, const float *w,
                    double *x, size_t n, double *out)
{
    for (size_t e = 0; e < n; e++) {
        const double x0 = x[e];
        x[e] = x0 + FD_STEP;
        const double lp = mm_loss(mc, a, b, bias, w);
        x[e] = x0 - FD_STEP;
        const double lm = mm_loss(mc, a, b, bias, w);
        x[e] = x0;
        out[e] = (lp - lm) / (2 * FD_STEP);
    }
}

/* Which stored elements a matrix (b, h) reaches. */
static unsigned char *reached(const mm_case *mc, const size_t *st, bool tr, size_t rows,
                              size_t cols, size_t n)
{
    unsigned char *m = calloc(n, 1);
    const size_t B = mc->p.batch ? mc->p.batch : 1, H = mc->p.heads ? mc->p.heads : 1;
    for (size_t b = 0; b < B; b++)
        for (size_t h = 0; h < H; h++)
            for (size_t r = 0; r < rows; r++)
                for (size_t c = 0; c < cols; c++)
                    m[idx(st, tr, b, h, r, c)] = 1;
    return m;
}

/* A random case: operands broadcast over batch or heads at random, A with a
 * padded row stride at random (its padding must stay untouched). */
static mm_case mm_random(void)
{
    mm_case mc = {0};
    vkattn_matmul_params *p = &mc.p;
    p->batch = tu_rand_range(1, 3), p->heads = tu_rand_range(1, 2);
    p->m = tu_rand_range(1, 5), p->n = tu_rand_range(1, 5), p->k = tu_rand_range(1, 5);
    p->transpose_a = tu_rand_range(0, 1), p->transpose_b = tu_rand_range(0, 1);
    p->has_bias = tu_rand_range(0, 1);
    p->alpha = tu_rand_range(0, 1) ? tu_rand_float(-2, 2) : 0.0f;
    const size_t ar = p->transpose_a ? p->k : p->m, ac = p->transpose_a ? p->m : p->k;
    const size_t br = p->transpose_b ? p->n : p->k, bc = p->transpose_b ? p->k : p->n;
    const size_t lda = ac + tu_rand_range(0, 2);
    const bool a_bb = tu_rand_range(0, 2) == 0, a_bh = tu_rand_range(0, 2) == 0;
    const bool b_bb = tu_rand_range(0, 1) == 0, b_bh = tu_rand_range(0, 2) == 0;
    mc.ast[2] = lda, mc.ast[1] = a_bh ? 0 : ar * lda;
    mc.ast[0] = a_bb ? 0 : (a_bh ? 1 : p->heads) * ar * lda;
    mc.bst[2] = bc, mc.bst[1] = b_bh ? 0 : br * bc;
    mc.bst[0] = b_bb ? 0 : (b_bh ? 1 : p->heads) * br * bc;
    mc.cst[2] = p->n, mc.cst[1] = (size_t)p->m * p->n, mc.cst[0] = p->heads * mc.cst[1];
    p->a = (vkattn_matrix_layout){mc.ast[0], mc.ast[1], (uint32_t)lda};
    p->b = (vkattn_matrix_layout){mc.bst[0], mc.bst[1], 0};
    mc.na = (a_bb ? 1 : p->batch) * (a_bh ? 1 : p->heads) * ar * lda;
    mc.nb = (b_bb ? 1 : p->batch) * (b_bh ? 1 : p->heads) * br * bc;
    mc.nc = (size_t)p->batch * p->heads * p->m * p->n;
    return mc;
}

static void matmul_vs_finite_differences(void **state)
{
    (void)state;
    for (int it = 0; it < 40; it++) {
        mm_case mc = mm_random();
        const vkattn_matmul_params *p = &mc.p;
        float *a = tu_floats(mc.na), *b = tu_floats(mc.nb), *bias = tu_floats(p->n);
        float *w = tu_floats(mc.nc), *c = tu_floats(mc.nc);
        tu_fill_uniform(a, mc.na, -1, 1);
        tu_fill_uniform(b, mc.nb, -1, 1);
        tu_fill_uniform(bias, p->n, -1, 1);
        tu_fill_uniform(w, mc.nc, -1, 1);
        double *ad = to_double(a, mc.na), *bd = to_double(b, mc.nb), *biasd = to_double(bias, p->n);

        /* the local double forward is the reference forward */
        assert_int_equal(vkattn_reference_matmul(p, NULL, a, b, p->has_bias ? bias : NULL, c),
                         VKATTN_SUCCESS);
        double lc = 0;
        for (size_t i = 0; i < mc.nc; i++)
            lc += (double)w[i] * c[i];
        const double ld = mm_loss(&mc, ad, bd, biasd, w);
        assert_true(fabs(lc - ld) <= 1e-5 * (1 + fabs(ld)));

        float *ga = tu_floats(mc.na), *gb = tu_floats(mc.nb), *gbias = tu_floats(p->n);
        const float sentinel = 12345.0f;
        for (size_t i = 0; i < mc.na; i++)
            ga[i] = sentinel;
        tu_poison(gb, mc.nb);
        tu_poison(gbias, p->n);
        assert_int_equal(vkattn_reference_matmul_backward(p, a, b, w, ga, gb,
                                                          p->has_bias ? gbias : NULL),
                         VKATTN_SUCCESS);
        double *fa = tu_alloc(mc.na * sizeof *fa), *fb = tu_alloc(mc.nb * sizeof *fb);
        double *fbias = tu_alloc(p->n * sizeof *fbias);
        fd_grad(&mc, ad, bd, biasd, w, ad, mc.na, fa);
        fd_grad(&mc, ad, bd, biasd, w, bd, mc.nb, fb);
        fd_grad(&mc, ad, bd, biasd, w, biasd, p->n, fbias);
        const size_t ar = p->transpose_a ? p->k : p->m, ac = p->transpose_a ? p->m : p->k;
        unsigned char *in_a = reached(&mc, mc.ast, false, ar, ac, mc.na);
        char what[200];
        snprintf(what, sizeof what, "B=%u H=%u m=%u n=%u k=%u ta=%d tb=%d bias=%d alpha=%g",
                 p->batch, p->heads, p->m, p->n, p->k, p->transpose_a, p->transpose_b,
                 p->has_bias, (double)p->alpha);
        double ea = rel_err(ga, fa, in_a, mc.na), eb = rel_err(gb, fb, NULL, mc.nb);
        if (!TU_WITHIN(ea, FD_BOUND) || !TU_WITHIN(eb, FD_BOUND))
            fail_msg("%s: dA err %.3g, dB err %.3g > %.1g", what, ea, eb, FD_BOUND);
        for (size_t i = 0; i < mc.na; i++)
            if (!in_a[i] && ga[i] != sentinel)
                fail_msg("%s: grad_a[%zu] outside the view was written", what, i);
        if (p->has_bias && !TU_WITHIN(rel_err(gbias, fbias, NULL, p->n), FD_BOUND))
            fail_msg("%s: dBias err %.3g", what, rel_err(gbias, fbias, NULL, p->n));
        free(a), free(b), free(bias), free(w), free(c), free(ad), free(bd), free(biasd);
        free(ga), free(gb), free(gbias), free(fa), free(fb), free(fbias), free(in_a);
    }
}

/* Each gradient alone gives the same values as all three together. */
static void matmul_optional_gradients(void **state)
{
    (void)state;
    vkattn_matmul_params p = {.batch = 2, .m = 3, .n = 4, .k = 5, .has_bias = true,
                              .a = {.batch_stride = 15}, .b = {.batch_stride = 20}};
    float a[30], b[40], w[24], ga[30], gb[40], gbias[4], ga1[30], gb1[40], gbias1[4];
    tu_fill_uniform(a, 30, -1, 1), tu_fill_uniform(b, 40, -1, 1), tu_fill_uniform(w, 24, -1, 1);
    assert_int_equal(vkattn_reference_matmul_backward(&p, a, b, w, ga, gb, gbias), VKATTN_SUCCESS);
    assert_int_equal(vkattn_reference_matmul_backward(&p, NULL, b, w, ga1, NULL, NULL), VKATTN_SUCCESS);
    assert_int_equal(vkattn_reference_matmul_backward(&p, a, NULL, w, NULL, gb1, NULL), VKATTN_SUCCESS);
    assert_int_equal(vkattn_reference_matmul_backward(&p, NULL, NULL, w, NULL, NULL, gbias1),
                     VKATTN_SUCCESS);
    assert_memory_equal(ga, ga1, sizeof ga);
    assert_memory_equal(gb, gb1, sizeof gb);
    assert_memory_equal(gbias, gbias1, sizeof gbias);
}

static void matmul_bad_arguments(void **state)
{
    (void)state;
    vkattn_matmul_params p = {.m = 2, .n = 2, .k = 2};
    float a[4] = {0}, b[4] = {0}, w[4] = {0}, g[4], g2[4];
    assert_int_equal(vkattn_reference_matmul_backward(NULL, a, b, w, g, NULL, NULL),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_reference_matmul_backward(&p, a, b, NULL, g, NULL, NULL),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_reference_matmul_backward(&p, a, NULL, w, g, NULL, NULL),
                     VKATTN_ERROR_INVALID_ARGUMENT); /* grad_a needs b */
    assert_int_equal(vkattn_reference_matmul_backward(&p, NULL, b, w, NULL, g, NULL),
                     VKATTN_ERROR_INVALID_ARGUMENT); /* grad_b needs a */
    assert_int_equal(vkattn_reference_matmul_backward(&p, a, b, w, NULL, NULL, g),
                     VKATTN_ERROR_INVALID_ARGUMENT); /* no bias in the forward */
    assert_int_equal(vkattn_reference_matmul_backward(&p, a, b, w, a, NULL, NULL),
                     VKATTN_ERROR_INVALID_ARGUMENT); /* aliases an input */
    assert_int_equal(vkattn_reference_matmul_backward(&p, a, b, w, g, g, NULL),
                     VKATTN_ERROR_INVALID_ARGUMENT); /* two gradients in one array */
    assert_non_null(strstr(vkattn_last_error(), "vkattn_reference_matmul_backward"));
    p.m = 0;
    assert_int_equal(vkattn_reference_matmul_backward(&p, a, b, w, g, g2, NULL),
                     VKATTN_ERROR_INVALID_ARGUMENT);
}

/* ---------------------------------------------------------------- additive */

static double add_loss(const vkattn_additive_params *p, const double *q, const double *k,
                       const double *s, const float *w)
{
    const double inner = p->inner_scale != 0.0f ? p->inner_scale : 1.0;
    const double outer = p->outer_scale != 0.0f ? p->outer_scale : 1.0;
    double l = 0;
    for (size_t b = 0; b < p->batch; b++)
        for (size_t i = 0; i < p->tq; i++)
            for (size_t j = 0; j < p->tv; j++) {
                double sc = 0;
                for (size_t d = 0; d < p->dim; d++)
                    sc += (p->has_scale_vector ? s[d] : 1.0) *
                          tanh(inner * (q[(b * p->tq + i) * p->dim + d] +
                                        k[(b * p->tv + j) * p->dim + d]));
                l += w[(b * p->tq + i) * p->tv + j] * outer * sc;
            }
    return l;
}

static void add_fd(const vkattn_additive_params *p, double *q, double *k, double *s,
                   const float *w, double *x, size_t n, double *out)
{
    for (size_t e = 0; e < n; e++) {
        const double x0 = x[e];
        x[e] = x0 + FD_STEP;
        const double lp = add_loss(p, q, k, s, w);
        x[e] = x0 - FD_STEP;
        const double lm = add_loss(p, q, k, s, w);
        x[e] = x0;
        out[e] = (lp - lm) / (2 * FD_STEP);
    }
}

static void additive_vs_finite_differences(void **state)
{
    (void)state;
    for (int it = 0; it < 30; it++) {
        vkattn_additive_params p = {
            .batch = tu_rand_range(1, 3), .tq = tu_rand_range(1, 5), .tv = tu_rand_range(1, 5),
            .dim = tu_rand_range(1, 6), .has_scale_vector = tu_rand_range(0, 1),
            .inner_scale = tu_rand_range(0, 1) ? tu_rand_float(0.2f, 2) : 0.0f,
            .outer_scale = tu_rand_range(0, 1) ? tu_rand_float(-2, 2) : 0.0f,
        };
        const size_t nq = (size_t)p.batch * p.tq * p.dim, nk = (size_t)p.batch * p.tv * p.dim;
        const size_t ns = (size_t)p.batch * p.tq * p.tv;
        float *q = tu_floats(nq), *k = tu_floats(nk), *s = tu_floats(p.dim), *w = tu_floats(ns);
        float *sc = tu_floats(ns);
        tu_fill_uniform(q, nq, -2, 2), tu_fill_uniform(k, nk, -2, 2);
        tu_fill_uniform(s, p.dim, -1, 1), tu_fill_uniform(w, ns, -1, 1);
        double *qd = to_double(q, nq), *kd = to_double(k, nk), *sd = to_double(s, p.dim);
        const float *sv = p.has_scale_vector ? s : NULL;
        assert_int_equal(vkattn_reference_additive(&p, NULL, q, k, sv, sc), VKATTN_SUCCESS);
        double lc = 0;
        for (size_t i = 0; i < ns; i++)
            lc += (double)w[i] * sc[i];
        const double ld = add_loss(&p, qd, kd, sd, w);
        assert_true(fabs(lc - ld) <= 1e-5 * (1 + fabs(ld)));

        float *gq = tu_floats(nq), *gk = tu_floats(nk), *gs = tu_floats(p.dim);
        tu_poison(gq, nq), tu_poison(gk, nk), tu_poison(gs, p.dim);
        assert_int_equal(vkattn_reference_additive_backward(&p, q, k, sv, w, gq, gk,
                                                            p.has_scale_vector ? gs : NULL),
                         VKATTN_SUCCESS);
        double *fq = tu_alloc(nq * sizeof *fq), *fk = tu_alloc(nk * sizeof *fk);
        double *fs = tu_alloc(p.dim * sizeof *fs);
        add_fd(&p, qd, kd, sd, w, qd, nq, fq);
        add_fd(&p, qd, kd, sd, w, kd, nk, fk);
        add_fd(&p, qd, kd, sd, w, sd, p.dim, fs);
        double eq = rel_err(gq, fq, NULL, nq), ek = rel_err(gk, fk, NULL, nk);
        double es = p.has_scale_vector ? rel_err(gs, fs, NULL, p.dim) : 0.0;
        if (!TU_WITHIN(eq, FD_BOUND) || !TU_WITHIN(ek, FD_BOUND) || !TU_WITHIN(es, FD_BOUND))
            fail_msg("B=%u tq=%u tv=%u dim=%u scale=%d: dq %.3g dk %.3g ds %.3g > %.1g", p.batch,
                     p.tq, p.tv, p.dim, p.has_scale_vector, eq, ek, es, FD_BOUND);
        free(q), free(k), free(s), free(w), free(sc), free(qd), free(kd), free(sd);
        free(gq), free(gk), free(gs), free(fq), free(fk), free(fs);
    }
}

static void additive_bad_arguments(void **state)
{
    (void)state;
    vkattn_additive_params p = {.batch = 1, .tq = 2, .tv = 2, .dim = 2};
    float q[4] = {0}, k[4] = {0}, w[4] = {0}, g[4], s[2] = {1, 1}, gs[2];
    assert_int_equal(vkattn_reference_additive_backward(&p, q, k, NULL, w, g, NULL, NULL),
                     VKATTN_SUCCESS);
    assert_int_equal(vkattn_reference_additive_backward(&p, q, k, NULL, NULL, g, NULL, NULL),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_reference_additive_backward(&p, q, k, NULL, w, NULL, NULL, gs),
                     VKATTN_ERROR_INVALID_ARGUMENT); /* grad_scale without a scale vector */
    assert_int_equal(vkattn_reference_additive_backward(&p, q, k, NULL, w, q, NULL, NULL),
                     VKATTN_ERROR_INVALID_ARGUMENT); /* aliases an input */
    assert_int_equal(vkattn_reference_additive_backward(&p, q, k, NULL, w, g, g, NULL),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    p.has_scale_vector = true;
    assert_int_equal(vkattn_reference_additive_backward(&p, q, k, NULL, w, g, NULL, NULL),
                     VKATTN_ERROR_INVALID_ARGUMENT); /* scale vector missing */
    assert_int_equal(vkattn_reference_additive_backward(&p, q, k, s, w, NULL, NULL, s),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    p.dim = 0;
    assert_int_equal(vkattn_reference_additive_backward(&p, q, k, s, w, g, NULL, NULL),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "vkattn_reference_additive_backward"));
}

int main(void)
{
    tu_seed();
    const struct CMUnitTest tests[] = {TU_TESTS(
        matmul_vs_finite_differences, matmul_optional_gradients, matmul_bad_arguments,
        additive_vs_finite_differences, additive_bad_arguments)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
