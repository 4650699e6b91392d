/* A new layer's weights (vkattn_initializer, vkattn/layer_call.h): Keras's
 * default initialization at create, as get_weights returns it.
 *
 * MultiHeadAttention (query_width 32, 4 heads, key_dim 16, value_dim 8,
 * output 24): every kernel within its glorot_uniform limit
 * sqrt(6 / (fan_in + fan_out)) with Keras 3.15's EinsumDense fans (query
 * kernel (32, 4, 16): 32 and 64, limit 0.25; output kernel (4, 8, 24): 32 and
 * 24), and reaching past 0.95 of it (the older rank-3 count, receptive field
 * 32, would give limit 0.097 and fail that); biases exactly zero; the same
 * seed the same weights, another seed others; the output of a call not all
 * zero. GroupedQueryAttention, AdditiveAttention (scale, fans n and n) and
 * BahdanauAttention (Dense kernels; score_kernel as a Dense(1)'s (units, 1))
 * within their limits, Attention's scalars 1. Each initializer's bound
 * (he/lecun limits, the normals cut at 2 stddev), zeros and ones; an element
 * recomputed from the documented Philox stream across the host's chunk
 * boundary; unknown initializers refused naming the field.
 *
 * Statistics of the 2048-element query kernel, uniform in (-L, L), fixed
 * seed: mean within 0.07 L (5.5 sd: sd = L / sqrt(3 n) = 0.0128 L), mean
 * square within 10% of L^2 / 3 (5 sd: the sd of a mean of x^2 is
 * L^2 sqrt(4/45 / n) = 0.0066 L^2, 2% of L^2 / 3), and each quarter of
 * (-L, L) holding 25% +- 5% (5 sd of a binomial share, sqrt(.1875 / n) = 0.96%).
 * Truncated normals: the mean square within 15% of scale / n (3 sd, bounding
 * Var(x^2) <= (2 stddev)^2 E[x^2]). Runs in well under a second. */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vkattn/philox.h"

enum { DQ = 32, H = 4, KD = 16, VD = 8, DOUT = 24, DV = 12 };
enum { NQ = DQ * H * KD, NV = DV * H * VD, NO = H * VD * DOUT };

static vkattn_mha_desc mha_desc(uint64_t seed)
{
    return (vkattn_mha_desc){.num_heads = H, .key_dim = KD, .value_dim = VD, .query_width = DQ,
                             .value_width = DV, .output_dim = DOUT, .initializer_seed = seed};
}

typedef struct mha_w {
    float qk[NQ], kk[DV * H * KD], vk[NV], ok[NO];
    float qb[H * KD], kb[H * KD], vb[H * VD], ob[DOUT];
} mha_w;

static void mha_weights(vkattn_context *ctx, const vkattn_mha_desc *d, mha_w *w)
{
    vkattn_mha *layer;
    TH_OK(ctx, vkattn_mha_create(ctx, d, &layer));
    tu_poison((float *)w, sizeof *w / sizeof(float));
    vkattn_mha_weights hw = {w->qk, w->qb, w->kk, w->kb, w->vk, w->vb, w->ok, w->ob};
    TH_OK(ctx, vkattn_mha_get_weights(layer, &hw));
    vkattn_mha_destroy(layer);
}

/* Every x within (-limit, limit] (limit widened by one f32 ulp: the draw is
 * rounded to f32), not all zero, and max|x| past `reach` of the limit. */
static void within(const float *x, size_t n, double limit, double reach, const char *what)
{
    double top = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!TU_WITHIN(fabs(x[i]), limit * (1.0 + 0x1p-23)))
            fail_msg("%s[%zu] = %.9g outside the limit %.9g", what, i, (double)x[i], limit);
        top = fmax(top, fabs(x[i]));
    }
    if (!(top >= reach * limit))
        fail_msg("%s: max|x| = %.9g, below %.2f of the limit %.9g", what, top, reach, limit);
}

static void all_equal(const float *x, size_t n, float v, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (x[i] != v)
            fail_msg("%s[%zu] = %.9g, want %g", what, i, (double)x[i], (double)v);
}

static double mean_square(const float *x, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += (double)x[i] * x[i];
    return s / (double)n;
}

