/* SDPA backward with f16 tensors vs vkattn_reference_sdpa_backward.
 *
 * Random small shapes on both paths: odd sizes, Tq != Tv, dk != dv, batch 1,
 * grouped K/V heads (H / Hkv = 1, 2, 4), every mask kind with random
 * broadcasts, an additive bias, both causal alignments, both masked-row
 * policies, dropout (random_case.h's draw). Each of q, k, v, grad_out,
 * grad_q, grad_k, grad_v (and the fused forward's out) is f16 or f32 at
 * random, the first case of each group all f16; masks, bias and lse stay
 * f32. Inputs are random values in [-1, 1] rounded to their tensor's type,
 * so the reference (double) runs on exactly what the device holds;
 * gradients are poisoned with NaN first. The fused path's out and lse come
 * from the fused forward. On devices with fewer than 10 storage buffers per
 * shader (mobile-min) the fused backward must refuse with
 * VKATTN_ERROR_UNSUPPORTED and AUTO must fall back to the chained path,
 * which runs there.
 *
 * Bound, per gradient, on max|got - ref| / scale with the scale of
 * test_sdpa_backward.c (max|ref| of that gradient, floored by a tenth of the
 * call's largest |ref| and by 0.01):
 *   1e-4                the f32 backward's bound (vkattn/sdpa_backward.h): the
 *                       f16 inputs are exact in f32, so the arithmetic is the
 *                       f32 backward's on the same values
 * + 2^-10 (f16 grad)    the one rounding of an f16 gradient: half an f16
 *                       spacing, 2^-11 |x| (docs/SEMANTICS.md's ulp16 is
 *                       2^-10 relative), doubled for the f32 error it rounds
 * + shift (f16 out)     the fused path reads the forward's out to form
 *                       D_i = rowsum(dO_i * O_i); an f16 out, rounded once
 *                       (by 2^-11 |O| at most, 2^-25 below the normal range),
 *                       moves D_i by dD_i <= sum_d |dO_id| (2^-11 |O_id| +
 *                       2^-25), O and W taken from the reference forward.
 *                       dS_ij moves by W_ij dD_i, so dQ_i by at most
 *                       |scale| dD_i max|K| (sum_j W_ij <= 1) and dK_j by
 *                       |scale| max|Q| sum_i W_ij dD_i over the rows of its
 *                       group; dV does not read D.
 * + coopmat             a fused all-f16 (q, k, v, dO) call on a context running
 *                       the cooperative-matrix backward: its f16 P and dS
 *                       (backward_coopmat_bound.h).
 * Bad input: an f16 lse, weights, workspace, bias or mask is refused naming
 * it, as is an f16 gradient aliasing an f16 input; a failed call writes
 * nothing. */
#include "backward_coopmat_bound.h"
#include "harness.h"
#include "random_case.h"

#include <vkattn/reference.h>
#include <vkattn/reference_backward.h>
#include <vkattn/sdpa.h>
#include <vkattn/sdpa_backward.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOUND32 1e-4
#define EPS16 0x1p-10
#define FLOOR 1e-2
#define JOINT_FLOOR 1e-1

enum { T_Q, T_K, T_V, T_G, T_DQ, T_DK, T_DV, T_OUT, N_T };

typedef struct fcase {
    vkattn_sdpa_params p;
    vkattn_dtype ty[N_T];
    uint32_t hkv;
    size_t nq, nk, nv, no, nbias, nmask, nvm;
    float *q, *k, *v, *g, *bias, *mask, *vm;
    float *ref_dq, *ref_dk, *ref_dv;
} fcase;

static uint32_t heads_of(const vkattn_sdpa_params *p) { return p->heads ? p->heads : 1; }
static bool coin(void) { return tu_rand_range(0, 1) == 1; }

