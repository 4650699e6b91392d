/* Masked softmax backward vs vkattn_reference_softmax_backward: random shapes
 * (batch 1, primes, Tv not a multiple of the workgroup, Tq != Tv), each mask
 * alone and combined, broadcast bias and mask, both causal anchors, both
 * masked-row policies with whole masked rows, in place and out of place, and
 * bad arguments. The weights are the reference forward's; dL/dW is fresh
 * random; outputs are poisoned with NaN first, and a guard tail must stay.
 *
 * Bound: max|got - ref| <= 1e-5 (one fp32 row sum of Tv <= 300 products of
 * moderate size) relative to the largest sum of term magnitudes,
 * |scale| * w_i * (|dw_i| + sum_j w_j |dw_j|), not to max|ref|, which
 * w_i * (dw_i - sum_j w_j dw_j) can cancel to far below on a small tensor;
 * and exactly 0 wherever the reference is 0 (masked keys, masked rows).
 *
 * 16-bit rows (test_16bit): f16 or bf16 weights, grad_out and grad_scores,
 * alone or mixed with f32, staged through f32. The reference takes the inputs
 * as stored (rounded to their type), so only the output's rounding adds to
 * the f32 bound E: |got - ref| <= E + th_store_err(type, |ref| + E), one f16
 * spacing or half a bf16 spacing at the f32 result's magnitude. */
#include "harness.h"
#include "op_table.h" /* th_dtype_name */
#include "random_case.h"

#include <vkattn/reference_backward.h>
#include <vkattn/softmax_backward.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOUND 1e-5
#define GUARD 5
#define GUARD_VALUE 42.0f
#define F32_TYPES ((smb_types){VKATTN_DTYPE_F32, VKATTN_DTYPE_F32, VKATTN_DTYPE_F32})

static uint32_t heads_of(const vkattn_softmax_params *p) { return p->heads ? p->heads : 1; }

static size_t bcast_count(vkattn_broadcast bc, const vkattn_softmax_params *p)
{
    return (size_t)(bc.batch ? 1 : p->batch) * (bc.heads ? 1 : heads_of(p)) *
           (bc.rows ? 1 : p->tq) * p->tv;
}

static vkattn_tensor *opt_tensor(vkattn_context *ctx, const float *data, size_t n)
{
    return data ? th_tensor(ctx, n, data) : NULL;
}

/* Per element, the sum of the magnitudes of the terms its gradient adds up. */
static float *term_magnitudes(const vkattn_softmax_params *p, const float *w, const float *dw,
                              size_t n)
{
    const double scale = fabs(p->scale != 0.0f ? p->scale : 1.0);
    float *terms = tu_floats(n);
    for (size_t row = 0; row < n; row += p->tv) {
        double sum = 0.0;
        for (size_t j = row; j < row + p->tv; j++)
            sum += (double)w[j] * fabs(dw[j]);
        for (size_t j = row; j < row + p->tv; j++)
            terms[j] = (float)(scale * w[j] * (fabs(dw[j]) + sum));
    }
    return terms;
}

/* The operands' types: weights, grad_out, grad_scores (in place: grad_out's). */
typedef struct smb_types {
    vkattn_dtype w, g, s;
} smb_types;

/* got vs ref per element: E = BOUND * max(terms), plus grad_scores' rounding */
static void check_close(const char *what, const float *got, const float *ref,
                        const float *terms, size_t n, vkattn_dtype t)
{
    double max_terms = 0.0;
    for (size_t i = 0; i < n; i++)
        max_terms = fmax(max_terms, terms[i]);
    const double e = BOUND * max_terms;
    for (size_t i = 0; i < n; i++) {
        const double bound = e + th_store_err(t, fabs(ref[i]) + e);
        if (!TU_WITHIN(fabs((double)got[i] - ref[i]), bound))
            fail_msg("%s: element %zu is %.9g, the reference %.9g (bound %.3g)", what, i,
                     (double)got[i], (double)ref[i], bound);
    }
}

