/* SDPA backward vs vkattn_reference_sdpa_backward, both paths.
 *
 * Random shapes: odd sizes, Tq != Tv, dk != dv, batch 1, Tq = 1, grouped K/V
 * heads (H / Hkv = 1, 2, 3), every mask kind with random broadcasts and an
 * additive bias, both causal alignments (bottom-right with Tq > Tv gives rows
 * with no key), whole masked rows (a batch whose value mask is all zero) under
 * both masked-row policies, dropout in training mode (the forward's Philox
 * mask regenerated from the same seed and offset). The chained path runs with
 * the weights recomputed and with the forward's weights given; the fused path
 * with out and lse from the fused forward. Fresh random inputs in [-1, 1];
 * gradients poisoned with NaN first. On devices with fewer than 10 storage
 * buffers per shader (mobile-min) the fused backward must refuse with
 * VKATTN_ERROR_UNSUPPORTED and AUTO must fall back to the chained path.
 *
 * Bound: for each of dQ, dK, dV, max|got - ref| / scale <= 1e-4, where scale
 * is the largest of max|ref| of that gradient, a tenth of the largest |ref|
 * of all three, and 0.01 (fp32 sums over Tq or Tv <= 80 rows of products of
 * moderate size; the fused path recomputes weights from the LSE, one more
 * rounding). The two floors are for gradients that are 0 analytically, as dK
 * and dQ when each row sees one key: they come out as the rounding left of
 * dP - D, sums of dv products the size of dV's entries (dO v / (1 - rate)),
 * so their error is measured against the call's gradient scale. CI once drew
 * such a dK (Tv = 1, dropout 0.31) 1.3e-6 from 0, over a floor of 0.01 alone.
 * Bad input: missing lse or out for the fused path, a too small gradient, a
 * gradient aliasing an input or another output: INVALID_ARGUMENT naming the
 * tensor, and the gradients untouched. */
#include "harness.h"
#include "random_case.h"

#include <vkattn/reference_backward.h>
#include <vkattn/sdpa.h>
#include <vkattn/sdpa_backward.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOUND 1e-4
#define FLOOR 1e-2       /* a gradient that is 0 analytically (one key per row) */
#define JOINT_FLOOR 1e-1 /* ... measured against a tenth of the call's largest */

/* FUSED_AUTO: the fused forward's out and lse given, path AUTO */
typedef enum run_mode { CHAINED, CHAINED_WEIGHTS, FUSED, FUSED_AUTO } run_mode;

/* The widest random dk, dv: wider under the GPU tuning, so that its kernels
 * split keys and rows over 1, 2 and 4 lanes (ops/flash_backward_gpu_tiles.h). */
static uint32_t max_width = 20;

typedef struct bcase {
    vkattn_sdpa_params p;
    uint32_t hkv;
    size_t nq, nk, nv, no, nw, nbias, nmask, nvm;
    float *q, *k, *v, *g, *bias, *mask, *vm;
    float *ref_dq, *ref_dk, *ref_dv;
} bcase;

static uint32_t heads_of(const vkattn_sdpa_params *p) { return p->heads ? p->heads : 1; }