static void make_case(fcase *c)
{
    const vkattn_sdpa_params *p = &c->p;
    const uint32_t h = heads_of(p), dv = p->dv ? p->dv : p->dk;
    c->hkv = p->kv_heads ? p->kv_heads : h;
    c->nq = (size_t)p->batch * h * p->tq * p->dk;
    c->nk = (size_t)p->batch * c->hkv * p->tv * p->dk;
    c->nv = (size_t)p->batch * c->hkv * p->tv * dv;
    c->no = (size_t)p->batch * h * p->tq * dv;
    c->q = th_operand(c->nq, c->ty[T_Q]), c->k = th_operand(c->nk, c->ty[T_K]);
    c->v = th_operand(c->nv, c->ty[T_V]), c->g = th_operand(c->no, c->ty[T_G]);
    const rc_sdpa_sides sides = rc_sdpa_side_inputs(p);
    c->bias = sides.bias, c->mask = sides.mask, c->vm = sides.vm;
    c->nbias = sides.nbias, c->nmask = sides.nmask, c->nvm = sides.nvm;
    c->ref_dq = tu_floats(c->nq), c->ref_dk = tu_floats(c->nk), c->ref_dv = tu_floats(c->nv);
    assert_int_equal(vkattn_reference_sdpa_backward(p, c->q, c->k, c->v, c->bias, c->vm, c->mask,
                                                    c->g, c->ref_dq, c->ref_dk, c->ref_dv),
                     VKATTN_SUCCESS);
}

static void free_case(fcase *c)
{
    free(c->q), free(c->k), free(c->v), free(c->g), free(c->bias), free(c->mask), free(c->vm);
    free(c->ref_dq), free(c->ref_dk), free(c->ref_dv);
}

/* The shared SDPA draw (random_case.h), small: lavapipe is slow. */
static fcase random_case(int idx)
{
    const rc_sdpa_bounds b = {.max_batch = 2, .max_kv_heads = 2, .max_t = 21, .max_d = 13};
    fcase c = {.p = rc_random_sdpa(&b)};
    bool any = false;
    for (int t = 0; t < N_T; t++) {
        c.ty[t] = idx == 0 || coin() ? VKATTN_DTYPE_F16 : VKATTN_DTYPE_F32;
        any |= c.ty[t] == VKATTN_DTYPE_F16 && t != T_OUT;
    }
    if (!any) /* at least one f16 tensor the backward itself takes */
        c.ty[tu_rand_range(T_Q, T_DV)] = VKATTN_DTYPE_F16;
    return c;
}

static bool fused_possible(vkattn_context *ctx)
{
    vkattn_context_info info;
    assert_int_equal(vkattn_context_get_info(ctx, &info), VKATTN_SUCCESS);
    return info.max_storage_buffers_per_stage >= 10;
}

/* Whether a fused call of c may take the cooperative-matrix backward on this
 * context (ops/flash_backward_coopmat.h): q, k, v, grad_out f16 where it runs. */
static bool coopmat_backward(vkattn_context *ctx, const fcase *c)
{
    vkattn_context_info info;
    assert_int_equal(vkattn_context_get_info(ctx, &info), VKATTN_SUCCESS);
    return info.coopmat_attention && !info.cpu_tuning && c->ty[T_Q] == VKATTN_DTYPE_F16 &&
           c->ty[T_K] == VKATTN_DTYPE_F16 && c->ty[T_V] == VKATTN_DTYPE_F16 &&
           c->ty[T_G] == VKATTN_DTYPE_F16;
}

static double max_abs(const float *x, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs((double)x[i]));
    return m;
}

static vkattn_tensor *typed(vkattn_context *ctx, const float *x, size_t n, vkattn_dtype t)
{
    return x ? th_typed_tensor(ctx, n, t, x) : NULL;
}

