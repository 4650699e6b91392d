/* GroupedQueryAttention in half precision (desc.dtype VKATTN_DTYPE_F16) vs
 * the f32 CPU reference (vkattn_reference_gqa) run on the f16-rounded inputs
 * and weights: Keras's float16 policy, as test_mha_f16.c does for
 * MultiHeadAttention.
 *
 * Random shapes (test_gqa.c's, smaller): Nq in {1, 2, 4, 6} with Nkv in {1,
 * Nq/2, Nq}, odd widths, batch 1, Tq != Tv, self-attention, key given or
 * omitted, use_bias on and off, query, value, shared and per-head attention
 * masks, both causal alignments, sliding windows, dropout, returned scores,
 * the fused and chained SDPA paths; each of query, key, value, output and
 * scores an f16 or an f32 tensor at random. Outputs poisoned (NaN) before
 * each run. Then the cached (KV cache) path in f16 against the same full
 * call, and bad arguments.
 *
 * Bound: the layer is MultiHeadAttention with Nkv key/value heads and rounds
 * the same stages to f16 (vkattn/mha.h, test_mha_f16.c): projections, heads
 * and context, an f16 output once more, each within eps16 / 2 (eps16 =
 * 2^-10) relative, which through the logits, softmax and the two projections
 * stay a few eps16 of the output scale for inputs of magnitude about 1 and
 * kernels scaled by 1/sqrt(fan-in):
 *   max|out - ref| <= 8 eps16 max(max|ref|, 1)      (7.8e-3)
 *   max|scores - ref| <= 4 eps16                     (3.9e-3, scores in [0, 1])
 * Sharing a K/V head between query heads changes no rounding. The largest
 * error seen is printed by test_random_cases. */
#include "harness.h"
#include "layer_out.h"
#include "multi_head_case.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EPS16 (1.0 / 1024.0)
#define OUT_BOUND (8 * EPS16)
#define SCORE_BOUND (4 * EPS16)

typedef struct fcase {
    vkattn_gqa_desc desc;
    vkattn_layer_call call;
    bool key_given, self_attn, query_mask, value_mask;
    attn_kind attn;
    vkattn_dtype tq, tk, tv, tout, tscores; /* of the io tensors */
} fcase;

static bool coin(void) { return tu_rand_range(0, 1) == 1; }
static vkattn_dtype any_type(void) { return coin() ? VKATTN_DTYPE_F16 : VKATTN_DTYPE_F32; }

static mh_case view(const fcase *m)
{
    return (mh_case){.w = mh_gqa_widths(&m->desc), .no_bias = m->desc.no_bias,
                     .call = &m->call, .key_given = m->key_given, .self_attn = m->self_attn,
                     .query_mask = m->query_mask, .value_mask = m->value_mask,
                     .attn = m->attn};
}

static fcase random_case(void)
{
    static const mh_gqa_bounds bounds = {.heads = 4, .max_head_dim = 9, .max_width = 19,
                                         .max_t = 11, .max_batch = 2, .dropout_one_in = 4,
                                         .max_dropout = 0.5f};
    const mh_gqa_case r = mh_random_gqa(&bounds);
    fcase m = {.desc = r.desc, .call = r.call, .key_given = r.key_given, .self_attn = r.self_attn,
               .query_mask = r.query_mask, .value_mask = r.value_mask, .attn = r.attn};
    m.desc.dtype = VKATTN_DTYPE_F16;
    m.tq = any_type();
    m.tv = m.self_attn ? m.tq : any_type();
    m.tk = any_type();
    m.tout = any_type();
    m.tscores = any_type();
    return m;
}

static void describe(const fcase *m, char *buf, size_t n)
{
    char d[160], k[96];
    rc_describe_gqa(d, sizeof d, &m->desc), rc_describe_call(k, sizeof k, &m->call);
    snprintf(buf, n, "gqa f16 %s | %s self=%d key=%d qm=%d vm=%d attn=%d | types q=%d k=%d v=%d "
             "out=%d scores=%d", d, k, m->self_attn, m->key_given, m->query_mask, m->value_mask,
             (int)m->attn, (int)m->tq, (int)m->tk, (int)m->tv, (int)m->tout, (int)m->tscores);
}

