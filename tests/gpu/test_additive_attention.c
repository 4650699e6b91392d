/* keras.layers.AdditiveAttention on the GPU vs
 * vkattn_reference_additive_attention, and the reference vs the Keras values
 * of tests/cases/examples.json (transcribed below). Random shapes
 * (odd, prime, Tq != Tv, batch 1, Dv != Dq), scale vector on and off, every
 * mask kind, key given and omitted, dropout on/off, scores returned or not,
 * seed 000's tutorial shapes, weights set and read back, bad arguments.
 *
 * Bound: as for Attention (test_attention.c): max|got - ref| / max|ref| <= 1e-4
 * for output and returned weights (the additive op itself is within 1e-5). */
#include "layer_testlib.h"

#include <math.h>

static const double BOUND = 1e-4;

/* ---------------------------------------------------------------- examples.json */

/* example_additive_scale_vmask (AdditiveAttention): params {"use_scale": true, "scale": [-0.4399999976158142, 0.4099999964237213, 0.9100000262260437], "dropout": 0.0}
 * causal False training False seed 0 offset 0 tol {'atol': 1e-05, 'rtol': 0.0001} */
static const float ex2_query[12] = {
    -0.949999988f, -0.550000012f, 0.460000008f, 0.239999995f, 0.50999999f, 0.129999995f,
    0.0500000007f, 0.779999971f, 0.340000004f, -0.0900000036f, -0.810000002f, -0.200000003f
};
static const float *const ex2_key = NULL;
static const float ex2_value[18] = {
    -0.889999986f, -0.270000011f, 0.189999998f, 0.25999999f, -0.219999999f, -0.800000012f,
    0.980000019f, 0.300000012f, -0.889999986f, 0.0900000036f, 0.330000013f, -0.0299999993f,
    0.670000017f, -0.449999988f, 0.870000005f, -0.860000014f, 0.660000026f, 0.819999993f
};
static const float *const ex2_query_mask = NULL;
static const float ex2_value_mask[6] = {
    1.0f, 1.0f, 0.0f, 0.0f, 1.0f, 1.0f
};
static const float *const ex2_attention_mask = NULL;
static const float ex2_expected_output[12] = {
    -0.572032928f, -0.256175339f, -0.0837281495f, -0.633840561f, -0.258862644f, -0.0305198841f,
    -0.381609678f, 0.312932521f, 0.835633755f, -0.389763623f, 0.318848163f, 0.835367203f
};
static const float ex2_expected_scores[12] = {
    0.723506927f, 0.276493073f, 0.0f, 0.777252674f, 0.222747356f, 0.0f, 0.0f, 0.31267345f,
    0.68732661f, 0.0f, 0.307344049f, 0.692655981f
};
/* shapes: q [2, 2, 3] v [2, 3, 3] k [] */
static const float ex2_scale[3] = {-0.439999998f, 0.409999996f, 0.910000026f};

/* The reference alone: no device needed. */
static void test_examples_reference(void **state)
{
    (void)state;
    const lt_example e = {.name = "example_additive_scale_vmask", .s = {2, 2, 3, 3, 3, 3, 3},
                          .o = {.scores = true}, .q = ex2_query, .v = ex2_value,
                          .vm = ex2_value_mask, .out = ex2_expected_output,
                          .scores = ex2_expected_scores, .atol = 1e-5, .rtol = 1e-4};
    vkattn_additive_attention_desc desc = {.query_width = 3, .value_width = 3};
    vkattn_additive_attention_weights w = {.scale = (float *)ex2_scale};
    lt_data d;
    lt_data_from_example(&d, &e);
    vkattn_layer_call call = lt_call(&d);
    vkattn_layer_host_io hio = lt_host_io(&d);
    TH_OK(NULL, vkattn_reference_additive_attention(&desc, &w, &call, &hio));
    lt_check_example(&e, &d, d.ref_out, d.ref_scores, "reference");
    lt_data_free(&d);
}

