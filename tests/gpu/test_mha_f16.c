/* MultiHeadAttention in half precision (desc.dtype VKATTN_DTYPE_F16) vs the
 * f32 CPU reference (vkattn_reference_mha) run on the f16-rounded inputs and
 * weights -- Keras's float16 policy, where the inputs and weights are f16.
 *
 * Random shapes: odd widths, batch 1, Tq != Tv, self- and cross-attention,
 * key given or omitted, use_bias on and off, query, value and attention
 * masks (shared and per head), causal, dropout, returned f32 or f16 scores, the
 * fused and chained SDPA paths, Keras use_gate (its f16 pre-activation and
 * gated context are two more f16 roundings, each damped by the sigmoid's slope
 * <= 1/4 or bounded by the context's own), and each of query, key, value and output f16
 * or f32 at random. Outputs are poisoned (NaN) before each run. Then the
 * weights round trip (get_weights gives the f16 values widened) and bad
 * arguments (an f16 mask, also on the cached path; a bad dtype).
 *
 * Bound (vkattn/mha.h): the layer rounds its projections, heads and context
 * to f16 (and an f16 output once more), each a relative error of at most
 * eps16 / 2, eps16 = 2^-10; through the logits, softmax and the two
 * projections these stay a few eps16 of the output scale for inputs of
 * magnitude about 1 and kernels scaled by 1/sqrt(fan-in):
 *   max|out - ref| <= 8 eps16 max(max|ref|, 1)      (7.8e-3)
 *   max|scores - ref| <= 4 eps16                     (3.9e-3, scores in [0, 1])
 * The largest seen on lavapipe is printed by test_random_cases. */
#include "harness.h"
#include "layer_out.h"
#include "random_case.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vkattn/half.h"

#define EPS16 (1.0 / 1024.0)
#define OUT_BOUND (8 * EPS16)
#define SCORE_BOUND (4 * EPS16)

typedef struct fcase {
    vkattn_mha_desc desc;
    vkattn_layer_call call;
    bool self_attn, key_given, query_mask, value_mask, attn_mask, per_head;
    vkattn_dtype tq_type, tk_type, tv_type, tout_type, tscores_type; /* of the io tensors */
} fcase;

static bool coin(void) { return tu_rand_range(0, 1) == 1; }
static vkattn_dtype any_type(void) { return coin() ? VKATTN_DTYPE_F16 : VKATTN_DTYPE_F32; }

/* A random case (random_case.h, smaller than test_mha.c's: f16 is slower)
 * and the element types of its io tensors. */
static fcase random_case(void)
{
    static const rc_mha_bounds bounds = {
        .heads = {1, 2, 3, 4}, .max_width = 33, .max_t = 13, .self_one_in = 3,
        .no_bias_one_in = 3, .dropout_one_in = 4, .max_dropout = 0.5f, .scores_one_in = 3,
    };
    const rc_mha r = rc_random_mha(&bounds);
    fcase m = {.desc = r.desc, .call = r.call, .self_attn = r.self_attn,
               .key_given = r.key_given, .query_mask = r.query_mask, .value_mask = r.value_mask};
    m.desc.dtype = VKATTN_DTYPE_F16;
    m.desc.use_gate = coin();
    m.attn_mask = coin();
    m.per_head = m.attn_mask && coin();
    m.tq_type = any_type();
    m.tv_type = m.self_attn ? m.tq_type : any_type();
    m.tk_type = any_type();
    m.tout_type = any_type();
    m.tscores_type = any_type();
    return m;
}

static void describe(const fcase *m, char *buf, size_t n)
{
    char d[160], k[96];
    rc_describe_mha(d, sizeof d, &m->desc), rc_describe_call(k, sizeof k, &m->call);
    snprintf(buf, n, "mha f16 %s | %s self=%d key=%d qm=%d vm=%d am=%d per_head=%d | types q=%d "
             "k=%d v=%d out=%d scores=%d", d, k, m->self_attn, m->key_given, m->query_mask,
             m->value_mask, m->attn_mask, m->per_head, (int)m->tq_type, (int)m->tk_type,
             (int)m->tv_type, (int)m->tout_type, (int)m->tscores_type);
}

