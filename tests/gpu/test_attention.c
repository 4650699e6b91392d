/* keras.layers.Attention on the GPU vs vkattn_reference_attention, and the
 * reference vs the Keras values of tests/cases/examples.json
 * (transcribed below). Random shapes (odd, prime, Tq != Tv, batch 1, Dq != Dv),
 * dot and concat modes, use_scale on/off, every mask kind alone and together,
 * key given and omitted, dropout on/off (the Philox stream is bit-identical,
 * so dropped weights match exactly), scores returned or not, every SDPA path,
 * the seed tutorial's shapes, scratch growth inside one command buffer, and
 * bad arguments.
 *
 * Bound: the GPU and the reference round at the same points (scores, weights,
 * output) and differ by fp32 rounding of D- and Tv-long sums of terms of
 * magnitude <= 1, amplified at most by the softmax's |dW/dS| <= 1/4:
 * max|got - ref| / max|ref| <= 1e-4 for output and returned weights. */
#include "layer_testlib.h"

static const double BOUND = 1e-4;

/* ---------------------------------------------------------------- examples.json */

/* example_attention_dot_masks_causal (Attention): params {"use_scale": true, "score_mode": "dot", "scale": 0.8, "dropout": 0.0}
 * causal True training False seed 0 offset 0 tol {'atol': 1e-05, 'rtol': 0.0001} */
static const float ex0_query[18] = {
    0.270000011f, 0.930000007f, 0.560000002f, 0.920000017f, 0.0900000036f, -0.870000005f,
    0.0599999987f, 0.159999996f, -0.439999998f, 0.0199999996f, 0.0f, -0.779999971f,
    0.620000005f, -0.119999997f, -0.699999988f, -0.800000012f, -0.140000001f, -0.479999989f
};
static const float ex0_key[24] = {
    -0.730000019f, -0.330000013f, 0.419999987f, -0.920000017f, -0.569999993f, -0.419999987f,
    0.0399999991f, -0.25999999f, 0.349999994f, 0.400000006f, -0.300000012f, -0.5f,
    -0.689999998f, -0.469999999f, 0.779999971f, 0.50999999f, 0.560000002f, -0.629999995f,
    0.180000007f, -0.349999994f, 0.680000007f, -0.0700000003f, 0.330000013f, -0.670000017f
};
static const float ex0_value[16] = {
    0.899999976f, -0.980000019f, -0.239999995f, 0.800000012f, 0.159999996f, 0.340000004f,
    -0.25f, -0.709999979f, 0.319999993f, -0.569999993f, 0.709999979f, 0.689999998f,
    -0.810000002f, 0.699999988f, -0.270000011f, 0.50999999f
};
static const float ex0_query_mask[6] = {
    1.0f, 1.0f, 0.0f, 1.0f, 1.0f, 1.0f
};
static const float ex0_value_mask[8] = {
    1.0f, 0.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 0.0f
};
static const float *const ex0_attention_mask = NULL;
static const float ex0_expected_output[12] = {
    0.899999976f, -0.980000019f, 0.899999976f, -0.980000019f, 0.0f, 0.0f, 0.319999993f,
    -0.569999993f, 0.625547767f, 0.417154342f, 0.151655734f, 0.144236684f
};
static const float ex0_expected_scores[24] = {
    1.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f, 0.482367307f, 0.0f, 0.517632663f, 0.0f,
    1.0f, 0.0f, 0.0f, 0.0f, 0.216544196f, 0.783455849f, 0.0f, 0.0f, 0.435174674f, 0.309150249f,
    0.255675107f, 0.0f
};
/* shapes: q [2, 3, 3] v [2, 4, 2] k [2, 4, 3] */

/* example_attention_concat_scaled (Attention): params {"use_scale": true, "score_mode": "concat", "scale": 0.7, "concat_score_weight": 1.3, "dropout": 0.0}
 * causal False training False seed 0 offset 0 tol {'atol': 1e-05, 'rtol': 0.0001} */
static const float ex1_query[8] = {
    0.430000007f, -0.75f, -0.50999999f, 0.0500000007f, 0.930000007f, -0.50999999f,
    -0.540000021f, -0.910000026f
};
static const float *const ex1_key = NULL;
static const float ex1_value[12] = {
    -0.0700000003f, -0.800000012f, 0.150000006f, 0.519999981f, -0.159999996f, -0.649999976f,
    0.0399999991f, -0.330000013f, -0.689999998f, 0.330000013f, 0.0500000007f, 0.610000014f
};
static const float *const ex1_query_mask = NULL;
static const float *const ex1_value_mask = NULL;
static const float *const ex1_attention_mask = NULL;
static const float ex1_expected_output[8] = {
    -0.354857832f, -0.283180952f, 0.0880151838f, 0.416366965f, -0.37606898f, -0.244737625f,
    0.0831253827f, 0.406171262f
};
static const float ex1_expected_scores[6] = {
    0.396950424f, 0.167986736f, 0.435062915f, 0.34959057f, 0.18336761f, 0.467041761f
};
/* shapes: q [1, 2, 4] v [1, 3, 4] k [] */

