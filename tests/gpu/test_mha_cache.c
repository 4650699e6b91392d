/* MultiHeadAttention with a KV cache (vkattn_mha_*_cached) vs one causal call
 * over the whole sequence.
 *
 * A prefill of P = 70 tokens (two chunks: 64 + 6), single-token steps and one
 * step of 3 tokens must give, row by row, what vkattn_reference_mha gives
 * with VKATTN_CAUSAL_TOP_LEFT (Keras use_causal_mask=True) over the whole
 * sequence; the reference of the cached call is exactly that, applied to the
 * concatenated tokens. Ragged lengths: after the prefill sequence 1 is reset,
 * so every later call attends over 70 + n keys in sequence 0 and over n in
 * sequence 1; sequence 1's reference is the causal call over its tokens since
 * the reset. A value mask over the cache equals the same mask in the full
 * call. Bound: test_mha.c's, max|got - ref| / max(|ref|, 1) <= 2e-5
 * (fp32 projections and attention, reference in double).
 * Shapes are few and reused (lavapipe compiles a pipeline per shape). */
#include "cached_steps.h"

#include <vkattn/mha.h>

#include <stdlib.h>
#include <string.h>

#define OUT_BOUND 2e-5
#define B 2u
#define H 2u
#define DK 8u
#define DV 6u
#define W 12u     /* query/value width, = output width */
#define P 70u     /* prefill */
#define N 80u     /* whole sequence: P + 5 steps of 1 + one of 3 + 2 of 1 */
#define CAP 128u

typedef th_cache_model model;

/* gate: Keras use_gate, its kernel and bias in +-2 (pre-activations O(1)) */
static void model_init(vkattn_context *ctx, model *m, uint32_t window, bool gate)
{
    static const float amp[10] = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 2.0f, 2.0f};
    const vkattn_mha_desc d = {.num_heads = H, .key_dim = DK, .value_dim = DV, .query_width = W,
                               .value_width = W, .sliding_window = window, .use_gate = gate};
    th_cache_model_init(ctx, m, &d, amp);
}

/* Rows [t0, t0 + n) of every sequence of x (B, len, W) through the cached
 * layer (value mask vm (B, capacity) or NULL); out (B, len, W) gets them at
 * the same rows. */
static void cached_call(vkattn_context *ctx, model *m, vkattn_kv_cache *cache, const float *x,
                        uint32_t len, uint32_t t0, uint32_t n, vkattn_tensor *vm, float *out)
{
    const th_cached_run r = {.mha = m->mha, .cache = cache, .batch = B, .len = len, .width = W,
                             .out_width = W, .io_type = VKATTN_DTYPE_F32, .value_mask = vm,
                             .prepare = true};
    th_cached_call(ctx, &r, x, t0, n, out);
}

/* The causal call over rows [from, to) of sequence b of x (B, len, W), value
 * mask vm (its first to - from entries) or NULL, compared with got's. */
static void check_against_full(const model *m, const float *x, const float *got, uint32_t len,
                               uint32_t b, uint32_t from, uint32_t to, const float *vm)
{
    const uint32_t T = to - from;
    const float *seq = x + ((size_t)b * len + from) * W;
    float *ref = tu_floats((size_t)T * W);
    vkattn_layer_call call = {.batch = 1, .tq = T, .tv = T, .causal = VKATTN_CAUSAL_TOP_LEFT};
    vkattn_layer_host_io hio = {.query = seq, .value = seq, .value_mask = vm, .output = ref};
    TH_OK(NULL, vkattn_reference_mha(&m->desc, &m->w, &call, &hio));
    for (uint32_t t = 0; t < T; t++) {
        double err = tu_max_rel_err(got + ((size_t)b * len + from + t) * W, ref + (size_t)t * W,
                                    W, 1.0);
        if (!TU_WITHIN(err, OUT_BOUND))
            fail_msg("sequence %u row %u (position %u since its start): error %.3g exceeds %.3g",
                     b, from + t, t, err, OUT_BOUND);
    }
    free(ref);
}

