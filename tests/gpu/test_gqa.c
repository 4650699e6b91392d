/* GroupedQueryAttention (vkattn/gqa.h) vs its CPU reference
 * (vkattn_reference_gqa), vs MultiHeadAttention with its key/value kernels
 * repeated Nq/Nkv times on the head axis, and vs Keras's own known-value test.
 *
 * Random shapes and weights: Nq in {1, 2, 4, 6, 8} with Nkv in {1, Nq/2, Nq},
 * odd widths, Dq != Dk != Dv, Tq != Tv, batch 1, key given or omitted (key =
 * value), self-attention, use_bias on and off, every mask kind (query, value,
 * shared, per-head and broadcast attention masks, causal top-left and
 * bottom-right), sliding windows, dropout (the Philox stream must match the
 * reference bit for bit), returned scores (B, Nq, Tq, Tv), the fused and
 * chained SDPA paths, Keras use_gate on and off; outputs poisoned with NaN before every run; exact
 * output-bias rows for fully masked query rows; bad arguments (each error
 * names the argument, and a refused record leaves the command buffer empty).
 *
 * Bounds (test_mha.c's, for the same reason: inputs in [-1, 1], kernels scaled
 * by 1/sqrt(fan-in), so every stage stays O(1) and the GPU differs from the
 * double-accumulating reference only by fp32 rounding in projections, logits
 * and sums of at most ~40 terms): max|got - ref| <= 2e-5 * max(max|ref|, 1)
 * for outputs, 5e-6 absolute for the scores (in [0, 1]). The reference of GQA
 * and of MHA with repeated kernels compute the same f32 products and sums in
 * the same order, so they must agree exactly. The Keras values are given to 4
 * significant digits: within 5e-4 (outputs ~2.5) and 5e-5 (scores).
 *
 * The f16 layer (desc.dtype VKATTN_DTYPE_F16; Keras's float16 policy, as
 * test_mha.c for MultiHeadAttention) is the same random row under dtype
 * f16: the reference runs in f32 on the f16-rounded inputs and weights, the
 * shapes are smaller (Nq up to 4, widths up to 19, T up to 11, batch up to 2)
 * and each of query, key, value, output and scores an f16 or an f32 tensor at
 * random; two fixed f16 cases, an f16 layer's cached calls with an f16 cache,
 * and its bad arguments. Its bound: the layer rounds projections, heads and
 * context (and an f16 output once more) to f16, each within eps16 / 2
 * relative (eps16 = 2^-10), which through the logits, softmax and the two
 * projections stay a few eps16 of the output scale:
 *   max|out - ref| <= 8 eps16 max(max|ref|, 1)      (7.8e-3)
 *   max|scores - ref| <= 4 eps16                     (3.9e-3, scores in [0, 1])
 * Sharing a K/V head between query heads changes no rounding. */
#include "cached_steps.h"
#include "harness.h"
#include "layer_out.h"
#include "multi_head_case.h"
#include "op_table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUT_BOUND 2e-5
#define SCORE_BOUND 5e-6
#define EPS16 (1.0 / 1024.0)

/* the bounds of the header comment, per layer dtype */
static const struct {
    double out, scores;
} bound[2] = {[VKATTN_DTYPE_F32] = {OUT_BOUND, SCORE_BOUND},
              [VKATTN_DTYPE_F16] = {8 * EPS16, 4 * EPS16}};

typedef struct gcase {
    vkattn_gqa_desc desc;
    vkattn_layer_call call;
    bool key_given, self_attn, query_mask, value_mask;
    attn_kind attn;
    const char *am_form; /* with attn SHARED: the mask's broadcast shape (mask_forms.h) */
    vkattn_dtype tq, tk, tv, tout, tscores; /* of the io tensors (f16 layers only) */
} gcase;

static uint32_t key_width_of(const vkattn_gqa_desc *d)
{
    return d->key_width ? d->key_width : d->value_width;
}

/* The case as multi_head_case.h sees it. */
static mh_case view(const gcase *m)
{
    const vkattn_gqa_desc *d = &m->desc;
    return (mh_case){.w = mh_gqa_widths(d), .no_bias = d->no_bias, .use_gate = d->use_gate,
                     .call = &m->call, .key_given = m->key_given,
                     .self_attn = m->self_attn, .query_mask = m->query_mask,
                     .value_mask = m->value_mask, .attn = m->attn, .am_form = m->am_form};
}