/* Runs one case on the GPU and the reference; returns the output error. */
static double check_case(vkattn_context *ctx, const fcase *m)
{
    char what[400];
    describe(m, what, sizeof what);
    const rc_mha_widths w = rc_mha_widths_of(&m->desc);
    const vkattn_layer_call *c = &m->call;
    const size_t B = c->batch, Tq = c->tq, Tv = c->tv;
    const size_t nq = B * Tq * w.Dq, nk = B * Tv * w.Dk, nv = B * Tv * w.Dv;
    const size_t nout = B * Tq * w.Dout, nscores = B * w.H * Tq * Tv;
    const size_t nam = B * (m->per_head ? w.H : 1) * Tq * Tv;
    vkattn_mha_weights hw = {
        .query_kernel = th_half_uniform((size_t)w.Dq * w.H * w.dk, sqrtf(3.0f / w.Dq)),
        .query_bias = th_half_uniform((size_t)w.H * w.dk, 0.5f),
        .key_kernel = th_half_uniform((size_t)w.Dk * w.H * w.dk, sqrtf(3.0f / w.Dk)),
        .key_bias = th_half_uniform((size_t)w.H * w.dk, 0.5f),
        .value_kernel = th_half_uniform((size_t)w.Dv * w.H * w.dv, sqrtf(3.0f / w.Dv)),
        .value_bias = th_half_uniform((size_t)w.H * w.dv, 0.5f),
        .output_kernel = th_half_uniform((size_t)w.H * w.dv * w.Dout, sqrtf(3.0f / (w.H * w.dv))),
        .output_bias = th_half_uniform(w.Dout, 0.5f),
    };
    if (m->desc.use_gate) {
        hw.gate_kernel = th_half_uniform((size_t)w.Dq * w.H * w.dv, 2.0f * sqrtf(3.0f / w.Dq));
        hw.gate_bias = th_half_uniform((size_t)w.H * w.dv, 2.0f);
    }
    float *query = th_half_uniform(nq, 1.0f);
    float *value = m->self_attn ? query : th_half_uniform(nv, 1.0f);
    float *key = m->key_given ? th_half_uniform(nk, 1.0f) : NULL;
    float *qm = NULL, *vm = NULL, *am = NULL;
    if (m->query_mask)
        tu_fill_mask(qm = tu_floats(B * Tq), B * Tq, 0.75f);
    if (m->value_mask)
        tu_fill_mask(vm = tu_floats(B * Tv), B * Tv, 0.75f);
    if (m->attn_mask)
        tu_fill_mask(am = tu_floats(nam), nam, 0.75f);

    th_layer_out o = th_layer_out_make(nout, nscores);
    const vkattn_layer_host_io hio = {
        .query = query, .value = value, .key = key, .query_mask = qm, .value_mask = vm,
        .attention_mask = am, .attention_mask_per_head = m->per_head, .output = o.ref,
        .scores = c->return_attention_scores ? o.ref_scores : NULL,
    };
    TH_OK(ctx, vkattn_reference_mha(&m->desc, &hw, c, &hio));

    vkattn_mha *layer = NULL;
    TH_OK(ctx, vkattn_mha_create(ctx, &m->desc, &layer));
    TH_OK(ctx, vkattn_mha_set_weights(layer, &hw));
    vkattn_tensor *tq = th_typed_tensor(ctx, nq, m->tq_type, query);
    vkattn_layer_io io = {
        .query = tq,
        .value = m->self_attn ? tq : th_typed_tensor(ctx, nv, m->tv_type, value),
        .key = key ? th_typed_tensor(ctx, nk, m->tk_type, key) : NULL,
        .query_mask = qm ? th_typed_tensor(ctx, B * Tq, VKATTN_DTYPE_F32, qm) : NULL,
        .value_mask = vm ? th_typed_tensor(ctx, B * Tv, VKATTN_DTYPE_F32, vm) : NULL,
        .attention_mask = am ? th_typed_tensor(ctx, nam, VKATTN_DTYPE_F32, am) : NULL,
        .attention_mask_per_head = m->per_head,
        .output = th_typed_tensor(ctx, nout, m->tout_type, NULL),
        .scores = c->return_attention_scores
                      ? th_typed_tensor(ctx, nscores, m->tscores_type, NULL)
                      : NULL,
    };
    vkattn_result r = vkattn_mha_record(layer, VKATTN_RUN_NOW, c, &io);
    if (r != VKATTN_SUCCESS)
        fail_msg("%s: vkattn_mha_record(VKATTN_RUN_NOW) gave %s (%s)", what, vkattn_result_name(r),
                 vkattn_last_error());
    th_layer_out_download(ctx, &o, &io);
    const double err = th_layer_out_check(&o, io.scores, OUT_BOUND, SCORE_BOUND, what);
    th_assert_validation_clean();

    vkattn_tensor *all[] = {io.query, m->self_attn ? NULL : io.value, io.key, io.query_mask,
                            io.value_mask, io.attention_mask, io.output, io.scores};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vkattn_tensor_destroy(all[i]);
    vkattn_mha_destroy(layer);
    free(hw.query_kernel), free(hw.query_bias), free(hw.key_kernel), free(hw.key_bias);
    free(hw.value_kernel), free(hw.value_bias), free(hw.output_kernel), free(hw.output_bias);
    free(hw.gate_kernel), free(hw.gate_bias);
    free(query), free(key), free(qm), free(vm), free(am);
    if (!m->self_attn)
        free(value);
    th_layer_out_free(&o);
    return err;
}

