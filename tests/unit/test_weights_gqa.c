/* GroupedQueryAttention weights from and to safetensors files, no device:
 * random weights saved under Keras names and loaded back bit for bit (with
 * and without a prefix, use_bias and use_gate on and off; Llama names refuse a
 * gated layer, naming use_gate), a Llama-style block (q_proj,
 * k_proj, v_proj, o_proj Linear weights, written by the tests' own writer)
 * converted to Keras layout (checked index by index against the conversion
 * written out here), Qwen2's missing o_proj bias read as 0, and the errors:
 * a missing tensor, a wrong shape (named, with what was expected), a bad desc,
 * PyTorch nn.MultiheadAttention names. */
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

/* Element counts in the order of vkattn_gqa_weights' fields (gate last). */
static void counts(const vkattn_gqa_desc *d, size_t n[10])
{
    const size_t h = d->head_dim, q = d->num_query_heads * h, kv = d->num_key_value_heads * h;
    const size_t c[10] = {d->query_width * q, q, d->key_width * kv, kv,
                          d->value_width * kv, kv, q * d->query_width, d->query_width,
                          d->query_width * q, q};
    memcpy(n, c, sizeof c);
}

static void arrays(vkattn_gqa_weights *w, float **a[10])
{
    float **p[10] = {&w->query_kernel, &w->query_bias, &w->key_kernel,    &w->key_bias,
                     &w->value_kernel, &w->value_bias, &w->output_kernel, &w->output_bias,
                     &w->gate_kernel,  &w->gate_bias};
    memcpy(a, p, sizeof p);
}

/* Whether array i (arrays() order) exists in a layer of desc d. */
static bool present(const vkattn_gqa_desc *d, int i)
{
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
        size_t n[10];
        counts(&d, n);
        vkattn_gqa_weights w = {0}, back;
        float **in[10], **out[10];
        arrays(&w, in);
        for (int i = 0; i < 10; i++)
            *in[i] = present(&d, i) ? rnd(n[i]) : NULL;
        const char *prefix = iter % 2 ? "model/gqa_1/" : NULL;
        assert_int_equal(vkattn_gqa_weights_save(PATH, &d, &w, prefix), VKATTN_SUCCESS);
        vkattn_weights_file *f;
        assert_int_equal(vkattn_weights_file_open(PATH, &f), VKATTN_SUCCESS);
        assert_string_equal(vkattn_weights_file_metadata(f, "layer"), "GroupedQueryAttention");
        assert_int_equal(vkattn_weights_file_count(f),
                         (d.no_bias ? 4 : 8) + (d.use_gate ? (d.no_bias ? 1 : 2) : 0));
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
        static const char *const keras[10] = {
            "query/kernel", "query/bias", "key/kernel", "key/bias",
            "value/kernel", "value/bias", "attention_output/kernel", "attention_output/bias",
            "gate/kernel",  "gate/bias"};
        for (int i = 0; i < 10; i++) {
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
        for (int i = 0; i < 10; i++) {
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
        vkattn_weights_file_close(f);
        for (int i = 0; i < 10; i++)
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
        const char *px = "model.layers.3.self_attn.";
        float *wp[4], *bp[4];
        char nm[8][96];
        st_tensor t[8];
        uint8_t *bytes[8] = {0};
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
        vkattn_gqa_weights_free(&w);
        /* more key/value heads than the file holds: k_proj named with its shape */
        vkattn_gqa_desc more = d;
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
    }
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keras_round_trip),
        cmocka_unit_test(test_llama_names),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