/* A fresh layer, weights set, outputs poisoned; downloads out and scores. */
static vkattn_result run_gpu(vkattn_context *ctx, const gcase *m, const host *h, float *out,
                             float *scores)
{
    const mh_case v = view(m);
    vkattn_gqa *layer = NULL;
    TH_OK(ctx, vkattn_gqa_create(ctx, &m->desc, &layer));
    TH_OK(ctx, vkattn_gqa_set_weights(layer, &h->w));
    vkattn_layer_io io = mh_gpu_io(ctx, &v, h);
    const sizes s = mh_sizes(&v);
    const bool shared_value = io.value == io.query;
    mh_retype(ctx, &io.query, m->tq, s.query, h->query); /* f32: as made */
    if (shared_value)
        io.value = io.query;
    else
        mh_retype(ctx, &io.value, m->tv, s.value, h->value);
    mh_retype(ctx, &io.key, m->tk, s.key, h->key);
    mh_retype(ctx, &io.output, m->tout, s.out, NULL);
    mh_retype(ctx, &io.scores, m->tscores, s.scores, NULL);
    vkattn_result r = vkattn_gqa_record(layer, VKATTN_RUN_NOW, &m->call, &io);
    mh_gpu_io_finish(ctx, &v, &io, r == VKATTN_SUCCESS, out, scores);
    vkattn_gqa_destroy(layer);
    return r;
}

static void describe(const gcase *m, char *buf, size_t n)
{
    char d[160], k[96];
    rc_describe_gqa(d, sizeof d, &m->desc), rc_describe_call(k, sizeof k, &m->call);
    snprintf(buf, n, "gqa %s %s | %s self=%d key=%d qm=%d vm=%d attn=%d form=%s types q=%d k=%d "
             "v=%d out=%d scores=%d", th_dtype_name(m->desc.dtype), d, k, m->self_attn,
             m->key_given, m->query_mask, m->value_mask, (int)m->attn,
             m->am_form ? m->am_form : "-", (int)m->tq, (int)m->tk, (int)m->tv, (int)m->tout,
             (int)m->tscores);
}

/* Runs one case on the GPU and the reference under the layer dtype's bound;
 * returns the output error. */
static double check_case(vkattn_context *ctx, const gcase *m)
{
    char what[420];
    describe(m, what, sizeof what);
    const mh_case v = view(m);
    const sizes s = mh_sizes(&v);
    const bool f16 = m->desc.dtype == VKATTN_DTYPE_F16;
    host h;
    mh_host_random(&v, &h);
    if (f16)
        mh_host_round_f16(&v, &h);
    th_layer_out o = th_layer_out_make(s.out, s.scores);
    vkattn_layer_host_io hio = mh_host_io(&v, &h, o.ref, o.ref_scores);
    TH_OK(ctx, vkattn_reference_gqa(&m->desc, &h.w, &m->call, &hio));
    vkattn_result r = run_gpu(ctx, m, &h, o.got, o.got_scores);
    if (r != VKATTN_SUCCESS)
        fail_msg("%s: vkattn_gqa_record(VKATTN_RUN_NOW) gave %s (%s)", what, vkattn_result_name(r),
                 vkattn_last_error());
    const bool scores = m->call.return_attention_scores;
    const double err = th_layer_out_check(&o, scores, bound[m->desc.dtype].out,
                                          bound[m->desc.dtype].scores, what);
    if (!f16) { /* exact output-bias rows: f32 only (f16 rounds the bias) */
        mh_check_masked_query_rows(&v, &h, o.ref, scores ? o.ref_scores : NULL, "reference");
        mh_check_masked_query_rows(&v, &h, o.got, scores ? o.got_scores : NULL, what);
    }
    th_assert_validation_clean();
    mh_host_free(&v, &h);
    th_layer_out_free(&o);
    return err;
}

static vkattn_dtype any_type(void)
{
    return tu_rand_range(0, 1) ? VKATTN_DTYPE_F16 : VKATTN_DTYPE_F32;
}

/* A random case of a layer of dtype dt: f16 on smaller shapes, with each io
 * tensor f16 or f32 at random. */
static gcase random_case(vkattn_dtype dt)
{
    static const mh_gqa_bounds bounds[2] = {
        [VKATTN_DTYPE_F32] = {.heads = 5, .max_head_dim = 12, .max_width = 23, .max_t = 17,
                              .max_batch = 3, .dropout_one_in = 3, .max_dropout = 0.6f,
                              .offset = true, .gate = true},
        [VKATTN_DTYPE_F16] = {.heads = 4, .max_head_dim = 9, .max_width = 19, .max_t = 11,
                              .max_batch = 2, .dropout_one_in = 4, .max_dropout = 0.5f},
    };
    const mh_gqa_case r = mh_random_gqa(&bounds[dt]);
    gcase m = {.desc = r.desc, .call = r.call, .key_given = r.key_given, .self_attn = r.self_attn,
               .query_mask = r.query_mask, .value_mask = r.value_mask, .attn = r.attn};
    if (dt == VKATTN_DTYPE_F16) {
        m.desc.dtype = dt;
        m.tq = any_type();
        m.tv = m.self_attn ? m.tq : any_type();
        m.tk = any_type();
        m.tout = any_type();
        m.tscores = any_type();
    }
    return m;
}

