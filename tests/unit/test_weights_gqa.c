/* GroupedQueryAttention weights from and to safetensors files, no device:
 * random weights saved under Keras names and loaded back bit for bit (with
 * and without a prefix, use_bias and use_gate on and off; Llama names refuse a
 * gated layer, naming use_gate), a Llama-style block (q_proj,
 * k_proj, v_proj, o_proj Linear weights, written by the tests' own writer)
 * converted to Keras layout (checked index by index against the conversion
 * written out here), Qwen2's missing o_proj bias read as 0, and the errors:
 * a missing tensor, a wrong shape (named, with what was expected), a bad desc,
 * PyTorch nn.MultiheadAttention names. The open-model weights: query_norm,
 * key_norm and sinks round-trip under Keras names; Qwen3's q_norm.weight /
 * k_norm.weight and gpt-oss's sinks read beside the Llama names (missing ones
 * named with their shapes; OLMo 2's whole-width q_norm refused). */
#include "st_writer.h"
#include "test_util.h"

#include <vkattn/weights.h>

#include <stdlib.h>
#include <string.h>

static const char *PATH = "test_weights_gqa.safetensors";

static float *rnd(size_t n)
{
    float *x = tu_floats(n);
    tu_fill_uniform(x, n, -2.0f, 2.0f);
    return x;
}

static vkattn_gqa_desc random_gqa(void)
{
    static const uint32_t nq[] = {1, 2, 4, 6};
    vkattn_gqa_desc d = {.head_dim = tu_rand_range(1, 5),
                         .num_query_heads = nq[tu_rand_range(0, 3)],
                         .query_width = tu_rand_range(1, 7),
                         .key_width = tu_rand_range(1, 7),
                         .value_width = tu_rand_range(1, 7)};
    d.num_key_value_heads = tu_rand_range(0, 1) ? d.num_query_heads : 1;
    if (d.num_query_heads % 2 == 0 && tu_rand_range(0, 2) == 0)
        d.num_key_value_heads = d.num_query_heads / 2;
    return d;
}

/* Element counts in the order of vkattn_gqa_weights' fields (gate, then
 * query_norm, key_norm, sinks last). */
#define NW 13
static void counts(const vkattn_gqa_desc *d, size_t n[NW])
{
    const size_t h = d->head_dim, q = d->num_query_heads * h, kv = d->num_key_value_heads * h;
    const size_t c[NW] = {d->query_width * q, q, d->key_width * kv, kv,
                          d->value_width * kv, kv, q * d->query_width, d->query_width,
                          d->query_width * q, q, h, h, d->num_query_heads};
    memcpy(n, c, sizeof c);
}

static void arrays(vkattn_gqa_weights *w, float **a[NW])
{
    float **p[NW] = {&w->query_kernel, &w->query_bias, &w->key_kernel,    &w->key_bias,
                     &w->value_kernel, &w->value_bias, &w->output_kernel, &w->output_bias,
                     &w->gate_kernel,  &w->gate_bias,  &w->query_norm,    &w->key_norm,
                     &w->sinks};
    memcpy(a, p, sizeof p);
}

/* Whether array i (arrays() order) exists in a layer of desc d. */
static bool present(const vkattn_gqa_desc *d, int i)
{
    if (i >= 10)
        return i == 12 ? d->use_sinks : d->use_qk_norm;
    return (i < 8 || d->use_gate) && !(d->no_bias && i % 2);
}

