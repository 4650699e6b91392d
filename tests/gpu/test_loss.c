/* MSE loss vs the CPU reference (double) on odd sizes: the loss within 1e-5
 * relative, the gradient within 1e-6 relative (of its largest element), with
 * and without a loss scale and a gradient output; the loss is the same bits
 * on a second run (deterministic reduction); bad arguments refused.
 *
 * 16-bit rows (test_16bit): f16 or bf16 pred, target and grad, alone or mixed
 * with f32 (the loss stays f32). The reference takes the inputs as stored, so
 * the loss keeps its bound and a 16-bit gradient adds its one rounding:
 * |got - ref| <= E + th_store_err(type, |ref| + E), E = GRAD_BOUND max|ref|
 * (one f16 spacing, half a bf16 spacing, at the f32 result's magnitude). */
#include "harness.h"
#include "op_table.h" /* th_dtype_name */

#include <vkattn/reference_backward.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOSS_BOUND 1e-5
#define GRAD_BOUND 1e-6

/* The operands' types: pred, target, grad. */
typedef struct mse_types {
    vkattn_dtype p, t, g;
} mse_types;
#define F32_TYPES ((mse_types){VKATTN_DTYPE_F32, VKATTN_DTYPE_F32, VKATTN_DTYPE_F32})

/* got vs ref per element: E = GRAD_BOUND * max|ref|, plus the rounding into t */
static void check_grad(const char *what, const float *got, const float *ref, size_t n,
                       vkattn_dtype t)
{
    double max_ref = 0.0;
    for (size_t i = 0; i < n; i++)
        max_ref = fmax(max_ref, fabs(ref[i]));
    const double e = GRAD_BOUND * max_ref;
    for (size_t i = 0; i < n; i++) {
        const double bound = e + th_store_err(t, fabs(ref[i]) + e);
        if (!TU_WITHIN(fabs((double)got[i] - ref[i]), bound))
            fail_msg("%s: element %zu is %.9g, the reference %.9g (bound %.3g)", what, i,
                     (double)got[i], (double)ref[i], bound);
    }
}

static void check(vkattn_context *ctx, uint32_t n, float scale, bool with_grad, mse_types ty)
{
    float *pred = tu_floats(n), *target = tu_floats(n), *ref_g = tu_floats(n), ref_loss;
    tu_fill_uniform(pred, n, -2, 2);
    tu_fill_uniform(target, n, -1, 3);
    th_round_to(pred, n, ty.p); /* what the tensors hold */
    th_round_to(target, n, ty.t);
    const vkattn_mse_params p = {.count = n, .loss_scale = scale};
    TH_OK(NULL, vkattn_reference_mse(&p, pred, target, &ref_loss, ref_g));
    vkattn_tensor *tp = th_typed_tensor(ctx, n, ty.p, pred);
    vkattn_tensor *tt = th_typed_tensor(ctx, n, ty.t, target);
    vkattn_tensor *tl = th_tensor(ctx, 1, NULL);
    vkattn_tensor *tg = with_grad ? th_typed_tensor(ctx, n, ty.g, NULL) : NULL;
    const vkattn_mse_io io = {.pred = tp, .target = tt, .loss = tl, .grad = tg};
    TH_OK(ctx, vkattn_mse_record(ctx, VKATTN_RUN_NOW, &p, &io));
    float *loss = th_download(tl, 1);
    char what[160];
    snprintf(what, sizeof what, "mse n=%u scale=%g pred=%s target=%s grad=%s: loss", n,
             (double)scale, th_dtype_name(ty.p), th_dtype_name(ty.t), th_dtype_name(ty.g));
    TU_ASSERT_CLOSE(loss, &ref_loss, 1, LOSS_BOUND, what);
    if (tg) {
        float *g = th_download(tg, n);
        snprintf(what, sizeof what, "mse n=%u scale=%g pred=%s target=%s grad=%s: gradient",
                 n, (double)scale, th_dtype_name(ty.p), th_dtype_name(ty.t),
                 th_dtype_name(ty.g));
        check_grad(what, g, ref_g, n, ty.g);
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
        check(ctx, sizes[i], 0.0f, true, F32_TYPES);
    for (int c = 0; c < 6; c++)
        check(ctx, tu_rand_range(1, 40000), c % 2 ? 1024.0f : 0.5f, c % 3 != 0, F32_TYPES);
}

/* Per 16-bit type: all three operands of it, and mixed with f32. */
static void test_16bit(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const vkattn_dtype types[2] = {VKATTN_DTYPE_F16, VKATTN_DTYPE_BF16};
    const vkattn_dtype f32 = VKATTN_DTYPE_F32;
    for (int k = 0; k < 2; k++) {
        const vkattn_dtype t = types[k];
        check(ctx, 1, 0.0f, true, (mse_types){t, t, t});
        check(ctx, 129, 0.5f, true, (mse_types){t, t, t});
        check(ctx, tu_rand_range(130, 5000), 0.0f, true, (mse_types){t, f32, t});
        check(ctx, tu_rand_range(1, 300), 4.0f, true, (mse_types){f32, t, f32});
        check(ctx, tu_rand_range(1, 300), 0.0f, false, (mse_types){t, t, t});
    }
}

/* pred == target: zero loss, zero gradient (one tensor bound twice as input;
 * 16-bit: one staged copy read twice), per type. */
static void test_same_tensor(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const vkattn_dtype types[3] = {VKATTN_DTYPE_F32, VKATTN_DTYPE_F16, VKATTN_DTYPE_BF16};
    for (int k = 0; k < 3; k++) {
        float x[37];
        tu_fill_uniform(x, 37, -1, 1);
        vkattn_tensor *t = th_typed_tensor(ctx, 37, types[k], x), *l = th_tensor(ctx, 1, NULL),
                      *g = th_typed_tensor(ctx, 37, types[k], NULL);
        const vkattn_mse_params p = {.count = 37};
        const vkattn_mse_io io = {.pred = t, .target = t, .loss = l, .grad = g};
        TH_OK(ctx, vkattn_mse_record(ctx, VKATTN_RUN_NOW, &p, &io));
        float *loss = th_download(l, 1), *grad = th_download(g, 37);
        if (loss[0] != 0.0f)
            fail_msg("%s: loss %g of a tensor against itself", th_dtype_name(types[k]),
                     (double)loss[0]);
        for (int i = 0; i < 37; i++)
            if (grad[i] != 0.0f)
                fail_msg("%s: gradient element %d is %g", th_dtype_name(types[k]), i,
                         (double)grad[i]);
        th_assert_validation_clean();
        vkattn_tensor_destroy(t), vkattn_tensor_destroy(l), vkattn_tensor_destroy(g);
        free(loss), free(grad);
    }
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
        test_matches_reference, test_16bit, test_same_tensor, test_bad_arguments)};
    return cmocka_run_group_tests(tests, th_setup, th_teardown);
}
