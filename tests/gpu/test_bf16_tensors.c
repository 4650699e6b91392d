/* bf16 tensors (vkattn/dtype.h): create, upload, download, fill and the raw
 * forms round-trip bf16 exactly as f16's do (RNE from f32, exact to f32); the
 * device's own conversion matches the host's bit for bit; each public op
 * takes a bf16 operand where it opens bf16 (softmax, dropout, heads, additive
 * and their backwards, the head ops' norm weight, SDPA's q, k, v and out,
 * its backward's data tensors (the lse stays f32), decode's q and out,
 * KV-cache appends, the optimizer step's param and grad and the MSE loss's
 * pred, target and grad here; the matmul
 * and its backward in test_matmul.c and
 * test_matmul_backward.c) and refuses it elsewhere, each operand in turn of a
 * call that succeeds with f32 ones, naming it; the layers: an f32 one refuses
 * bf16 io, a bf16 one takes it (each operand in turn), and a bf16 MHA's and
 * GQA's backward takes bf16 io and gradients (finite; their accuracy:
 * test_mha_backward.c; the single-head layers': test_layer_dtypes.c); an
 * app's bf16 keys under an f32 cache are refused (a bf16 cache:
 * test_decode_dtypes.c). */
#include "harness.h"
#include "op_table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vkattn/vkattn.h"

enum { N = 256, MAXOPS = 9 }; /* elements per operand: more than any call below needs */

static const vkattn_dtype BF16 = VKATTN_DTYPE_BF16;

