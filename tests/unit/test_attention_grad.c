/* CPU reference of the attention gradients (vkattn/reference_backward.h)
 * against central finite differences of the forward references, on small
 * random shapes with masks, causal alignments, masked rows, grouped K/V heads
 * and training-mode dropout (its mask is fixed by the seed, so the loss stays
 * a smooth function of the inputs). The loss is L = sum(G * y) for a random G;
 * a gradient element passes when |analytic - numeric| <= 2e-3 * max|analytic|
 * + 1e-4 (the forward returns f32, so the difference quotient carries about
 * 1e-5 of rounding at the step used). */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vkattn/reference_backward.h"

#define FD_STEP 1e-2f

static double dot_g(const float *g, const float *y, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += (double)g[i] * (double)y[i];
    return s;
}

static void expect_close(const char *what, const float *analytic, const double *numeric,
                         size_t n)
{
    double top = 0.0;
    for (size_t i = 0; i < n; i++)
        top = fmax(top, fabs((double)analytic[i]));
    for (size_t i = 0; i < n; i++)
        if (!TU_WITHIN(fabs((double)analytic[i] - numeric[i]), 2e-3 * top + 1e-4))
            fail_msg("%s[%zu]: analytic %.7g, numeric %.7g (max |grad| %.3g)", what, i,
                     (double)analytic[i], numeric[i], top);
}

/* ---------------------------------------------------------------- softmax */

typedef struct softmax_case {
    vkattn_softmax_params p;
    float *scores, *bias, *vmask, *mask, *g, *y;
    size_t n;
} softmax_case;

static double softmax_loss(softmax_case *c)
{
    assert_int_equal(vkattn_reference_softmax(&c->p, NULL, c->scores, c->bias, c->vmask, c->mask, c->y),
                     VKATTN_SUCCESS);
    return dot_g(c->g, c->y, c->n);
}

static void softmax_grad_matches_differences(void **state)
{
    (void)state;
    for (int variant = 0; variant < 4; variant++) {
        softmax_case c = {.p = {.batch = 2, .heads = 2, .tq = 4, .tv = 5, .scale = 0.7f}};
        vkattn_mask_params *m = &c.p.mask;
        m->causal = (vkattn_causal)(variant % 3);
        m->masked_row = variant & 1 ? VKATTN_MASKED_ROW_UNIFORM : VKATTN_MASKED_ROW_ZERO;
        m->has_value_mask = variant >= 2;
        m->has_mask = variant != 1;
        m->mask_broadcast.heads = true;
        m->has_bias = true;
        m->bias_broadcast.rows = true;
        if (variant == 3)
            c.p.tq = 7; /* bottom-right with Tq > Tv: the first rows see no key */
        c.n = (size_t)c.p.batch * c.p.heads * c.p.tq * c.p.tv;
        c.scores = tu_floats(c.n), c.g = tu_floats(c.n), c.y = tu_floats(c.n);
        c.bias = tu_floats(c.n), c.vmask = tu_floats(c.n), c.mask = tu_floats(c.n);
        tu_fill_uniform(c.scores, c.n, -2, 2);
        tu_fill_uniform(c.g, c.n, -1, 1);
        tu_fill_uniform(c.bias, c.n, -1, 1);
        tu_fill_mask(c.vmask, c.n, 0.7f);
        tu_fill_mask(c.mask, c.n, 0.7f);
        if (m->has_value_mask) /* batch 1 sees nothing: whole masked rows */
            memset(c.vmask + c.p.tv, 0, c.p.tv * sizeof(float));
        float *w = tu_floats(c.n), *grad = tu_floats(c.n);
        double *num = tu_alloc(c.n * sizeof(double));
        assert_int_equal(vkattn_reference_softmax(&c.p, NULL, c.scores, c.bias, c.vmask, c.mask, w),
                         VKATTN_SUCCESS);
        tu_poison(grad, c.n);
        assert_int_equal(vkattn_reference_softmax_backward(&c.p, w, c.g, c.bias,
                                                           m->has_value_mask ? c.vmask : NULL,
                                                           m->has_mask ? c.mask : NULL, grad),
                         VKATTN_SUCCESS);
        float *vmask = c.vmask, *mask = c.mask; /* freed at the end, used or not */
        if (!m->has_value_mask)
            c.vmask = NULL;
        if (!m->has_mask)
            c.mask = NULL;
        for (size_t i = 0; i < c.n; i++) {
            const float x = c.scores[i];
            c.scores[i] = x + FD_STEP;
            const double up = softmax_loss(&c);
            c.scores[i] = x - FD_STEP;
            const double down = softmax_loss(&c);
            c.scores[i] = x;
            num[i] = (up - down) / (2.0 * FD_STEP);
        }
        expect_close("grad_scores", grad, num, c.n);
        /* fully masked rows and masked keys: exactly 0 */
        for (size_t i = 0; i < c.n; i++)
            if (w[i] == 0.0f)
                assert_true(grad[i] == 0.0f);
        free(num), free(w), free(grad);
        free(c.scores), free(c.g), free(c.y), free(c.bias), free(vmask), free(mask);
    }
}

