/* MultiHeadAttention layer vs its CPU reference (vkattn_reference_mha) and vs
 * the hand-transcribed MultiHeadAttention case of spec/cases/examples.json,
 * in the layer dtypes of `dtypes` below (a new dtype is one row there).
 *
 * Random shapes and weights: self- and cross-attention, key given or omitted,
 * Dq != Dk != Dv, output_dim != Dq, H in {1, 2, 3, 8}, key_dim != value_dim,
 * use_bias on and off, every mask kind (query, value, shared and per-head
 * attention masks, causal top-left and bottom-right) alone and together,
 * dropout (the Philox stream must match the reference bit for bit, or the
 * outputs would differ by whole weights), returned scores, the fused and
 * chained SDPA paths, the seed tutorial's shape (d_model 128, 8 heads), batch
 * 1 and odd sizes; Keras's use_gate at random and on every path; exact
 * output-bias rows for fully masked query rows; two
 * calls in one command buffer and scratch growth; bad arguments.
 *
 * Bounds: inputs in [-1, 1], kernels scaled by 1/sqrt(fan-in) so every stage
 * stays O(1). The GPU and the reference differ only by fp32 rounding in the
 * projections, logits and sums (widths here <= 128), so we state
 * max|got - ref| <= 2e-5 * max(max|ref|, 1) for outputs and 5e-6 absolute for
 * the scores (in [0, 1]). Seen on lavapipe: 4.4e-7 and 1.5e-7.
 *
 * Half precision (desc.dtype VKATTN_DTYPE_F16, Keras's float16 policy): the
 * random and the fixed cases, the weights round trip and the dtype's bad
 * arguments run again with the inputs and weights f16-rounded (the f32
 * reference on them) and each of query, key, value, output and scores f16 or
 * f32 at random (an f16 mask is refused: test_bad_dtypes). Keras use_gate's
 * f16 pre-activation and gated context are two more f16 roundings, each
 * damped by the sigmoid's slope <= 1/4 or bounded by the context's own.
 * Bound (vkattn/mha.h): the layer rounds its projections, heads and context
 * to f16 (and an f16 output once more), each a relative error of at most
 * eps16 / 2, eps16 = 2^-10; through the logits, softmax and the two
 * projections these stay a few eps16 of the output scale for inputs of
 * magnitude about 1 and kernels scaled by 1/sqrt(fan-in):
 *   max|out - ref| <= 8 eps16 max(max|ref|, 1)      (7.8e-3)
 *   max|scores - ref| <= 4 eps16                     (3.9e-3, scores in [0, 1])
 * bfloat16 (desc.dtype VKATTN_DTYPE_BF16, Keras's bfloat16 policy) is the same
 * with bf16 rounding: the same roundings, each at most half its spacing at 1,
 * eps = 2^-7 (8 significand bits) for eps16, so 8 eps = 6.3e-2 and 4 eps =
 * 3.1e-2.
 * The largest seen is printed by test_random_cases. */
#include "harness.h"
#include "op_table.h"
#include "multi_head_case.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUT_BOUND 2e-5 /* the f32 layer's (header comment) */
#define SCORE_BOUND 5e-6
#define EPS16 (1.0 / 1024.0)
#define EPS_BF16 (1.0 / 128.0)

/* Which io tensors hold the layer's dtype (the others f32). */
enum { IO_Q = 1, IO_K = 2, IO_V = 4, IO_OUT = 8, IO_SCORES = 16, IO_ALL = 31 };

/* One test case: the layer, the call, and which inputs and masks exist. */
typedef struct mcase {
    vkattn_mha_desc desc;
    vkattn_layer_call call;
    bool key_given; /* a key tensor of its own */
    bool self_attn; /* the query tensor is also value (and key) */
    bool query_mask, value_mask;
    attn_kind attn;
    const char *am_form; /* with attn SHARED: the mask's shape (mask_forms.h); NULL = flat */
    unsigned narrow;     /* IO_* bits: the io tensors of the layer's dtype (else f32) */
} mcase;

static float f16_round(float x) { return tu_f16_to_f32(tu_f16_bits(x)); }
static float no_round(float x) { return x; }

/* One layer dtype: what differs between them. */
typedef struct layer_dtype {
    vkattn_dtype dtype;
    double out_bound, score_bound; /* header comment */
    float (*round)(float x);       /* what the layer stores of an f32 weight */
    bool narrow_io;                /* its io tensors may hold the dtype */
    rc_mha_bounds random;          /* test_random_cases' shapes */
    int n_random;                  /* and how many */
} layer_dtype;

static const layer_dtype dtypes[] = {
    {VKATTN_DTYPE_F32, OUT_BOUND, SCORE_BOUND, no_round, false,
     {.heads = {1, 2, 3, 8}, .max_width = 40, .max_t = 17, .self_one_in = 4,
      .no_bias_one_in = 4, .dropout_one_in = 3, .max_dropout = 0.6f, .scores_one_in = 2},
     24},
    /* smaller shapes: f16 is slower */
    {VKATTN_DTYPE_F16, 8 * EPS16, 4 * EPS16, f16_round, true,
     {.heads = {1, 2, 3, 4}, .max_width = 33, .max_t = 13, .self_one_in = 3,
      .no_bias_one_in = 3, .dropout_one_in = 4, .max_dropout = 0.5f, .scores_one_in = 3},
     24},
    /* fewer: bf16 runs the packed and staged paths, slower on lavapipe */
    {VKATTN_DTYPE_BF16, 8 * EPS_BF16, 4 * EPS_BF16, th_bf16_round, true,
     {.heads = {1, 2, 3, 4}, .max_width = 33, .max_t = 13, .self_one_in = 3,
      .no_bias_one_in = 3, .dropout_one_in = 4, .max_dropout = 0.5f, .scores_one_in = 3},
     10},
};
#define NDTYPES (sizeof dtypes / sizeof dtypes[0])

static const layer_dtype *dtype_row(vkattn_dtype dt)
{
    for (size_t i = 0; i < NDTYPES; i++)
        if (dtypes[i].dtype == dt)
            return &dtypes[i];
    fail_msg("no row for dtype %d", (int)dt);
    return NULL;
}

/* The case as multi_head_case.h sees it. */
static mh_case view(const mcase *m)
{
    return (mh_case){.w = rc_mha_widths_of(&m->desc), .no_bias = m->desc.no_bias,
                     .use_gate = m->desc.use_gate,
                     .call = &m->call, .key_given = m->key_given, .self_attn = m->self_attn,
                     .query_mask = m->query_mask, .value_mask = m->value_mask, .attn = m->attn,
                     .am_form = m->am_form};
}

static sizes sizes_of(const mcase *m)
{
    const mh_case v = view(m);
    return mh_sizes(&v);
}

