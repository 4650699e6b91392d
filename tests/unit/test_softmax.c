/* CPU reference of the masked softmax: known vectors, both causal anchors,
 * broadcasting, fully masked rows under both policies, extreme logits, NaN
 * isolation and in-place use. */
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "vkattn/reference.h"

static void expect_near(const float *got, const double *want, size_t n, double tol)
{
    for (size_t i = 0; i < n; i++)
        if (!TU_WITHIN(fabs((double)got[i] - want[i]), tol))
            fail_msg("element %zu: got %.9g, want %.9g", i, (double)got[i], want[i]);
}

#define TOL 1e-7
#define LN3 1.0986122886681098

static void known_vector(void **state)
{
    (void)state;
    const float s[3] = {1, 2, 3}, s2[3] = {2, 4, 6};
    float out[3];
    const double want[3] = {0.09003057317038046, 0.24472847105479767, 0.6652409557748219};
    vkattn_softmax_params p = {.batch = 1, .tq = 1, .tv = 3};
    assert_int_equal(vkattn_reference_softmax(&p, NULL, s, NULL, NULL, NULL, out), VKATTN_SUCCESS);
    expect_near(out, want, 3, TOL);
    p.scale = 0.5f; /* the scale multiplies the scores first */
    assert_int_equal(vkattn_reference_softmax(&p, NULL, s2, NULL, NULL, NULL, out), VKATTN_SUCCESS);
    expect_near(out, want, 3, TOL);
}

/* Zero scores: each row is uniform over what the causal mask allows. */
static void run_causal(vkattn_causal c, vkattn_masked_row policy, uint32_t tq, uint32_t tv,
                       const double *want)
{
    float s[12] = {0}, out[12];
    vkattn_softmax_params p = {.batch = 1, .tq = tq, .tv = tv,
                               .mask = {.causal = c, .masked_row = policy}};
    assert_int_equal(vkattn_reference_softmax(&p, NULL, s, NULL, NULL, NULL, out), VKATTN_SUCCESS);
    expect_near(out, want, (size_t)tq * tv, TOL);
}

static void causal_top_left(void **state)
{
    (void)state;
    const double wide[6] = {1, 0, 0, 0.5, 0.5, 0};            /* Tq 2, Tv 3 */
    run_causal(VKATTN_CAUSAL_TOP_LEFT, VKATTN_MASKED_ROW_ZERO, 2, 3, wide);
    const double tall[6] = {1, 0, 0.5, 0.5, 0.5, 0.5};         /* Tq 3, Tv 2 */
    run_causal(VKATTN_CAUSAL_TOP_LEFT, VKATTN_MASKED_ROW_ZERO, 3, 2, tall);
}

static void causal_bottom_right(void **state)
{
    (void)state;
    const double wide[6] = {0.5, 0.5, 0, 1 / 3.0, 1 / 3.0, 1 / 3.0}; /* j <= i + 1 */
    run_causal(VKATTN_CAUSAL_BOTTOM_RIGHT, VKATTN_MASKED_ROW_ZERO, 2, 3, wide);
    /* Tq 3 > Tv 2: j <= i - 1, so row 0 sees nothing */
    const double tall_zero[6] = {0, 0, 1, 0, 0.5, 0.5};
    run_causal(VKATTN_CAUSAL_BOTTOM_RIGHT, VKATTN_MASKED_ROW_ZERO, 3, 2, tall_zero);
    const double tall_uniform[6] = {0.5, 0.5, 1, 0, 0.5, 0.5};
    run_causal(VKATTN_CAUSAL_BOTTOM_RIGHT, VKATTN_MASKED_ROW_UNIFORM, 3, 2, tall_uniform);
    /* decoding, Tq 1: sees everything */
    const double decode[3] = {1 / 3.0, 1 / 3.0, 1 / 3.0};
    run_causal(VKATTN_CAUSAL_BOTTOM_RIGHT, VKATTN_MASKED_ROW_ZERO, 1, 3, decode);
}

