/* The cooperative-matrix families and their on-device self-test
 * (ops/coopmat_selftest.h), both ways, on the emulated family (any device):
 * - reported per family: built, and why a family is not tried;
 * - the emulation passes its self-test under AUTO and then runs;
 * - with the emulated fragments broken on purpose (coopmat_test_fault) the
 *   self-test fails, names the first wrong element, logs a WARN, and f16
 *   products and fused f16 attention take the scalar kernels and are right;
 * - the emulation's backward check passes and an f16 fused backward then
 *   takes the fragment kernels; broken, the check refuses them on its own
 *   (the backward's choice follows only its own check) and the backward
 *   takes the scalar kernels, right;
 * - under ON the same broken family runs untested and is wrong: the fault is
 *   real, so the checks above could fail;
 * - the outcome is reused by a later context of the same device;
 * - coopmat_families refuses unknown bits and leaves families out;
 * - OFF runs no fragment kernel, the emulation's included.
 * A hardware family a device offers must end PASSED or FAILED, never run
 * untested under AUTO. */
#include "backward_coopmat_bound.h"
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vkattn/matmul.h>
#include <vkattn/reference.h>
#include <vkattn/reference_backward.h>
#include <vkattn/sdpa.h>
#include <vkattn/sdpa_backward.h>

#define EMU_INDEX 3 /* VKATTN_COOPMAT_EMULATED's bit position */

/* What a context logged: library WARNs, and the pipelines it created. */
typedef struct logged {
    unsigned warnings;
    char last_warning[512];
    th_pipelines seen;
} logged;

static void on_log(void *user, vkattn_log_level level, vkattn_log_source source, const char *msg)
{
    logged *l = user;
    if (source == VKATTN_LOG_SOURCE_VALIDATION) {
        if (level <= VKATTN_LOG_WARN)
            fail_msg("validation: %s", msg);
        return;
    }
    if (level == VKATTN_LOG_WARN) {
        l->warnings++;
        snprintf(l->last_warning, sizeof l->last_warning, "%s", msg);
    }
    char name[48];
    if (sscanf(msg, "pipeline %47s created", name) == 1 &&
        l->seen.count < sizeof l->seen.names / sizeof l->seen.names[0])
        memcpy(l->seen.names[l->seen.count++], name, sizeof name);
}

/* A context under the GPU tuning with these cooperative-matrix settings,
 * logging into *l (cleared first). */
static vkattn_context *context_with(const vkattn_context_advanced *settings, logged *l)
{
    vkattn_context_desc desc = th_context_desc();
    vkattn_context_advanced adv = *settings;
    desc.advanced = &adv;
    desc.log = on_log;
    desc.log_user = l;
    desc.log_level = VKATTN_LOG_DEBUG;
    memset(l, 0, sizeof *l);
    vkattn_context *ctx = NULL;
    TH_OK(NULL, vkattn_context_create(&desc, &ctx));
    return ctx;
}

static vkattn_context_advanced emulation(vkattn_coopmat_mode mode, bool fault)
{
    vkattn_context_advanced adv = th_advanced();
    adv.tuning = VKATTN_TUNING_GPU;
    adv.coopmat_emulate = true;
    adv.cooperative_matrix = mode;
    adv.coopmat_test_fault = fault;
    return adv;
}

/* An f16 product off the 16 grid against the reference; returns the largest
 * error over matmul.h's bound for it, (K + 2) 2^-23 sum|a||b| with |a|, |b|
 * <= 1 (the f32 C's ulp term is below it), K 2^-23 (K + 2) in all. */
