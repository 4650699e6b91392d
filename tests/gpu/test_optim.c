/* Optimizer steps vs the CPU reference (double): SGD (plain, momentum,
 * dampening, Nesterov, weight decay), Adam (with and without L2) and AdamW on
 * odd sizes, several steps with fresh gradients. Bounds: the parameters' change
 * since the start within 1e-4 relative of its largest element (measured on
 * lavapipe: up to 1.2e-5) past Adam-with-L2's allowance (adam_l2_advance),
 * the state within 2e-6 relative (measured 1.8e-7),
 * the step number exact and beta^t within 2e-6. 16-bit params and grads
 * (f16, bf16, each alone or both): grads rounded to their type for the
 * reference too, and before each step the reference's param is the device's
 * (what the device starts from); the device rounds its f32 result once, so
 * it may sit half a spacing of the type (at the larger of |got| and |ref|)
 * from the reference's f32 one, past the same f32 bound. One
 * test records a step ONCE into an app command buffer and submits it step
 * after step: that the results still match proves the device-side step
 * counter (bias correction, SGD's first momentum step) advances per replay.
 * Bad arguments (a 16-bit state or step too) give INVALID_ARGUMENT and leave
 * every tensor untouched. */
#include "harness.h"
#include "app_device.h"

#include <vkattn/reference_backward.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DELTA_BOUND 1e-4
#define STATE_BOUND 2e-6
#define STEPS 5

typedef struct optim_case {
    const char *name;
    vkattn_optim_params p;
} optim_case;

static const optim_case cases[] = {
    {"SGD", {.algorithm = VKATTN_OPTIM_SGD, .lr = 0.05f}},
    {"SGD momentum", {.algorithm = VKATTN_OPTIM_SGD, .lr = 0.01f, .momentum = 0.9f}},
    {"SGD momentum dampening wd",
     {.algorithm = VKATTN_OPTIM_SGD, .lr = 0.01f, .momentum = 0.8f, .dampening = 0.3f,
      .weight_decay = 0.01f}},
    {"SGD Nesterov wd",
     {.algorithm = VKATTN_OPTIM_SGD, .lr = 0.01f, .momentum = 0.9f, .nesterov = true,
      .weight_decay = 1e-3f}},
    {"Adam", {.algorithm = VKATTN_OPTIM_ADAM, .lr = 1e-2f, .beta1 = 0.9f, .beta2 = 0.999f,
              .eps = 1e-8f}},
    {"Adam L2", {.algorithm = VKATTN_OPTIM_ADAM, .lr = 1e-2f, .beta1 = 0.8f, .beta2 = 0.99f,
                 .eps = 1e-6f, .weight_decay = 0.05f}},
    {"AdamW", {.algorithm = VKATTN_OPTIM_ADAMW, .lr = 1e-2f, .beta1 = 0.9f, .beta2 = 0.999f,
               .eps = 1e-8f, .weight_decay = 0.01f}},
    {"Adam beta1 0", {.algorithm = VKATTN_OPTIM_ADAM, .lr = 1e-2f, .beta1 = 0.0f,
                      .beta2 = 0.9f, .eps = 1e-8f}},
};

static size_t state_count(const vkattn_optim_params *p, size_t n)
{
    if (p->algorithm != VKATTN_OPTIM_SGD)
        return 2 * n;
    return p->momentum != 0.0f ? n : 0;
}

/* The GPU's and the reference's tensors of one run. */
typedef struct run {
    size_t n, ns;
    vkattn_dtype pt, gt; /* the param's and the grad's type */
    float *p0, *grads; /* grads: STEPS x n */
    float *base;       /* where the change is measured from: p0, or a 16-bit param's last value */
    double *slack;     /* 16-bit param: allowed plus half a spacing, per element */
    float *ref_p, *ref_s, ref_step[VKATTN_OPTIM_STEP_COUNT];
    vkattn_tensor *param, *grad, *state, *step;
    /* Adam with L2: bounds [lo, hi] per element on m, v and the parameter */
    double *m[2], *v[2], *x[2], *allowed;
} run;

