/* The fused SDPA kernel at a length the chained path cannot reach: B = 1,
 * H = 8, Tq = Tv = 8192, d = 64. The chained path's score tensor alone would
 * be 2 GiB (past lavapipe's 128 MiB maxStorageBufferRange); the fused kernel
 * needs no workspace, so the context's peak device memory stays at the four
 * 16 MiB operands. Slices of rows (the first, some in the middle, the last) of
 * every head are checked against vkattn_reference_sdpa, without a mask and with
 * the top-left causal mask, whose row i0 + r the reference computes as row r
 * of a Tq = S, Tv = i0 + S problem under the bottom-right causal mask (both
 * allow keys j <= i0 + r). Also the widest heads the kernel serves (dk = dv =
 * 256), whose pipeline alone takes lavapipe 20-60 s to compile. Runs in about a
 * minute on lavapipe (2 cores).
 *
 * Bound: max|got - ref| / max|ref| <= 2e-5 over the slice, as in test_flash.c
 * (8192-long rows add about 1e-6: 256 key tiles, one fp32 rescale each).
 *
 * Memory, measured around each call alone (a download's staging buffer is the
 * test's, not the kernel's): nothing is allocated and freed during the call
 * (its peak is what stays after it), and what stays beyond the operands is at
 * most the recording thread's sink, the 64-float buffer that takes the LSE
 * nobody asked for (docs/INTEGRATION.md, "How vkattn allocates"), counted as
 * this device counts a buffer of that size (used_bytes adds each buffer's
 * VkMemoryRequirements.size: measured on a 64-float tensor, not assumed).
 * Every tensor a test makes is held and destroyed by the teardown, on every
 * path: a failed assertion jumps out of the test, and a tensor left alive
 * would add validation errors at vkDestroyDevice to the real failure. */
#include "harness.h"

#include <vkattn/reference.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOUND 2e-5
#define H 8u
#define T 8192u
#define D 64u
#define SLICE 24u /* rows per checked slice, per head */
#define SINK_FLOATS 64u /* the recording thread's sink (docs/INTEGRATION.md) */

/* What the running test made, released by release_held on every path. */
#define HELD 8
static void *held_tensors[HELD], *held_arrays[HELD];

static void *hold_in(void **slots, void *p)
{
    for (size_t i = 0; i < HELD; i++)
        if (!slots[i])
            return slots[i] = p;
    fail_msg("hold: more than %d at once", HELD);
    return NULL;
}
static vkattn_tensor *hold(vkattn_tensor *t) { return hold_in(held_tensors, t); }
static float *hold_host(float *x) { return hold_in(held_arrays, x); }

/* cmocka runs a test's teardown after it passes or fails. */
static int release_held(void **state)
{
    (void)state;
    for (size_t i = 0; i < HELD; i++) {
        vkattn_tensor_destroy(held_tensors[i]);
        free(held_arrays[i]);
        held_tensors[i] = held_arrays[i] = NULL;
    }
    return 0;
}

/* The bytes used_bytes counts for a buffer of n floats on this device. */
static uint64_t accounted_bytes(vkattn_context *ctx, uint32_t n)
{
    uint64_t before = 0, after = 0;
    TH_OK(ctx, vkattn_context_memory_usage(ctx, &before, NULL));
    vkattn_tensor *t = th_tensor(ctx, n, NULL);
    vkattn_result r = vkattn_context_memory_usage(ctx, &after, NULL);
    vkattn_tensor_destroy(t);
    TH_OK(ctx, r);
    return after - before;
}

/* Reference rows i0 .. i0 + SLICE - 1 of every head of (1, H, T, D). */
static void check_slice(vkattn_context *ctx, const float *q, const float *k, const float *v,
                        const float *got, uint32_t i0, bool causal)
{
    const uint32_t tv = causal ? i0 + SLICE : T;
    float *qs = tu_floats((size_t)H * SLICE * D), *ks = tu_floats((size_t)H * tv * D);
    float *vs = tu_floats((size_t)H * tv * D), *ref = tu_floats((size_t)H * SLICE * D);
    float *gs = tu_floats((size_t)H * SLICE * D);
    for (uint32_t h = 0; h < H; h++) {
        const size_t head = (size_t)h * T * D;
        memcpy(qs + (size_t)h * SLICE * D, q + head + (size_t)i0 * D, sizeof(float) * SLICE * D);
        memcpy(gs + (size_t)h * SLICE * D, got + head + (size_t)i0 * D, sizeof(float) * SLICE * D);
        memcpy(ks + (size_t)h * tv * D, k + head, sizeof(float) * tv * D);
        memcpy(vs + (size_t)h * tv * D, v + head, sizeof(float) * tv * D);
    }
    vkattn_sdpa_params p = {.batch = 1, .heads = H, .tq = SLICE, .tv = tv, .dk = D};
    if (causal)
        p.mask.causal = VKATTN_CAUSAL_BOTTOM_RIGHT;
    TH_OK(ctx, vkattn_reference_sdpa(&p, NULL, qs, ks, vs, NULL, NULL, NULL, ref, NULL));
    char what[120];
    snprintf(what, sizeof what, "T=%u rows %u..%u of every head, causal=%d", T, i0,
             i0 + SLICE - 1, causal);
    TU_ASSERT_CLOSE(gs, ref, (size_t)H * SLICE * D, BOUND, what);
    free(qs), free(ks), free(vs), free(ref), free(gs);
}

