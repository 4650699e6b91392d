/* MultiHeadAttention in half precision (desc.dtype VKATTN_DTYPE_F16) with a
 * KV cache (vkattn_mha_*_cached) vs vkattn_reference_mha with
 * VKATTN_CAUSAL_TOP_LEFT over the whole sequence, on the f16-rounded inputs
 * and weights (Keras's float16 policy, as test_mha_f16.c).
 *
 * A prefill of P = 67 tokens (two chunks: 64 + 3), single-token steps and a
 * step of 3; a cache holding f16 or f32 (both must work: the layer's f16
 * heads are converted on append); the io tensors f16 or f32, picked per case;
 * ragged lengths (sequence 1 is reset after the prefill); a value mask over
 * the cache and Keras's use_gate in one case. Odd widths: 2 heads of key_dim 6 and value_dim 4
 * (an f16 cache needs even widths), query/value width 10, output width 7.
 * Outputs are poisoned (NaN) before each call.
 * Bound (vkattn/mha.h, the f16 layer's): max|out - ref| <= 8 eps16
 * max(max|ref|, 1), eps16 = 2^-10 (7.8e-3); the cached path rounds the same
 * intermediates to f16 as the uncached one (projections, heads, context),
 * decode reading its f16 queries exactly and rounding its context once. */
#include "cached_steps.h"

#include <vkattn/half.h>
#include <vkattn/mha.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EPS16 (1.0 / 1024.0)
#define OUT_BOUND (8 * EPS16)
#define B 2u
#define H 2u
#define DK 6u
#define DV 4u
#define W 10u   /* query and value width */
#define DOUT 7u /* output width */
#define P 67u   /* prefill */
#define N 74u   /* P + 4 steps of 1 + one of 3 */
#define CAP 80u

typedef th_cache_model model;

/* Weights scaled by 1/sqrt(fan-in), rounded to f16 (what the layer holds);
 * gate: Keras use_gate, its kernel and bias of O(1) pre-activations. */
static void model_init(vkattn_context *ctx, model *m, bool gate)
{
    static const float amp[10] = {0.32f, 0.1f, 0.32f, 0.1f, 0.32f, 0.1f, 0.35f, 0.1f, 0.6f, 2.0f};
    const vkattn_mha_desc d = {.num_heads = H, .key_dim = DK, .value_dim = DV, .query_width = W,
                               .value_width = W, .output_dim = DOUT, .dtype = VKATTN_DTYPE_F16,
                               .use_gate = gate};
    th_cache_model_init(ctx, m, &d, amp);
}

/* Rows [t0, t0 + n) of every sequence of x (B, len, W) through the cached
 * layer, io tensors of type `io_type`; out (B, len, DOUT) gets them. */
static void cached_call(vkattn_context *ctx, model *m, vkattn_kv_cache *cache, const float *x,
                        uint32_t len, uint32_t t0, uint32_t n, vkattn_tensor *vm,
                        vkattn_dtype io_type, float *out)
{
    const th_cached_run r = {.mha = m->mha, .cache = cache, .batch = B, .len = len, .width = W,
                             .out_width = DOUT, .io_type = io_type, .value_mask = vm,
                             .prepare = true};
    th_cached_call(ctx, &r, x, t0, n, out);
}

/* The causal reference over rows [from, to) of sequence b; returns the
 * largest error relative to max(max|ref|, 1) and fails above the bound. */