static bool adds_l2(const vkattn_optim_params *p)
{
    return p->algorithm == VKATTN_OPTIM_ADAM && p->weight_decay != 0.0f;
}

static double *doubles(size_t n)
{
    return tu_alloc(n * sizeof(double));
}

/* Adam with L2 forms g + wd x in f32, with an absolute rounding (of wd x, of
 * the sum, and wd times x's own), and divides m by sqrt(v) + eps. Where
 * g + wd x cancels to near 0 the change's derivative by it reaches
 * lr / (bc1 eps), 1e4 lr here, so that rounding alone moves a parameter by
 * up to ~3e-3 of the largest change (seed 1795957069343833468: 1.07e-4 where
 * the rest stays below 1e-5). The allowance carries a rounding of
 * u (|g + wd x| + 2 wd |x|) per step (f32 add and multiply round correctly in
 * Vulkan) through m, v and x as intervals, with the reference's formulas; it
 * is about 25x that seed's realised error, and the relative bound covers the
 * rest (a change 0.1% off everywhere still fails). */
static void adam_l2_advance(const vkattn_optim_params *p, run *r, int s)
{
    const double u = 0x1p-24, b1 = p->beta1, b2 = p->beta2, wd = p->weight_decay;
    const double bc1 = 1.0 - pow(b1, s + 1), sqrt_bc2 = sqrt(1.0 - pow(b2, s + 1));
    for (size_t i = 0; i < r->n; i++) {
        const double g = r->grads[s * r->n + i], x_lo = r->x[0][i], x_hi = r->x[1][i];
        const double x_abs = fmax(fabs(x_lo), fabs(x_hi));
        const double e = u * (fabs(g + wd * x_lo) + 2 * wd * x_abs);
        const double g_lo = g + wd * x_lo - e, g_hi = g + wd * x_hi + e;
        const double sq_lo = g_lo <= 0 && g_hi >= 0 ? 0.0 : fmin(g_lo * g_lo, g_hi * g_hi);
        const double sq_hi = fmax(g_lo * g_lo, g_hi * g_hi);
        double *m = r->m[0] + i, *M = r->m[1] + i, *v = r->v[0] + i, *V = r->v[1] + i;
        *m = b1 * *m + (1 - b1) * g_lo, *M = b1 * *M + (1 - b1) * g_hi;
        *v = b2 * *v + (1 - b2) * sq_lo, *V = b2 * *V + (1 - b2) * sq_hi;
        /* m / den with den in [den_lo, den_hi], both > 0 */
        const double den_lo = sqrt(*v) / sqrt_bc2 + p->eps, den_hi = sqrt(*V) / sqrt_bc2 + p->eps;
        const double q_lo = *m >= 0 ? *m / den_hi : *m / den_lo;
        const double q_hi = *M >= 0 ? *M / den_lo : *M / den_hi;
        r->x[0][i] = x_lo - p->lr / bc1 * q_hi;
        r->x[1][i] = x_hi - p->lr / bc1 * q_lo;
        r->allowed[i] = fmax(r->x[1][i] - r->ref_p[i], r->ref_p[i] - r->x[0][i]);
    }
}

static const char *type_name(vkattn_dtype t)
{
    return t == VKATTN_DTYPE_F16 ? "f16" : t == VKATTN_DTYPE_BF16 ? "bf16" : "f32";
}

/* Half the spacing of type t's values at |x| (f16 or bf16). */
static double half_spacing(vkattn_dtype t, double x)
{
    int e;
    frexp(x, &e); /* |x| in [2^(e-1), 2^e) */
    const int mant = t == VKATTN_DTYPE_F16 ? 10 : 7, emin = t == VKATTN_DTYPE_F16 ? -14 : -126;
    return ldexp(0.5, (e - 1 > emin ? e - 1 : emin) - mant);
}