/* example_attention_dropout_philox (Attention): params {"use_scale": false, "score_mode": "dot", "dropout": 0.5}
 * causal False training True seed 20015998341291 offset 7 tol {'atol': 1e-05, 'rtol': 0.0001} */
static const float ex5_query[6] = {
    0.140000001f, -0.899999976f, 0.839999974f, -0.579999983f, 0.74000001f, -0.449999988f
};
static const float *const ex5_key = NULL;
static const float ex5_value[12] = {
    0.800000012f, -0.699999988f, 0.239999995f, 0.200000003f, -0.540000021f, -0.469999999f,
    0.660000026f, 0.689999998f, -0.479999989f, 0.649999976f, -0.100000001f, -0.879999995f
};
static const float *const ex5_query_mask = NULL;
static const float *const ex5_value_mask = NULL;
static const float *const ex5_attention_mask = NULL;
static const float ex5_expected_output[6] = {
    -0.100610739f, -0.522155091f, 0.0518064368f, -0.104569665f, 0.243499382f, -0.0458027243f
};
static const float ex5_expected_scores[18] = {
    0.0f, 0.225339308f, 0.369225383f, 0.153762206f, 0.0f, 0.567935169f, 0.0f, 0.271684676f,
    0.208104849f, 0.290976375f, 0.114301793f, 0.382008165f, 0.0f, 0.291282266f, 0.0f,
    0.318809211f, 0.0f, 0.368224472f
};
/* shapes: q [1, 3, 2] v [1, 6, 2] k [] */

typedef struct attention_example {
    lt_example e;
    vkattn_attention_desc desc;
    vkattn_attention_weights w;
} attention_example;

static const attention_example examples[] = {
    {.e = {.name = "example_attention_dot_masks_causal", .s = {2, 3, 4, 3, 3, 2, 2},
           .o = {.causal = true, .scores = true},
           .q = ex0_query, .k = ex0_key, .v = ex0_value, .qm = ex0_query_mask,
           .vm = ex0_value_mask, .out = ex0_expected_output, .scores = ex0_expected_scores,
           .atol = 1e-5, .rtol = 1e-4},
     .desc = {.query_width = 3, .value_width = 2, .key_width = 3, .use_scale = true},
     .w = {.scale = 0.8f, .concat_score_weight = 1.0f}},
    {.e = {.name = "example_attention_concat_scaled", .s = {1, 2, 3, 4, 4, 4, 4},
           .o = {.scores = true},
           .q = ex1_query, .v = ex1_value, .out = ex1_expected_output,
           .scores = ex1_expected_scores, .atol = 1e-5, .rtol = 1e-4},
     .desc = {.query_width = 4, .value_width = 4, .use_scale = true, .score_mode = VKATTN_SCORE_CONCAT},
     .w = {.scale = 0.7f, .concat_score_weight = 1.3f}},
    {.e = {.name = "example_attention_dropout_philox", .s = {1, 3, 6, 2, 2, 2, 2},
           .o = {.training = true, .seed = 20015998341291ull, .offset = 7, .scores = true},
           .q = ex5_query, .v = ex5_value, .out = ex5_expected_output,
           .scores = ex5_expected_scores, .atol = 1e-5, .rtol = 1e-4},
     .desc = {.query_width = 2, .value_width = 2, .dropout = 0.5f},
     .w = {.scale = 1.0f, .concat_score_weight = 1.0f}},
};
#define N_EXAMPLES (sizeof examples / sizeof examples[0])

/* The reference alone: no device needed. */
static void test_examples_reference(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_EXAMPLES; i++) {
        const attention_example *x = &examples[i];
        lt_data d;
        lt_data_from_example(&d, &x->e);
        vkattn_layer_call call = lt_call(&d);
        vkattn_layer_host_io hio = lt_host_io(&d);
        TH_OK(NULL, vkattn_reference_attention(&x->desc, &x->w, &call, &hio));
        lt_check_example(&x->e, &d, d.ref_out, d.ref_scores, "reference");
        lt_data_free(&d);
    }
}