static void test_mha_default(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static mha_w a, b, c;
    const vkattn_mha_desc d = mha_desc(7);
    mha_weights(ctx, &d, &a);
    const double lq = sqrt(6.0 / (DQ + H * KD)), lk = sqrt(6.0 / (DV + H * KD)),
                 lv = sqrt(6.0 / (DV + H * VD)), lo = sqrt(6.0 / (H * VD + DOUT));
    within(a.qk, NQ, lq, 0.95, "query_kernel");
    within(a.kk, DV * H * KD, lk, 0.95, "key_kernel");
    within(a.vk, NV, lv, 0.9, "value_kernel");
    within(a.ok, NO, lo, 0.95, "output_kernel");
    all_equal(a.qb, H * KD, 0.0f, "query_bias");
    all_equal(a.kb, H * KD, 0.0f, "key_bias");
    all_equal(a.vb, H * VD, 0.0f, "value_bias");
    all_equal(a.ob, DOUT, 0.0f, "output_bias");

    /* roughly uniform (bounds in the header) */
    double sum = 0.0;
    unsigned bins[4] = {0};
    for (size_t i = 0; i < NQ; i++) {
        sum += a.qk[i];
        int k = (int)floor((a.qk[i] / lq + 1.0) * 2.0);
        bins[k < 0 ? 0 : k > 3 ? 3 : k]++;
    }
    if (fabs(sum / NQ) > 0.07 * lq)
        fail_msg("query_kernel mean %.6g; bound %.6g", sum / NQ, 0.07 * lq);
    const double ms = mean_square(a.qk, NQ);
    if (fabs(ms / (lq * lq / 3.0) - 1.0) > 0.10)
        fail_msg("query_kernel mean square %.6g; want %.6g +- 10%%", ms, lq * lq / 3.0);
    for (int k = 0; k < 4; k++)
        if (fabs(bins[k] / (double)NQ - 0.25) > 0.05)
            fail_msg("query_kernel quarter %d holds %u of %d", k, bins[k], NQ);

    /* the kernels are distinct streams, and the seed decides everything */
    assert_true(memcmp(a.qk, a.kk, 64 * sizeof(float)) != 0);
    mha_weights(ctx, &d, &b);
    assert_memory_equal(&a, &b, sizeof a);
    const vkattn_mha_desc d2 = mha_desc(8);
    mha_weights(ctx, &d2, &c);
    assert_true(memcmp(a.qk, c.qk, sizeof a.qk) != 0);
    th_assert_validation_clean();
}

/* A new layer's call gives a nonzero, finite output (before, all zeros). */
static void test_mha_output(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    enum { B = 2, TQ = 3, TV = 5 };
    vkattn_mha *layer;
    const vkattn_mha_desc d = mha_desc(0);
    TH_OK(ctx, vkattn_mha_create(ctx, &d, &layer));
    float *q = tu_floats(B * TQ * DQ), *v = tu_floats(B * TV * DV);
    tu_fill_uniform(q, B * TQ * DQ, -1.0f, 1.0f);
    tu_fill_uniform(v, B * TV * DV, -1.0f, 1.0f);
    vkattn_layer_io io = {.query = th_tensor(ctx, B * TQ * DQ, q),
                          .value = th_tensor(ctx, B * TV * DV, v),
                          .output = th_tensor(ctx, B * TQ * DOUT, NULL)};
    const vkattn_layer_call call = {.batch = B, .tq = TQ, .tv = TV};
    TH_OK(ctx, vkattn_mha_record(layer, VKATTN_RUN_NOW, &call, &io));
    float *out = th_download(io.output, B * TQ * DOUT);
    size_t nonzero = 0;
    for (size_t i = 0; i < B * TQ * DOUT; i++) {
        assert_true(isfinite(out[i]));
        nonzero += out[i] != 0.0f;
    }
    if (nonzero < B * TQ * DOUT / 2)
        fail_msg("a new layer's output has %zu nonzero of %d", nonzero, B * TQ * DOUT);
    th_assert_validation_clean();
    free(out), free(q), free(v);
    vkattn_tensor_destroy(io.query), vkattn_tensor_destroy(io.value);
    vkattn_tensor_destroy(io.output);
    vkattn_mha_destroy(layer);
}

/* Each initializer on the kernels (the query kernel: fans 32 and 64), and
 * on the biases. */