/* The random row over the dtypes: 20 f32 cases, 16 f16 ones. */
static void test_random_cases(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const struct {
        vkattn_dtype dt;
        int cases;
    } rows[] = {{VKATTN_DTYPE_F32, 20}, {VKATTN_DTYPE_F16, 16}};
    for (size_t d = 0; d < sizeof rows / sizeof rows[0]; d++) {
        double worst = 0.0;
        for (int i = 0; i < rows[d].cases; i++) {
            const gcase m = random_case(rows[d].dt);
            const double err = check_case(ctx, &m);
            worst = err > worst ? err : worst;
        }
        printf("# %s GQA: largest output error %.3g (bound %.3g)\n", th_dtype_name(rows[d].dt),
               worst, bound[rows[d].dt].out);
    }
}

/* Each mask kind alone, both causal alignments (bottom-right with Tq > Tv:
 * the first rows see no key), the broadcast forms of the attention mask, and
 * sliding windows with either causal alignment; Nkv 1, Nq/2 and Nq. */
static void test_masks_and_windows(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const uint32_t nkv[] = {1, 3, 6};
    for (int kind = 0; kind < 9; kind++) {
        gcase m = {
            .desc = {.head_dim = 5, .num_query_heads = 6, .num_key_value_heads = nkv[kind % 3],
                     .query_width = 7, .key_width = 9, .value_width = 11},
            .call = {.batch = 2, .tq = 7, .tv = 13, .return_attention_scores = kind % 2 == 0},
            .key_given = true,
            .query_mask = kind == 1 || kind == 8,
            .value_mask = kind == 2 || kind == 8,
            .attn = kind == 3 ? ATTN_SHARED : kind == 4 || kind == 8 ? ATTN_PER_HEAD : ATTN_NONE,
        };
        m.call.causal = kind == 6   ? VKATTN_CAUSAL_BOTTOM_RIGHT
                        : kind == 5 ? VKATTN_CAUSAL_TOP_LEFT
                                    : VKATTN_CAUSAL_NONE;
        if (kind == 6)
            m.call.tq = 17;
        if (kind == 7) {
            m.attn = ATTN_SHARED;
            m.am_form = "1HQV"; /* per query head, broadcast over the batch */
        }
        check_case(ctx, &m);
    }
    for (int i = 0; i < 6; i++) {
        gcase m = random_case(VKATTN_DTYPE_F32);
        m.call.causal = i % 3 == 0 ? VKATTN_CAUSAL_NONE
                        : i % 3 == 1 ? VKATTN_CAUSAL_TOP_LEFT
                                     : VKATTN_CAUSAL_BOTTOM_RIGHT;
        m.desc.sliding_window = (int32_t)rc_random_window(m.call.tq, m.call.tv);
        check_case(ctx, &m);
    }
}

/* Key omitted (key = value) and self-attention, batch 1 and length 1,
 * dropout in training on every path. */
static void test_key_batch_dropout(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    gcase m = {
        .desc = {.head_dim = 3, .num_query_heads = 4, .num_key_value_heads = 2,
                 .query_width = 5, .value_width = 6},
        .call = {.batch = 1, .tq = 9, .tv = 4, .return_attention_scores = true},
    };
    check_case(ctx, &m); /* key omitted */
    m.self_attn = true, m.desc.value_width = 5, m.call.tv = 9;
    check_case(ctx, &m);
    m.call.tq = m.call.tv = 1, m.desc.num_key_value_heads = 1;
    check_case(ctx, &m);
    for (int path = 0; path < 3; path++) {
        gcase d = {
            .desc = {.head_dim = 4, .num_query_heads = 6, .num_key_value_heads = 2,
                     .query_width = 7, .value_width = 5, .dropout = 0.4f},
            .call = {.batch = 2, .tq = 6, .tv = 11, .training = true, .seed = 0xfeedull,
                     .offset = 7, .path = (vkattn_sdpa_path)path,
                     .return_attention_scores = path != VKATTN_SDPA_FUSED},
            .value_mask = true,
        };
        check_case(ctx, &d);
    }
}

/* GroupedQueryAttention == MultiHeadAttention(num_heads = Nq, key_dim = h)
 * with the key/value kernels repeated: the references exactly, the GPU GQA
 * within the bound of the MHA reference; with masks, causal, windows,
 * dropout and scores. */