/* bias stored (1, 1, Tq, Tv), mask stored (B, H, 1, Tv), value_mask (B, Tv). */
static void broadcasting(void **state)
{
    (void)state;
    enum { B = 2, H = 2, TQ = 2, TV = 3, N = B * H * TQ * TV };
    float s[N] = {0}, out[N];
    const float bias[TQ * TV] = {0, (float)LN3, 0, (float)LN3, 0, 0};
    float mask[B * H * TV];
    for (int i = 0; i < B * H * TV; i++)
        mask[i] = 1;
    mask[(1 * H + 0) * TV + 1] = 0; /* b 1, h 0: key 1 masked in every row */
    const float vmask[B * TV] = {1, 1, 1, 1, 1, 0}; /* b 1: key 2 masked */
    vkattn_softmax_params p = {
        .batch = B, .heads = H, .tq = TQ, .tv = TV,
        .mask = {.has_bias = true, .bias_broadcast = {.batch = true, .heads = true},
                 .has_mask = true, .mask_broadcast = {.rows = true},
                 .has_value_mask = true}};
    assert_int_equal(vkattn_reference_softmax(&p, NULL, s, bias, vmask, mask, out), VKATTN_SUCCESS);
    /* bias row 0 weighs key 1 by 3, row 1 key 0 by 3 */
    const double want[N] = {
        0.2, 0.6, 0.2, 0.6, 0.2, 0.2,   /* b0 h0 */
        0.2, 0.6, 0.2, 0.6, 0.2, 0.2,   /* b0 h1 */
        1, 0, 0, 1, 0, 0,               /* b1 h0: keys 1 and 2 masked */
        0.25, 0.75, 0, 0.75, 0.25, 0,   /* b1 h1: key 2 masked */
    };
    expect_near(out, want, N, TOL);
}

/* Row 1 is fully masked by an explicit mask; row 0 is not. */
static void fully_masked_row_policies(void **state)
{
    (void)state;
    const float s[6] = {1, 2, 3, 4, 5, 6}, mask[6] = {1, 0, 1, 0, 0, 0};
    float out[6];
    vkattn_softmax_params p = {.batch = 1, .tq = 2, .tv = 3, .mask = {.has_mask = true}};
    const double e = exp(2.0);
    assert_int_equal(vkattn_reference_softmax(&p, NULL, s, NULL, NULL, mask, out), VKATTN_SUCCESS);
    const double want_zero[6] = {1 / (1 + e), 0, e / (1 + e), 0, 0, 0};
    expect_near(out, want_zero, 6, TOL);
    p.mask.masked_row = VKATTN_MASKED_ROW_UNIFORM;
    assert_int_equal(vkattn_reference_softmax(&p, NULL, s, NULL, NULL, mask, out), VKATTN_SUCCESS);
    const double want_uniform[6] = {1 / (1 + e), 0, e / (1 + e), 1 / 3.0, 1 / 3.0, 1 / 3.0};
    expect_near(out, want_uniform, 6, TOL);
    assert_true(out[1] == 0.0f); /* masked entries of other rows stay exactly 0 */
}

/* A -inf bias on every allowed key is a fully masked row, not 0/0. */
static void minus_inf_bias_row(void **state)
{
    (void)state;
    const float s[4] = {0}, bias[4] = {-INFINITY, -INFINITY, -INFINITY, 0};
    float out[4];
    vkattn_softmax_params p = {.batch = 1, .tq = 2, .tv = 2, .mask = {.has_bias = true}};
    assert_int_equal(vkattn_reference_softmax(&p, NULL, s, bias, NULL, NULL, out), VKATTN_SUCCESS);
    const double want[4] = {0, 0, 0, 1};
    expect_near(out, want, 4, 0.0);
    p.mask.masked_row = VKATTN_MASKED_ROW_UNIFORM;
    assert_int_equal(vkattn_reference_softmax(&p, NULL, s, bias, NULL, NULL, out), VKATTN_SUCCESS);
    const double want_u[4] = {0.5, 0.5, 0, 1};
    expect_near(out, want_u, 4, 0.0);
}

