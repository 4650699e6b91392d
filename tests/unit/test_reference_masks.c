/* The layer references' attention-mask broadcasting (attention_mask_rank and
 * attention_mask_dims of vkattn_layer_host_io) against the same mask expanded
 * by hand to the full (B, Tq, Tv), or (B, H, Tq, Tv): outputs and scores must
 * agree bit for bit. Also: shapes that broadcast to nothing are rejected. */
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#include "vkattn/layer_params.h"
#include "vkattn/result.h"

enum { B = 2, H = 3, TQ = 3, TV = 5, D = 4 };

/* dims of a form ("QV", "B1V", "1HQ1", ...: B, H, Q = Tq, V = Tv or 1) */
static uint32_t form_dims(const char *form, uint32_t *dims)
{
    uint32_t rank = (uint32_t)strlen(form);
    for (uint32_t a = 0; a < rank; a++)
        dims[a] = form[a] == 'B' ? B : form[a] == 'H' ? H : form[a] == 'Q' ? TQ
                : form[a] == 'V' ? TV : 1;
    return rank;
}

/* full[(b, h, i, j)] = mask[the right-aligned index], written out per axis
 * (independently of the library's stride rule). heads 1 for rank <= 3. */
static float *expand(const float *mask, uint32_t rank, const uint32_t *dims, uint32_t heads)
{
    uint32_t s[4] = {1, 1, 1, 1}; /* (B|1, H|1, Tq|1, Tv|1) */
    if (rank == 4)
        memcpy(s, dims, sizeof s);
    else
        for (uint32_t k = 0; k < rank; k++)
            s[(uint32_t[]){0, 2, 3}[3 - rank + k]] = dims[k];
    float *full = tu_floats((size_t)B * heads * TQ * TV);
    size_t n = 0;
    for (uint32_t b = 0; b < B; b++)
        for (uint32_t h = 0; h < heads; h++)
            for (uint32_t i = 0; i < TQ; i++)
                for (uint32_t j = 0; j < TV; j++) {
                    uint32_t bb = s[0] == 1 ? 0 : b, hh = s[1] == 1 ? 0 : h;
                    uint32_t ii = s[2] == 1 ? 0 : i, jj = s[3] == 1 ? 0 : j;
                    full[n++] = mask[((bb * s[1] + hh) * s[2] + ii) * s[3] + jj];
                }
    return full;
}

static float *random_floats(size_t n)
{
    float *x = tu_floats(n);
    tu_fill_uniform(x, n, -1, 1);
    return x;
}

static void expect_same(const float *a, const float *b, size_t n, const char *what)
{
    if (memcmp(a, b, n * sizeof(float)))
        fail_msg("%s: broadcast and expanded masks give different results", what);
}

static const char *const single_forms[] = {"QV", "1V", "B1V", "Q1", "V", "BQ1", "1QV", "B11", "1"};

static void attention_forms(void **state)
{
    (void)state;
    const vkattn_attention_desc desc = {.query_width = D, .value_width = D, .use_scale = true};
    const vkattn_attention_weights w = {.scale = 0.7f, .concat_score_weight = 1.0f};
    const vkattn_layer_call call = {.batch = B, .tq = TQ, .tv = TV,
                                    .return_attention_scores = true};
    float *q = random_floats(B * TQ * D), *v = random_floats(B * TV * D);
    for (size_t f = 0; f < sizeof single_forms / sizeof single_forms[0]; f++) {
        uint32_t dims[4];
        const uint32_t rank = form_dims(single_forms[f], dims);
        size_t n = 1;
        for (uint32_t a = 0; a < rank; a++)
            n *= dims[a];
        float *mask = tu_floats(n);
        tu_fill_mask(mask, n, 0.6f);
        float *full = expand(mask, rank, dims, 1);
        float out[2][B * TQ * D], sc[2][B * TQ * TV];
        vkattn_layer_host_io io = {.query = q, .value = v, .attention_mask = mask,
                                   .attention_mask_rank = rank, .output = out[0],
                                   .scores = sc[0]};
        memcpy(io.attention_mask_dims, dims, sizeof dims);
        assert_int_equal(vkattn_reference_attention(&desc, &w, &call, &io), VKATTN_SUCCESS);
        vkattn_layer_host_io io_full = {.query = q, .value = v, .attention_mask = full,
                                        .output = out[1], .scores = sc[1]};
        assert_int_equal(vkattn_reference_attention(&desc, &w, &call, &io_full), VKATTN_SUCCESS);
        expect_same(out[0], out[1], B * TQ * D, single_forms[f]);
        expect_same(sc[0], sc[1], B * TQ * TV, single_forms[f]);
        free(mask), free(full);
    }
    free(q), free(v);
}

