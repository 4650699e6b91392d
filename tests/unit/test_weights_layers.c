/* Layer weights from and to safetensors files, no device: random weights of
 * every layer saved and loaded back bit for bit (with and without a prefix),
 * F16 / BF16 files written here converted exactly, PyTorch's
 * nn.MultiheadAttention state dict converted to Keras layout (checked
 * against the conversion written out index by index here; with its QK-norm
 * scales and sinks under Hugging Face's names), and each way a
 * file can fail a layer: missing name, wrong shape, wrong dtype. */
#include "st_writer.h"
#include "test_util.h"

#include <vkattn/weights.h>

#include <math.h>
#include <stdio.h>

#include <stdlib.h>
#include <string.h>

static const char *PATH = "test_weights_layers.safetensors";

static float *rnd(size_t n)
{
    float *x = tu_floats(n);
    tu_fill_uniform(x, n, -2.0f, 2.0f);
    return x;
}

static vkattn_mha_desc random_mha(void)
{
    return (vkattn_mha_desc){.num_heads = tu_rand_range(1, 4), .key_dim = tu_rand_range(1, 5),
                             .value_dim = tu_rand_range(1, 5), .query_width = tu_rand_range(1, 7),
                             .key_width = tu_rand_range(1, 7), .value_width = tu_rand_range(1, 7),
                             .output_dim = tu_rand_range(1, 6)};
}

static void mha_counts(const vkattn_mha_desc *d, size_t n[8])
{
    size_t H = d->num_heads, kd = d->key_dim, vd = d->value_dim;
    size_t c[8] = {d->query_width * H * kd, H * kd, d->key_width * H * kd, H * kd,
                   d->value_width * H * vd, H * vd, H * vd * d->output_dim, d->output_dim};
    memcpy(n, c, sizeof c);
}

/* The eight members of w, in vkattn_mha_weights order, into a[]. */
static void mha_arrays(vkattn_mha_weights *w, float **a[8])
{
    float **p[8] = {&w->query_kernel, &w->query_bias, &w->key_kernel, &w->key_bias,
                    &w->value_kernel, &w->value_bias, &w->output_kernel, &w->output_bias};
    memcpy(a, p, sizeof p);
}

/* The file's tensor prefix + name has n elements. Save and load share the
 * library's weight table, so a round trip alone cannot see a wrong shape in
 * it: this checks the file against the test's own counts. */
static void assert_saved_count(vkattn_weights_file *f, const char *prefix, const char *name,
                               size_t n)
{
    char full[96];
    vkattn_weights_tensor_info info;
    snprintf(full, sizeof full, "%s%s", prefix ? prefix : "", name);
    assert_int_equal(vkattn_weights_file_find(f, full, &info), VKATTN_SUCCESS);
    assert_int_equal(info.count, n);
}

static void test_mha_round_trip(void **state)
{
    (void)state;
    tu_seed();
    for (int iter = 0; iter < 20; iter++) {
        vkattn_mha_desc d = random_mha();
        d.no_bias = iter % 3 == 2;
        size_t n[8];
        mha_counts(&d, n);
        vkattn_mha_weights w = {0}, back;
        float **in[8], **out[8];
        mha_arrays(&w, in);
        for (int i = 0; i < 8; i++)
            *in[i] = (d.no_bias && i % 2) ? NULL : rnd(n[i]);
        const char *prefix = iter % 2 ? "model/layer_3/" : NULL;
        assert_int_equal(vkattn_mha_weights_save(PATH, &d, &w, prefix), VKATTN_SUCCESS);
        vkattn_weights_file *f;
        assert_int_equal(vkattn_weights_file_open(PATH, &f), VKATTN_SUCCESS);
        assert_string_equal(vkattn_weights_file_metadata(f, "layer"), "MultiHeadAttention");
        assert_int_equal(vkattn_weights_file_count(f), d.no_bias ? 4 : 8);
        static const char *const keras[8] = {
            "query/kernel", "query/bias", "key/kernel", "key/bias",
            "value/kernel", "value/bias", "attention_output/kernel", "attention_output/bias"};
        for (int i = 0; i < 8; i++)
            if (!(d.no_bias && i % 2))
                assert_saved_count(f, prefix, keras[i], n[i]);
        vkattn_weights_load_desc load = {.prefix = prefix};
        assert_int_equal(vkattn_mha_weights_load(f, &d, &load, &back), VKATTN_SUCCESS);
        mha_arrays(&back, out);
        for (int i = 0; i < 8; i++) {
            if (d.no_bias && i % 2) {
                assert_null(*out[i]);
                continue;
            }
            assert_memory_equal(*out[i], *in[i], n[i] * sizeof(float));
        }
        vkattn_mha_weights_free(&back);
        /* the wrong prefix names the first tensor it misses */
        load.prefix = prefix ? NULL : "other/";
        assert_int_equal(vkattn_mha_weights_load(f, &d, &load, &back), VKATTN_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(vkattn_last_error(), prefix ? "no tensor 'query/kernel'"
                                                           : "no tensor 'other/query/kernel'"));
        assert_null(back.query_kernel);
        vkattn_weights_file_close(f);
        for (int i = 0; i < 8; i++)
            free(*in[i]);
    }
    remove(PATH);
}