static void make_case(bcase *c)
{
    const vkattn_sdpa_params *p = &c->p;
    const uint32_t h = heads_of(p), dv = p->dv ? p->dv : p->dk;
    c->hkv = p->kv_heads ? p->kv_heads : h;
    c->nq = (size_t)p->batch * h * p->tq * p->dk;
    c->nk = (size_t)p->batch * c->hkv * p->tv * p->dk;
    c->nv = (size_t)p->batch * c->hkv * p->tv * dv;
    c->no = (size_t)p->batch * h * p->tq * dv;
    c->nw = (size_t)p->batch * h * p->tq * p->tv;
    c->q = tu_floats(c->nq), c->k = tu_floats(c->nk), c->v = tu_floats(c->nv);
    c->g = tu_floats(c->no);
    tu_fill_uniform(c->q, c->nq, -1, 1);
    tu_fill_uniform(c->k, c->nk, -1, 1);
    tu_fill_uniform(c->v, c->nv, -1, 1);
    tu_fill_uniform(c->g, c->no, -1, 1);
    const rc_sdpa_sides sides = rc_sdpa_side_inputs(p);
    c->bias = sides.bias, c->mask = sides.mask, c->vm = sides.vm;
    c->nbias = sides.nbias, c->nmask = sides.nmask, c->nvm = sides.nvm;
    c->ref_dq = tu_floats(c->nq), c->ref_dk = tu_floats(c->nk), c->ref_dv = tu_floats(c->nv);
    assert_int_equal(vkattn_reference_sdpa_backward(p, c->q, c->k, c->v, c->bias, c->vm, c->mask,
                                                    c->g, c->ref_dq, c->ref_dk, c->ref_dv),
                     VKATTN_SUCCESS);
}

static void free_case(bcase *c)
{
    free(c->q), free(c->k), free(c->v), free(c->g), free(c->bias), free(c->mask), free(c->vm);
    free(c->ref_dq), free(c->ref_dk), free(c->ref_dv);
}

static vkattn_tensor *opt(vkattn_context *ctx, const float *x, size_t n)
{
    return x ? th_tensor(ctx, n, x) : NULL;
}

static vkattn_tensor *poisoned(vkattn_context *ctx, size_t n)
{
    float *x = tu_floats(n);
    tu_poison(x, n);
    vkattn_tensor *t = th_tensor(ctx, n, x);
    free(x);
    return t;
}

static bool fused_possible(vkattn_context *ctx)
{
    vkattn_context_info info;
    assert_int_equal(vkattn_context_get_info(ctx, &info), VKATTN_SUCCESS);
    return info.max_storage_buffers_per_stage >= 10;
}

static void describe(char *buf, size_t n, const bcase *c, run_mode mode)
{
    const vkattn_sdpa_params *p = &c->p;
    const vkattn_mask_params *m = &p->mask;
    snprintf(buf, n,
             "%s: B=%u H=%u Hkv=%u Tq=%u Tv=%u dk=%u dv=%u causal=%d row=%d vm=%d mask=%d "
             "bias=%d drop=%g window=%u",
             mode == FUSED        ? "fused"
             : mode == FUSED_AUTO ? "auto+lse"
             : mode == CHAINED    ? "chained"
                                  : "chained+weights",
             p->batch, heads_of(p), c->hkv, p->tq, p->tv, p->dk, p->dv ? p->dv : p->dk,
             (int)m->causal, (int)m->masked_row, m->has_value_mask, m->has_mask, m->has_bias,
             p->dropout.training ? (double)p->dropout.rate : 0.0, p->sliding_window);
}

static double max_abs(const float *x, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs((double)x[i]));
    return m;
}

static void check_grad(const char *what, const char *name, vkattn_tensor *t, const float *ref,
                       size_t n, double joint)
{
    float *got = th_download(t, n);
    char label[400];
    snprintf(label, sizeof label, "%s: %s", what, name);
    const double err = tu_max_rel_err(got, ref, n, fmax(FLOOR, JOINT_FLOOR * joint));
    if (!TU_WITHIN(err, BOUND))
        fail_msg("%s: max relative error %.3g exceeds bound %.3g", label, err, BOUND);
    free(got);
}