static void run_open(vkattn_context *ctx, const vkattn_optim_params *p, size_t n, vkattn_dtype pt,
                     vkattn_dtype gt, run *r)
{
    memset(r, 0, sizeof *r);
    r->n = n, r->ns = state_count(p, n), r->pt = pt, r->gt = gt;
    r->p0 = tu_floats(n), r->grads = tu_floats(STEPS * n), r->ref_p = tu_floats(n);
    r->base = tu_floats(n);
    r->ref_s = tu_floats(r->ns ? r->ns : 1);
    tu_fill_uniform(r->p0, n, -1, 1);
    tu_fill_uniform(r->grads, STEPS * n, -1, 1);
    th_round_to(r->p0, n, pt), th_round_to(r->grads, STEPS * n, gt);
    memcpy(r->ref_p, r->p0, n * sizeof(float));
    memcpy(r->base, r->p0, n * sizeof(float));
    memset(r->ref_s, 0, (r->ns ? r->ns : 1) * sizeof(float));
    memset(r->ref_step, 0, sizeof r->ref_step);
    r->param = th_typed_tensor(ctx, n, pt, r->p0);
    r->grad = th_typed_tensor(ctx, n, gt, NULL);
    if (r->ns) {
        r->state = th_tensor(ctx, r->ns, NULL);
        TH_OK(ctx, vkattn_tensor_fill(r->state, 0.0f));
    }
    r->step = th_tensor(ctx, VKATTN_OPTIM_STEP_COUNT, NULL);
    TH_OK(ctx, vkattn_tensor_fill(r->step, 0.0f));
    if (adds_l2(p)) {
        for (int b = 0; b < 2; b++) {
            r->m[b] = doubles(n), r->v[b] = doubles(n), r->x[b] = doubles(n);
            for (size_t i = 0; i < n; i++)
                r->m[b][i] = r->v[b][i] = 0.0, r->x[b][i] = r->p0[i];
        }
        r->allowed = doubles(n);
    }
    if (pt != VKATTN_DTYPE_F32)
        r->slack = doubles(n);
}

/* Before a step of a 16-bit param: the reference (and Adam-with-L2's
 * intervals) start from the device's param, as the device does. */
static void run_sync(run *r)
{
    if (r->pt == VKATTN_DTYPE_F32)
        return;
    float *cur = th_download(r->param, r->n);
    memcpy(r->ref_p, cur, r->n * sizeof(float));
    memcpy(r->base, cur, r->n * sizeof(float));
    if (r->allowed)
        for (size_t i = 0; i < r->n; i++)
            r->x[0][i] = r->x[1][i] = cur[i];
    free(cur);
}

static vkattn_optim_io run_io(const run *r)
{
    return (vkattn_optim_io){.count = (uint32_t)r->n, .param = r->param, .grad = r->grad,
                             .state = r->state, .step = r->step};
}