static void test_long_sequence(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const size_t n = (size_t)H * T * D;
    float *q = hold_host(tu_floats(n)), *k = hold_host(tu_floats(n)), *v = hold_host(tu_floats(n));
    tu_fill_uniform(q, n, -1, 1);
    tu_fill_uniform(k, n, -1, 1);
    tu_fill_uniform(v, n, -1, 1);
    vkattn_sdpa_io io = {.q = hold(th_tensor(ctx, n, q)), .k = hold(th_tensor(ctx, n, k)),
                         .v = hold(th_tensor(ctx, n, v)), .out = hold(th_tensor(ctx, n, NULL))};
    const uint64_t sink = accounted_bytes(ctx, SINK_FLOATS);
    uint64_t operands = 0;
    TH_OK(ctx, vkattn_context_memory_usage(ctx, &operands, NULL));

    for (int causal = 0; causal < 2; causal++) {
        /* AUTO must pick the fused kernel: the chained path cannot serve this */
        vkattn_sdpa_params p = {.batch = 1, .heads = H, .tq = T, .tv = T, .dk = D,
                                .path = causal ? VKATTN_SDPA_FUSED : VKATTN_SDPA_AUTO};
        p.mask.causal = causal ? VKATTN_CAUSAL_TOP_LEFT : VKATTN_CAUSAL_NONE;
        TH_OK(ctx, vkattn_tensor_fill(io.out, NAN));
        uint64_t after = 0, peak = 0;
        vkattn_context_reset_peak_memory(ctx);
        TH_OK(ctx, vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &p, &io));
        TH_OK(ctx, vkattn_context_memory_usage(ctx, &after, &peak));
        printf("# causal=%d: operands %llu bytes, during the call a peak of %llu, after it %llu "
               "(a %u-float buffer counts %llu)\n", causal, (unsigned long long)operands,
               (unsigned long long)peak, (unsigned long long)after, SINK_FLOATS,
               (unsigned long long)sink);
        if (peak != after)
            fail_msg("causal=%d: %llu bytes allocated and freed during the call (peak %llu, "
                     "after %llu); the fused kernel needs no workspace", causal,
                     (unsigned long long)(peak - after), (unsigned long long)peak,
                     (unsigned long long)after);
        if (after > operands + sink)
            fail_msg("causal=%d: %llu bytes beyond the operands (%llu) after the call; at most "
                     "the sink's %llu", causal, (unsigned long long)(after - operands),
                     (unsigned long long)operands, (unsigned long long)sink);
        float *got = hold_host(th_download(io.out, n));
        static const uint32_t starts[] = {0, 4000, T - SLICE};
        for (size_t s = 0; s < sizeof starts / sizeof starts[0]; s++)
            check_slice(ctx, q, k, v, got, starts[s], causal != 0);
    }
    th_assert_validation_clean();
}

/* dk = dv = 256, the widest the kernel serves, with masks and dropout: kept
 * here because its pipeline takes lavapipe tens of seconds to compile. */
static void test_widest_heads(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_sdpa_params p = {
        .batch = 1, .heads = 4, .kv_heads = 2, .tq = 37, .tv = 300, .dk = 256, .dv = 256,
        .mask = {.causal = VKATTN_CAUSAL_BOTTOM_RIGHT, .has_mask = true,
                 .mask_broadcast = {.batch = true, .heads = true}},
        .dropout = {.rate = 0.25f, .training = true, .seed = tu_rand_u32(), .offset = 3},
        .path = VKATTN_SDPA_FUSED,
    };
    const size_t nq = (size_t)4 * 37 * 256, nkv = (size_t)2 * 300 * 256, nm = (size_t)37 * 300;
    float *q = hold_host(tu_floats(nq)), *k = hold_host(tu_floats(nkv));
    float *v = hold_host(tu_floats(nkv)), *mask = hold_host(tu_floats(nm));
    float *ref = hold_host(tu_floats(nq));
    tu_fill_uniform(q, nq, -1, 1);
    tu_fill_uniform(k, nkv, -1, 1);
    tu_fill_uniform(v, nkv, -1, 1);
    tu_fill_mask(mask, nm, 0.7f);
    TH_OK(ctx, vkattn_reference_sdpa(&p, NULL, q, k, v, NULL, NULL, mask, ref, NULL));
    vkattn_sdpa_io io = {.q = hold(th_tensor(ctx, nq, q)), .k = hold(th_tensor(ctx, nkv, k)),
                         .v = hold(th_tensor(ctx, nkv, v)), .mask = hold(th_tensor(ctx, nm, mask)),
                         .out = hold(th_tensor(ctx, nq, NULL))};
    TH_OK(ctx, vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &p, &io));
    float *got = hold_host(th_download(io.out, nq));
    TU_ASSERT_CLOSE(got, ref, nq, BOUND, "dk = dv = 256 with a mask, causal and dropout");
    th_assert_validation_clean();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_long_sequence, release_held),
        cmocka_unit_test_teardown(test_widest_heads, release_held),
    };
    return cmocka_run_group_tests(tests, th_setup, th_teardown);
}
