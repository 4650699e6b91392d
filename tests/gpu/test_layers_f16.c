/* The single-head layers in half precision (desc.dtype VKATTN_DTYPE_F16):
 * Attention (dot and concat), AdditiveAttention and BahdanauAttention vs
 * their f32 CPU references run on the f16-rounded inputs and weights --
 * Keras's float16 policy, where the inputs and weights are f16.
 *
 * Random shapes: odd widths, batch 1, Tq != Tv, key given or omitted, use_scale
 * on and off, query, value and attention masks, causal, dropout, returned
 * scores, the SDPA paths Attention's dot mode may take, and each of query,
 * key, value, output and scores f16 or f32 at random. Outputs are poisoned
 * (NaN) before each run. Then the weights round trip (get_weights gives the
 * f16 values widened), a new layer's weight tensors (their types and
 * initial values), bad arguments (an f16 mask of each kind, a bad
 * dtype, f16 data to an f32 layer), and the f16 layers' backward with f32
 * io and gradients (finite; its accuracy is test_layer_backward.c's).
 *
 * Bound (vkattn/attention.h, additive_attention.h, bahdanau.h): the layer
 * rounds its scaled inputs, projections and scores to f16 (and an f16 output
 * or f16 scores once more), each a relative error of at most eps16 / 2,
 * eps16 = 2^-10; with inputs of magnitude about 1 and logits of magnitude up
 * to about 4 (the weights below are scaled by 1/sqrt(width) as Glorot-like
 * initializers do) these stay a few eps16 of the output scale:
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

typedef enum kind { DOT, CONCAT, ADDITIVE, BAHDANAU, N_KINDS } kind;
static const char *const kind_names[N_KINDS] = {"attention-dot", "attention-concat",
                                                "additive_attention", "bahdanau"};

typedef struct lcase {
    kind kind;
    uint32_t dq, dk, dv, units; /* dk == dq except for Bahdanau */
    bool use_scale;             /* Attention use_scale, AdditiveAttention !no_scale */
    float dropout;
    vkattn_layer_call call;
    bool key_given, query_mask, value_mask, attn_mask;
    vkattn_dtype tq_type, tk_type, tv_type, tout_type, tscores_type;
} lcase;

static float half_value(float x) { return tu_f16_to_f32(tu_f16_bits(x)); }

static bool coin(void) { return tu_rand_range(0, 1) == 1; }
static vkattn_dtype any_type(void) { return coin() ? VKATTN_DTYPE_F16 : VKATTN_DTYPE_F32; }

static lcase random_case(kind k)
{
    lcase m = {.kind = k};
    m.dq = tu_rand_range(1, 13);
    m.dv = tu_rand_range(1, 13);
    m.dk = m.dq;
    if (k == BAHDANAU) {
        m.dk = tu_rand_range(1, 13);
        m.units = tu_rand_range(1, 13);
    }
    m.key_given = m.dk != m.dv || coin();
    m.use_scale = coin();
    m.dropout = tu_rand_range(0, 2) == 0 ? tu_rand_float(0.1f, 0.5f) : 0.0f;
    vkattn_layer_call *c = &m.call;
    c->batch = tu_rand_range(1, 3);
    c->tq = tu_rand_range(1, 11);
    c->tv = tu_rand_range(1, 11);
    c->causal = tu_rand_range(0, 2) != 0 ? VKATTN_CAUSAL_NONE
                : coin()                 ? VKATTN_CAUSAL_BOTTOM_RIGHT
                                         : VKATTN_CAUSAL_TOP_LEFT;
    c->training = coin();
    c->seed = ((uint64_t)tu_rand_u32() << 32) | tu_rand_u32();
    c->offset = tu_rand_u32();
    c->return_attention_scores = coin();
    c->path = VKATTN_SDPA_AUTO;
    if (k == DOT)
        c->path = c->return_attention_scores ? (coin() ? VKATTN_SDPA_AUTO : VKATTN_SDPA_UNFUSED)
                                             : (vkattn_sdpa_path)tu_rand_range(0, 2);
    else if (coin())
        c->path = VKATTN_SDPA_UNFUSED;
    m.query_mask = tu_rand_range(0, 2) == 0;
    m.value_mask = coin();
    m.attn_mask = coin();
    m.tq_type = any_type();
    m.tk_type = any_type();
    m.tv_type = any_type();
    m.tout_type = any_type();
    m.tscores_type = any_type();
    return m;
}

