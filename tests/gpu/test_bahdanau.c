/* Bahdanau attention with learned projections (seed 001) on the GPU vs
 * vkattn_reference_bahdanau, and the reference vs the values of
 * tests/cases/examples.json (transcribed below). The seed
 * tutorial's shapes (units 32, query width 50, key width 60, value width 70,
 * a single rank-2 query per batch, and a 10-step query), random shapes with
 * Dq != Dk != Dv, every mask kind, key given and omitted, dropout on/off,
 * scores returned or not, score_bias invariance, weights set and read back,
 * bad arguments.
 *
 * Bound: the projections add D-long fp32 sums before the U-long tanh sum; with
 * kernels scaled by 1/sqrt(D) the scores stay O(1) and the error budget of
 * Attention holds: max|got - ref| / max|ref| <= 1e-4. */
#include "layer_testlib.h"

#include <math.h>

static const double BOUND = 1e-4;

/* ---------------------------------------------------------------- examples.json */

/* example_bahdanau_single_query (BahdanauAttention): params {"units": 5, "dropout": 0.0}
 * causal False training False seed 0 offset 0 tol {'atol': 1e-05, 'rtol': 0.0001} */
static const float ex3_query[6] = {
    -0.569999993f, 0.400000006f, -0.379999995f, -0.839999974f, 0.50999999f, -0.810000002f
};
static const float ex3_key[16] = {
    -0.709999979f, -0.100000001f, 0.469999999f, -0.600000024f, -0.730000019f, -0.879999995f,
    -0.270000011f, -0.189999998f, 0.409999996f, -0.280000001f, -0.310000002f, 0.899999976f,
    0.5f, -0.449999988f, 0.439999998f, -0.209999993f
};
static const float ex3_value[24] = {
    0.730000019f, -0.0700000003f, -0.00999999978f, 0.409999996f, 0.219999999f, 0.0700000003f,
    -0.769999981f, -0.119999997f, 0.370000005f, 0.0900000036f, -0.769999981f, 0.529999971f,
    -0.870000005f, -0.75f, 0.600000024f, -0.25f, -0.340000004f, -0.839999974f, 0.930000007f,
    0.239999995f, 0.170000002f, 0.699999988f, -0.980000019f, -0.839999974f
};
static const float *const ex3_query_mask = NULL;
static const float ex3_value_mask[8] = {
    1.0f, 1.0f, 1.0f, 0.0f, 1.0f, 0.0f, 1.0f, 1.0f
};
static const float *const ex3_attention_mask = NULL;
static const float ex3_expected_output[6] = {
    0.230412653f, 0.086948915f, 0.115946248f, 0.282465047f, -0.471119414f, -0.0210164734f
};
static const float ex3_expected_scores[8] = {
    0.212728558f, 0.577389669f, 0.209881773f, 0.0f, 0.318262042f, 0.0f, 0.35711502f,
    0.324622939f
};
static const float ex3_w_query_kernel[15] = {
    0.119999997f, 0.349999994f, 0.330000013f, -0.100000001f, 0.270000011f, -0.0399999991f,
    -0.970000029f, 0.899999976f, 0.639999986f, -0.75999999f, 0.74000001f, 0.0900000036f,
    -0.340000004f, -0.870000005f, -0.519999981f
};
static const float ex3_w_key_kernel[10] = {
    0.270000011f, 0.949999988f, 0.959999979f, -0.790000021f, 0.0399999991f, -0.0500000007f,
    -0.730000019f, -0.660000026f, -0.790000021f, -0.699999988f
};
static const float ex3_w_score_kernel[5] = {
    -0.850000024f, 1.0f, 0.25f, -0.479999989f, -0.600000024f
};
static const float ex3_w_score_bias = 0.25f;
/* shapes: q [2, 3] v [2, 4, 3] k [2, 4, 2] */

static const lt_example ex3 = {
    .name = "example_bahdanau_single_query", .s = {2, 1, 4, 3, 2, 3, 3}, .o = {.scores = true},
    .q = ex3_query, .k = ex3_key, .v = ex3_value, .vm = ex3_value_mask,
    .out = ex3_expected_output, .scores = ex3_expected_scores, .atol = 1e-5, .rtol = 1e-4};