static void test_equals_mha(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 8; i++) {
        gcase m = random_case(VKATTN_DTYPE_F32);
        if (m.desc.num_key_value_heads == m.desc.num_query_heads && i % 2 == 0)
            m.desc.num_key_value_heads = 1;
        char what[400];
        describe(&m, what, sizeof what);
        const vkattn_gqa_desc *g = &m.desc;
        const uint32_t G = g->num_query_heads / g->num_key_value_heads, hd = g->head_dim;
        const mh_case v = view(&m);
        const sizes s = mh_sizes(&v);
        host h;
        mh_host_random(&v, &h);
        const uint32_t nkv = g->num_key_value_heads;
        vkattn_mha_weights mw = h.w;
        mw.key_kernel = mh_repeat_heads(h.w.key_kernel, key_width_of(g), nkv, G, hd);
        mw.value_kernel = mh_repeat_heads(h.w.value_kernel, g->value_width, nkv, G, hd);
        mw.key_bias = mh_repeat_heads(h.w.key_bias, 1, nkv, G, hd);
        mw.value_bias = mh_repeat_heads(h.w.value_bias, 1, nkv, G, hd);
        const vkattn_mha_desc md = {
            .num_heads = g->num_query_heads, .key_dim = hd, .query_width = g->query_width,
            .key_width = g->key_width, .value_width = g->value_width, .no_bias = g->no_bias,
            .dropout = g->dropout, .sliding_window = (uint32_t)g->sliding_window,
            .use_gate = g->use_gate, /* the gate has Nq heads in both: the same weights */
        };
        float *mref = tu_floats(s.out), *msc = tu_floats(s.scores);
        float *gref = tu_floats(s.out), *gsc = tu_floats(s.scores);
        float *got = tu_floats(s.out), *got_sc = tu_floats(s.scores);
        tu_poison(mref, s.out), tu_poison(msc, s.scores), tu_poison(gref, s.out);
        tu_poison(gsc, s.scores), tu_poison(got, s.out), tu_poison(got_sc, s.scores);
        vkattn_layer_host_io mio = mh_host_io(&v, &h, mref, msc);
        TH_OK(ctx, vkattn_reference_mha(&md, &mw, &m.call, &mio));
        vkattn_layer_host_io gio = mh_host_io(&v, &h, gref, gsc);
        TH_OK(ctx, vkattn_reference_gqa(&m.desc, &h.w, &m.call, &gio));
        if (memcmp(mref, gref, s.out * sizeof(float)))
            fail_msg("%s: GQA reference differs from MHA with repeated kernels", what);
        if (m.call.return_attention_scores && memcmp(msc, gsc, s.scores * sizeof(float)))
            fail_msg("%s: GQA reference scores differ from MHA's", what);
        TH_OK(ctx, run_gpu(ctx, &m, &h, got, got_sc));
        const double err = tu_max_rel_err(got, mref, s.out, 1.0);
        if (!TU_WITHIN(err, OUT_BOUND))
            fail_msg("%s: GPU GQA vs MHA reference: output error %.3g exceeds %.3g", what, err,
                     OUT_BOUND);
        if (m.call.return_attention_scores &&
            !TU_WITHIN(tu_max_abs_err(got_sc, msc, s.scores), SCORE_BOUND))
            fail_msg("%s: GPU GQA vs MHA reference: scores differ", what);
        free(mw.key_kernel), free(mw.value_kernel), free(mw.key_bias), free(mw.value_bias);
        free(mref), free(msc), free(gref), free(gsc), free(got), free(got_sc);
        mh_host_free(&v, &h);
    }
    th_assert_validation_clean();
}

/* Keras's own test (keras/src/layers/attention/grouped_query_attention_test.py):
 * head_dim = Nq = Nkv = 8, query = key = I (1, 8, 8), value = arange(64)/100,
 * every kernel the identity repeated on axis 1, biases 0. */