static void prefill_then_steps(vkattn_context *ctx, uint32_t window, bool gate)
{
    model m;
    model_init(ctx, &m, window, gate);
    vkattn_kv_cache_desc cd = {.batch = B, .kv_heads = H, .capacity = CAP, .key_dim = DK,
                               .value_dim = DV};
    vkattn_kv_cache *cache;
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    float *x = tu_floats((size_t)B * N * W), *got = tu_floats((size_t)B * N * W);
    tu_fill_uniform(x, (size_t)B * N * W, -1, 1);
    tu_poison(got, (size_t)B * N * W);

    cached_call(ctx, &m, cache, x, N, 0, P, NULL, got);
    check_against_full(&m, x, got, N, 0, 0, P, NULL);
    check_against_full(&m, x, got, N, 1, 0, P, NULL);
    /* sequence 1 starts over: from here its tokens are rows [P, N) */
    TH_OK(ctx, vkattn_kv_cache_reset_record(cache, VKATTN_RUN_NOW, 1));
    const uint32_t steps[8] = {1, 1, 1, 1, 1, 3, 1, 1};
    uint32_t t = P;
    for (int i = 0; i < 8; i++) {
        cached_call(ctx, &m, cache, x, N, t, steps[i], NULL, got);
        t += steps[i];
        uint32_t len[B];
        TH_OK(ctx, vkattn_kv_cache_lengths(cache, len, NULL));
        assert_int_equal(len[0], t);
        assert_int_equal(len[1], t - P);
    }
    assert_int_equal(t, N);
    check_against_full(&m, x, got, N, 0, 0, N, NULL);
    check_against_full(&m, x, got, N, 1, P, N, NULL);
    free(x), free(got);
    vkattn_kv_cache_destroy(cache);
    th_cache_model_free(&m);
    th_assert_validation_clean();
}

static void test_prefill_then_steps(void **state) { prefill_then_steps(*state, 0, false); }

/* Keras use_gate: each new row's gate is projected on the cached path (the
 * prefill in two chunks, then steps), equal to the full call's */
static void test_gate(void **state) { prefill_then_steps(*state, 0, true); }

/* sliding_window: the cached rows keep their position's band (9 keys, the
 * query's own included, under causal), equal to the full call's */
static void test_sliding_window(void **state) { prefill_then_steps(*state, 9, false); }

/* A value mask over the cache (B, capacity): a prefill of 8 and steps of 1
 * and 3 equal the causal call with the same mask over the 12 tokens.
 * Sequence 1 masks its first key, so its first row sees no key and outputs
 * the output bias, as vkattn_mha_record's masked rows. */
static void test_value_mask(void **state)
{
    vkattn_context *ctx = *state;
    model m;
    model_init(ctx, &m, 0, false);
    enum { LEN = 12 };
    vkattn_kv_cache_desc cd = {.batch = B, .kv_heads = H, .capacity = CAP, .key_dim = DK,
                               .value_dim = DV};
    vkattn_kv_cache *cache;
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    float *x = tu_floats((size_t)B * LEN * W), *got = tu_floats((size_t)B * LEN * W);
    float *mask = tu_floats((size_t)B * CAP);
    tu_fill_uniform(x, (size_t)B * LEN * W, -1, 1);
    tu_poison(got, (size_t)B * LEN * W);
    tu_fill_mask(mask, (size_t)B * CAP, 0.6f);
    mask[0] = 1.0f, mask[CAP] = 0.0f;
    vkattn_tensor *vm = th_tensor(ctx, (size_t)B * CAP, mask);
    cached_call(ctx, &m, cache, x, LEN, 0, 8, vm, got);
    cached_call(ctx, &m, cache, x, LEN, 8, 1, vm, got);
    cached_call(ctx, &m, cache, x, LEN, 9, 3, vm, got);
    for (uint32_t b = 0; b < B; b++)
        check_against_full(&m, x, got, LEN, b, 0, LEN, mask + (size_t)b * CAP);
    for (uint32_t e = 0; e < W; e++)
        assert_true(got[(size_t)LEN * W + e] == m.w.output_bias[e]);
    free(x), free(got), free(mask);
    vkattn_tensor_destroy(vm);
    vkattn_kv_cache_destroy(cache);
    th_cache_model_free(&m);
    th_assert_validation_clean();
}