static void describe(const lcase *m, char *buf, size_t n)
{
    char k[96];
    rc_describe_call(k, sizeof k, &m->call);
    snprintf(buf, n, "%s f16 dq=%u dk=%u dv=%u units=%u scale=%d drop=%.2f | %s key=%d qm=%d "
             "vm=%d am=%d | types q=%d k=%d v=%d out=%d scores=%d", kind_names[m->kind], m->dq,
             m->dk, m->dv, m->units, m->use_scale, (double)m->dropout, k, m->key_given,
             m->query_mask, m->value_mask, m->attn_mask, (int)m->tq_type, (int)m->tk_type,
             (int)m->tv_type, (int)m->tout_type, (int)m->tscores_type);
}

/* One layer of any kind with f16-representable weights scaled so that the
 * logits stay within a few units (see the bound above). */
typedef struct layer {
    kind kind;
    void *obj;
    vkattn_attention_desc ad;
    vkattn_additive_attention_desc aad;
    vkattn_bahdanau_desc bd;
    vkattn_attention_weights aw;
    vkattn_additive_attention_weights aaw;
    vkattn_bahdanau_weights bw;
} layer;

static void layer_make(vkattn_context *ctx, const lcase *m, layer *L)
{
    memset(L, 0, sizeof *L);
    L->kind = m->kind;
    const float inv = 1.0f / sqrtf((float)m->dq);
    switch (m->kind) {
    case DOT:
    case CONCAT:
        L->ad = (vkattn_attention_desc){
            .query_width = m->dq, .value_width = m->dv, .key_width = m->key_given ? m->dk : 0,
            .use_scale = m->use_scale,
            .score_mode = m->kind == DOT ? VKATTN_SCORE_DOT : VKATTN_SCORE_CONCAT,
            .dropout = m->dropout, .dtype = VKATTN_DTYPE_F16,
        };
        /* dot: scale ~ 1/sqrt(dq); concat: tanh sums weighted by ~ 1/sqrt(dq) */
        L->aw.scale = half_value(m->kind == DOT ? tu_rand_float(0.5f, 1.5f) * inv
                                                : tu_rand_float(0.3f, 1.5f));
        L->aw.concat_score_weight = half_value(tu_rand_float(-1.5f, 1.5f) * inv);
        TH_OK(ctx, vkattn_attention_create(ctx, &L->ad, (vkattn_attention **)&L->obj));
        TH_OK(ctx, vkattn_attention_set_weights(L->obj, &L->aw));
        break;
    case ADDITIVE:
        L->aad = (vkattn_additive_attention_desc){
            .query_width = m->dq, .value_width = m->dv, .key_width = m->key_given ? m->dk : 0,
            .no_scale = !m->use_scale, .dropout = m->dropout, .dtype = VKATTN_DTYPE_F16,
        };
        L->aaw.scale = th_half_uniform(m->dq, 1.5f * inv);
        TH_OK(ctx, vkattn_additive_attention_create(ctx, &L->aad,
                                                    (vkattn_additive_attention **)&L->obj));
        TH_OK(ctx, vkattn_additive_attention_set_weights(L->obj, &L->aaw));
        break;
    default:
        L->bd = (vkattn_bahdanau_desc){
            .query_width = m->dq, .key_width = m->key_given ? m->dk : 0,
            .value_width = m->dv, .units = m->units, .dropout = m->dropout,
            .dtype = VKATTN_DTYPE_F16,
        };
        L->bw.query_kernel = th_half_uniform((size_t)m->dq * m->units, sqrtf(3.0f / m->dq));
        L->bw.key_kernel = th_half_uniform((size_t)m->dk * m->units, sqrtf(3.0f / m->dk));
        L->bw.score_kernel = th_half_uniform(m->units, sqrtf(3.0f / m->units));
        L->bw.score_bias = half_value(tu_rand_float(-1, 1));
        TH_OK(ctx, vkattn_bahdanau_create(ctx, &L->bd, (vkattn_bahdanau **)&L->obj));
        TH_OK(ctx, vkattn_bahdanau_set_weights(L->obj, &L->bw));
        break;
    }
}