static void check_grad(const char *what, const char *name, vkattn_tensor *t, const float *ref,
                       size_t n, vkattn_dtype ty, double joint, double extra)
{
    float *got = th_download(t, n);
    const double scale = fmax(max_abs(ref, n), fmax(FLOOR, JOINT_FLOOR * joint));
    const double bound = BOUND32 + (ty == VKATTN_DTYPE_F16 ? EPS16 : 0.0) + extra / scale;
    const double err = tu_max_rel_err(got, ref, n, fmax(FLOOR, JOINT_FLOOR * joint));
    if (!TU_WITHIN(err, bound))
        fail_msg("%s: %s: max relative error %.3g exceeds bound %.3g", what, name, err, bound);
    free(got);
}

/* The largest shifts of dQ and dK an f16 out can cause (the header's
 * "shift"): *xq, *xk. */
static void out16_shift(const fcase *c, double *xq, double *xk)
{
    vkattn_sdpa_params rp = c->p;
    rp.return_weights = true, rp.weights_after_dropout = false;
    const uint32_t h = heads_of(&rp), g = h / c->hkv, dv = rp.dv ? rp.dv : rp.dk;
    const size_t rows = (size_t)rp.batch * h * rp.tq, keys = c->nk / rp.dk;
    float *out = tu_floats(c->no), *w = tu_floats(rows * rp.tv);
    double *per_key = calloc(keys, sizeof *per_key);
    assert_non_null(per_key);
    const vkattn_sdpa_dtypes ty = {0};
    assert_int_equal(vkattn_reference_sdpa(&rp, &ty, c->q, c->k, c->v, c->bias, c->vm, c->mask,
                                           out, w),
                     VKATTN_SUCCESS);
    const double scale = rp.scale != 0.0f ? fabs(rp.scale) : 1.0 / sqrt((double)rp.dk);
    const double max_k = max_abs(c->k, c->nk), max_q = max_abs(c->q, c->nq);
    double max_dd = 0.0, max_key = 0.0;
    for (size_t r = 0; r < rows; r++) {
        double dd = 0.0;
        for (uint32_t d = 0; d < dv; d++)
            dd += fabs((double)c->g[r * dv + d]) *
                  (0x1p-11 * fabs((double)out[r * dv + d]) + 0x1p-25);
        max_dd = fmax(max_dd, dd);
        const size_t b = r / ((size_t)h * rp.tq), head = r / rp.tq % h;
        const size_t key0 = (b * c->hkv + head / g) * rp.tv;
        for (uint32_t j = 0; j < rp.tv; j++)
            per_key[key0 + j] += w[r * rp.tv + j] * dd;
    }
    for (size_t j = 0; j < keys; j++)
        max_key = fmax(max_key, per_key[j]);
    *xq = scale * max_dd * max_k;
    *xk = scale * max_key * max_q;
    free(out), free(w), free(per_key);
}