static const vkattn_bahdanau_desc ex3_desc = {.query_width = 3, .key_width = 2, .value_width = 3,
                                              .units = 5};

static vkattn_bahdanau_weights ex3_weights(void)
{
    return (vkattn_bahdanau_weights){
        .query_kernel = (float *)ex3_w_query_kernel, .key_kernel = (float *)ex3_w_key_kernel,
        .score_kernel = (float *)ex3_w_score_kernel, .score_bias = ex3_w_score_bias};
}

static void test_examples_reference(void **state)
{
    (void)state;
    vkattn_bahdanau_weights w = ex3_weights();
    lt_data d;
    lt_data_from_example(&d, &ex3);
    vkattn_layer_call call = lt_call(&d);
    vkattn_layer_host_io hio = lt_host_io(&d);
    TH_OK(NULL, vkattn_reference_bahdanau(&ex3_desc, &w, &call, &hio));
    lt_check_example(&ex3, &d, d.ref_out, d.ref_scores, "reference");
    lt_data_free(&d);
}

/* A (B, D) tensor: the rank-2 query / output of a single-step call. */
static vkattn_tensor *tensor2(vkattn_context *ctx, uint32_t b, uint32_t d, const float *data)
{
    vkattn_tensor_desc td = {.rank = 2, .dims = {b, d}};
    vkattn_tensor *t;
    TH_OK(ctx, vkattn_tensor_create(ctx, &td, &t));
    if (data)
        TH_OK(ctx, vkattn_tensor_upload(t, data, 0, (uint64_t)b * d));
    else
        TH_OK(ctx, vkattn_tensor_fill(t, NAN));
    return t;
}

static void test_examples_gpu(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_bahdanau *att;
    TH_OK(ctx, vkattn_bahdanau_create(ctx, &ex3_desc, &att));
    vkattn_bahdanau_weights w = ex3_weights();
    TH_OK(ctx, vkattn_bahdanau_set_weights(att, &w));
    lt_data d;
    lt_data_from_example(&d, &ex3);
    lt_gpu g;
    lt_gpu_init(ctx, &g, &d);
    /* the case's query is (B, Dq) and its output (B, Dv): rank-2 tensors */
    vkattn_tensor_destroy(g.q);
    vkattn_tensor_destroy(g.out);
    g.q = tensor2(ctx, 2, 3, ex3_query);
    g.out = tensor2(ctx, 2, 3, NULL);
    vkattn_layer_call call = lt_call(&d);
    vkattn_layer_io io = lt_gpu_io(&g);
    TH_OK(ctx, vkattn_bahdanau_record(att, VKATTN_RUN_NOW, &call, &io));
    float *out = th_download(g.out, d.nout), *sc = th_download(g.sc, d.nsc);
    lt_check_example(&ex3, &d, out, sc, "GPU");
    th_assert_validation_clean();
    free(out), free(sc);
    lt_gpu_free(&g);
    lt_data_free(&d);
    vkattn_bahdanau_destroy(att);
}

/* ---------------------------------------------------------------- random cases */

typedef struct host_weights {
    float *wq, *wk, *v;
    vkattn_bahdanau_weights w;
} host_weights;

/* Kernels uniform in +-1/sqrt(fan-in) (Glorot-like), so tanh does not saturate. */
static void make_weights(host_weights *h, const lt_shape *s, uint32_t units, float bias)
{
    h->wq = tu_floats((size_t)s->dq * units);
    h->wk = tu_floats((size_t)s->dk * units);
    h->v = tu_floats(units);
    float aq = 1.0f / sqrtf((float)s->dq), ak = 1.0f / sqrtf((float)s->dk);
    tu_fill_uniform(h->wq, (size_t)s->dq * units, -aq, aq);
    tu_fill_uniform(h->wk, (size_t)s->dk * units, -ak, ak);
    tu_fill_uniform(h->v, units, -1, 1);
    h->w = (vkattn_bahdanau_weights){h->wq, h->wk, h->v, bias};
}

static void free_weights(host_weights *h) { free(h->wq), free(h->wk), free(h->v); }