/* ---------------------------------------------------------------- sdpa */

typedef struct sdpa_case {
    vkattn_sdpa_params p;
    float *q, *k, *v, *bias, *vmask, *mask, *g, *y;
    size_t nq, nk, nv, no;
} sdpa_case;

static double sdpa_loss(sdpa_case *c)
{
    assert_int_equal(vkattn_reference_sdpa(&c->p, NULL, c->q, c->k, c->v, c->bias, c->vmask, c->mask,
                                           c->y, NULL),
                     VKATTN_SUCCESS);
    return dot_g(c->g, c->y, c->no);
}

static void differences(sdpa_case *c, float *x, size_t n, double *num)
{
    for (size_t i = 0; i < n; i++) {
        const float x0 = x[i];
        x[i] = x0 + FD_STEP;
        const double up = sdpa_loss(c);
        x[i] = x0 - FD_STEP;
        const double down = sdpa_loss(c);
        x[i] = x0;
        num[i] = (up - down) / (2.0 * FD_STEP);
    }
}

static void check_sdpa_case(sdpa_case *c)
{
    const vkattn_sdpa_params *p = &c->p;
    const uint32_t hkv = p->kv_heads ? p->kv_heads : p->heads;
    c->nq = (size_t)p->batch * p->heads * p->tq * p->dk;
    c->nk = (size_t)p->batch * hkv * p->tv * p->dk;
    c->nv = (size_t)p->batch * hkv * p->tv * p->dv;
    c->no = (size_t)p->batch * p->heads * p->tq * p->dv;
    const size_t nw = (size_t)p->batch * p->heads * p->tq * p->tv;
    c->q = tu_floats(c->nq), c->k = tu_floats(c->nk), c->v = tu_floats(c->nv);
    c->g = tu_floats(c->no), c->y = tu_floats(c->no);
    tu_fill_uniform(c->q, c->nq, -1.5f, 1.5f);
    tu_fill_uniform(c->k, c->nk, -1.5f, 1.5f);
    tu_fill_uniform(c->v, c->nv, -1, 1);
    tu_fill_uniform(c->g, c->no, -1, 1);
    c->bias = p->mask.has_bias ? tu_floats(nw) : NULL;
    c->mask = p->mask.has_mask ? tu_floats(nw) : NULL;
    c->vmask = p->mask.has_value_mask ? tu_floats((size_t)p->batch * p->tv) : NULL;
    if (c->bias)
        tu_fill_uniform(c->bias, nw, -1, 1);
    if (c->mask)
        tu_fill_mask(c->mask, nw, 0.7f);
    if (c->vmask) {
        tu_fill_mask(c->vmask, (size_t)p->batch * p->tv, 0.7f);
        memset(c->vmask, 0, p->tv * sizeof(float)); /* batch 0: all rows masked */
    }
    float *dq = tu_floats(c->nq), *dk = tu_floats(c->nk), *dv = tu_floats(c->nv);
    tu_poison(dq, c->nq), tu_poison(dk, c->nk), tu_poison(dv, c->nv);
    assert_int_equal(vkattn_reference_sdpa_backward(p, c->q, c->k, c->v, c->bias, c->vmask,
                                                    c->mask, c->g, dq, dk, dv),
                     VKATTN_SUCCESS);
    size_t most = c->nq > c->nk ? c->nq : c->nk;
    most = most > c->nv ? most : c->nv;
    double *num = tu_alloc(most * sizeof(double));
    differences(c, c->q, c->nq, num);
    expect_close("grad_q", dq, num, c->nq);
    differences(c, c->k, c->nk, num);
    expect_close("grad_k", dk, num, c->nk);
    differences(c, c->v, c->nv, num);
    expect_close("grad_v", dv, num, c->nv);
    free(num), free(dq), free(dk), free(dv);
    free(c->q), free(c->k), free(c->v), free(c->g), free(c->y);
    if (c->bias)
        free(c->bias);
    if (c->mask)
        free(c->mask);
    if (c->vmask)
        free(c->vmask);
}

