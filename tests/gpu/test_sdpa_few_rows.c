/* SDPA with few query rows (Tq <= 8) on the split-K decode kernel: AUTO
 * hands such calls to it where its meaning is the same (shape/sdpa_plan.h,
 * vka_sdpa_rows_kernel_for).
 *
 * The calls run on a logged context (tests/gpu/harness.h), so the route is
 * checked from the pipelines each call created: a routed call makes no
 * "flash*" pipeline, a call the plan keeps on the fused kernel no "decode*"
 * one, and each group makes some of the kind it wants. Routed cases are
 * random (Tq 1..8 each once, Tq != Tv, dk != dv, batch 1 or 2, grouped K/V
 * heads, value masks, the last of two sequences fully masked, bottom-right
 * causal with Tq < Tv and Tq >= Tv, top-left with Tq == Tv and odd widths,
 * no causal mask (Tq == 1, and the flat form), a sliding window with
 * soft-capping, f16 tensors) against vkattn_reference_sdpa; sinks against
 * the same call forced onto the fused kernel (path FUSED, never routed;
 * test_sdpa_softcap_sinks.c checks that one against the reference). Calls
 * kept fused: a bias, Tq = 9, UNIFORM rows with a value mask, path FUSED,
 * top-left with Tq < Tv, a window without a causal mask; a call decode's
 * shared memory refuses on this device (test_decode_limit). Outputs are
 * poisoned with NaN.
 *
 * Bounds: 2e-5 of max|ref| for f32 (vkattn/decode.h's bound); 2e-3 for f16
 * out (that plus one rounding to f16, 2^-10 relative where packHalf2x16
 * truncates). 19-38 s on lavapipe at load 5-8, cold shader cache (15 calls,
 * three contexts). */
#include "harness.h"

#include <vkattn/reference.h>

#include <stdio.h>
#include <stdlib.h>

#define BOUND 2e-5
#define BOUND_F16 2e-3
#define FEW_ROWS 8 /* VKA_SDPA_FEW_ROWS, shape/sdpa_plan.h */

typedef struct rows_case {
    vkattn_sdpa_params p;
    bool f16;
    bool routed; /* the route the plan must take */
} rows_case;

static uint32_t kvh(const vkattn_sdpa_params *p) { return p->kv_heads ? p->kv_heads : p->heads; }
static uint32_t dv_of(const vkattn_sdpa_params *p) { return p->dv ? p->dv : p->dk; }

static void describe(const rows_case *c, char *buf, size_t n)
{
    const vkattn_sdpa_params *p = &c->p;
    snprintf(buf, n,
             "B=%u H=%u Hkv=%u Tq=%u Tv=%u dk=%u dv=%u causal=%d vm=%d bias=%d row=%d "
             "window=%u softcap=%g sinks=%d path=%d f16=%d",
             p->batch, p->heads, kvh(p), p->tq, p->tv, p->dk, dv_of(p), (int)p->mask.causal,
             p->mask.has_value_mask, p->mask.has_bias, (int)p->mask.masked_row,
             p->sliding_window, (double)p->softcap, p->has_sinks, (int)p->path, c->f16);
}

/* Runs c on ctx, logged into *seen: the route (from the pipelines this call
 * created: a cached one is not logged again, so a routed call must create no
 * "flash*" pipeline and a fused one no "decode*"; *used collects which were
 * created at all), then the output against the reference (or, with sinks,
 * the fused kernel's). */
