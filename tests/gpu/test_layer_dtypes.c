/* The single-head layers in each 16-bit layer dtype (rows of `dtypes`
 * below: f16, Keras's float16 policy, and bf16, its bfloat16 one; a new
 * dtype is one row there): Attention (dot and concat), AdditiveAttention and
 * BahdanauAttention vs their f32 CPU references run on the inputs and weights
 * rounded to the row's dtype -- the policies where inputs and weights are of
 * the dtype.
 *
 * Random shapes: odd widths, batch 1, Tq != Tv, key given or omitted, use_scale
 * on and off, query, value and attention masks, causal, dropout, returned
 * scores, the SDPA paths Attention's dot mode may take, and each of query,
 * key, value, output and scores of the row's dtype or f32 at random. Outputs
 * are poisoned (NaN) before each run. Then, per row, the weights round trip
 * (get_weights gives the stored values widened), a new layer's weight
 * tensors (their types and initial values), bad arguments (a mask of the
 * row's dtype of each kind, a bad dtype, the row's data to an f32 layer), and
 * the backward: a layer of the row's dtype with f32 io and gradients runs
 * (finite; its accuracy, with io and gradients of the dtype, is
 * test_layer_backward.c's test_16bit).
 *
 * Bound (vkattn/attention.h, additive_attention.h, bahdanau.h): the layer
 * rounds its scaled inputs, projections and scores to its dtype (and an
 * output or scores of the dtype once more), each a relative error of at most
 * eps / 2, eps the dtype's spacing at 1 (f16: 2^-10, 11 significand bits;
 * bf16: 2^-7, 8 bits, so a half spacing of 2^-8); with inputs of magnitude
 * about 1 and logits of magnitude up to about 4 (the weights below are
 * scaled by 1/sqrt(width) as Glorot-like initializers do) these stay a few
 * eps of the output scale, the same count of roundings in either dtype:
 *   max|out - ref| <= 8 eps max(max|ref|, 1)   (f16 7.8e-3, bf16 6.3e-2)
 *   max|scores - ref| <= 4 eps                  (f16 3.9e-3, bf16 3.1e-2; in [0, 1])
 * The largest seen on lavapipe is printed by test_random_cases. */
#include "harness.h"
#include "layer_out.h"
#include "random_case.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kv_rows.h"
#include "op_table.h"
#include "vkattn/half.h"

/* One layer dtype: its spacing at 1 (the bounds above). */
typedef struct layer_dtype {
    vkattn_dtype dtype;
    double eps;
} layer_dtype;

static const layer_dtype dtypes[] = {
    {VKATTN_DTYPE_F16, 0x1p-10},
    {VKATTN_DTYPE_BF16, 0x1p-7},
};
#define NDTYPES (sizeof dtypes / sizeof dtypes[0])

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
    vkattn_dtype dtype; /* the layer's */
    vkattn_dtype tq_type, tk_type, tv_type, tout_type, tscores_type;
} lcase;

/* x as a tensor of type t holds it */
static float stored(vkattn_dtype t, float x)
{
    th_round_to(&x, 1, t);
    return x;
}

/* n floats uniform in [-a, a], rounded to type t */
static float *uniform(vkattn_dtype t, size_t n, float a)
{
    float *x = tu_floats(n);
    tu_fill_uniform(x, n, -a, a);
    th_round_to(x, n, t);
    return x;
}

static bool coin(void) { return tu_rand_range(0, 1) == 1; }

static lcase random_case(kind k, vkattn_dtype dt)
{
    lcase m = {.kind = k, .dtype = dt};
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
    vkattn_dtype *types[] = {&m.tq_type, &m.tk_type, &m.tv_type, &m.tout_type, &m.tscores_type};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        *types[i] = coin() ? dt : VKATTN_DTYPE_F32;
    return m;
}

static void describe(const lcase *m, char *buf, size_t n)
{
    char k[96];
    rc_describe_call(k, sizeof k, &m->call);
    snprintf(buf, n, "%s %s dq=%u dk=%u dv=%u units=%u scale=%d drop=%.2f | %s key=%d qm=%d "
             "vm=%d am=%d | types q=%d k=%d v=%d out=%d scores=%d", kind_names[m->kind],
             th_dtype_name(m->dtype), m->dq,
             m->dk, m->dv, m->units, m->use_scale, (double)m->dropout, k, m->key_given,
             m->query_mask, m->value_mask, m->attn_mask, (int)m->tq_type, (int)m->tk_type,
             (int)m->tv_type, (int)m->tout_type, (int)m->tscores_type);
}