static float bf16_value(uint16_t h)
{
    const uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

static void test_round_trips(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    /* ties both ways, just over a tie, the overflow tie, -0, a subnormal, NaN */
    const float in[7] = {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, 1.0f + 0x1p-8f + 0x1p-20f,
                         0x1.ff8p127f,   -0.0f,              0x1p-133f,
                         NAN};
    const uint16_t want[7] = {0x3f80, 0x3f82, 0x3f81, 0x7f80, 0x8000, 0x0001, 0x7fc0};
    const vkattn_tensor_desc d = {.rank = 2, .dims = {7, 1}, .dtype = BF16}; /* odd: padding */
    vkattn_tensor *t = NULL;
    TH_OK(ctx, vkattn_tensor_create(ctx, &d, &t));
    const vkattn_tensor_info info = vkattn_tensor_get_info(t);
    assert_int_equal(info.desc.dtype, BF16);
    assert_int_equal(info.count, 7);
    assert_int_equal(info.buffer.size, 16); /* 14 bytes to whole words */
    TH_OK(ctx, vkattn_tensor_upload(t, in, 0, 7));
    uint16_t raw[7] = {0};
    float back[7];
    TH_OK(ctx, vkattn_tensor_download_raw(t, raw, 0, 7));
    TH_OK(ctx, vkattn_tensor_download(t, back, 0, 7));
    for (int i = 0; i < 7; i++) {
        if ((raw[i] & 0x7fc0) == 0x7fc0 && (want[i] & 0x7fc0) == 0x7fc0)
            assert_true(isnan(back[i])); /* any quiet NaN */
        else
            assert_int_equal(raw[i], want[i]);
        if (!isnan(back[i]))
            assert_memory_equal(&back[i], &(float){bf16_value(want[i])}, sizeof(float));
    }
    /* raw: bit patterns in, the same out, from an offset */
    const uint16_t pat[3] = {0x4049, 0xc2f7, 0x0080};
    TH_OK(ctx, vkattn_tensor_upload_raw(t, pat, 4, 3));
    TH_OK(ctx, vkattn_tensor_download_raw(t, raw, 0, 7));
    assert_memory_equal(raw + 4, pat, sizeof pat);
    assert_int_equal(raw[3], 0x7f80);
    TH_OK(ctx, vkattn_tensor_download(t, back, 5, 1));
    assert_true(back[0] == bf16_value(0xc2f7));
    /* fill rounds once as upload does; every element, odd count */
    TH_OK(ctx, vkattn_tensor_fill(t, 1.0f + 3 * 0x1p-8f));
    TH_OK(ctx, vkattn_tensor_download_raw(t, raw, 0, 7));
    for (int i = 0; i < 7; i++)
        assert_int_equal(raw[i], 0x3f82);
    vkattn_tensor_destroy(t);
    th_assert_validation_clean();
}

/* The device's f32 <-> bf16 conversion (shaders/half_convert.comp through
 * elem_type.glsl), reached through the staged heads split: with one head the
 * split is the identity, so an f32 in and a bf16 out is f32 scratch rounded
 * by the converter, and the reverse widens. f32 -> bf16 must equal the host's
 * conversion bit for bit (vka_f32_to_bf16, core/bf16.c, as an upload into a
 * bf16 tensor runs it on the host; tested in tests/unit/test_bf16.c): ties
 * of both parities and just beside them, the largest finite values (the tie
 * above rounds to inf), infinities, zeros, NaNs with payloads (quiet and
 * signalling: quieted, sign and top payload kept), bf16 subnormals and f32
 * subnormals below them, and random patterns; an odd count, so the last word
 * keeps its other half. bf16 -> f32 is exact: all 65536 patterns. */
static vkattn_tensor *bf16_copy(vkattn_context *ctx, vkattn_tensor *in, uint32_t n,
                                vkattn_dtype out_type)
{
    const vkattn_tensor_desc d = {.rank = 1, .dims = {n}, .dtype = out_type};
    vkattn_tensor *out = NULL;
    TH_OK(ctx, vkattn_tensor_create(ctx, &d, &out));
    const vkattn_heads_params p = {.batch = 1, .seq = n, .heads = 1, .head_dim = 1};
    const vkattn_heads_io io = {.in = in, .out = out};
    TH_OK(ctx, vkattn_heads_split_record(ctx, VKATTN_RUN_NOW, &p, &io));
    return out;
}

static void test_device_conversion(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const uint32_t special[] = {
        0x3f808000, 0x3f818000, 0xbf808000, 0xbf818000, /* ties: to even (down, up) */
        0x3f807fff, 0x3f808001, 0x3f817fff, 0x3f818001, /* just below and above them */
        0x7f7fffff, 0x7f7f7fff, 0x7f7f8000, 0xff7fffff, 0x7f7e8000, /* largest finite */
        0x7f800000, 0xff800000, 0x00000000, 0x80000000, /* inf, zeros */
        0x7fc00000, 0xffc00001, 0x7fffffff, 0x7f800001, 0x7fa00000, 0xff812345, /* NaNs */
        0x00010000, 0x00008000, 0x00018000, 0x0000ffff, 0x007fffff, 0x80000001, /* subnormal */
        0x00800000, 0x807f8000, 0x00000001, 0x3f800000, 0x4049a000};
    enum { NS = sizeof special / sizeof special[0], NR = 4095 - NS };
    const uint32_t n = NS + NR;
    uint32_t *bits = malloc(n * sizeof *bits);
    uint16_t *got = malloc(n * sizeof *got), *want = malloc(n * sizeof *want);
    assert_true(bits && got && want);
    memcpy(bits, special, sizeof special);
    for (uint32_t i = NS; i < n; i++)
        bits[i] = tu_rand_u32();
    const vkattn_tensor_desc fd = {.rank = 1, .dims = {n}};
    vkattn_tensor *f = NULL;
    TH_OK(ctx, vkattn_tensor_create(ctx, &fd, &f));
    TH_OK(ctx, vkattn_tensor_upload(f, (const float *)bits, 0, n));
    vkattn_tensor *h = bf16_copy(ctx, f, n, BF16);
    TH_OK(ctx, vkattn_tensor_download_raw(h, got, 0, n));
    TH_OK(ctx, vkattn_tensor_upload(h, (const float *)bits, 0, n)); /* the host's rounding */
    TH_OK(ctx, vkattn_tensor_download_raw(h, want, 0, n));
    for (uint32_t i = 0; i < n; i++)
        if (got[i] != want[i])
            fail_msg("f32 0x%08x -> bf16: device 0x%04x, host 0x%04x", bits[i], got[i],
                     want[i]);
    /* every bf16 pattern back to f32, exactly */
    enum { NB = 65536 };
    uint16_t *all = malloc(NB * sizeof *all);
    uint32_t *back = malloc(NB * sizeof *back);
    assert_true(all && back);
    for (uint32_t i = 0; i < NB; i++)
        all[i] = (uint16_t)i;
    const vkattn_tensor_desc bd = {.rank = 1, .dims = {NB}, .dtype = BF16};
    vkattn_tensor *b = NULL;
    TH_OK(ctx, vkattn_tensor_create(ctx, &bd, &b));
    TH_OK(ctx, vkattn_tensor_upload_raw(b, all, 0, NB));
    vkattn_tensor *w = bf16_copy(ctx, b, NB, VKATTN_DTYPE_F32);
    TH_OK(ctx, vkattn_tensor_download(w, (float *)back, 0, NB));
    for (uint32_t i = 0; i < NB; i++)
        if (back[i] != i << 16)
            fail_msg("bf16 0x%04x -> f32: device 0x%08x", i, back[i]);
    vkattn_tensor_destroy(f);
    vkattn_tensor_destroy(h);
    vkattn_tensor_destroy(b);
    vkattn_tensor_destroy(w);
    free(bits);
    free(got);
    free(want);
    free(all);
    free(back);
    th_assert_validation_clean();
}

/* One op call on operands t[0..] (f32, or bf16 in the slot under test). */
typedef vkattn_result (*op_call)(vkattn_context *ctx, vkattn_tensor *const *t);
typedef struct op_row {
    const char *op;
    op_call call;
    const char *names[MAXOPS]; /* the operands' names in messages; NULL ends */
    uint32_t n, w; /* elements per operand and the last dim (0: N and 4) */
    unsigned takes; /* bit i: operand i may be bf16 (the call succeeds) */
} op_row;

#define MASKS {.has_value_mask = true, .has_mask = true, .has_bias = true}
#define RUN VKATTN_RUN_NOW

static const vkattn_softmax_params softmax_p = {.batch = 1, .heads = 1, .tq = 2, .tv = 2,
                                                .mask = MASKS};
static vkattn_result softmax(vkattn_context *ctx, vkattn_tensor *const *t)
{
    const vkattn_softmax_io io = {.scores = t[0], .bias = t[1], .value_mask = t[2],
                                  .mask = t[3], .out = t[4]};
    return vkattn_softmax_record(ctx, RUN, &softmax_p, &io);
}
static vkattn_result softmax_backward(vkattn_context *ctx, vkattn_tensor *const *t)
{
    const vkattn_softmax_backward_io io = {.weights = t[0], .grad_out = t[1], .bias = t[2],
                                           .value_mask = t[3], .mask = t[4],
                                           .grad_scores = t[5]};
    return vkattn_softmax_backward_record(ctx, RUN, &softmax_p, &io);
}
static const vkattn_dropout_op_params dropout_p = {
    .batch = 1, .heads = 1, .tq = 2, .tv = 2, .dropout = {.rate = 0.5f, .training = true}};
static vkattn_result dropout(vkattn_context *ctx, vkattn_tensor *const *t)
{
    const vkattn_dropout_io io = {.in = t[0], .out = t[1]};
    return vkattn_dropout_record(ctx, RUN, &dropout_p, &io);
}
static vkattn_result dropout_backward(vkattn_context *ctx, vkattn_tensor *const *t)
{
    const vkattn_dropout_backward_io io = {.grad_out = t[0], .grad_in = t[1]};
    return vkattn_dropout_backward_record(ctx, RUN, &dropout_p, &io);
}
static const vkattn_heads_params heads_p = {.batch = 1, .seq = 2, .heads = 2, .head_dim = 2};
static vkattn_result heads_split(vkattn_context *ctx, vkattn_tensor *const *t)
{
    const vkattn_heads_io io = {.in = t[0], .out = t[1]};
    return vkattn_heads_split_record(ctx, RUN, &heads_p, &io);
}
static vkattn_result heads_merge(vkattn_context *ctx, vkattn_tensor *const *t)
{
    const vkattn_heads_io io = {.in = t[0], .out = t[1]};
    return vkattn_heads_merge_record(ctx, RUN, &heads_p, &io);
}
static vkattn_result heads_split_backward(vkattn_context *ctx, vkattn_tensor *const *t)
{
    const vkattn_heads_backward_io io = {.grad_out = t[0], .grad_in = t[1]};
    return vkattn_heads_split_backward_record(ctx, RUN, &heads_p, &io);
}
static vkattn_result heads_merge_backward(vkattn_context *ctx, vkattn_tensor *const *t)
{
    const vkattn_heads_backward_io io = {.grad_out = t[0], .grad_in = t[1]};
    return vkattn_heads_merge_backward_record(ctx, RUN, &heads_p, &io);
}
static const vkattn_additive_params additive_p = {.batch = 1, .tq = 2, .tv = 2, .dim = 2,
                                                  .has_scale_vector = true};
static vkattn_result additive(vkattn_context *ctx, vkattn_tensor *const *t)
{
    const vkattn_additive_io io = {.q = t[0], .k = t[1], .scale = t[2], .scores = t[3]};
    return vkattn_additive_record(ctx, RUN, &additive_p, &io);
}
static vkattn_result additive_backward(vkattn_context *ctx, vkattn_tensor *const *t)
{
    const vkattn_additive_backward_io io = {.q = t[0], .k = t[1], .scale = t[2],
                                            .grad_scores = t[3], .grad_q = t[4], .grad_k = t[5],
                                            .grad_scale = t[6]};
    return vkattn_additive_backward_record(ctx, RUN, &additive_p, &io);
}
static const vkattn_sdpa_params sdpa_p = {.batch = 1, .heads = 1, .tq = 2, .tv = 2, .dk = 2,
                                          .dv = 2, .mask = MASKS};
static vkattn_result sdpa(vkattn_context *ctx, vkattn_tensor *const *t)
{
    const vkattn_sdpa_io io = {.q = t[0], .k = t[1], .v = t[2], .bias = t[3],
                               .value_mask = t[4], .mask = t[5], .out = t[6]};
    return vkattn_sdpa_record(ctx, RUN, &sdpa_p, &io);
}
static vkattn_result sdpa_backward(vkattn_context *ctx, vkattn_tensor *const *t)
{
    static const vkattn_sdpa_params p = {.batch = 1, .heads = 1, .tq = 2, .tv = 2, .dk = 2,
                                         .dv = 2};
    const vkattn_sdpa_backward_io io = {.q = t[0], .k = t[1], .v = t[2], .out = t[3],
                                        .grad_out = t[4], .grad_q = t[5], .grad_k = t[6],
                                        .grad_v = t[7], .lse = t[8]};
    return vkattn_sdpa_backward_record(ctx, RUN, &p, &io);
}
static vkattn_result head_op(vkattn_context *ctx, vkattn_tensor *const *t)
{
    const vkattn_head_op_params p = {.op = VKATTN_HEAD_RMS_NORM, .batch = 1, .heads = 1,
                                     .seq = 2, .dim = 2, .epsilon = 1e-6f};
    const vkattn_head_op_io io = {.x = t[0], .out = t[1], .weight = t[2]};
    return vkattn_head_op_record(ctx, RUN, &p, &io);
}
static vkattn_result mse(vkattn_context *ctx, vkattn_tensor *const *t)
{
    const vkattn_mse_params p = {.count = 4};
    const vkattn_mse_io io = {.pred = t[0], .target = t[1], .loss = t[2], .grad = t[3]};
    return vkattn_mse_record(ctx, RUN, &p, &io);
}
static vkattn_result optim(vkattn_context *ctx, vkattn_tensor *const *t)
{
    const vkattn_optim_params p = {.algorithm = VKATTN_OPTIM_ADAM, .lr = 0.1f};
    const vkattn_optim_io io = {.count = 4, .param = t[0], .grad = t[1], .state = t[2],
                                .step = t[3]};
    return vkattn_optim_step_record(ctx, RUN, &p, &io);
}
/* the decode's q, value_mask and out, on an f32 cache */
static vkattn_result decode(vkattn_context *ctx, vkattn_tensor *const *t)
{
    const vkattn_kv_cache_desc cd = {.batch = 1, .kv_heads = 1, .capacity = 2, .key_dim = 2};
    vkattn_kv_cache *cache = NULL;
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    const vkattn_sdpa_decode_params p = {.batch = 1, .heads = 1, .tq = 1, .capacity = 2,
                                         .dk = 2, .has_value_mask = true};
    const vkattn_sdpa_decode_io io = {.q = t[0], .cache = cache, .value_mask = t[1],
                                      .out = t[2]};
    const vkattn_result r = vkattn_sdpa_decode_record(ctx, RUN, &p, &io);
    vkattn_kv_cache_destroy(cache);
    return r;
}
/* the layers' operands (B 1, Tq = Tv = 2, widths 4), io checked by
 * layers/layer_util.c (Attention, and the other single-head layers) and
 * layers/mha.c (MHA and GQA): of an f32 layer, and of a bf16 one (its
 * accuracy: test_layer_dtypes.c, test_mha.c) */
static const vkattn_layer_call layer_call = {.batch = 1, .tq = 2, .tv = 2};
static vkattn_result attention_of(vkattn_context *ctx, vkattn_tensor *const *t, vkattn_dtype dt)
{
    const vkattn_attention_desc d = {.query_width = 4, .value_width = 4, .dtype = dt};
    vkattn_attention *l = NULL;
    TH_OK(ctx, vkattn_attention_create(ctx, &d, &l));
    const vkattn_layer_io io = {.query = t[0], .value = t[1], .key = t[2], .output = t[3]};
    const vkattn_result r = vkattn_attention_record(l, RUN, &layer_call, &io);
    vkattn_attention_destroy(l);
    return r;
}
static vkattn_result mha_of(vkattn_context *ctx, vkattn_tensor *const *t, vkattn_dtype dt)
{
    const vkattn_mha_desc d = {.num_heads = 2, .key_dim = 2, .query_width = 4,
                               .value_width = 4, .dtype = dt};
    vkattn_mha *l = NULL;
    TH_OK(ctx, vkattn_mha_create(ctx, &d, &l));
    const vkattn_layer_io io = {.query = t[0], .value = t[1], .key = t[2], .output = t[3]};
    const vkattn_result r = vkattn_mha_record(l, RUN, &layer_call, &io);
    vkattn_mha_destroy(l);
    return r;
}
static vkattn_result attention(vkattn_context *ctx, vkattn_tensor *const *t)
{
    return attention_of(ctx, t, VKATTN_DTYPE_F32);
}
static vkattn_result attention_bf16_layer(vkattn_context *ctx, vkattn_tensor *const *t)
{
    return attention_of(ctx, t, BF16);
}
static vkattn_result mha(vkattn_context *ctx, vkattn_tensor *const *t)
{
    return mha_of(ctx, t, VKATTN_DTYPE_F32);
}
static vkattn_result mha_bf16_layer(vkattn_context *ctx, vkattn_tensor *const *t)
{
    return mha_of(ctx, t, BF16);
}
/* an f32 cache's append of k, v (B, Hkv, Tnew, d) = (1, 1, 2, 2) */
static vkattn_result kv_append(vkattn_context *ctx, vkattn_tensor *const *t)
{
    const vkattn_kv_cache_desc cd = {.batch = 1, .kv_heads = 1, .capacity = 4, .key_dim = 2};
    vkattn_kv_cache *cache = NULL;
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    const vkattn_kv_append_io io = {.k = t[0], .v = t[1]};
    const vkattn_result r = vkattn_kv_cache_append_record(cache, RUN, &io);
    vkattn_kv_cache_destroy(cache);
    return r;
}

static const op_row rows[] = {
    {"softmax", softmax, {"io->scores", "io->bias", "io->value_mask", "io->mask", "io->out"},
     .takes = 0x13}, /* the masks stay f32 */
    {"softmax backward", softmax_backward,
     {"io->weights", "io->grad_out", "io->bias", "io->value_mask", "io->mask",
      "io->grad_scores"},
     .takes = 0x23}, /* the bias and masks stay f32 */
    {"dropout", dropout, {"io->in", "io->out"}, .takes = 0x3},
    {"dropout backward", dropout_backward, {"io->grad_out", "io->grad_in"}, .takes = 0x3},
    {"heads split", heads_split, {"io->in", "io->out"}, .takes = 0x3},
    {"heads merge", heads_merge, {"io->in", "io->out"}, .takes = 0x3},
    {"heads split backward", heads_split_backward, {"io->grad_out", "io->grad_in"},
     .takes = 0x3},
    {"heads merge backward", heads_merge_backward, {"io->grad_out", "io->grad_in"},
     .takes = 0x3},
    {"additive", additive, {"io->q", "io->k", "io->scale", "io->scores"}, .takes = 0xf},
    {"additive backward", additive_backward,
     {"io->q", "io->k", "io->scale", "io->grad_scores", "io->grad_q", "io->grad_k",
      "io->grad_scale"},
     .takes = 0x7f},
    {"sdpa", sdpa,
     {"io->q", "io->k", "io->v", "io->bias", "io->value_mask", "io->mask", "io->out"},
     .takes = 0x47}, /* the masks stay f32 */
    /* with io->lse: the fused backward, which reads io->out (the chained one
     * ignores io->out, whatever it is); the lse stays f32 */
    {"sdpa backward", sdpa_backward,
     {"io->q", "io->k", "io->v", "io->out", "io->grad_out", "io->grad_q", "io->grad_k",
      "io->grad_v", "io->lse"},
     .takes = 0xff},
    {"head op", head_op, {"io->x", "io->out", "io->weight"},
     .takes = 0x4}, /* x and out share a type: both bf16 in test_head_op.c */
    {"mse", mse, {"io->pred", "io->target", "io->loss", "io->grad"},
     .takes = 0xb}, /* the loss stays f32 */
    {"optim step", optim, {"io->param", "io->grad", "io->state", "io->step"},
     .takes = 0x3}, /* the state and step stay f32 */
    {"decode", decode, {"io->q", "io->value_mask", "io->out"}, .takes = 0x5},
    {"attention layer", attention, {"io->query", "io->value", "io->key", "io->output"}, 8},
    {"mha layer", mha, {"io->query", "io->value", "io->key", "io->output"}, 8},
    {"bf16 attention layer", attention_bf16_layer,
     {"io->query", "io->value", "io->key", "io->output"}, 8, .takes = 0xf},
    {"bf16 mha layer", mha_bf16_layer, {"io->query", "io->value", "io->key", "io->output"}, 8,
     .takes = 0xf},
    {"kv cache append", kv_append, {"io->k", "io->v"}, 4, 2, 0x3},
};

/* Each row: the f32 call succeeds; then each operand alone as bf16 succeeds
 * where the op takes it (row->takes; its values are the other op tests'),
 * else is refused (UNSUPPORTED or INVALID_ARGUMENT) naming it. */
static void test_ops_refuse_bf16(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    float *ones = malloc(N * sizeof *ones);
    assert_non_null(ones);
    for (int i = 0; i < N; i++)
        ones[i] = i % 3 ? 0.5f : 1.0f;
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        const op_row *row = &rows[r];
        const uint32_t n = row->n ? row->n : N, w = row->w ? row->w : 4;
        const vkattn_tensor_desc f32d = {.rank = 4, .dims = {1, 1, n / w, w}};
        vkattn_tensor_desc bfd = f32d;
        bfd.dtype = BF16;
        vkattn_tensor *f32[MAXOPS], *bf = NULL, *t[MAXOPS];
        for (int i = 0; i < MAXOPS; i++) {
            TH_OK(ctx, vkattn_tensor_create(ctx, &f32d, &f32[i]));
            TH_OK(ctx, vkattn_tensor_upload(f32[i], ones, 0, n));
        }
        TH_OK(ctx, vkattn_tensor_create(ctx, &bfd, &bf));
        TH_OK(ctx, vkattn_tensor_upload(bf, ones, 0, n));
        memcpy(t, f32, sizeof t);
        const vkattn_result ok = row->call(ctx, t);
        if (ok != VKATTN_SUCCESS)
            fail_msg("%s with f32 operands: %s (%s)", row->op, vkattn_result_name(ok),
                     vkattn_last_error());
        for (int i = 0; i < MAXOPS && row->names[i]; i++) {
            memcpy(t, f32, sizeof t);
            t[i] = bf;
            const vkattn_result got = row->call(ctx, t);
            const char *msg = vkattn_last_error();
            if (row->takes >> i & 1u) {
                if (got != VKATTN_SUCCESS)
                    fail_msg("%s with a bf16 %s: %s (%s)", row->op, row->names[i],
                             vkattn_result_name(got), msg);
                continue;
            }
            if (got != VKATTN_ERROR_UNSUPPORTED && got != VKATTN_ERROR_INVALID_ARGUMENT)
                fail_msg("%s with a bf16 %s returned %s", row->op, row->names[i],
                         vkattn_result_name(got));
            if (!strstr(msg, row->names[i]) || !strstr(msg, "bf16"))
                fail_msg("%s with a bf16 %s: message \"%s\" names neither", row->op,
                         row->names[i], msg);
        }
        for (int i = 0; i < MAXOPS; i++)
            vkattn_tensor_destroy(f32[i]);
        vkattn_tensor_destroy(bf);
    }
    free(ones);
    th_assert_validation_clean();
}