static void run_case(vkattn_context *ctx, bcase *c, run_mode mode)
{
    char what[320];
    describe(what, sizeof what, c, mode);
    const vkattn_sdpa_params *p = &c->p;
    vkattn_sdpa_backward_io io = {
        .q = th_tensor(ctx, c->nq, c->q), .k = th_tensor(ctx, c->nk, c->k),
        .v = th_tensor(ctx, c->nv, c->v), .bias = opt(ctx, c->bias, c->nbias),
        .value_mask = opt(ctx, c->vm, c->nvm), .mask = opt(ctx, c->mask, c->nmask),
        .grad_out = th_tensor(ctx, c->no, c->g),
        .grad_q = poisoned(ctx, c->nq), .grad_k = poisoned(ctx, c->nk),
        .grad_v = poisoned(ctx, c->nv),
    };
    vkattn_sdpa_params bp = *p;
    const bool fused = mode == FUSED || mode == FUSED_AUTO;
    if (mode != CHAINED) { /* run the forward for what the backward takes from it */
        vkattn_sdpa_params fp = *p;
        fp.path = fused ? VKATTN_SDPA_FUSED : VKATTN_SDPA_UNFUSED;
        fp.return_weights = mode == CHAINED_WEIGHTS;
        vkattn_sdpa_io fio = {.q = io.q, .k = io.k, .v = io.v, .bias = io.bias,
                              .value_mask = io.value_mask, .mask = io.mask,
                              .out = poisoned(ctx, c->no)};
        if (fused)
            fio.lse = poisoned(ctx, c->nw / p->tv);
        else
            fio.weights = poisoned(ctx, c->nw);
        TH_OK(ctx, vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &fp, &fio));
        io.out = fio.out, io.lse = fio.lse, io.weights = fio.weights;
    }
    bp.path = mode == FUSED        ? VKATTN_SDPA_FUSED
              : mode == FUSED_AUTO ? VKATTN_SDPA_AUTO
                                   : VKATTN_SDPA_UNFUSED;
    if (mode == FUSED && !fused_possible(ctx)) {
        assert_int_equal(vkattn_sdpa_backward_record(ctx, VKATTN_RUN_NOW, &bp, &io), VKATTN_ERROR_UNSUPPORTED);
        assert_non_null(strstr(vkattn_context_last_error(ctx),
                               "VKATTN_SDPA_FUSED but the fused backward cannot serve"));
        bp.path = VKATTN_SDPA_AUTO; /* falls back to the chained path */
    }
    TH_OK(ctx, vkattn_sdpa_backward_record(ctx, VKATTN_RUN_NOW, &bp, &io));
    const double joint = fmax(max_abs(c->ref_dq, c->nq),
                              fmax(max_abs(c->ref_dk, c->nk), max_abs(c->ref_dv, c->nv)));
    check_grad(what, "grad_q", io.grad_q, c->ref_dq, c->nq, joint);
    check_grad(what, "grad_k", io.grad_k, c->ref_dk, c->nk, joint);
    check_grad(what, "grad_v", io.grad_v, c->ref_dv, c->nv, joint);
    th_assert_validation_clean();
    vkattn_tensor *all[] = {io.q, io.k, io.v, io.bias, io.value_mask, io.mask, io.grad_out,
                            io.grad_q, io.grad_k, io.grad_v, io.out, io.lse, io.weights};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vkattn_tensor_destroy(all[i]);
}

static bool coin(void) { return tu_rand_range(0, 1) == 1; }

static bcase random_case(int idx)
{
    bcase c = {0};
    vkattn_sdpa_params *p = &c.p;
    static const uint32_t groups[] = {1, 2, 3};
    const uint32_t hkv = tu_rand_range(1, 2), g = groups[tu_rand_range(0, 2)];
    p->batch = tu_rand_range(1, 2);
    p->heads = hkv * g;
    p->kv_heads = hkv;
    p->tq = idx % 7 == 6 ? 1 : tu_rand_range(1, 37);
    p->tv = tu_rand_range(1, 45);
    p->dk = tu_rand_range(1, max_width);
    p->dv = coin() ? 0 : tu_rand_range(1, max_width);
    p->scale = coin() ? 0.0f : tu_rand_float(0.2f, 1.5f);
    vkattn_mask_params *m = &p->mask;
    rc_random_mask(m);
    if (idx % 3 == 2)
        p->dropout = (vkattn_dropout_params){.rate = tu_rand_float(0.1f, 0.6f), .training = true,
                                             .seed = tu_rand_u32(), .offset = tu_rand_range(0, 9)};
    return c;
}