static void test_single_head_round_trip(void **state)
{
    (void)state;
    tu_seed();
    vkattn_weights_file *f;
    for (int iter = 0; iter < 10; iter++) {
        uint32_t dq = tu_rand_range(1, 9), dv = tu_rand_range(1, 9), units = tu_rand_range(1, 9);
        /* Attention: the scalars the desc uses; the others stay 1 */
        vkattn_attention_desc ad = {.query_width = dq, .value_width = dv, .key_width = dq,
                                    .use_scale = iter % 2, .score_mode = (vkattn_score_mode)(iter / 2 % 2)};
        vkattn_attention_weights aw = {tu_rand_float(-2, 2), tu_rand_float(-2, 2)}, ab;
        assert_int_equal(vkattn_attention_weights_save(PATH, &ad, &aw, "att."), VKATTN_SUCCESS);
        assert_int_equal(vkattn_weights_file_open(PATH, &f), VKATTN_SUCCESS);
        vkattn_weights_load_desc load = {.prefix = "att."};
        assert_int_equal(vkattn_attention_weights_load(f, &ad, &load, &ab), VKATTN_SUCCESS);
        assert_true(ab.scale == (ad.use_scale ? aw.scale : 1.0f));
        assert_true(ab.concat_score_weight ==
                    (ad.score_mode == VKATTN_SCORE_CONCAT ? aw.concat_score_weight : 1.0f));
        vkattn_weights_file_close(f);

        vkattn_additive_attention_desc dd = {.query_width = dq, .value_width = dv, .key_width = dq};
        vkattn_additive_attention_weights dw = {rnd(dq)}, db;
        assert_int_equal(vkattn_additive_attention_weights_save(PATH, &dd, &dw, NULL), VKATTN_SUCCESS);
        assert_int_equal(vkattn_weights_file_open(PATH, &f), VKATTN_SUCCESS);
        assert_saved_count(f, NULL, "scale", dq);
        assert_int_equal(vkattn_additive_attention_weights_load(f, &dd, NULL, &db), VKATTN_SUCCESS);
        assert_memory_equal(db.scale, dw.scale, dq * sizeof(float));
        vkattn_additive_attention_weights_free(&db);
        assert_null(db.scale);
        vkattn_weights_file_close(f);
        free(dw.scale);

        vkattn_bahdanau_desc bd = {.query_width = dq, .value_width = dv, .units = units};
        vkattn_bahdanau_weights bw = {rnd((size_t)dq * units), rnd((size_t)dv * units), rnd(units),
                                      tu_rand_float(-1, 1)}, bb;
        assert_int_equal(vkattn_bahdanau_weights_save(PATH, &bd, &bw, NULL), VKATTN_SUCCESS);
        assert_int_equal(vkattn_weights_file_open(PATH, &f), VKATTN_SUCCESS);
        assert_saved_count(f, NULL, "query_kernel", (size_t)dq * units);
        assert_saved_count(f, NULL, "key_kernel", (size_t)dv * units);
        assert_saved_count(f, NULL, "score_kernel", units);
        assert_saved_count(f, NULL, "score_bias", 1);
        assert_int_equal(vkattn_bahdanau_weights_load(f, &bd, NULL, &bb), VKATTN_SUCCESS);
        assert_memory_equal(bb.query_kernel, bw.query_kernel, (size_t)dq * units * sizeof(float));
        assert_memory_equal(bb.key_kernel, bw.key_kernel, (size_t)dv * units * sizeof(float));
        assert_memory_equal(bb.score_kernel, bw.score_kernel, units * sizeof(float));
        assert_true(bb.score_bias == bw.score_bias);
        vkattn_bahdanau_weights_free(&bb);
        /* a desc the file does not fit: the tensor and both shapes named */
        bd.units = units + 1;
        assert_int_equal(vkattn_bahdanau_weights_load(f, &bd, NULL, &bb), VKATTN_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(vkattn_last_error(), "tensor 'query_kernel' has shape"));
        assert_non_null(strstr(vkattn_last_error(), "(query_width, units)"));
        vkattn_bahdanau_weights_free(&bb);
        vkattn_weights_file_close(f);
        free(bw.query_kernel), free(bw.key_kernel), free(bw.score_kernel);
    }
    remove(PATH);
}