/* One layer of any kind with weights representable in its dtype, scaled so that the
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
    const vkattn_dtype dt = m->dtype;
    const float inv = 1.0f / sqrtf((float)m->dq);
    switch (m->kind) {
    case DOT:
    case CONCAT:
        L->ad = (vkattn_attention_desc){
            .query_width = m->dq, .value_width = m->dv, .key_width = m->key_given ? m->dk : 0,
            .use_scale = m->use_scale,
            .score_mode = m->kind == DOT ? VKATTN_SCORE_DOT : VKATTN_SCORE_CONCAT,
            .dropout = m->dropout, .dtype = dt,
        };
        /* dot: scale ~ 1/sqrt(dq); concat: tanh sums weighted by ~ 1/sqrt(dq) */
        L->aw.scale = stored(dt, m->kind == DOT ? tu_rand_float(0.5f, 1.5f) * inv
                                                : tu_rand_float(0.3f, 1.5f));
        L->aw.concat_score_weight = stored(dt, tu_rand_float(-1.5f, 1.5f) * inv);
        TH_OK(ctx, vkattn_attention_create(ctx, &L->ad, (vkattn_attention **)&L->obj));
        TH_OK(ctx, vkattn_attention_set_weights(L->obj, &L->aw));
        break;
    case ADDITIVE:
        L->aad = (vkattn_additive_attention_desc){
            .query_width = m->dq, .value_width = m->dv, .key_width = m->key_given ? m->dk : 0,
            .no_scale = !m->use_scale, .dropout = m->dropout, .dtype = dt,
        };
        L->aaw.scale = uniform(dt, m->dq, 1.5f * inv);
        TH_OK(ctx, vkattn_additive_attention_create(ctx, &L->aad,
                                                    (vkattn_additive_attention **)&L->obj));
        TH_OK(ctx, vkattn_additive_attention_set_weights(L->obj, &L->aaw));
        break;
    default:
        L->bd = (vkattn_bahdanau_desc){
            .query_width = m->dq, .key_width = m->key_given ? m->dk : 0,
            .value_width = m->dv, .units = m->units, .dropout = m->dropout, .dtype = dt,
        };
        L->bw.query_kernel = uniform(dt, (size_t)m->dq * m->units, sqrtf(3.0f / m->dq));
        L->bw.key_kernel = uniform(dt, (size_t)m->dk * m->units, sqrtf(3.0f / m->dk));
        L->bw.score_kernel = uniform(dt, m->units, sqrtf(3.0f / m->units));
        L->bw.score_bias = stored(dt, tu_rand_float(-1, 1));
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

/* Runs one case of dtype row d on the GPU and the reference; returns the
 * output error. */
static double check_case(vkattn_context *ctx, const lcase *m, const layer_dtype *d)
{
    char what[400];
    describe(m, what, sizeof what);
    const vkattn_layer_call *c = &m->call;
    const size_t B = c->batch, Tq = c->tq, Tv = c->tv;
    const size_t nq = B * Tq * m->dq, nk = B * Tv * m->dk, nv = B * Tv * m->dv;
    const size_t nout = B * Tq * m->dv, nscores = B * Tq * Tv;
    layer L;
    layer_make(ctx, m, &L);
    float *query = uniform(m->dtype, nq, 1.0f), *value = uniform(m->dtype, nv, 1.0f);
    float *key = m->key_given ? uniform(m->dtype, nk, 1.0f) : NULL;
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
    const double err = th_layer_out_check(&o, io.scores, 8 * d->eps, 4 * d->eps, what);
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
    for (size_t t = 0; t < NDTYPES; t++)
        for (int k = 0; k < N_KINDS; k++) {
            double worst = 0.0;
            for (int i = 0; i < 8; i++) {
                const lcase m = random_case((kind)k, dtypes[t].dtype);
                const double err = check_case(ctx, &m, &dtypes[t]);
                worst = err > worst ? err : worst;
            }
            printf("# %s %s: largest output error %.3g (bound %.3g)\n",
                   th_dtype_name(dtypes[t].dtype), kind_names[k], worst, 8 * dtypes[t].eps);
        }
}