static vkattn_result layer_run(layer *L, const vkattn_layer_call *c, const vkattn_layer_io *io)
{
    switch (L->kind) {
    case DOT:
    case CONCAT:
        return vkattn_attention_record(L->obj, VKATTN_RUN_NOW, c, io);
    case ADDITIVE:
        return vkattn_additive_attention_record(L->obj, VKATTN_RUN_NOW, c, io);
    default:
        return vkattn_bahdanau_record(L->obj, VKATTN_RUN_NOW, c, io);
    }
}

static vkattn_result layer_reference(layer *L, const vkattn_layer_call *c,
                                     const vkattn_layer_host_io *io)
{
    switch (L->kind) {
    case DOT:
    case CONCAT:
        return vkattn_reference_attention(&L->ad, &L->aw, c, io);
    case ADDITIVE:
        return vkattn_reference_additive_attention(&L->aad, &L->aaw, c, io);
    default:
        return vkattn_reference_bahdanau(&L->bd, &L->bw, c, io);
    }
}

static void layer_free(layer *L)
{
    switch (L->kind) {
    case DOT:
    case CONCAT:
        vkattn_attention_destroy(L->obj);
        break;
    case ADDITIVE:
        vkattn_additive_attention_destroy(L->obj);
        free(L->aaw.scale);
        break;
    default:
        vkattn_bahdanau_destroy(L->obj);
        free(L->bw.query_kernel), free(L->bw.key_kernel), free(L->bw.score_kernel);
        break;
    }
}

/* Runs one case on the GPU and the reference; returns the output error. */
static double check_case(vkattn_context *ctx, const lcase *m)
{
    char what[400];
    describe(m, what, sizeof what);
    const vkattn_layer_call *c = &m->call;
    const size_t B = c->batch, Tq = c->tq, Tv = c->tv;
    const size_t nq = B * Tq * m->dq, nk = B * Tv * m->dk, nv = B * Tv * m->dv;
    const size_t nout = B * Tq * m->dv, nscores = B * Tq * Tv;
    layer L;
    layer_make(ctx, m, &L);
    float *query = th_half_uniform(nq, 1.0f), *value = th_half_uniform(nv, 1.0f);
    float *key = m->key_given ? th_half_uniform(nk, 1.0f) : NULL;
    float *qm = NULL, *vm = NULL, *am = NULL;
    if (m->query_mask)
        tu_fill_mask(qm = tu_floats(B * Tq), B * Tq, 0.75f);
    if (m->value_mask)
        tu_fill_mask(vm = tu_floats(B * Tv), B * Tv, 0.75f);
    if (m->attn_mask)
        tu_fill_mask(am = tu_floats(nscores), nscores, 0.75f);

    th_layer_out o = th_layer_out_make(nout, nscores);
    const vkattn_layer_host_io hio = {
        .query = query, .value = value, .key = key, .query_mask = qm, .value_mask = vm,
        .attention_mask = am, .output = o.ref,
        .scores = c->return_attention_scores ? o.ref_scores : NULL,
    };
    TH_OK(ctx, layer_reference(&L, c, &hio));

    vkattn_layer_io io = {
        .query = th_typed_tensor(ctx, nq, m->tq_type, query),
        .value = th_typed_tensor(ctx, nv, m->tv_type, value),
        .key = key ? th_typed_tensor(ctx, nk, m->tk_type, key) : NULL,
        .query_mask = qm ? th_typed_tensor(ctx, B * Tq, VKATTN_DTYPE_F32, qm) : NULL,
        .value_mask = vm ? th_typed_tensor(ctx, B * Tv, VKATTN_DTYPE_F32, vm) : NULL,
        .attention_mask = am ? th_typed_tensor(ctx, nscores, VKATTN_DTYPE_F32, am) : NULL,
        .output = th_typed_tensor(ctx, nout, m->tout_type, NULL),
        .scores = c->return_attention_scores ? th_typed_tensor(ctx, nscores, m->tscores_type, NULL)
                                             : NULL,
    };
    vkattn_result r = layer_run(&L, c, &io);
    if (r != VKATTN_SUCCESS)
        fail_msg("%s: the layer's run gave %s (%s)", what, vkattn_result_name(r),
                 vkattn_last_error());
    th_layer_out_download(ctx, &o, &io);
    const double err = th_layer_out_check(&o, io.scores, OUT_BOUND, SCORE_BOUND, what);
    th_assert_validation_clean();

    vkattn_tensor *all[] = {io.query,      io.value,          io.key,    io.query_mask,
                            io.value_mask, io.attention_mask, io.output, io.scores};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vkattn_tensor_destroy(all[i]);
    layer_free(&L);
    free(query), free(key), free(value), free(qm), free(vm), free(am);
    th_layer_out_free(&o);
    return err;
}