/* Random data, rounded to what a layer of the case's dtype holds. */
static void host_random(const mcase *m, host *h)
{
    const mh_case v = view(m);
    mh_host_random(&v, h);
    mh_host_round(&v, h, m->desc.dtype);
}

static void host_free(const mcase *m, host *h)
{
    const mh_case v = view(m);
    mh_host_free(&v, h);
}

static vkattn_layer_host_io host_io(const mcase *m, const host *h, float *out, float *scores)
{
    const mh_case v = view(m);
    return mh_host_io(&v, h, out, scores);
}

/* Runs the case on the GPU: a fresh layer, weights set, outputs poisoned;
 * downloads into out and scores. Returns the result of vkattn_mha_record (VKATTN_RUN_NOW). */
static vkattn_result run_gpu(vkattn_context *ctx, const mcase *m, const host *h, float *out,
                             float *scores)
{
    const mh_case v = view(m);
    vkattn_mha *layer = NULL;
    TH_OK(ctx, vkattn_mha_create(ctx, &m->desc, &layer));
    TH_OK(ctx, vkattn_mha_set_weights(layer, &h->w));
    vkattn_layer_io io = mh_gpu_io(ctx, &v, h);
    const sizes s = mh_sizes(&v);
    const vkattn_dtype dt = m->desc.dtype;
    if (m->narrow & IO_Q) {
        const bool shared = io.value == io.query;
        mh_retype(ctx, &io.query, dt, s.query, h->query);
        if (shared)
            io.value = io.query;
    }
    if (m->narrow & IO_K)
        mh_retype(ctx, &io.key, dt, s.key, h->key);
    if ((m->narrow & IO_V) && !m->self_attn)
        mh_retype(ctx, &io.value, dt, s.value, h->value);
    if (m->narrow & IO_OUT)
        mh_retype(ctx, &io.output, dt, s.out, NULL);
    if (m->narrow & IO_SCORES)
        mh_retype(ctx, &io.scores, dt, s.scores, NULL);
    vkattn_result r = vkattn_mha_record(layer, VKATTN_RUN_NOW, &m->call, &io);
    mh_gpu_io_finish(ctx, &v, &io, r == VKATTN_SUCCESS, out, scores);
    vkattn_mha_destroy(layer);
    return r;
}

static void describe(const mcase *m, char *buf, size_t n)
{
    char d[160], k[96];
    rc_describe_mha(d, sizeof d, &m->desc), rc_describe_call(k, sizeof k, &m->call);
    snprintf(buf, n, "mha %s %s | %s self=%d key=%d qm=%d vm=%d attn=%d form=%s narrow=%#x",
             th_dtype_name(m->desc.dtype), d, k, m->self_attn, m->key_given, m->query_mask,
             m->value_mask, (int)m->attn, m->am_form ? m->am_form : "flat", m->narrow);
}

static void check_masked_query_rows(const mcase *m, const host *h, const float *out,
                                    const float *scores, const char *what)
{
    const mh_case v = view(m);
    mh_check_masked_query_rows(&v, h, out, scores, what);
}

/* Reference vs GPU for one case; expect = the result the GPU run must give.
 * Returns the output error (0 for a failing call). */
static double check_case_expect(vkattn_context *ctx, const mcase *m, vkattn_result expect)
{
    const layer_dtype *d = dtype_row(m->desc.dtype);
    double err = 0;
    char what[400];
    describe(m, what, sizeof what);
    const sizes s = sizes_of(m);
    host h;
    host_random(m, &h);
    float *ref = tu_floats(s.out), *ref_scores = tu_floats(s.scores);
    float *got = tu_floats(s.out), *got_scores = tu_floats(s.scores);
    tu_poison(ref, s.out), tu_poison(ref_scores, s.scores);
    tu_poison(got, s.out), tu_poison(got_scores, s.scores);
    vkattn_layer_host_io hio = host_io(m, &h, ref, ref_scores);
    TH_OK(ctx, vkattn_reference_mha(&m->desc, &h.w, &m->call, &hio));

    vkattn_result r = run_gpu(ctx, m, &h, got, got_scores);
    if (r != expect)
        fail_msg("%s: vkattn_mha_record(VKATTN_RUN_NOW) gave %s, want %s (%s)", what, vkattn_result_name(r),
                 vkattn_result_name(expect), vkattn_last_error());
    if (r == VKATTN_SUCCESS) {
        err = tu_max_rel_err(got, ref, s.out, 1.0);
        if (!TU_WITHIN(err, d->out_bound))
            fail_msg("%s: output error %.3g exceeds %.3g", what, err, d->out_bound);
        check_masked_query_rows(m, &h, ref, m->call.return_attention_scores ? ref_scores : NULL,
                                "reference");
        check_masked_query_rows(m, &h, got, m->call.return_attention_scores ? got_scores : NULL,
                                what);
        if (m->call.return_attention_scores) {
            double serr = tu_max_abs_err(got_scores, ref_scores, s.scores);
            if (!TU_WITHIN(serr, d->score_bound))
                fail_msg("%s: score error %.3g exceeds %.3g", what, serr, d->score_bound);
        }
    }
    th_assert_validation_clean();
    host_free(m, &h);
    free(ref), free(ref_scores), free(got), free(got_scores);
    return err;
}

static double check_case(vkattn_context *ctx, const mcase *m)
{
    return check_case_expect(ctx, m, VKATTN_SUCCESS);
}

static bool coin(void) { return tu_rand_range(0, 1) == 1; }

/* A random case of dtype row d (random_case.h); small enough for lavapipe.
 * Each io tensor of the dtype or f32 at random where the dtype allows. */
static mcase random_case(const layer_dtype *d)
{
    const rc_mha r = rc_random_mha(&d->random);
    mcase m = {.desc = r.desc, .call = r.call, .key_given = r.key_given,
               .self_attn = r.self_attn, .query_mask = r.query_mask,
               .value_mask = r.value_mask, .attn = (attn_kind)tu_rand_range(0, 2)};
    m.desc.use_gate = coin(); /* Keras use_gate, on every path the case takes */
    m.desc.dtype = d->dtype;
    if (d->narrow_io)
        m.narrow = (unsigned)tu_rand_range(0, IO_ALL);
    return m;
}

static void test_random_cases(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (size_t k = 0; k < NDTYPES; k++) {
        double worst = 0;
        for (int i = 0; i < dtypes[k].n_random; i++) {
            mcase m = random_case(&dtypes[k]);
            worst = fmax(worst, check_case(ctx, &m));
        }
        printf("# %s MHA: largest output error %.3g (bound %.3g)\n",
               th_dtype_name(dtypes[k].dtype), worst, dtypes[k].out_bound);
    }
}

/* Fixed cases every run covers in every dtype, whatever the draw: batch 1
 * self-attention with all masks, causal, the gate and scores, the io in the
 * layer's dtype; cross-attention with a key of its own width, no bias, the
 * fused path, query and output f32. */
