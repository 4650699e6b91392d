/* Bounded fuzzing of the safetensors reader: valid files (Keras- and
 * PyTorch-named MHA, F32 / F16 / BF16, metadata) mutated by a fixed-seed
 * generator (byte flips, digits in the header, insertions, deletions,
 * truncation, a rewritten length) and fed to open, list, read and every
 * layer load. Each must return a vkattn_result, never crash or read out of
 * bounds (CI runs it under ASan). Bounds: 20000 mutations or 20 s, whichever
 * comes first; VKATTN_FUZZ_ITERATIONS overrides the count. */
#include "st_writer.h"
#include "test_util.h"

#include <vkattn/weights.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng >> 32);
}
static uint32_t below(uint32_t n) { return n ? next() % n : 0; }

typedef struct seed_file {
    uint8_t *bytes;
    size_t size;
} seed_file;

static seed_file make_seed(int which)
{
    float w[64];
    uint16_t h[64];
    for (int i = 0; i < 64; i++) {
        w[i] = (float)(i % 7) - 3.5f;
        h[i] = (uint16_t)(0x3c00 + i);
    }
    uint8_t *f32 = st_f32_bytes(w, 64), *f16 = st_u16_bytes(h, 64);
    seed_file s;
    if (which == 0) { /* Keras MHA: H 2, key_dim 2, widths 4, F32/F16/BF16 mixed */
        st_tensor t[] = {
            {"query/kernel", "F32", 3, {4, 2, 2}, f32, 64}, {"query/bias", "F16", 2, {2, 2}, f16, 8},
            {"key/kernel", "BF16", 3, {4, 2, 2}, f16, 32},  {"key/bias", "F32", 2, {2, 2}, f32, 16},
            {"value/kernel", "F32", 3, {4, 2, 2}, f32, 64}, {"value/bias", "F32", 2, {2, 2}, f32, 16},
            {"attention_output/kernel", "F16", 3, {2, 2, 4}, f16, 32},
            {"attention_output/bias", "F32", 1, {4}, f32, 16},
            {"scale", "F32", 1, {4}, f32, 16}, {"score_bias", "F32", 0, {0}, f32, 4},
        };
        s.bytes = st_build(t, 10, "{\"format\":\"keras\"}", &s.size);
    } else { /* PyTorch MHA, E 4, H 2 */
        st_tensor t[] = {
            {"m.in_proj_weight", "F32", 2, {12, 4}, f32, 192},
            {"m.in_proj_bias", "F16", 1, {12}, f16, 24},
            {"m.out_proj.weight", "BF16", 2, {4, 4}, f16, 32},
            {"m.out_proj.bias", "F32", 1, {4}, f32, 16},
        };
        uint8_t *big = malloc(192);
        for (int i = 0; i < 192; i++)
            big[i] = f32[i % 64];
        t[0].bytes = big;
        s.bytes = st_build(t, 4, "{\"format\":\"pt\"}", &s.size);
        free(big);
    }
    free(f32), free(f16);
    return s;
}

/* One mutation of a copy of seed; returns its size. */
static uint8_t *mutate(const seed_file *s, size_t *size)
{
    size_t cap = s->size + 64;
    uint8_t *m = malloc(cap);
    memcpy(m, s->bytes, s->size);
    size_t n = s->size;
    uint64_t hlen = 0;
    for (int b = 7; b >= 0; b--)
        hlen = hlen << 8 | s->bytes[b];
    int rounds = 1 + (int)below(4);
    for (int r = 0; r < rounds; r++) {
        switch (below(8)) {
        case 0: /* flip a bit anywhere */
            m[below((uint32_t)n)] ^= (uint8_t)(1u << below(8));
            break;
        case 1: { /* a header digit or character changed */
            size_t at = 8 + below((uint32_t)(hlen < n - 8 ? hlen : n - 8));
            static const char alphabet[] = "0123456789-.e[]{}\",:9999999999";
            m[at] = (uint8_t)alphabet[below(sizeof alphabet - 1)];
            break;
        }
        case 2: /* a run of 9s in the header: huge numbers */
            for (size_t at = 8 + below((uint32_t)hlen), k = 0; k < 12 && at < n; k++, at++)
                if (m[at] >= '0' && m[at] <= '9')
                    m[at] = '9';
            break;
        case 3: /* truncate */
            n = below((uint32_t)n + 1);
            break;
        case 4: { /* delete a span */
            size_t at = below((uint32_t)n), len = below(16);
            if (at + len > n)
                len = n - at;
            memmove(m + at, m + at + len, n - at - len);
            n -= len;
            break;
        }
        case 5: { /* insert bytes */
            size_t at = below((uint32_t)n + 1), len = below(8);
            if (n + len > cap)
                break;
            memmove(m + at + len, m + at, n - at);
            for (size_t k = 0; k < len; k++)
                m[at + k] = (uint8_t)next();
            n += len;
            break;
        }
        case 6: /* a new header length */
            if (n >= 8) {
                uint64_t v = below(3) == 0 ? ((uint64_t)next() << 32 | next()) : hlen + below(9) - 4;
                for (int b = 0; b < 8; b++)
                    m[b] = (uint8_t)(v >> (8 * b));
            }
            break;
        default: /* a random byte in the header */
            if (n > 8)
                m[8 + below((uint32_t)(n - 8))] = (uint8_t)next();
            break;
        }
    }
    *size = n;
    return m;
}

