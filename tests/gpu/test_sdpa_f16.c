/* SDPA with f16 q, k, v and out vs vkattn_reference_sdpa.
 *
 * Random shapes on both paths (fused and chained): odd sizes, Tq != Tv,
 * dk != dv (odd dv included: the packed-halves kernel then writes out through
 * f32 scratch), batch 1, grouped K/V heads, every mask kind with broadcasts,
 * both causal alignments, both masked-row policies, bias, dropout, the LSE
 * (fused) and returned f32 or f16 weights (chained). Each of q, k, v, out is f16 or
 * f32 at random, at least one f16; inputs are random values exactly
 * representable in their type; outputs poisoned with NaN first. The typed
 * reference takes the f16 arrays as bit patterns and rounds an f16 out once.
 * Bound (vkattn/sdpa.h): max|got - ref| <= (2e-5 + e16) max|ref| for an f16
 * out, e16 = 2^-10 (f16 epsilon: the two roundings to f16 differ by at most
 * one f16 spacing of |ref| <= max|ref|), and 2e-5 max|ref| for an f32 out;
 * returned weights likewise (+ e16 when f16: rounded once from the f32 ones).
 * Bad inputs: f16 masks or bias (INVALID_ARGUMENT naming the tensor and both
 * types), f16 weights with an app workspace too small for the f32 scores.
 * Run under the default profile and mobile-min (packed halves, 4 storage
 * buffers), then both under the GPU tuning: f16 fused calls take the tiled
 * kernel (flash_tiled*.comp reads f16 as words of halves and writes an f16
 * out as words; odd dv through f32 scratch) where the device binds 8 storage
 * buffers, as f32 calls do (test_kernel_choice). */
#include "harness.h"
#include "random_case.h"

#include <vkattn/half.h>
#include <vkattn/reference.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOUND32 2e-5
#define EPS16 0x1p-10

typedef struct f16_case {
    vkattn_sdpa_params p;
    vkattn_sdpa_dtypes ty;
    bool lse;
    bool weights16; /* returned weights as an f16 tensor */
} f16_case;

/* Random values in [-1, 1] exactly representable in t; for an f16 operand
 * also their bit patterns (bits), which the typed reference reads. */
static float *operand(size_t n, vkattn_dtype t, uint16_t **bits)
{
    float *x = tu_floats(n);
    tu_fill_uniform(x, n, -1, 1);
    *bits = NULL;
    if (t == VKATTN_DTYPE_F16) {
        *bits = malloc(sizeof(uint16_t) * (n ? n : 1));
        assert_non_null(*bits);
        for (size_t i = 0; i < n; i++) {
            (*bits)[i] = tu_f16_bits(x[i]);
            x[i] = tu_f16_to_f32((*bits)[i]);
        }
    }
    return x;
}

static void describe(const f16_case *c, char *buf, size_t size)
{
    const vkattn_sdpa_params *p = &c->p;
    const vkattn_mask_params *m = &p->mask;
    snprintf(buf, size,
             "sdpa f16 q%d k%d v%d out%d B=%u H=%u Hkv=%u Tq=%u Tv=%u dk=%u dv=%u causal=%d "
             "row=%d vm=%d mask=%d bias=%d drop=%g/%d w=%d/%d lse=%d path=%d",
             c->ty.q, c->ty.k, c->ty.v, c->ty.out, p->batch, p->heads, p->kv_heads, p->tq, p->tv,
             p->dk, p->dv, m->causal, m->masked_row, m->has_value_mask, m->has_mask, m->has_bias,
             (double)p->dropout.rate, p->dropout.training, p->return_weights, c->weights16, c->lse,
             p->path);
}