static void test_random_cases(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int k = 0; k < N_KINDS; k++) {
        double worst = 0.0;
        for (int i = 0; i < 10; i++) {
            const lcase m = random_case((kind)k);
            const double err = check_case(ctx, &m);
            worst = err > worst ? err : worst;
        }
        printf("# f16 %s: largest output error %.3g (bound %.3g)\n", kind_names[k], worst,
               OUT_BOUND);
    }
}

/* Fixed cases every run covers whatever the draw: every kind with all its
 * tensors f16, all masks, causal, dropout in training and f16 scores. */
static void test_fixed_cases(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int k = 0; k < N_KINDS; k++) {
        lcase m = {
            .kind = (kind)k, .dq = 7, .dk = k == BAHDANAU ? 5 : 7, .dv = 9, .units = 6,
            .use_scale = true, .dropout = 0.25f,
            .call = {.batch = 2, .tq = 5, .tv = 11, .causal = VKATTN_CAUSAL_BOTTOM_RIGHT,
                     .training = true, .seed = 7, .return_attention_scores = true},
            .key_given = true, .query_mask = true, .value_mask = true, .attn_mask = true,
            .tq_type = VKATTN_DTYPE_F16, .tk_type = VKATTN_DTYPE_F16,
            .tv_type = VKATTN_DTYPE_F16, .tout_type = VKATTN_DTYPE_F16,
            .tscores_type = VKATTN_DTYPE_F16,
        };
        check_case(ctx, &m);
        /* batch 1, one query row, f32 io around the f16 layer */
        m.call = (vkattn_layer_call){.batch = 1, .tq = 1, .tv = 3, .return_attention_scores = true};
        m.query_mask = m.attn_mask = false;
        m.tq_type = m.tk_type = m.tv_type = m.tout_type = m.tscores_type = VKATTN_DTYPE_F32;
        check_case(ctx, &m);
    }
}

static void expect_f16(vkattn_context *ctx, const float *want, const float *got, size_t n,
                       const char *what)
{
    (void)ctx;
    for (size_t i = 0; i < n; i++)
        if (got[i] != half_value(want[i]))
            fail_msg("%s[%zu] = %.9g, want its f16 value %.9g", what, i, (double)got[i],
                     (double)half_value(want[i]));
}