/* The GPU layer on the same cases, on every path that can serve them. */
static void test_examples_gpu(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (size_t i = 0; i < N_EXAMPLES; i++) {
        const attention_example *x = &examples[i];
        for (int pass = 0; pass < 2; pass++) {
            lt_example e = x->e;
            if (pass == 1) { /* without returned scores: dot mode may take the fused kernel */
                e.o.scores = false;
                e.scores = NULL;
            }
            lt_data d;
            lt_data_from_example(&d, &e);
            vkattn_attention *att;
            TH_OK(ctx, vkattn_attention_create(ctx, &x->desc, &att));
            TH_OK(ctx, vkattn_attention_set_weights(att, &x->w));
            lt_gpu g;
            lt_gpu_init(ctx, &g, &d);
            vkattn_layer_call call = lt_call(&d);
            vkattn_layer_io io = lt_gpu_io(&g);
            TH_OK(ctx, vkattn_attention_record(att, VKATTN_RUN_NOW, &call, &io));
            float *out = th_download(g.out, d.nout);
            float *sc = e.o.scores ? th_download(g.sc, d.nsc) : NULL;
            lt_check_example(&e, &d, out, sc, pass ? "GPU (no scores)" : "GPU");
            th_assert_validation_clean();
            free(out), free(sc);
            lt_gpu_free(&g);
            lt_data_free(&d);
            vkattn_attention_destroy(att);
        }
    }
}

/* ---------------------------------------------------------------- random cases */

/* Runs one call on the GPU and on the reference and compares. */
static void check_case(vkattn_context *ctx, const vkattn_attention_desc *desc,
                       const vkattn_attention_weights *w, const lt_shape *s, const lt_opts *o)
{
    lt_data d;
    lt_data_init(&d, s, o);
    vkattn_layer_call call = lt_call(&d);
    vkattn_layer_host_io hio = lt_host_io(&d);
    TH_OK(ctx, vkattn_reference_attention(desc, w, &call, &hio));

    vkattn_attention *att;
    TH_OK(ctx, vkattn_attention_create(ctx, desc, &att));
    TH_OK(ctx, vkattn_attention_set_weights(att, w));
    lt_gpu g;
    lt_gpu_init(ctx, &g, &d);
    vkattn_layer_io io = lt_gpu_io(&g);
    TH_OK(ctx, vkattn_attention_record(att, VKATTN_RUN_NOW, &call, &io));

    char what[400], layer[96];
    snprintf(layer, sizeof layer, "Attention(%s, use_scale=%d scale=%g csw=%g dropout=%g)",
             desc->score_mode == VKATTN_SCORE_DOT ? "dot" : "concat", desc->use_scale,
             (double)w->scale, (double)w->concat_score_weight, (double)desc->dropout);
    lt_describe(what, sizeof what, &d, layer);
    lt_gpu_check(&g, &d, BOUND, what);
    th_assert_validation_clean();
    lt_gpu_free(&g);
    lt_data_free(&d);
    vkattn_attention_destroy(att);
}

/* Attention compares query and key features: Dk = Dq, and with key = value
 * also Dv = Dq. */
static void make_shape(lt_shape *s, const lt_opts *o)
{
    if (!o->key)
        s->dv = s->dq;
    s->dk = s->dq;
    s->dout = s->dv;
}

static vkattn_attention_desc desc_for(const lt_shape *s, vkattn_score_mode mode, bool use_scale,
                                      float dropout)
{
    return (vkattn_attention_desc){.query_width = s->dq, .value_width = s->dv, .key_width = s->dk,
                                   .use_scale = use_scale, .score_mode = mode, .dropout = dropout};
}

static void test_fixed_shapes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const uint32_t shapes[][5] = {
        /* B, Tq, Tv, Dq, Dv */
        {1, 1, 1, 1, 1}, {1, 1, 7, 5, 3}, {2, 5, 3, 4, 6}, {3, 7, 13, 11, 2}, {1, 17, 17, 16, 16},
        {2, 31, 9, 3, 33}, {1, 2, 65, 8, 5},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int mode = 0; mode < 2; mode++) {
            lt_opts o = {.key = i % 2 == 0, .query_mask = i % 3 == 0, .value_mask = i % 2 == 1,
                         .attention_mask = i % 3 == 2, .causal = i % 4 == 1,
                         .scores = (i + mode) % 2 == 0};
            lt_shape s = {shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], 0, shapes[i][4], 0};
            make_shape(&s, &o);
            vkattn_attention_desc desc = desc_for(&s, (vkattn_score_mode)mode, i % 2 == 0, 0.0f);
            vkattn_attention_weights w = {.scale = 0.75f, .concat_score_weight = 1.25f};
            check_case(ctx, &desc, &w, &s, &o);
        }
}

/* Every mask kind alone, then all together, on one odd shape. */
static void test_each_mask(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int m = 0; m < 7; m++)
        for (int mode = 0; mode < 2; mode++) {
            lt_opts o = {.key = true, .query_mask = m == 0 || m == 6, .value_mask = m == 1 || m == 6,
                         .attention_mask = m == 2 || m == 6, .causal = m >= 3 && m != 5,
                         .bottom_right = m == 4, .scores = true};
            if (m == 5) /* causal with Tq > Tv: the last rows see every key */
                o.causal = true;
            lt_shape s = {2, m == 5 ? 9 : 5, 7, 6, 0, 3, 0};
            make_shape(&s, &o);
            vkattn_attention_desc desc = desc_for(&s, (vkattn_score_mode)mode, true, 0.0f);
            vkattn_attention_weights w = {.scale = 1.5f, .concat_score_weight = 0.5f};
            check_case(ctx, &desc, &w, &s, &o);
        }
}