/* Fixed cases every run covers in every dtype whatever the draw: every kind
 * with all its tensors of the dtype, all masks, causal, dropout in training
 * and scores of the dtype; then batch 1 with f32 io. */
static void test_fixed_cases(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (size_t t = 0; t < NDTYPES; t++)
        for (int k = 0; k < N_KINDS; k++) {
            const vkattn_dtype dt = dtypes[t].dtype;
            lcase m = {
                .kind = (kind)k, .dq = 7, .dk = k == BAHDANAU ? 5 : 7, .dv = 9, .units = 6,
                .use_scale = true, .dropout = 0.25f,
                .call = {.batch = 2, .tq = 5, .tv = 11, .causal = VKATTN_CAUSAL_BOTTOM_RIGHT,
                         .training = true, .seed = 7, .return_attention_scores = true},
                .key_given = true, .query_mask = true, .value_mask = true, .attn_mask = true,
                .dtype = dt, .tq_type = dt, .tk_type = dt, .tv_type = dt, .tout_type = dt,
                .tscores_type = dt,
            };
            check_case(ctx, &m, &dtypes[t]);
            /* batch 1, one query row, f32 io around the 16-bit layer */
            m.call = (vkattn_layer_call){.batch = 1, .tq = 1, .tv = 3,
                                         .return_attention_scores = true};
            m.query_mask = m.attn_mask = false;
            m.tq_type = m.tk_type = m.tv_type = m.tout_type = m.tscores_type = VKATTN_DTYPE_F32;
            check_case(ctx, &m, &dtypes[t]);
        }
}

/* got[i] is exactly what a tensor of type t stores of want[i]. */
static void expect_stored(vkattn_dtype t, const float *want, const float *got, size_t n,
                          const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (got[i] != stored(t, want[i]))
            fail_msg("%s %s[%zu] = %.9g, want its stored value %.9g", th_dtype_name(t), what, i,
                     (double)got[i], (double)stored(t, want[i]));
}

/* get_weights returns exactly the values set_weights stored in the layer's
 * dtype (rounded to nearest even); Bahdanau's score_bias is a host scalar,
 * kept as given. */
static void weights_round_trip(vkattn_context *ctx, const layer_dtype *d)
{
    const vkattn_dtype dt = d->dtype;
    float x[24];
    tu_fill_uniform(x, 24, -3, 3);
    x[0] = 1.0f + (float)(d->eps / 2); /* a tie: rounds to even (1.0) */

    vkattn_attention *a = NULL;
    const vkattn_attention_desc ad = {.query_width = 3, .value_width = 3, .use_scale = true,
                                      .score_mode = VKATTN_SCORE_CONCAT, .dtype = dt};
    TH_OK(ctx, vkattn_attention_create(ctx, &ad, &a));
    TH_OK(ctx, vkattn_attention_set_weights(a, &(vkattn_attention_weights){x[0], x[1]}));
    vkattn_attention_weights aw = {NAN, NAN};
    TH_OK(ctx, vkattn_attention_get_weights(a, &aw));
    expect_stored(dt, &x[0], &aw.scale, 1, "attention scale");
    expect_stored(dt, &x[1], &aw.concat_score_weight, 1, "attention concat_score_weight");
    assert_true(aw.scale == 1.0f);
    vkattn_attention_destroy(a);

    vkattn_additive_attention *aa = NULL;
    const vkattn_additive_attention_desc aad = {.query_width = 5, .value_width = 5, .dtype = dt};
    TH_OK(ctx, vkattn_additive_attention_create(ctx, &aad, &aa));
    TH_OK(ctx, vkattn_additive_attention_set_weights(
                   aa, &(vkattn_additive_attention_weights){.scale = x}));
    float got[24];
    tu_poison(got, 24);
    TH_OK(ctx, vkattn_additive_attention_get_weights(
                   aa, &(vkattn_additive_attention_weights){.scale = got}));
    expect_stored(dt, x, got, 5, "additive_attention scale");
    vkattn_additive_attention_destroy(aa);

    vkattn_bahdanau *b = NULL;
    const vkattn_bahdanau_desc bd = {.query_width = 2, .value_width = 3, .units = 4,
                                     .dtype = dt};
    TH_OK(ctx, vkattn_bahdanau_create(ctx, &bd, &b));
    TH_OK(ctx, vkattn_bahdanau_set_weights(
                   b, &(vkattn_bahdanau_weights){x, x + 8, x + 20, 0.1f}));
    float gq[8], gk[12], gv[4];
    tu_poison(gq, 8), tu_poison(gk, 12), tu_poison(gv, 4);
    vkattn_bahdanau_weights bw = {gq, gk, gv, NAN};
    TH_OK(ctx, vkattn_bahdanau_get_weights(b, &bw));
    expect_stored(dt, x, gq, 8, "bahdanau query_kernel");
    expect_stored(dt, x + 8, gk, 12, "bahdanau key_kernel");
    expect_stored(dt, x + 20, gv, 4, "bahdanau score_kernel");
    assert_true(bw.score_bias == 0.1f);
    vkattn_bahdanau_destroy(b);
}