static void test_fixed_cases(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (size_t k = 0; k < NDTYPES; k++) {
        const vkattn_dtype dt = dtypes[k].dtype;
        const mcase a = {
            .desc = {.num_heads = 3, .key_dim = 5, .value_dim = 7, .query_width = 13,
                     .value_width = 13, .dtype = dt, .use_gate = true},
            .call = {.batch = 1, .tq = 9, .tv = 9, .causal = VKATTN_CAUSAL_TOP_LEFT,
                     .return_attention_scores = true},
            .self_attn = true, .query_mask = true, .value_mask = true, .attn = ATTN_SHARED,
            .narrow = dtypes[k].narrow_io ? IO_ALL : 0,
        };
        check_case(ctx, &a);
        const mcase b = {
            .desc = {.num_heads = 2, .key_dim = 6, .query_width = 11, .key_width = 9,
                     .value_width = 15, .output_dim = 7, .no_bias = true, .dtype = dt},
            .call = {.batch = 2, .tq = 5, .tv = 12, .path = VKATTN_SDPA_FUSED},
            .key_given = true, .value_mask = true,
            .narrow = dtypes[k].narrow_io ? IO_K | IO_V : 0,
        };
        check_case(ctx, &b);
    }
}

/* Keras's sliding_window on random calls (every path, masks, causal either
 * way, dropout, scores): 1, within the lengths, or wider than both. */
static void test_sliding_window(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 12; i++) {
        mcase m = random_case(&dtypes[0]);
        m.desc.sliding_window = rc_random_window(m.call.tq, m.call.tv);
        check_case(ctx, &m);
    }
}

/* Every broadcast form of the attention mask (ranks 1..4), each on two random
 * shapes (batch 1, then 2 or 3; odd sizes, Tq != Tv, Tv > 1), H in {1, 2, 3},
 * the fused path (no returned scores) and the unfused one in turn, with a
 * query mask (folded into the mask) and a value mask at random. */
static void test_mask_broadcast(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const size_t n1 = sizeof lt_mask_forms_single / sizeof lt_mask_forms_single[0];
    const size_t n4 = sizeof lt_mask_forms_multi / sizeof lt_mask_forms_multi[0];
    for (size_t f = 0; f < n1 + n4; f++)
        for (int rep = 0; rep < 2; rep++) {
            const int v = (int)(2 * f) + rep;
            mcase m = {
                .desc = {.num_heads = 1 + (uint32_t)(v % 3), .key_dim = 3, .value_dim = 5,
                         .query_width = 7, .value_width = 6, .output_dim = 5},
                .call = {.batch = rep ? tu_rand_range(2, 3) : 1,
                         .tq = 2 * tu_rand_range(0, 4) + 1, .tv = 2 * tu_rand_range(1, 6),
                         .causal = tu_rand_range(0, 3) == 0 ? VKATTN_CAUSAL_TOP_LEFT
                                                               : VKATTN_CAUSAL_NONE},
                .query_mask = coin(), .value_mask = coin(), .attn = ATTN_SHARED,
                .am_form = f < n1 ? lt_mask_forms_single[f] : lt_mask_forms_multi[f - n1],
            };
            m.call.return_attention_scores = v % 2 == 0;
            m.call.path = v % 2 ? VKATTN_SDPA_FUSED : VKATTN_SDPA_UNFUSED;
            check_case(ctx, &m);
        }
}

/* A fixed cross-attention case with every width different. */
static mcase base_case(void)
{
    return (mcase){
        .desc = {.num_heads = 3, .key_dim = 5, .value_dim = 4, .query_width = 7, .key_width = 6,
                 .value_width = 9, .output_dim = 11},
        .call = {.batch = 2, .tq = 7, .tv = 13, .return_attention_scores = true},
        .key_given = true,
    };
}

/* Each mask kind alone, then all together, on both paths. */
static void test_mask_kinds(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int kind = 0; kind < 8; kind++)
        for (int scores = 0; scores < 2; scores++) {
            mcase m = base_case();
            m.call.return_attention_scores = scores;
            m.query_mask = kind == 1 || kind == 7;
            m.value_mask = kind == 2 || kind == 7;
            m.attn = kind == 3 ? ATTN_SHARED : kind == 4 || kind == 7 ? ATTN_PER_HEAD : ATTN_NONE;
            m.call.causal = kind == 6   ? VKATTN_CAUSAL_BOTTOM_RIGHT
                            : kind == 5 ? VKATTN_CAUSAL_TOP_LEFT
                                        : VKATTN_CAUSAL_NONE;
            if (kind == 6) /* Tq > Tv: the first rows see no key at all */
                m.call.tq = 17;
            check_case(ctx, &m);
        }
}

/* A query mask with whole rows masked, per-head mask and causal, single head
 * and many: output rows are the bias exactly, scores rows zero. */
static void test_query_mask_rows(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const uint32_t heads[] = {1, 2, 8};
    for (int i = 0; i < 3; i++)
        for (int bias = 0; bias < 2; bias++) {
            mcase m = base_case();
            m.desc.num_heads = heads[i];
            m.desc.no_bias = !bias;
            m.query_mask = true;
            m.attn = i == 2 ? ATTN_PER_HEAD : ATTN_SHARED;
            m.call.causal = i == 1 ? VKATTN_CAUSAL_TOP_LEFT : VKATTN_CAUSAL_NONE;
            check_case(ctx, &m);
        }
}

static void test_self_attention_and_key(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    mcase m = base_case();
    m.self_attn = true, m.key_given = false;
    m.desc.key_width = 0, m.desc.value_width = m.desc.query_width;
    m.call.tv = m.call.tq;
    check_case(ctx, &m); /* key = value = query */
    m = base_case();
    m.key_given = false, m.desc.key_width = 0;
    check_case(ctx, &m); /* key omitted: key = value */
    m.key_given = true;
    check_case(ctx, &m); /* key given, of the value's width */
    m = base_case();
    m.desc.output_dim = 0; /* output width = query width */
    m.desc.value_dim = 0;  /* value_dim = key_dim */
    check_case(ctx, &m);
}

/* Batch 1, length 1, one head of width 1, and odd sizes. */
static void test_small_and_odd(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const uint32_t shapes[][7] = {
        /* H dk dv Dq Dv B Tq/Tv */
        {1, 1, 1, 1, 1, 1, 1}, {2, 1, 3, 1, 2, 1, 1}, {3, 7, 5, 13, 11, 1, 31},
        {8, 3, 2, 5, 3, 3, 19}, {1, 33, 17, 29, 37, 2, 23},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const uint32_t *s = shapes[i];
        mcase m = {
            .desc = {.num_heads = s[0], .key_dim = s[1], .value_dim = s[2], .query_width = s[3],
                     .value_width = s[4]},
            .call = {.batch = s[5], .tq = s[6], .tv = s[6] + (uint32_t)i % 3,
                     .return_attention_scores = i % 2 == 0},
            .value_mask = i >= 2,
        };
        check_case(ctx, &m);
    }
}