/* get_weights returns exactly the f16 values set_weights stored (rounded to
 * nearest even); Bahdanau's score_bias is a host scalar, kept as given. */
static void test_weights_round_trip(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    float x[24];
    tu_fill_uniform(x, 24, -3, 3);
    x[0] = 1.0f + 0x1p-11f; /* a tie: rounds to even (1.0) */

    vkattn_attention *a = NULL;
    const vkattn_attention_desc ad = {.query_width = 3, .value_width = 3, .use_scale = true,
                                      .score_mode = VKATTN_SCORE_CONCAT,
                                      .dtype = VKATTN_DTYPE_F16};
    TH_OK(ctx, vkattn_attention_create(ctx, &ad, &a));
    TH_OK(ctx, vkattn_attention_set_weights(a, &(vkattn_attention_weights){x[0], x[1]}));
    vkattn_attention_weights aw = {NAN, NAN};
    TH_OK(ctx, vkattn_attention_get_weights(a, &aw));
    expect_f16(ctx, &x[0], &aw.scale, 1, "attention scale");
    expect_f16(ctx, &x[1], &aw.concat_score_weight, 1, "attention concat_score_weight");
    assert_true(aw.scale == 1.0f);
    vkattn_attention_destroy(a);

    vkattn_additive_attention *aa = NULL;
    const vkattn_additive_attention_desc aad = {.query_width = 5, .value_width = 5,
                                                .dtype = VKATTN_DTYPE_F16};
    TH_OK(ctx, vkattn_additive_attention_create(ctx, &aad, &aa));
    TH_OK(ctx, vkattn_additive_attention_set_weights(
                   aa, &(vkattn_additive_attention_weights){.scale = x}));
    float got[24];
    tu_poison(got, 24);
    TH_OK(ctx, vkattn_additive_attention_get_weights(
                   aa, &(vkattn_additive_attention_weights){.scale = got}));
    expect_f16(ctx, x, got, 5, "additive_attention scale");
    vkattn_additive_attention_destroy(aa);

    vkattn_bahdanau *b = NULL;
    const vkattn_bahdanau_desc bd = {.query_width = 2, .value_width = 3, .units = 4,
                                     .dtype = VKATTN_DTYPE_F16};
    TH_OK(ctx, vkattn_bahdanau_create(ctx, &bd, &b));
    TH_OK(ctx, vkattn_bahdanau_set_weights(
                   b, &(vkattn_bahdanau_weights){x, x + 8, x + 20, 0.1f}));
    float gq[8], gk[12], gv[4];
    tu_poison(gq, 8), tu_poison(gk, 12), tu_poison(gv, 4);
    vkattn_bahdanau_weights bw = {gq, gk, gv, NAN};
    TH_OK(ctx, vkattn_bahdanau_get_weights(b, &bw));
    expect_f16(ctx, x, gq, 8, "bahdanau query_kernel");
    expect_f16(ctx, x + 8, gk, 12, "bahdanau key_kernel");
    expect_f16(ctx, x + 20, gv, 4, "bahdanau score_kernel");
    assert_true(bw.score_bias == 0.1f);
    vkattn_bahdanau_destroy(b);
}

static vkattn_dtype dtype_of(const vkattn_tensor *t)
{
    assert_non_null(t);
    return vkattn_tensor_get_info(t).desc.dtype;
}

/* Each of x[0..n) is v (a new layer's initial value). */
static void expect_filled(const float *x, size_t n, float v, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (x[i] != v)
            fail_msg("%s[%zu] = %.9g, want %g", what, i, (double)x[i], (double)v);
}

/* A new f16 layer's weight tensors: every one f16 but Bahdanau's score_bias
 * (f32, never read by the forward), with the f32 layer's initial values
 * rounded to f16 (Attention's scalars 1; AdditiveAttention's scale and
 * Bahdanau's kernels drawn by the same seed, test_layer_init.c; score_bias
 * 0). Attention holds both scalars in dot mode too. */