static void test_initializers(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static mha_w w;
    const double fi = DQ, fo = H * KD;
    const struct {
        vkattn_initializer init;
        double scale, n; /* variance scale / n */
        bool normal;
        const char *name;
    } kinds[] = {
        {VKATTN_INIT_GLOROT_UNIFORM, 1, (fi + fo) / 2, false, "glorot_uniform"},
        {VKATTN_INIT_GLOROT_NORMAL, 1, (fi + fo) / 2, true, "glorot_normal"},
        {VKATTN_INIT_HE_UNIFORM, 2, fi, false, "he_uniform"},
        {VKATTN_INIT_HE_NORMAL, 2, fi, true, "he_normal"},
        {VKATTN_INIT_LECUN_UNIFORM, 1, fi, false, "lecun_uniform"},
        {VKATTN_INIT_LECUN_NORMAL, 1, fi, true, "lecun_normal"},
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        vkattn_mha_desc d = mha_desc(3);
        d.kernel_initializer = kinds[k].init;
        mha_weights(ctx, &d, &w);
        const double var = kinds[k].scale / kinds[k].n;
        /* uniform: (-sqrt(3 var), sqrt(3 var)); normal: cut at 2 stddev */
        const double limit = kinds[k].normal ? 2.0 * sqrt(var) / 0.87962566103423978
                                             : sqrt(3.0 * var);
        within(w.qk, NQ, limit, kinds[k].normal ? 0.8 : 0.95, kinds[k].name);
        const double ms = mean_square(w.qk, NQ);
        if (fabs(ms / var - 1.0) > (kinds[k].normal ? 0.15 : 0.10))
            fail_msg("%s: mean square %.6g; want %.6g", kinds[k].name, ms, var);
        all_equal(w.qb, H * KD, 0.0f, kinds[k].name);
    }
    vkattn_mha_desc d = mha_desc(3);
    d.kernel_initializer = VKATTN_INIT_ZEROS;
    d.bias_initializer = VKATTN_INIT_ONES;
    mha_weights(ctx, &d, &w);
    all_equal(w.qk, NQ, 0.0f, "zeros");
    all_equal(w.ob, DOUT, 1.0f, "ones");
    d.kernel_initializer = VKATTN_INIT_ONES;
    d.bias_initializer = VKATTN_INIT_GLOROT_UNIFORM; /* (H, KD): fans 4 and 16 */
    mha_weights(ctx, &d, &w);
    all_equal(w.ok, NO, 1.0f, "ones");
    within(w.qb, H * KD, sqrt(6.0 / (H + KD)), 0.8, "glorot bias");
    th_assert_validation_clean();
}

/* Element e of a uniform weight is the documented stream's, also past the
 * host's 16384-element chunks: query kernel (64, 8, 64) = 32768 elements. */
static void test_stream(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    enum { D = 64, HH = 8, K = 64, N = D * HH * K };
    const uint64_t seed = 0x123456789abcdefull;
    vkattn_mha *layer;
    const vkattn_mha_desc d = {.num_heads = HH, .key_dim = K, .query_width = D,
                               .value_width = 4, .initializer_seed = seed};
    TH_OK(ctx, vkattn_mha_create(ctx, &d, &layer));
    float *qk = tu_floats(N);
    TH_OK(ctx, vkattn_mha_get_weights(layer, &(vkattn_mha_weights){.query_kernel = qk}));
    const double limit = sqrt(6.0 / (D + HH * K));
    const uint64_t check[] = {0, 1, 5, 16383, 16384, 16385, N - 1};
    for (size_t i = 0; i < sizeof check / sizeof check[0]; i++) {
        const uint64_t e = check[i];
        /* counter (e lo, e hi, weight index 0, attempt 0), key seed ^ "init" */
        const uint32_t ctr[4] = {(uint32_t)e, (uint32_t)(e >> 32), 0, 0};
        const uint32_t key[2] = {(uint32_t)seed ^ 0x74696E69u, (uint32_t)(seed >> 32)};
        uint32_t x[4];
        vkattn_philox4x32_10(ctr, key, x);
        const float want = (float)(limit * (2.0 * (((x[0] >> 8) + 0.5) * 0x1p-24) - 1.0));
        if (qk[e] != want)
            fail_msg("query_kernel[%llu] = %.9g; the stream gives %.9g", (unsigned long long)e,
                     (double)qk[e], (double)want);
    }
    free(qk);
    vkattn_mha_destroy(layer);
}

