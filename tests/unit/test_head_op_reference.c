/* The public head ops' reference (vkattn_reference_head_op): RMS_NORM_BACKWARD
 * against central finite differences of RMS_NORM, through the public entry
 * only (L = sum grad_out * RMS_NORM(x, w); h = 1e-2 on f32 outputs: the
 * truncation h^2 |f'''| and the f32 rounding of outputs 2^-24 |L| / h stay
 * below 1e-3 of the gradient's scale); and ROPE_INVERSE undoing ROPE (to
 * f32 rounding). Host only; milliseconds. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <vkattn/vkattn.h>

enum { B = 2, H = 2, T = 3, D = 5, N = B * H * T * D };

static double loss(const vkattn_head_op_params *p, const float *x, const float *w, const float *g)
{
    float out[N];
    assert_int_equal(vkattn_reference_head_op(p, &(vkattn_head_op_host_io){
                                                     .x = x, .out = out, .weight = w}),
                     VKATTN_SUCCESS);
    double l = 0.0;
    for (int i = 0; i < N; i++)
        l += (double)g[i] * out[i];
    return l;
}

/* dL/dv for the element *v of x or w, by central differences of step h
 * (divided by the step f32 really took) */
static double central(const vkattn_head_op_params *p, float *v, float *x, float *w,
                      const float *g, float h)
{
    const float keep = *v;
    *v = keep + h;
    const double up = loss(p, x, w, g);
    *v = keep - h;
    const double down = loss(p, x, w, g);
    *v = keep;
    return (up - down) / (2.0 * ((double)(keep + h) - keep));
}

static void check(const char *what, int i, double got, double fd, double scale)
{
    if (!TU_WITHIN(fabs(got - fd), 1e-3 * scale))
        fail_msg("%s[%d]: backward %.7g, finite differences %.7g", what, i, got, fd);
}

static void test_norm_backward_vs_finite_differences(void **state)
{
    (void)state;
    float x[N], g[N], w[D], gx[N], gw[D];
    tu_fill_uniform(x, N, -2, 2);
    tu_fill_uniform(g, N, -1, 1);
    tu_fill_uniform(w, D, 0.5f, 1.5f);
    vkattn_head_op_params p = {.op = VKATTN_HEAD_RMS_NORM_BACKWARD, .batch = B, .heads = H,
                               .seq = T, .dim = D, .epsilon = 1e-3f};
    assert_int_equal(vkattn_reference_head_op(&p, &(vkattn_head_op_host_io){
                                                      .x = x, .weight = w, .grad_out = g,
                                                      .grad_x = gx, .grad_weight = gw}),
                     VKATTN_SUCCESS);
    p.op = VKATTN_HEAD_RMS_NORM;
    const float h = 1e-2f;
    double sx = 0.01, sw = 0.01;
    for (int i = 0; i < N; i++)
        sx = fmax(sx, fabs(gx[i]));
    for (int e = 0; e < D; e++)
        sw = fmax(sw, fabs(gw[e]));
    for (int i = 0; i < N; i++)
        check("grad_x", i, gx[i], central(&p, &x[i], x, w, g, h), sx);
    for (int e = 0; e < D; e++)
        check("grad_weight", e, gw[e], central(&p, &w[e], x, w, g, h), sw);
}

static void test_rope_inverse_undoes_rope(void **state)
{
    (void)state;
    float pos[B * T];
    for (int i = 0; i < B * T; i++)
        pos[i] = (float)tu_rand_range(0, 4095);
    vkattn_head_op_params p = {.op = VKATTN_HEAD_ROPE, .batch = B, .heads = H, .seq = T,
                               .dim = D + 1, .rope = {.rotary_dim = 4}};
    float x6[B * H * T * (D + 1)], y6[B * H * T * (D + 1)], b6[B * H * T * (D + 1)];
    tu_fill_uniform(x6, B * H * T * (D + 1), -2, 2);
    assert_int_equal(vkattn_reference_head_op(&p, &(vkattn_head_op_host_io){
                                                      .x = x6, .out = y6, .positions = pos}),
                     VKATTN_SUCCESS);
    p.op = VKATTN_HEAD_ROPE_INVERSE;
    assert_int_equal(vkattn_reference_head_op(&p, &(vkattn_head_op_host_io){
                                                      .x = y6, .out = b6, .positions = pos}),
                     VKATTN_SUCCESS);
    for (int i = 0; i < B * H * T * (D + 1); i++)
        if (!TU_WITHIN(fabs(b6[i] - x6[i]), 1e-6))
            fail_msg("element %d: %.9g back, %.9g before", i, b6[i], x6[i]);
}

int main(void)
{
    tu_seed();
    const struct CMUnitTest tests[] = {TU_TESTS(
        test_norm_backward_vs_finite_differences, test_rope_inverse_undoes_rope)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