/* The seed tutorial: MultiHeadAttention(d_model=128, num_heads=8), i.e.
 * key_dim = value_dim = 16, self-attention with a look-ahead (causal) mask. */
static void test_tutorial_shape(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int scores = 0; scores < 2; scores++) {
        mcase m = {
            .desc = {.num_heads = 8, .key_dim = 16, .query_width = 128, .value_width = 128},
            .call = {.batch = 2, .tq = 9, .tv = 9, .causal = VKATTN_CAUSAL_TOP_LEFT,
                     .return_attention_scores = scores},
            .self_attn = true,
            .value_mask = true,
        };
        check_case(ctx, &m);
    }
}

/* Dropout: the Philox stream of the reference, on both paths; scores are
 * returned before dropout, so they equal those of an inference call. */
static void test_dropout(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int path = 0; path < 3; path++)
        for (int scores = 0; scores < 2; scores++) {
            if (scores && path == VKATTN_SDPA_FUSED)
                continue;
            mcase m = base_case();
            m.desc.dropout = 0.4f;
            m.value_mask = true;
            m.call.training = true;
            m.call.seed = 0x123456789abcdefull;
            m.call.offset = 3 + (uint64_t)path;
            m.call.path = (vkattn_sdpa_path)path;
            m.call.return_attention_scores = scores;
            check_case(ctx, &m);
        }

    /* the dropout is really applied (outputs differ from inference) and the
     * returned scores are the same as inference's: before dropout */
    mcase m = base_case();
    m.desc.dropout = 0.5f;
    m.call.seed = 42;
    const sizes s = sizes_of(&m);
    host h;
    host_random(&m, &h);
    float *out[2], *sc[2];
    for (int t = 0; t < 2; t++) {
        m.call.training = t;
        out[t] = tu_floats(s.out), sc[t] = tu_floats(s.scores);
        TH_OK(ctx, run_gpu(ctx, &m, &h, out[t], sc[t]));
    }
    assert_true(tu_max_abs_err(out[0], out[1], s.out) > 1e-3);
    assert_true(tu_max_abs_err(sc[0], sc[1], s.scores) <= SCORE_BOUND);
    host_free(&m, &h);
    free(out[0]), free(out[1]), free(sc[0]), free(sc[1]);
}

/* Fused, chained and automatic paths agree; asking the fused path for scores
 * is an invalid combination (as for vkattn_sdpa). */
static void test_paths(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int path = 0; path < 3; path++)
        for (int bias = 0; bias < 2; bias++) {
            mcase m = base_case();
            m.desc.no_bias = !bias; /* the output matmul then binds no bias buffer */
            m.call.return_attention_scores = false;
            m.call.path = (vkattn_sdpa_path)path;
            m.value_mask = m.query_mask = true;
            m.attn = ATTN_PER_HEAD;
            m.call.causal = VKATTN_CAUSAL_TOP_LEFT;
            check_case(ctx, &m);
        }
    mcase m = base_case();
    m.call.path = VKATTN_SDPA_FUSED; /* with scores requested: the fused kernel has none */
    check_case_expect(ctx, &m, VKATTN_ERROR_INVALID_ARGUMENT);
}

/* got[i] is exactly what a layer of dtype row d stores of set[i]: the value
 * itself in f32, rounded to nearest even in f16. */
static void expect_stored(const float *got, const float *set, size_t n, const layer_dtype *d,
                          const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (got[i] != d->round(set[i]))
            fail_msg("%s %s[%zu] = %.9g, want its stored value %.9g", th_dtype_name(d->dtype),
                     name, i, (double)got[i], (double)d->round(set[i]));
}

/* New layers hold glorot_uniform kernels (test_layer_init.c); get_weights
 * returns what set_weights stored (in the layer's dtype), leaves NULL arrays
 * and a no_bias layer's bias arrays alone. */
static void test_weights_round_trip(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int v = 0; v < 2 * (int)NDTYPES; v++) {
        const int bias = v % 2;
        const layer_dtype *d = &dtypes[v / 2];
        mcase m = base_case();
        m.desc.no_bias = !bias;
        m.desc.dtype = d->dtype;
        const sizes s = sizes_of(&m);
        const mh_case mv = view(&m);
        host h;
        mh_host_random(&mv, &h); /* not rounded: set_weights rounds */
        vkattn_mha *layer;
        TH_OK(ctx, vkattn_mha_create(ctx, &m.desc, &layer));
        float *wq = tu_floats(s.wq), *bo = tu_floats(s.bo), *wo = tu_floats(s.wo);
        tu_poison(wq, s.wq);
        vkattn_mha_weights got = {.query_kernel = wq};
        TH_OK(ctx, vkattn_mha_get_weights(layer, &got));
        for (size_t i = 0; i < s.wq; i++)
            assert_true(isfinite(wq[i]) && fabsf(wq[i]) < 1.0f);
        TH_OK(ctx, vkattn_mha_set_weights(layer, &h.w));
        tu_poison(bo, s.bo);
        got = (vkattn_mha_weights){.query_kernel = wq, .output_kernel = wo, .output_bias = bo};
        TH_OK(ctx, vkattn_mha_get_weights(layer, &got));
        expect_stored(wq, h.w.query_kernel, s.wq, d, "query_kernel");
        expect_stored(wo, h.w.output_kernel, s.wo, d, "output_kernel");
        if (bias)
            expect_stored(bo, h.w.output_bias, s.bo, d, "output_bias");
        else
            assert_true(isnan(bo[0])); /* untouched */
        vkattn_mha_destroy(layer);
        host_free(&m, &h);
        free(wq), free(bo), free(wo);
    }
}

/* Keras use_gate: context * sigmoid(query @ gate_kernel + gate_bias) before
 * the output projection, on the fused, chained and automatic paths, with
 * masks, causal, a window, dropout and no_bias; the gate really changes the
 * output (the reference without it differs), and its weights round-trip. */