static void test_keras_known_values(void **state)
{
    const vkattn_gqa_desc desc = {.head_dim = 8, .num_query_heads = 8,
                                  .num_key_value_heads = 8, .query_width = 8,
                                  .value_width = 8};
    float eye[64], value[64], kernel[512], zeros[64] = {0};
    for (int i = 0; i < 64; i++) {
        eye[i] = i / 8 == i % 8 ? 1.0f : 0.0f;
        value[i] = (float)i / 100.0f;
    }
    for (int a = 0; a < 8; a++)
        for (int n = 0; n < 8; n++)
            for (int c = 0; c < 8; c++)
                kernel[(a * 8 + n) * 8 + c] = a == c ? 1.0f : 0.0f;
    const vkattn_gqa_weights w = {kernel, zeros, kernel, zeros, kernel, zeros, kernel, zeros};
    const vkattn_layer_call call = {.batch = 1, .tq = 8, .tv = 8, .return_attention_scores = true};
    static const double rows[8] = {2.407, 2.439, 2.472, 2.504, 2.536, 2.568, 2.601, 2.633};
    float out[64], scores[512];
    for (int gpu = 0; gpu < 2; gpu++) {
        tu_poison(out, 64), tu_poison(scores, 512);
        if (!gpu) { /* the reference runs without a device too */
            const vkattn_layer_host_io hio = {.query = eye, .key = eye, .value = value,
                                              .output = out, .scores = scores};
            TH_OK(NULL, vkattn_reference_gqa(&desc, &w, &call, &hio));
        } else {
            vkattn_context *ctx = TH_CTX(state);
            vkattn_gqa *layer;
            TH_OK(ctx, vkattn_gqa_create(ctx, &desc, &layer));
            TH_OK(ctx, vkattn_gqa_set_weights(layer, &w));
            vkattn_tensor *q = th_tensor(ctx, 64, eye), *v = th_tensor(ctx, 64, value);
            vkattn_tensor *o = th_tensor(ctx, 64, NULL), *sc = th_tensor(ctx, 512, NULL);
            vkattn_layer_io io = {.query = q, .key = q, .value = v, .output = o, .scores = sc};
            TH_OK(ctx, vkattn_gqa_record(layer, VKATTN_RUN_NOW, &call, &io));
            TH_OK(ctx, vkattn_tensor_download(o, out, 0, 64));
            TH_OK(ctx, vkattn_tensor_download(sc, scores, 0, 512));
            th_assert_validation_clean();
            vkattn_tensor_destroy(q), vkattn_tensor_destroy(v);
            vkattn_tensor_destroy(o), vkattn_tensor_destroy(sc);
            vkattn_gqa_destroy(layer);
        }
        const char *who = gpu ? "GPU" : "reference";
        for (int i = 0; i < 512; i++) {
            const double want = i % 64 / 8 == i % 8 ? 0.1691 : 0.1187;
            if (!TU_WITHIN(fabs(scores[i] - want), 5e-5))
                fail_msg("%s: scores[%d] = %.6f, Keras has %.4f", who, i, (double)scores[i],
                         want);
        }
        for (int i = 0; i < 64; i++)
            if (!TU_WITHIN(fabs(out[i] - rows[i / 8]), 5e-4))
                fail_msg("%s: output[%d][%d] = %.5f, Keras has %.3f", who, i / 8, i % 8,
                         (double)out[i], rows[i / 8]);
    }
}

/* set_weights keeps exactly what it was given in the GQA shapes. */
static void test_weights_round_trip(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    gcase m = {.desc = {.head_dim = 3, .num_query_heads = 6, .num_key_value_heads = 2,
                        .query_width = 5, .key_width = 7, .value_width = 4},
               .call = {.batch = 1, .tq = 1, .tv = 1}};
    const mh_case v = view(&m);
    const sizes s = mh_sizes(&v);
    host h;
    mh_host_random(&v, &h);
    vkattn_gqa *layer;
    TH_OK(ctx, vkattn_gqa_create(ctx, &m.desc, &layer));
    TH_OK(ctx, vkattn_gqa_set_weights(layer, &h.w));
    vkattn_gqa_weights got = {
        tu_floats(s.wq), tu_floats(s.bq), tu_floats(s.wk), tu_floats(s.bk),
        tu_floats(s.wv), tu_floats(s.bv), tu_floats(s.wo), tu_floats(s.bo),
    };
    TH_OK(ctx, vkattn_gqa_get_weights(layer, &got));
    assert_memory_equal(got.key_kernel, h.w.key_kernel, s.wk * sizeof(float));
    assert_memory_equal(got.key_bias, h.w.key_bias, s.bk * sizeof(float));
    assert_memory_equal(got.value_kernel, h.w.value_kernel, s.wv * sizeof(float));
    assert_memory_equal(got.value_bias, h.w.value_bias, s.bv * sizeof(float));
    assert_memory_equal(got.query_kernel, h.w.query_kernel, s.wq * sizeof(float));
    assert_memory_equal(got.output_kernel, h.w.output_kernel, s.wo * sizeof(float));
    assert_memory_equal(got.output_bias, h.w.output_bias, s.bo * sizeof(float));
    mh_weights_free(&got);
    vkattn_gqa_destroy(layer);
    mh_host_free(&v, &h);
    th_assert_validation_clean();
}

/* ------------------------------------------------------------ bad arguments */

/* expr must be INVALID_ARGUMENT with a message naming arg */
#define expect_invalid(expr, arg) TH_EXPECT_ERROR(expr, VKATTN_ERROR_INVALID_ARGUMENT, arg)