/* Keras-named MHA in F16 and BF16: every value converted exactly. */
static void test_half_files(void **state)
{
    (void)state;
    tu_seed();
    vkattn_mha_desc d = {.num_heads = 2, .key_dim = 3, .query_width = 4, .value_width = 5};
    const char *names[8] = {"query/kernel", "query/bias", "key/kernel", "key/bias",
                            "value/kernel", "value/bias", "attention_output/kernel",
                            "attention_output/bias"};
    uint64_t shapes[8][3] = {{4, 2, 3}, {2, 3}, {5, 2, 3}, {2, 3}, {5, 2, 3}, {2, 3}, {2, 3, 4}, {4}};
    uint32_t ranks[8] = {3, 2, 3, 2, 3, 2, 3, 1};
    for (int bf = 0; bf < 2; bf++) {
        uint16_t bits[8][64];
        uint8_t *bytes[8];
        st_tensor t[8];
        for (int i = 0; i < 8; i++) {
            size_t n = 1;
            for (uint32_t k = 0; k < ranks[i]; k++)
                n *= shapes[i][k];
            for (size_t e = 0; e < n; e++) /* finite values of either format, any sign */
                bits[i][e] = (uint16_t)(bf ? (tu_rand_u32() & 0x807f) | (tu_rand_range(0, 254) << 7)
                                           : (tu_rand_u32() & 0x83ff) | (tu_rand_range(0, 30) << 10));
            bytes[i] = st_u16_bytes(bits[i], n);
            t[i] = (st_tensor){names[i], bf ? "BF16" : "F16", ranks[i], {0}, bytes[i], 2 * n};
            memcpy(t[i].dims, shapes[i], sizeof shapes[i]);
        }
        size_t size;
        uint8_t *file = st_build(t, 8, NULL, &size);
        vkattn_weights_file *f;
        assert_int_equal(vkattn_weights_file_open_memory(file, size, NULL, &f), VKATTN_SUCCESS);
        vkattn_mha_weights w;
        assert_int_equal(vkattn_mha_weights_load(f, &d, NULL, &w), VKATTN_SUCCESS);
        float **out[8];
        mha_arrays(&w, out);
        for (int i = 0; i < 8; i++) {
            size_t n = t[i].nbytes / 2;
            for (size_t e = 0; e < n; e++) {
                /* exact: the float's top bits are the value's own (F16 by round trip
                 * through its field arithmetic, BF16 by the bits themselves) */
                float v = (*out[i])[e];
                uint32_t u;
                memcpy(&u, &v, 4);
                if (bf) {
                    assert_int_equal(u, (uint32_t)bits[i][e] << 16);
                } else {
                    int exp = (bits[i][e] >> 10) & 0x1f, man = bits[i][e] & 0x3ff;
                    double want = (exp ? ldexp(1024 + man, exp - 25) : ldexp(man, -24)) *
                                  (bits[i][e] & 0x8000 ? -1 : 1);
                    assert_true((double)v == want);
                }
            }
            free(bytes[i]);
        }
        vkattn_mha_weights_free(&w);
        vkattn_weights_file_close(f);
        free(file);
    }
}