static void test_gate(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int v = 0; v < 6; v++) {
        mcase m = base_case();
        m.desc.use_gate = true;
        m.desc.no_bias = v >= 3;
        m.call.path = (vkattn_sdpa_path)(v % 3);
        m.call.return_attention_scores = m.call.path == VKATTN_SDPA_UNFUSED;
        m.query_mask = m.value_mask = true;
        m.call.causal = v % 2 ? VKATTN_CAUSAL_TOP_LEFT : VKATTN_CAUSAL_NONE;
        m.desc.sliding_window = v == 4 ? 3 : 0;
        if (v >= 2) { /* the gate multiplies the context after dropout */
            m.desc.dropout = 0.4f;
            m.call.training = true;
            m.call.seed = 77 + (uint64_t)v;
        }
        check_case(ctx, &m);
    }

    /* the gate is really applied: without it the reference differs */
    mcase m = base_case();
    m.desc.use_gate = true;
    const sizes s = sizes_of(&m);
    host h;
    host_random(&m, &h);
    float *gated = tu_floats(s.out), *plain = tu_floats(s.out), *sc = tu_floats(s.scores);
    vkattn_layer_host_io hio = host_io(&m, &h, gated, sc);
    TH_OK(ctx, vkattn_reference_mha(&m.desc, &h.w, &m.call, &hio));
    vkattn_mha_desc off = m.desc;
    off.use_gate = false;
    hio.output = plain;
    TH_OK(ctx, vkattn_reference_mha(&off, &h.w, &m.call, &hio));
    assert_true(tu_max_abs_err(gated, plain, s.out) > 1e-2);

    /* gate weights round-trip; a layer without the gate leaves them alone */
    vkattn_mha *layer;
    TH_OK(ctx, vkattn_mha_create(ctx, &m.desc, &layer));
    TH_OK(ctx, vkattn_mha_set_weights(layer, &h.w));
    float *wg = tu_floats(s.wg), *bg = tu_floats(s.bg);
    tu_poison(wg, s.wg), tu_poison(bg, s.bg);
    vkattn_mha_weights got = {.gate_kernel = wg, .gate_bias = bg};
    TH_OK(ctx, vkattn_mha_get_weights(layer, &got));
    assert_memory_equal(wg, h.w.gate_kernel, s.wg * sizeof(float));
    assert_memory_equal(bg, h.w.gate_bias, s.bg * sizeof(float));
    vkattn_mha_destroy(layer);
    TH_OK(ctx, vkattn_mha_create(ctx, &off, &layer));
    tu_poison(wg, s.wg);
    TH_OK(ctx, vkattn_mha_get_weights(layer, &got));
    assert_true(isnan(wg[0]));
    vkattn_mha_destroy(layer);
    th_assert_validation_clean();
    host_free(&m, &h);
    free(gated), free(plain), free(sc), free(wg), free(bg);
}

/* Two calls of one layer in one command buffer (the second reads the first's
 * output: scratch reuse needs the barriers vkattn records), then calls that
 * grow the scratch and shrink again. */
static void test_chained_calls(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    mcase m = {
        .desc = {.num_heads = 2, .key_dim = 4, .query_width = 6, .value_width = 6},
        .call = {.batch = 2, .tq = 5, .tv = 5},
        .self_attn = true,
    };
    const sizes s = sizes_of(&m);
    host h;
    host_random(&m, &h);
    float *mid = tu_floats(s.out), *ref = tu_floats(s.out);
    vkattn_layer_host_io hio = host_io(&m, &h, mid, NULL);
    TH_OK(ctx, vkattn_reference_mha(&m.desc, &h.w, &m.call, &hio));
    hio.query = hio.value = mid, hio.output = ref;
    TH_OK(ctx, vkattn_reference_mha(&m.desc, &h.w, &m.call, &hio));

    vkattn_mha *layer;
    TH_OK(ctx, vkattn_mha_create(ctx, &m.desc, &layer));
    TH_OK(ctx, vkattn_mha_set_weights(layer, &h.w));
    vkattn_tensor *x = th_tensor(ctx, s.query, h.query), *y = th_tensor(ctx, s.out, NULL);
    vkattn_tensor *z = th_tensor(ctx, s.out, NULL);
    VkCommandBuffer cmd;
    TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
    vkattn_layer_io first = {.query = x, .value = x, .output = y};
    vkattn_layer_io second = {.query = y, .value = y, .output = z};
    TH_OK(ctx, vkattn_mha_record(layer, cmd, &m.call, &first));
    TH_OK(ctx, vkattn_mha_record(layer, cmd, &m.call, &second));
    TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd));
    float *got = th_download(z, s.out);
    TU_ASSERT_CLOSE(got, ref, s.out, OUT_BOUND, "two chained calls");
    th_assert_validation_clean();
    vkattn_tensor_destroy(x), vkattn_tensor_destroy(y), vkattn_tensor_destroy(z);
    free(mid), free(ref), free(got);

    /* scratch growth on one layer: small, large, small */
    static const uint32_t lens[][3] = {{1, 2, 3}, {3, 40, 29}, {2, 7, 5}};
    for (int i = 0; i < 3; i++) {
        mcase c = {.desc = m.desc, .call = {.batch = lens[i][0], .tq = lens[i][1],
                                            .tv = lens[i][2], .return_attention_scores = true}};
        c.value_mask = c.query_mask = true;
        const sizes cs = sizes_of(&c);
        host ch;
        host_random(&c, &ch);
        float *cref = tu_floats(cs.out), *cgot = tu_floats(cs.out);
        float *sref = tu_floats(cs.scores);
        vkattn_layer_host_io chio = host_io(&c, &ch, cref, sref);
        TH_OK(ctx, vkattn_reference_mha(&c.desc, &h.w, &c.call, &chio));
        vkattn_tensor *q = th_tensor(ctx, cs.query, ch.query);
        vkattn_tensor *v = th_tensor(ctx, cs.value, ch.value);
        vkattn_tensor *qm = th_tensor(ctx, cs.qm, ch.qm), *vm = th_tensor(ctx, cs.vm, ch.vm);
        vkattn_tensor *o = th_tensor(ctx, cs.out, NULL), *sc = th_tensor(ctx, cs.scores, NULL);
        vkattn_layer_io io = {.query = q, .value = v, .query_mask = qm, .value_mask = vm,
                              .output = o, .scores = sc};
        TH_OK(ctx, vkattn_mha_record(layer, VKATTN_RUN_NOW, &c.call, &io));
        TH_OK(ctx, vkattn_tensor_download(o, cgot, 0, cs.out));
        TU_ASSERT_CLOSE(cgot, cref, cs.out, OUT_BOUND, "scratch growth");
        vkattn_tensor_destroy(q), vkattn_tensor_destroy(v), vkattn_tensor_destroy(qm);
        vkattn_tensor_destroy(vm), vkattn_tensor_destroy(o), vkattn_tensor_destroy(sc);
        host_free(&c, &ch);
        free(cref), free(cgot), free(sref);
    }
    th_assert_validation_clean();
    vkattn_mha_destroy(layer);
    host_free(&m, &h);
}

/* ------------------------------------------------------------ examples.json */

/* "example_mha_cross_vmask" of spec/cases/examples.json (ex_* arrays) */
#include "mha_example_case.h"

/* |got - exp| <= atol + rtol * |exp| everywhere (docs/CASES.md) */
static void assert_within(const float *got, const float *exp, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (!TU_WITHIN(fabs((double)got[i] - exp[i]), 1e-5 + 1e-4 * fabs((double)exp[i])))
            fail_msg("%s[%zu] = %.9g, expected %.9g", what, i, (double)got[i], (double)exp[i]);
}