static void run_case(vkattn_context *ctx, const f16_case *c)
{
    const vkattn_sdpa_params *p = &c->p;
    const uint32_t hkv = p->kv_heads ? p->kv_heads : p->heads, dv = p->dv ? p->dv : p->dk;
    const size_t nq = (size_t)p->batch * p->heads * p->tq * p->dk;
    const size_t nk = (size_t)p->batch * hkv * p->tv * p->dk;
    const size_t nv = (size_t)p->batch * hkv * p->tv * dv;
    const size_t nout = (size_t)p->batch * p->heads * p->tq * dv;
    const size_t nw = (size_t)p->batch * p->heads * p->tq * p->tv;
    const size_t nrows = (size_t)p->batch * p->heads * p->tq;
    const size_t nbias = p->mask.has_bias ? rc_bcast_count(p, p->mask.bias_broadcast) : 0;
    const size_t nmask = p->mask.has_mask ? rc_bcast_count(p, p->mask.mask_broadcast) : 0;
    const size_t nvm = p->mask.has_value_mask ? (size_t)p->batch * p->tv : 0;
    uint16_t *q16, *k16, *v16;
    float *q = operand(nq, c->ty.q, &q16), *k = operand(nk, c->ty.k, &k16);
    float *v = operand(nv, c->ty.v, &v16);
    float *bias = tu_floats(nbias + 1), *mask = tu_floats(nmask + 1), *vm = tu_floats(nvm + 1);
    tu_fill_uniform(bias, nbias, -1, 1);
    tu_fill_mask(mask, nmask, 0.75f);
    tu_fill_mask(vm, nvm, 0.8f);
    float *ref = tu_floats(nout), *ref_w = tu_floats(nw);
    uint16_t *ref16 = malloc(sizeof(uint16_t) * nout);
    assert_non_null(ref16);
    const bool out16 = c->ty.out == VKATTN_DTYPE_F16;
    TH_OK(ctx, vkattn_reference_sdpa(
                   p, &c->ty, q16 ? (const void *)q16 : q, k16 ? (const void *)k16 : k,
                   v16 ? (const void *)v16 : v, nbias ? bias : NULL, nvm ? vm : NULL,
                   nmask ? mask : NULL, out16 ? (void *)ref16 : ref,
                   p->return_weights ? ref_w : NULL));
    if (out16)
        for (size_t i = 0; i < nout; i++)
            ref[i] = tu_f16_to_f32(ref16[i]);

    vkattn_sdpa_io io = {
        .q = th_typed_tensor(ctx, nq, c->ty.q, q), .k = th_typed_tensor(ctx, nk, c->ty.k, k),
        .v = th_typed_tensor(ctx, nv, c->ty.v, v), .out = th_typed_tensor(ctx, nout, c->ty.out, NULL),
        .bias = nbias ? th_tensor(ctx, nbias, bias) : NULL,
        .mask = nmask ? th_tensor(ctx, nmask, mask) : NULL,
        .value_mask = nvm ? th_tensor(ctx, nvm, vm) : NULL,
        .weights = p->return_weights
                       ? th_typed_tensor(ctx, nw, c->weights16 ? VKATTN_DTYPE_F16 : VKATTN_DTYPE_F32,
                                      NULL)
                       : NULL,
        .lse = c->lse ? th_tensor(ctx, nrows, NULL) : NULL,
    };
    TH_OK(ctx, vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, p, &io));
    char what[400];
    describe(c, what, sizeof what);
    float *got = tu_floats(nout);
    TH_OK(ctx, vkattn_tensor_download(io.out, got, 0, nout));
    TU_ASSERT_CLOSE(got, ref, nout, BOUND32 + (out16 ? EPS16 : 0.0), what);
    free(got);
    if (p->return_weights) {
        got = th_download(io.weights, nw);
        strncat(what, " (weights)", sizeof what - strlen(what) - 1);
        TU_ASSERT_CLOSE(got, ref_w, nw, BOUND32 + (c->weights16 ? EPS16 : 0.0), what);
        free(got);
    }
    if (c->lse) { /* without masks or bias: log sum_j exp(scale q.k), in double */
        const vkattn_mask_params *m = &p->mask;
        const bool plain = !m->has_bias && !m->has_mask && !m->has_value_mask && !m->causal;
        const double scale = p->scale != 0.0f ? p->scale : 1.0 / sqrt((double)p->dk);
        got = th_download(io.lse, nrows);
        for (size_t r = 0; r < nrows && plain; r++) {
            const size_t bh = r / p->tq, kv = (bh / p->heads) * hkv + (bh % p->heads) / (p->heads / hkv);
            double sum = 0.0;
            for (uint32_t j = 0; j < p->tv; j++) {
                double dot = 0.0;
                for (uint32_t e = 0; e < p->dk; e++)
                    dot += (double)q[r * p->dk + e] * k[(kv * p->tv + j) * p->dk + e];
                sum += exp(dot * scale);
            }
            if (!(fabs(got[r] - log(sum)) <= 1e-5 * (1.0 + fabs(log(sum)))))
                fail_msg("%s: lse[%zu] = %g; expected %g", what, r, got[r], log(sum));
        }
        for (size_t r = 0; r < nrows; r++)
            assert_false(isnan(got[r]));
        free(got);
    }
    th_assert_validation_clean();
    vkattn_tensor *ts[] = {io.q, io.k, io.v, io.out, io.bias, io.mask, io.value_mask, io.weights,
                           io.lse};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        vkattn_tensor_destroy(ts[i]);
    void *fs[] = {q, k, v, q16, k16, v16, bias, mask, vm, ref, ref_w, ref16};
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
        free(fs[i]);
}