static void check_case(vkattn_context *ctx, const vkattn_bahdanau_desc *desc, const lt_shape *s,
                       const lt_opts *o, float bias)
{
    host_weights hw;
    make_weights(&hw, s, desc->units, bias);
    lt_data d;
    lt_data_init(&d, s, o);
    vkattn_layer_call call = lt_call(&d);
    vkattn_layer_host_io hio = lt_host_io(&d);
    TH_OK(ctx, vkattn_reference_bahdanau(desc, &hw.w, &call, &hio));

    vkattn_bahdanau *att;
    TH_OK(ctx, vkattn_bahdanau_create(ctx, desc, &att));
    TH_OK(ctx, vkattn_bahdanau_set_weights(att, &hw.w));
    lt_gpu g;
    lt_gpu_init(ctx, &g, &d);
    vkattn_layer_io io = lt_gpu_io(&g);
    TH_OK(ctx, vkattn_bahdanau_record(att, VKATTN_RUN_NOW, &call, &io));

    char what[400], layer[96];
    snprintf(layer, sizeof layer, "Bahdanau(units=%u, bias=%g, dropout=%g)", desc->units,
             (double)bias, (double)desc->dropout);
    lt_describe(what, sizeof what, &d, layer);
    lt_gpu_check(&g, &d, BOUND, what);
    th_assert_validation_clean();
    lt_gpu_free(&g);
    lt_data_free(&d);
    free_weights(&hw);
    vkattn_bahdanau_destroy(att);
}

static void make_shape(lt_shape *s, const lt_opts *o)
{
    if (!o->key)
        s->dk = s->dv;
    s->dout = s->dv;
}

static vkattn_bahdanau_desc desc_for(const lt_shape *s, uint32_t units, float dropout)
{
    return (vkattn_bahdanau_desc){.query_width = s->dq, .key_width = s->dk, .value_width = s->dv,
                                  .units = units, .dropout = dropout};
}

/* The seed tutorial: a single decoder state per batch (rank-2 query) attending
 * over 12 encoder steps with ~20% padding (its mask 1 = padded is our 0), then
 * a 10-step query without a mask. */
static void test_seed_shapes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    lt_opts o = {.key = true, .value_mask = true, .scores = true};
    lt_shape s = {4, 1, 12, 50, 60, 70, 70};
    vkattn_bahdanau_desc desc = desc_for(&s, 32, 0.0f);
    check_case(ctx, &desc, &s, &o, 0.1f);
    lt_opts o2 = {.key = true, .scores = true};
    s.tq = 10;
    check_case(ctx, &desc, &s, &o2, 0.1f);
}

static void test_fixed_shapes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const uint32_t shapes[][7] = {
        /* B, Tq, Tv, Dq, Dk, Dv, U */
        {1, 1, 1, 1, 1, 1, 1}, {1, 1, 7, 5, 3, 2, 4}, {2, 5, 3, 4, 6, 7, 9},
        {3, 7, 13, 11, 2, 5, 17}, {1, 17, 17, 16, 16, 16, 16}, {2, 3, 33, 3, 9, 1, 64},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        lt_opts o = {.key = i % 3 != 1, .query_mask = i % 3 == 0, .value_mask = i % 2 == 1,
                     .attention_mask = i % 3 == 2, .causal = i % 4 == 1, .scores = i % 2 == 0,
                     /* no fused kernel: UNFUSED runs the same chain as AUTO */
                     .path = i % 3 == 1 ? VKATTN_SDPA_UNFUSED : VKATTN_SDPA_AUTO};
        lt_shape s = {shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], shapes[i][4],
                      shapes[i][5], 0};
        make_shape(&s, &o);
        vkattn_bahdanau_desc desc = desc_for(&s, shapes[i][6], 0.0f);
        check_case(ctx, &desc, &s, &o, 0.0f);
    }
}

static void test_each_mask(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int m = 0; m < 6; m++) {
        lt_opts o = {.key = true, .query_mask = m == 0 || m == 5, .value_mask = m == 1 || m == 5,
                     .attention_mask = m == 2 || m == 5, .causal = m >= 3, .bottom_right = m == 4,
                     .scores = true};
        lt_shape s = {2, 5, 7, 6, 4, 3, 0};
        make_shape(&s, &o);
        vkattn_bahdanau_desc desc = desc_for(&s, 8, 0.0f);
        check_case(ctx, &desc, &s, &o, -0.5f);
    }
}