/* The reference part runs without a device too. */
static void test_example_case(void **state)
{
    const vkattn_mha_desc desc = {.num_heads = 2, .key_dim = 2, .value_dim = 3, .query_width = 4,
                                  .value_width = 5};
    const vkattn_layer_call call = {.batch = 2, .tq = 3, .tv = 4, .return_attention_scores = true};
    /* the weights struct holds non-const pointers; nothing writes through them here */
    const vkattn_mha_weights w = {
        (float *)ex_query_kernel, (float *)ex_query_bias, (float *)ex_key_kernel,
        (float *)ex_key_bias,     (float *)ex_value_kernel, (float *)ex_value_bias,
        (float *)ex_output_kernel, (float *)ex_output_bias,
    };
    float ref[24], ref_scores[48], got[24], got_scores[48];
    const vkattn_layer_host_io hio = {.query = ex_query, .value = ex_value,
                                      .value_mask = ex_value_mask, .output = ref,
                                      .scores = ref_scores};
    TH_OK(NULL, vkattn_reference_mha(&desc, &w, &call, &hio));
    assert_within(ref, ex_expected_output, 24, "reference output");
    assert_within(ref_scores, ex_expected_scores, 48, "reference scores");

    vkattn_context *ctx = TH_CTX(state);
    vkattn_mha *layer;
    TH_OK(ctx, vkattn_mha_create(ctx, &desc, &layer));
    TH_OK(ctx, vkattn_mha_set_weights(layer, &w));
    vkattn_tensor *q = th_tensor(ctx, 24, ex_query), *v = th_tensor(ctx, 40, ex_value);
    vkattn_tensor *vm = th_tensor(ctx, 8, ex_value_mask);
    vkattn_tensor *o = th_tensor(ctx, 24, NULL), *sc = th_tensor(ctx, 48, NULL);
    vkattn_layer_io io = {.query = q, .value = v, .value_mask = vm, .output = o, .scores = sc};
    TH_OK(ctx, vkattn_mha_record(layer, VKATTN_RUN_NOW, &call, &io));
    TH_OK(ctx, vkattn_tensor_download(o, got, 0, 24));
    TH_OK(ctx, vkattn_tensor_download(sc, got_scores, 0, 48));
    assert_within(got, ex_expected_output, 24, "GPU output");
    assert_within(got_scores, ex_expected_scores, 48, "GPU scores");
    TU_ASSERT_CLOSE(got, ref, 24, OUT_BOUND, "example case vs reference");
    /* without scores AUTO takes the fused kernel: the same output */
    vkattn_layer_call fused = call;
    fused.return_attention_scores = false;
    io.scores = NULL;
    TH_OK(ctx, vkattn_tensor_fill(o, NAN));
    TH_OK(ctx, vkattn_mha_record(layer, VKATTN_RUN_NOW, &fused, &io));
    TH_OK(ctx, vkattn_tensor_download(o, got, 0, 24));
    assert_within(got, ex_expected_output, 24, "GPU output (fused)");
    th_assert_validation_clean();
    vkattn_tensor_destroy(q), vkattn_tensor_destroy(v), vkattn_tensor_destroy(vm);
    vkattn_tensor_destroy(o), vkattn_tensor_destroy(sc);
    vkattn_mha_destroy(layer);
}

/* ------------------------------------------------------------ bad arguments */

static void test_bad_create_and_weights(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const vkattn_mha_desc good = {.num_heads = 2, .key_dim = 3, .query_width = 4, .value_width = 5};
    vkattn_mha *layer = (vkattn_mha *)&layer; /* non-NULL: create must reset it */
    th_expect_invalid(vkattn_mha_create(NULL, &good, &layer), "ctx");
    assert_null(layer);
    th_expect_invalid(vkattn_mha_create(ctx, NULL, &layer), "desc");
    th_expect_invalid(vkattn_mha_create(ctx, &good, NULL), "out");
    vkattn_mha_desc d = good;
    d.num_heads = 0;
    th_expect_invalid(vkattn_mha_create(ctx, &d, &layer), "num_heads");
    d = good, d.key_dim = 0;
    th_expect_invalid(vkattn_mha_create(ctx, &d, &layer), "key_dim");
    d = good, d.query_width = 0;
    th_expect_invalid(vkattn_mha_create(ctx, &d, &layer), "query_width");
    d = good, d.value_width = 0;
    th_expect_invalid(vkattn_mha_create(ctx, &d, &layer), "value_width");
    d = good, d.dropout = 1.5f;
    th_expect_invalid(vkattn_mha_create(ctx, &d, &layer), "dropout");
    d = good, d.dropout = NAN;
    th_expect_invalid(vkattn_mha_create(ctx, &d, &layer), "dropout");
    d = good, d.num_heads = 65536, d.key_dim = 65536;
    assert_int_equal(vkattn_mha_create(ctx, &d, &layer), VKATTN_ERROR_SIZE_OVERFLOW);
    assert_null(layer);
    vkattn_mha_destroy(NULL);

    TH_OK(ctx, vkattn_mha_create(ctx, &good, &layer));
    float k[64] = {0};
    vkattn_mha_weights w = {k, k, k, k, k, k, k, k};
    TH_OK(ctx, vkattn_mha_set_weights(layer, &w));
    th_expect_invalid(vkattn_mha_set_weights(NULL, &w), "layer");
    th_expect_invalid(vkattn_mha_set_weights(layer, NULL), "w");
    w.value_kernel = NULL;
    th_expect_invalid(vkattn_mha_set_weights(layer, &w), "w->value_kernel");
    w.value_kernel = k, w.key_bias = NULL;
    th_expect_invalid(vkattn_mha_set_weights(layer, &w), "w->key_bias");
    th_expect_invalid(vkattn_mha_get_weights(layer, NULL), "w");
    vkattn_mha_destroy(layer);
    d = good, d.no_bias = true; /* biases may be NULL then */
    TH_OK(ctx, vkattn_mha_create(ctx, &d, &layer));
    TH_OK(ctx, vkattn_mha_set_weights(layer, &w));
    vkattn_mha_destroy(layer);
    /* use_gate: the gate's kernel is required, its bias unless no_bias */
    d = good, d.use_gate = true, w.key_bias = k;
    TH_OK(ctx, vkattn_mha_create(ctx, &d, &layer));
    th_expect_invalid(vkattn_mha_set_weights(layer, &w), "w->gate_kernel");
    w.gate_kernel = k;
    th_expect_invalid(vkattn_mha_set_weights(layer, &w), "w->gate_bias");
    w.gate_bias = k;
    TH_OK(ctx, vkattn_mha_set_weights(layer, &w));
    vkattn_mha_destroy(layer);
    d.no_bias = true, w.gate_bias = NULL;
    TH_OK(ctx, vkattn_mha_create(ctx, &d, &layer));
    TH_OK(ctx, vkattn_mha_set_weights(layer, &w));
    vkattn_mha_destroy(layer);
    w.gate_kernel = NULL;

    /* the reference checks the same desc and weights */
    const vkattn_layer_call call = {.batch = 1, .tq = 1, .tv = 1};
    float out[8];
    const vkattn_layer_host_io hio = {.query = k, .value = k, .output = out};
    w.key_bias = k;
    TH_OK(ctx, vkattn_reference_mha(&good, &w, &call, &hio));
    d = good, d.num_heads = 0;
    th_expect_invalid(vkattn_reference_mha(&d, &w, &call, &hio), "num_heads");
    w.output_kernel = NULL;
    th_expect_invalid(vkattn_reference_mha(&good, &w, &call, &hio), "w->output_kernel");
    w.output_kernel = k;
    d = good, d.use_gate = true;
    th_expect_invalid(vkattn_reference_mha(&d, &w, &call, &hio), "w->gate_kernel");
    w.gate_kernel = k;
    th_expect_invalid(vkattn_reference_mha(&d, &w, &call, &hio), "w->gate_bias");
    w.gate_kernel = NULL;
    vkattn_layer_host_io bad = hio;
    bad.query = NULL;
    th_expect_invalid(vkattn_reference_mha(&good, &w, &call, &bad), "io->query");
    vkattn_layer_call sc = call;
    sc.return_attention_scores = true;
    th_expect_invalid(vkattn_reference_mha(&good, &w, &sc, &hio), "io->scores");
    th_assert_validation_clean();
}

