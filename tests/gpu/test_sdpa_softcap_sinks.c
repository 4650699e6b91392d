/* Logit soft-capping and attention sinks (vkattn_sdpa_params.softcap,
 * has_sinks) in SDPA and in MultiHeadAttention / GroupedQueryAttention.
 *
 * SDPA: random small shapes (odd sizes, Tq != Tv, batch 1, grouped K/V heads,
 * bias, a value mask that masks every key of batch 0, bottom-right causal,
 * dropout once, f16 once), the chained and the fused path for soft-capping,
 * both for sinks (the chained one scales its weights by the LSE of a fused
 * run), weights returned sometimes. Soft-capping is checked against
 * vkattn_reference_sdpa. Sinks against an independent equivalent problem
 * the public reference solves: one extra key in front with k = 0, v = 0 and a
 * bias of sink_h on that key column (its score is 0, which soft-capping keeps
 * 0; bottom-right causal keeps its alignment with Tv + 1 keys), and the fused
 * path's lse against the row log-sum-exp with the sink, computed here in
 * double. Layers: MultiHeadAttention with both (dropout on) and
 * GroupedQueryAttention with sinks, vs vkattn_reference_mha / _gqa, whose
 * sinks go through the library's internal reference, scores returned
 * sometimes. Refusals: sinks on a chained call the fused kernel cannot serve,
 * any backward with either, decode.
 *
 * Bounds: as tests/gpu/test_sdpa.c (2e-5 of max|ref| for f32: fp32 rounding
 * of dk-term dot products, tanh_robust's few ulp, the sink factor's exp);
 * 2e-3 for the f16 case (its output is rounded to f16, 2^-11 relative, and
 * the sink pass rounds it twice); the lse 1e-5 absolute (|lse| = O(1)
 * here). Outputs are poisoned with NaN. 9-13 s on lavapipe at load ~4. */
#include "harness.h"
#include "multi_head_case.h"

#include <vkattn/decode.h>
#include <vkattn/gqa.h>
#include <vkattn/sdpa_backward.h>
#include <vkattn/reference.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOUND 2e-5
#define BOUND_F16 2e-3
#define LSE_BOUND 1e-5

typedef struct op_case {
    vkattn_sdpa_params p;
    bool f16;
    bool lse; /* ask for the fused path's lse (sinks only) */
} op_case;

static uint32_t kv_heads(const vkattn_sdpa_params *p) { return p->kv_heads ? p->kv_heads : p->heads; }
static uint32_t dv_of(const vkattn_sdpa_params *p) { return p->dv ? p->dv : p->dk; }

/* The expected output with sinks: the equivalent problem with one extra key
 * (k = 0, v = 0, bias sink_h) in front, sinks off, the zero policy. */
static void reference_with_sinks(const vkattn_sdpa_params *p, const float *q, const float *k,
                                 const float *v, const float *bias, const float *vm,
                                 const float *sinks, float *out, float *weights)
{
    const uint32_t B = p->batch, H = p->heads, Hkv = kv_heads(p), Tq = p->tq, Tv = p->tv;
    const uint32_t dk = p->dk, dv = dv_of(p), T1 = Tv + 1;
    float *k1 = tu_floats((size_t)B * Hkv * T1 * dk), *v1 = tu_floats((size_t)B * Hkv * T1 * dv);
    float *b1 = tu_floats((size_t)B * H * Tq * T1), *vm1 = tu_floats((size_t)B * T1);
    for (size_t bh = 0; bh < (size_t)B * Hkv; bh++) {
        memset(k1 + bh * T1 * dk, 0, dk * sizeof(float));
        memcpy(k1 + bh * T1 * dk + dk, k + bh * Tv * dk, (size_t)Tv * dk * sizeof(float));
        memset(v1 + bh * T1 * dv, 0, dv * sizeof(float));
        memcpy(v1 + bh * T1 * dv + dv, v + bh * Tv * dv, (size_t)Tv * dv * sizeof(float));
    }
    for (size_t r = 0; r < (size_t)B * H * Tq; r++) {
        b1[r * T1] = sinks[(r / Tq) % H];
        for (uint32_t j = 0; j < Tv; j++)
            b1[r * T1 + 1 + j] = bias ? bias[r * Tv + j] : 0.0f;
    }
    for (uint32_t b = 0; b < B; b++) {
        vm1[(size_t)b * T1] = 1.0f;
        for (uint32_t j = 0; j < Tv; j++)
            vm1[(size_t)b * T1 + 1 + j] = vm ? vm[(size_t)b * Tv + j] : 1.0f;
    }
    vkattn_sdpa_params p1 = *p;
    p1.tv = T1, p1.has_sinks = false, p1.mask.has_bias = true, p1.mask.has_value_mask = true;
    p1.mask.bias_broadcast = (vkattn_broadcast){0};
    p1.mask.masked_row = VKATTN_MASKED_ROW_ZERO;
    float *w1 = tu_floats((size_t)B * H * Tq * T1);
    assert_int_equal(vkattn_reference_sdpa(&p1, NULL, q, k1, v1, b1, vm1, NULL, out,
                                           p->return_weights ? w1 : NULL),
                     VKATTN_SUCCESS);
    for (size_t r = 0; p->return_weights && r < (size_t)B * H * Tq; r++) /* the keys' columns */
        memcpy(weights + r * Tv, w1 + r * T1 + 1, Tv * sizeof(float));
    free(k1), free(v1), free(b1), free(vm1), free(w1);
}