/* Runs one case on the GPU and the reference; returns the output error. */
static double check_case(vkattn_context *ctx, const fcase *m)
{
    char what[420];
    describe(m, what, sizeof what);
    const mh_case v = view(m);
    const sizes s = mh_sizes(&v);
    host h;
    mh_host_random(&v, &h);
    mh_host_round_f16(&v, &h);
    th_layer_out o = th_layer_out_make(s.out, s.scores);
    const vkattn_layer_host_io hio = mh_host_io(&v, &h, o.ref, o.ref_scores);
    TH_OK(ctx, vkattn_reference_gqa(&m->desc, &h.w, &m->call, &hio));

    vkattn_gqa *layer = NULL;
    TH_OK(ctx, vkattn_gqa_create(ctx, &m->desc, &layer));
    TH_OK(ctx, vkattn_gqa_set_weights(layer, &h.w));
    vkattn_layer_io io = mh_gpu_io(ctx, &v, &h);
    const bool shared_value = io.value == io.query;
    mh_retype(ctx, &io.query, m->tq, s.query, h.query);
    if (shared_value)
        io.value = io.query;
    else
        mh_retype(ctx, &io.value, m->tv, s.value, h.value);
    mh_retype(ctx, &io.key, m->tk, s.key, h.key);
    mh_retype(ctx, &io.output, m->tout, s.out, NULL);
    mh_retype(ctx, &io.scores, m->tscores, s.scores, NULL);
    const vkattn_result r = vkattn_gqa_record(layer, VKATTN_RUN_NOW, &m->call, &io);
    if (r != VKATTN_SUCCESS)
        fail_msg("%s: vkattn_gqa_record gave %s (%s)", what, vkattn_result_name(r),
                 vkattn_last_error());
    mh_gpu_io_finish(ctx, &v, &io, true, o.got, o.got_scores);
    const double err = th_layer_out_check(&o, m->call.return_attention_scores, OUT_BOUND,
                                          SCORE_BOUND, what);
    th_assert_validation_clean();
    vkattn_gqa_destroy(layer);
    mh_host_free(&v, &h);
    th_layer_out_free(&o);
    return err;
}

static void test_random_cases(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    double worst = 0.0;
    for (int i = 0; i < 16; i++) {
        const fcase m = random_case();
        const double err = check_case(ctx, &m);
        worst = err > worst ? err : worst;
    }
    printf("# f16 GQA: largest output error %.3g (bound %.3g)\n", worst, OUT_BOUND);
}

/* Every run covers, whatever the draw: multi-query self-attention with every
 * mask, causal and a window, f16 tensors throughout; and cross-attention with
 * Nkv = Nq/2 on the fused path, f32 query and output. */
static void test_fixed_cases(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const fcase a = {
        .desc = {.head_dim = 5, .num_query_heads = 4, .num_key_value_heads = 1,
                 .query_width = 13, .value_width = 13, .sliding_window = 3,
                 .dtype = VKATTN_DTYPE_F16},
        .call = {.batch = 1, .tq = 9, .tv = 9, .causal = VKATTN_CAUSAL_TOP_LEFT,
                 .return_attention_scores = true},
        .self_attn = true, .query_mask = true, .value_mask = true, .attn = ATTN_PER_HEAD,
        .tq = VKATTN_DTYPE_F16, .tv = VKATTN_DTYPE_F16, .tk = VKATTN_DTYPE_F16,
        .tout = VKATTN_DTYPE_F16, .tscores = VKATTN_DTYPE_F16,
    };
    check_case(ctx, &a);
    const fcase b = {
        .desc = {.head_dim = 6, .num_query_heads = 6, .num_key_value_heads = 3,
                 .query_width = 11, .key_width = 9, .value_width = 15, .no_bias = true,
                 .dtype = VKATTN_DTYPE_F16},
        .call = {.batch = 2, .tq = 5, .tv = 12, .path = VKATTN_SDPA_FUSED},
        .key_given = true, .value_mask = true,
        .tq = VKATTN_DTYPE_F32, .tk = VKATTN_DTYPE_F16, .tv = VKATTN_DTYPE_F16,
        .tout = VKATTN_DTYPE_F32,
    };
    check_case(ctx, &b);
}

/* An f16 layer with a cache of Nkv f16 heads: a prefill of 5 then steps of 1
 * and 2 equal (within the bound) one causal call over the 8 tokens. */