static void test_weight_tensors(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_attention *a = NULL;
    const vkattn_attention_desc ad = {.query_width = 3, .value_width = 3,
                                      .dtype = VKATTN_DTYPE_F16};
    TH_OK(ctx, vkattn_attention_create(ctx, &ad, &a));
    vkattn_attention_weight_tensors at;
    TH_OK(ctx, vkattn_attention_get_weight_tensors(a, &at));
    assert_int_equal(dtype_of(at.scale), VKATTN_DTYPE_F16);
    assert_int_equal(dtype_of(at.concat_score_weight), VKATTN_DTYPE_F16);
    vkattn_attention_weights aw = {NAN, NAN};
    TH_OK(ctx, vkattn_attention_get_weights(a, &aw));
    expect_filled(&aw.scale, 1, 1.0f, "attention scale");
    expect_filled(&aw.concat_score_weight, 1, 1.0f, "attention concat_score_weight");
    vkattn_attention_destroy(a);

    vkattn_additive_attention *aa = NULL, *aa32 = NULL;
    const vkattn_additive_attention_desc aad = {.query_width = 5, .value_width = 5,
                                                .dtype = VKATTN_DTYPE_F16};
    TH_OK(ctx, vkattn_additive_attention_create(ctx, &aad, &aa));
    vkattn_additive_attention_weight_tensors aat;
    TH_OK(ctx, vkattn_additive_attention_get_weight_tensors(aa, &aat));
    assert_int_equal(dtype_of(aat.scale), VKATTN_DTYPE_F16);
    float s[5];
    tu_poison(s, 5);
    TH_OK(ctx, vkattn_additive_attention_get_weights(
                   aa, &(vkattn_additive_attention_weights){.scale = s}));
    float s32[5];
    vkattn_additive_attention_desc aad32 = aad;
    aad32.dtype = VKATTN_DTYPE_F32;
    TH_OK(ctx, vkattn_additive_attention_create(ctx, &aad32, &aa32));
    TH_OK(ctx, vkattn_additive_attention_get_weights(
                   aa32, &(vkattn_additive_attention_weights){.scale = s32}));
    th_round_f16(s32, 5);
    assert_memory_equal(s, s32, sizeof s);
    vkattn_additive_attention_destroy(aa32);
    vkattn_additive_attention_destroy(aa);

    vkattn_bahdanau *b = NULL;
    const vkattn_bahdanau_desc bd = {.query_width = 2, .value_width = 3, .units = 4,
                                     .dtype = VKATTN_DTYPE_F16};
    TH_OK(ctx, vkattn_bahdanau_create(ctx, &bd, &b));
    vkattn_bahdanau_weight_tensors bt;
    TH_OK(ctx, vkattn_bahdanau_get_weight_tensors(b, &bt));
    assert_int_equal(dtype_of(bt.query_kernel), VKATTN_DTYPE_F16);
    assert_int_equal(dtype_of(bt.key_kernel), VKATTN_DTYPE_F16);
    assert_int_equal(dtype_of(bt.score_kernel), VKATTN_DTYPE_F16);
    assert_int_equal(dtype_of(bt.score_bias), VKATTN_DTYPE_F32);
    float gq[8], gk[12], gv[4];
    tu_poison(gq, 8), tu_poison(gk, 12), tu_poison(gv, 4);
    vkattn_bahdanau_weights bw = {gq, gk, gv, NAN};
    TH_OK(ctx, vkattn_bahdanau_get_weights(b, &bw));
    float fq[8], fk[12], fv[4];
    vkattn_bahdanau_desc bd32 = bd;
    bd32.dtype = VKATTN_DTYPE_F32;
    vkattn_bahdanau *b32 = NULL;
    TH_OK(ctx, vkattn_bahdanau_create(ctx, &bd32, &b32));
    TH_OK(ctx, vkattn_bahdanau_get_weights(b32, &(vkattn_bahdanau_weights){fq, fk, fv, NAN}));
    vkattn_bahdanau_destroy(b32);
    th_round_f16(fq, 8), th_round_f16(fk, 12), th_round_f16(fv, 4);
    assert_memory_equal(gq, fq, sizeof fq);
    assert_memory_equal(gk, fk, sizeof fk);
    assert_memory_equal(gv, fv, sizeof fv);
    expect_filled(&bw.score_bias, 1, 0.0f, "bahdanau score_bias");
    vkattn_bahdanau_destroy(b);
    th_assert_validation_clean();
}

