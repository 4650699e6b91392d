/* Argument checks of the CPU reference: each bad argument gives the documented
 * code, names the function in vkattn_last_error(), and writes nothing. */
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "vkattn/reference.h"

static float in[64], out[64], aux[64];

static int setup(void **state)
{
    (void)state;
    for (int i = 0; i < 64; i++)
        in[i] = aux[i] = 1.0f;
    tu_poison(out, 64);
    return 0;
}

/* The call returned `want`, named `fn` in the last error, left out untouched. */
static void expect_fail(vkattn_result got, vkattn_result want, const char *fn)
{
    if (got != want)
        fail_msg("%s: got %s, want %s", fn, vkattn_result_name(got), vkattn_result_name(want));
    const char *msg = vkattn_last_error();
    if (!strstr(msg, fn))
        fail_msg("last error \"%s\" does not name %s", msg, fn);
    for (int i = 0; i < 64; i++)
        assert_true(isnan(out[i]));
}

#define SOFTMAX(p) vkattn_reference_softmax((p), NULL, in, aux, aux, aux, out)
static const char softmax_fn[] = "vkattn_reference_softmax";

static void softmax_args(void **state)
{
    (void)state;
    const vkattn_softmax_params ok = {.batch = 1, .heads = 2, .tq = 2, .tv = 4};
    vkattn_softmax_params p = ok;
    expect_fail(SOFTMAX(NULL), VKATTN_ERROR_INVALID_ARGUMENT, softmax_fn);
    p.tv = 0;
    expect_fail(SOFTMAX(&p), VKATTN_ERROR_INVALID_ARGUMENT, softmax_fn);
    assert_non_null(strstr(vkattn_last_error(), "tv is 0"));
    p = ok;
    p.batch = 0;
    expect_fail(SOFTMAX(&p), VKATTN_ERROR_INVALID_ARGUMENT, softmax_fn);
    p = ok;
    p.scale = NAN;
    expect_fail(SOFTMAX(&p), VKATTN_ERROR_INVALID_ARGUMENT, softmax_fn);
    p = ok;
    p.mask.causal = (vkattn_causal)7;
    expect_fail(SOFTMAX(&p), VKATTN_ERROR_INVALID_ARGUMENT, softmax_fn);
    p = ok;
    p.mask.masked_row = (vkattn_masked_row)-1;
    expect_fail(SOFTMAX(&p), VKATTN_ERROR_INVALID_ARGUMENT, softmax_fn);
    p = ok;
    p.mask.has_bias = true;
    expect_fail(vkattn_reference_softmax(&p, NULL, in, NULL, NULL, NULL, out),
                VKATTN_ERROR_INVALID_ARGUMENT, softmax_fn);
    p = ok;
    p.mask.has_value_mask = true;
    expect_fail(vkattn_reference_softmax(&p, NULL, in, NULL, NULL, NULL, out),
                VKATTN_ERROR_INVALID_ARGUMENT, softmax_fn);
    p = ok;
    p.mask.has_mask = true;
    expect_fail(vkattn_reference_softmax(&p, NULL, in, NULL, NULL, NULL, out),
                VKATTN_ERROR_INVALID_ARGUMENT, softmax_fn);
    expect_fail(vkattn_reference_softmax(&ok, NULL, NULL, NULL, NULL, NULL, out),
                VKATTN_ERROR_INVALID_ARGUMENT, softmax_fn);
    assert_int_equal(vkattn_reference_softmax(&ok, NULL, in, NULL, NULL, NULL, NULL),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    p = (vkattn_softmax_params){.batch = UINT32_MAX, .heads = UINT32_MAX, .tq = UINT32_MAX,
                                .tv = UINT32_MAX};
    expect_fail(SOFTMAX(&p), VKATTN_ERROR_SIZE_OVERFLOW, softmax_fn);
}

static const char matmul_fn[] = "vkattn_reference_matmul";

static void matmul_args(void **state)
{
    (void)state;
    const vkattn_matmul_params ok = {.m = 2, .n = 2, .k = 2};
    vkattn_matmul_params p = ok;
    expect_fail(vkattn_reference_matmul(NULL, NULL, in, in, NULL, out), VKATTN_ERROR_INVALID_ARGUMENT,
                matmul_fn);
    p.k = 0;
    expect_fail(vkattn_reference_matmul(&p, NULL, in, in, NULL, out), VKATTN_ERROR_INVALID_ARGUMENT,
                matmul_fn);
    expect_fail(vkattn_reference_matmul(&ok, NULL, NULL, in, NULL, out),
                VKATTN_ERROR_INVALID_ARGUMENT, matmul_fn);
    expect_fail(vkattn_reference_matmul(&ok, NULL, in, NULL, NULL, out),
                VKATTN_ERROR_INVALID_ARGUMENT, matmul_fn);
    p = ok;
    p.has_bias = true;
    expect_fail(vkattn_reference_matmul(&p, NULL, in, in, NULL, out), VKATTN_ERROR_INVALID_ARGUMENT,
                matmul_fn);
    p = ok;
    p.a.row_stride = 1; /* below the 2 stored columns */
    expect_fail(vkattn_reference_matmul(&p, NULL, in, in, NULL, out), VKATTN_ERROR_INVALID_ARGUMENT,
                matmul_fn);
    p = ok;
    p.alpha = INFINITY;
    expect_fail(vkattn_reference_matmul(&p, NULL, in, in, NULL, out), VKATTN_ERROR_INVALID_ARGUMENT,
                matmul_fn);
    p = ok;
    p.batch = 4;
    p.a.batch_stride = UINT64_MAX / 2;
    expect_fail(vkattn_reference_matmul(&p, NULL, in, in, NULL, out), VKATTN_ERROR_SIZE_OVERFLOW,
                matmul_fn);
    p = ok;
    p.batch = p.heads = UINT32_MAX;
    p.m = UINT32_MAX;
    expect_fail(vkattn_reference_matmul(&p, NULL, in, in, NULL, out), VKATTN_ERROR_SIZE_OVERFLOW,
                matmul_fn);
}

static const char sdpa_fn[] = "vkattn_reference_sdpa";

static vkattn_result sdpa(const vkattn_sdpa_params *p, float *weights)
{
    return vkattn_reference_sdpa(p, NULL, in, in, in, NULL, NULL, NULL, out, weights);
}

static void sdpa_args(void **state)
{
    (void)state;
    const vkattn_sdpa_params ok = {.batch = 1, .heads = 4, .tq = 2, .tv = 2, .dk = 2};
    vkattn_sdpa_params p = ok;
    expect_fail(sdpa(NULL, NULL), VKATTN_ERROR_INVALID_ARGUMENT, sdpa_fn);
    p.dk = 0;
    expect_fail(sdpa(&p, NULL), VKATTN_ERROR_INVALID_ARGUMENT, sdpa_fn);
    p = ok;
    p.kv_heads = 3; /* does not divide 4 */
    expect_fail(sdpa(&p, NULL), VKATTN_ERROR_INVALID_ARGUMENT, sdpa_fn);
    assert_non_null(strstr(vkattn_last_error(), "kv_heads"));
    p.kv_heads = 8; /* more K/V heads than query heads */
    expect_fail(sdpa(&p, NULL), VKATTN_ERROR_INVALID_ARGUMENT, sdpa_fn);
    const float bad_rates[3] = {NAN, -0.1f, 1.5f};
    for (int i = 0; i < 3; i++) {
        p = ok;
        p.dropout.rate = bad_rates[i]; /* rejected even when not training */
        expect_fail(sdpa(&p, NULL), VKATTN_ERROR_INVALID_ARGUMENT, sdpa_fn);
        p.dropout.training = true;
        expect_fail(sdpa(&p, NULL), VKATTN_ERROR_INVALID_ARGUMENT, sdpa_fn);
    }
    p = ok;
    p.return_weights = true;
    expect_fail(sdpa(&p, NULL), VKATTN_ERROR_INVALID_ARGUMENT, sdpa_fn);
    p = ok;
    p.mask.has_bias = true;
    expect_fail(sdpa(&p, NULL), VKATTN_ERROR_INVALID_ARGUMENT, sdpa_fn);
    p = ok;
    p.scale = -INFINITY;
    expect_fail(sdpa(&p, NULL), VKATTN_ERROR_INVALID_ARGUMENT, sdpa_fn);
    p = (vkattn_sdpa_params){.batch = UINT32_MAX, .heads = UINT32_MAX, .tq = UINT32_MAX,
                             .tv = 1, .dk = UINT32_MAX};
    expect_fail(sdpa(&p, NULL), VKATTN_ERROR_SIZE_OVERFLOW, sdpa_fn);
}

static void other_ops_args(void **state)
{
    (void)state;
    static const char add_fn[] = "vkattn_reference_additive";
    vkattn_additive_params ap = {.batch = 1, .tq = 1, .tv = 1, .dim = 0};
    expect_fail(vkattn_reference_additive(&ap, NULL, in, in, NULL, out), VKATTN_ERROR_INVALID_ARGUMENT,
                add_fn);
    ap.dim = 2;
    ap.has_scale_vector = true;
    expect_fail(vkattn_reference_additive(&ap, NULL, in, in, NULL, out), VKATTN_ERROR_INVALID_ARGUMENT,
                add_fn);
    ap = (vkattn_additive_params){.batch = UINT32_MAX, .tq = UINT32_MAX, .tv = 1,
                                  .dim = UINT32_MAX};
    expect_fail(vkattn_reference_additive(&ap, NULL, in, in, NULL, out), VKATTN_ERROR_SIZE_OVERFLOW,
                add_fn);

    static const char split_fn[] = "vkattn_reference_heads_split";
    vkattn_heads_params hp = {.batch = 1, .seq = 1, .heads = 0, .head_dim = 1};
    expect_fail(vkattn_reference_heads_split(&hp, NULL, in, out), VKATTN_ERROR_INVALID_ARGUMENT,
                split_fn);
    hp.heads = 1;
    expect_fail(vkattn_reference_heads_split(&hp, NULL, NULL, out), VKATTN_ERROR_INVALID_ARGUMENT,
                split_fn);
    expect_fail(vkattn_reference_heads_merge(NULL, NULL, in, out), VKATTN_ERROR_INVALID_ARGUMENT,
                "vkattn_reference_heads_merge");

    static const char drop_fn[] = "vkattn_reference_dropout";
    vkattn_dropout_op_params dp = {.batch = 1, .tq = 1, .tv = 0};
    expect_fail(vkattn_reference_dropout(&dp, NULL, in, out), VKATTN_ERROR_INVALID_ARGUMENT, drop_fn);
    dp.tv = 4;
    dp.dropout.rate = 2.0f;
    expect_fail(vkattn_reference_dropout(&dp, NULL, in, out), VKATTN_ERROR_INVALID_ARGUMENT, drop_fn);
    assert_non_null(strstr(vkattn_last_error(), "rate"));
    dp.dropout.rate = 0.5f;
    assert_int_equal(vkattn_reference_dropout_mask(&dp, NULL), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "vkattn_reference_dropout_mask"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(softmax_args, setup),
        cmocka_unit_test_setup(matmul_args, setup),
        cmocka_unit_test_setup(sdpa_args, setup),
        cmocka_unit_test_setup(other_ops_args, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