static void run_case(vkattn_context *ctx, th_pipelines *seen, bool used[2], const rows_case *c)
{
    const vkattn_sdpa_params *p = &c->p;
    const size_t nq = (size_t)p->batch * p->heads * p->tq * p->dk;
    const size_t nk = (size_t)p->batch * kvh(p) * p->tv * p->dk;
    const size_t nv = (size_t)p->batch * kvh(p) * p->tv * dv_of(p);
    const size_t nout = (size_t)p->batch * p->heads * p->tq * dv_of(p);
    const size_t nbias = (size_t)p->batch * p->heads * p->tq * p->tv;
    const size_t nvm = (size_t)p->batch * p->tv;
    float *q = tu_floats(nq), *k = tu_floats(nk), *v = tu_floats(nv), *ref = tu_floats(nout);
    float *vm = tu_floats(nvm), *bias = tu_floats(nbias), *sinks = tu_floats(p->heads);
    tu_fill_uniform(q, nq, -2, 2);
    tu_fill_uniform(k, nk, -2, 2);
    tu_fill_uniform(v, nv, -1, 1);
    tu_fill_uniform(bias, nbias, -1, 1);
    tu_fill_uniform(sinks, p->heads, -2, 2);
    tu_fill_mask(vm, nvm, 0.7f);
    for (uint32_t j = 0; j < p->tv; j++) /* the last sequence: every key masked */
        vm[(size_t)(p->batch - 1) * p->tv + j] = p->batch > 1 ? 0.0f : vm[j];
    if (c->f16)
        th_round_f16(q, nq), th_round_f16(k, nk), th_round_f16(v, nv);
    const float *m = p->mask.has_value_mask ? vm : NULL, *b = p->mask.has_bias ? bias : NULL;

    const vkattn_dtype t = c->f16 ? VKATTN_DTYPE_F16 : VKATTN_DTYPE_F32;
    vkattn_sdpa_io io = {
        .q = th_typed_tensor(ctx, nq, t, q), .k = th_typed_tensor(ctx, nk, t, k),
        .v = th_typed_tensor(ctx, nv, t, v), .out = th_typed_tensor(ctx, nout, t, NULL),
        .value_mask = m ? th_tensor(ctx, nvm, m) : NULL,
        .bias = b ? th_tensor(ctx, nbias, b) : NULL,
        .sinks = p->has_sinks ? th_tensor(ctx, p->heads, sinks) : NULL,
    };
    char what[320];
    describe(c, what, sizeof what);
    seen->count = 0;
    TH_OK(ctx, vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, p, &io));
    const bool decode = th_pipeline_seen(seen, "decode", true);
    const bool flash = th_pipeline_seen(seen, "flash", true);
    if (c->routed ? flash : decode)
        fail_msg("%s: a %s pipeline was created; want the %s kernel", what,
                 flash ? "fused" : "decode", c->routed ? "decode" : "fused");
    used[0] |= decode, used[1] |= flash;
    float *got = th_download(io.out, nout);
    if (p->has_sinks) { /* the same call on the fused kernel */
        vkattn_sdpa_params fp = *p;
        fp.path = VKATTN_SDPA_FUSED;
        vkattn_tensor *out = io.out;
        io.out = th_typed_tensor(ctx, nout, t, NULL);
        TH_OK(ctx, vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &fp, &io));
        float *fused = th_download(io.out, nout);
        memcpy(ref, fused, nout * sizeof(float));
        free(fused);
        vkattn_tensor_destroy(out);
    } else {
        assert_int_equal(vkattn_reference_sdpa(p, NULL, q, k, v, b, m, NULL, ref, NULL),
                         VKATTN_SUCCESS);
    }
    TU_ASSERT_CLOSE(got, ref, nout, c->f16 ? BOUND_F16 : BOUND, what);
    free(got);
    vkattn_tensor *ts[] = {io.q, io.k, io.v, io.out, io.value_mask, io.bias, io.sinks};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        vkattn_tensor_destroy(ts[i]);
    th_assert_validation_clean();
    free(q), free(k), free(v), free(ref), free(vm), free(bias), free(sinks);
}

/* A routable call: AUTO, no weights, dropout, bias or mask. */
static vkattn_sdpa_params random_params(uint32_t tq)
{
    const uint32_t hkv = tu_rand_range(1, 2), group = tu_rand_range(1, 3);
    vkattn_sdpa_params p = {
        .batch = tu_rand_range(1, 2), .heads = hkv * group, .kv_heads = hkv, .tq = tq,
        .tv = tq + tu_rand_range(1, 40), .dk = 8u << tu_rand_range(0, 1),
        .dv = tu_rand_range(0, 1) ? 4 : 12, /* few widths: each is a pipeline to build */
        .path = VKATTN_SDPA_AUTO,
        .mask = {.has_value_mask = tu_rand_range(0, 1) == 1,
                 .causal = VKATTN_CAUSAL_BOTTOM_RIGHT},
    };
    return p;
}

/* Ends a group of runs: the context goes, and the kernel the group is about
 * must have been created at least once. */
static void close_expecting(vkattn_context *ctx, bool used, const char *kernel)
{
    vkattn_context_destroy(ctx);
    if (!used)
        fail_msg("no %s pipeline was created", kernel);
}

/* One logged context per test: a context each would redo its set-up and
 * every pipeline (minutes on lavapipe for 20 calls). */
static vkattn_context *logged(void **state, th_pipelines *seen)
{
    (void)TH_CTX(state);
    vkattn_context_advanced adv = th_advanced();
    return th_logged_context(&adv, seen);
}