static void test_bad_input(void **state)
{
    vkattn_context *ctx = *state;
    model m;
    model_init(ctx, &m, 0, false);
    vkattn_kv_cache_desc cd = {.batch = B, .kv_heads = H, .capacity = 4, .key_dim = DK,
                               .value_dim = DV};
    vkattn_kv_cache *good, *bad;
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &good));
    vkattn_tensor *tin = th_tensor(ctx, (size_t)B * W, NULL);
    vkattn_tensor *tout = th_tensor(ctx, (size_t)B * W, NULL);
    vkattn_tensor *vm = th_tensor(ctx, (size_t)B, NULL); /* a query mask (B, 1) */
    vkattn_tensor *vm_small = th_tensor(ctx, (size_t)B * 3, NULL);
    vkattn_layer_call call = {.batch = B, .tq = 1, .causal = VKATTN_CAUSAL_TOP_LEFT};
    vkattn_layer_io io = {.query = tin, .value = tin, .output = tout};
    TH_OK(ctx, vkattn_mha_record_cached(m.mha, VKATTN_RUN_NOW, &call, &io, good)); /* one row each */
    const size_t nk = (size_t)B * H * 4 * DK;
    float *k0 = th_download(vkattn_kv_cache_get_desc(good).keys, nk);

    /* caches that do not match the layer */
    const vkattn_kv_cache_desc mismatch[4] = {
        {.batch = B, .kv_heads = 1, .capacity = 4, .key_dim = DK, .value_dim = DV},
        {.batch = B, .kv_heads = H, .capacity = 4, .key_dim = DK + 1, .value_dim = DV},
        {.batch = B, .kv_heads = H, .capacity = 4, .key_dim = DK, .value_dim = DK},
        {.batch = B + 1, .kv_heads = H, .capacity = 4, .key_dim = DK, .value_dim = DV},
    };
    for (int i = 0; i < 4; i++) {
        TH_OK(ctx, vkattn_kv_cache_create(ctx, &mismatch[i], &bad));
        assert_int_equal(vkattn_mha_record_cached(m.mha, VKATTN_RUN_NOW, &call, &io, bad),
                         VKATTN_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(vkattn_last_error(), i < 3 ? "the layer has" : "call->batch"));
        uint32_t len[B + 1];
        TH_OK(ctx, vkattn_kv_cache_lengths(bad, len, NULL));
        for (uint32_t b = 0; b < mismatch[i].batch; b++)
            assert_int_equal(len[b], 0);
        vkattn_kv_cache_destroy(bad);
    }
    /* what a cached call does not take */
    io.query_mask = vm;
    assert_int_equal(vkattn_mha_record_cached(m.mha, VKATTN_RUN_NOW, &call, &io, good), VKATTN_ERROR_UNSUPPORTED);
    io.query_mask = NULL;
    io.value_mask = vm_small; /* the value mask covers the cache: (B, capacity) */
    assert_int_equal(vkattn_mha_record_cached(m.mha, VKATTN_RUN_NOW, &call, &io, good),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    io.value_mask = NULL;
    call.return_attention_scores = true;
    assert_int_equal(vkattn_mha_record_cached(m.mha, VKATTN_RUN_NOW, &call, &io, good), VKATTN_ERROR_UNSUPPORTED);
    call.return_attention_scores = false;
    call.causal = VKATTN_CAUSAL_NONE;
    assert_int_equal(vkattn_mha_record_cached(m.mha, VKATTN_RUN_NOW, &call, &io, good), VKATTN_ERROR_UNSUPPORTED);
    call.causal = VKATTN_CAUSAL_BOTTOM_RIGHT;
    call.tv = 2;
    assert_int_equal(vkattn_mha_record_cached(m.mha, VKATTN_RUN_NOW, &call, &io, good),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    call.tv = 0;
    /* 1 + 4 rows pass the capacity 4; the host knows the lengths */
    call.tq = 4;
    vkattn_tensor *big_in = th_tensor(ctx, (size_t)B * 4 * W, NULL);
    vkattn_tensor *big_out = th_tensor(ctx, (size_t)B * 4 * W, NULL);
    vkattn_layer_io big = {.query = big_in, .value = big_in, .output = big_out};
    assert_int_equal(vkattn_mha_record_cached(m.mha, VKATTN_RUN_NOW, &call, &big, good),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_mha_record_cached(m.mha, VKATTN_RUN_NOW, &call, &big, NULL),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    /* the cache is unchanged by all of it */
    uint32_t len[B];
    TH_OK(ctx, vkattn_kv_cache_lengths(good, len, NULL));
    assert_int_equal(len[0], 1);
    assert_int_equal(len[1], 1);
    float *k1 = th_download(vkattn_kv_cache_get_desc(good).keys, nk);
    assert_memory_equal(k0, k1, sizeof(float) * (size_t)B * H * 4 * DK);
    free(k0), free(k1);
    vkattn_tensor_destroy(tin), vkattn_tensor_destroy(tout), vkattn_tensor_destroy(vm);
    vkattn_tensor_destroy(vm_small);
    vkattn_tensor_destroy(big_in), vkattn_tensor_destroy(big_out);
    vkattn_kv_cache_destroy(good);
    th_cache_model_free(&m);
    th_assert_validation_clean();
}

TU_MAIN(th_setup, th_teardown,
    test_prefill_then_steps, test_sliding_window, test_gate, test_value_mask, test_bad_input)