/* A layer and a valid io for (B 2, Tq 3, Tv 4); the test breaks one thing at
 * a time. */
typedef struct bad_fixture {
    vkattn_mha *layer;
    vkattn_tensor *q, *k, *v, *qm, *vm, *am, *am_heads, *out, *scores, *small;
} bad_fixture;

static void test_bad_record(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const vkattn_mha_desc desc = {.num_heads = 2, .key_dim = 3, .query_width = 4, .key_width = 6,
                                  .value_width = 5, .output_dim = 7};
    bad_fixture f;
    TH_OK(ctx, vkattn_mha_create(ctx, &desc, &f.layer));
    f.q = th_tensor(ctx, 2 * 3 * 4, NULL), f.k = th_tensor(ctx, 2 * 4 * 6, NULL);
    f.v = th_tensor(ctx, 2 * 4 * 5, NULL), f.qm = th_tensor(ctx, 2 * 3, NULL);
    f.vm = th_tensor(ctx, 2 * 4, NULL), f.am = th_tensor(ctx, 2 * 3 * 4, NULL);
    f.am_heads = th_tensor(ctx, 2 * 2 * 3 * 4, NULL), f.out = th_tensor(ctx, 2 * 3 * 7, NULL);
    f.scores = th_tensor(ctx, 2 * 2 * 3 * 4, NULL), f.small = th_tensor(ctx, 5, NULL);
    const vkattn_layer_call good = {.batch = 2, .tq = 3, .tv = 4};
    const vkattn_layer_io io0 = {.query = f.q, .value = f.v, .key = f.k, .output = f.out};
    vkattn_layer_call c = good;
    vkattn_layer_io io = io0;

    th_expect_invalid(vkattn_mha_record(NULL, VKATTN_RUN_NOW, &c, &io), "layer");
    th_expect_invalid(vkattn_mha_record(f.layer, VKATTN_RUN_NOW, NULL, &io), "call");
    th_expect_invalid(vkattn_mha_record(f.layer, VKATTN_RUN_NOW, &c, NULL), "io");
    c.batch = 0;
    th_expect_invalid(vkattn_mha_record(f.layer, VKATTN_RUN_NOW, &c, &io), "call->batch");
    c = good, c.tv = 0;
    th_expect_invalid(vkattn_mha_record(f.layer, VKATTN_RUN_NOW, &c, &io), "call->tv");
    c = good, c.path = (vkattn_sdpa_path)7;
    th_expect_invalid(vkattn_mha_record(f.layer, VKATTN_RUN_NOW, &c, &io), "call->path");
    c = good, c.causal = (vkattn_causal)3;
    th_expect_invalid(vkattn_mha_record(f.layer, VKATTN_RUN_NOW, &c, &io), "call->causal");
    c = good;
    io.query = f.small;
    th_expect_invalid(vkattn_mha_record(f.layer, VKATTN_RUN_NOW, &c, &io), "io->query");
    io = io0, io.value = f.small;
    th_expect_invalid(vkattn_mha_record(f.layer, VKATTN_RUN_NOW, &c, &io), "io->value");
    io = io0, io.key = f.v; /* (B, Tv, Dv): wrong width for the key */
    th_expect_invalid(vkattn_mha_record(f.layer, VKATTN_RUN_NOW, &c, &io), "io->key");
    io = io0, io.key = NULL; /* key = value needs key_width == value_width */
    th_expect_invalid(vkattn_mha_record(f.layer, VKATTN_RUN_NOW, &c, &io), "io->key");
    io = io0, io.output = f.small;
    th_expect_invalid(vkattn_mha_record(f.layer, VKATTN_RUN_NOW, &c, &io), "io->output");
    io = io0, io.query_mask = f.vm;
    th_expect_invalid(vkattn_mha_record(f.layer, VKATTN_RUN_NOW, &c, &io), "io->query_mask");
    io = io0, io.value_mask = f.qm;
    th_expect_invalid(vkattn_mha_record(f.layer, VKATTN_RUN_NOW, &c, &io), "io->value_mask");
    io = io0, io.attention_mask = f.am_heads; /* per-head size without the flag */
    th_expect_invalid(vkattn_mha_record(f.layer, VKATTN_RUN_NOW, &c, &io), "io->attention_mask");
    io = io0, io.attention_mask = f.am, io.attention_mask_per_head = true;
    th_expect_invalid(vkattn_mha_record(f.layer, VKATTN_RUN_NOW, &c, &io), "io->attention_mask");
    io = io0, io.attention_mask_per_head = true;
    th_expect_invalid(vkattn_mha_record(f.layer, VKATTN_RUN_NOW, &c, &io), "io->attention_mask");
    {
        /* shapes that broadcast to neither (B, Tq, Tv) nor (B, H, Tq, Tv) */
        const lt_mask_shape bad[] = {{4, {2, 3, 3, 4}}, {3, {2, 1, 5}}, {2, {2, 4}}};
        float zeros[72] = {0};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            vkattn_tensor *t = lt_mask_tensor(ctx, &bad[i], zeros);
            io = io0, io.attention_mask = t;
            th_expect_invalid(vkattn_mha_record(f.layer, VKATTN_RUN_NOW, &c, &io), "io->attention_mask has shape (");
            assert_non_null(strstr(vkattn_last_error(), "(B, H, Tq, Tv) = (2, 2, 3, 4)"));
            vkattn_tensor_destroy(t);
        }
    }
    io = io0, c.return_attention_scores = true;
    th_expect_invalid(vkattn_mha_record(f.layer, VKATTN_RUN_NOW, &c, &io), "io->scores");
    io.scores = f.am; /* (B, Tq, Tv): scores are per head */
    th_expect_invalid(vkattn_mha_record(f.layer, VKATTN_RUN_NOW, &c, &io), "io->scores");
    c = good, io = io0, io.scores = f.scores;
    th_expect_invalid(vkattn_mha_record(f.layer, VKATTN_RUN_NOW, &c, &io), "io->scores");
    io = io0, io.output = f.q;
    assert_int_equal(vkattn_mha_record(f.layer, VKATTN_RUN_NOW, &c, &io), VKATTN_ERROR_INVALID_ARGUMENT);
    /* and the good call still works after all that */
    io = io0, io.query_mask = f.qm, io.value_mask = f.vm, io.attention_mask = f.am_heads;
    io.attention_mask_per_head = true;
    float ones[24 * 2];
    for (int i = 0; i < 48; i++)
        ones[i] = 1.0f;
    TH_OK(ctx, vkattn_tensor_upload(f.q, ones, 0, 24));
    TH_OK(ctx, vkattn_tensor_upload(f.k, ones, 0, 48));
    TH_OK(ctx, vkattn_tensor_upload(f.v, ones, 0, 40));
    TH_OK(ctx, vkattn_tensor_upload(f.qm, ones, 0, 6));
    TH_OK(ctx, vkattn_tensor_upload(f.vm, ones, 0, 8));
    TH_OK(ctx, vkattn_tensor_upload(f.am_heads, ones, 0, 48));
    TH_OK(ctx, vkattn_mha_record(f.layer, VKATTN_RUN_NOW, &c, &io));
    th_assert_validation_clean();
    vkattn_tensor *all[] = {f.q, f.k, f.v, f.qm, f.vm, f.am, f.am_heads, f.out, f.scores, f.small};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vkattn_tensor_destroy(all[i]);
    vkattn_mha_destroy(f.layer);
}