static void check_mask_form(vkattn_context *ctx, const lt_shape *s, const lt_opts *o, int variant)
{
    vkattn_bahdanau_desc desc = desc_for(s, (uint32_t)(3 + variant % 4), 0.0f);
    check_case(ctx, &desc, s, o, variant % 2 ? 0.25f : 0.0f);
}

/* Every broadcast form of the attention mask vs the reference. */
static void test_mask_broadcast(void **state)
{
    lt_each_mask_form(TH_CTX(state), make_shape, check_mask_form);
}

static void test_random(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 16; i++) {
        lt_opts o = lt_random_opts();
        lt_shape s = {tu_rand_range(1, 4), tu_rand_range(1, 30), tu_rand_range(1, 30),
                      tu_rand_range(1, 48), tu_rand_range(1, 48), tu_rand_range(1, 48), 0};
        make_shape(&s, &o);
        float rate = o.training || tu_rand_range(0, 1) ? tu_rand_float(0.05f, 0.6f) : 0.0f;
        vkattn_bahdanau_desc desc = desc_for(&s, tu_rand_range(1, 40), rate);
        check_case(ctx, &desc, &s, &o, tu_rand_float(-2, 2));
    }
}

static void test_dropout(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const float rates[] = {0.3f, 0.75f};
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++)
        for (int training = 0; training < 2; training++) {
            lt_opts o = {.key = true, .value_mask = true, .training = training, .scores = true,
                         .seed = 0xdeadbeefcafeull + i, .offset = (uint64_t)1 << 40};
            lt_shape s = {2, 4, 10, 6, 5, 3, 0};
            make_shape(&s, &o);
            vkattn_bahdanau_desc desc = desc_for(&s, 7, rates[i]);
            check_case(ctx, &desc, &s, &o, 0.0f);
        }
}

/* Softmax is shift-invariant: the GPU skips score_bias, so the output of two
 * layers that differ only in it is identical, and equals the reference that
 * adds it. */
static void test_score_bias(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    lt_opts o = {.key = true, .value_mask = true, .scores = true};
    lt_shape s = {2, 3, 6, 4, 5, 3, 3};
    vkattn_bahdanau_desc desc = desc_for(&s, 6, 0.0f);
    check_case(ctx, &desc, &s, &o, 7.5f);

    host_weights hw;
    make_weights(&hw, &s, desc.units, 0.0f);
    lt_data d;
    lt_data_init(&d, &s, &o);
    lt_gpu g;
    lt_gpu_init(ctx, &g, &d);
    vkattn_layer_call call = lt_call(&d);
    vkattn_layer_io io = lt_gpu_io(&g);
    float *res[2][2];
    for (int k = 0; k < 2; k++) {
        vkattn_bahdanau *att;
        hw.w.score_bias = k ? -3.0f : 0.0f;
        TH_OK(ctx, vkattn_bahdanau_create(ctx, &desc, &att));
        TH_OK(ctx, vkattn_bahdanau_set_weights(att, &hw.w));
        TH_OK(ctx, vkattn_bahdanau_record(att, VKATTN_RUN_NOW, &call, &io));
        res[k][0] = th_download(g.out, d.nout);
        res[k][1] = th_download(g.sc, d.nsc);
        vkattn_bahdanau_destroy(att);
    }
    assert_memory_equal(res[0][0], res[1][0], d.nout * sizeof(float));
    assert_memory_equal(res[0][1], res[1][1], d.nsc * sizeof(float));
    for (int k = 0; k < 2; k++)
        free(res[k][0]), free(res[k][1]);
    lt_gpu_free(&g);
    lt_data_free(&d);
    free_weights(&hw);
}

