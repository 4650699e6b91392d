/* The open-model fields of the MultiHeadAttention and GroupedQueryAttention
 * descs (QK-norm, RoPE, soft-capping, sinks): each bad value is refused by
 * the CPU references with INVALID_ARGUMENT naming the field and nothing
 * written; each good one (zeros meaning the defaults) is accepted as far as
 * the desc goes. */
#include "test_util.h"

#include <math.h>
#include <string.h>

#include "vkattn/gqa_host.h"
#include "vkattn/mha_host.h"

enum { B = 1, T = 3, D = 4, HEADS = 2, HEAD_DIM = 4 };

static float query[B * T * D], output[B * T * D];
static float kernel[D * HEADS * HEAD_DIM], bias[HEADS * HEAD_DIM], out_kernel[HEADS * HEAD_DIM * D];
static float out_bias[D], norm[HEAD_DIM], sinks[HEADS];

static const vkattn_mha_weights weights = {
    kernel, bias, kernel, bias, kernel, bias, out_kernel, out_bias, NULL, NULL,
    norm,   norm, sinks,
};

static vkattn_result mha(const vkattn_mha_desc *d)
{
    const vkattn_layer_call call = {.batch = B, .tq = T, .tv = T};
    const vkattn_layer_host_io io = {.query = query, .value = query, .output = output};
    return vkattn_reference_mha(d, &weights, &call, &io);
}

static vkattn_result gqa(const vkattn_gqa_desc *d)
{
    const vkattn_layer_call call = {.batch = B, .tq = T, .tv = T};
    const vkattn_layer_host_io io = {.query = query, .value = query, .output = output};
    return vkattn_reference_gqa(d, &weights, &call, &io);
}

/* INVALID_ARGUMENT whose message names `field`, and the output untouched. */
static void expect_refused(vkattn_result r, const char *field)
{
    if (r != VKATTN_ERROR_INVALID_ARGUMENT)
        fail_msg("%s: got %s, want INVALID_ARGUMENT", field, vkattn_result_name(r));
    if (!strstr(vkattn_last_error(), field))
        fail_msg("last error \"%s\" does not name %s", vkattn_last_error(), field);
    for (size_t i = 0; i < sizeof output / sizeof output[0]; i++)
        assert_true(isnan(output[i]));
}

/* A good desc: not refused for its arguments (the features may still be
 * UNSUPPORTED while their kernels are missing). */
static void expect_accepted(vkattn_result r, const char *what)
{
    if (r == VKATTN_ERROR_INVALID_ARGUMENT)
        fail_msg("%s: refused: %s", what, vkattn_last_error());
}

/* One bad value of each field, for MultiHeadAttention (key_dim) and
 * GroupedQueryAttention (head_dim): `set` applies it to a good desc. */
typedef struct bad_case {
    const char *field;
    void (*set)(bool *use_qk_norm, float *eps, bool *use_rope, vkattn_rope_params *rope,
                float *softcap);
} bad_case;

#define BAD(name, body)                                                                            \
    static void name(bool *use_qk_norm, float *eps, bool *use_rope, vkattn_rope_params *rope,     \
                     float *softcap)                                                               \
    {                                                                                              \
        (void)use_qk_norm, (void)eps, (void)use_rope, (void)rope, (void)softcap;                  \
        body;                                                                                      \
    }
BAD(eps_negative, (*use_qk_norm = true, *eps = -1e-6f))
BAD(eps_nan, (*use_qk_norm = true, *eps = NAN))
BAD(softcap_negative, *softcap = -30.0f)
BAD(softcap_inf, *softcap = INFINITY)
BAD(wavelength_one, (*use_rope = true, rope->max_wavelength = 1.0f))
BAD(wavelength_nan, (*use_rope = true, rope->max_wavelength = NAN))
BAD(scaling_negative, (*use_rope = true, rope->scaling_factor = -2.0f))
BAD(rotary_odd, (*use_rope = true, rope->rotary_dim = 3))
BAD(rotary_wide, (*use_rope = true, rope->rotary_dim = HEAD_DIM + 2))
BAD(layout_unknown, (*use_rope = true, rope->layout = (vkattn_rope_layout)7))

static const bad_case bad[] = {
    {"desc->qk_norm_epsilon", eps_negative},   {"desc->qk_norm_epsilon", eps_nan},
    {"desc->softcap", softcap_negative},       {"desc->softcap", softcap_inf},
    {"desc->rope.max_wavelength", wavelength_one}, {"desc->rope.max_wavelength", wavelength_nan},
    {"desc->rope.scaling_factor", scaling_negative}, {"desc->rope.rotary_dim", rotary_odd},
    {"desc->rope.rotary_dim", rotary_wide},    {"desc->rope.layout", layout_unknown},
};

static const vkattn_mha_desc mha_ok = {
    .num_heads = HEADS, .key_dim = HEAD_DIM, .query_width = D, .value_width = D};
static const vkattn_gqa_desc gqa_ok = {.head_dim = HEAD_DIM, .num_query_heads = HEADS,
                                       .num_key_value_heads = 1, .query_width = D,
                                       .value_width = D};

static void bad_values_are_refused(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        vkattn_mha_desc m = mha_ok;
        bad[i].set(&m.use_qk_norm, &m.qk_norm_epsilon, &m.use_rope, &m.rope, &m.softcap);
        tu_poison(output, sizeof output / sizeof output[0]);
        expect_refused(mha(&m), bad[i].field);
        vkattn_gqa_desc g = gqa_ok;
        bad[i].set(&g.use_qk_norm, &g.qk_norm_epsilon, &g.use_rope, &g.rope, &g.softcap);
        tu_poison(output, sizeof output / sizeof output[0]);
        expect_refused(gqa(&g), bad[i].field);
    }
    /* the rope's own fields are checked only with use_rope */
    vkattn_mha_desc m = mha_ok;
    m.rope.rotary_dim = 3;
    expect_accepted(mha(&m), "rope fields without use_rope");
}

static void defaults_are_accepted(void **state)
{
    (void)state;
    vkattn_mha_desc m = mha_ok;
    m.use_qk_norm = true, m.use_rope = true, m.softcap = 50.0f, m.use_sinks = true;
    expect_accepted(mha(&m), "every option at its defaults");
    m.rope = (vkattn_rope_params){.max_wavelength = 500000.0f, .scaling_factor = 8.0f,
                                  .rotary_dim = 2, .layout = VKATTN_ROPE_INTERLEAVED};
    m.qk_norm_epsilon = 1e-5f;
    expect_accepted(mha(&m), "explicit rope and epsilon");
    vkattn_gqa_desc g = gqa_ok;
    g.use_rope = true, g.rope.rotary_dim = HEAD_DIM;
    expect_accepted(gqa(&g), "rotary_dim = head_dim");
}

TU_MAIN(NULL, NULL, bad_values_are_refused, defaults_are_accepted)