static void test_examples_gpu(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int with_scores = 0; with_scores < 2; with_scores++) {
        const lt_example e = {.name = "example_additive_scale_vmask", .s = {2, 2, 3, 3, 3, 3, 3},
                              .o = {.scores = with_scores}, .q = ex2_query, .v = ex2_value,
                              .vm = ex2_value_mask, .out = ex2_expected_output,
                              .scores = ex2_expected_scores, .atol = 1e-5, .rtol = 1e-4};
        vkattn_additive_attention_desc desc = {.query_width = 3, .value_width = 3};
        vkattn_additive_attention *att;
        TH_OK(ctx, vkattn_additive_attention_create(ctx, &desc, &att));
        TH_OK(ctx, vkattn_additive_attention_set_weights(
                       att, &(vkattn_additive_attention_weights){.scale = (float *)ex2_scale}));
        lt_data d;
        lt_data_from_example(&d, &e);
        lt_gpu g;
        lt_gpu_init(ctx, &g, &d);
        vkattn_layer_call call = lt_call(&d);
        vkattn_layer_io io = lt_gpu_io(&g);
        TH_OK(ctx, vkattn_additive_attention_record(att, VKATTN_RUN_NOW, &call, &io));
        float *out = th_download(g.out, d.nout);
        float *sc = with_scores ? th_download(g.sc, d.nsc) : NULL;
        lt_check_example(&e, &d, out, sc, "GPU");
        th_assert_validation_clean();
        free(out), free(sc);
        lt_gpu_free(&g);
        lt_data_free(&d);
        vkattn_additive_attention_destroy(att);
    }
}

/* ---------------------------------------------------------------- random cases */

static void check_case(vkattn_context *ctx, const vkattn_additive_attention_desc *desc,
                       const lt_shape *s, const lt_opts *o)
{
    float *scale = tu_floats(s->dq);
    tu_fill_uniform(scale, s->dq, -1, 1);
    vkattn_additive_attention_weights w = {.scale = scale};
    lt_data d;
    lt_data_init(&d, s, o);
    vkattn_layer_call call = lt_call(&d);
    vkattn_layer_host_io hio = lt_host_io(&d);
    TH_OK(ctx, vkattn_reference_additive_attention(desc, &w, &call, &hio));

    vkattn_additive_attention *att;
    TH_OK(ctx, vkattn_additive_attention_create(ctx, desc, &att));
    TH_OK(ctx, vkattn_additive_attention_set_weights(att, &w));
    lt_gpu g;
    lt_gpu_init(ctx, &g, &d);
    vkattn_layer_io io = lt_gpu_io(&g);
    TH_OK(ctx, vkattn_additive_attention_record(att, VKATTN_RUN_NOW, &call, &io));

    char what[400], layer[96];
    snprintf(layer, sizeof layer, "AdditiveAttention(use_scale=%d, dropout=%g)", !desc->no_scale,
             (double)desc->dropout);
    lt_describe(what, sizeof what, &d, layer);
    lt_gpu_check(&g, &d, BOUND, what);
    th_assert_validation_clean();
    lt_gpu_free(&g);
    lt_data_free(&d);
    free(scale);
    vkattn_additive_attention_destroy(att);
}

/* Query and key widths match; with key = value the value width does too. */
static void make_shape(lt_shape *s, const lt_opts *o)
{
    if (!o->key)
        s->dv = s->dq;
    s->dk = s->dq;
    s->dout = s->dv;
}

static vkattn_additive_attention_desc desc_for(const lt_shape *s, bool no_scale, float dropout)
{
    return (vkattn_additive_attention_desc){.query_width = s->dq, .value_width = s->dv,
                                            .key_width = s->dk, .no_scale = no_scale,
                                            .dropout = dropout};
}