/* A bf16 layer's backward after a kept forward, with bf16 io and gradients:
 * its result, and grad_query finite where it succeeds. */
static vkattn_result backward_of(vkattn_context *ctx, vkattn_mha *mha, vkattn_gqa *gqa)
{
    vkattn_tensor *x = NULL, *g = NULL, *out = NULL, *gq = NULL;
    const vkattn_tensor_desc td = {.rank = 3, .dims = {1, 2, 4}, .dtype = BF16};
    TH_OK(ctx, vkattn_tensor_create(ctx, &td, &x));
    TH_OK(ctx, vkattn_tensor_create(ctx, &td, &g));
    TH_OK(ctx, vkattn_tensor_create(ctx, &td, &out));
    TH_OK(ctx, vkattn_tensor_create(ctx, &td, &gq));
    TH_OK(ctx, vkattn_tensor_fill(x, 0.5f));
    TH_OK(ctx, vkattn_tensor_fill(g, 1.0f));
    const vkattn_layer_call kept = {.batch = 1, .tq = 2, .tv = 2, .keep_for_backward = true};
    const vkattn_layer_io io = {.query = x, .value = x, .output = out};
    const vkattn_layer_grads grads = {.grad_output = g, .grad_query = gq};
    vkattn_result r;
    if (mha) {
        TH_OK(ctx, vkattn_mha_record(mha, RUN, &kept, &io));
        r = vkattn_mha_backward_record(mha, RUN, &kept, &io, &grads, NULL);
    } else {
        TH_OK(ctx, vkattn_gqa_record(gqa, RUN, &kept, &io));
        r = vkattn_gqa_backward_record(gqa, RUN, &kept, &io, &grads, NULL);
    }
    float got[8] = {0};
    TH_OK(ctx, vkattn_tensor_download(gq, got, 0, 8));
    for (int i = 0; r == VKATTN_SUCCESS && i < 8; i++)
        if (!isfinite(got[i]))
            fail_msg("grad_query[%d] = %g after a bf16 layer's backward", i, (double)got[i]);
    vkattn_tensor_destroy(x), vkattn_tensor_destroy(g), vkattn_tensor_destroy(out);
    vkattn_tensor_destroy(gq);
    return r;
}
static vkattn_result mha_bf16_backward(vkattn_context *ctx)
{
    const vkattn_mha_desc d = {.num_heads = 1, .key_dim = 4, .query_width = 4,
                               .value_width = 4, .dtype = BF16};
    vkattn_mha *l = NULL;
    TH_OK(ctx, vkattn_mha_create(ctx, &d, &l));
    const vkattn_result r = backward_of(ctx, l, NULL);
    vkattn_mha_destroy(l);
    return r;
}
static vkattn_result gqa_bf16_backward(vkattn_context *ctx)
{
    const vkattn_gqa_desc d = {.num_query_heads = 2, .num_key_value_heads = 1, .head_dim = 4,
                               .query_width = 4, .value_width = 4, .dtype = BF16};
    vkattn_gqa *l = NULL;
    TH_OK(ctx, vkattn_gqa_create(ctx, &d, &l));
    const vkattn_result r = backward_of(ctx, NULL, l);
    vkattn_gqa_destroy(l);
    return r;
}
/* an f32 cache over an app's bf16 keys */
static vkattn_result cache_bf16_keys(vkattn_context *ctx)
{
    const vkattn_tensor_desc td = {.rank = 4, .dims = {1, 1, 2, 2}, .dtype = BF16};
    vkattn_kv_cache_desc d = {.batch = 1, .kv_heads = 1, .capacity = 2, .key_dim = 2};
    TH_OK(ctx, vkattn_tensor_create(ctx, &td, &d.keys));
    vkattn_kv_cache *c = NULL;
    const vkattn_result r = vkattn_kv_cache_create(ctx, &d, &c);
    vkattn_kv_cache_destroy(c);
    vkattn_tensor_destroy(d.keys);
    return r;
}

static void test_layer_backward_takes_bf16(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    TH_OK(ctx, mha_bf16_backward(ctx));
    TH_OK(ctx, gqa_bf16_backward(ctx));
    th_assert_validation_clean();
}

static const th_bad_arg descs[] = {
    {"kv cache, bf16 keys", cache_bf16_keys, VKATTN_ERROR_INVALID_ARGUMENT,
     "desc->keys is a bf16 tensor"},
};

static void test_bf16_refusals(void **state)
{
    th_run_bad_args(TH_CTX(state), descs, sizeof descs / sizeof descs[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TU_TESTS(test_round_trips, test_device_conversion, test_ops_refuse_bf16,
                 test_layer_backward_takes_bf16, test_bf16_refusals)};
    return cmocka_run_group_tests_name("bf16 tensors", tests, th_setup, th_teardown);
}