/* Every broadcast form of the attention mask, dot (fused and unfused) and
 * concat, vs the reference. */
static void check_mask_form(vkattn_context *ctx, const lt_shape *s, const lt_opts *o, int variant)
{
    for (int mode = 0; mode < 2; mode++) {
        lt_shape sh = *s;
        lt_opts oo = *o;
        if (mode == VKATTN_SCORE_DOT) {
            /* few widths: each fused pipeline costs seconds on lavapipe */
            sh.dq = sh.dk = 5, sh.dv = sh.dout = o->key ? 3 : 5;
            oo.path = !oo.scores && variant % 2 ? VKATTN_SDPA_FUSED : VKATTN_SDPA_UNFUSED;
        }
        vkattn_attention_desc desc = desc_for(&sh, (vkattn_score_mode)mode, true, 0.0f);
        vkattn_attention_weights w = {.scale = 0.8f, .concat_score_weight = 1.3f};
        check_case(ctx, &desc, &w, &sh, &oo);
    }
}

static void test_mask_broadcast(void **state)
{
    lt_each_mask_form(TH_CTX(state), make_shape, check_mask_form);
}

static void test_random(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 18; i++) {
        lt_opts o = lt_random_opts();
        vkattn_score_mode mode = (vkattn_score_mode)tu_rand_range(0, 1);
        lt_shape s = {tu_rand_range(1, 4), tu_rand_range(1, 40), tu_rand_range(1, 40),
                      tu_rand_range(1, 48), 0, tu_rand_range(1, 48), 0};
        if (mode == VKATTN_SCORE_DOT) {
            /* the fused kernel is specialized on the widths, and each new pipeline
             * costs seconds on lavapipe: draw them from a few odd and even ones */
            static const uint32_t widths[] = {5, 16, 33};
            s.dq = widths[tu_rand_range(0, 2)], s.dv = widths[tu_rand_range(0, 2)];
        }
        make_shape(&s, &o);
        float rate = o.training || tu_rand_range(0, 1) ? tu_rand_float(0.05f, 0.6f) : 0.0f;
        vkattn_attention_desc desc = desc_for(&s, mode, tu_rand_range(0, 1), rate);
        vkattn_attention_weights w = {.scale = tu_rand_float(0.2f, 1.5f),
                                      .concat_score_weight = tu_rand_float(-2.0f, 2.0f)};
        o.path = (vkattn_sdpa_path)(o.scores ? 2 * tu_rand_range(0, 1) : tu_rand_range(0, 2));
        if (mode == VKATTN_SCORE_CONCAT && o.path == VKATTN_SDPA_FUSED)
            o.path = VKATTN_SDPA_UNFUSED; /* concat has no fused kernel */
        check_case(ctx, &desc, &w, &s, &o);
    }
}

/* Dropout on and off, and rate 1 (everything dropped: zero output). */
static void test_dropout(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const float rates[] = {0.1f, 0.5f, 0.9f, 1.0f};
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++)
        for (int mode = 0; mode < 2; mode++)
            for (int training = 0; training < 2; training++) {
                lt_opts o = {.value_mask = true, .causal = i % 2 == 1, .training = training,
                             .scores = mode == 1 || i % 2 == 0, .seed = 0x1234567890abcdefull + i,
                             .offset = i};
                lt_shape s = {2, 6, 11, 5, 0, 5, 0};
                make_shape(&s, &o);
                vkattn_attention_desc desc = desc_for(&s, (vkattn_score_mode)mode, false, rates[i]);
                vkattn_attention_weights w = {1.0f, 1.0f};
                check_case(ctx, &desc, &w, &s, &o);
            }
}

/* Dot mode through each SDPA path; FUSED cannot return weights (an argument error).
 * Concat mode has no fused kernel: AUTO and UNFUSED run it, FUSED is UNSUPPORTED. */