/* The row log-sum-exp with the sink, in double (the fused path's lse). */
static double lse_with_sink(const vkattn_sdpa_params *p, const float *q, const float *k,
                            const float *bias, const float *vm, const float *sinks, size_t row)
{
    const uint32_t H = p->heads, Tq = p->tq, Tv = p->tv, dk = p->dk;
    const uint32_t b = (uint32_t)(row / ((size_t)H * Tq)), h = (uint32_t)(row / Tq % H);
    const uint32_t i = (uint32_t)(row % Tq), group = H / kv_heads(p);
    const double scale = p->scale ? p->scale : 1.0 / sqrt((double)dk);
    const float *kb = k + ((size_t)b * kv_heads(p) + h / group) * Tv * dk;
    double m = sinks[h], terms[64];
    int n = 0;
    for (uint32_t j = 0; j < Tv; j++) {
        if ((vm && vm[(size_t)b * Tv + j] == 0.0f) ||
            (p->mask.causal == VKATTN_CAUSAL_BOTTOM_RIGHT && (int64_t)j > (int64_t)i + Tv - Tq))
            continue;
        double s = 0.0;
        for (uint32_t e = 0; e < dk; e++)
            s += (double)q[row * dk + e] * kb[(size_t)j * dk + e];
        s *= scale;
        if (p->softcap > 0.0f)
            s = p->softcap * tanh(s / p->softcap);
        terms[n] = s + (bias ? bias[row * Tv + j] : 0.0);
        m = fmax(m, terms[n++]);
    }
    double sum = exp(sinks[h] - m);
    for (int t = 0; t < n; t++)
        sum += exp(terms[t] - m);
    return m + log(sum);
}

static void describe(const op_case *c, char *buf, size_t n)
{
    const vkattn_sdpa_params *p = &c->p;
    snprintf(buf, n,
             "B=%u H=%u Hkv=%u Tq=%u Tv=%u dk=%u dv=%u softcap=%g sinks=%d bias=%d vm=%d "
             "causal=%d drop=%g path=%d f16=%d weights=%d",
             p->batch, p->heads, kv_heads(p), p->tq, p->tv, p->dk, dv_of(p), (double)p->softcap,
             p->has_sinks, p->mask.has_bias, p->mask.has_value_mask, (int)p->mask.causal,
             (double)p->dropout.rate, (int)p->path, c->f16, p->return_weights);
}

