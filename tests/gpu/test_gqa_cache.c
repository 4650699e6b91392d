/* GroupedQueryAttention with a KV cache of Nkv heads (vkattn_gqa_*_cached)
 * vs the CPU reference of one causal call over the whole sequence
 * (vkattn_reference_gqa, VKATTN_CAUSAL_TOP_LEFT = Keras use_causal_mask).
 *
 * Nq 4 with Nkv 1 (multi-query) and 2, batch 2, a prefill of 9 tokens, three
 * steps of 1 and one of 2, without and with a sliding window (4: the band
 * moves with each step), and with Keras's use_gate; then a cache of the wrong number of heads is
 * refused, naming both, and leaves the cache as it was. Bound: test_gqa.c's
 * (and test_mha_cache.c's), max|got - ref| / max(|ref|, 1) <= 2e-5: fp32
 * projections and attention vs the double reference. */
#include "cached_steps.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define OUT_BOUND 2e-5
#define B 2u
#define NQ 4u
#define HD 6u
#define W 10u /* query/value width = output width */
#define N 14u /* prefill 9, steps 1, 1, 1, 2 */
#define CAP 16u

static void run_sequence(vkattn_context *ctx, uint32_t nkv, int32_t window, bool gate)
{
    const vkattn_gqa_desc desc = {.head_dim = HD, .num_query_heads = NQ,
                                  .num_key_value_heads = nkv, .query_width = W,
                                  .value_width = W, .sliding_window = window,
                                  .use_gate = gate};
    const size_t n[10] = {W * NQ * HD, NQ * HD, W * nkv * HD, nkv * HD,    W * nkv * HD,
                          nkv * HD,    NQ * HD * W, W,     W * NQ * HD, NQ * HD};
    float *a[10];
    for (int i = 0; i < 10; i++) {
        a[i] = tu_floats(n[i]);
        tu_fill_uniform(a[i], n[i], i < 8 ? -0.5f : -2.0f, i < 8 ? 0.5f : 2.0f);
    }
    const vkattn_gqa_weights w = {a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7],
                                  gate ? a[8] : NULL, gate ? a[9] : NULL};
    float *x = tu_floats((size_t)B * N * W);
    tu_fill_uniform(x, (size_t)B * N * W, -1.0f, 1.0f);
    vkattn_gqa *gqa;
    vkattn_kv_cache *cache;
    static const uint32_t steps[] = {9, 1, 1, 1, 2};
    const double err = th_gqa_cached_error(ctx, &desc, &w, x, B, N, CAP, steps,
                                           sizeof steps / sizeof steps[0], true, &gqa, &cache);
    if (!TU_WITHIN(err, OUT_BOUND))
        fail_msg("Nkv %u window %d gate %d: cached calls vs the full causal call: error %.3g "
                 "exceeds %.3g",
                 nkv, (int)window, gate, err, OUT_BOUND);

    /* a cache of Nq heads (MultiHeadAttention's) does not fit this layer */
    vkattn_kv_cache *wrong;
    const vkattn_kv_cache_desc wd = {.batch = B, .kv_heads = NQ, .capacity = CAP, .key_dim = HD,
                                     .value_dim = HD};
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &wd, &wrong));
    vkattn_tensor *t1 = th_tensor(ctx, (size_t)B * W, x), *o1 = th_tensor(ctx, (size_t)B * W, NULL);
    const vkattn_layer_call one = {.batch = B, .tq = 1, .causal = VKATTN_CAUSAL_TOP_LEFT};
    const vkattn_layer_io io1 = {.query = t1, .value = t1, .output = o1};
    assert_int_equal(vkattn_gqa_record_cached(gqa, VKATTN_RUN_NOW, &one, &io1, wrong), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "vkattn_gqa_record_cached"));
    assert_non_null(strstr(vkattn_last_error(), "kv_heads 4"));
    uint32_t len[B];
    TH_OK(ctx, vkattn_kv_cache_lengths(wrong, len, NULL));
    assert_int_equal(len[0], 0);
    th_assert_validation_clean();
    vkattn_tensor_destroy(t1), vkattn_tensor_destroy(o1);
    vkattn_kv_cache_destroy(wrong), vkattn_kv_cache_destroy(cache);
    vkattn_gqa_destroy(gqa);
    for (int i = 0; i < 10; i++)
        free(a[i]);
    free(x);
}

static void test_multi_query(void **state) { run_sequence(TH_CTX(state), 1, 0, false); }
static void test_two_groups(void **state) { run_sequence(TH_CTX(state), 2, 0, false); }
static void test_sliding_window(void **state) { run_sequence(TH_CTX(state), 2, 4, false); }
/* Keras use_gate: the gate of each new row is projected on the cached path too */
static void test_gate(void **state) { run_sequence(TH_CTX(state), 2, 4, true); }

TU_MAIN(th_setup, th_teardown, test_multi_query, test_two_groups, test_sliding_window, test_gate)