static void test_weights(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_bahdanau_desc desc = {.query_width = 3, .key_width = 2, .value_width = 4, .units = 5};
    vkattn_bahdanau *att;
    TH_OK(ctx, vkattn_bahdanau_create(ctx, &desc, &att));
    float wq[15], wk[10], v[5];
    vkattn_bahdanau_weights got = {wq, wk, v, 99.0f};
    TH_OK(ctx, vkattn_bahdanau_get_weights(att, &got));
    /* glorot_uniform kernels (test_layer_init.c): (3, 5), (2, 5), v as (5, 1) */
    for (int i = 0; i < 15; i++)
        assert_true(fabsf(wq[i]) <= sqrtf(6.0f / 8.0f));
    for (int i = 0; i < 10; i++)
        assert_true(fabsf(wk[i]) <= sqrtf(6.0f / 7.0f));
    for (int i = 0; i < 5; i++)
        assert_true(fabsf(v[i]) <= 1.0f);
    assert_true(got.score_bias == 0.0f);

    float sq[15], sk[10], sv[5];
    tu_fill_uniform(sq, 15, -1, 1);
    tu_fill_uniform(sk, 10, -1, 1);
    tu_fill_uniform(sv, 5, -1, 1);
    TH_OK(ctx, vkattn_bahdanau_set_weights(att, &(vkattn_bahdanau_weights){sq, sk, sv, 0.25f}));
    TH_OK(ctx, vkattn_bahdanau_get_weights(att, &got));
    assert_memory_equal(wq, sq, sizeof sq);
    assert_memory_equal(wk, sk, sizeof sk);
    assert_memory_equal(v, sv, sizeof sv);
    assert_true(got.score_bias == 0.25f);
    /* NULL arrays are skipped */
    vkattn_bahdanau_weights partial = {NULL, NULL, v, 0.0f};
    TH_OK(ctx, vkattn_bahdanau_get_weights(att, &partial));
    assert_true(partial.score_bias == 0.25f);

    /* failing sets whose other weights differ from the stored ones: nothing
     * of them may be uploaded */
    float oq[15], ok[10], ov[5];
    tu_fill_uniform(oq, 15, 2, 3);
    tu_fill_uniform(ok, 10, 2, 3);
    tu_fill_uniform(ov, 5, 2, 3);
    TH_EXPECT_ERROR(vkattn_bahdanau_set_weights(att, &(vkattn_bahdanau_weights){oq, NULL, ov, 0.5f}),
                    VKATTN_ERROR_INVALID_ARGUMENT, "w->key_kernel");
    TH_EXPECT_ERROR(vkattn_bahdanau_set_weights(att, &(vkattn_bahdanau_weights){oq, ok, NULL, 0.5f}),
                    VKATTN_ERROR_INVALID_ARGUMENT, "w->score_kernel");
    TH_EXPECT_ERROR(vkattn_bahdanau_set_weights(att, &(vkattn_bahdanau_weights){oq, ok, ov, NAN}),
                    VKATTN_ERROR_INVALID_ARGUMENT, "w->score_bias");
    TH_OK(ctx, vkattn_bahdanau_get_weights(att, &got)); /* failed sets changed nothing */
    assert_memory_equal(wq, sq, sizeof sq);
    assert_memory_equal(wk, sk, sizeof sk);
    assert_memory_equal(v, sv, sizeof sv);
    assert_true(got.score_bias == 0.25f);
    vkattn_bahdanau_destroy(att);
    vkattn_bahdanau_destroy(NULL);
    th_assert_validation_clean();
}