static double matmul_error(vkattn_context *ctx)
{
    const uint32_t m = 37, n = 29, k = 45;
    float *a = th_half_uniform((size_t)m * k, 1.0f), *b = th_half_uniform((size_t)k * n, 1.0f);
    float *ref = tu_floats((size_t)m * n);
    const vkattn_matmul_params p = {.m = m, .n = n, .k = k};
    const vkattn_matmul_dtypes f32 = {0};
    assert_int_equal(vkattn_reference_matmul(&p, &f32, a, b, NULL, ref), VKATTN_SUCCESS);
    vkattn_tensor *ta = th_typed_tensor(ctx, (size_t)m * k, VKATTN_DTYPE_F16, a);
    vkattn_tensor *tb = th_typed_tensor(ctx, (size_t)k * n, VKATTN_DTYPE_F16, b);
    vkattn_tensor *tc = th_tensor(ctx, (size_t)m * n, NULL);
    const vkattn_matmul_io io = {.a = ta, .b = tb, .c = tc};
    TH_OK(ctx, vkattn_matmul_record(ctx, VKATTN_RUN_NOW, &p, &io));
    float *got = th_download(tc, (size_t)m * n);
    const double err = tu_max_abs_err(got, ref, (size_t)m * n) / (k * (k + 2.0) * 0x1p-23);
    vkattn_tensor_destroy(ta);
    vkattn_tensor_destroy(tb);
    vkattn_tensor_destroy(tc);
    free(a);
    free(b);
    free(ref);
    free(got);
    return err;
}

/* A masked, causal f16 attention call (GQA, sizes off the tiles) against the
 * reference; returns the largest error over 2^-9: the fused f16 kernels are
 * within 2^-11 + Tv 2^-25 of it for |V| <= 1 (docs/SEMANTICS.md, SDPA,
 * the cooperative-matrix term included) and fp32's rounding far below. */
static double attention_error(vkattn_context *ctx)
{
    const vkattn_sdpa_params p = {
        .batch = 1, .heads = 4, .kv_heads = 2, .tq = 37, .tv = 53, .dk = 24, .dv = 40,
        .mask = {.causal = VKATTN_CAUSAL_BOTTOM_RIGHT, .has_mask = true,
                 .mask_broadcast = {.heads = true}},
        .path = VKATTN_SDPA_FUSED,
    };
    const size_t nq = 4 * 37 * 24, nk = 2 * 53 * 24, nv = 2 * 53 * 40, no = 4 * 37 * 40;
    float *q = th_half_uniform(nq, 1.0f), *k = th_half_uniform(nk, 1.0f);
    float *v = th_half_uniform(nv, 1.0f), *mask = tu_floats(37 * 53), *ref = tu_floats(no);
    tu_fill_mask(mask, 37 * 53, 0.8f);
    const vkattn_sdpa_dtypes f32 = {0};
    assert_int_equal(vkattn_reference_sdpa(&p, &f32, q, k, v, NULL, NULL, mask, ref, NULL),
                     VKATTN_SUCCESS);
    vkattn_tensor *tq = th_typed_tensor(ctx, nq, VKATTN_DTYPE_F16, q);
    vkattn_tensor *tk = th_typed_tensor(ctx, nk, VKATTN_DTYPE_F16, k);
    vkattn_tensor *tv = th_typed_tensor(ctx, nv, VKATTN_DTYPE_F16, v);
    vkattn_tensor *tm = th_tensor(ctx, 37 * 53, mask), *to = th_tensor(ctx, no, NULL);
    const vkattn_sdpa_io io = {.q = tq, .k = tk, .v = tv, .mask = tm, .out = to};
    TH_OK(ctx, vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &p, &io));
    float *got = th_download(to, no);
    const double err = tu_max_abs_err(got, ref, no) / 0x1p-9;
    vkattn_tensor *all[] = {tq, tk, tv, tm, to};
    for (size_t i = 0; i < 5; i++)
        vkattn_tensor_destroy(all[i]);
    free(q);
    free(k);
    free(v);
    free(mask);
    free(ref);
    free(got);
    return err;
}

/* An f16 fused SDPA backward (GQA, causal, sizes off the fragments) against
 * the reference; returns the largest error over its bound, per gradient
 * 1e-4 (the f32 backward's) plus the f16 roundings of P and dS
 * (backward_coopmat_bound.h), relative to the gradient's largest value. */