static void test_keras_round_trip(void **state)
{
    (void)state;
    tu_seed();
    for (int iter = 0; iter < 16; iter++) {
        vkattn_gqa_desc d = random_gqa();
        d.no_bias = iter % 3 == 2;
        d.use_gate = iter % 4 < 2;
        d.use_qk_norm = iter % 5 < 2; /* the table's open-model weights round-trip too */
        d.use_sinks = iter % 3 == 1;
        size_t n[NW];
        counts(&d, n);
        vkattn_gqa_weights w = {0}, back;
        float **in[NW], **out[NW];
        arrays(&w, in);
        for (int i = 0; i < NW; i++)
            *in[i] = present(&d, i) ? rnd(n[i]) : NULL;
        const char *prefix = iter % 2 ? "model/gqa_1/" : NULL;
        assert_int_equal(vkattn_gqa_weights_save(PATH, &d, &w, prefix), VKATTN_SUCCESS);
        vkattn_weights_file *f;
        assert_int_equal(vkattn_weights_file_open(PATH, &f), VKATTN_SUCCESS);
        assert_string_equal(vkattn_weights_file_metadata(f, "layer"), "GroupedQueryAttention");
        assert_int_equal(vkattn_weights_file_count(f),
                         (d.no_bias ? 4 : 8) + (d.use_gate ? (d.no_bias ? 1 : 2) : 0) +
                             (d.use_qk_norm ? 2 : 0) + d.use_sinks);
        /* Keras's shapes: key (Dk, Nkv, h) */
        char name[64];
        snprintf(name, sizeof name, "%skey/kernel", prefix ? prefix : "");
        vkattn_weights_tensor_info info;
        assert_int_equal(vkattn_weights_file_find(f, name, &info), VKATTN_SUCCESS);
        assert_int_equal(info.rank, 3);
        assert_int_equal(info.dims[1], d.num_key_value_heads);
        /* every tensor has this test's own element count: save and load
         * share the library's weight table, so only this catches a wrong
         * shape in it */
        static const char *const keras[NW] = {
            "query/kernel", "query/bias", "key/kernel", "key/bias",
            "value/kernel", "value/bias", "attention_output/kernel", "attention_output/bias",
            "gate/kernel",  "gate/bias",  "query_norm", "key_norm", "sinks"};
        for (int i = 0; i < NW; i++) {
            snprintf(name, sizeof name, "%s%s", prefix ? prefix : "", keras[i]);
            if (!present(&d, i)) {
                assert_int_not_equal(vkattn_weights_file_find(f, name, &info), VKATTN_SUCCESS);
                continue;
            }
            assert_int_equal(vkattn_weights_file_find(f, name, &info), VKATTN_SUCCESS);
            assert_int_equal(info.count, n[i]);
        }
        vkattn_weights_load_desc load = {.prefix = prefix};
        assert_int_equal(vkattn_gqa_weights_load(f, &d, &load, &back), VKATTN_SUCCESS);
        arrays(&back, out);
        for (int i = 0; i < NW; i++) {
            if (!present(&d, i))
                assert_null(*out[i]);
            else
                assert_memory_equal(*out[i], *in[i], n[i] * sizeof(float));
        }
        vkattn_gqa_weights_free(&back);
        /* a layer with other kv heads does not take the file: the message
         * names the tensor and the expected shape */
        vkattn_gqa_desc other = d;
        other.num_query_heads *= 2, other.num_key_value_heads *= 2;
        assert_int_equal(vkattn_gqa_weights_load(f, &other, &load, &back),
                         VKATTN_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(vkattn_last_error(), "query/kernel"));
        assert_non_null(strstr(vkattn_last_error(), "num_query_heads"));
        assert_null(back.query_kernel);
        if (d.use_gate) { /* Keras's gate sublayer: gate/kernel (Dq, Nq, h) */
            snprintf(name, sizeof name, "%sgate/kernel", prefix ? prefix : "");
            assert_int_equal(vkattn_weights_file_find(f, name, &info), VKATTN_SUCCESS);
            assert_int_equal(info.dims[1], d.num_query_heads);
            /* Llama names have no gate projection: refused, naming use_gate */
            vkattn_weights_load_desc llama = {.names = VKATTN_WEIGHTS_NAMES_LLAMA,
                                              .prefix = prefix};
            assert_int_equal(vkattn_gqa_weights_load(f, &d, &llama, &back),
                             VKATTN_ERROR_INVALID_ARGUMENT);
            assert_non_null(strstr(vkattn_last_error(), "use_gate"));
            /* a gated layer does not take a file without the gate */
            vkattn_gqa_desc plain = d;
            plain.use_gate = false;
            vkattn_gqa_weights nogate = w;
            nogate.gate_kernel = nogate.gate_bias = NULL;
            assert_int_equal(vkattn_gqa_weights_save(PATH, &plain, &nogate, prefix),
                             VKATTN_SUCCESS);
            vkattn_weights_file *g;
            assert_int_equal(vkattn_weights_file_open(PATH, &g), VKATTN_SUCCESS);
            assert_int_equal(vkattn_gqa_weights_load(g, &d, &load, &back),
                             VKATTN_ERROR_INVALID_ARGUMENT);
            assert_non_null(strstr(vkattn_last_error(), "gate/kernel"));
            vkattn_weights_file_close(g);
        }
        if (d.use_qk_norm || d.use_sinks) { /* a layer with them needs them in the file */
            vkattn_gqa_desc plain = d;
            plain.use_qk_norm = plain.use_sinks = false;
            assert_int_equal(vkattn_gqa_weights_save(PATH, &plain, &w, prefix), VKATTN_SUCCESS);
            vkattn_weights_file *g;
            assert_int_equal(vkattn_weights_file_open(PATH, &g), VKATTN_SUCCESS);
            assert_int_equal(vkattn_gqa_weights_load(g, &d, &load, &back),
                             VKATTN_ERROR_INVALID_ARGUMENT);
            assert_non_null(strstr(vkattn_last_error(), d.use_qk_norm ? "query_norm" : "sinks"));
            assert_null(back.query_kernel);
            vkattn_weights_file_close(g);
        }
        vkattn_weights_file_close(f);
        for (int i = 0; i < NW; i++)
            free(*in[i]);
    }
    remove(PATH);
}