static void test_paths(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    /* each fused variant is a pipeline that costs seconds to build on lavapipe */
    for (int p = 0; p < 3; p++) {
        lt_opts o = {.key = true, .query_mask = true, .value_mask = true, .causal = p == 1,
                     .training = p != 0, .seed = 99, .path = (vkattn_sdpa_path)p,
                     .scores = p == 2};
        lt_shape s = {3, 19, 23, 16, 0, 12, 0};
        make_shape(&s, &o);
        vkattn_attention_desc desc = desc_for(&s, VKATTN_SCORE_DOT, true, 0.25f);
        vkattn_attention_weights w = {0.3f, 1.0f};
        check_case(ctx, &desc, &w, &s, &o);
    }

    vkattn_attention_desc desc = {.query_width = 4, .value_width = 4};
    vkattn_attention *att;
    TH_OK(ctx, vkattn_attention_create(ctx, &desc, &att));
    lt_data d;
    lt_shape s = {1, 3, 5, 4, 4, 4, 4};
    lt_opts o = {.scores = true, .path = VKATTN_SDPA_FUSED};
    lt_data_init(&d, &s, &o);
    lt_gpu g;
    lt_gpu_init(ctx, &g, &d);
    vkattn_layer_call call = lt_call(&d);
    vkattn_layer_io io = lt_gpu_io(&g);
    TH_EXPECT_ERROR(vkattn_attention_record(att, VKATTN_RUN_NOW, &call, &io), VKATTN_ERROR_INVALID_ARGUMENT,
                    "call->return_attention_scores");
    lt_gpu_free(&g);
    lt_data_free(&d);
    vkattn_attention_destroy(att);

    for (int p = 0; p < 3; p += 2) {
        lt_opts oc = {.key = true, .value_mask = true, .causal = p == 2, .scores = p == 0,
                      .path = (vkattn_sdpa_path)p};
        lt_shape sc = {2, 6, 9, 7, 0, 5, 0};
        make_shape(&sc, &oc);
        vkattn_attention_desc dc = desc_for(&sc, VKATTN_SCORE_CONCAT, true, 0.0f);
        vkattn_attention_weights wc = {0.7f, -1.2f};
        check_case(ctx, &dc, &wc, &sc, &oc);
    }
    desc.score_mode = VKATTN_SCORE_CONCAT;
    TH_OK(ctx, vkattn_attention_create(ctx, &desc, &att));
    o.scores = false;
    lt_data_init(&d, &s, &o);
    lt_gpu_init(ctx, &g, &d);
    call = lt_call(&d);
    io = lt_gpu_io(&g);
    TH_EXPECT_ERROR(vkattn_attention_record(att, VKATTN_RUN_NOW, &call, &io), VKATTN_ERROR_UNSUPPORTED,
                    "call->path");
    lt_gpu_free(&g);
    lt_data_free(&d);
    vkattn_attention_destroy(att);
}

/* Seed 000's tutorial shapes (batch 4, Tq 10, Tv 12, depth 64, depth_v 128) with
 * its padding mask, converted: the tutorial's 1 = masked is our 0. */
static void test_seed_shapes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int mode = 0; mode < 2; mode++) {
        lt_opts o = {.key = true, .value_mask = true, .scores = true};
        lt_shape s = {4, 10, 12, 64, 64, 128, 128};
        vkattn_attention_desc desc = desc_for(&s, (vkattn_score_mode)mode, true, 0.0f);
        vkattn_attention_weights w = {.scale = 0.125f, .concat_score_weight = 1.0f};
        check_case(ctx, &desc, &w, &s, &o);
    }
}

/* A zero scale (or concat_score_weight) is literal: all scores 0, uniform weights. */
static void test_zero_scale(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int mode = 0; mode < 2; mode++)
        for (int which = 0; which < 2; which++) {
            lt_opts o = {.key = true, .value_mask = true, .scores = which == 0};
            lt_shape s = {2, 4, 6, 5, 5, 3, 3};
            vkattn_attention_desc desc = desc_for(&s, (vkattn_score_mode)mode, true, 0.0f);
            vkattn_attention_weights w = {.scale = which ? 0.0f : 1.0f,
                                          .concat_score_weight = which ? 1.0f : 0.0f};
            check_case(ctx, &desc, &w, &s, &o);
        }
}

/* Two calls recorded into one command buffer: the second reads the first's
 * output as its query and needs a larger score scratch than the first, so the
 * first's scratch is retired while the command buffer still uses it. */
static void test_one_command_buffer(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const lt_shape s1 = {2, 5, 6, 8, 8, 8, 8}, s2 = {2, 5, 40, 8, 8, 8, 8};
    lt_opts o = {.key = true, .value_mask = true};
    vkattn_attention_desc desc = desc_for(&s1, VKATTN_SCORE_CONCAT, true, 0.0f);
    vkattn_attention_weights w = {0.9f, 1.1f};
    lt_data d1, d2;
    lt_data_init(&d1, &s1, &o);
    lt_data_init(&d2, &s2, &o);
    vkattn_layer_call c1 = lt_call(&d1), c2 = lt_call(&d2);
    vkattn_layer_host_io h1 = lt_host_io(&d1);
    TH_OK(ctx, vkattn_reference_attention(&desc, &w, &c1, &h1));
    memcpy(d2.q, d1.ref_out, d2.nq * sizeof(float)); /* call 2's query = call 1's output */
    vkattn_layer_host_io h2 = lt_host_io(&d2);
    TH_OK(ctx, vkattn_reference_attention(&desc, &w, &c2, &h2));

    vkattn_attention *att;
    TH_OK(ctx, vkattn_attention_create(ctx, &desc, &att));
    TH_OK(ctx, vkattn_attention_set_weights(att, &w));
    lt_gpu g1, g2;
    lt_gpu_init(ctx, &g1, &d1);
    lt_gpu_init(ctx, &g2, &d2);
    vkattn_layer_io io1 = lt_gpu_io(&g1), io2 = lt_gpu_io(&g2);
    io2.query = g1.out;
    VkCommandBuffer cmd;
    TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
    TH_OK(ctx, vkattn_attention_record(att, cmd, &c1, &io1));
    TH_OK(ctx, vkattn_attention_record(att, cmd, &c2, &io2));
    TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd));
    lt_gpu_check(&g1, &d1, BOUND, "first call of one command buffer");
    lt_gpu_check(&g2, &d2, BOUND, "second call of one command buffer");
    th_assert_validation_clean();
    lt_gpu_free(&g1);
    lt_gpu_free(&g2);
    lt_data_free(&d1);
    lt_data_free(&d2);
    vkattn_attention_destroy(att);
}