static void extreme_logits(void **state)
{
    (void)state;
    const float s[6] = {3e38f, -3e38f, 3e38f, -3e38f, -3e38f, -3e38f};
    float out[6];
    vkattn_softmax_params p = {.batch = 1, .tq = 2, .tv = 3, .scale = 4.0f}; /* 1.2e39 */
    assert_int_equal(vkattn_reference_softmax(&p, NULL, s, NULL, NULL, NULL, out), VKATTN_SUCCESS);
    const double want[6] = {0.5, 0, 0.5, 1 / 3.0, 1 / 3.0, 1 / 3.0};
    expect_near(out, want, 6, TOL);
    /* a bias pushing a logit past the float range: 6e38, 0, 3e38 */
    const float bias[6] = {3e38f, 3e38f, 0, 0, 0, 0};
    p.scale = 0;
    p.mask.has_bias = true;
    assert_int_equal(vkattn_reference_softmax(&p, NULL, s, bias, NULL, NULL, out), VKATTN_SUCCESS);
    const double want_b[6] = {1, 0, 0, 1 / 3.0, 1 / 3.0, 1 / 3.0};
    expect_near(out, want_b, 6, TOL);
}

/* NaN in an allowed logit poisons its row only; NaN under the mask is ignored. */
static void nan_row_isolation(void **state)
{
    (void)state;
    const float s[9] = {1, NAN, 2, 1, 1, 1, 0, 0, NAN};
    const float mask[9] = {1, 1, 1, 1, 1, 1, 1, 1, 0};
    float out[9];
    vkattn_softmax_params p = {.batch = 1, .tq = 3, .tv = 3, .mask = {.has_mask = true}};
    assert_int_equal(vkattn_reference_softmax(&p, NULL, s, NULL, NULL, mask, out), VKATTN_SUCCESS);
    for (int j = 0; j < 3; j++)
        assert_true(isnan(out[j]));
    const double want[6] = {1 / 3.0, 1 / 3.0, 1 / 3.0, 0.5, 0.5, 0};
    expect_near(out + 3, want, 6, TOL);
}

/* Random rows: in place equals out of place; rows sum to 1; masked are 0. */
static void in_place_and_invariants(void **state)
{
    (void)state;
    enum { B = 2, H = 3, TQ = 5, TV = 17, N = B * H * TQ * TV };
    float s[N], mask[N], out[N], inplace[N];
    tu_fill_uniform(s, N, -20, 20);
    tu_fill_mask(mask, N, 0.7f);
    memcpy(inplace, s, sizeof s);
    vkattn_softmax_params p = {.batch = B, .heads = H, .tq = TQ, .tv = TV, .scale = 0.3f,
                               .mask = {.has_mask = true, .causal = VKATTN_CAUSAL_TOP_LEFT}};
    assert_int_equal(vkattn_reference_softmax(&p, NULL, s, NULL, NULL, mask, out), VKATTN_SUCCESS);
    assert_int_equal(vkattn_reference_softmax(&p, NULL, inplace, NULL, NULL, mask, inplace),
                     VKATTN_SUCCESS);
    assert_memory_equal(out, inplace, sizeof out);
    for (int r = 0; r < B * H * TQ; r++) {
        int i = r % TQ;
        double sum = 0;
        int allowed = 0;
        for (int j = 0; j < TV; j++) {
            bool ok = mask[r * TV + j] != 0 && j <= i;
            allowed += ok;
            if (!ok)
                assert_true(out[r * TV + j] == 0.0f);
            sum += out[r * TV + j];
        }
        if (!(fabs(sum - (allowed ? 1.0 : 0.0)) < 1e-6))
            fail_msg("row %d sums to %.9g", r, sum);
    }
}

int main(void)
{
    tu_seed();
    const struct CMUnitTest tests[] = {TU_TESTS(
        known_vector, causal_top_left, causal_bottom_right, broadcasting, fully_masked_row_policies,
        minus_inf_bias_row, extreme_logits, nan_row_isolation, in_place_and_invariants)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