static void test_fixed_shapes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const uint32_t shapes[][5] = {
        /* B, Tq, Tv, Dq, Dv */
        {1, 1, 1, 1, 1}, {1, 1, 7, 5, 3}, {2, 5, 3, 4, 6}, {3, 7, 13, 11, 2}, {1, 17, 17, 16, 16},
        {2, 31, 9, 3, 33}, {1, 2, 65, 8, 5}, {1, 40, 1, 37, 4},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int no_scale = 0; no_scale < 2; no_scale++) {
            lt_opts o = {.key = i % 2 == 0, .query_mask = i % 3 == 0, .value_mask = i % 2 == 1,
                         .attention_mask = i % 3 == 2, .causal = i % 4 == 1,
                         .scores = (i + no_scale) % 2 == 0,
                         /* no fused kernel: UNFUSED runs the same chain as AUTO */
                         .path = i % 3 == 1 ? VKATTN_SDPA_UNFUSED : VKATTN_SDPA_AUTO};
            lt_shape s = {shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], 0, shapes[i][4], 0};
            make_shape(&s, &o);
            vkattn_additive_attention_desc desc = desc_for(&s, no_scale, 0.0f);
            check_case(ctx, &desc, &s, &o);
        }
}

static void test_each_mask(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int m = 0; m < 6; m++) {
        lt_opts o = {.key = true, .query_mask = m == 0 || m == 5, .value_mask = m == 1 || m == 5,
                     .attention_mask = m == 2 || m == 5, .causal = m >= 3, .bottom_right = m == 4,
                     .scores = true};
        lt_shape s = {2, 5, 7, 6, 0, 3, 0};
        make_shape(&s, &o);
        vkattn_additive_attention_desc desc = desc_for(&s, false, 0.0f);
        check_case(ctx, &desc, &s, &o);
    }
}

static void check_mask_form(vkattn_context *ctx, const lt_shape *s, const lt_opts *o, int variant)
{
    vkattn_additive_attention_desc desc = desc_for(s, variant % 3 == 0, 0.0f);
    check_case(ctx, &desc, s, o);
}

/* Every broadcast form of the attention mask vs the reference. */
static void test_mask_broadcast(void **state)
{
    lt_each_mask_form(TH_CTX(state), make_shape, check_mask_form);
}

static void test_random(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 20; i++) {
        lt_opts o = lt_random_opts();
        lt_shape s = {tu_rand_range(1, 4), tu_rand_range(1, 40), tu_rand_range(1, 40),
                      tu_rand_range(1, 48), 0, tu_rand_range(1, 48), 0};
        make_shape(&s, &o);
        float rate = o.training || tu_rand_range(0, 1) ? tu_rand_float(0.05f, 0.6f) : 0.0f;
        vkattn_additive_attention_desc desc = desc_for(&s, tu_rand_range(0, 3) == 0, rate);
        check_case(ctx, &desc, &s, &o);
    }
}

static void test_dropout(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const float rates[] = {0.2f, 0.5f, 1.0f};
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++)
        for (int training = 0; training < 2; training++) {
            lt_opts o = {.key = true, .value_mask = i != 1, .causal = i == 1,
                         .training = training, .scores = true, .seed = 7 + i, .offset = 3 * i};
            lt_shape s = {3, 5, 9, 7, 0, 4, 0};
            make_shape(&s, &o);
            vkattn_additive_attention_desc desc = desc_for(&s, false, rates[i]);
            check_case(ctx, &desc, &s, &o);
        }
}

/* Seed 000's tutorial shapes: batch 4, Tq 10, Tv 12, depth 64, depth_v 128,
 * with a padding mask (the tutorial's 1 = masked is our 0). */
static void test_seed_shapes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    lt_opts o = {.key = true, .value_mask = true, .scores = true};
    lt_shape s = {4, 10, 12, 64, 64, 128, 128};
    vkattn_additive_attention_desc desc = desc_for(&s, false, 0.0f);
    check_case(ctx, &desc, &s, &o);
}