static void test_other_layers(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    /* GQA: query kernel (16, 4, 8), key (12, 2, 8), output (4, 8, 16) */
    vkattn_gqa *g;
    const vkattn_gqa_desc gd = {.head_dim = 8, .num_query_heads = 4, .num_key_value_heads = 2,
                                .query_width = 16, .value_width = 12, .initializer_seed = 1};
    TH_OK(ctx, vkattn_gqa_create(ctx, &gd, &g));
    float gq[16 * 32], gqb[32], gk[12 * 16], gkb[16], gv[12 * 16], gvb[16], go[32 * 16], gob[16];
    TH_OK(ctx, vkattn_gqa_get_weights(g, &(vkattn_gqa_weights){gq, gqb, gk, gkb, gv, gvb, go,
                                                                gob}));
    within(gq, 16 * 32, sqrt(6.0 / (16 + 32)), 0.9, "gqa query_kernel");
    within(gk, 12 * 16, sqrt(6.0 / (12 + 16)), 0.9, "gqa key_kernel");
    within(go, 32 * 16, sqrt(6.0 / (32 + 16)), 0.9, "gqa output_kernel");
    all_equal(gkb, 16, 0.0f, "gqa key_bias");
    all_equal(gob, 16, 0.0f, "gqa output_bias");
    vkattn_gqa_destroy(g);

    /* AdditiveAttention: scale (64,), glorot_uniform with fans 64 and 64 */
    vkattn_additive_attention *aa;
    TH_OK(ctx, vkattn_additive_attention_create(
                   ctx, &(vkattn_additive_attention_desc){.query_width = 64, .value_width = 3,
                                                        .key_width = 64},
                   &aa));
    float s[64];
    TH_OK(ctx, vkattn_additive_attention_get_weights(aa, &(vkattn_additive_attention_weights){s}));
    within(s, 64, sqrt(6.0 / 128), 0.8, "additive scale");
    vkattn_additive_attention_destroy(aa);

    /* Bahdanau: (6, 32) and (5, 32) kernels, score_kernel a Dense(1)'s (32, 1) */
    vkattn_bahdanau *b;
    TH_OK(ctx, vkattn_bahdanau_create(
                   ctx, &(vkattn_bahdanau_desc){.query_width = 6, .value_width = 5, .units = 32},
                   &b));
    float bq[6 * 32], bk[5 * 32], bv[32];
    vkattn_bahdanau_weights bw = {bq, bk, bv, NAN};
    TH_OK(ctx, vkattn_bahdanau_get_weights(b, &bw));
    within(bq, 6 * 32, sqrt(6.0 / 38), 0.8, "bahdanau query_kernel");
    within(bk, 5 * 32, sqrt(6.0 / 37), 0.8, "bahdanau key_kernel");
    within(bv, 32, sqrt(6.0 / 33), 0.6, "bahdanau score_kernel");
    assert_true(bw.score_bias == 0.0f);
    vkattn_bahdanau_destroy(b);

    /* Attention: Keras's scalars start at 1, whatever else */
    vkattn_attention *a;
    TH_OK(ctx, vkattn_attention_create(
                   ctx, &(vkattn_attention_desc){.query_width = 4, .value_width = 4,
                                                 .use_scale = true,
                                                 .score_mode = VKATTN_SCORE_CONCAT},
                   &a));
    vkattn_attention_weights aw = {NAN, NAN};
    TH_OK(ctx, vkattn_attention_get_weights(a, &aw));
    assert_true(aw.scale == 1.0f && aw.concat_score_weight == 1.0f);
    vkattn_attention_destroy(a);
    th_assert_validation_clean();
}

static void test_bad_initializer(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_mha *m = NULL;
    vkattn_mha_desc md = mha_desc(0);
    md.kernel_initializer = (vkattn_initializer)9;
    TH_EXPECT_ERROR(vkattn_mha_create(ctx, &md, &m), VKATTN_ERROR_INVALID_ARGUMENT,
                    "desc->kernel_initializer is 9");
    md.kernel_initializer = VKATTN_INIT_DEFAULT;
    md.bias_initializer = (vkattn_initializer)-1;
    TH_EXPECT_ERROR(vkattn_mha_create(ctx, &md, &m), VKATTN_ERROR_INVALID_ARGUMENT,
                    "desc->bias_initializer");
    assert_null(m);
    vkattn_gqa *g = NULL;
    const vkattn_gqa_desc gd = {.head_dim = 2, .num_query_heads = 1, .num_key_value_heads = 1,
                                .query_width = 2, .value_width = 2,
                                .kernel_initializer = (vkattn_initializer)100};
    TH_EXPECT_ERROR(vkattn_gqa_create(ctx, &gd, &g), VKATTN_ERROR_INVALID_ARGUMENT,
                    "desc->kernel_initializer");
    vkattn_additive_attention *aa = NULL;
    TH_EXPECT_ERROR(vkattn_additive_attention_create(
                        ctx, &(vkattn_additive_attention_desc){
                                 .query_width = 2, .value_width = 2,
                                 .scale_initializer = (vkattn_initializer)12},
                        &aa),
                    VKATTN_ERROR_INVALID_ARGUMENT, "desc->scale_initializer");
    vkattn_bahdanau *b = NULL;
    TH_EXPECT_ERROR(vkattn_bahdanau_create(ctx,
                                           &(vkattn_bahdanau_desc){
                                               .query_width = 2, .value_width = 2, .units = 2,
                                               .bias_initializer = (vkattn_initializer)9},
                                           &b),
                    VKATTN_ERROR_INVALID_ARGUMENT, "desc->bias_initializer");
    th_assert_validation_clean();
}

TU_MAIN(th_setup, th_teardown,
    test_mha_default, test_mha_output, test_initializers, test_stream, test_other_layers,
    test_bad_initializer)