static void test_bad_args(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_bahdanau *att = NULL;
    TH_EXPECT_ERROR(vkattn_bahdanau_create(
                        ctx, &(vkattn_bahdanau_desc){.query_width = 3, .value_width = 4}, &att),
                    VKATTN_ERROR_INVALID_ARGUMENT, "desc->units");
    TH_EXPECT_ERROR(vkattn_bahdanau_create(ctx, NULL, &att), VKATTN_ERROR_INVALID_ARGUMENT, "desc");
    assert_null(att);

    vkattn_bahdanau_desc desc = {.query_width = 3, .key_width = 2, .value_width = 4, .units = 5};
    TH_OK(ctx, vkattn_bahdanau_create(ctx, &desc, &att));
    const uint32_t B = 2, tv = 6;
    vkattn_tensor *q = tensor2(ctx, B, 3, NULL), *k = th_tensor(ctx, B * tv * 2, NULL);
    vkattn_tensor *v = th_tensor(ctx, B * tv * 4, NULL), *out = tensor2(ctx, B, 4, NULL);
    vkattn_tensor *qwide = tensor2(ctx, B, 4, NULL);
    TH_OK(ctx, vkattn_tensor_fill(q, 0.5f));
    TH_OK(ctx, vkattn_tensor_fill(k, 0.5f));
    TH_OK(ctx, vkattn_tensor_fill(v, 0.5f));
    vkattn_layer_call call = {.batch = B, .tq = 1, .tv = tv};
    vkattn_layer_io io = {.query = q, .key = k, .value = v, .output = out};
    TH_OK(ctx, vkattn_bahdanau_record(att, VKATTN_RUN_NOW, &call, &io));
    vkattn_layer_call pc = call; /* FUSED is refused, never silently ignored */
    pc.path = VKATTN_SDPA_FUSED;
    TH_EXPECT_ERROR(vkattn_bahdanau_record(att, VKATTN_RUN_NOW, &pc, &io), VKATTN_ERROR_UNSUPPORTED, "call->path");
    pc.path = (vkattn_sdpa_path)9;
    TH_EXPECT_ERROR(vkattn_bahdanau_record(att, VKATTN_RUN_NOW, &pc, &io), VKATTN_ERROR_INVALID_ARGUMENT,
                    "call->path");
    pc.path = VKATTN_SDPA_UNFUSED;
    TH_OK(ctx, vkattn_bahdanau_record(att, VKATTN_RUN_NOW, &pc, &io));
    io.key = NULL; /* key = value needs Dk = Dv */
    TH_EXPECT_ERROR(vkattn_bahdanau_record(att, VKATTN_RUN_NOW, &call, &io), VKATTN_ERROR_INVALID_ARGUMENT, "io->key");
    io.key = k, io.query = qwide;
    TH_EXPECT_ERROR(vkattn_bahdanau_record(att, VKATTN_RUN_NOW, &call, &io), VKATTN_ERROR_INVALID_ARGUMENT, "io->query");
    io.query = q;
    vkattn_tensor *bad_mask = lt_bad_mask(ctx, 1, tv);
    io.attention_mask = bad_mask;
    TH_EXPECT_ERROR(vkattn_bahdanau_record(att, VKATTN_RUN_NOW, &call, &io), VKATTN_ERROR_INVALID_ARGUMENT,
                    "io->attention_mask has shape (2, 7)");
    io.attention_mask = NULL;
    vkattn_tensor_destroy(bad_mask);
    call.tq = 2; /* the query holds one step */
    TH_EXPECT_ERROR(vkattn_bahdanau_record(att, VKATTN_RUN_NOW, &call, &io), VKATTN_ERROR_INVALID_ARGUMENT, "io->query");
    TH_EXPECT_ERROR(vkattn_bahdanau_record(NULL, VKATTN_RUN_NOW, &call, &io), VKATTN_ERROR_INVALID_ARGUMENT, "layer");
    th_assert_validation_clean();
    vkattn_tensor *all[] = {q, k, v, out, qwide};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vkattn_tensor_destroy(all[i]);
    vkattn_bahdanau_destroy(att);

    /* the reference */
    vkattn_bahdanau_weights w = ex3_weights();
    float h[64] = {0}, ho[64];
    vkattn_layer_call hc = {.batch = 1, .tq = 1, .tv = 2};
    vkattn_layer_host_io hio = {.query = h, .key = h, .value = h, .output = ho};
    TH_OK(NULL, vkattn_reference_bahdanau(&ex3_desc, &w, &hc, &hio));
    w.score_kernel = NULL;
    TH_EXPECT_ERROR(vkattn_reference_bahdanau(&ex3_desc, &w, &hc, &hio),
                    VKATTN_ERROR_INVALID_ARGUMENT, "w->score_kernel");
}

TU_MAIN(th_setup, th_teardown,
    test_examples_reference, test_examples_gpu, test_seed_shapes, test_fixed_shapes, test_each_mask,
    test_random, test_mask_broadcast, test_dropout, test_score_bias, test_weights, test_bad_args)