/* q/k/v/o_proj (out, in) -> Keras kernel[i][n][c] = W[n*h + c][i]; o_proj
 * (Dq, Nq*h) -> output_kernel[n][c][e] = W[e][n*h + c]. */
static void check_llama(const vkattn_gqa_weights *w, const float *wp[4], const vkattn_gqa_desc *d)
{
    const size_t h = d->head_dim, q = d->num_query_heads * h, kv = d->num_key_value_heads * h;
    const size_t in[3] = {d->query_width, d->key_width, d->value_width}, out[3] = {q, kv, kv};
    const float *kernels[3] = {w->query_kernel, w->key_kernel, w->value_kernel};
    for (int p = 0; p < 3; p++)
        for (size_t i = 0; i < in[p]; i++)
            for (size_t o = 0; o < out[p]; o++)
                assert_true(kernels[p][i * out[p] + o] == wp[p][o * in[p] + i]);
    for (size_t nc = 0; nc < q; nc++)
        for (size_t e = 0; e < d->query_width; e++)
            assert_true(w->output_kernel[nc * d->query_width + e] == wp[3][e * q + nc]);
}

static void test_llama_names(void **state)
{
    (void)state;
    tu_seed();
    for (int iter = 0; iter < 12; iter++) {
        vkattn_gqa_desc d = random_gqa();
        const int bias = iter % 3; /* 0 none (Llama), 1 q/k/v only (Qwen2), 2 all four */
        d.no_bias = bias == 0;
        const uint64_t h = d.head_dim, q = d.num_query_heads * h, kv = d.num_key_value_heads * h;
        const uint64_t dims[4][2] = {{q, d.query_width}, {kv, d.key_width}, {kv, d.value_width},
                                     {d.query_width, q}};
        const uint64_t bdims[4] = {q, kv, kv, d.query_width};
        static const char *const names[4] = {"q_proj", "k_proj", "v_proj", "o_proj"};
        /* Qwen3's q_norm/k_norm (head_dim,) and gpt-oss's sinks (Nq,) beside them */
        d.use_qk_norm = iter % 2;
        d.use_sinks = iter % 4 >= 2;
        const char *px = "model.layers.3.self_attn.";
        float *wp[4], *bp[4], *norms[3];
        char nm[11][96];
        st_tensor t[11];
        uint8_t *bytes[11] = {0};
        size_t n = 0;
        for (int p = 0; p < 4; p++) {
            wp[p] = rnd(dims[p][0] * dims[p][1]);
            bp[p] = rnd(bdims[p]);
            snprintf(nm[n], sizeof nm[n], "%s%s.weight", px, names[p]);
            bytes[n] = st_f32_bytes(wp[p], dims[p][0] * dims[p][1]);
            t[n] = (st_tensor){nm[n], "F32", 2, {dims[p][0], dims[p][1]}, bytes[n],
                               4 * dims[p][0] * dims[p][1]};
            n++;
            if (bias == 2 || (bias == 1 && p < 3)) {
                snprintf(nm[n], sizeof nm[n], "%s%s.bias", px, names[p]);
                bytes[n] = st_f32_bytes(bp[p], bdims[p]);
                t[n] = (st_tensor){nm[n], "F32", 1, {bdims[p]}, bytes[n], 4 * bdims[p]};
                n++;
            }
        }
        static const char *const extra[3] = {"q_norm.weight", "k_norm.weight", "sinks"};
        const uint64_t edims[3] = {h, h, d.num_query_heads};
        for (int e = 0; e < 3; e++) {
            norms[e] = rnd(edims[e]);
            if (e < 2 ? !d.use_qk_norm : !d.use_sinks)
                continue;
            snprintf(nm[n], sizeof nm[n], "%s%s", px, extra[e]);
            bytes[n] = st_f32_bytes(norms[e], edims[e]);
            t[n] = (st_tensor){nm[n], "F32", 1, {edims[e]}, bytes[n], 4 * edims[e]};
            n++;
        }
        size_t size;
        uint8_t *file = st_build(t, n, "{\"format\":\"pt\"}", &size);
        vkattn_weights_file *f;
        assert_int_equal(vkattn_weights_file_open_memory(file, size, "llama", &f), VKATTN_SUCCESS);
        vkattn_weights_load_desc load = {VKATTN_WEIGHTS_NAMES_LLAMA, px};
        vkattn_gqa_weights w;
        assert_int_equal(vkattn_gqa_weights_load(f, &d, &load, &w), VKATTN_SUCCESS);
        check_llama(&w, (const float **)wp, &d);
        if (bias) {
            assert_memory_equal(w.query_bias, bp[0], q * sizeof(float));
            assert_memory_equal(w.key_bias, bp[1], kv * sizeof(float));
            assert_memory_equal(w.value_bias, bp[2], kv * sizeof(float));
            for (uint64_t e = 0; e < d.query_width; e++)
                assert_true(w.output_bias[e] == (bias == 2 ? bp[3][e] : 0.0f));
        } else {
            assert_null(w.query_bias);
        }
        float *const got[3] = {w.query_norm, w.key_norm, w.sinks};
        for (int e = 0; e < 3; e++) {
            if (e < 2 ? !d.use_qk_norm : !d.use_sinks)
                assert_null(got[e]);
            else
                assert_memory_equal(got[e], norms[e], edims[e] * sizeof(float));
        }
        vkattn_gqa_weights_free(&w);
        /* a desc that asks for what the file lacks: the tensor named, with its shape */
        vkattn_gqa_desc more = d;
        if (!d.use_qk_norm || !d.use_sinks) {
            const bool norm = !d.use_qk_norm;
            more.use_qk_norm = true, more.use_sinks = true;
            assert_int_equal(vkattn_gqa_weights_load(f, &more, &load, &w),
                             VKATTN_ERROR_INVALID_ARGUMENT);
            assert_non_null(strstr(vkattn_last_error(), norm ? "q_norm.weight" : "sinks"));
            assert_non_null(strstr(vkattn_last_error(),
                                   norm ? "(head_dim,)" : "(num_attention_heads,)"));
            assert_null(w.query_kernel);
            assert_null(w.query_norm);
        }
        /* more key/value heads than the file holds: k_proj named with its shape */
        more = d;
        more.num_key_value_heads = more.num_query_heads = d.num_query_heads * 2;
        assert_int_equal(vkattn_gqa_weights_load(f, &more, &load, &w),
                         VKATTN_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(vkattn_last_error(), "q_proj.weight"));
        /* biases wanted but the file has none (Llama) */
        if (bias == 0) {
            more = d, more.no_bias = false;
            assert_int_equal(vkattn_gqa_weights_load(f, &more, &load, &w),
                             VKATTN_ERROR_INVALID_ARGUMENT);
            assert_non_null(strstr(vkattn_last_error(), "q_proj.bias"));
        }
        /* PyTorch nn.MultiheadAttention names are MHA's */
        load.names = VKATTN_WEIGHTS_NAMES_TORCH;
        assert_int_equal(vkattn_gqa_weights_load(f, &d, &load, &w),
                         VKATTN_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(vkattn_last_error(), "load->names"));
        assert_null(w.query_kernel);
        vkattn_weights_file_close(f);
        free(file);
        for (size_t i = 0; i < n; i++)
            free(bytes[i]);
        for (int p = 0; p < 4; p++)
            free(wp[p]), free(bp[p]);
        for (int e = 0; e < 3; e++)
            free(norms[e]);
    }
}