static void sdpa_grad_gqa_causal(void **state)
{
    (void)state;
    sdpa_case c = {.p = {.batch = 2, .heads = 4, .kv_heads = 2, .tq = 4, .tv = 6, .dk = 3,
                         .dv = 5, .mask = {.causal = VKATTN_CAUSAL_TOP_LEFT}}};
    check_sdpa_case(&c);
}

static void sdpa_grad_masked_rows_uniform(void **state)
{
    (void)state;
    /* bottom-right with Tq > Tv: rows 0..2 see nothing; batch 0 all masked */
    sdpa_case c = {.p = {.batch = 2, .heads = 2, .kv_heads = 1, .tq = 5, .tv = 3, .dk = 4,
                         .dv = 2, .scale = 0.8f,
                         .mask = {.causal = VKATTN_CAUSAL_BOTTOM_RIGHT,
                                  .masked_row = VKATTN_MASKED_ROW_UNIFORM,
                                  .has_value_mask = true}}};
    check_sdpa_case(&c);
    c.p.mask.masked_row = VKATTN_MASKED_ROW_ZERO;
    check_sdpa_case(&c);
}

static void sdpa_grad_dropout_bias_mask(void **state)
{
    (void)state;
    sdpa_case c = {.p = {.batch = 1, .heads = 3, .tq = 5, .tv = 7, .dk = 2, .dv = 3,
                         .mask = {.has_bias = true, .has_mask = true,
                                  .masked_row = VKATTN_MASKED_ROW_UNIFORM},
                         .dropout = {.rate = 0.3f, .training = true, .seed = 77, .offset = 5}}};
    check_sdpa_case(&c);
}

/* Soft-capping: the gradient through c * tanh(s / c) (a small cap, so the
 * scores reach the bend), with bias, masks, GQA and a fully masked batch. */
static void sdpa_grad_softcap(void **state)
{
    (void)state;
    sdpa_case c = {.p = {.batch = 2, .heads = 4, .kv_heads = 2, .tq = 3, .tv = 5, .dk = 3,
                         .dv = 2, .softcap = 0.7f,
                         .mask = {.has_bias = true, .has_value_mask = true,
                                  .causal = VKATTN_CAUSAL_BOTTOM_RIGHT},
                         .dropout = {.rate = 0.25f, .training = true, .seed = 9}}};
    check_sdpa_case(&c);
}

static void bad_arguments(void **state)
{
    (void)state;
    float x[64] = {0};
    vkattn_sdpa_params p = {.batch = 1, .tq = 2, .tv = 2, .dk = 2};
    assert_int_equal(vkattn_reference_sdpa_backward(&p, x, x, x, NULL, NULL, NULL, x, x, x, NULL),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    p.mask.has_bias = true; /* bias missing */
    assert_int_equal(vkattn_reference_sdpa_backward(&p, x, x, x, NULL, NULL, NULL, x, x, x, x),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    p.mask.has_bias = false;
    p.heads = 3, p.kv_heads = 2;
    assert_int_equal(vkattn_reference_sdpa_backward(&p, x, x, x, NULL, NULL, NULL, x, x, x, x),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    p.heads = 2, p.kv_heads = 1;
    p.softcap = -1.0f;
    assert_int_equal(vkattn_reference_sdpa_backward(&p, x, x, x, NULL, NULL, NULL, x, x, x, x),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "softcap"));
    p.softcap = NAN;
    assert_int_equal(vkattn_reference_sdpa(&p, NULL, x, x, x, NULL, NULL, NULL, x, NULL),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    p.softcap = 0.0f;
    /* the op references have no sinks operand: the layer references do */
    p.has_sinks = true;
    assert_int_equal(vkattn_reference_sdpa_backward(&p, x, x, x, NULL, NULL, NULL, x, x, x, x),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "has_sinks"));
    assert_int_equal(vkattn_reference_sdpa(&p, NULL, x, x, x, NULL, NULL, NULL, x, NULL),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "vkattn_reference_mha"));
    vkattn_softmax_params sp = {.batch = 1, .tq = 0, .tv = 2};
    assert_int_equal(vkattn_reference_softmax_backward(&sp, x, x, NULL, NULL, NULL, x),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    sp.tq = 1;
    assert_int_equal(vkattn_reference_softmax_backward(&sp, x, NULL, NULL, NULL, NULL, x),
                     VKATTN_ERROR_INVALID_ARGUMENT);
}

int main(void)
{
    tu_seed();
    const struct CMUnitTest tests[] = {TU_TESTS(
        softmax_grad_matches_differences, sdpa_grad_gqa_causal, sdpa_grad_masked_rows_uniform,
        sdpa_grad_dropout_bias_mask, sdpa_grad_softcap, bad_arguments)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