static void test_weights(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_additive_attention *att;
    TH_OK(ctx, vkattn_additive_attention_create(
                   ctx, &(vkattn_additive_attention_desc){.query_width = 5, .value_width = 5}, &att));
    float got[5], set[5] = {0.5f, -1.0f, 2.0f, 0.0f, 3.25f};
    vkattn_additive_attention_weights w = {.scale = got};
    TH_OK(ctx, vkattn_additive_attention_get_weights(att, &w));
    for (int i = 0; i < 5; i++) /* glorot_uniform, fans 5 and 5 (test_layer_init.c) */
        assert_true(fabsf(got[i]) <= sqrtf(6.0f / 10.0f) && got[i] != 0.0f);
    TH_OK(ctx, vkattn_additive_attention_set_weights(att, &(vkattn_additive_attention_weights){set}));
    TH_OK(ctx, vkattn_additive_attention_get_weights(att, &w));
    assert_memory_equal(got, set, sizeof set);
    TH_OK(ctx, vkattn_additive_attention_get_weights(att, &(vkattn_additive_attention_weights){NULL}));
    TH_EXPECT_ERROR(vkattn_additive_attention_set_weights(att, &(vkattn_additive_attention_weights){NULL}),
                    VKATTN_ERROR_INVALID_ARGUMENT, "w->scale");
    vkattn_additive_attention_destroy(att);

    /* no_scale: there is no weight; set and get succeed and touch nothing */
    TH_OK(ctx, vkattn_additive_attention_create(
                   ctx, &(vkattn_additive_attention_desc){.query_width = 5, .value_width = 5, .no_scale = true},
                   &att));
    TH_OK(ctx, vkattn_additive_attention_set_weights(att, &(vkattn_additive_attention_weights){NULL}));
    got[0] = 42.0f;
    TH_OK(ctx, vkattn_additive_attention_get_weights(att, &w));
    assert_true(got[0] == 42.0f);
    vkattn_additive_attention_destroy(att);
    vkattn_additive_attention_destroy(NULL);
    th_assert_validation_clean();
}