static void test_bad_create_and_weights(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const vkattn_gqa_desc good = {.head_dim = 3, .num_query_heads = 4,
                                  .num_key_value_heads = 2, .query_width = 5, .value_width = 6};
    vkattn_gqa *layer = (vkattn_gqa *)&layer; /* non-NULL: create must reset it */
    expect_invalid(vkattn_gqa_create(NULL, &good, &layer), "ctx");
    assert_null(layer);
    expect_invalid(vkattn_gqa_create(ctx, NULL, &layer), "desc");
    expect_invalid(vkattn_gqa_create(ctx, &good, NULL), "out");
    struct {
        vkattn_gqa_desc d;
        const char *arg;
    } bad[] = {{good, "desc->head_dim"},
               {good, "desc->num_query_heads"},
               {good, "desc->num_key_value_heads"},
               {good, "desc->num_query_heads (4) is not a multiple"},
               {good, "desc->sliding_window"},
               {good, "desc->dropout"},
               {good, "desc->query_width"},
               {good, "desc->value_width"},
               {good, "desc->dtype"}};
    bad[0].d.head_dim = 0, bad[1].d.num_query_heads = 0, bad[2].d.num_key_value_heads = 0;
    bad[3].d.num_key_value_heads = 3, bad[4].d.sliding_window = -1, bad[5].d.dropout = NAN;
    bad[6].d.query_width = 0, bad[7].d.value_width = 0, bad[8].d.dtype = (vkattn_dtype)9;
    const vkattn_layer_call call = {.batch = 1, .tq = 1, .tv = 1};
    float k[64] = {0}, out[8];
    vkattn_gqa_weights w = {k, k, k, k, k, k, k, k};
    const vkattn_layer_host_io hio = {.query = k, .value = k, .output = out};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        layer = (vkattn_gqa *)&layer;
        expect_invalid(vkattn_gqa_create(ctx, &bad[i].d, &layer), bad[i].arg);
        assert_null(layer);
        if (i < 8) /* the reference checks the same desc (it ignores dtype) */
            expect_invalid(vkattn_reference_gqa(&bad[i].d, &w, &call, &hio), bad[i].arg);
    }
    vkattn_gqa_destroy(NULL);

    TH_OK(ctx, vkattn_gqa_create(ctx, &good, &layer));
    TH_OK(ctx, vkattn_gqa_set_weights(layer, &w));
    expect_invalid(vkattn_gqa_set_weights(NULL, &w), "layer");
    expect_invalid(vkattn_gqa_set_weights(layer, NULL), "w");
    w.key_kernel = NULL;
    expect_invalid(vkattn_gqa_set_weights(layer, &w), "w->key_kernel");
    assert_non_null(strstr(vkattn_last_error(), "vkattn_gqa_set_weights"));
    expect_invalid(vkattn_reference_gqa(&good, &w, &call, &hio), "w->key_kernel");
    w.key_kernel = k, w.value_bias = NULL;
    expect_invalid(vkattn_gqa_set_weights(layer, &w), "w->value_bias");
    expect_invalid(vkattn_gqa_get_weights(layer, NULL), "w");
    vkattn_gqa_destroy(layer);
    /* use_gate: the gate's kernel and bias are required (the bias unless no_bias) */
    vkattn_gqa_desc gated = good;
    gated.use_gate = true;
    w.value_bias = k;
    TH_OK(ctx, vkattn_gqa_create(ctx, &gated, &layer));
    expect_invalid(vkattn_gqa_set_weights(layer, &w), "w->gate_kernel");
    assert_non_null(strstr(vkattn_last_error(), "vkattn_gqa_set_weights"));
    expect_invalid(vkattn_reference_gqa(&gated, &w, &call, &hio), "w->gate_kernel");
    w.gate_kernel = k;
    expect_invalid(vkattn_gqa_set_weights(layer, &w), "w->gate_bias");
    expect_invalid(vkattn_reference_gqa(&gated, &w, &call, &hio), "w->gate_bias");
    w.gate_bias = k;
    TH_OK(ctx, vkattn_gqa_set_weights(layer, &w));
    vkattn_gqa_destroy(layer);
    th_assert_validation_clean();
}