/* Everything a caller can do with an opened file. */
static void exercise(vkattn_weights_file *f)
{
    uint32_t count = vkattn_weights_file_count(f);
    for (uint32_t i = 0; i < count; i++) {
        vkattn_weights_tensor_info info;
        assert_int_equal(vkattn_weights_file_tensor(f, i, &info), VKATTN_SUCCESS);
        if (info.count > 4096)
            continue; /* a valid header may declare more than we care to allocate */
        float *x = malloc((size_t)info.count * sizeof *x + 1);
        vkattn_result r = vkattn_weights_file_read(f, info.name, x, info.count);
        assert_true(r == VKATTN_SUCCESS || r == VKATTN_ERROR_INVALID_ARGUMENT);
        free(x);
    }
    (void)vkattn_weights_file_metadata(f, "format");
    vkattn_mha_desc md = {.num_heads = 2, .key_dim = 2, .query_width = 4, .value_width = 4};
    vkattn_weights_load_desc torch = {VKATTN_WEIGHTS_NAMES_TORCH, "m."};
    vkattn_mha_weights mw;
    if (vkattn_mha_weights_load(f, &md, NULL, &mw) == VKATTN_SUCCESS)
        vkattn_mha_weights_free(&mw);
    if (vkattn_mha_weights_load(f, &md, &torch, &mw) == VKATTN_SUCCESS)
        vkattn_mha_weights_free(&mw);
    vkattn_additive_attention_desc ad = {.query_width = 4, .value_width = 4};
    vkattn_additive_attention_weights aw;
    if (vkattn_additive_attention_weights_load(f, &ad, NULL, &aw) == VKATTN_SUCCESS)
        vkattn_additive_attention_weights_free(&aw);
}

static void test_fuzz(void **state)
{
    (void)state;
    long iterations = 20000;
    const char *env = getenv("VKATTN_FUZZ_ITERATIONS");
    if (env && atol(env) > 0)
        iterations = atol(env);
    seed_file seeds[2] = {make_seed(0), make_seed(1)};
    /* the seeds themselves are valid and load */
    for (int i = 0; i < 2; i++) {
        vkattn_weights_file *f;
        assert_int_equal(vkattn_weights_file_open_memory(seeds[i].bytes, seeds[i].size, NULL, &f),
                         VKATTN_SUCCESS);
        vkattn_mha_desc md = {.num_heads = 2, .key_dim = 2, .query_width = 4, .value_width = 4};
        vkattn_weights_load_desc load = {i ? VKATTN_WEIGHTS_NAMES_TORCH : VKATTN_WEIGHTS_NAMES_KERAS,
                                         i ? "m." : NULL};
        vkattn_mha_weights mw;
        assert_int_equal(vkattn_mha_weights_load(f, &md, &load, &mw), VKATTN_SUCCESS);
        vkattn_mha_weights_free(&mw);
        vkattn_weights_file_close(f);
    }
    clock_t start = clock();
    long done = 0, opened = 0;
    for (; done < iterations; done++) {
        if ((done & 255) == 0 && (double)(clock() - start) / CLOCKS_PER_SEC > 20.0)
            break;
        size_t size;
        uint8_t *m = mutate(&seeds[done & 1], &size);
        vkattn_weights_file *f = NULL;
        vkattn_result r = vkattn_weights_file_open_memory(m, size, "fuzz", &f);
        assert_true(r == VKATTN_SUCCESS || r == VKATTN_ERROR_INVALID_ARGUMENT ||
                    r == VKATTN_ERROR_SIZE_OVERFLOW);
        if (r == VKATTN_SUCCESS) {
            opened++;
            exercise(f);
            vkattn_weights_file_close(f);
        } else {
            assert_null(f);
            assert_true(strlen(vkattn_last_error()) > 0);
        }
        free(m);
    }
    print_message("%ld mutations, %ld still opened, %.1f s\n", done, opened,
                  (double)(clock() - start) / CLOCKS_PER_SEC);
    assert_true(done >= 1000); /* the time bound must not hollow the test out */
    assert_true(opened > 0 && opened < done);
    free(seeds[0].bytes), free(seeds[1].bytes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_fuzz)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