static void test_random_chained(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 12; i++) {
        bcase c = random_case(i);
        make_case(&c);
        run_case(ctx, &c, i % 2 ? CHAINED_WEIGHTS : CHAINED);
        free_case(&c);
    }
}

static void random_fused(void **state, int cases)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < cases; i++) {
        bcase c = random_case(i);
        make_case(&c);
        run_case(ctx, &c, FUSED);
        free_case(&c);
    }
}

static void test_random_fused(void **state) { random_fused(state, 12); }

/* The GPU tuning's group in the default pass: fewer draws (CI's second pass
 * runs the full test_random_fused under the GPU tuning). */
static void test_random_fused_few(void **state) { random_fused(state, 5); }

/* The sliding window on random calls (1, within the lengths, or wider than
 * both), both paths: the key tiles outside the band skipped by the fused
 * kernels, masked by the chained softmax backward. */
static void test_window(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    /* Every path under every causal mode, the first three with a window
     * narrower than Tv (the band then cuts keys on both sides of a row), the
     * rest drawn from every width class. */
    for (int i = 0; i < 6; i++) {
        bcase c = random_case(i);
        c.p.mask.causal = (vkattn_causal)(i % 3);
        c.p.sliding_window = i < 3 ? 1 + tu_rand_range(0, c.p.tv > 1 ? c.p.tv - 2 : 0)
                                   : rc_random_window(c.p.tq, c.p.tv);
        make_case(&c);
        for (int mode = CHAINED; mode <= FUSED; mode++)
            run_case(ctx, &c, (run_mode)mode);
        free_case(&c);
    }
}

/* Hand-picked corners for both paths: bottom-right with Tq > Tv (rows with no
 * key) under each policy with dropout, a key block larger than one workgroup
 * (Tv = 150), and widths that are multiples of 4 (the vec4 loads). */
static void test_corners(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const vkattn_sdpa_params ps[] = {
        {.batch = 2, .heads = 2, .kv_heads = 1, .tq = 9, .tv = 4, .dk = 5, .dv = 3,
         .mask = {.causal = VKATTN_CAUSAL_BOTTOM_RIGHT, .masked_row = VKATTN_MASKED_ROW_UNIFORM,
                  .has_value_mask = true},
         .dropout = {.rate = 0.25f, .training = true, .seed = 9, .offset = 2}},
        {.batch = 2, .heads = 2, .tq = 9, .tv = 4, .dk = 5, .dv = 3,
         .mask = {.causal = VKATTN_CAUSAL_BOTTOM_RIGHT, .has_value_mask = true}},
        {.batch = 1, .heads = 4, .kv_heads = 2, .tq = 20, .tv = 150, .dk = 16, .dv = 8,
         .mask = {.causal = VKATTN_CAUSAL_TOP_LEFT}},
        {.batch = 1, .heads = 2, .tq = 70, .tv = 33, .dk = 8, .dv = 12,
         .mask = {.has_bias = true, .bias_broadcast = {.batch = true}},
         .dropout = {.rate = 0.5f, .training = true, .seed = 1234567890123ull}},
    };
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        for (int mode = CHAINED; mode <= FUSED; mode++) {
            bcase c = {.p = ps[i]};
            make_case(&c);
            run_case(ctx, &c, (run_mode)mode);
            free_case(&c);
        }
}

/* The GPU tuning's kernels at widths that split a key (dK, dV kernel) or a
 * query row (dQ kernel) over 2, 4, 8 and 16 lanes (over 16 to 64 under the
 * mali profile's budget of 64 live values), sizes off every tile, each with
 * a different mask form. Lanes within lavapipe's subgroup (8, or 4 with
 * LP_NATIVE_VECTOR_WIDTH=128) sum by shuffles, wider ones through shared
 * memory; the no-subgroups group runs the shared-memory sums everywhere. */