/* Advances the reference by one step with gradient s and compares. */
static void run_check(const optim_case *c, run *r, int s)
{
    const size_t n = r->n;
    TH_OK(NULL, vkattn_reference_optim_step(&c->p, n, r->ref_p, r->grads + s * n,
                                            r->ns ? r->ref_s : NULL, r->ref_step));
    if (r->allowed)
        adam_l2_advance(&c->p, r, s);
    float *got = th_download(r->param, n);
    float *d_got = tu_floats(n), *d_ref = tu_floats(n);
    for (size_t i = 0; i < n; i++)
        d_got[i] = (float)((double)got[i] - r->base[i]),
        d_ref[i] = (float)((double)r->ref_p[i] - r->base[i]);
    for (size_t i = 0; r->slack && i < n; i++)
        r->slack[i] = (r->allowed ? r->allowed[i] : 0.0) +
                      half_spacing(r->pt, fmax(fabs(got[i]), fabs(r->ref_p[i])));
    char what[160];
    snprintf(what, sizeof what, "%s, n=%zu, param %s, grad %s, step %d: parameter change",
             c->name, n, type_name(r->pt), type_name(r->gt), s + 1);
    const double err =
        tu_max_rel_err_past(d_got, d_ref, r->slack ? r->slack : r->allowed, n, 1e-30);
    if (!TU_WITHIN(err, DELTA_BOUND))
        fail_msg("%s: max relative error %.3g past the allowance exceeds bound %.3g", what, err,
                 DELTA_BOUND);
    if (r->ns) {
        float *st = th_download(r->state, r->ns);
        snprintf(what, sizeof what, "%s, n=%zu, step %d: state", c->name, n, s + 1);
        TU_ASSERT_CLOSE(st, r->ref_s, r->ns, STATE_BOUND, what);
        free(st);
    }
    float *step = th_download(r->step, VKATTN_OPTIM_STEP_COUNT);
    assert_true(step[0] == (float)(s + 1));
    assert_true(step[0] == r->ref_step[0]);
    snprintf(what, sizeof what, "%s, step %d: beta^t", c->name, s + 1);
    TU_ASSERT_CLOSE(step + 1, r->ref_step + 1, 2, STATE_BOUND, what);
    free(step), free(got), free(d_got), free(d_ref);
}

static void run_close(run *r)
{
    vkattn_tensor_destroy(r->param), vkattn_tensor_destroy(r->grad);
    vkattn_tensor_destroy(r->state), vkattn_tensor_destroy(r->step);
    free(r->p0), free(r->grads), free(r->ref_p), free(r->ref_s), free(r->base), free(r->slack);
    for (int b = 0; b < 2; b++)
        free(r->m[b]), free(r->v[b]), free(r->x[b]);
    free(r->allowed);
}

static void test_matches_reference(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const size_t n = c == 0 ? 1 : tu_rand_range(2, 3000) | 1u;
        run r;
        run_open(ctx, &cases[c].p, n, VKATTN_DTYPE_F32, VKATTN_DTYPE_F32, &r);
        const vkattn_optim_io io = run_io(&r);
        for (int s = 0; s < STEPS; s++) {
            TH_OK(ctx, vkattn_tensor_upload(r.grad, r.grads + s * n, 0, n));
            TH_OK(ctx, vkattn_optim_step_record(ctx, VKATTN_RUN_NOW, &cases[c].p, &io));
            run_check(&cases[c], &r, s);
        }
        th_assert_validation_clean();
        run_close(&r);
    }
}

/* 16-bit params and grads: every algorithm with both 16-bit, and one type
 * 16-bit and the other not, on odd counts (the last half alone in its word). */
static void test_16bit(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const vkattn_dtype F32 = VKATTN_DTYPE_F32, F16 = VKATTN_DTYPE_F16, BF16 = VKATTN_DTYPE_BF16;
    static const vkattn_dtype types[][2] = {{F16, F16}, {BF16, BF16}, {BF16, F32}, {F32, BF16},
                                            {F16, BF16}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
            if (k >= 2 && (c + k) % 3) /* the mixed pairs on some of the algorithms */
                continue;
            const size_t n = tu_rand_range(1, 700) | 1u;
            run r;
            run_open(ctx, &cases[c].p, n, types[k][0], types[k][1], &r);
            const vkattn_optim_io io = run_io(&r);
            for (int s = 0; s < STEPS; s++) {
                run_sync(&r);
                TH_OK(ctx, vkattn_tensor_upload(r.grad, r.grads + s * n, 0, n));
                TH_OK(ctx, vkattn_optim_step_record(ctx, VKATTN_RUN_NOW, &cases[c].p, &io));
                run_check(&cases[c], &r, s);
            }
            run_close(&r);
        }
    th_assert_validation_clean();
}