static double backward_error(vkattn_context *ctx)
{
    const vkattn_sdpa_params p = {
        .batch = 1, .heads = 4, .kv_heads = 2, .tq = 29, .tv = 45, .dk = 24, .dv = 40,
        .mask = {.causal = VKATTN_CAUSAL_BOTTOM_RIGHT},
        .path = VKATTN_SDPA_FUSED,
    };
    const size_t n[3] = {4 * 29 * 24, 2 * 45 * 24, 2 * 45 * 40}, no = 4 * 29 * 40;
    float *x[3], *ref[3], *g = th_half_uniform(no, 1.0f);
    vkattn_tensor *t[3], *dt[3];
    for (int i = 0; i < 3; i++) {
        x[i] = th_half_uniform(n[i], 1.0f), ref[i] = tu_floats(n[i]);
        t[i] = th_typed_tensor(ctx, n[i], VKATTN_DTYPE_F16, x[i]);
        dt[i] = th_tensor(ctx, n[i], NULL);
    }
    assert_int_equal(vkattn_reference_sdpa_backward(&p, x[0], x[1], x[2], NULL, NULL, NULL, g,
                                                    ref[0], ref[1], ref[2]),
                     VKATTN_SUCCESS);
    double extra[3];
    const bcb_inputs in = {x[0], x[1], x[2], g, NULL, NULL, NULL};
    bcb_bound(&p, &in, &extra[0], &extra[1], &extra[2]);
    vkattn_tensor *tg = th_typed_tensor(ctx, no, VKATTN_DTYPE_F16, g);
    vkattn_tensor *out = th_tensor(ctx, no, NULL), *lse = th_tensor(ctx, 4 * 29, NULL);
    const vkattn_sdpa_io fio = {.q = t[0], .k = t[1], .v = t[2], .out = out, .lse = lse};
    const vkattn_sdpa_backward_io bio = {.q = t[0], .k = t[1], .v = t[2], .out = out,
                                         .lse = lse, .grad_out = tg, .grad_q = dt[0],
                                         .grad_k = dt[1], .grad_v = dt[2]};
    TH_OK(ctx, vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &p, &fio));
    TH_OK(ctx, vkattn_sdpa_backward_record(ctx, VKATTN_RUN_NOW, &p, &bio));
    double worst = 0.0;
    for (int i = 0; i < 3; i++) {
        float *got = th_download(dt[i], n[i]);
        double scale = 1e-2;
        for (size_t e = 0; e < n[i]; e++)
            scale = fmax(scale, fabs((double)ref[i][e]));
        const double err = tu_max_rel_err(got, ref[i], n[i], scale);
        worst = fmax(worst, err / (1e-4 + extra[i] / scale));
        free(got), free(x[i]), free(ref[i]);
        vkattn_tensor_destroy(t[i]);
        vkattn_tensor_destroy(dt[i]);
    }
    vkattn_tensor_destroy(tg);
    vkattn_tensor_destroy(out);
    vkattn_tensor_destroy(lse);
    free(g);
    return worst;
}

/* A context running the emulation (context_with, emulation(mode, fault)) and
 * its info; skips where the emulated kernels have no tile (mobile-min's 16 KiB
 * of shared memory) or no 8 storage buffers: nothing to test there. */
static vkattn_context *emulated_or_skip(vkattn_coopmat_mode mode, bool fault, logged *l,
                                        vkattn_context_info *info)
{
    const vkattn_context_advanced adv = emulation(mode, fault);
    vkattn_context *ctx = context_with(&adv, l);
    TH_OK(ctx, vkattn_context_get_info(ctx, info));
    if (info->max_shared_memory < 32768 || info->max_storage_buffers_per_stage < 8) {
        vkattn_context_destroy(ctx);
        skip();
    }
    return ctx;
}