/* OLMo 2 normalizes the whole projection (q_norm.weight (Nq * h,)): not
 * vkattn's per-head QK-norm, refused naming the tensor and both shapes. */
static void test_llama_whole_width_norm(void **state)
{
    (void)state;
    const vkattn_gqa_desc d = {.head_dim = 2, .num_query_heads = 2, .num_key_value_heads = 1,
                               .query_width = 3, .value_width = 3, .no_bias = true,
                               .use_qk_norm = true};
    static const float zeros[16] = {0};
    uint8_t *b4 = st_f32_bytes(zeros, 4), *b2 = st_f32_bytes(zeros, 2);
    const st_tensor t[] = {
        {"q_proj.weight", "F32", 2, {4, 3}, zeros, 48}, {"k_proj.weight", "F32", 2, {2, 3}, zeros, 24},
        {"v_proj.weight", "F32", 2, {2, 3}, zeros, 24}, {"o_proj.weight", "F32", 2, {3, 4}, zeros, 48},
        {"q_norm.weight", "F32", 1, {4}, b4, 16},      {"k_norm.weight", "F32", 1, {2}, b2, 8},
    };
    size_t size;
    uint8_t *file = st_build(t, sizeof t / sizeof t[0], NULL, &size);
    vkattn_weights_file *f;
    assert_int_equal(vkattn_weights_file_open_memory(file, size, "olmo2", &f), VKATTN_SUCCESS);
    vkattn_weights_load_desc load = {VKATTN_WEIGHTS_NAMES_LLAMA, NULL};
    vkattn_gqa_weights w;
    assert_int_equal(vkattn_gqa_weights_load(f, &d, &load, &w), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "q_norm.weight"));
    assert_non_null(strstr(vkattn_last_error(), "shape (4,); expected (2,)"));
    assert_null(w.query_kernel);
    vkattn_weights_file_close(f);
    free(file), free(b4), free(b2);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    const vkattn_gqa_desc good = {.head_dim = 2, .num_query_heads = 4, .num_key_value_heads = 2,
                                  .query_width = 3, .value_width = 3};
    float k[64] = {0};
    vkattn_gqa_weights w = {k, k, k, k, k, k, k, k}, none = {0};
    vkattn_gqa_desc bad = good;
    bad.num_key_value_heads = 3;
    assert_int_equal(vkattn_gqa_weights_save(PATH, &bad, &w, NULL), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "num_key_value_heads"));
    assert_int_equal(vkattn_gqa_weights_save(PATH, &good, NULL, NULL),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_gqa_weights_save(PATH, &good, &none, NULL),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_gqa_weights_save(PATH, &good, &w, NULL), VKATTN_SUCCESS);
    vkattn_weights_file *f;
    assert_int_equal(vkattn_weights_file_open(PATH, &f), VKATTN_SUCCESS);
    vkattn_gqa_weights back;
    assert_int_equal(vkattn_gqa_weights_load(f, &bad, NULL, &back), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "num_key_value_heads"));
    assert_int_equal(vkattn_gqa_weights_load(NULL, &good, NULL, &back),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_gqa_weights_load(f, &good, NULL, NULL), VKATTN_ERROR_INVALID_ARGUMENT);
    vkattn_gqa_weights_free(NULL);
    vkattn_weights_file_close(f);
    remove(PATH);
}

TU_MAIN(NULL, NULL,
    test_keras_round_trip, test_llama_names, test_llama_whole_width_norm, test_bad_arguments)