static void test_bad_args(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_additive_attention *att = NULL;
    TH_EXPECT_ERROR(vkattn_additive_attention_create(
                        ctx, &(vkattn_additive_attention_desc){.query_width = 4, .value_width = 6}, &att),
                    VKATTN_ERROR_INVALID_ARGUMENT, "desc->key_width");
    TH_EXPECT_ERROR(vkattn_additive_attention_create(
                        ctx, &(vkattn_additive_attention_desc){.query_width = 0, .value_width = 6}, &att),
                    VKATTN_ERROR_INVALID_ARGUMENT, "desc->query_width");
    TH_EXPECT_ERROR(vkattn_additive_attention_create(
                        ctx,
                        &(vkattn_additive_attention_desc){.query_width = 4, .value_width = 4, .dropout = -0.1f},
                        &att),
                    VKATTN_ERROR_INVALID_ARGUMENT, "desc->dropout");
    assert_null(att);

    TH_OK(ctx, vkattn_additive_attention_create(
                   ctx, &(vkattn_additive_attention_desc){.query_width = 4, .value_width = 6, .key_width = 4},
                   &att));
    const uint32_t B = 2, tq = 3, tv = 5;
    vkattn_tensor *q = th_tensor(ctx, B * tq * 4, NULL), *k = th_tensor(ctx, B * tv * 4, NULL);
    vkattn_tensor *v = th_tensor(ctx, B * tv * 6, NULL), *out = th_tensor(ctx, B * tq * 6, NULL);
    vkattn_tensor *small = th_tensor(ctx, 7, NULL);
    const vkattn_layer_call call = {.batch = B, .tq = tq, .tv = tv};
    vkattn_layer_io io = {.query = q, .key = k, .value = v, .output = out};
    TH_OK(ctx, vkattn_tensor_fill(q, 0.5f));
    TH_OK(ctx, vkattn_tensor_fill(k, 0.5f));
    TH_OK(ctx, vkattn_tensor_fill(v, 0.5f));
    TH_OK(ctx, vkattn_additive_attention_record(att, VKATTN_RUN_NOW, &call, &io));
    vkattn_layer_call pc = call; /* FUSED is refused, never silently ignored */
    pc.path = VKATTN_SDPA_FUSED;
    TH_EXPECT_ERROR(vkattn_additive_attention_record(att, VKATTN_RUN_NOW, &pc, &io), VKATTN_ERROR_UNSUPPORTED,
                    "call->path");
    pc.path = (vkattn_sdpa_path)9;
    TH_EXPECT_ERROR(vkattn_additive_attention_record(att, VKATTN_RUN_NOW, &pc, &io), VKATTN_ERROR_INVALID_ARGUMENT,
                    "call->path");
    pc.path = VKATTN_SDPA_UNFUSED;
    TH_OK(ctx, vkattn_additive_attention_record(att, VKATTN_RUN_NOW, &pc, &io));
    io.key = NULL;
    TH_EXPECT_ERROR(vkattn_additive_attention_record(att, VKATTN_RUN_NOW, &call, &io), VKATTN_ERROR_INVALID_ARGUMENT,
                    "io->key");
    io.key = small;
    TH_EXPECT_ERROR(vkattn_additive_attention_record(att, VKATTN_RUN_NOW, &call, &io), VKATTN_ERROR_INVALID_ARGUMENT,
                    "io->key");
    io.key = k, io.output = small;
    TH_EXPECT_ERROR(vkattn_additive_attention_record(att, VKATTN_RUN_NOW, &call, &io), VKATTN_ERROR_INVALID_ARGUMENT,
                    "io->output");
    io.output = out, io.value_mask = small;
    TH_EXPECT_ERROR(vkattn_additive_attention_record(att, VKATTN_RUN_NOW, &call, &io), VKATTN_ERROR_INVALID_ARGUMENT,
                    "io->value_mask");
    io.value_mask = NULL;
    vkattn_tensor *bad_mask = lt_bad_mask(ctx, tq, tv);
    io.attention_mask = bad_mask;
    TH_EXPECT_ERROR(vkattn_additive_attention_record(att, VKATTN_RUN_NOW, &call, &io), VKATTN_ERROR_INVALID_ARGUMENT,
                    "io->attention_mask has shape (4, 6)");
    io.attention_mask = NULL;
    vkattn_tensor_destroy(bad_mask);
    TH_EXPECT_ERROR(vkattn_additive_attention_record(att, VK_NULL_HANDLE, &call, &io),
                    VKATTN_ERROR_INVALID_ARGUMENT, "cmd");
    th_assert_validation_clean();
    vkattn_tensor *all[] = {q, k, v, out, small};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vkattn_tensor_destroy(all[i]);
    vkattn_additive_attention_destroy(att);

    /* the reference */
    float h[64] = {0}, ho[64];
    vkattn_additive_attention_desc desc = {.query_width = 2, .value_width = 2};
    vkattn_layer_call hc = {.batch = 1, .tq = 2, .tv = 2};
    vkattn_layer_host_io hio = {.query = h, .value = h, .output = ho};
    TH_EXPECT_ERROR(vkattn_reference_additive_attention(&desc, &(vkattn_additive_attention_weights){NULL},
                                                        &hc, &hio),
                    VKATTN_ERROR_INVALID_ARGUMENT, "w->scale");
    desc.no_scale = true;
    TH_OK(NULL, vkattn_reference_additive_attention(&desc, &(vkattn_additive_attention_weights){NULL},
                                                    &hc, &hio));
    hio.value = NULL;
    TH_EXPECT_ERROR(vkattn_reference_additive_attention(&desc, &(vkattn_additive_attention_weights){NULL},
                                                        &hc, &hio),
                    VKATTN_ERROR_INVALID_ARGUMENT, "io->value");
}

TU_MAIN(th_setup, th_teardown,
    test_examples_reference, test_examples_gpu, test_fixed_shapes, test_each_mask, test_random,
    test_dropout, test_mask_broadcast, test_seed_shapes, test_weights, test_bad_args)
