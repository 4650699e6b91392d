/* The op and its CPU reference refuse the same bad params with the same
 * message: both start from one plan (shape/softmax_plan.h,
 * shape/dropout_plan.h, shape/sdpa_plan.h, core/matmul_shape.h), so after the function's name ("fn: ") the
 * texts must be equal, as must the codes. Each row is a params value one
 * check refuses; the op gets no tensors (the plan runs before them). */
#include "harness.h"

#include <math.h>
#include <stdio.h>

#include <vkattn/reference.h>
#include <vkattn/reference_backward.h>

/* The text after "fn: ". */
static const char *after_name(const char *msg)
{
    const char *c = strstr(msg, ": ");
    return c ? c + 2 : msg;
}

static void expect_same(const char *what, vkattn_result op, const char *op_msg,
                        vkattn_result ref, const char *ref_msg)
{
    if (op == VKATTN_SUCCESS || op != ref)
        fail_msg("%s: op gave %s, reference %s", what, vkattn_result_name(op),
                 vkattn_result_name(ref));
    if (strcmp(after_name(op_msg), after_name(ref_msg)) != 0)
        fail_msg("%s: op says \"%s\", reference \"%s\"", what, op_msg, ref_msg);
}

static float buf[64];

static void test_softmax_rows(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const vkattn_softmax_params ok = {.batch = 1, .heads = 2, .tq = 2, .tv = 4};
    vkattn_softmax_params rows[9];
    for (int i = 0; i < 9; i++)
        rows[i] = ok;
    rows[0].batch = 0, rows[1].tq = 0, rows[2].tv = 0;
    rows[3].scale = NAN, rows[4].scale = INFINITY;
    rows[5].mask.causal = (vkattn_causal)7;
    rows[6].mask.masked_row = (vkattn_masked_row)-1;
    rows[7].tq = rows[7].tv = 0x80000000u, rows[7].sliding_window = 4; /* window arithmetic */
    rows[8].batch = rows[8].heads = rows[8].tq = rows[8].tv = UINT32_MAX; /* 64-bit count */
    for (int i = -1; i < 9; i++) {
        const vkattn_softmax_params *p = i < 0 ? NULL : &rows[i];
        char what[48];
        snprintf(what, sizeof what, "softmax row %d", i);
        vkattn_result op = vkattn_softmax_record(ctx, VKATTN_RUN_NOW, p, NULL);
        vkattn_result ref = vkattn_reference_softmax(p, NULL, buf, NULL, NULL, NULL, buf);
        expect_same(what, op, vkattn_context_last_error(ctx), ref, vkattn_last_error());
        snprintf(what, sizeof what, "softmax backward row %d", i);
        op = vkattn_softmax_backward_record(ctx, VKATTN_RUN_NOW, p, NULL);
        ref = vkattn_reference_softmax_backward(p, buf, buf, NULL, NULL, NULL, buf);
        expect_same(what, op, vkattn_context_last_error(ctx), ref, vkattn_last_error());
    }
}

static void test_dropout_rows(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const vkattn_dropout_op_params ok = {.batch = 1, .heads = 2, .tq = 2, .tv = 4,
                                         .dropout = {.rate = 0.5f, .training = true}};
    vkattn_dropout_op_params rows[7];
    for (int i = 0; i < 7; i++)
        rows[i] = ok;
    rows[0].batch = 0, rows[1].tq = 0, rows[2].tv = 0;
    rows[3].dropout.rate = -0.1f, rows[4].dropout.rate = NAN;
    rows[5].dropout.rate = 2.0f, rows[5].dropout.training = false; /* checked all the same */
    rows[6].batch = rows[6].heads = rows[6].tq = rows[6].tv = UINT32_MAX;
    for (int i = -1; i < 7; i++) {
        const vkattn_dropout_op_params *p = i < 0 ? NULL : &rows[i];
        char what[48];
        snprintf(what, sizeof what, "dropout row %d", i);
        vkattn_result op = vkattn_dropout_record(ctx, VKATTN_RUN_NOW, p, NULL);
        vkattn_result ref = vkattn_reference_dropout(p, NULL, buf, buf);
        expect_same(what, op, vkattn_context_last_error(ctx), ref, vkattn_last_error());
        uint8_t keep[64];
        ref = vkattn_reference_dropout_mask(p, keep);
        expect_same(what, op, vkattn_context_last_error(ctx), ref, vkattn_last_error());
    }
}

static void test_sdpa_rows(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const vkattn_sdpa_params ok = {.batch = 1, .heads = 2, .tq = 2, .tv = 4, .dk = 4};
    vkattn_sdpa_params rows[6];
    for (int i = 0; i < 6; i++)
        rows[i] = ok;
    rows[0].dk = 0, rows[1].scale = NAN, rows[2].kv_heads = 3;
    rows[3].dropout.rate = 1.5f, rows[4].mask.causal = (vkattn_causal)9;
    rows[5].tq = rows[5].tv = 0x80000000u, rows[5].sliding_window = 4;
    for (int i = -1; i < 6; i++) {
        const vkattn_sdpa_params *p = i < 0 ? NULL : &rows[i];
        char what[48];
        snprintf(what, sizeof what, "sdpa row %d", i);
        vkattn_result op = vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, p, NULL);
        vkattn_result ref =
            vkattn_reference_sdpa(p, NULL, buf, buf, buf, NULL, NULL, NULL, buf, NULL);
        expect_same(what, op, vkattn_context_last_error(ctx), ref, vkattn_last_error());
    }
}

static void test_matmul_rows(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const vkattn_matmul_params ok = {.m = 2, .n = 2, .k = 2};
    vkattn_matmul_params rows[4] = {ok, ok, ok, ok};
    rows[0].m = 0, rows[1].k = 0, rows[2].alpha = NAN, rows[3].alpha = -INFINITY;
    for (int i = -1; i < 4; i++) {
        const vkattn_matmul_params *p = i < 0 ? NULL : &rows[i];
        char what[48];
        snprintf(what, sizeof what, "matmul row %d", i);
        vkattn_result op = vkattn_matmul_record(ctx, VKATTN_RUN_NOW, p, NULL);
        vkattn_result ref = vkattn_reference_matmul(p, NULL, buf, buf, NULL, buf);
        expect_same(what, op, vkattn_context_last_error(ctx), ref, vkattn_last_error());
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_softmax_rows),
        cmocka_unit_test(test_dropout_rows),
        cmocka_unit_test(test_sdpa_rows),
        cmocka_unit_test(test_matmul_rows),
    };
    return cmocka_run_group_tests_name("plan messages", tests, th_setup, th_teardown);
}