static void test_bad_record(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    /* B 2, Tq 3, Tv 4, Nq 4, Nkv 2 */
    const vkattn_gqa_desc desc = {.head_dim = 3, .num_query_heads = 4, .num_key_value_heads = 2,
                                  .query_width = 5, .key_width = 6, .value_width = 7};
    vkattn_gqa *layer;
    TH_OK(ctx, vkattn_gqa_create(ctx, &desc, &layer));
    vkattn_tensor *q = th_tensor(ctx, 2 * 3 * 5, NULL), *k = th_tensor(ctx, 2 * 4 * 6, NULL);
    vkattn_tensor *v = th_tensor(ctx, 2 * 4 * 7, NULL), *out = th_tensor(ctx, 2 * 3 * 5, NULL);
    vkattn_tensor *scores_kv = th_tensor(ctx, 2 * 2 * 3 * 4, NULL); /* Nkv heads: wrong */
    vkattn_tensor *mask_kv = th_tensor(ctx, 2 * 2 * 3 * 4, NULL);
    const vkattn_layer_call good = {.batch = 2, .tq = 3, .tv = 4};
    const vkattn_layer_io io0 = {.query = q, .value = v, .key = k, .output = out};
    vkattn_layer_call c = good;
    vkattn_layer_io io = io0;
    TH_OK(ctx, vkattn_tensor_fill(out, NAN));

    /* a refused record leaves the command buffer empty: the poisoned output
     * stays NaN after it is submitted */
    VkCommandBuffer cmd;
    TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
    expect_invalid(vkattn_gqa_record(NULL, cmd, &c, &io), "layer");
    expect_invalid(vkattn_gqa_record(layer, NULL, &c, &io), "cmd");
    expect_invalid(vkattn_gqa_record(layer, cmd, NULL, &io), "call");
    expect_invalid(vkattn_gqa_record(layer, cmd, &c, NULL), "io");
    c.batch = 0;
    expect_invalid(vkattn_gqa_record(layer, cmd, &c, &io), "call->batch");
    c = good, io.key = NULL; /* key = value needs key_width == value_width */
    expect_invalid(vkattn_gqa_record(layer, cmd, &c, &io), "io->key");
    assert_non_null(strstr(vkattn_last_error(), "vkattn_gqa_record"));
    io = io0, io.key = v;
    expect_invalid(vkattn_gqa_record(layer, cmd, &c, &io), "io->key");
    io = io0, io.output = v;
    expect_invalid(vkattn_gqa_record(layer, cmd, &c, &io), "io->output");
    io = io0, io.attention_mask = mask_kv, io.attention_mask_per_head = true;
    expect_invalid(vkattn_gqa_record(layer, cmd, &c, &io), "io->attention_mask");
    io = io0, c.return_attention_scores = true, io.scores = scores_kv;
    expect_invalid(vkattn_gqa_record(layer, cmd, &c, &io), "io->scores");
    TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd));
    float *o = th_download(out, 2 * 3 * 5);
    for (int i = 0; i < 2 * 3 * 5; i++)
        assert_true(isnan(o[i]));
    free(o);
    c = good, io = io0;
    expect_invalid(vkattn_gqa_record(layer, VKATTN_RUN_NOW, &c, &(vkattn_layer_io){.query = q, .output = out}),
                   "io->value");
    expect_invalid(vkattn_gqa_record(layer, VKATTN_PREPARE, &c, &(vkattn_layer_io){.query = q, .output = out}),
                   "io->value");
    /* the good call works after all that */
    TH_OK(ctx, vkattn_gqa_record(layer, VKATTN_PREPARE, &c, &io));
    TH_OK(ctx, vkattn_gqa_record(layer, VKATTN_RUN_NOW, &c, &io));
    th_assert_validation_clean();
    vkattn_tensor *all[] = {q, k, v, out, scores_kv, mask_kv};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vkattn_tensor_destroy(all[i]);
    vkattn_gqa_destroy(layer);
}

/* f16 layers. Every run covers, whatever the draw: multi-query
 * self-attention with every mask, causal and a window, f16 tensors throughout;
 * and cross-attention with Nkv = Nq/2 on the fused path, f32 query and
 * output. */