static void run_case(vkattn_context *ctx, fcase *c, bool fused)
{
    const vkattn_sdpa_params *p = &c->p;
    const vkattn_mask_params *m = &p->mask;
    const uint32_t dv = p->dv ? p->dv : p->dk;
    const char *tn[2] = {"f32", "f16"};
    char what[400];
    snprintf(what, sizeof what,
             "%s: B=%u H=%u Hkv=%u Tq=%u Tv=%u dk=%u dv=%u causal=%d row=%d vm=%d mask=%d "
             "bias=%d drop=%g types q %s k %s v %s dO %s dQ %s dK %s dV %s out %s",
             fused ? "fused" : "chained", p->batch, heads_of(p), c->hkv, p->tq, p->tv, p->dk, dv,
             (int)m->causal, (int)m->masked_row, m->has_value_mask, m->has_mask, m->has_bias,
             p->dropout.training ? (double)p->dropout.rate : 0.0, tn[c->ty[T_Q]], tn[c->ty[T_K]],
             tn[c->ty[T_V]], tn[c->ty[T_G]], tn[c->ty[T_DQ]], tn[c->ty[T_DK]], tn[c->ty[T_DV]],
             tn[c->ty[T_OUT]]);
    vkattn_sdpa_backward_io io = {
        .q = typed(ctx, c->q, c->nq, c->ty[T_Q]), .k = typed(ctx, c->k, c->nk, c->ty[T_K]),
        .v = typed(ctx, c->v, c->nv, c->ty[T_V]), .grad_out = typed(ctx, c->g, c->no, c->ty[T_G]),
        .bias = typed(ctx, c->bias, c->nbias, VKATTN_DTYPE_F32),
        .value_mask = typed(ctx, c->vm, c->nvm, VKATTN_DTYPE_F32),
        .mask = typed(ctx, c->mask, c->nmask, VKATTN_DTYPE_F32),
        .grad_q = th_typed_tensor(ctx, c->nq, c->ty[T_DQ], NULL),
        .grad_k = th_typed_tensor(ctx, c->nk, c->ty[T_DK], NULL),
        .grad_v = th_typed_tensor(ctx, c->nv, c->ty[T_DV], NULL),
    };
    vkattn_sdpa_params bp = *p;
    bp.path = VKATTN_SDPA_UNFUSED;
    double xq = 0.0, xk = 0.0, xv = 0.0; /* the shifts of an f16 out (header comment) */
    if (fused) {
        vkattn_sdpa_params fp = *p;
        fp.path = VKATTN_SDPA_FUSED;
        vkattn_sdpa_io fio = {.q = io.q, .k = io.k, .v = io.v, .bias = io.bias,
                              .value_mask = io.value_mask, .mask = io.mask,
                              .out = th_typed_tensor(ctx, c->no, c->ty[T_OUT], NULL),
                              .lse = th_tensor(ctx, c->no / dv, NULL)};
        if (fused_possible(ctx))
            TH_OK(ctx, vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &fp, &fio));
        io.out = fio.out, io.lse = fio.lse;
        bp.path = VKATTN_SDPA_FUSED;
        if (c->ty[T_OUT] == VKATTN_DTYPE_F16)
            out16_shift(c, &xq, &xk);
        if (coopmat_backward(ctx, c)) { /* its f16 P and dS (docs/SEMANTICS.md) */
            const bcb_inputs in = {c->q, c->k, c->v, c->g, c->bias, c->vm, c->mask};
            double cq, ck;
            bcb_bound(p, &in, &cq, &ck, &xv);
            xq += cq, xk += ck;
        }
    }
    if (fused && !fused_possible(ctx)) {
        TH_EXPECT_ERROR(vkattn_sdpa_backward_record(ctx, VKATTN_RUN_NOW, &bp, &io),
                        VKATTN_ERROR_UNSUPPORTED, "storage buffers");
        bp.path = VKATTN_SDPA_AUTO; /* falls back to the chained path */
        xq = xk = xv = 0.0;
    }
    TH_OK(ctx, vkattn_sdpa_backward_record(ctx, VKATTN_RUN_NOW, &bp, &io));
    const double joint = fmax(max_abs(c->ref_dq, c->nq),
                              fmax(max_abs(c->ref_dk, c->nk), max_abs(c->ref_dv, c->nv)));
    check_grad(what, "grad_q", io.grad_q, c->ref_dq, c->nq, c->ty[T_DQ], joint, xq);
    check_grad(what, "grad_k", io.grad_k, c->ref_dk, c->nk, c->ty[T_DK], joint, xk);
    check_grad(what, "grad_v", io.grad_v, c->ref_dv, c->nv, c->ty[T_DV], joint, xv);
    th_assert_validation_clean();
    vkattn_tensor *all[] = {io.q, io.k, io.v, io.bias, io.value_mask, io.mask, io.grad_out,
                            io.grad_q, io.grad_k, io.grad_v, io.out, io.lse};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vkattn_tensor_destroy(all[i]);
}

static void random_cases(void **state, int cases)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < cases; i++) {
        fcase c = random_case(i);
        make_case(&c);
        run_case(ctx, &c, i % 2 == 1);
        free_case(&c);
    }
}

static void test_random(void **state) { random_cases(state, 10); }
static void test_random_few(void **state) { random_cases(state, 4); }