static void test_routed(void **state)
{
    th_pipelines seen;
    vkattn_context *ctx = logged(state, &seen);
    bool used[2] = {false, false};
    for (uint32_t n = 0; n < 8; n++) { /* Tq 1..8, each once */
        rows_case c = {.p = random_params(n % 8 + 1), .routed = true};
        vkattn_sdpa_params *p = &c.p;
        switch (n % 7) {
        case 1: /* no causal mask: the flat form (Tq > 1), or Tq == 1 */
            p->mask.causal = VKATTN_CAUSAL_NONE;
            break;
        case 2: /* Tq > Tv: the first rows see no key (zeros) */
            p->tv = tu_rand_range(1, p->tq), p->mask.has_value_mask = false;
            break;
        case 3: /* top-left with Tq == Tv, odd widths (f32 reads any) */
            p->mask.causal = VKATTN_CAUSAL_TOP_LEFT, p->tv = p->tq;
            p->dk = 9, p->dv = 5;
            break;
        case 4: /* a sliding window, soft-capping */
            p->sliding_window = tu_rand_range(1, p->tv), p->softcap = tu_rand_float(0.5f, 2.0f);
            break;
        case 5: /* sinks, every sequence masked sometimes */
            p->has_sinks = true, p->mask.masked_row = VKATTN_MASKED_ROW_UNIFORM;
            break;
        case 6:
            c.f16 = true;
            break;
        }
        if (n == 7) /* batch 1, dk != dv, GQA, f16 without a causal mask */
            p->batch = 1, p->mask.causal = VKATTN_CAUSAL_NONE, c.f16 = true;
        run_case(ctx, &seen, used, &c);
    }
    close_expecting(ctx, used[0], "decode");
}

/* Calls the decode kernel would not compute the same way stay fused. */
static void test_not_routed(void **state)
{
    th_pipelines seen;
    vkattn_context *ctx = logged(state, &seen);
    bool used[2] = {false, false};
    for (int n = 0; n < 6; n++) {
        rows_case c = {.p = random_params(4), .routed = false};
        c.p.dk = 8, c.p.dv = 4;
        vkattn_sdpa_params *p = &c.p;
        if (n == 0)
            p->mask.has_bias = true;
        if (n == 1)
            p->tq = FEW_ROWS + 1, p->tv = p->tq + 3;
        if (n == 2) /* uniform rows where a row may see no key */
            p->mask.has_value_mask = true, p->mask.masked_row = VKATTN_MASKED_ROW_UNIFORM;
        if (n == 3)
            p->path = VKATTN_SDPA_FUSED;
        if (n == 4) /* top-left with Tq < Tv */
            p->mask.causal = VKATTN_CAUSAL_TOP_LEFT;
        if (n == 5) /* a window without the causal mask: a two-sided band */
            p->mask.causal = VKATTN_CAUSAL_NONE, p->sliding_window = 2;
        run_case(ctx, &seen, used, &c);
    }
    close_expecting(ctx, used[1], "fused");
}

/* A call the plan would route but decode refuses on this device stays on
 * the fused kernel: AUTO never fails for the route. Under the CPU tuning
 * (decode's lanes layout) and mobile-min's 16 KiB of shared memory, 64 rows
 * per K/V head (H 8, Tq 8, dv 2) of dk 32 need 16.8 KiB of decode's; where a
 * device gives that much anyway, the call is routed and checked the same. */
static void test_decode_limit(void **state)
{
    th_pipelines seen;
    (void)TH_CTX(state);
    vkattn_context_advanced adv = th_advanced();
    adv.tuning = VKATTN_TUNING_CPU;
    vkattn_context *ctx = th_logged_context_profile(&adv, "mobile-min", &seen);
    vkattn_context_info info;
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    rows_case c = {.p = {.batch = 1, .heads = 8, .kv_heads = 1, .tq = FEW_ROWS, .tv = 24,
                         .dk = 32, .dv = 2, .path = VKATTN_SDPA_AUTO,
                         .mask = {.causal = VKATTN_CAUSAL_BOTTOM_RIGHT}}};
    /* decode.c's lanes layout: 64 rows, 32 invocations, dk / 4 vec4s */
    const uint64_t shared = 16ull * 64 * 8 + 4ull * 64 * 32 + 4ull * 64 + 16ull * 32 + 4;
    c.routed = shared <= info.max_shared_memory;
    bool used[2] = {false, false};
    run_case(ctx, &seen, used, &c);
    vkattn_context_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_routed),
        cmocka_unit_test(test_not_routed),
        cmocka_unit_test(test_decode_limit),
    };
    return cmocka_run_group_tests(tests, th_setup, th_teardown);
}