/* PyTorch state dict: value by value, Keras kernel[i][h][d] = W[h*hd + d][i]. */
static void check_torch(const vkattn_mha_weights *w, const float *const wqkv[3],
                        const float *in_bias, const float *wo, const float *bo, uint32_t E,
                        uint32_t H, const uint32_t din[3])
{
    uint32_t hd = E / H;
    const float *k[3] = {w->query_kernel, w->key_kernel, w->value_kernel};
    const float *b[3] = {w->query_bias, w->key_bias, w->value_bias};
    for (int p = 0; p < 3; p++)
        for (uint32_t i = 0; i < din[p]; i++)
            for (uint32_t h = 0; h < H; h++)
                for (uint32_t dd = 0; dd < hd; dd++) {
                    assert_true(k[p][(i * H + h) * hd + dd] == wqkv[p][(h * hd + dd) * din[p] + i]);
                    if (in_bias)
                        assert_true(b[p][h * hd + dd] == in_bias[p * E + h * hd + dd]);
                }
    for (uint32_t h = 0; h < H; h++)
        for (uint32_t dd = 0; dd < hd; dd++)
            for (uint32_t o = 0; o < E; o++)
                assert_true(w->output_kernel[(h * hd + dd) * E + o] == wo[o * E + h * hd + dd]);
    if (bo)
        assert_memory_equal(w->output_bias, bo, E * sizeof(float));
}