static void run_case(vkattn_context *ctx, const vkattn_softmax_params *p, bool in_place,
                     smb_types ty)
{
    const vkattn_mask_params *m = &p->mask;
    char what[256];
    snprintf(what, sizeof what,
             "softmax backward B=%u H=%u Tq=%u Tv=%u scale=%g causal=%d row=%d vmask=%d "
             "mask=%d bias=%d%s w=%s g=%s s=%s",
             p->batch, heads_of(p), p->tq, p->tv, (double)p->scale, (int)m->causal,
             (int)m->masked_row, m->has_value_mask, m->has_mask, m->has_bias,
             in_place ? " in place" : "", th_dtype_name(ty.w), th_dtype_name(ty.g),
             th_dtype_name(ty.s));
    const size_t n = (size_t)p->batch * heads_of(p) * p->tq * p->tv;
    const size_t n_bias = bcast_count(m->bias_broadcast, p), n_mask = bcast_count(m->mask_broadcast, p);
    const size_t n_vmask = (size_t)p->batch * p->tv;
    float *scores = tu_floats(n), *w = tu_floats(n), *dw = tu_floats(n + GUARD), *ref = tu_floats(n);
    float *bias = m->has_bias ? tu_floats(n_bias) : NULL;
    float *vmask = m->has_value_mask ? tu_floats(n_vmask) : NULL;
    float *mask = m->has_mask ? tu_floats(n_mask) : NULL;
    tu_fill_uniform(scores, n, -3, 3);
    tu_fill_uniform(dw, n, -1, 1);
    if (bias) {
        tu_fill_uniform(bias, n_bias, -2, 2);
        bias[0] = -INFINITY; /* a -inf bias masks its key */
    }
    if (vmask) {
        tu_fill_mask(vmask, n_vmask, 0.6f);
        memset(vmask, 0, p->tv * sizeof(float)); /* batch 0: every row masked */
    }
    if (mask)
        tu_fill_mask(mask, n_mask, 0.6f);
    TH_OK(ctx, vkattn_reference_softmax(p, NULL, scores, bias, vmask, mask, w));
    th_round_to(w, n, ty.w); /* what the tensors hold */
    th_round_to(dw, n, ty.g);
    TH_OK(ctx, vkattn_reference_softmax_backward(p, w, dw, bias, vmask, mask, ref));

    float *init = tu_floats(n + GUARD);
    if (in_place)
        memcpy(init, dw, n * sizeof(float));
    else
        tu_poison(init, n);
    for (size_t i = n; i < n + GUARD; i++)
        init[i] = GUARD_VALUE;
    vkattn_tensor *tout = th_typed_tensor(ctx, n + GUARD, ty.s, init);
    vkattn_softmax_backward_io io = {
        .weights = th_typed_tensor(ctx, n, ty.w, w),
        .grad_out = in_place ? tout : th_typed_tensor(ctx, n, ty.g, dw),
        .bias = opt_tensor(ctx, bias, n_bias),
        .value_mask = opt_tensor(ctx, vmask, n_vmask),
        .mask = opt_tensor(ctx, mask, n_mask),
        .grad_scores = tout,
    };
    TH_OK(ctx, vkattn_softmax_backward_record(ctx, VKATTN_RUN_NOW, p, &io));
    float *got = th_download(tout, n + GUARD), *terms = term_magnitudes(p, w, dw, n);
    check_close(what, got, ref, terms, n, ty.s);
    for (size_t i = 0; i < n; i++)
        if (ref[i] == 0.0f && got[i] != 0.0f)
            fail_msg("%s: element %zu is %g; the reference has exactly 0", what, i,
                     (double)got[i]);
    for (size_t i = n; i < n + GUARD; i++)
        if (got[i] != GUARD_VALUE)
            fail_msg("%s: element %zu past the output was overwritten", what, i);
    th_assert_validation_clean();
    if (!in_place)
        vkattn_tensor_destroy(io.grad_out);
    vkattn_tensor_destroy(io.weights), vkattn_tensor_destroy(tout);
    vkattn_tensor_destroy(io.bias), vkattn_tensor_destroy(io.value_mask);
    vkattn_tensor_destroy(io.mask);
    free(scores), free(w), free(dw), free(ref), free(bias), free(vmask), free(mask);
    free(init), free(got), free(terms);
}

static void test_random_shapes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int c = 0; c < 24; c++) {
        vkattn_softmax_params p = {
            .batch = tu_rand_range(1, 3), .heads = tu_rand_range(0, 3),
            .tq = tu_rand_range(1, 9), .tv = c % 6 == 5 ? tu_rand_range(200, 300)
                                                         : tu_rand_range(1, 70),
            .scale = c % 3 ? tu_rand_float(0.2f, 2.0f) : 0.0f,
        };
        rc_random_mask(&p.mask);
        run_case(ctx, &p, c % 4 == 3, F32_TYPES);
    }
}