static void test_weights(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_attention_desc desc = {.query_width = 3, .value_width = 3};
    vkattn_attention *att;
    TH_OK(ctx, vkattn_attention_create(ctx, &desc, &att));
    vkattn_attention_weights w;
    TH_OK(ctx, vkattn_attention_get_weights(att, &w));
    assert_true(w.scale == 1.0f && w.concat_score_weight == 1.0f);
    TH_OK(ctx, vkattn_attention_set_weights(att, &(vkattn_attention_weights){0.0f, -2.5f}));
    TH_OK(ctx, vkattn_attention_get_weights(att, &w));
    assert_true(w.scale == 0.0f && w.concat_score_weight == -2.5f);
    TH_EXPECT_ERROR(vkattn_attention_set_weights(att, &(vkattn_attention_weights){INFINITY, 1.0f}),
                    VKATTN_ERROR_INVALID_ARGUMENT, "w->scale");
    TH_EXPECT_ERROR(vkattn_attention_set_weights(att, &(vkattn_attention_weights){1.0f, NAN}),
                    VKATTN_ERROR_INVALID_ARGUMENT, "w->concat_score_weight");
    TH_EXPECT_ERROR(vkattn_attention_set_weights(att, NULL), VKATTN_ERROR_INVALID_ARGUMENT, "w");
    TH_OK(ctx, vkattn_attention_get_weights(att, &w)); /* failed sets changed nothing */
    assert_true(w.scale == 0.0f && w.concat_score_weight == -2.5f);
    vkattn_attention_destroy(att);
    vkattn_attention_destroy(NULL);
}

/* ---------------------------------------------------------------- bad arguments */