static void mha_forms(void **state)
{
    (void)state;
    static const char *const forms[] = {"QV", "B1V", "Q1", "BQV", "B1QV", "1HQV", "BH1V",
                                        "1HQ1", "BHQV"};
    const vkattn_mha_desc desc = {.num_heads = H, .key_dim = 2, .query_width = D,
                                  .value_width = D};
    const size_t nk = (size_t)D * H * 2, nb = (size_t)H * 2;
    float *k = random_floats(nk), *bias = random_floats(nb > D ? nb : D);
    const vkattn_mha_weights w = {k, bias, k, bias, k, bias, k, bias};
    const vkattn_layer_call call = {.batch = B, .tq = TQ, .tv = TV,
                                    .return_attention_scores = true};
    float *q = random_floats(B * TQ * D), *v = random_floats(B * TV * D);
    float qm[B * TQ];
    tu_fill_mask(qm, B * TQ, 0.7f);
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
        uint32_t dims[4];
        const uint32_t rank = form_dims(forms[f], dims);
        size_t n = 1;
        for (uint32_t a = 0; a < rank; a++)
            n *= dims[a];
        float *mask = tu_floats(n);
        tu_fill_mask(mask, n, 0.6f);
        const uint32_t heads = rank == 4 ? H : 1;
        float *full = expand(mask, rank, dims, heads);
        float out[2][B * TQ * D], sc[2][B * H * TQ * TV];
        vkattn_layer_host_io io = {.query = q, .value = v, .query_mask = f % 2 ? qm : NULL,
                                   .attention_mask = mask, .attention_mask_rank = rank,
                                   .output = out[0], .scores = sc[0]};
        memcpy(io.attention_mask_dims, dims, sizeof dims);
        assert_int_equal(vkattn_reference_mha(&desc, &w, &call, &io), VKATTN_SUCCESS);
        vkattn_layer_host_io io_full = {.query = q, .value = v, .query_mask = io.query_mask,
                                        .attention_mask = full,
                                        .attention_mask_per_head = heads > 1,
                                        .output = out[1], .scores = sc[1]};
        assert_int_equal(vkattn_reference_mha(&desc, &w, &call, &io_full), VKATTN_SUCCESS);
        expect_same(out[0], out[1], B * TQ * D, forms[f]);
        expect_same(sc[0], sc[1], (size_t)B * H * TQ * TV, forms[f]);
        free(mask), free(full);
    }
    free(q), free(v), free(k), free(bias);
}

static void bad_shapes(void **state)
{
    (void)state;
    const vkattn_attention_desc desc = {.query_width = D, .value_width = D};
    const vkattn_attention_weights w = {.scale = 1.0f, .concat_score_weight = 1.0f};
    const vkattn_layer_call call = {.batch = B, .tq = TQ, .tv = TV};
    float q[B * TQ * D] = {0}, v[B * TV * D] = {0}, m[64] = {0}, out[B * TQ * D];
    static const struct {
        uint32_t rank, dims[4];
    } bad[] = {{2, {TQ + 1, TV}}, {3, {B, 2, TV}}, {1, {TV + 1}}, {4, {B, 2, TQ, TV}}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        vkattn_layer_host_io io = {.query = q, .value = v, .attention_mask = m,
                                   .attention_mask_rank = bad[i].rank, .output = out};
        memcpy(io.attention_mask_dims, bad[i].dims, sizeof bad[i].dims);
        assert_int_equal(vkattn_reference_attention(&desc, &w, &call, &io),
                         VKATTN_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(vkattn_last_error(), "io->attention_mask has shape ("));
        assert_non_null(strstr(vkattn_last_error(), "(B, Tq, Tv) = (2, 3, 5)"));
    }
    vkattn_layer_host_io io = {.query = q, .value = v, .attention_mask_rank = 2, .output = out};
    assert_int_equal(vkattn_reference_attention(&desc, &w, &call, &io),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "io->attention_mask is NULL"));
}

TU_MAIN(NULL, NULL, attention_forms, mha_forms, bad_shapes)