static void test_weights_round_trip(void **state)
{
    for (size_t t = 0; t < NDTYPES; t++)
        weights_round_trip(TH_CTX(state), &dtypes[t]);
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

/* A new layer's weight tensors: every one of its dtype but Bahdanau's
 * score_bias (f32, never read by the forward), with the f32 layer's initial
 * values rounded to the dtype (Attention's scalars 1; AdditiveAttention's
 * scale and Bahdanau's kernels drawn by the same seed, test_layer_init.c;
 * score_bias 0). Attention holds both scalars in dot mode too. */
static void weight_tensors(vkattn_context *ctx, vkattn_dtype dt)
{
    vkattn_attention *a = NULL;
    const vkattn_attention_desc ad = {.query_width = 3, .value_width = 3, .dtype = dt};
    TH_OK(ctx, vkattn_attention_create(ctx, &ad, &a));
    vkattn_attention_weight_tensors at;
    TH_OK(ctx, vkattn_attention_get_weight_tensors(a, &at));
    assert_int_equal(dtype_of(at.scale), dt);
    assert_int_equal(dtype_of(at.concat_score_weight), dt);
    vkattn_attention_weights aw = {NAN, NAN};
    TH_OK(ctx, vkattn_attention_get_weights(a, &aw));
    expect_filled(&aw.scale, 1, 1.0f, "attention scale");
    expect_filled(&aw.concat_score_weight, 1, 1.0f, "attention concat_score_weight");
    vkattn_attention_destroy(a);

    vkattn_additive_attention *aa = NULL, *aa32 = NULL;
    const vkattn_additive_attention_desc aad = {.query_width = 5, .value_width = 5, .dtype = dt};
    TH_OK(ctx, vkattn_additive_attention_create(ctx, &aad, &aa));
    vkattn_additive_attention_weight_tensors aat;
    TH_OK(ctx, vkattn_additive_attention_get_weight_tensors(aa, &aat));
    assert_int_equal(dtype_of(aat.scale), dt);
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
    expect_stored(dt, s32, s, 5, "additive_attention initial scale");
    vkattn_additive_attention_destroy(aa32);
    vkattn_additive_attention_destroy(aa);

    vkattn_bahdanau *b = NULL;
    const vkattn_bahdanau_desc bd = {.query_width = 2, .value_width = 3, .units = 4,
                                     .dtype = dt};
    TH_OK(ctx, vkattn_bahdanau_create(ctx, &bd, &b));
    vkattn_bahdanau_weight_tensors bt;
    TH_OK(ctx, vkattn_bahdanau_get_weight_tensors(b, &bt));
    assert_int_equal(dtype_of(bt.query_kernel), dt);
    assert_int_equal(dtype_of(bt.key_kernel), dt);
    assert_int_equal(dtype_of(bt.score_kernel), dt);
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
    expect_stored(dt, fq, gq, 8, "bahdanau initial query_kernel");
    expect_stored(dt, fk, gk, 12, "bahdanau initial key_kernel");
    expect_stored(dt, fv, gv, 4, "bahdanau initial score_kernel");
    expect_filled(&bw.score_bias, 1, 0.0f, "bahdanau score_bias");
    vkattn_bahdanau_destroy(b);
    th_assert_validation_clean();
}

static void test_weight_tensors(void **state)
{
    for (size_t t = 0; t < NDTYPES; t++)
        weight_tensors(TH_CTX(state), dtypes[t].dtype);
}

/* The three single-head layers of one desc dtype, created together. */
typedef struct trio {
    vkattn_attention *a;
    vkattn_additive_attention *aa;
    vkattn_bahdanau *b;
} trio;

static vkattn_result trio_create(vkattn_context *ctx, vkattn_dtype dt, trio *l)
{
    const vkattn_attention_desc ad = {.query_width = 4, .value_width = 4, .dtype = dt};
    const vkattn_additive_attention_desc aad = {.query_width = 4, .value_width = 4, .dtype = dt};
    const vkattn_bahdanau_desc bd = {.query_width = 4, .value_width = 4, .units = 2, .dtype = dt};
    *l = (trio){0};
    vkattn_result r;
    if ((r = vkattn_attention_create(ctx, &ad, &l->a)) ||
        (r = vkattn_additive_attention_create(ctx, &aad, &l->aa)))
        return r;
    return vkattn_bahdanau_create(ctx, &bd, &l->b);
}

static void trio_destroy(trio *l)
{
    vkattn_attention_destroy(l->a);
    vkattn_additive_attention_destroy(l->aa);
    vkattn_bahdanau_destroy(l->b);
}

/* Layer `which` of l (0 Attention, 1 AdditiveAttention, 2 Bahdanau): its
 * forward, or with `grads` its backward. */
static vkattn_result trio_run(const trio *l, int which, const vkattn_layer_call *call,
                              const vkattn_layer_io *io, const vkattn_layer_grads *grads)
{
    if (which == 0)
        return grads ? vkattn_attention_backward_record(l->a, VKATTN_RUN_NOW, call, io, grads,
                                                        NULL)
                     : vkattn_attention_record(l->a, VKATTN_RUN_NOW, call, io);
    if (which == 1)
        return grads ? vkattn_additive_attention_backward_record(l->aa, VKATTN_RUN_NOW, call, io,
                                                                 grads, NULL)
                     : vkattn_additive_attention_record(l->aa, VKATTN_RUN_NOW, call, io);
    return grads ? vkattn_bahdanau_backward_record(l->b, VKATTN_RUN_NOW, call, io, grads, NULL)
                 : vkattn_bahdanau_record(l->b, VKATTN_RUN_NOW, call, io);
}

/* A 16-bit layer's backward runs, also with f32 io and gradients (16-bit
 * gradients against the references: test_layer_backward.c's test_16bit):
 * every gradient written is finite after a kept forward. */
static void backward_of(vkattn_context *ctx, const layer_dtype *d, const trio *l)
{
    const uint32_t n = 3 * 4; /* B 1, T 3, widths 4 */
    vkattn_tensor *x32 = th_typed_tensor(ctx, n, VKATTN_DTYPE_F32, NULL);
    vkattn_tensor *out32 = th_typed_tensor(ctx, n, VKATTN_DTYPE_F32, NULL);
    vkattn_tensor *g32 = th_typed_tensor(ctx, n, VKATTN_DTYPE_F32, NULL);
    vkattn_tensor *gq32 = th_typed_tensor(ctx, n, VKATTN_DTYPE_F32, NULL);
    TH_OK(ctx, vkattn_tensor_fill(x32, 0.5f));
    TH_OK(ctx, vkattn_tensor_fill(g32, 1.0f));
    const vkattn_layer_io io32 = {.query = x32, .value = x32, .output = out32};
    const vkattn_layer_grads g = {.grad_output = g32, .grad_query = gq32};
    const vkattn_layer_call kept = {.batch = 1, .tq = 3, .tv = 3, .keep_for_backward = true};
    for (int which = 0; which < 3; which++) {
        TH_OK(ctx, vkattn_tensor_fill(gq32, NAN));
        TH_OK(ctx, trio_run(l, which, &kept, &io32, NULL));
        TH_OK(ctx, trio_run(l, which, &kept, &io32, &g));
        float *got = th_download(gq32, n);
        for (size_t i = 0; i < n; i++)
            if (!isfinite(got[i]))
                fail_msg("layer %d: grad_query[%zu] = %g after the %s layer's backward", which,
                         i, (double)got[i], th_dtype_name(d->dtype));
        free(got);
    }
    vkattn_tensor *all32[] = {x32, out32, g32, gq32};
    for (size_t i = 0; i < sizeof all32 / sizeof all32[0]; i++)
        vkattn_tensor_destroy(all32[i]);
}

/* Row d's bad arguments: a mask of its dtype of each kind (masks stay f32),
 * its data to an f32 layer, then its backward. */
static void bad_arguments(vkattn_context *ctx, const layer_dtype *d, const trio *f32_layers)
{
    const vkattn_dtype dt = d->dtype;
    trio l;
    TH_OK(ctx, trio_create(ctx, dt, &l));
    const uint32_t B = 1, T = 3;
    vkattn_tensor *x = th_typed_tensor(ctx, B * T * 4, dt, NULL);
    TH_OK(ctx, vkattn_tensor_fill(x, 0.5f));
    vkattn_tensor *out = th_typed_tensor(ctx, B * T * 4, dt, NULL);
    vkattn_tensor *m16 = th_typed_tensor(ctx, B * T, dt, NULL);
    vkattn_tensor *am16 = th_typed_tensor(ctx, B * T * T, dt, NULL);
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
        for (int layer = 0; layer < 3; layer++) {
            TH_EXPECT_ERROR(trio_run(&l, layer, &call, &io, NULL), VKATTN_ERROR_INVALID_ARGUMENT,
                            names[which]);
            assert_non_null(strstr(vkattn_last_error(), th_dtype_name(dt)));
            assert_non_null(strstr(vkattn_last_error(), "f32"));
        }
    }
    /* an f32 layer refuses data tensors of the dtype */
    const vkattn_layer_io io = {.query = x, .value = x, .output = out};
    for (int layer = 0; layer < 3; layer++)
        TH_EXPECT_ERROR(trio_run(f32_layers, layer, &call, &io, NULL), VKATTN_ERROR_UNSUPPORTED,
                        "io->query");
    backward_of(ctx, d, &l);
    th_assert_validation_clean();
    trio_destroy(&l);
    vkattn_tensor *all[] = {x, out, m16, am16};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vkattn_tensor_destroy(all[i]);
}