static void test_reported_families(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_context_info info;
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    /* every build holds NV coopmat1 and the emulation; KHR and NV2 with a
     * newer glslc (cmake/ShaderFamilies.cmake) */
    assert_true(info.coopmat_built & VKATTN_COOPMAT_NV);
    assert_true(info.coopmat_built & VKATTN_COOPMAT_EMULATED);
    assert_int_equal(info.coopmat_built & ~0xfu, 0);
    print_message("families built: 0x%x, offered 0x%x, running 0x%x on %s\n", info.coopmat_built,
                  info.coopmat_flavours, info.coopmat_running, info.device_name);
    for (int i = 0; i < VKATTN_COOPMAT_FAMILIES; i++) {
        const vkattn_coopmat_check *c = &info.coopmat_check[i];
        print_message("  family %d: state %d: %s\n", i, (int)c->state, c->detail);
        assert_true(c->detail[0] != '\0');
        /* under AUTO nothing runs untested */
        assert_int_not_equal(c->state, VKATTN_COOPMAT_FORCED);
        if (!(info.coopmat_flavours & (1u << i)))
            assert_int_equal(c->state, VKATTN_COOPMAT_NOT_TRIED);
        if (c->state == VKATTN_COOPMAT_PASSED) /* a passed family runs, or one preferred to it */
            assert_int_not_equal(info.coopmat_running, 0);
    }
    assert_int_equal(info.coopmat_check[EMU_INDEX].state, VKATTN_COOPMAT_NOT_TRIED);
    assert_non_null(strstr(info.coopmat_check[EMU_INDEX].detail, "coopmat_emulate"));
    if (!(info.coopmat_built & VKATTN_COOPMAT_KHR))
        assert_non_null(strstr(info.coopmat_check[1].detail,
                               info.coopmat_flavours & VKATTN_COOPMAT_KHR ? "not built"
                                                                          : "does not offer"));
}

/* The emulated fragment backward ran: its module reading f16 as it is (16-bit
 * storage) or the one reading f32 copies (ops/flash_backward_coopmat.c). */
static bool backward_emu_seen(const th_pipelines *seen)
{
    return th_pipeline_seen(seen, "flash_backward_f16_coopmat_emu", false) ||
           th_pipeline_seen(seen, "flash_backward_coopmat_emu", false);
}

static void test_emulation_passes(void **state)
{
    (void)TH_CTX(state);
    logged l;
    vkattn_context_info info;
    vkattn_context *ctx = emulated_or_skip(VKATTN_COOPMAT_AUTO, false, &l, &info);
    const vkattn_coopmat_check *c = &info.coopmat_check[EMU_INDEX];
    print_message("emulated: %s%s\n", c->detail, c->cached ? " (cached)" : "");
    assert_int_equal(c->state, VKATTN_COOPMAT_PASSED);
    assert_int_equal(info.coopmat_running, VKATTN_COOPMAT_EMULATED);
    assert_true(info.coopmat_attention);
    assert_int_equal(l.warnings, 0);
    /* a later context of the same device takes the outcome as it is */
    logged l2;
    const vkattn_context_advanced adv = emulation(VKATTN_COOPMAT_AUTO, false);
    vkattn_context *again = context_with(&adv, &l2);
    vkattn_context_info info2;
    TH_OK(again, vkattn_context_get_info(again, &info2));
    assert_true(info2.coopmat_check[EMU_INDEX].cached);
    assert_int_equal(info2.coopmat_check[EMU_INDEX].state, VKATTN_COOPMAT_PASSED);
    assert_int_equal(l2.seen.count, 0); /* no pipeline: no test ran */
    assert_true(matmul_error(again) <= 1.0);
    assert_true(th_pipeline_seen(&l2.seen, "matmul_coopmat_emu", false));
    assert_true(attention_error(again) <= 1.0);
    assert_true(th_pipeline_seen(&l2.seen, "flash_coopmat_emu", false));
    assert_non_null(strstr(c->detail, "1 backward with the CPU answer"));
    assert_true(backward_error(again) <= 1.0);
    assert_true(backward_emu_seen(&l2.seen));
    vkattn_context_destroy(again);
    vkattn_context_destroy(ctx);
}