static void test_random_cases(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    double worst = 0.0;
    for (int i = 0; i < 24; i++) {
        const fcase m = random_case();
        const double err = check_case(ctx, &m);
        worst = err > worst ? err : worst;
    }
    printf("# f16 MHA: largest output error %.3g (bound %.3g)\n", worst, OUT_BOUND);
}

/* Fixed cases every run covers whatever the draw: batch 1 self-attention with
 * all masks and causal; cross-attention with a key of its own width. */
static void test_fixed_cases(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    fcase a = {
        .desc = {.num_heads = 3, .key_dim = 5, .value_dim = 7, .query_width = 13,
                 .value_width = 13, .dtype = VKATTN_DTYPE_F16, .use_gate = true},
        .call = {.batch = 1, .tq = 9, .tv = 9, .causal = VKATTN_CAUSAL_TOP_LEFT,
                 .return_attention_scores = true},
        .self_attn = true, .query_mask = true, .value_mask = true, .attn_mask = true,
        .tq_type = VKATTN_DTYPE_F16, .tv_type = VKATTN_DTYPE_F16,
        .tout_type = VKATTN_DTYPE_F16, .tscores_type = VKATTN_DTYPE_F16,
    };
    check_case(ctx, &a);
    fcase b = {
        .desc = {.num_heads = 2, .key_dim = 6, .query_width = 11, .key_width = 9,
                 .value_width = 15, .output_dim = 7, .no_bias = true,
                 .dtype = VKATTN_DTYPE_F16},
        .call = {.batch = 2, .tq = 5, .tv = 12, .path = VKATTN_SDPA_FUSED},
        .key_given = true, .value_mask = true,
        .tq_type = VKATTN_DTYPE_F32, .tk_type = VKATTN_DTYPE_F16, .tv_type = VKATTN_DTYPE_F16,
        .tout_type = VKATTN_DTYPE_F32,
    };
    check_case(ctx, &b);
}

/* get_weights returns exactly the f16 values set_weights stored (rounded to
 * nearest even). */
static void test_weights_round_trip(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const vkattn_mha_desc desc = {.num_heads = 2, .key_dim = 3, .query_width = 5,
                                  .value_width = 5, .dtype = VKATTN_DTYPE_F16};
    const size_t nk = 5 * 2 * 3, nb = 2 * 3, no = 2 * 3 * 5;
    float *k = tu_floats(nk), *b = tu_floats(nb), *o = tu_floats(no), *ob = tu_floats(5);
    tu_fill_uniform(k, nk, -3, 3), tu_fill_uniform(b, nb, -3, 3);
    tu_fill_uniform(o, no, -3, 3), tu_fill_uniform(ob, 5, -3, 3);
    vkattn_mha_weights w = {k, b, k, b, k, b, o, ob};
    vkattn_mha *layer = NULL;
    TH_OK(ctx, vkattn_mha_create(ctx, &desc, &layer));
    TH_OK(ctx, vkattn_mha_set_weights(layer, &w));
    float *got = tu_floats(no);
    tu_poison(got, no);
    vkattn_mha_weights g = {.output_kernel = got};
    TH_OK(ctx, vkattn_mha_get_weights(layer, &g));
    for (size_t i = 0; i < no; i++) {
        const float want = tu_f16_to_f32(tu_f16_bits(o[i]));
        if (got[i] != want)
            fail_msg("output_kernel[%zu] = %.9g, want its f16 value %.9g", i, (double)got[i],
                     (double)want);
    }
    vkattn_mha_destroy(layer);
    free(k), free(b), free(o), free(ob), free(got);
}

