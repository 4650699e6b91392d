/* MSE loss vs the CPU reference (double) on odd sizes: the loss within 1e-5
 * relative, the gradient within 1e-6 relative (of its largest element), with
 * and without a loss scale and a gradient output; the loss is the same bits
 * on a second run (deterministic reduction); bad arguments refused. */
#include "harness.h"

#include <vkattn/reference_backward.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOSS_BOUND 1e-5
#define GRAD_BOUND 1e-6

static void check(vkattn_context *ctx, uint32_t n, float scale, bool with_grad)
{
    float *pred = tu_floats(n), *target = tu_floats(n), *ref_g = tu_floats(n), ref_loss;
    tu_fill_uniform(pred, n, -2, 2);
    tu_fill_uniform(target, n, -1, 3);
    const vkattn_mse_params p = {.count = n, .loss_scale = scale};
    TH_OK(NULL, vkattn_reference_mse(&p, pred, target, &ref_loss, ref_g));
    vkattn_tensor *tp = th_tensor(ctx, n, pred), *tt = th_tensor(ctx, n, target);
    vkattn_tensor *tl = th_tensor(ctx, 1, NULL), *tg = with_grad ? th_tensor(ctx, n, NULL) : NULL;
    const vkattn_mse_io io = {.pred = tp, .target = tt, .loss = tl, .grad = tg};
    TH_OK(ctx, vkattn_mse_record(ctx, VKATTN_RUN_NOW, &p, &io));
    float *loss = th_download(tl, 1);
    char what[120];
    snprintf(what, sizeof what, "mse n=%u scale=%g: loss", n, (double)scale);
    TU_ASSERT_CLOSE(loss, &ref_loss, 1, LOSS_BOUND, what);
    if (tg) {
        float *g = th_download(tg, n);
        snprintf(what, sizeof what, "mse n=%u scale=%g: gradient", n, (double)scale);
        TU_ASSERT_CLOSE(g, ref_g, n, GRAD_BOUND, what);
        free(g);
    }
    /* deterministic: the same bits again */
    TH_OK(ctx, vkattn_tensor_fill(tl, NAN));
    TH_OK(ctx, vkattn_mse_record(ctx, VKATTN_RUN_NOW, &p, &io));
    float *again = th_download(tl, 1);
    assert_memory_equal(loss, again, sizeof(float));
    th_assert_validation_clean();
    vkattn_tensor_destroy(tp), vkattn_tensor_destroy(tt), vkattn_tensor_destroy(tl);
    vkattn_tensor_destroy(tg);
    free(pred), free(target), free(ref_g), free(loss), free(again);
}

static void test_matches_reference(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const uint32_t sizes[] = {1, 2, 127, 128, 129, 1000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        check(ctx, sizes[i], 0.0f, true);
    for (int c = 0; c < 6; c++)
        check(ctx, tu_rand_range(1, 40000), c % 2 ? 1024.0f : 0.5f, c % 3 != 0);
}

/* pred == target: zero loss, zero gradient (one tensor bound twice as input). */
static void test_same_tensor(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    float x[37];
    tu_fill_uniform(x, 37, -1, 1);
    vkattn_tensor *t = th_tensor(ctx, 37, x), *l = th_tensor(ctx, 1, NULL),
                  *g = th_tensor(ctx, 37, NULL);
    const vkattn_mse_params p = {.count = 37};
    const vkattn_mse_io io = {.pred = t, .target = t, .loss = l, .grad = g};
    TH_OK(ctx, vkattn_mse_record(ctx, VKATTN_RUN_NOW, &p, &io));
    float *loss = th_download(l, 1), *grad = th_download(g, 37);
    assert_true(loss[0] == 0.0f);
    for (int i = 0; i < 37; i++)
        assert_true(grad[i] == 0.0f);
    th_assert_validation_clean();
    vkattn_tensor_destroy(t), vkattn_tensor_destroy(l), vkattn_tensor_destroy(g);
    free(loss), free(grad);
}

static void test_bad_arguments(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_tensor *a = th_tensor(ctx, 10, NULL), *b = th_tensor(ctx, 9, NULL),
                  *l = th_tensor(ctx, 1, NULL), *g = th_tensor(ctx, 10, NULL);
    TH_OK(ctx, vkattn_tensor_fill(l, 7.0f));
    const vkattn_mse_params p = {.count = 10};
    const vkattn_mse_io ok = {.pred = a, .target = g, .loss = l, .grad = NULL};
    const vkattn_mse_io bad[] = {
        {.pred = a, .target = b, .loss = l},             /* target smaller than count */
        {.pred = a, .target = g, .loss = NULL},          /* no loss */
        {.pred = a, .target = g, .loss = l, .grad = a},  /* grad aliasing pred */
        {.pred = a, .target = g, .loss = l, .grad = g},  /* grad aliasing target */
        {.pred = l, .target = l, .loss = l},             /* loss aliasing the inputs */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (vkattn_mse_record(ctx, VKATTN_RUN_NOW, &p, &bad[i]) != VKATTN_ERROR_INVALID_ARGUMENT)
            fail_msg("bad io %zu accepted", i);
        assert_non_null(strstr(vkattn_last_error(), "vkattn_mse_record"));
    }
    vkattn_mse_params q = {.count = 0};
    assert_int_equal(vkattn_mse_record(ctx, VKATTN_RUN_NOW, &q, &ok), VKATTN_ERROR_INVALID_ARGUMENT);
    q = (vkattn_mse_params){.count = 10, .loss_scale = NAN};
    assert_int_equal(vkattn_mse_record(ctx, VKATTN_RUN_NOW, &q, &ok), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_mse_record(ctx, VKATTN_RUN_NOW, NULL, &ok), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_mse_record(ctx, VKATTN_RUN_NOW, &p, NULL), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_mse_record(ctx, VKATTN_PREPARE, &q, &ok), VKATTN_ERROR_INVALID_ARGUMENT);
    float *loss = th_download(l, 1);
    assert_true(loss[0] == 7.0f); /* nothing ran */
    TH_OK(ctx, vkattn_mse_record(ctx, VKATTN_PREPARE, &p, &ok));
    th_assert_validation_clean();
    vkattn_tensor_destroy(a), vkattn_tensor_destroy(b), vkattn_tensor_destroy(l);
    vkattn_tensor_destroy(g);
    free(loss);
}

int main(void)
{
    tu_seed();
    const struct CMUnitTest tests[] = {TU_TESTS(
        test_matches_reference, test_same_tensor, test_bad_arguments)};
    return cmocka_run_group_tests(tests, th_setup, th_teardown);
}