/* One command buffer, recorded once, submitted STEPS times per algorithm. */
static void test_replay_one_recording(void **state)
{
    vkattn_context *own = TH_CTX(state);
    ad_app app;
    ad_open(own, false, &app);
    vkattn_context *ctx = app.ctx;
    VkFence fence;
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    assert_int_equal(vkCreateFence(app.device, &fi, NULL, &fence), VK_SUCCESS);
    static const size_t pick[] = {2, 3, 4, 6}; /* dampening: a first step that differs */
    for (size_t k = 0; k < sizeof pick / sizeof pick[0]; k++) {
        const optim_case *c = &cases[pick[k]];
        const size_t n = tu_rand_range(100, 2000) | 1u;
        /* the last (AdamW) bf16: its staging passes replay too */
        const vkattn_dtype t = k == 3 ? VKATTN_DTYPE_BF16 : VKATTN_DTYPE_F32;
        run r;
        run_open(ctx, &c->p, n, t, t, &r);
        const vkattn_optim_io io = run_io(&r);
        VkCommandBuffer cmd = ad_begin(&app, 0);
        TH_OK(ctx, vkattn_optim_step_record(ctx, cmd, &c->p, &io));
        assert_int_equal(vkEndCommandBuffer(cmd), VK_SUCCESS);
        for (int s = 0; s < STEPS; s++) {
            run_sync(&r);
            TH_OK(ctx, vkattn_tensor_upload(r.grad, r.grads + s * n, 0, n));
            ad_submit(&app, cmd, fence);
            assert_int_equal(vkWaitForFences(app.device, 1, &fence, VK_TRUE, UINT64_MAX),
                             VK_SUCCESS);
            assert_int_equal(vkResetFences(app.device, 1, &fence), VK_SUCCESS);
            run_check(c, &r, s);
        }
        run_close(&r);
    }
    vkDestroyFence(app.device, fence, NULL);
    ad_close(&app);
}

/* Each bad call fails with `want` and leaves param, state and step as they were. */
static void expect_refused(vkattn_context *ctx, const vkattn_optim_params *p,
                           const vkattn_optim_io *io, vkattn_result want, run *r,
                           const char *what)
{
    vkattn_result got = vkattn_optim_step_record(ctx, VKATTN_RUN_NOW, p, io);
    if (got != want)
        fail_msg("%s: got %s, want %s", what, vkattn_result_name(got), vkattn_result_name(want));
    assert_non_null(strstr(vkattn_last_error(), "vkattn_optim_step"));
    float *pp = th_download(r->param, r->n), *st = th_download(r->step, 3);
    assert_memory_equal(pp, r->p0, r->n * sizeof(float));
    assert_true(st[0] == 0.0f && st[1] == 0.0f && st[2] == 0.0f);
    free(pp), free(st);
}