static void test_broken_family_refused(void **state)
{
    (void)TH_CTX(state);
    logged l;
    vkattn_context_info info;
    vkattn_context *ctx = emulated_or_skip(VKATTN_COOPMAT_AUTO, true, &l, &info);
    const vkattn_coopmat_check *c = &info.coopmat_check[EMU_INDEX];
    print_message("broken emulation: %s (index %llu, got %g, expected %g)%s\n", c->detail,
                  (unsigned long long)c->index, (double)c->got, (double)c->expected,
                  c->cached ? " (cached)" : "");
    assert_int_equal(c->state, VKATTN_COOPMAT_FAILED);
    assert_non_null(strstr(c->detail, "matmul"));
    assert_true(fabsf(c->got - c->expected) > 0.5f); /* the fault is one whole unit */
    assert_int_equal(info.coopmat_running, 0);
    assert_false(info.coopmat_attention);
    if (!c->cached) {
        assert_int_equal(l.warnings, 1);
        assert_non_null(strstr(l.last_warning, "failed its self-test"));
    }
    /* the calls take the scalar kernels, and are right */
    l.seen.count = 0;
    assert_true(matmul_error(ctx) <= 1.0);
    assert_true(attention_error(ctx) <= 1.0);
    assert_true(backward_error(ctx) <= 1.0);
    assert_false(th_pipeline_seen(&l.seen, "matmul_coopmat", true));
    assert_false(th_pipeline_seen(&l.seen, "flash_coopmat", true));
    assert_false(th_pipeline_seen(&l.seen, "flash_backward_coopmat", true) ||
                 th_pipeline_seen(&l.seen, "flash_backward_f16_coopmat", true));
    vkattn_context_destroy(ctx);
}

/* ON runs the broken family without a test: its answers are wrong, which is
 * what the self-test protects AUTO from. */
static void test_fault_is_real(void **state)
{
    (void)TH_CTX(state);
    logged l;
    vkattn_context_info info;
    vkattn_context *ctx = emulated_or_skip(VKATTN_COOPMAT_ON, true, &l, &info);
    assert_int_equal(info.coopmat_check[EMU_INDEX].state, VKATTN_COOPMAT_FORCED);
    assert_int_equal(info.coopmat_running, VKATTN_COOPMAT_EMULATED);
    assert_true(matmul_error(ctx) > 100.0);
    assert_true(attention_error(ctx) > 10.0);
    l.seen.count = 0;
    const double backward = backward_error(ctx);
    print_message("broken backward, untested: %g x its bound\n", backward);
    assert_true(backward_emu_seen(&l.seen));
    assert_true(backward > 10.0);
    vkattn_context_destroy(ctx);
}

static void test_families_mask(void **state)
{
    (void)TH_CTX(state);
    vkattn_context_advanced adv = emulation(VKATTN_COOPMAT_AUTO, false);
    adv.coopmat_families = 0x10;
    vkattn_context_desc desc = th_context_desc();
    desc.advanced = &adv;
    vkattn_context *ctx = NULL;
    TH_EXPECT_ERROR(vkattn_context_create(&desc, &ctx), VKATTN_ERROR_INVALID_ARGUMENT,
                    "advanced->coopmat_families");
    assert_null(ctx);
    adv.coopmat_families = VKATTN_COOPMAT_NV | VKATTN_COOPMAT_KHR;
    logged l;
    ctx = context_with(&adv, &l);
    vkattn_context_info info;
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    assert_int_equal(info.coopmat_running, 0);
    assert_false(info.coopmat_attention);
    assert_int_equal(info.coopmat_check[EMU_INDEX].state, VKATTN_COOPMAT_NOT_TRIED);
    assert_non_null(strstr(info.coopmat_check[EMU_INDEX].detail, "coopmat_families"));
    vkattn_context_destroy(ctx);
    /* the CPU tuning runs no cooperative-matrix kernel, emulated or not */
    adv.coopmat_families = 0;
    adv.tuning = VKATTN_TUNING_CPU;
    ctx = context_with(&adv, &l);
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    assert_int_equal(info.coopmat_running, 0);
    assert_non_null(strstr(info.coopmat_check[EMU_INDEX].detail, "CPU tuning"));
    vkattn_context_destroy(ctx);
}