static void run_op(vkattn_context *ctx, const op_case *c)
{
    const vkattn_sdpa_params *p = &c->p;
    const size_t nq = (size_t)p->batch * p->heads * p->tq * p->dk;
    const size_t nk = (size_t)p->batch * kv_heads(p) * p->tv * p->dk;
    const size_t nv = (size_t)p->batch * kv_heads(p) * p->tv * dv_of(p);
    const size_t rows = (size_t)p->batch * p->heads * p->tq, nout = rows * dv_of(p);
    const size_t nbias = rows * p->tv, nvm = (size_t)p->batch * p->tv;
    float *q = tu_floats(nq), *k = tu_floats(nk), *v = tu_floats(nv), *ref = tu_floats(nout);
    float *bias = tu_floats(nbias), *vm = tu_floats(nvm), *sinks = tu_floats(p->heads);
    float *ref_w = tu_floats(nbias);
    tu_fill_uniform(q, nq, -2, 2); /* scores beyond a small cap: tanh bends */
    tu_fill_uniform(k, nk, -2, 2);
    tu_fill_uniform(v, nv, -1, 1);
    tu_fill_uniform(bias, nbias, -1, 1);
    tu_fill_mask(vm, nvm, 0.8f);
    memset(vm, 0, p->tv * sizeof(float)); /* batch 0: every row fully masked */
    tu_fill_uniform(sinks, p->heads, -2, 2);
    if (c->f16)
        th_round_f16(q, nq), th_round_f16(k, nk), th_round_f16(v, nv);
    const float *b = p->mask.has_bias ? bias : NULL, *m = p->mask.has_value_mask ? vm : NULL;
    if (p->has_sinks)
        reference_with_sinks(p, q, k, v, b, m, sinks, ref, ref_w);
    else
        assert_int_equal(vkattn_reference_sdpa(p, NULL, q, k, v, b, m, NULL, ref,
                                               p->return_weights ? ref_w : NULL),
                         VKATTN_SUCCESS);

    const vkattn_dtype t = c->f16 ? VKATTN_DTYPE_F16 : VKATTN_DTYPE_F32;
    vkattn_sdpa_io io = {
        .q = th_typed_tensor(ctx, nq, t, q), .k = th_typed_tensor(ctx, nk, t, k),
        .v = th_typed_tensor(ctx, nv, t, v), .out = th_typed_tensor(ctx, nout, t, NULL),
        .bias = b ? th_tensor(ctx, nbias, b) : NULL, .value_mask = m ? th_tensor(ctx, nvm, m) : NULL,
        .sinks = p->has_sinks ? th_tensor(ctx, p->heads, sinks) : NULL,
        .lse = c->lse ? th_tensor(ctx, rows, NULL) : NULL,
        .weights = p->return_weights ? th_tensor(ctx, nbias, NULL) : NULL,
    };
    TH_OK(ctx, vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, p, &io));
    char what[300];
    describe(c, what, sizeof what);
    float *got = th_download(io.out, nout);
    TU_ASSERT_CLOSE(got, ref, nout, c->f16 ? BOUND_F16 : BOUND, what);
    free(got);
    if (p->return_weights) {
        got = th_download(io.weights, nbias);
        strncat(what, " (weights)", sizeof what - strlen(what) - 1);
        TU_ASSERT_CLOSE(got, ref_w, nbias, BOUND, what);
        free(got);
    }
    if (c->lse) {
        got = th_download(io.lse, rows);
        for (size_t r = 0; r < rows; r++) {
            const double want = lse_with_sink(p, q, k, b, m, sinks, r);
            if (!(fabs(got[r] - want) <= LSE_BOUND))
                fail_msg("%s: lse[%zu] = %.9g, want %.9g", what, r, (double)got[r], want);
        }
        free(got);
    }
    vkattn_tensor *ts[] = {io.q,          io.k,     io.v,   io.out,    io.bias,
                           io.value_mask, io.sinks, io.lse, io.weights};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        vkattn_tensor_destroy(ts[i]);
    free(q), free(k), free(v), free(ref), free(bias), free(vm), free(sinks), free(ref_w);
    th_assert_validation_clean();
}

static vkattn_sdpa_params random_params(void)
{
    const uint32_t hkv = tu_rand_range(1, 2), group = tu_rand_range(1, 3);
    vkattn_sdpa_params p = {
        .batch = tu_rand_range(1, 3), .heads = hkv * group, .kv_heads = hkv,
        .tq = tu_rand_range(1, 9), .tv = tu_rand_range(1, 11), .dk = tu_rand_range(1, 9),
        .dv = tu_rand_range(1, 7),
        .mask = {.has_bias = tu_rand_range(0, 1) == 1, .has_value_mask = true,
                 .causal = tu_rand_range(0, 1) ? VKATTN_CAUSAL_BOTTOM_RIGHT : VKATTN_CAUSAL_NONE,
                 .masked_row = tu_rand_range(0, 1) ? VKATTN_MASKED_ROW_UNIFORM
                                                   : VKATTN_MASKED_ROW_ZERO},
    };
    return p;
}