static void test_f16_fixed_cases(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const gcase cases[] = {
        {.desc = {.head_dim = 5, .num_query_heads = 4, .num_key_value_heads = 1,
                  .query_width = 13, .value_width = 13, .sliding_window = 3,
                  .dtype = VKATTN_DTYPE_F16},
         .call = {.batch = 1, .tq = 9, .tv = 9, .causal = VKATTN_CAUSAL_TOP_LEFT,
                  .return_attention_scores = true},
         .self_attn = true, .query_mask = true, .value_mask = true, .attn = ATTN_PER_HEAD,
         .tq = VKATTN_DTYPE_F16, .tv = VKATTN_DTYPE_F16, .tk = VKATTN_DTYPE_F16,
         .tout = VKATTN_DTYPE_F16, .tscores = VKATTN_DTYPE_F16},
        {.desc = {.head_dim = 6, .num_query_heads = 6, .num_key_value_heads = 3,
                  .query_width = 11, .key_width = 9, .value_width = 15, .no_bias = true,
                  .dtype = VKATTN_DTYPE_F16},
         .call = {.batch = 2, .tq = 5, .tv = 12, .path = VKATTN_SDPA_FUSED},
         .key_given = true, .value_mask = true, .tq = VKATTN_DTYPE_F32,
         .tk = VKATTN_DTYPE_F16, .tv = VKATTN_DTYPE_F16, .tout = VKATTN_DTYPE_F32},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(ctx, &cases[i]);
}

/* An f16 layer with a cache of Nkv f16 heads, f16 io: a prefill of 5 then
 * steps of 1 and 2 equal (within the f16 bound) one causal call over the 8
 * tokens. */
static void test_f16_cached(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    enum { B = 2, T = 8, CAP = 8 };
    const uint32_t steps[] = {5, 1, 2};
    const gcase m = {
        .desc = {.head_dim = 4, .num_query_heads = 4, .num_key_value_heads = 2,
                 .query_width = 7, .value_width = 7, .dtype = VKATTN_DTYPE_F16},
        .call = {.batch = B, .tq = T, .tv = T, .causal = VKATTN_CAUSAL_TOP_LEFT},
        .self_attn = true,
    };
    const mh_case v = view(&m);
    const sizes s = mh_sizes(&v);
    host h;
    mh_host_random(&v, &h);
    mh_host_round_f16(&v, &h);
    float *ref = tu_floats(s.out), *got = tu_floats(s.out);
    tu_poison(ref, s.out), tu_poison(got, s.out);
    const vkattn_layer_host_io hio = mh_host_io(&v, &h, ref, NULL);
    TH_OK(ctx, vkattn_reference_gqa(&m.desc, &h.w, &m.call, &hio));
    vkattn_gqa *layer = NULL;
    TH_OK(ctx, vkattn_gqa_create(ctx, &m.desc, &layer));
    TH_OK(ctx, vkattn_gqa_set_weights(layer, &h.w));
    const vkattn_kv_cache_desc cd = {.batch = B, .kv_heads = 2, .capacity = CAP, .key_dim = 4,
                                     .value_dim = 4, .dtype = VKATTN_DTYPE_F16};
    vkattn_kv_cache *cache = NULL;
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    const th_cached_run r = {.gqa = layer, .cache = cache, .batch = B, .len = T,
                             .width = m.desc.query_width, .out_width = m.desc.query_width,
                             .io_type = VKATTN_DTYPE_F16};
    th_cached_steps(ctx, &r, h.query, 0, steps, sizeof steps / sizeof steps[0], got);
    const double err = tu_max_rel_err(got, ref, s.out, 1.0);
    if (!TU_WITHIN(err, bound[VKATTN_DTYPE_F16].out))
        fail_msg("f16 cached GQA: output error %.3g exceeds %.3g", err,
                 bound[VKATTN_DTYPE_F16].out);
    th_assert_validation_clean();
    vkattn_kv_cache_destroy(cache);
    vkattn_gqa_destroy(layer);
    mh_host_free(&v, &h);
    free(ref), free(got);
}

/* An f16 layer refuses f16 masks and a bad dtype, naming them; an f32 layer
 * refuses f16 data: spoils of one valid f16 call. */
typedef struct dargs {
    vkattn_gqa *layer, *f32_layer;
    vkattn_layer_call call;
    vkattn_layer_io io;
    vkattn_tensor *m16; /* an f16 mask */
} dargs;

static vkattn_result dargs_call(vkattn_context *ctx, void *v)
{
    (void)ctx;
    const dargs *a = v;
    return vkattn_gqa_record(a->layer, VKATTN_RUN_NOW, &a->call, &a->io);
}

TH_SPOIL(dargs, f16_value_mask, VKATTN_ERROR_INVALID_ARGUMENT, "io->value_mask",
         a->io.value_mask = a->m16)
TH_SPOIL(dargs, f16_query_mask, VKATTN_ERROR_INVALID_ARGUMENT, "io->query_mask",
         a->io.query_mask = a->m16)
TH_SPOIL(dargs, f32_layer, VKATTN_ERROR_UNSUPPORTED, "io->query", a->layer = a->f32_layer)
static const th_spoil_fn dtype_spoils[] = {f16_value_mask, f16_query_mask, f32_layer};

static void test_bad_dtypes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_gqa_desc desc = {.head_dim = 4, .num_query_heads = 2, .num_key_value_heads = 1,
                            .query_width = 6, .value_width = 6, .dtype = (vkattn_dtype)7};
    dargs a = {.call = {.batch = 1, .tq = 3, .tv = 3}};
    TH_EXPECT_ERROR(vkattn_gqa_create(ctx, &desc, &a.layer), VKATTN_ERROR_INVALID_ARGUMENT,
                    "desc->dtype");
    assert_null(a.layer);
    desc.dtype = VKATTN_DTYPE_F16;
    TH_OK(ctx, vkattn_gqa_create(ctx, &desc, &a.layer));
    desc.dtype = VKATTN_DTYPE_F32;
    TH_OK(ctx, vkattn_gqa_create(ctx, &desc, &a.f32_layer));
    vkattn_tensor *x = th_typed_tensor(ctx, 3 * 6, VKATTN_DTYPE_F16, NULL);
    TH_OK(ctx, vkattn_tensor_fill(x, 0.5f));
    a.io = (vkattn_layer_io){.query = x, .value = x,
                             .output = th_typed_tensor(ctx, 3 * 6, VKATTN_DTYPE_F16, NULL)};
    a.m16 = th_typed_tensor(ctx, 3, VKATTN_DTYPE_F16, NULL);
    TH_RUN_SPOILS(ctx, dargs_call, a, dtype_spoils);
    vkattn_gqa_destroy(a.f32_layer);
    vkattn_gqa_destroy(a.layer);
    vkattn_tensor_destroy(x), vkattn_tensor_destroy(a.io.output), vkattn_tensor_destroy(a.m16);
}

TU_MAIN(th_setup, th_teardown,
    test_keras_known_values, test_random_cases, test_masks_and_windows, test_key_batch_dropout,
    test_equals_mha, test_weights_round_trip, test_bad_create_and_weights, test_bad_record,
    test_f16_fixed_cases, test_f16_cached, test_bad_dtypes)