/* vkattn_context_advanced.variants (the variant sweep's override): an index
 * above the family's count is refused naming the field; forced variants run
 * their family's kernel within its bound; one that does not fit (lavapipe's
 * 32 KiB of shared memory against the 128 x 128 x 32 tiles' 48 KiB) is
 * logged naming the field and the call runs another kernel, still right. */
static void test_variants(void **state)
{
    (void)TH_CTX(state);
    vkattn_context_advanced adv = emulation(VKATTN_COOPMAT_AUTO, false);
    adv.variants[VKATTN_VARIANT_FLASH_COOPMAT] = VKATTN_VARIANTS_FLASH_COOPMAT + 1;
    vkattn_context_desc desc = th_context_desc();
    desc.advanced = &adv;
    vkattn_context *ctx = NULL;
    TH_EXPECT_ERROR(vkattn_context_create(&desc, &ctx), VKATTN_ERROR_INVALID_ARGUMENT,
                    "advanced->variants[3]");
    assert_null(ctx);
    /* 64 x 64 x 32 tiles of 2 x 2 warps; 2 warps and 32 keys */
    adv.variants[VKATTN_VARIANT_FLASH_COOPMAT] = 3;
    adv.variants[VKATTN_VARIANT_MATMUL_COOPMAT] = 2;
    logged l;
    vkattn_context_info info;
    ctx = context_with(&adv, &l);
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    if (info.max_shared_memory < 32768 || info.max_storage_buffers_per_stage < 8) {
        vkattn_context_destroy(ctx); /* no emulated kernel to force here (mobile-min) */
        skip();
    }
    assert_true(matmul_error(ctx) <= 1.0);
    assert_true(attention_error(ctx) <= 1.0);
    assert_true(th_pipeline_seen(&l.seen, "matmul_coopmat_emu", false));
    assert_true(th_pipeline_seen(&l.seen, "flash_coopmat_emu", false));
    assert_int_equal(l.warnings, 0);
    vkattn_context_destroy(ctx);
    adv.variants[VKATTN_VARIANT_MATMUL_COOPMAT] = 1;
    ctx = context_with(&adv, &l);
    assert_true(matmul_error(ctx) <= 1.0);
    if (info.max_shared_memory < 49152) {
        assert_int_equal(l.warnings, 1);
        assert_non_null(strstr(l.last_warning, "advanced->variants[1] (matmul_coopmat) = 1"));
        assert_false(th_pipeline_seen(&l.seen, "matmul_coopmat", true));
    } else {
        assert_true(th_pipeline_seen(&l.seen, "matmul_coopmat_emu", false));
    }
    vkattn_context_destroy(ctx);
}

/* cooperative_matrix OFF wins over coopmat_emulate: "OFF never"
 * (vkattn/advanced.h), so an f16 product takes the scalar kernel, right. */
static void test_off_wins_over_emulation(void **state)
{
    (void)TH_CTX(state);
    logged l;
    vkattn_context_info info;
    vkattn_context *ctx = emulated_or_skip(VKATTN_COOPMAT_OFF, false, &l, &info);
    const vkattn_coopmat_check *c = &info.coopmat_check[EMU_INDEX];
    print_message("emulation under OFF: %s\n", c->detail);
    assert_int_equal(info.coopmat_running, 0);
    assert_false(info.coopmat_attention);
    assert_int_equal(c->state, VKATTN_COOPMAT_NOT_TRIED);
    assert_non_null(strstr(c->detail, "OFF"));
    assert_true(matmul_error(ctx) <= 1.0);
    assert_false(th_pipeline_seen(&l.seen, "matmul_coopmat", true));
    vkattn_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {TU_TESTS(
        test_reported_families, test_emulation_passes, test_broken_family_refused,
        test_fault_is_real, test_families_mask, test_variants,
        test_off_wins_over_emulation)};
    return cmocka_run_group_tests_name("cooperative-matrix self-test", tests, th_setup,
                                       th_teardown);
}