static double check_against_full(const model *m, const float *x, const float *got, uint32_t len,
                                 uint32_t b, uint32_t from, uint32_t to, const float *vm,
                                 const char *what)
{
    const uint32_t T = to - from;
    const float *seq = x + ((size_t)b * len + from) * W;
    float *ref = tu_floats((size_t)T * DOUT);
    vkattn_mha_desc d32 = m->desc;
    d32.dtype = VKATTN_DTYPE_F32;
    vkattn_layer_call call = {.batch = 1, .tq = T, .tv = T, .causal = VKATTN_CAUSAL_TOP_LEFT};
    vkattn_layer_host_io hio = {.query = seq, .value = seq, .value_mask = vm, .output = ref};
    TH_OK(NULL, vkattn_reference_mha(&d32, &m->w, &call, &hio));
    const double err = tu_max_rel_err(got + ((size_t)b * len + from) * DOUT, ref,
                                      (size_t)T * DOUT, 1.0);
    if (!TU_WITHIN(err, OUT_BOUND))
        fail_msg("%s: sequence %u rows [%u, %u): error %.3g exceeds %.3g", what, b, from, to,
                 err, OUT_BOUND);
    free(ref);
    return err;
}

static void run_sequence(vkattn_context *ctx, vkattn_dtype cache_type, vkattn_dtype io_type,
                         bool with_mask, bool gate)
{
    model m;
    model_init(ctx, &m, gate);
    vkattn_kv_cache_desc cd = {.batch = B, .kv_heads = H, .capacity = CAP, .key_dim = DK,
                               .value_dim = DV, .dtype = cache_type};
    vkattn_kv_cache *cache;
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    float *x = tu_floats((size_t)B * N * W), *got = tu_floats((size_t)B * N * DOUT);
    float *mask = tu_floats((size_t)B * CAP);
    tu_fill_uniform(x, (size_t)B * N * W, -1, 1);
    th_round_f16(x, (size_t)B * N * W);
    tu_poison(got, (size_t)B * N * DOUT);
    tu_fill_mask(mask, (size_t)B * CAP, 0.7f);
    mask[0] = mask[CAP] = mask[CAP + P] = 1.0f; /* every row sees a key */
    vkattn_tensor *vm = with_mask ? th_tensor(ctx, (size_t)B * CAP, mask) : NULL;

    cached_call(ctx, &m, cache, x, N, 0, P, vm, io_type, got);
    /* sequence 1 starts over: from here its tokens are rows [P, N), its mask
     * entries from 0 again */
    TH_OK(ctx, vkattn_kv_cache_reset_record(cache, VKATTN_RUN_NOW, 1));
    const uint32_t steps[5] = {1, 1, 3, 1, 1};
    uint32_t t = P;
    for (int i = 0; i < 5; i++) {
        cached_call(ctx, &m, cache, x, N, t, steps[i], vm, io_type, got);
        t += steps[i];
    }
    assert_int_equal(t, N);
    char what[120];
    snprintf(what, sizeof what, "f16 layer, %s cache, %s io, mask %d",
             cache_type == VKATTN_DTYPE_F16 ? "f16" : "f32",
             io_type == VKATTN_DTYPE_F16 ? "f16" : "f32", with_mask);
    const double e0 = check_against_full(&m, x, got, N, 0, 0, N, vm ? mask : NULL, what);
    const double e1 = check_against_full(&m, x, got, N, 1, P, N, vm ? mask + CAP : NULL, what);
    print_message("%s: max error %.3g eps16\n", what, (e0 > e1 ? e0 : e1) / EPS16);
    free(x), free(got), free(mask);
    vkattn_tensor_destroy(vm);
    vkattn_kv_cache_destroy(cache);
    th_cache_model_free(&m);
    th_assert_validation_clean();
}

static void test_f16_cache(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    run_sequence(ctx, VKATTN_DTYPE_F16, VKATTN_DTYPE_F16, false, false);
    run_sequence(ctx, VKATTN_DTYPE_F16, VKATTN_DTYPE_F32, true, true); /* use_gate */
}

static void test_f32_cache(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    run_sequence(ctx, VKATTN_DTYPE_F32, tu_rand_range(0, 1) ? VKATTN_DTYPE_F16 : VKATTN_DTYPE_F32,
                 false, false);
}

int main(void)
{
    const struct CMUnitTest tests[] = {TU_TESTS(test_f16_cache, test_f32_cache)};
    return cmocka_run_group_tests_name("mha cache f16", tests, th_setup, th_teardown);
}