static void test_torch_mha(void **state)
{
    (void)state;
    tu_seed();
    for (int iter = 0; iter < 12; iter++) {
        uint32_t H = tu_rand_range(1, 4), hd = tu_rand_range(1, 4), E = H * hd;
        bool packed = iter % 2 == 0, bias = iter % 3 != 2;
        uint32_t din[3] = {E, packed ? E : tu_rand_range(1, 7), packed ? E : tu_rand_range(1, 7)};
        float *wqkv[3], *wo = rnd((size_t)E * E), *bin = rnd(3 * (size_t)E), *bo = rnd(E);
        float *packed_w = tu_floats(3 * (size_t)E * E);
        for (int p = 0; p < 3; p++) {
            wqkv[p] = rnd((size_t)E * din[p]);
            if (packed)
                memcpy(packed_w + (size_t)p * E * E, wqkv[p], (size_t)E * E * sizeof(float));
        }
        const char *px = "encoder.layers.0.self_attn.";
        char nm[6][80];
        const char *suffix[6] = {"in_proj_weight", "q_proj_weight", "k_proj_weight",
                                 "v_proj_weight", "out_proj.weight", "in_proj_bias"};
        for (int i = 0; i < 6; i++)
            snprintf(nm[i], sizeof nm[i], "%s%s", px, suffix[i]);
        st_tensor t[11];
        uint8_t *bytes[11] = {0};
        size_t n = 0;
#define ADD(name, r, d0, d1, data, count)                                                         \
    (bytes[n] = st_f32_bytes(data, count),                                                      \
     t[n] = (st_tensor){name, "F32", r, {d0, d1}, bytes[n], 4 * (size_t)(count)}, n++)
        if (packed)
            ADD(nm[0], 2, 3 * E, E, packed_w, 3 * (size_t)E * E);
        else
            for (int p = 0; p < 3; p++)
                ADD(nm[1 + p], 2, E, din[p], wqkv[p], (size_t)E * din[p]);
        ADD(nm[4], 2, E, E, wo, (size_t)E * E);
        if (bias) {
            ADD(nm[5], 1, 3 * E, 0, bin, 3 * (size_t)E);
            ADD("encoder.layers.0.self_attn.out_proj.bias", 1, E, 0, bo, E);
        }
        /* QK-norm scales (key_dim,) and sinks (H,) under Hugging Face's names */
        const bool open = iter % 4 == 1;
        float *qn = rnd(hd), *kn = rnd(hd), *sk = rnd(H);
        if (open) {
            ADD("encoder.layers.0.self_attn.q_norm.weight", 1, hd, 0, qn, hd);
            ADD("encoder.layers.0.self_attn.k_norm.weight", 1, hd, 0, kn, hd);
            ADD("encoder.layers.0.self_attn.sinks", 1, H, 0, sk, H);
        }
        ADD("encoder.layers.0.linear1.weight", 2, 2, 2, bo, 1); /* another layer's: ignored */
        t[n - 1].rank = 1, t[n - 1].dims[0] = 1;
        size_t size;
        uint8_t *file = st_build(t, n, "{\"format\":\"pt\"}", &size);
        vkattn_weights_file *f;
        assert_int_equal(vkattn_weights_file_open_memory(file, size, "sd", &f), VKATTN_SUCCESS);
        vkattn_mha_desc d = {.num_heads = H, .key_dim = hd, .query_width = E, .key_width = din[1],
                             .value_width = din[2], .no_bias = !bias, .use_qk_norm = open,
                             .use_sinks = open};
        vkattn_weights_load_desc load = {VKATTN_WEIGHTS_NAMES_TORCH, px};
        vkattn_mha_weights w;
        assert_int_equal(vkattn_mha_weights_load(f, &d, &load, &w), VKATTN_SUCCESS);
        check_torch(&w, (const float *const *)wqkv, bias ? bin : NULL, wo, bias ? bo : NULL, E, H,
                    din);
        if (open) {
            assert_memory_equal(w.query_norm, qn, hd * sizeof(float));
            assert_memory_equal(w.key_norm, kn, hd * sizeof(float));
            assert_memory_equal(w.sinks, sk, H * sizeof(float));
        } else {
            assert_null(w.query_norm), assert_null(w.sinks);
        }
        vkattn_mha_weights_free(&w);
        if (!open) { /* sinks the desc wants but the file lacks: named, with the shape */
            vkattn_mha_desc sinks = d;
            sinks.use_sinks = true;
            assert_int_equal(vkattn_mha_weights_load(f, &sinks, &load, &w),
                             VKATTN_ERROR_INVALID_ARGUMENT);
            assert_non_null(strstr(vkattn_last_error(), "self_attn.sinks"));
            assert_non_null(strstr(vkattn_last_error(), "(num_attention_heads,)"));
            assert_null(w.query_kernel);
        }

        /* nn.MultiheadAttention has no gate: a gated layer is refused by name */
        vkattn_mha_desc bad = d;
        bad.use_gate = true;
        assert_int_equal(vkattn_mha_weights_load(f, &bad, &load, &w), VKATTN_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(vkattn_last_error(), "use_gate"));
        assert_null(w.query_kernel);
        /* a desc nn.MultiheadAttention cannot have */
        bad = d;
        bad.output_dim = E + 1;
        assert_int_equal(vkattn_mha_weights_load(f, &bad, &load, &w), VKATTN_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(vkattn_last_error(), "nn.MultiheadAttention shape"));
        /* biases the desc wants but the file lacks */
        if (!bias) {
            bad = d;
            bad.no_bias = false;
            assert_int_equal(vkattn_mha_weights_load(f, &bad, &load, &w),
                             VKATTN_ERROR_INVALID_ARGUMENT);
            assert_non_null(strstr(vkattn_last_error(), "no tensor "
                                                        "'encoder.layers.0.self_attn.in_proj_bias'"));
            assert_non_null(strstr(vkattn_last_error(), "(3E,)"));
        }
        /* Keras names in a PyTorch file, and an unknown mapping */
        assert_int_equal(vkattn_mha_weights_load(f, &d, NULL, &w), VKATTN_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(vkattn_last_error(), "no tensor 'query/kernel'"));
        load.names = (vkattn_weights_names)7;
        assert_int_equal(vkattn_mha_weights_load(f, &d, &load, &w), VKATTN_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(vkattn_last_error(), "load->names is 7"));
        vkattn_weights_file_close(f);
        free(file);
        for (size_t i = 0; i < n; i++)
            free(bytes[i]);
        for (int p = 0; p < 3; p++)
            free(wqkv[p]);
        free(wo), free(bin), free(bo), free(packed_w), free(qn), free(kn), free(sk);
    }
}