static void test_gpu_lanes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const vkattn_sdpa_params ps[] = {
        {.batch = 1, .heads = 2, .kv_heads = 1, .tq = 7, .tv = 13, .dk = 48, .dv = 40,
         .mask = {.causal = VKATTN_CAUSAL_TOP_LEFT},
         .dropout = {.rate = 0.3f, .training = true, .seed = 77, .offset = 5}},
        {.batch = 2, .heads = 3, .tq = 9, .tv = 6, .dk = 100, .dv = 36, .scale = 0.3f,
         .mask = {.causal = VKATTN_CAUSAL_BOTTOM_RIGHT, .has_mask = true, .has_bias = true,
                  .mask_broadcast = {.heads = true}, .bias_broadcast = {.batch = true}}},
        {.batch = 2, .heads = 1, .tq = 5, .tv = 9, .dk = 130, .dv = 129,
         .mask = {.has_value_mask = true, .masked_row = VKATTN_MASKED_ROW_UNIFORM}},
        {.batch = 1, .heads = 2, .kv_heads = 2, .tq = 3, .tv = 37, .dk = 256, .dv = 200,
         .dropout = {.rate = 0.5f, .training = true, .seed = 3}},
    };
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        bcase c = {.p = ps[i]};
        make_case(&c);
        run_case(ctx, &c, i % 2 ? FUSED_AUTO : FUSED);
        free_case(&c);
    }
}

/* Which kernels serve the fused backward, from the context's debug log
 * ("pipeline NAME created"): under the GPU tuning the GPU-shaped ones
 * (flash_backward_{stats,kv,q}_gpu, or their _sg twins), and AUTO picks them
 * when given the forward's lse; under the CPU tuning the CPU-shaped ones. */
static void test_kernel_choice(void **state)
{
    (void)TH_CTX(state);
    for (int tuning = VKATTN_TUNING_GPU; tuning <= VKATTN_TUNING_CPU; tuning++) {
        th_pipelines seen;
        vkattn_context *ctx = th_tuning_context(tuning, &seen);
        if (fused_possible(ctx)) {
            bcase c = {.p = {.batch = 1, .heads = 2, .kv_heads = 1, .tq = 5, .tv = 7, .dk = 24,
                             .dv = 8}};
            make_case(&c);
            run_case(ctx, &c, FUSED_AUTO);
            free_case(&c);
            const bool gpu = tuning == VKATTN_TUNING_GPU;
            const char *names[3] = {"flash_backward_stats", "flash_backward_kv",
                                    "flash_backward_q"};
            for (int k = 0; k < 3; k++) {
                char gpu_name[48];
                snprintf(gpu_name, sizeof gpu_name, "%s_gpu", names[k]);
                const bool used_gpu = th_pipeline_seen(&seen, gpu_name, true);
                const bool used_cpu = th_pipeline_seen(&seen, names[k], false);
                if (used_gpu != gpu || used_cpu == gpu)
                    fail_msg("%s tuning: %s %s, %s %s", gpu ? "GPU" : "CPU", gpu_name,
                             used_gpu ? "used" : "unused", names[k],
                             used_cpu ? "used" : "unused");
            }
        }
        vkattn_context_destroy(ctx);
    }
}

static void expect_fail(vkattn_context *ctx, const vkattn_sdpa_params *p,
                        const vkattn_sdpa_backward_io *io, const char *needle)
{
    vkattn_result r = vkattn_sdpa_backward_record(ctx, VKATTN_RUN_NOW, p, io);
    if (r != VKATTN_ERROR_INVALID_ARGUMENT)
        fail_msg("expected INVALID_ARGUMENT (%s), got %s: %s", needle, vkattn_result_name(r),
                 vkattn_context_last_error(ctx));
    if (!strstr(vkattn_context_last_error(ctx), needle))
        fail_msg("expected \"%s\" in: %s", needle, vkattn_context_last_error(ctx));
}