static void test_cached(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    enum { B = 2, T = 8, CAP = 8 };
    const uint32_t steps[] = {5, 1, 2};
    fcase m = {
        .desc = {.head_dim = 4, .num_query_heads = 4, .num_key_value_heads = 2,
                 .query_width = 7, .value_width = 7, .dtype = VKATTN_DTYPE_F16},
        .call = {.batch = B, .tq = T, .tv = T, .causal = VKATTN_CAUSAL_TOP_LEFT},
        .self_attn = true,
    };
    const mh_case v = view(&m);
    const sizes s = mh_sizes(&v);
    host h;
    mh_host_random(&v, &h);
    mh_host_round_f16(&v, &h);
    float *ref = tu_floats(s.out), *got = tu_floats(s.out);
    tu_poison(ref, s.out), tu_poison(got, s.out);
    const vkattn_layer_host_io hio = mh_host_io(&v, &h, ref, NULL);
    TH_OK(ctx, vkattn_reference_gqa(&m.desc, &h.w, &m.call, &hio));

    vkattn_gqa *layer = NULL;
    TH_OK(ctx, vkattn_gqa_create(ctx, &m.desc, &layer));
    TH_OK(ctx, vkattn_gqa_set_weights(layer, &h.w));
    const vkattn_kv_cache_desc cd = {.batch = B, .kv_heads = 2, .capacity = CAP, .key_dim = 4,
                                     .value_dim = 4, .dtype = VKATTN_DTYPE_F16};
    vkattn_kv_cache *cache = NULL;
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    const uint32_t W = m.desc.query_width;
    uint32_t done = 0;
    for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++) {
        const uint32_t n = steps[k];
        float *x = tu_floats((size_t)B * n * W), *y = tu_floats((size_t)B * n * W);
        for (uint32_t b = 0; b < B; b++)
            memcpy(x + (size_t)b * n * W, h.query + ((size_t)b * T + done) * W,
                   (size_t)n * W * sizeof(float));
        vkattn_tensor *tx = th_typed_tensor(ctx, (size_t)B * n * W, VKATTN_DTYPE_F16, x);
        vkattn_tensor *ty = th_typed_tensor(ctx, (size_t)B * n * W, VKATTN_DTYPE_F16, NULL);
        const vkattn_layer_call call = {.batch = B, .tq = n, .causal = VKATTN_CAUSAL_TOP_LEFT};
        const vkattn_layer_io io = {.query = tx, .value = tx, .output = ty};
        TH_OK(ctx, vkattn_gqa_record_cached(layer, VKATTN_RUN_NOW, &call, &io, cache));
        TH_OK(ctx, vkattn_tensor_download(ty, y, 0, (size_t)B * n * W));
        for (uint32_t b = 0; b < B; b++)
            memcpy(got + ((size_t)b * T + done) * W, y + (size_t)b * n * W,
                   (size_t)n * W * sizeof(float));
        vkattn_tensor_destroy(tx), vkattn_tensor_destroy(ty);
        free(x), free(y);
        done += n;
    }
    const double err = tu_max_rel_err(got, ref, s.out, 1.0);
    if (!(err <= OUT_BOUND))
        fail_msg("f16 cached GQA: output error %.3g exceeds %.3g", err, OUT_BOUND);
    th_assert_validation_clean();
    vkattn_kv_cache_destroy(cache);
    vkattn_gqa_destroy(layer);
    mh_host_free(&v, &h);
    free(ref), free(got);
}

/* An f16 layer refuses f16 masks and a bad dtype, naming them; an f32 layer
 * refuses f16 data. */
static void test_bad_arguments(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_gqa_desc desc = {.head_dim = 4, .num_query_heads = 2, .num_key_value_heads = 1,
                            .query_width = 6, .value_width = 6, .dtype = (vkattn_dtype)7};
    vkattn_gqa *layer = NULL;
    TH_EXPECT_ERROR(vkattn_gqa_create(ctx, &desc, &layer), VKATTN_ERROR_INVALID_ARGUMENT,
                    "desc->dtype");
    assert_null(layer);
    desc.dtype = VKATTN_DTYPE_F16;
    TH_OK(ctx, vkattn_gqa_create(ctx, &desc, &layer));
    const uint32_t B = 1, T = 3;
    vkattn_tensor *x = th_typed_tensor(ctx, B * T * 6, VKATTN_DTYPE_F16, NULL);
    TH_OK(ctx, vkattn_tensor_fill(x, 0.5f));
    vkattn_tensor *out = th_typed_tensor(ctx, B * T * 6, VKATTN_DTYPE_F16, NULL);
    vkattn_tensor *m16 = th_typed_tensor(ctx, B * T, VKATTN_DTYPE_F16, NULL);
    const vkattn_layer_call call = {.batch = B, .tq = T, .tv = T};
    vkattn_layer_io io = {.query = x, .value = x, .output = out, .value_mask = m16};
    TH_EXPECT_ERROR(vkattn_gqa_record(layer, VKATTN_RUN_NOW, &call, &io), VKATTN_ERROR_INVALID_ARGUMENT,
                    "io->value_mask");
    io.value_mask = NULL, io.query_mask = m16;
    TH_EXPECT_ERROR(vkattn_gqa_record(layer, VKATTN_RUN_NOW, &call, &io), VKATTN_ERROR_INVALID_ARGUMENT,
                    "io->query_mask");
    io.query_mask = NULL;
    desc.dtype = VKATTN_DTYPE_F32;
    vkattn_gqa *f32_layer = NULL;
    TH_OK(ctx, vkattn_gqa_create(ctx, &desc, &f32_layer));
    TH_EXPECT_ERROR(vkattn_gqa_record(f32_layer, VKATTN_RUN_NOW, &call, &io), VKATTN_ERROR_UNSUPPORTED, "io->query");
    th_assert_validation_clean();
    vkattn_gqa_destroy(f32_layer);
    vkattn_gqa_destroy(layer);
    vkattn_tensor_destroy(x), vkattn_tensor_destroy(out), vkattn_tensor_destroy(m16);
}

TU_MAIN(th_setup, th_teardown,
    test_fixed_cases, test_random_cases, test_cached, test_bad_arguments)