/* A 16-bit layer dtype dt: masks stay f32 in a layer of it (also on the
 * cached path, whose 16-bit data test_mha_cache.c runs); an f32 layer
 * refuses data tensors of it. */
static void bad_dtype_row(vkattn_context *ctx, vkattn_dtype dt)
{
    vkattn_mha_desc desc = {.num_heads = 2, .key_dim = 4, .query_width = 6, .value_width = 6,
                            .dtype = dt};
    vkattn_mha *layer = NULL;
    TH_OK(ctx, vkattn_mha_create(ctx, &desc, &layer));
    const uint32_t B = 1, T = 3;
    vkattn_tensor *x = th_typed_tensor(ctx, B * T * 6, dt, NULL);
    TH_OK(ctx, vkattn_tensor_fill(x, 0.5f));
    vkattn_tensor *out = th_typed_tensor(ctx, B * T * 6, dt, NULL);
    vkattn_tensor *m16 = th_typed_tensor(ctx, B * T, dt, NULL);
    vkattn_tensor *am16 = th_typed_tensor(ctx, B * T * T, dt, NULL);
    vkattn_layer_call call = {.batch = B, .tq = T, .tv = T};
    vkattn_layer_io io = {.query = x, .value = x, .output = out, .value_mask = m16};
    TH_EXPECT_ERROR(vkattn_mha_record(layer, VKATTN_RUN_NOW, &call, &io),
                    VKATTN_ERROR_INVALID_ARGUMENT, "io->value_mask");
    assert_non_null(strstr(vkattn_last_error(), th_dtype_name(dt)));
    io.value_mask = NULL, io.query_mask = m16;
    TH_EXPECT_ERROR(vkattn_mha_record(layer, VKATTN_RUN_NOW, &call, &io),
                    VKATTN_ERROR_INVALID_ARGUMENT, "io->query_mask");
    io.query_mask = NULL, io.attention_mask = am16;
    TH_EXPECT_ERROR(vkattn_mha_record(layer, VKATTN_RUN_NOW, &call, &io),
                    VKATTN_ERROR_INVALID_ARGUMENT, "io->attention_mask");
    io.attention_mask = NULL;
    /* the cached path: an f32 mask over the cache, (B, capacity) */
    vkattn_kv_cache_desc cd = {.batch = B, .kv_heads = 2, .capacity = T, .key_dim = 4,
                               .value_dim = 4};
    vkattn_kv_cache *cache = NULL;
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    call.causal = VKATTN_CAUSAL_TOP_LEFT;
    io.value_mask = m16;
    TH_EXPECT_ERROR(vkattn_mha_record_cached(layer, VKATTN_RUN_NOW, &call, &io, cache),
                    VKATTN_ERROR_INVALID_ARGUMENT, "io->value_mask");
    io.value_mask = NULL;
    desc.dtype = VKATTN_DTYPE_F32;
    vkattn_mha *f32_layer = NULL;
    TH_OK(ctx, vkattn_mha_create(ctx, &desc, &f32_layer));
    call.causal = VKATTN_CAUSAL_NONE;
    TH_EXPECT_ERROR(vkattn_mha_record(f32_layer, VKATTN_RUN_NOW, &call, &io),
                    VKATTN_ERROR_UNSUPPORTED, "io->query");
    th_assert_validation_clean();
    vkattn_kv_cache_destroy(cache);
    vkattn_mha_destroy(f32_layer);
    vkattn_mha_destroy(layer);
    vkattn_tensor *all[] = {x, out, m16, am16};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vkattn_tensor_destroy(all[i]);
}

/* The layer's dtype: a bad one, then each 16-bit row's bad data types. */
static void test_bad_dtypes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const vkattn_mha_desc desc = {.num_heads = 2, .key_dim = 4, .query_width = 6,
                                  .value_width = 6, .dtype = (vkattn_dtype)7};
    vkattn_mha *layer = NULL;
    TH_EXPECT_ERROR(vkattn_mha_create(ctx, &desc, &layer),
                    VKATTN_ERROR_INVALID_ARGUMENT, "desc->dtype");
    assert_null(layer);
    for (size_t k = 0; k < NDTYPES; k++)
        if (dtypes[k].narrow_io)
            bad_dtype_row(ctx, dtypes[k].dtype);
}

TU_MAIN(th_setup, th_teardown,
    test_example_case, test_tutorial_shape, test_mask_kinds, test_query_mask_rows,
    test_self_attention_and_key, test_small_and_odd, test_dropout, test_paths,
    test_weights_round_trip, test_chained_calls, test_random_cases, test_bad_create_and_weights,
    test_sliding_window, test_gate, test_bad_record, test_mask_broadcast, test_fixed_cases,
    test_bad_dtypes)