static void test_bad_arguments(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_mha_desc desc = {.num_heads = 2, .key_dim = 4, .query_width = 6, .value_width = 6,
                            .dtype = (vkattn_dtype)7};
    vkattn_mha *layer = NULL;
    TH_EXPECT_ERROR(vkattn_mha_create(ctx, &desc, &layer),
                    VKATTN_ERROR_INVALID_ARGUMENT, "desc->dtype");
    assert_null(layer);
    desc.dtype = VKATTN_DTYPE_F16;
    TH_OK(ctx, vkattn_mha_create(ctx, &desc, &layer));
    const uint32_t B = 1, T = 3;
    vkattn_tensor *x = th_typed_tensor(ctx, B * T * 6, VKATTN_DTYPE_F16, NULL);
    TH_OK(ctx, vkattn_tensor_fill(x, 0.5f));
    vkattn_tensor *out = th_typed_tensor(ctx, B * T * 6, VKATTN_DTYPE_F16, NULL);
    vkattn_tensor *m16 = th_typed_tensor(ctx, B * T, VKATTN_DTYPE_F16, NULL);
    vkattn_tensor *am16 = th_typed_tensor(ctx, B * T * T, VKATTN_DTYPE_F16, NULL);
    vkattn_layer_call call = {.batch = B, .tq = T, .tv = T};
    vkattn_layer_io io = {.query = x, .value = x, .output = out, .value_mask = m16};
    TH_EXPECT_ERROR(vkattn_mha_record(layer, VKATTN_RUN_NOW, &call, &io),
                    VKATTN_ERROR_INVALID_ARGUMENT, "io->value_mask");
    io.value_mask = NULL, io.query_mask = m16;
    TH_EXPECT_ERROR(vkattn_mha_record(layer, VKATTN_RUN_NOW, &call, &io),
                    VKATTN_ERROR_INVALID_ARGUMENT, "io->query_mask");
    io.query_mask = NULL, io.attention_mask = am16;
    TH_EXPECT_ERROR(vkattn_mha_record(layer, VKATTN_RUN_NOW, &call, &io),
                    VKATTN_ERROR_INVALID_ARGUMENT, "io->attention_mask");
    io.attention_mask = NULL;
    /* the cached path takes f16 data (test_mha_cache_f16.c) but an f32 mask
     * over the cache, (B, capacity) */
    vkattn_kv_cache_desc cd = {.batch = B, .kv_heads = 2, .capacity = T, .key_dim = 4,
                               .value_dim = 4};
    vkattn_kv_cache *cache = NULL;
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    call.causal = VKATTN_CAUSAL_TOP_LEFT;
    io.value_mask = m16;
    TH_EXPECT_ERROR(vkattn_mha_record_cached(layer, VKATTN_RUN_NOW, &call, &io, cache),
                    VKATTN_ERROR_INVALID_ARGUMENT, "io->value_mask");
    io.value_mask = NULL;
    /* an f32 layer still refuses f16 data tensors */
    desc.dtype = VKATTN_DTYPE_F32;
    vkattn_mha *f32_layer = NULL;
    TH_OK(ctx, vkattn_mha_create(ctx, &desc, &f32_layer));
    call.causal = VKATTN_CAUSAL_NONE;
    TH_EXPECT_ERROR(vkattn_mha_record(f32_layer, VKATTN_RUN_NOW, &call, &io), VKATTN_ERROR_UNSUPPORTED, "io->query");
    th_assert_validation_clean();
    vkattn_kv_cache_destroy(cache);
    vkattn_mha_destroy(f32_layer);
    vkattn_mha_destroy(layer);
    vkattn_tensor *all[] = {x, out, m16, am16};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vkattn_tensor_destroy(all[i]);
}

TU_MAIN(th_setup, th_teardown,
    test_fixed_cases, test_random_cases, test_weights_round_trip, test_bad_arguments)
