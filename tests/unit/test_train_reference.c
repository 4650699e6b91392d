/* CPU references of the training pieces: the optimizer step against PyTorch's
 * formulas worked out by hand for a few steps of one scalar; the MSE, dropout
 * and head-permutation gradients against central finite differences of their
 * forwards in double; and their argument checks (bad hyper-parameters give
 * INVALID_ARGUMENT and change nothing). */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vkattn/reference_backward.h"

/* n steps of p on one scalar parameter p0 with the constant gradient g. */
static double run_scalar(const vkattn_optim_params *p, float p0, float g, int steps)
{
    float param = p0, state[2] = {0, 0}, step[VKATTN_OPTIM_STEP_COUNT] = {0, 0, 0};
    for (int s = 0; s < steps; s++)
        assert_int_equal(vkattn_reference_optim_step(p, 1, &param, &g, state, step), 0);
    assert_true(step[0] == (float)steps);
    return param;
}

#define NEAR(got, want, tol)                                                                   \
    do {                                                                                       \
        if (!TU_WITHIN(fabs((got) - (want)), (tol)))                                       \
            fail_msg("%s = %.9g, hand-computed %.9g", #got, (double)(got), (double)(want));    \
    } while (0)

static void sgd_by_hand(void **state)
{
    (void)state;
    vkattn_optim_params p = {.algorithm = VKATTN_OPTIM_SGD, .lr = 0.1f};
    /* plain: p -= lr * g, three times */
    NEAR(run_scalar(&p, 1.0f, 0.5f, 3), 1.0 - 3 * 0.05, 1e-6);
    /* momentum 0.9, g 0.5: b = 0.5, 0.95, 1.355; p = 0.95, 0.855, 0.7195 */
    p.momentum = 0.9f;
    NEAR(run_scalar(&p, 1.0f, 0.5f, 1), 0.95, 1e-6);
    NEAR(run_scalar(&p, 1.0f, 0.5f, 3), 0.7195, 1e-6);
    /* Nesterov: g + mu b = 0.95, 1.355; p = 0.905, 0.7695 */
    p.nesterov = true;
    NEAR(run_scalar(&p, 1.0f, 0.5f, 2), 0.7695, 1e-6);
    /* dampening 0.5 (no Nesterov): b = 0.5, 0.45 + 0.25 = 0.7; p = 0.95, 0.88 */
    p.nesterov = false, p.dampening = 0.5f;
    NEAR(run_scalar(&p, 1.0f, 0.5f, 2), 0.88, 1e-6);
    /* weight decay 0.1, no momentum: g = 0.5 + 0.1 p; p = 0.94, 0.8806 */
    p = (vkattn_optim_params){.algorithm = VKATTN_OPTIM_SGD, .lr = 0.1f, .weight_decay = 0.1f};
    NEAR(run_scalar(&p, 1.0f, 0.5f, 2), 0.8806, 1e-6);
}

static void adam_by_hand(void **state)
{
    (void)state;
    /* With a constant gradient and eps 0 the bias-corrected m / sqrt(v) is
     * sign(g) exactly, so Adam moves by lr per step. */
    vkattn_optim_params p = {.algorithm = VKATTN_OPTIM_ADAM, .lr = 0.1f, .beta1 = 0.9f,
                             .beta2 = 0.999f};
    NEAR(run_scalar(&p, 1.0f, 0.5f, 3), 0.7, 1e-6);
    NEAR(run_scalar(&p, 1.0f, -2.0f, 4), 1.4, 1e-6);
    /* AdamW, weight decay 0.1: p = p (1 - 0.01) - 0.1: 0.89, 0.7811, 0.673289 */
    p.algorithm = VKATTN_OPTIM_ADAMW, p.weight_decay = 0.1f;
    NEAR(run_scalar(&p, 1.0f, 0.5f, 3), 0.673289, 1e-6);
    /* Adam with L2 0.1: g = 0.5 + 0.1 p changes each step.
     * t=1: g 0.6, m 0.06, v 3.6e-4, p 0.9
     * t=2: g 0.59, m 0.113, v 7.0774e-4, p = 0.9 - 0.1 (0.113 / 0.19) /
     *      sqrt(7.0774e-4 / 0.001999) = 0.800047337
     * t=3: g 0.58000473, m 0.1597004734, v 1.04343775e-3, p 0.700174570 */
    p.algorithm = VKATTN_OPTIM_ADAM;
    NEAR(run_scalar(&p, 1.0f, 0.5f, 2), 0.8000473371, 2e-7);
    NEAR(run_scalar(&p, 1.0f, 0.5f, 3), 0.7001745698, 2e-7);
    /* eps dominates a tiny v: the step is lr * m_hat / eps */
    p = (vkattn_optim_params){.algorithm = VKATTN_OPTIM_ADAM, .lr = 0.1f, .beta1 = 0.5f,
                              .beta2 = 0.5f, .eps = 1.0f};
    /* t=1: m_hat = g = 1e-3, sqrt(v_hat) = 1e-3; p = 1 - 0.1 * 1e-3 / 1.001 */
    NEAR(run_scalar(&p, 1.0f, 1e-3f, 1), 1.0 - 0.1 * 1e-3 / 1.001, 1e-7);
}

static void optim_bad_params(void **state)
{
    (void)state;
    float param = 1.0f, g = 1.0f, st[2] = {0, 0}, step[3] = {0, 0, 0};
    const vkattn_optim_params adam = {.algorithm = VKATTN_OPTIM_ADAM, .lr = 0.1f,
                                      .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f};
    vkattn_optim_params bad[8];
    for (int i = 0; i < 8; i++)
        bad[i] = adam;
    bad[0].lr = -0.1f;
    bad[1].beta1 = 1.0f;
    bad[2].beta2 = -0.1f;
    bad[3].eps = -1.0f;
    bad[4].weight_decay = NAN;
    bad[5].algorithm = (vkattn_optim_algorithm)7;
    bad[6] = (vkattn_optim_params){.algorithm = VKATTN_OPTIM_SGD, .lr = 1, .nesterov = true};
    bad[7] = (vkattn_optim_params){.algorithm = VKATTN_OPTIM_SGD, .lr = 1, .momentum = -1};
    for (int i = 0; i < 8; i++) {
        assert_int_equal(vkattn_reference_optim_step(&bad[i], 1, &param, &g, st, step),
                         VKATTN_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(vkattn_last_error(), "vkattn_reference_optim_step"));
    }
    assert_true(param == 1.0f && step[0] == 0.0f && st[0] == 0.0f);
    assert_int_equal(vkattn_reference_optim_step(&adam, 1, &param, &g, NULL, step),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_reference_optim_step(&adam, 0, &param, &g, st, step),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    assert_true(param == 1.0f && step[0] == 0.0f);
}

/* sum w[i] * y[i] in double: the scalar loss whose gradient w.r.t. y is w. */
static double dot(const float *w, const float *y, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (double)w[i] * y[i];
    return s;
}

static double mse_value(const float *pred, const float *target, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += ((double)pred[i] - target[i]) * ((double)pred[i] - target[i]);
    return s / n;
}

/* Central differences of mse (h 1e-2: the loss is quadratic, so the
 * difference quotient is exact up to f32 rounding of the perturbed input). */
static void mse_vs_finite_differences(void **state)
{
    (void)state;
    tu_seed();
    for (int c = 0; c < 6; c++) {
        const uint32_t n = tu_rand_range(1, 97);
        float *pred = tu_floats(n), *target = tu_floats(n), *grad = tu_floats(n);
        tu_fill_uniform(pred, n, -2, 2);
        tu_fill_uniform(target, n, -2, 2);
        const float scale = c % 2 ? 8.0f : 0.0f;
        vkattn_mse_params p = {.count = n, .loss_scale = scale};
        float loss;
        assert_int_equal(vkattn_reference_mse(&p, pred, target, &loss, grad), 0);
        if (!TU_WITHIN(fabs(loss - mse_value(pred, target, n)), 1e-6 * fabs(loss) + 1e-30))
            fail_msg("mse %.9g vs %.9g", (double)loss, mse_value(pred, target, n));
        float *fd = tu_floats(n);
        for (uint32_t i = 0; i < n; i++) {
            const float x = pred[i], h = 1e-2f;
            pred[i] = x + h;
            const double up = mse_value(pred, target, n);
            pred[i] = x - h;
            const double down = mse_value(pred, target, n);
            pred[i] = x;
            fd[i] = (float)((up - down) / ((double)(x + h) - (double)(x - h)) *
                            (scale != 0.0f ? scale : 1.0f));
        }
        TU_ASSERT_CLOSE(grad, fd, n, 1e-4, "mse gradient vs central differences");
        free(pred), free(target), free(grad), free(fd);
    }
}

/* dropout is linear in its input: L = w . dropout(x) has dL/dx = backward(w). */
static void dropout_vs_finite_differences(void **state)
{
    (void)state;
    for (int c = 0; c < 4; c++) {
        vkattn_dropout_op_params p = {
            .batch = tu_rand_range(1, 2), .heads = tu_rand_range(1, 3),
            .tq = tu_rand_range(1, 5), .tv = tu_rand_range(1, 9),
            .dropout = {.rate = c == 3 ? 0.0f : 0.4f, .training = true,
                        .seed = tu_rand_u32(), .offset = c},
        };
        const size_t n = (size_t)p.batch * p.heads * p.tq * p.tv;
        float *x = tu_floats(n), *w = tu_floats(n), *y = tu_floats(n), *g = tu_floats(n),
              *fd = tu_floats(n);
        tu_fill_uniform(x, n, -1, 1);
        tu_fill_uniform(w, n, -1, 1);
        assert_int_equal(vkattn_reference_dropout(&p, NULL, w, g), 0);
        for (size_t i = 0; i < n; i++) {
            const float xi = x[i], h = 0.25f; /* exact in f32 around |x| <= 1 */
            x[i] = xi + h;
            assert_int_equal(vkattn_reference_dropout(&p, NULL, x, y), 0);
            const double up = dot(w, y, n);
            x[i] = xi - h;
            assert_int_equal(vkattn_reference_dropout(&p, NULL, x, y), 0);
            const double down = dot(w, y, n);
            x[i] = xi;
            fd[i] = (float)((up - down) / (2.0 * h));
        }
        TU_ASSERT_CLOSE(g, fd, n, 1e-5, "dropout gradient vs central differences");
        /* the gradient passes exactly where the forward keeps */
        uint8_t *keep = tu_alloc(n);
        assert_int_equal(vkattn_reference_dropout_mask(&p, keep), 0);
        for (size_t i = 0; i < n; i++)
            assert_true((g[i] != 0.0f) == (keep[i] != 0) || w[i] == 0.0f);
        free(x), free(w), free(y), free(g), free(fd), free(keep);
    }
}

static void heads_vs_finite_differences(void **state)
{
    (void)state;
    for (int c = 0; c < 4; c++) {
        vkattn_heads_params p = {.batch = tu_rand_range(1, 2), .seq = tu_rand_range(1, 5),
                                 .heads = tu_rand_range(1, 3), .head_dim = tu_rand_range(1, 4)};
        const size_t n = (size_t)p.batch * p.seq * p.heads * p.head_dim;
        float *x = tu_floats(n), *w = tu_floats(n), *y = tu_floats(n), *g = tu_floats(n),
              *fd = tu_floats(n);
        tu_fill_uniform(x, n, -1, 1);
        tu_fill_uniform(w, n, -1, 1);
        for (int split = 0; split < 2; split++) {
            assert_int_equal(split ? vkattn_reference_heads_merge(&p, NULL, w, g)
                                   : vkattn_reference_heads_split(&p, NULL, w, g),
                             0);
            for (size_t i = 0; i < n; i++) {
                const float xi = x[i], h = 0.25f;
                x[i] = xi + h;
                assert_int_equal(split ? vkattn_reference_heads_split(&p, NULL, x, y)
                                       : vkattn_reference_heads_merge(&p, NULL, x, y),
                                 0);
                const double up = dot(w, y, n);
                x[i] = xi - h;
                assert_int_equal(split ? vkattn_reference_heads_split(&p, NULL, x, y)
                                       : vkattn_reference_heads_merge(&p, NULL, x, y),
                                 0);
                const double down = dot(w, y, n);
                x[i] = xi;
                fd[i] = (float)((up - down) / (2.0 * h));
            }
            TU_ASSERT_CLOSE(g, fd, n, 1e-6,
                            split ? "split backward vs differences"
                                  : "merge backward vs differences");
        }
        assert_int_equal(vkattn_reference_heads_merge(&p, NULL, w, w),
                         VKATTN_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(vkattn_last_error(), "vkattn_reference_heads_merge"));
        free(x), free(w), free(y), free(g), free(fd);
    }
}

static void mse_bad_params(void **state)
{
    (void)state;
    float a[2] = {1, 2}, loss = NAN;
    vkattn_mse_params p = {.count = 0};
    assert_int_equal(vkattn_reference_mse(&p, a, a, &loss, NULL), VKATTN_ERROR_INVALID_ARGUMENT);
    p = (vkattn_mse_params){.count = 2, .loss_scale = INFINITY};
    assert_int_equal(vkattn_reference_mse(&p, a, a, &loss, NULL), VKATTN_ERROR_INVALID_ARGUMENT);
    p.loss_scale = 0;
    assert_int_equal(vkattn_reference_mse(&p, a, NULL, &loss, NULL),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    assert_true(isnan(loss));
    assert_int_equal(vkattn_reference_mse(&p, a, a, &loss, NULL), 0);
    assert_true(loss == 0.0f);
}

TU_MAIN(NULL, NULL,
    sgd_by_hand, adam_by_hand, optim_bad_params, mse_vs_finite_differences,
    dropout_vs_finite_differences, heads_vs_finite_differences, mse_bad_params)