static void test_bad_arguments(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    enum { N = 64 };
    float x[N];
    tu_fill_uniform(x, N, -1, 1);
    vkattn_sdpa_params p = {.batch = 1, .heads = 2, .tq = 3, .tv = 4, .dk = 4};
    vkattn_tensor *t[12];
    for (int i = 0; i < 12; i++)
        t[i] = th_tensor(ctx, N, x);
    vkattn_tensor *small = th_tensor(ctx, 5, x);
    vkattn_sdpa_backward_io io = {.q = t[0], .k = t[1], .v = t[2], .grad_out = t[3],
                                  .grad_q = t[4], .grad_k = t[5], .grad_v = t[6]};
    p.path = VKATTN_SDPA_FUSED;
    if (fused_possible(ctx)) {
        expect_fail(ctx, &p, &io, "io->lse");
        io.lse = t[7];
        expect_fail(ctx, &p, &io, "io->out");
        io.lse = NULL;
    }
    p.path = VKATTN_SDPA_UNFUSED;
    io.grad_q = small;
    expect_fail(ctx, &p, &io, "io->grad_q");
    io.grad_q = t[4];
    io.grad_k = t[1];
    expect_fail(ctx, &p, &io, "io->grad_k");
    io.grad_k = t[5];
    io.grad_v = t[3];
    expect_fail(ctx, &p, &io, "io->grad_v");
    io.grad_v = t[5];
    expect_fail(ctx, &p, &io, "io->grad_v");
    io.grad_v = t[6];
    io.workspace[0] = t[4];
    expect_fail(ctx, &p, &io, "io->workspace[0]");
    io.workspace[0] = NULL;
    p.mask.has_mask = true;
    expect_fail(ctx, &p, &io, "io->mask");
    p.mask.has_mask = false;
    p.kv_heads = 3;
    expect_fail(ctx, &p, &io, "kv_heads");
    p.kv_heads = 0;
    /* the failed calls wrote nothing */
    for (int i = 4; i <= 6; i++) {
        float *got = th_download(t[i], N);
        assert_memory_equal(got, x, sizeof x);
        free(got);
    }
    TH_OK(ctx, vkattn_sdpa_backward_record(ctx, VKATTN_RUN_NOW, &p, &io));
    for (int i = 0; i < 12; i++)
        vkattn_tensor_destroy(t[i]);
    vkattn_tensor_destroy(small);
    th_assert_validation_clean();
}

static int setup_gpu(void **state)
{
    max_width = 72;
    return th_setup_gpu_tuning(state);
}
static int teardown_gpu(void **state)
{
    max_width = 20;
    return th_teardown_gpu_tuning(state);
}
/* The shared-memory lane sums at every lane count. */
static int setup_gpu_no_subgroups(void **state)
{
    th_force_no_subgroups(true);
    return setup_gpu(state);
}
static int teardown_gpu_no_subgroups(void **state)
{
    th_force_no_subgroups(false);
    return teardown_gpu(state);
}
/* The mali profile: a budget of 64 live values, so more lanes per key or
 * row. */
static int setup_gpu_mali(void **state)
{
    return th_setup_gpu_tuning_profile(state, "mali");
}

int main(void)
{
    const struct CMUnitTest tests[] = {TU_TESTS(
        test_random_chained, test_random_fused, test_window, test_corners, test_bad_arguments,
        test_kernel_choice)};
    /* The GPU tuning's kernels in every CI pass (CI's second pass runs the
     * groups above under the GPU tuning as well). */
    const struct CMUnitTest gpu[] = {TU_TESTS(test_random_fused_few, test_gpu_lanes)};
    const struct CMUnitTest lanes[] = {cmocka_unit_test(test_gpu_lanes)};
    int failed = TH_RUN_WITH_MOBILE("sdpa backward", tests);
    failed += cmocka_run_group_tests_name("sdpa backward, GPU tuning", gpu, setup_gpu,
                                          teardown_gpu);
    failed += cmocka_run_group_tests_name("sdpa backward, GPU tuning, no subgroups", lanes,
                                          setup_gpu_no_subgroups, teardown_gpu_no_subgroups);
    return failed + cmocka_run_group_tests_name("sdpa backward, GPU tuning, mali", lanes,
                                                setup_gpu_mali, teardown_gpu);
}