static void test_bad_arguments(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const vkattn_optim_params adam = cases[4].p;
    run r;
    run_open(ctx, &adam, 33, VKATTN_DTYPE_BF16, VKATTN_DTYPE_F32, &r);
    TH_OK(ctx, vkattn_tensor_upload(r.grad, r.grads, 0, r.n));
    const vkattn_optim_io ok = run_io(&r);
    vkattn_optim_params p;
    vkattn_optim_io io;
#define BAD_P(field, value, name)                                                              \
    (p = adam, p.field = (value),                                                              \
     expect_refused(ctx, &p, &ok, VKATTN_ERROR_INVALID_ARGUMENT, &r, name))
    BAD_P(lr, -1e-3f, "negative lr");
    BAD_P(lr, NAN, "NaN lr");
    BAD_P(beta1, 1.0f, "beta1 1");
    BAD_P(beta2, -0.5f, "beta2 < 0");
    BAD_P(eps, -1.0f, "negative eps");
    BAD_P(weight_decay, -0.1f, "negative weight decay");
    BAD_P(algorithm, (vkattn_optim_algorithm)9, "unknown algorithm");
    p = (vkattn_optim_params){.algorithm = VKATTN_OPTIM_SGD, .lr = 0.1f, .nesterov = true};
    expect_refused(ctx, &p, &ok, VKATTN_ERROR_INVALID_ARGUMENT, &r, "Nesterov without momentum");
    p.momentum = 0.9f, p.dampening = 0.1f;
    expect_refused(ctx, &p, &ok, VKATTN_ERROR_INVALID_ARGUMENT, &r, "Nesterov with dampening");
#define BAD_IO(field, value, name)                                                             \
    (io = ok, io.field = (value),                                                              \
     expect_refused(ctx, &adam, &io, VKATTN_ERROR_INVALID_ARGUMENT, &r, name))
    BAD_IO(count, 0, "count 0");
    BAD_IO(count, 34, "count past the tensors");
    BAD_IO(state, NULL, "no state for Adam");
    BAD_IO(step, NULL, "no step");
    BAD_IO(grad, r.param, "grad aliasing param");
    BAD_IO(step, r.param, "step aliasing param");
    vkattn_tensor *small = th_tensor(ctx, 33, NULL); /* Adam needs 2N of state */
    BAD_IO(state, small, "state of N for Adam");
    vkattn_tensor_destroy(small);
    /* a view over part of the state's memory */
    vkattn_tensor_desc d1 = {.rank = 1, .dims = {VKATTN_OPTIM_STEP_COUNT}};
    vkattn_buffer_view view = vkattn_tensor_get_info(r.state).buffer;
    view.size = 0;
    vkattn_tensor *alias;
    TH_OK(ctx, vkattn_tensor_wrap(ctx, &d1, &view, &alias));
    BAD_IO(step, alias, "step overlapping the state");
    vkattn_tensor_destroy(alias);
    /* the state and step stay f32, under a 16-bit param too */
    vkattn_tensor_desc h = {.rank = 1, .dims = {66}, .dtype = VKATTN_DTYPE_F16};
    vkattn_tensor *half;
    TH_OK(ctx, vkattn_tensor_create(ctx, &h, &half));
    io = ok, io.state = half;
    expect_refused(ctx, &adam, &io, VKATTN_ERROR_INVALID_ARGUMENT, &r, "f16 state");
    assert_non_null(strstr(vkattn_last_error(), "io->state"));
    io = ok, io.step = half;
    expect_refused(ctx, &adam, &io, VKATTN_ERROR_INVALID_ARGUMENT, &r, "f16 step");
    assert_non_null(strstr(vkattn_last_error(), "io->step"));
    vkattn_tensor_destroy(half);
    assert_int_equal(vkattn_optim_step_record(ctx, VKATTN_RUN_NOW, &adam, NULL), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_optim_step_record(ctx, VKATTN_RUN_NOW, NULL, &ok), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_optim_step_record(NULL, VKATTN_RUN_NOW, &adam, &ok), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_optim_step_record(ctx, VK_NULL_HANDLE, &adam, &ok),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    /* prepare: same checks; then a real step still works */
    assert_int_equal(vkattn_optim_step_record(ctx, VKATTN_PREPARE, &p, &ok), VKATTN_ERROR_INVALID_ARGUMENT);
    TH_OK(ctx, vkattn_optim_step_record(ctx, VKATTN_PREPARE, &adam, &ok));
    TH_OK(ctx, vkattn_optim_step_record(ctx, VKATTN_RUN_NOW, &adam, &ok));
    run_check(&cases[4], &r, 0);
    th_assert_validation_clean();
    run_close(&r);
}

int main(void)
{
    tu_seed();
    const struct CMUnitTest tests[] = {TU_TESTS(
        test_matches_reference, test_16bit, test_replay_one_recording, test_bad_arguments)};
    return cmocka_run_group_tests(tests, th_setup, th_teardown);
}