static void test_bad_arguments(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    trio l; /* Attention refuses first */
    TH_EXPECT_ERROR(trio_create(ctx, (vkattn_dtype)7, &l), VKATTN_ERROR_INVALID_ARGUMENT,
                    "desc->dtype");
    assert_null(l.a);
    const vkattn_additive_attention_desc aad = {.query_width = 4, .value_width = 4,
                                                .dtype = (vkattn_dtype)7};
    const vkattn_bahdanau_desc bd = {.query_width = 4, .value_width = 4, .units = 2,
                                     .dtype = (vkattn_dtype)7};
    vkattn_additive_attention *aa = NULL;
    vkattn_bahdanau *b = NULL;
    TH_EXPECT_ERROR(vkattn_additive_attention_create(ctx, &aad, &aa),
                    VKATTN_ERROR_INVALID_ARGUMENT, "desc->dtype");
    TH_EXPECT_ERROR(vkattn_bahdanau_create(ctx, &bd, &b), VKATTN_ERROR_INVALID_ARGUMENT,
                    "desc->dtype");
    assert_null(aa), assert_null(b);
    trio f32_layers;
    TH_OK(ctx, trio_create(ctx, VKATTN_DTYPE_F32, &f32_layers));
    for (size_t t = 0; t < NDTYPES; t++)
        bad_arguments(ctx, &dtypes[t], &f32_layers);
    trio_destroy(&f32_layers);
}

TU_MAIN(th_setup, th_teardown,
    test_fixed_cases, test_random_cases, test_weights_round_trip, test_weight_tensors,
    test_bad_arguments)