static void test_bad_desc(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_attention *att = (vkattn_attention *)1;
    struct {
        vkattn_attention_desc d;
        const char *needle;
    } bad[] = {
        {{.query_width = 0, .value_width = 4}, "desc->query_width"},
        {{.query_width = 4, .value_width = 0}, "desc->value_width"},
        {{.query_width = 4, .value_width = 5}, "desc->key_width"},
        {{.query_width = 4, .value_width = 4, .key_width = 3}, "desc->key_width"},
        {{.query_width = 4, .value_width = 4, .score_mode = (vkattn_score_mode)7}, "desc->score_mode"},
        {{.query_width = 4, .value_width = 4, .dropout = 1.5f}, "desc->dropout"},
        {{.query_width = 4, .value_width = 4, .dropout = NAN}, "desc->dropout"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        TH_EXPECT_ERROR(vkattn_attention_create(ctx, &bad[i].d, &att),
                        VKATTN_ERROR_INVALID_ARGUMENT, bad[i].needle);
        assert_null(att);
    }
    TH_EXPECT_ERROR(vkattn_attention_create(ctx, NULL, &att), VKATTN_ERROR_INVALID_ARGUMENT, "desc");
    TH_EXPECT_ERROR(vkattn_attention_create(NULL, &bad[0].d, &att), VKATTN_ERROR_INVALID_ARGUMENT,
                    "ctx");
}

/* A tensor of rank 3 with the given dims. */
static vkattn_tensor *tensor3(vkattn_context *ctx, uint32_t a, uint32_t b, uint32_t c)
{
    vkattn_tensor_desc td = {.rank = 3, .dims = {a, b, c}};
    vkattn_tensor *t;
    TH_OK(ctx, vkattn_tensor_create(ctx, &td, &t));
    return t;
}

static void test_bad_call(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_attention_desc desc = {.query_width = 4, .value_width = 6, .key_width = 4};
    vkattn_attention *att;
    TH_OK(ctx, vkattn_attention_create(ctx, &desc, &att));
    const uint32_t B = 2, tq = 3, tv = 5;
    vkattn_tensor *q = tensor3(ctx, B, tq, 4), *k = tensor3(ctx, B, tv, 4);
    vkattn_tensor *v = tensor3(ctx, B, tv, 6), *out = tensor3(ctx, B, tq, 6);
    vkattn_tensor *sc = tensor3(ctx, B, tq, tv), *wide = tensor3(ctx, B, tv * 2, 3);
    vkattn_tensor *flat = th_tensor(ctx, B * tq * 4, NULL), *short_mask = th_tensor(ctx, B * tq - 1, NULL);
    vkattn_tensor *wrong_width = tensor3(ctx, B, tq * 2, 2); /* 12 elements, last dim 2 */
    const vkattn_layer_call good = {.batch = B, .tq = tq, .tv = tv};
    const vkattn_layer_io io0 = {.query = q, .key = k, .value = v, .output = out};

    TH_OK(ctx, vkattn_attention_record(att, VKATTN_RUN_NOW, &good, &io0));
    vkattn_layer_io io = io0;
    io.query = flat; /* a flat tensor of the right size is fine */
    TH_OK(ctx, vkattn_attention_record(att, VKATTN_RUN_NOW, &good, &io));

    vkattn_layer_call call = good;
    call.tq = 0;
    TH_EXPECT_ERROR(vkattn_attention_record(att, VKATTN_RUN_NOW, &call, &io0), VKATTN_ERROR_INVALID_ARGUMENT, "call->tq");
    call = good;
    call.causal = (vkattn_causal)3;
    TH_EXPECT_ERROR(vkattn_attention_record(att, VKATTN_RUN_NOW, &call, &io0), VKATTN_ERROR_INVALID_ARGUMENT,
                    "call->causal");
    call = good;
    call.path = (vkattn_sdpa_path)9;
    TH_EXPECT_ERROR(vkattn_attention_record(att, VKATTN_RUN_NOW, &call, &io0), VKATTN_ERROR_INVALID_ARGUMENT, "call->path");
    call = good;
    call.tv = tv + 1;
    TH_EXPECT_ERROR(vkattn_attention_record(att, VKATTN_RUN_NOW, &call, &io0), VKATTN_ERROR_INVALID_ARGUMENT, "io->value");

    io = io0, io.query = NULL;
    TH_EXPECT_ERROR(vkattn_attention_record(att, VKATTN_RUN_NOW, &good, &io), VKATTN_ERROR_INVALID_ARGUMENT, "io->query");
    io = io0, io.query = wrong_width;
    TH_EXPECT_ERROR(vkattn_attention_record(att, VKATTN_RUN_NOW, &good, &io), VKATTN_ERROR_INVALID_ARGUMENT, "io->query");
    io = io0, io.key = NULL; /* key = value needs Dv = Dk */
    TH_EXPECT_ERROR(vkattn_attention_record(att, VKATTN_RUN_NOW, &good, &io), VKATTN_ERROR_INVALID_ARGUMENT, "io->key");
    io = io0, io.value = wide;
    TH_EXPECT_ERROR(vkattn_attention_record(att, VKATTN_RUN_NOW, &good, &io), VKATTN_ERROR_INVALID_ARGUMENT, "io->value");
    io = io0, io.output = NULL;
    TH_EXPECT_ERROR(vkattn_attention_record(att, VKATTN_RUN_NOW, &good, &io), VKATTN_ERROR_INVALID_ARGUMENT, "io->output");
    io = io0, io.output = v; /* output aliases value (and is the wrong size) */
    TH_EXPECT_ERROR(vkattn_attention_record(att, VKATTN_RUN_NOW, &good, &io), VKATTN_ERROR_INVALID_ARGUMENT, "io->output");
    io = io0, io.query_mask = short_mask;
    TH_EXPECT_ERROR(vkattn_attention_record(att, VKATTN_RUN_NOW, &good, &io), VKATTN_ERROR_INVALID_ARGUMENT,
                    "io->query_mask");
    io = io0, io.query_mask = flat; /* too many elements: the shape spelled out */
    TH_EXPECT_ERROR(vkattn_attention_record(att, VKATTN_RUN_NOW, &good, &io), VKATTN_ERROR_INVALID_ARGUMENT,
                    "io->query_mask has 24 elements; must be (B, Tq) = 2 x 3 = 6");
    io = io0, io.value_mask = short_mask;
    TH_EXPECT_ERROR(vkattn_attention_record(att, VKATTN_RUN_NOW, &good, &io), VKATTN_ERROR_INVALID_ARGUMENT,
                    "io->value_mask");
    io = io0, io.attention_mask = short_mask; /* 5 elements: (Tv), which broadcasts */
    TH_OK(ctx, vkattn_attention_record(att, VKATTN_RUN_NOW, &good, &io));
    vkattn_tensor *bad_mask = lt_bad_mask(ctx, tq, tv);
    io = io0, io.attention_mask = bad_mask;
    TH_EXPECT_ERROR(vkattn_attention_record(att, VKATTN_RUN_NOW, &good, &io), VKATTN_ERROR_INVALID_ARGUMENT,
                    "io->attention_mask has shape (4, 6) (rank 2); must broadcast to (B, Tq, Tv) "
                    "= (2, 3, 5)");
    vkattn_tensor_destroy(bad_mask);
    io = io0, io.attention_mask = sc, io.attention_mask_per_head = true;
    TH_EXPECT_ERROR(vkattn_attention_record(att, VKATTN_RUN_NOW, &good, &io), VKATTN_ERROR_INVALID_ARGUMENT,
                    "attention_mask_per_head");
    io = io0, io.scores = sc; /* scores without the flag */
    TH_EXPECT_ERROR(vkattn_attention_record(att, VKATTN_RUN_NOW, &good, &io), VKATTN_ERROR_INVALID_ARGUMENT, "io->scores");
    call = good;
    call.return_attention_scores = true;
    TH_EXPECT_ERROR(vkattn_attention_record(att, VKATTN_RUN_NOW, &call, &io0), VKATTN_ERROR_INVALID_ARGUMENT, "io->scores");
    io = io0, io.scores = out;
    TH_EXPECT_ERROR(vkattn_attention_record(att, VKATTN_RUN_NOW, &call, &io), VKATTN_ERROR_INVALID_ARGUMENT, "io->scores");
    TH_EXPECT_ERROR(vkattn_attention_record(NULL, VKATTN_RUN_NOW, &good, &io0), VKATTN_ERROR_INVALID_ARGUMENT, "layer");

    /* output = query, of the right size: an overlap, not a size error */
    vkattn_attention *self;
    TH_OK(ctx, vkattn_attention_create(ctx, &(vkattn_attention_desc){.query_width = 6, .value_width = 6},
                                       &self));
    vkattn_tensor *q6 = tensor3(ctx, B, tq, 6);
    io = (vkattn_layer_io){.query = q6, .value = v, .output = q6};
    TH_EXPECT_ERROR(vkattn_attention_record(self, VKATTN_RUN_NOW, &good, &io), VKATTN_ERROR_INVALID_ARGUMENT, "overlaps");
    vkattn_tensor_destroy(q6);
    vkattn_attention_destroy(self);
    TH_EXPECT_ERROR(vkattn_attention_record(att, VKATTN_RUN_NOW, NULL, &io0), VKATTN_ERROR_INVALID_ARGUMENT, "call");
    TH_EXPECT_ERROR(vkattn_attention_record(att, VKATTN_RUN_NOW, &good, NULL), VKATTN_ERROR_INVALID_ARGUMENT, "io");
    th_assert_validation_clean();

    vkattn_tensor *all[] = {q, k, v, out, sc, wide, flat, short_mask, wrong_width};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vkattn_tensor_destroy(all[i]);
    vkattn_attention_destroy(att);
}

/* The reference checks its arguments the same way (no device needed). */
static void test_reference_bad_args(void **state)
{
    (void)state;
    float q[8] = {0}, v[8] = {0}, out[8];
    vkattn_attention_desc desc = {.query_width = 2, .value_width = 2};
    vkattn_attention_weights w = {1.0f, 1.0f};
    vkattn_layer_call call = {.batch = 1, .tq = 4, .tv = 4};
    vkattn_layer_host_io io = {.query = q, .value = v, .output = out};
    TH_OK(NULL, vkattn_reference_attention(&desc, &w, &call, &io));
    io.query = NULL;
    TH_EXPECT_ERROR(vkattn_reference_attention(&desc, &w, &call, &io), VKATTN_ERROR_INVALID_ARGUMENT,
                    "io->query");
    io.query = q;
    call.return_attention_scores = true;
    TH_EXPECT_ERROR(vkattn_reference_attention(&desc, &w, &call, &io), VKATTN_ERROR_INVALID_ARGUMENT,
                    "io->scores");
    call.return_attention_scores = false;
    desc.value_width = 3;
    TH_EXPECT_ERROR(vkattn_reference_attention(&desc, &w, &call, &io), VKATTN_ERROR_INVALID_ARGUMENT,
                    "desc->key_width");
    desc.value_width = 2;
    w.scale = NAN;
    TH_EXPECT_ERROR(vkattn_reference_attention(&desc, &w, &call, &io), VKATTN_ERROR_INVALID_ARGUMENT,
                    "w->scale");
    w.scale = 1.0f;
    call.batch = 0;
    TH_EXPECT_ERROR(vkattn_reference_attention(&desc, &w, &call, &io), VKATTN_ERROR_INVALID_ARGUMENT,
                    "call->batch");
}

TU_MAIN(th_setup, th_teardown,
    test_examples_reference, test_reference_bad_args, test_examples_gpu, test_fixed_shapes,
    test_each_mask, test_random, test_mask_broadcast, test_dropout, test_paths, test_seed_shapes,
    test_zero_scale, test_one_command_buffer, test_weights, test_bad_desc, test_bad_call)