static vkattn_sdpa_dtypes random_types(void)
{
    vkattn_sdpa_dtypes t;
    do
        t = (vkattn_sdpa_dtypes){(vkattn_dtype)tu_rand_range(0, 1),
                                 (vkattn_dtype)tu_rand_range(0, 1),
                                 (vkattn_dtype)tu_rand_range(0, 1),
                                 (vkattn_dtype)tu_rand_range(0, 1)};
    while (!(t.q || t.k || t.v || t.out));
    return t;
}

/* Random params (random_case.h, batch and K/V heads 1..2) and types. */
static f16_case random_case(bool fused, uint32_t max_t, uint32_t max_d)
{
    const rc_sdpa_bounds bounds = {.max_batch = 2, .max_kv_heads = 2, .max_t = max_t,
                                   .max_d = max_d};
    f16_case c = {.p = rc_random_sdpa(&bounds), .ty = random_types()};
    c.p.path = fused ? VKATTN_SDPA_FUSED : VKATTN_SDPA_UNFUSED;
    if (fused)
        c.lse = tu_rand_range(0, 1);
    else
        c.p.return_weights = tu_rand_range(0, 1), c.p.weights_after_dropout = tu_rand_range(0, 1),
        c.weights16 = tu_rand_range(0, 1);
    return c;
}

static void test_fused_random(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 14; i++) {
        f16_case c = random_case(true, 40, 20);
        run_case(ctx, &c);
    }
}

static void test_chained_random(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 14; i++) {
        f16_case c = random_case(false, 40, 20);
        run_case(ctx, &c);
    }
}

/* All-f16 edges on both paths: one query, one key, odd and even widths, the
 * vec4 widths (aligned half loads), GQA, causal both ways. */
static void test_edges(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const uint32_t shapes[][8] = {
        /* B, H, Hkv, Tq, Tv, dk, dv, causal */
        {1, 1, 1, 1, 1, 1, 1, 0},   {1, 1, 1, 1, 17, 8, 3, 0},   {2, 4, 1, 1, 33, 16, 16, 2},
        {1, 2, 2, 19, 1, 5, 9, 0},  {1, 4, 2, 7, 37, 16, 8, 1},  {1, 2, 1, 33, 29, 12, 7, 2},
        {1, 1, 1, 70, 45, 4, 2, 1},
    };
    const vkattn_sdpa_dtypes all16 = {1, 1, 1, 1};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int fused = 0; fused < 2; fused++) {
            const uint32_t *s = shapes[i];
            f16_case c = {
                .p = {.batch = s[0], .heads = s[1], .kv_heads = s[2], .tq = s[3], .tv = s[4],
                      .dk = s[5], .dv = s[6], .mask = {.causal = (vkattn_causal)s[7]},
                      .path = fused ? VKATTN_SDPA_FUSED : VKATTN_SDPA_UNFUSED,
                      .return_weights = !fused},
                .ty = all16, .lse = fused && i % 2, .weights16 = i % 2 == 0,
            };
            run_case(ctx, &c);
        }
}

/* Masks and bias are f32 only; f16 weights need a workspace for the f32
 * scores. Nothing recorded. */