static void test_softcap(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int n = 0; n < 8; n++) {
        op_case c = {.p = random_params()};
        c.p.softcap = tu_rand_float(0.3f, 2.0f);
        c.p.path = n % 2 ? VKATTN_SDPA_FUSED : VKATTN_SDPA_UNFUSED;
        c.p.return_weights = n % 4 == 0;
        if (n == 2) /* dropout once, chained */
            c.p.dropout = (vkattn_dropout_params){.rate = 0.3f, .training = true, .seed = 5};
        if (n == 3) /* dropout once, fused */
            c.p.dropout = (vkattn_dropout_params){.rate = 0.2f, .training = true, .seed = 11};
        c.f16 = n == 5;
        run_op(ctx, &c);
    }
}

static void test_sinks(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int n = 0; n < 12; n++) {
        op_case c = {.p = random_params()};
        c.p.has_sinks = true;
        /* the chained path: its weights returned (AUTO then takes it) or not */
        c.p.path = n % 2 ? VKATTN_SDPA_FUSED : n % 4 ? VKATTN_SDPA_UNFUSED : VKATTN_SDPA_AUTO;
        c.p.return_weights = n % 4 == 0 && n != 8;
        if (n % 3 == 1)
            c.p.softcap = tu_rand_float(0.3f, 2.0f);
        c.f16 = n == 4 || n == 7; /* f16 q, k, v and out on both paths */
        c.lse = n % 2 == 1;
        run_op(ctx, &c);
    }
}

/* ---------------------------------------------------------------- layers */

static void run_layer(vkattn_context *ctx, bool gqa, float softcap, bool use_sinks, float dropout,
                      bool scores)
{
    const vkattn_layer_call call = {.batch = tu_rand_range(1, 2), .tq = tu_rand_range(2, 7),
                                    .tv = tu_rand_range(2, 9), .training = dropout > 0.0f,
                                    .causal = VKATTN_CAUSAL_BOTTOM_RIGHT,
                                    .return_attention_scores = scores};
    vkattn_mha_desc md = {.num_heads = 3, .key_dim = 5, .value_dim = 3, .query_width = 6,
                          .value_width = 7, .dropout = dropout, .softcap = softcap,
                          .use_sinks = use_sinks};
    vkattn_gqa_desc gd = {.num_query_heads = 4, .num_key_value_heads = 2, .head_dim = 3,
                          .query_width = 5, .value_width = 6, .dropout = dropout,
                          .softcap = softcap, .use_sinks = use_sinks};
    const mh_case m = {.w = gqa ? mh_gqa_widths(&gd) : rc_mha_widths_of(&md), .call = &call,
                       .value_mask = true, .query_mask = true};
    host h;
    mh_host_random(&m, &h);
    float *sinks = tu_floats(m.w.H);
    tu_fill_uniform(sinks, m.w.H, -1.5f, 1.5f);
    h.w.sinks = use_sinks ? sinks : NULL;
    const sizes s = mh_sizes(&m);
    float *ref = tu_floats(s.out), *got = tu_floats(s.out);
    float *ref_s = tu_floats(s.scores), *got_s = tu_floats(s.scores);
    const vkattn_layer_host_io hio = mh_host_io(&m, &h, ref, ref_s);
    if (gqa)
        assert_int_equal(vkattn_reference_gqa(&gd, &h.w, &call, &hio), VKATTN_SUCCESS);
    else
        assert_int_equal(vkattn_reference_mha(&md, &h.w, &call, &hio), VKATTN_SUCCESS);
    vkattn_layer_io io = mh_gpu_io(ctx, &m, &h);
    vkattn_result r;
    if (gqa) {
        vkattn_gqa *layer = NULL;
        TH_OK(ctx, vkattn_gqa_create(ctx, &gd, &layer));
        TH_OK(ctx, vkattn_gqa_set_weights(layer, &h.w));
        r = vkattn_gqa_record(layer, VKATTN_RUN_NOW, &call, &io);
        vkattn_gqa_destroy(layer);
    } else {
        vkattn_mha *layer = NULL;
        TH_OK(ctx, vkattn_mha_create(ctx, &md, &layer));
        TH_OK(ctx, vkattn_mha_set_weights(layer, &h.w));
        r = vkattn_mha_record(layer, VKATTN_RUN_NOW, &call, &io);
        vkattn_mha_destroy(layer);
    }
    TH_OK(ctx, r);
    mh_gpu_io_finish(ctx, &m, &io, true, got, got_s);
    char what[120];
    snprintf(what, sizeof what, "%s B=%u Tq=%u Tv=%u softcap=%g sinks=%d drop=%g scores=%d",
             gqa ? "gqa" : "mha", call.batch, call.tq, call.tv, (double)softcap, use_sinks,
             (double)dropout, scores);
    TU_ASSERT_CLOSE(got, ref, s.out, BOUND, what);
    if (scores)
        TU_ASSERT_CLOSE(got_s, ref_s, s.scores, BOUND, what);
    free(ref), free(got), free(ref_s), free(got_s), free(sinks);
    mh_host_free(&m, &h);
    th_assert_validation_clean();
}