/* Per 16-bit type: all three operands of it (in place too), and mixed with f32. */
static void test_16bit(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const vkattn_dtype types[2] = {VKATTN_DTYPE_F16, VKATTN_DTYPE_BF16};
    const vkattn_dtype f32 = VKATTN_DTYPE_F32;
    for (int k = 0; k < 2; k++)
        for (int c = 0; c < 6; c++) {
            const vkattn_dtype t = types[k];
            vkattn_softmax_params p = {
                .batch = tu_rand_range(1, 2), .heads = tu_rand_range(0, 2),
                .tq = tu_rand_range(1, 5), .tv = c == 5 ? tu_rand_range(200, 300)
                                                        : tu_rand_range(1, 40),
                .scale = c % 2 ? tu_rand_float(0.2f, 2.0f) : 0.0f,
            };
            rc_random_mask(&p.mask);
            const smb_types ty = c == 3   ? (smb_types){t, f32, t}
                                 : c == 4 ? (smb_types){f32, t, f32}
                                          : (smb_types){t, t, t};
            run_case(ctx, &p, c < 2, ty);
        }
}

static void test_each_mask(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int kind = 0; kind < 5; kind++)
        for (int policy = 0; policy < 2; policy++) {
            vkattn_softmax_params p = {.batch = 2, .heads = 2, .tq = 7, .tv = 5};
            p.mask.masked_row = (vkattn_masked_row)policy;
            p.mask.causal = kind == 1   ? VKATTN_CAUSAL_TOP_LEFT
                            : kind == 2 ? VKATTN_CAUSAL_BOTTOM_RIGHT /* Tq > Tv: rows masked */
                                        : VKATTN_CAUSAL_NONE;
            p.mask.has_value_mask = kind == 3;
            p.mask.has_mask = kind == 4;
            p.mask.has_bias = kind == 0;
            run_case(ctx, &p, false, F32_TYPES);
        }
}

static void expect_fail(vkattn_context *ctx, const vkattn_softmax_params *p,
                        const vkattn_softmax_backward_io *io, const char *needle)
{
    vkattn_result r = vkattn_softmax_backward_record(ctx, VKATTN_RUN_NOW, p, io);
    if (r != VKATTN_ERROR_INVALID_ARGUMENT)
        fail_msg("expected INVALID_ARGUMENT (%s), got %s", needle, vkattn_result_name(r));
    if (!strstr(vkattn_context_last_error(ctx), needle))
        fail_msg("expected \"%s\" in: %s", needle, vkattn_context_last_error(ctx));
}

static void test_bad_arguments(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    float x[64] = {0};
    vkattn_tensor *a = th_tensor(ctx, 64, x), *b = th_tensor(ctx, 64, x);
    vkattn_tensor *c = th_tensor(ctx, 64, x), *small = th_tensor(ctx, 3, x);
    vkattn_softmax_params p = {.batch = 2, .tq = 2, .tv = 4};
    vkattn_softmax_backward_io io = {.weights = a, .grad_out = b, .grad_scores = c};
    TH_OK(ctx, vkattn_softmax_backward_record(ctx, VKATTN_RUN_NOW, &p, &io));
    io.grad_scores = a;
    expect_fail(ctx, &p, &io, "io->weights");
    io.grad_scores = c;
    io.weights = small;
    expect_fail(ctx, &p, &io, "io->weights");
    io.weights = a;
    p.mask.has_mask = true;
    expect_fail(ctx, &p, &io, "io->mask");
    io.mask = c;
    expect_fail(ctx, &p, &io, "io->mask");
    p.mask.has_mask = false, io.mask = NULL;
    io.bias = b;
    expect_fail(ctx, &p, &io, "io->bias");
    io.bias = NULL;
    p.tq = 0;
    expect_fail(ctx, &p, &io, "tq");
    p.tq = 2;
    p.scale = NAN;
    expect_fail(ctx, &p, &io, "scale");
    vkattn_tensor_destroy(a), vkattn_tensor_destroy(b), vkattn_tensor_destroy(c);
    vkattn_tensor_destroy(small);
    th_assert_validation_clean();
}

int main(void)
{
    const struct CMUnitTest tests[] = {TU_TESTS(
        test_random_shapes, test_each_mask, test_16bit, test_bad_arguments)};
    return TH_RUN_WITH_MOBILE("softmax backward", tests);
}