static void test_bad_inputs(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_tensor_desc d16 = {.rank = 1, .dims = {64}, .dtype = VKATTN_DTYPE_F16};
    vkattn_tensor *h[4], *f = th_tensor(ctx, 64, NULL), *out = th_tensor(ctx, 64, NULL);
    for (int i = 0; i < 4; i++)
        TH_OK(ctx, vkattn_tensor_create(ctx, &d16, &h[i]));
    static const char *names[] = {"io->bias", "io->mask", "io->value_mask"};
    for (int which = 0; which < 3; which++) {
        vkattn_sdpa_params p = {.batch = 1, .tq = 4, .tv = 4, .dk = 4,
                                .mask = {.has_bias = which == 0, .has_mask = which == 1,
                                         .has_value_mask = which == 2}};
        vkattn_sdpa_io io = {.q = h[0], .k = h[1], .v = h[2], .out = out};
        if (which == 0)
            io.bias = h[3];
        else if (which == 1)
            io.mask = h[3];
        else
            io.value_mask = h[3];
        assert_int_equal(vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &p, &io), VKATTN_ERROR_INVALID_ARGUMENT);
        const char *msg = vkattn_context_last_error(ctx);
        assert_non_null(strstr(msg, names[which]));
        assert_non_null(strstr(msg, "f16"));
        assert_non_null(strstr(msg, "f32"));
    }
    vkattn_sdpa_params p = {.batch = 1, .tq = 4, .tv = 4, .dk = 4, .return_weights = true};
    vkattn_tensor *small = th_tensor(ctx, 15, NULL); /* the f32 scores need 16 */
    vkattn_sdpa_io io = {.q = h[0], .k = h[1], .v = h[2], .out = f, .weights = h[3],
                         .workspace = small};
    assert_int_equal(vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &p, &io), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_context_last_error(ctx), "io->workspace"));
    vkattn_tensor_destroy(small);
    /* the typed reference refuses an unknown type */
    vkattn_sdpa_dtypes bad = {.k = (vkattn_dtype)5};
    float x[16] = {0}, o[16];
    vkattn_sdpa_params rp = {.batch = 1, .tq = 2, .tv = 2, .dk = 2};
    assert_int_equal(vkattn_reference_sdpa(&rp, &bad, x, x, x, NULL, NULL, NULL, o, NULL),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    for (int i = 0; i < 4; i++)
        vkattn_tensor_destroy(h[i]);
    vkattn_tensor_destroy(f);
    vkattn_tensor_destroy(out);
    th_assert_validation_clean();
}

/* The rule of issue 20: an all-f16 fused call takes the kernel the same f32
 * call takes under the same tuning: the tiled one under the GPU tuning where
 * the device binds 8 storage buffers, never the row-per-invocation kernels. */
static void test_kernel_choice(void **state)
{
    (void)TH_CTX(state);
    th_pipelines seen;
    vkattn_context_advanced adv = th_advanced();
    vkattn_context *ctx = th_logged_context(&adv, &seen);
    vkattn_context_info info;
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    static const uint32_t dvs[] = {8, 6, 5}; /* uvec2 stores, word pairs, f32 scratch */
    for (size_t i = 0; i < sizeof dvs / sizeof dvs[0]; i++) {
        f16_case c = {.p = {.batch = 1, .heads = 2, .tq = 5, .tv = 7, .dk = 8, .dv = dvs[i],
                            .path = VKATTN_SDPA_FUSED},
                      .ty = {1, 1, 1, 1}};
        run_case(ctx, &c);
    }
    const bool want_tiled = !info.cpu_tuning && info.max_storage_buffers_per_stage >= 8;
    const bool tiled = th_pipeline_seen(&seen, "flash_tiled", true);
    const bool one_row = th_pipeline_seen(&seen, "flash_f16", false) ||
                         th_pipeline_seen(&seen, "flash", false) ||
                         th_pipeline_seen(&seen, "flash_packed", false);
    if (tiled != want_tiled || one_row == want_tiled)
        fail_msg("f16: tiled kernel %s, row-per-invocation kernel %s (%s tuning)",
                 tiled ? "used" : "unused", one_row ? "used" : "unused",
                 info.cpu_tuning ? "CPU" : "GPU");
    vkattn_context_destroy(ctx);
}

/* Fewer random fused cases under the GPU tuning: each compiles a tiled
 * pipeline, seconds on lavapipe. */
static void test_fused_random_gpu(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 8; i++) {
        f16_case c = random_case(true, 40, 20);
        run_case(ctx, &c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_inputs), cmocka_unit_test(test_edges),
        cmocka_unit_test(test_fused_random), cmocka_unit_test(test_chained_random),
        cmocka_unit_test(test_kernel_choice),
    };
    int failed = cmocka_run_group_tests_name("sdpa f16", tests, th_setup, th_teardown);
    failed += cmocka_run_group_tests_name("sdpa f16, mobile-min", tests, th_setup_mobile,
                                          th_teardown);
    const struct CMUnitTest gpu_tests[] = {
        cmocka_unit_test(test_kernel_choice),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_fused_random_gpu),
    };
    failed += cmocka_run_group_tests_name("sdpa f16, GPU tuning", gpu_tests, th_setup_gpu_tuning,
                                          th_teardown_gpu_tuning);
    return failed + cmocka_run_group_tests_name("sdpa f16, GPU tuning, mobile-min", gpu_tests,
                                                th_setup_gpu_tuning_mobile,
                                                th_teardown_gpu_tuning);
}
