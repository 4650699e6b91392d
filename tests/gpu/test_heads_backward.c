/* Backward of the head split and merge vs the CPU references, bit for bit
 * (bound 0: permutations). The split's backward followed by the merge's gives
 * back the gradient. Odd shapes (batch 1, one head, head_dim 1), fresh random
 * inputs, outputs poisoned with NaN; bad arguments (grad_in == grad_out, a
 * too-small tensor, a zero size) name the backward function. */
#include "harness.h"

#include <vkattn/reference_backward.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void assert_bits_equal(const float *got, const float *want, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(&got[i], &want[i], sizeof(float)) != 0)
            fail_msg("%s: element %zu is %.9g, expected %.9g", what, i, (double)got[i],
                     (double)want[i]);
}

static void heads_case(vkattn_context *ctx, const vkattn_heads_params *p)
{
    const size_t n = (size_t)p->batch * p->seq * p->heads * p->head_dim;
    float *g = tu_floats(n), *ref = tu_floats(n);
    tu_fill_uniform(g, n, -3, 3);
    vkattn_tensor *tg = th_tensor(ctx, n, g), *t1 = th_tensor(ctx, n, NULL),
                  *t2 = th_tensor(ctx, n, NULL);
    char what[120];
    for (int split = 0; split < 2; split++) {
        TH_OK(ctx, vkattn_tensor_fill(t1, NAN));
        const vkattn_heads_backward_io io = {.grad_out = tg, .grad_in = t1};
        if (split) {
            TH_OK(NULL, vkattn_reference_heads_merge(p, NULL, g, ref));
            TH_OK(ctx, vkattn_heads_split_backward_record(ctx, VKATTN_RUN_NOW, p, &io));
        } else {
            TH_OK(NULL, vkattn_reference_heads_split(p, NULL, g, ref));
            TH_OK(ctx, vkattn_heads_merge_backward_record(ctx, VKATTN_RUN_NOW, p, &io));
        }
        float *got = th_download(t1, n);
        snprintf(what, sizeof what, "heads %s backward B=%u T=%u H=%u d=%u",
                 split ? "split" : "merge", p->batch, p->seq, p->heads, p->head_dim);
        assert_bits_equal(got, ref, n, what);
        free(got);
    }
    /* t1 holds the split backward of g; the merge backward of that is g */
    TH_OK(ctx, vkattn_heads_merge_backward_record(ctx, VKATTN_RUN_NOW, p,
                                               &(vkattn_heads_backward_io){.grad_out = t1,
                                                                           .grad_in = t2}));
    float *back = th_download(t2, n);
    assert_bits_equal(back, g, n, "merge backward of split backward");
    th_assert_validation_clean();
    vkattn_tensor_destroy(tg), vkattn_tensor_destroy(t1), vkattn_tensor_destroy(t2);
    free(g), free(ref), free(back);
}

static void test_heads_backward(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    heads_case(ctx, &(vkattn_heads_params){1, 1, 1, 1});
    heads_case(ctx, &(vkattn_heads_params){2, 7, 3, 5});
    for (int c = 0; c < 8; c++) {
        vkattn_heads_params p = {.batch = tu_rand_range(1, 3), .seq = tu_rand_range(1, 40),
                                 .heads = tu_rand_range(1, 6), .head_dim = tu_rand_range(1, 33)};
        heads_case(ctx, &p);
    }
}

static void test_bad_arguments(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_tensor *a = th_tensor(ctx, 24, NULL), *b = th_tensor(ctx, 23, NULL);
    const vkattn_heads_params hp = {.batch = 1, .seq = 3, .heads = 2, .head_dim = 4};
    const vkattn_heads_params zero = {.batch = 1, .seq = 0, .heads = 2, .head_dim = 4};
    const struct {
        const vkattn_heads_params *p;
        vkattn_heads_backward_io io;
    } hcases[] = {{&hp, {a, a}}, {&hp, {a, b}}, {&hp, {b, a}}, {&zero, {a, b}}, {NULL, {a, b}}};
    for (size_t i = 0; i < sizeof hcases / sizeof hcases[0]; i++) {
        assert_int_equal(vkattn_heads_split_backward_record(ctx, VKATTN_RUN_NOW, hcases[i].p, &hcases[i].io),
                         VKATTN_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(vkattn_last_error(), "vkattn_heads_split_backward_record"));
        assert_int_equal(vkattn_heads_merge_backward_record(ctx, VKATTN_RUN_NOW, hcases[i].p, &hcases[i].io),
                         VKATTN_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(vkattn_last_error(), "vkattn_heads_merge_backward_record"));
    }
    assert_int_equal(vkattn_heads_split_backward_record(ctx, VKATTN_RUN_NOW, &hp, NULL),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    vkattn_tensor *c = th_tensor(ctx, 24, NULL);
    TH_OK(ctx, vkattn_heads_split_backward_record(ctx, VKATTN_PREPARE, &hp, &(vkattn_heads_backward_io){a, c}));
    TH_OK(ctx, vkattn_heads_merge_backward_record(ctx, VKATTN_PREPARE, &hp, &(vkattn_heads_backward_io){a, c}));
    th_assert_validation_clean();
    vkattn_tensor_destroy(a), vkattn_tensor_destroy(b), vkattn_tensor_destroy(c);
}

int main(void)
{
    tu_seed();
    const struct CMUnitTest tests[] = {TU_TESTS(test_heads_backward, test_bad_arguments)};
    return cmocka_run_group_tests(tests, th_setup, th_teardown);
}