static void expect_fail(vkattn_context *ctx, const vkattn_sdpa_params *p,
                        const vkattn_sdpa_backward_io *io, vkattn_result code, const char *needle)
{
    TH_EXPECT_ERROR(vkattn_sdpa_backward_record(ctx, VKATTN_RUN_NOW, p, io), code, needle);
}

/* The tensors with no f16 form in the backward are refused naming them, and
 * a refused call leaves the f16 gradients as they were. */
static void test_bad_arguments(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    enum { N = 64 };
    float x[N];
    tu_fill_uniform(x, N, -1, 1);
    th_round_f16(x, N);
    const vkattn_dtype h = VKATTN_DTYPE_F16;
    vkattn_sdpa_params p = {.batch = 1, .heads = 2, .tq = 3, .tv = 4, .dk = 4};
    vkattn_tensor *t[7], *f32 = th_tensor(ctx, N, x), *f16 = th_typed_tensor(ctx, N, h, x);
    for (int i = 0; i < 7; i++)
        t[i] = th_typed_tensor(ctx, N, h, x);
    vkattn_sdpa_backward_io io = {.q = t[0], .k = t[1], .v = t[2], .grad_out = t[3],
                                  .grad_q = t[4], .grad_k = t[5], .grad_v = t[6]};
    p.path = VKATTN_SDPA_UNFUSED;
    io.weights = f16;
    expect_fail(ctx, &p, &io, VKATTN_ERROR_UNSUPPORTED, "io->weights");
    io.weights = NULL;
    io.workspace[0] = f16;
    expect_fail(ctx, &p, &io, VKATTN_ERROR_UNSUPPORTED, "io->workspace[0]");
    io.workspace[0] = NULL;
    p.mask.has_mask = true;
    io.mask = f16;
    expect_fail(ctx, &p, &io, VKATTN_ERROR_INVALID_ARGUMENT, "io->mask");
    p.mask.has_mask = false, p.mask.has_bias = true;
    io.mask = NULL, io.bias = f16;
    expect_fail(ctx, &p, &io, VKATTN_ERROR_INVALID_ARGUMENT, "io->bias");
    p.mask.has_bias = false;
    io.bias = NULL;
    if (fused_possible(ctx)) {
        p.path = VKATTN_SDPA_FUSED;
        io.out = f32, io.lse = f16;
        expect_fail(ctx, &p, &io, VKATTN_ERROR_UNSUPPORTED, "io->lse");
        io.out = NULL, io.lse = NULL;
        p.path = VKATTN_SDPA_UNFUSED;
    }
    io.grad_q = t[0]; /* an f16 gradient aliasing an f16 input */
    expect_fail(ctx, &p, &io, VKATTN_ERROR_INVALID_ARGUMENT, "io->grad_q");
    io.grad_q = t[4];
    /* the failed calls wrote nothing */
    for (int i = 4; i <= 6; i++) {
        float *got = th_download(t[i], N);
        assert_memory_equal(got, x, sizeof x);
        free(got);
    }
    TH_OK(ctx, vkattn_sdpa_backward_record(ctx, VKATTN_RUN_NOW, &p, &io));
    for (int i = 0; i < 7; i++)
        vkattn_tensor_destroy(t[i]);
    vkattn_tensor_destroy(f32);
    vkattn_tensor_destroy(f16);
    th_assert_validation_clean();
}

int main(void)
{
    const struct CMUnitTest tests[] = {TU_TESTS(test_random, test_bad_arguments)};
    const struct CMUnitTest few[] = {cmocka_unit_test(test_random_few)};
    int failed = cmocka_run_group_tests_name("sdpa backward f16", tests, th_setup, th_teardown);
    /* packed halves and 4 storage buffers: the chained path only */
    failed += cmocka_run_group_tests_name("sdpa backward f16, mobile-min", few, th_setup_mobile,
                                          th_teardown);
    return failed + cmocka_run_group_tests_name("sdpa backward f16, GPU tuning", few,
                                                th_setup_gpu_tuning, th_teardown_gpu_tuning);
}