static void test_layers(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    run_layer(ctx, false, 0.8f, true, 0.25f, false);
    run_layer(ctx, false, 1.2f, false, 0.0f, true);
    run_layer(ctx, false, 0.7f, true, 0.3f, true); /* chained, dropout: scores before it */
    run_layer(ctx, true, 0.0f, true, 0.0f, false);
    run_layer(ctx, true, 0.6f, true, 0.0f, true);
}

/* ---------------------------------------------------------------- refusals */

static void test_refusals(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const vkattn_sdpa_params p = {.batch = 1, .heads = 2, .tq = 2, .tv = 3, .dk = 4,
                                  .has_sinks = true};
    vkattn_tensor *x = th_tensor(ctx, 2048, NULL), *s = th_tensor(ctx, 2, NULL);
    vkattn_sdpa_io io = {.q = x, .k = x, .v = x, .out = th_tensor(ctx, 16, NULL), .sinks = s};
    /* the chained path takes its sinks' LSE from the fused kernel: not past its widths */
    vkattn_sdpa_params wide = p;
    wide.path = VKATTN_SDPA_UNFUSED, wide.dk = 300, wide.dv = 4;
    TH_EXPECT_ERROR(vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &wide, &io),
                    VKATTN_ERROR_UNSUPPORTED, "has_sinks");
    vkattn_sdpa_io no_sinks = io;
    no_sinks.sinks = NULL;
    TH_EXPECT_ERROR(vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &p, &no_sinks),
                    VKATTN_ERROR_INVALID_ARGUMENT, "io->sinks");
    vkattn_sdpa_params bad = p;
    bad.softcap = -1.0f;
    TH_EXPECT_ERROR(vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &bad, &io),
                    VKATTN_ERROR_INVALID_ARGUMENT, "softcap");
    uint64_t floats;
    uint32_t count;
    vkattn_sdpa_params capped = {.batch = 1, .tq = 2, .tv = 3, .dk = 4, .softcap = 5.0f};
    TH_EXPECT_ERROR(vkattn_sdpa_backward_workspace_size(ctx, &capped, false, false, &floats,
                                                        &count),
                    VKATTN_ERROR_UNSUPPORTED, "softcap");
    vkattn_sdpa_decode_params dp = {.batch = 1, .heads = 1, .tq = 1, .dk = 4, .has_sinks = true};
    vkattn_sdpa_decode_io dio = {0};
    TH_EXPECT_ERROR(vkattn_sdpa_decode_record(ctx, VKATTN_RUN_NOW, &dp, &dio),
                    VKATTN_ERROR_UNSUPPORTED, "has_sinks");
    /* the layer: no backward yet */
    const vkattn_mha_desc md = {.num_heads = 2, .key_dim = 4, .query_width = 4,
                                .value_width = 4, .use_sinks = true};
    vkattn_mha *layer = NULL;
    TH_OK(ctx, vkattn_mha_create(ctx, &md, &layer));
    const vkattn_layer_call plain = {.batch = 1, .tq = 2, .tv = 3};
    vkattn_tensor *y = th_tensor(ctx, 8, NULL), *sc = NULL;
    vkattn_layer_io lio = {.query = y, .value = th_tensor(ctx, 12, NULL),
                           .output = th_tensor(ctx, 8, NULL)};
    vkattn_layer_grads g = {.grad_query = th_tensor(ctx, 8, NULL),
                            .grad_value = th_tensor(ctx, 12, NULL)};
    TH_EXPECT_ERROR(vkattn_mha_backward_record(layer, VKATTN_RUN_NOW, &plain, &lio, &g, NULL),
                    VKATTN_ERROR_UNSUPPORTED, "use_sinks");
    vkattn_mha_destroy(layer);
    vkattn_tensor *ts[] = {x,          s,          io.out,       y,           sc,
                           lio.value, lio.output, g.grad_query, g.grad_value};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        vkattn_tensor_destroy(ts[i]);
    th_assert_validation_clean();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_softcap),
        cmocka_unit_test(test_sinks),
        cmocka_unit_test(test_layers),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, th_setup, th_teardown);
}