static void test_bad_arguments(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_attention_desc ad = {.query_width = 4, .value_width = 4, .dtype = (vkattn_dtype)7};
    vkattn_additive_attention_desc aad = {.query_width = 4, .value_width = 4,
                                          .dtype = (vkattn_dtype)7};
    vkattn_bahdanau_desc bd = {.query_width = 4, .value_width = 4, .units = 2,
                               .dtype = (vkattn_dtype)7};
    vkattn_attention *a = NULL;
    vkattn_additive_attention *aa = NULL;
    vkattn_bahdanau *b = NULL;
    TH_EXPECT_ERROR(vkattn_attention_create(ctx, &ad, &a),
                    VKATTN_ERROR_INVALID_ARGUMENT, "desc->dtype");
    TH_EXPECT_ERROR(vkattn_additive_attention_create(ctx, &aad, &aa),
                    VKATTN_ERROR_INVALID_ARGUMENT, "desc->dtype");
    TH_EXPECT_ERROR(vkattn_bahdanau_create(ctx, &bd, &b),
                    VKATTN_ERROR_INVALID_ARGUMENT, "desc->dtype");
    assert_null(a), assert_null(aa), assert_null(b);

    ad.dtype = aad.dtype = bd.dtype = VKATTN_DTYPE_F16;
    TH_OK(ctx, vkattn_attention_create(ctx, &ad, &a));
    TH_OK(ctx, vkattn_additive_attention_create(ctx, &aad, &aa));
    TH_OK(ctx, vkattn_bahdanau_create(ctx, &bd, &b));
    const uint32_t B = 1, T = 3;
    vkattn_tensor *x = th_typed_tensor(ctx, B * T * 4, VKATTN_DTYPE_F16, NULL);
    TH_OK(ctx, vkattn_tensor_fill(x, 0.5f));
    vkattn_tensor *out = th_typed_tensor(ctx, B * T * 4, VKATTN_DTYPE_F16, NULL);
    vkattn_tensor *m16 = th_typed_tensor(ctx, B * T, VKATTN_DTYPE_F16, NULL);
    vkattn_tensor *am16 = th_typed_tensor(ctx, B * T * T, VKATTN_DTYPE_F16, NULL);
    const vkattn_layer_call call = {.batch = B, .tq = T, .tv = T};
    static const char *names[3] = {"io->query_mask", "io->value_mask", "io->attention_mask"};
    for (int which = 0; which < 3; which++) {
        vkattn_layer_io io = {.query = x, .value = x, .output = out};
        if (which == 0)
            io.query_mask = m16;
        else if (which == 1)
            io.value_mask = m16;
        else
            io.attention_mask = am16;
        TH_EXPECT_ERROR(vkattn_attention_record(a, VKATTN_RUN_NOW, &call, &io),
                        VKATTN_ERROR_INVALID_ARGUMENT, names[which]);
        assert_non_null(strstr(vkattn_last_error(), "f16"));
        assert_non_null(strstr(vkattn_last_error(), "f32"));
        TH_EXPECT_ERROR(vkattn_additive_attention_record(aa, VKATTN_RUN_NOW, &call, &io),
                        VKATTN_ERROR_INVALID_ARGUMENT, names[which]);
        TH_EXPECT_ERROR(vkattn_bahdanau_record(b, VKATTN_RUN_NOW, &call, &io),
                        VKATTN_ERROR_INVALID_ARGUMENT, names[which]);
    }
    /* an f32 layer still refuses f16 data tensors */
    ad.dtype = VKATTN_DTYPE_F32;
    vkattn_attention *f32_layer = NULL;
    TH_OK(ctx, vkattn_attention_create(ctx, &ad, &f32_layer));
    const vkattn_layer_io io = {.query = x, .value = x, .output = out};
    TH_EXPECT_ERROR(vkattn_attention_record(f32_layer, VKATTN_RUN_NOW, &call, &io),
                    VKATTN_ERROR_UNSUPPORTED, "io->query");
    /* an f16 layer's backward runs, also with f32 io and gradients (the f16
     * gradients against the references: test_layer_backward.c's test_f16);
     * here every gradient written is finite after a kept forward */
    vkattn_tensor *x32 = th_typed_tensor(ctx, B * T * 4, VKATTN_DTYPE_F32, NULL);
    vkattn_tensor *out32 = th_typed_tensor(ctx, B * T * 4, VKATTN_DTYPE_F32, NULL);
    vkattn_tensor *g32 = th_typed_tensor(ctx, B * T * 4, VKATTN_DTYPE_F32, NULL);
    vkattn_tensor *gq32 = th_typed_tensor(ctx, B * T * 4, VKATTN_DTYPE_F32, NULL);
    TH_OK(ctx, vkattn_tensor_fill(x32, 0.5f));
    TH_OK(ctx, vkattn_tensor_fill(g32, 1.0f));
    const vkattn_layer_io io32 = {.query = x32, .value = x32, .output = out32};
    const vkattn_layer_grads g = {.grad_output = g32, .grad_query = gq32};
    vkattn_layer_call kept = call;
    kept.keep_for_backward = true;
    for (int layer = 0; layer < 3; layer++) {
        TH_OK(ctx, vkattn_tensor_fill(gq32, NAN));
        if (layer == 0) {
            TH_OK(ctx, vkattn_attention_record(a, VKATTN_RUN_NOW, &kept, &io32));
            TH_OK(ctx, vkattn_attention_backward_record(a, VKATTN_RUN_NOW, &kept, &io32, &g, NULL));
        } else if (layer == 1) {
            TH_OK(ctx, vkattn_additive_attention_record(aa, VKATTN_RUN_NOW, &kept, &io32));
            TH_OK(ctx, vkattn_additive_attention_backward_record(aa, VKATTN_RUN_NOW, &kept, &io32,
                                                                 &g, NULL));
        } else {
            TH_OK(ctx, vkattn_bahdanau_record(b, VKATTN_RUN_NOW, &kept, &io32));
            TH_OK(ctx, vkattn_bahdanau_backward_record(b, VKATTN_RUN_NOW, &kept, &io32, &g, NULL));
        }
        float *got = th_download(gq32, B * T * 4);
        for (size_t i = 0; i < (size_t)B * T * 4; i++)
            if (!isfinite(got[i]))
                fail_msg("layer %d: grad_query[%zu] = %g after the f16 layer's backward", layer,
                         i, (double)got[i]);
        free(got);
    }
    vkattn_tensor *all32[] = {x32, out32, g32, gq32};
    for (size_t i = 0; i < sizeof all32 / sizeof all32[0]; i++)
        vkattn_tensor_destroy(all32[i]);
    th_assert_validation_clean();
    vkattn_attention_destroy(f32_layer);
    vkattn_attention_destroy(a);
    vkattn_additive_attention_destroy(aa);
    vkattn_bahdanau_destroy(b);
    vkattn_tensor *all[] = {x, out, m16, am16};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vkattn_tensor_destroy(all[i]);
}

TU_MAIN(th_setup, th_teardown,
    test_fixed_cases, test_random_cases, test_weights_round_trip, test_weight_tensors,
    test_bad_arguments)