/* Wrong dtype, wrong shape, torch-only names, add_bias_kv, bad arguments. */
static void test_layer_errors(void **state)
{
    (void)state;
    float one = 1.0f, four[4] = {1, 2, 3, 4};
    uint8_t *b4 = st_f32_bytes(four, 4), *b1 = st_f32_bytes(&one, 1);
    st_tensor t[] = {
        {"scale", "I32", 1, {4}, b4, 16},
        {"concat_score_weight", "F32", 1, {2}, b4, 8},
        {"bias_k", "F32", 1, {1}, b1, 4},
    };
    size_t size;
    uint8_t *file = st_build(t, 3, NULL, &size);
    vkattn_weights_file *f;
    assert_int_equal(vkattn_weights_file_open_memory(file, size, "e.safetensors", &f), VKATTN_SUCCESS);
    vkattn_additive_attention_desc dd = {.query_width = 4, .value_width = 4};
    vkattn_additive_attention_weights dw;
    assert_int_equal(vkattn_additive_attention_weights_load(f, &dd, NULL, &dw),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "e.safetensors: tensor 'scale' has dtype I32"));
    assert_null(dw.scale);
    dd.no_scale = true; /* nothing to read */
    assert_int_equal(vkattn_additive_attention_weights_load(f, &dd, NULL, &dw), VKATTN_SUCCESS);
    assert_null(dw.scale);

    vkattn_attention_desc ad = {.query_width = 4, .value_width = 4, .score_mode = VKATTN_SCORE_CONCAT};
    vkattn_attention_weights aw = {7.0f, 7.0f};
    assert_int_equal(vkattn_attention_weights_load(f, &ad, NULL, &aw), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "tensor 'concat_score_weight' has shape (2,); "
                                                "expected a scalar"));
    /* a failed load leaves the struct as it starts: Attention's scalars 1 */
    assert_true(aw.scale == 1.0f && aw.concat_score_weight == 1.0f);
    vkattn_weights_load_desc torch = {VKATTN_WEIGHTS_NAMES_TORCH, NULL};
    ad.score_mode = VKATTN_SCORE_DOT;
    assert_int_equal(vkattn_attention_weights_load(f, &ad, &torch, &aw), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "MultiHeadAttention only"));
    assert_int_equal(vkattn_attention_weights_load(f, &ad, NULL, &aw), VKATTN_SUCCESS);
    assert_true(aw.scale == 1.0f && aw.concat_score_weight == 1.0f);

    vkattn_mha_desc md = {.num_heads = 1, .key_dim = 4, .query_width = 4, .value_width = 4};
    vkattn_mha_weights mw;
    memset(&mw, 0x5a, sizeof mw); /* poison: a failed load must zero it */
    assert_int_equal(vkattn_mha_weights_load(f, &md, &torch, &mw), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "add_bias_kv"));
    assert_true(mw.query_kernel == NULL && mw.output_bias == NULL && mw.gate_bias == NULL);
    md.num_heads = 0;
    assert_int_equal(vkattn_mha_weights_load(f, &md, NULL, &mw), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "vkattn_mha_weights_load: "));
    assert_non_null(strstr(vkattn_last_error(), "num_heads"));
    assert_int_equal(vkattn_mha_weights_load(NULL, &md, NULL, &mw), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "file is NULL"));
    assert_int_equal(vkattn_mha_weights_load(f, NULL, NULL, &mw), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_mha_weights_load(f, &md, NULL, NULL), VKATTN_ERROR_INVALID_ARGUMENT);
    md.num_heads = 1;
    vkattn_mha_weights none = {0};
    assert_int_equal(vkattn_mha_weights_save(PATH, &md, &none, NULL), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "'query/kernel' is NULL"));
    assert_int_equal(vkattn_mha_weights_save(PATH, &md, NULL, NULL), VKATTN_ERROR_INVALID_ARGUMENT);
    vkattn_mha_weights_free(NULL);
    vkattn_bahdanau_weights_free(NULL);
    vkattn_additive_attention_weights_free(NULL);
    vkattn_weights_file_close(f);
    free(file), free(b4), free(b1);
    remove(PATH);
}

TU_MAIN(NULL, NULL,
    test_mha_round_trip, test_single_head_round_trip, test_half_files, test_torch_mha,
    test_layer_errors)
