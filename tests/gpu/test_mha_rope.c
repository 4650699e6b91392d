/* QK-norm and rotary embeddings in GroupedQueryAttention and
 * MultiHeadAttention (use_qk_norm, use_rope; shaders/head_prep.comp) vs the
 * CPU reference (vkattn_reference_gqa/mha, reference/head_prep.c).
 *
 * Small random shapes: odd widths, Tq != Tv, batch 1 to 3, Nkv < Nq, rotary_dim
 * < head_dim, both layouts, scaling factors, with and without positions, each
 * option alone and both, the fused and chained SDPA paths (scores returned on
 * the chained one), an f16 layer once; the cached path (prefill and steps,
 * positions read from the cache's lengths on the device) against one causal
 * TOP_LEFT call over the whole sequence; the backward (every gradient, the
 * norm weights' included) vs vkattn_reference_gqa_backward; bad positions
 * refused by name.
 * Outputs poisoned with NaN before every run. About 1 s on lavapipe.
 *
 * Bounds: test_gqa.c's, max|got - ref| <= 2e-5 * max(max|ref|, 1), holds with
 * positions below 64: the GPU's fp32 angle p * inv_freq differs from the
 * double one by at most ~p * 2^-23 rad (docs/SEMANTICS.md), under 8e-6 rad.
 * Positions up to 4096: 2e-3 (4096 * 2^-23 = 5e-4 rad, times |q||k| terms).
 * f16 (inputs and weights exact in f16): 8 * 2^-11, as test_gqa.c's f16 rows. */
#include "cached_steps.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rcase {
    uint32_t batch, nq, nkv, hd, dq, dv, tq, tv;
    bool norm, rope;
    uint32_t rotary_dim;
    vkattn_rope_layout layout;
    float scaling;
    uint32_t max_pos; /* 0: no positions given; else positions in [0, max_pos) */
    vkattn_sdpa_path path;
    bool scores, f16, via_mha;
    vkattn_causal causal;
    float softcap; /* test_cached: with soft-capping and sinks too */
    bool sinks;
} rcase;

enum { WQ, BQ, WK, BK, WV, BV, WO, BO, QN, KN, N_W };

/* values on a 1/256 grid: exact in f16, so the f16 layer sees the same data */
static float *grid_floats(size_t n, float a)
{
    float *x = tu_floats(n);
    tu_fill_uniform(x, n, -a, a);
    for (size_t i = 0; i < n; i++)
        x[i] = roundf(x[i] * 256.0f) / 256.0f;
    return x;
}

static float *positions(size_t n, uint32_t max_pos)
{
    float *p = tu_floats(n);
    for (size_t i = 0; i < n; i++)
        p[i] = (float)tu_rand_range(0, max_pos - 1);
    return p;
}

static vkattn_gqa_desc desc_of(const rcase *c)
{
    return (vkattn_gqa_desc){
        .head_dim = c->hd, .num_query_heads = c->nq, .num_key_value_heads = c->nkv,
        .query_width = c->dq, .value_width = c->dv,
        .dtype = c->f16 ? VKATTN_DTYPE_F16 : VKATTN_DTYPE_F32,
        .use_qk_norm = c->norm, .qk_norm_epsilon = c->norm ? 1e-5f : 0.0f,
        .use_rope = c->rope,
        .rope = {.max_wavelength = c->rope ? 10000.0f : 0.0f, .scaling_factor = c->scaling,
                 .rotary_dim = c->rotary_dim, .layout = c->layout},
        .softcap = c->softcap, .use_sinks = c->sinks};
}

static vkattn_mha_desc mha_desc_of(const vkattn_gqa_desc *g)
{
    return (vkattn_mha_desc){
        .num_heads = g->num_query_heads, .key_dim = g->head_dim, .query_width = g->query_width,
        .value_width = g->value_width, .dtype = g->dtype, .use_qk_norm = g->use_qk_norm,
        .qk_norm_epsilon = g->qk_norm_epsilon, .use_rope = g->use_rope, .rope = g->rope};
}

static void describe(const rcase *c, char *buf, size_t n)
{
    snprintf(buf, n,
             "B=%u Nq=%u Nkv=%u hd=%u Dq=%u Dv=%u Tq=%u Tv=%u norm=%d rope=%d rot=%u layout=%d "
             "scaling=%g max_pos=%u path=%d scores=%d f16=%d mha=%d causal=%d",
             c->batch, c->nq, c->nkv, c->hd, c->dq, c->dv, c->tq, c->tv, c->norm, c->rope,
             c->rotary_dim, (int)c->layout, (double)c->scaling, c->max_pos, (int)c->path,
             c->scores, c->f16, c->via_mha, (int)c->causal);
}

static void check_case(vkattn_context *ctx, const rcase *c, double bound)
{
    char what[300];
    describe(c, what, sizeof what);
    const size_t n[N_W] = {(size_t)c->dq * c->nq * c->hd, (size_t)c->nq * c->hd,
                           (size_t)c->dv * c->nkv * c->hd, (size_t)c->nkv * c->hd,
                           (size_t)c->dv * c->nkv * c->hd, (size_t)c->nkv * c->hd,
                           (size_t)c->nq * c->hd * c->dq, c->dq, c->hd, c->hd};
    float *a[N_W];
    for (int i = 0; i < N_W; i++) {
        a[i] = grid_floats(n[i], i == WO || i == BO ? 1.0f : 0.5f);
        if (i == QN || i == KN)
            for (size_t e = 0; e < n[i]; e++)
                a[i][e] += 1.0f; /* norm weights near 1, as trained ones are */
    }
    const vkattn_gqa_weights w = {a[WQ], a[BQ], a[WK], a[BK], a[WV], a[BV], a[WO], a[BO],
                                  NULL, NULL, c->norm ? a[QN] : NULL, c->norm ? a[KN] : NULL};
    const size_t nq_in = (size_t)c->batch * c->tq * c->dq, nv_in = (size_t)c->batch * c->tv * c->dv;
    const size_t n_out = nq_in, n_sc = (size_t)c->batch * c->nq * c->tq * c->tv;
    float *q = grid_floats(nq_in, 1.0f), *v = grid_floats(nv_in, 1.0f);
    float *qp = c->max_pos ? positions((size_t)c->batch * c->tq, c->max_pos) : NULL;
    float *kp = c->max_pos ? positions((size_t)c->batch * c->tv, c->max_pos) : NULL;
    float *ref = tu_floats(n_out), *ref_sc = tu_floats(n_sc);
    const vkattn_gqa_desc desc = desc_of(c);
    const vkattn_layer_call call = {.batch = c->batch, .tq = c->tq, .tv = c->tv,
                                    .causal = c->causal, .path = c->path,
                                    .return_attention_scores = c->scores};
    const vkattn_layer_host_io hio = {.query = q, .value = v, .output = ref,
                                      .scores = c->scores ? ref_sc : NULL,
                                      .query_positions = qp, .key_positions = kp};
    TH_OK(ctx, vkattn_reference_gqa(&desc, &w, &call, &hio));

    vkattn_tensor *tq = th_tensor(ctx, nq_in, q), *tv = th_tensor(ctx, nv_in, v);
    vkattn_tensor *tout = th_tensor(ctx, n_out, NULL), *tsc = th_tensor(ctx, n_sc, NULL);
    vkattn_tensor *tqp = qp ? th_tensor(ctx, (size_t)c->batch * c->tq, qp) : NULL;
    vkattn_tensor *tkp = kp ? th_tensor(ctx, (size_t)c->batch * c->tv, kp) : NULL;
    TH_OK(ctx, vkattn_tensor_fill(tout, NAN));
    TH_OK(ctx, vkattn_tensor_fill(tsc, NAN));
    const vkattn_layer_io io = {.query = tq, .value = tv, .output = tout,
                                .scores = c->scores ? tsc : NULL,
                                .query_positions = tqp, .key_positions = tkp};
    vkattn_result r;
    if (c->via_mha) {
        const vkattn_mha_desc md = mha_desc_of(&desc);
        vkattn_mha *layer;
        TH_OK(ctx, vkattn_mha_create(ctx, &md, &layer));
        TH_OK(ctx, vkattn_mha_set_weights(layer, &w));
        r = vkattn_mha_record(layer, VKATTN_RUN_NOW, &call, &io);
        vkattn_mha_destroy(layer);
    } else {
        vkattn_gqa *layer;
        TH_OK(ctx, vkattn_gqa_create(ctx, &desc, &layer));
        TH_OK(ctx, vkattn_gqa_set_weights(layer, &w));
        r = vkattn_gqa_record(layer, VKATTN_RUN_NOW, &call, &io);
        vkattn_gqa_destroy(layer);
    }
    if (r != VKATTN_SUCCESS)
        fail_msg("%s: record gave %s (%s)", what, vkattn_result_name(r), vkattn_last_error());
    float *got = th_download(tout, n_out);
    const double err = tu_max_rel_err(got, ref, n_out, 1.0);
    if (!TU_WITHIN(err, bound))
        fail_msg("%s: output error %.3g exceeds %.3g", what, err, bound);
    if (c->scores) {
        float *got_sc = th_download(tsc, n_sc);
        const double serr = tu_max_abs_err(got_sc, ref_sc, n_sc);
        if (!TU_WITHIN(serr, bound))
            fail_msg("%s: score error %.3g exceeds %.3g", what, serr, bound);
        free(got_sc);
    }
    th_assert_validation_clean();
    vkattn_tensor_destroy(tq), vkattn_tensor_destroy(tv), vkattn_tensor_destroy(tout);
    vkattn_tensor_destroy(tsc), vkattn_tensor_destroy(tqp), vkattn_tensor_destroy(tkp);
    for (int i = 0; i < N_W; i++)
        free(a[i]);
    free(q), free(v), free(qp), free(kp), free(ref), free(ref_sc), free(got);
}

static bool coin(void) { return tu_rand_range(0, 1) == 1; }

static rcase random_case(void)
{
    rcase c = {0};
    static const uint32_t heads[][2] = {{1, 1}, {2, 1}, {4, 2}, {6, 3}, {3, 3}, {4, 1}};
    const uint32_t k = tu_rand_range(0, 5);
    c.nq = heads[k][0], c.nkv = heads[k][1];
    c.hd = 2 * tu_rand_range(1, 6) + (coin() ? 1 : 0); /* odd widths: rotary_dim < hd */
    c.dq = tu_rand_range(1, 13), c.dv = tu_rand_range(1, 13);
    c.batch = tu_rand_range(1, 3), c.tq = tu_rand_range(1, 11), c.tv = tu_rand_range(1, 11);
    const uint32_t opt = tu_rand_range(0, 3); /* 0 norm, 1 rope, 2-3 both */
    c.norm = opt != 1, c.rope = opt != 0;
    if (c.rope) {
        /* 0 = the head width, which must then be even */
        c.rotary_dim = coin() && c.hd % 2 == 0 ? 0 : 2 * tu_rand_range(1, c.hd / 2);
        c.layout = coin() ? VKATTN_ROPE_INTERLEAVED : VKATTN_ROPE_HALF;
        c.scaling = coin() ? 0.0f : 2.0f;
        c.max_pos = coin() ? 64 : 0;
    }
    c.scores = coin();
    c.path = c.scores ? VKATTN_SDPA_AUTO : (vkattn_sdpa_path)tu_rand_range(0, 2);
    c.causal = (vkattn_causal)tu_rand_range(0, 2);
    c.via_mha = c.nq == c.nkv && coin();
    return c;
}

static void test_random_cases(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 24; i++) {
        rcase c = random_case();
        check_case(ctx, &c, 2e-5);
    }
}

/* Qwen3-like GQA (both options, HALF over the whole head) on each SDPA path,
 * the chained one returning the scores; positions far out (up to 4096) */
static void test_paths_and_far_positions(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int path = 0; path < 3; path++) {
        rcase c = {.batch = 2, .nq = 4, .nkv = 2, .hd = 8, .dq = 9, .dv = 7, .tq = 5, .tv = 9,
                   .norm = true, .rope = true, .path = (vkattn_sdpa_path)path,
                   .scores = path == 2, .max_pos = 64};
        check_case(ctx, &c, 2e-5);
        c.max_pos = 4096;
        c.layout = VKATTN_ROPE_INTERLEAVED;
        check_case(ctx, &c, 2e-3);
    }
}

static void test_f16(void **state)
{
    const rcase c = {.batch = 2, .nq = 4, .nkv = 2, .hd = 8, .dq = 9, .dv = 7, .tq = 6, .tv = 5,
                     .norm = true, .rope = true, .rotary_dim = 6, .max_pos = 64, .f16 = true};
    check_case(TH_CTX(state), &c, 8.0 / 2048);
}

/* Prefill 7, steps 1, 1, 3 with a cache: each new token turned at its
 * sequence's cache length (read on the device), equal to one TOP_LEFT call
 * over all 12; a step recorded once and replayed moves on with the cache. */
/* A prefill and steps through the cache against one causal call over the
 * whole sequence; with all_options also soft-capping and sinks, which the
 * cached path hands to the decode kernels. */
static void check_cached(vkattn_context *ctx, bool all_options)
{
    enum { B = 2, NQ = 4, NKV = 2, HD = 6, W = 10, N = 12, CAP = 16 };
    const rcase c = {.nq = NQ, .nkv = NKV, .hd = HD, .dq = W, .dv = W, .norm = true,
                     .rope = true, .rotary_dim = 4, .layout = VKATTN_ROPE_HALF,
                     .softcap = all_options ? 0.75f : 0.0f, .sinks = all_options};
    const vkattn_gqa_desc desc = desc_of(&c);
    const size_t n[N_W] = {W * NQ * HD, NQ * HD, W * NKV * HD, NKV * HD, W * NKV * HD,
                           NKV * HD,    NQ * HD * W, W,      HD,       HD};
    float *a[N_W];
    for (int i = 0; i < N_W; i++)
        a[i] = grid_floats(n[i], i >= QN ? 0.25f : 0.5f);
    for (int e = 0; e < HD; e++)
        a[QN][e] += 1.0f, a[KN][e] += 1.0f;
    float *sinks = grid_floats(NQ, 1.0f);
    const vkattn_gqa_weights w = {a[WQ], a[BQ], a[WK], a[BK], a[WV], a[BV], a[WO], a[BO],
                                  NULL, NULL, a[QN], a[KN], all_options ? sinks : NULL};
    float *x = grid_floats((size_t)B * N * W, 1.0f);
    vkattn_gqa *gqa;
    vkattn_kv_cache *cache;
    static const uint32_t steps[] = {7, 1, 1, 3};
    const double err = th_gqa_cached_error(ctx, &desc, &w, x, B, N, CAP, steps,
                                           sizeof steps / sizeof steps[0], false, &gqa, &cache);
    if (!TU_WITHIN(err, 2e-5))
        fail_msg("cached calls vs the full causal call%s: error %.3g exceeds 2e-5",
                 all_options ? " (with soft-capping and sinks)" : "", err);

    /* positions on a cached call are refused by name */
    vkattn_tensor *t1 = th_tensor(ctx, (size_t)B * W, x), *o1 = th_tensor(ctx, (size_t)B * W, NULL);
    vkattn_tensor *p1 = th_tensor(ctx, B, NULL);
    const vkattn_layer_call one = {.batch = B, .tq = 1, .causal = VKATTN_CAUSAL_TOP_LEFT};
    const vkattn_layer_io io1 = {.query = t1, .value = t1, .output = o1, .query_positions = p1};
    assert_int_equal(vkattn_gqa_record_cached(gqa, VKATTN_RUN_NOW, &one, &io1, cache),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "io->query_positions"));
    th_assert_validation_clean();
    vkattn_tensor_destroy(t1), vkattn_tensor_destroy(o1), vkattn_tensor_destroy(p1);
    vkattn_kv_cache_destroy(cache);
    vkattn_gqa_destroy(gqa);
    for (int i = 0; i < N_W; i++)
        free(a[i]);
    free(x), free(sinks);
}

static void test_cached(void **state)
{
    check_cached(TH_CTX(state), false);
    check_cached(TH_CTX(state), true);
}

/* The backward (keep_for_backward forward, then vkattn_gqa_backward_record)
 * vs vkattn_reference_gqa_backward: grad_query, grad_value (key = value: both
 * paths) and every weight's gradient, query_norm and key_norm included;
 * test_gqa_backward.c's bounds: 2e-4 relative to max(|ref|, 0.01); f16 (its
 * data exact in f16, f32 gradient tensors) 8/1024 relative to max(|ref|, 0.1). */
static void check_backward(vkattn_context *ctx, const rcase *c)
{
    char what[300];
    describe(c, what, sizeof what);
    const size_t n[N_W] = {(size_t)c->dq * c->nq * c->hd, (size_t)c->nq * c->hd,
                           (size_t)c->dv * c->nkv * c->hd, (size_t)c->nkv * c->hd,
                           (size_t)c->dv * c->nkv * c->hd, (size_t)c->nkv * c->hd,
                           (size_t)c->nq * c->hd * c->dq, c->dq, c->hd, c->hd};
    float *a[N_W], *ref_w[N_W], *got_w = NULL;
    for (int i = 0; i < N_W; i++) {
        a[i] = grid_floats(n[i], 0.5f);
        ref_w[i] = tu_floats(n[i]);
        tu_poison(ref_w[i], n[i]);
        if (i >= QN)
            for (size_t e = 0; e < n[i]; e++)
                a[i][e] += 1.0f;
    }
    const bool nw = c->norm;
    const vkattn_gqa_weights w = {a[WQ], a[BQ], a[WK], a[BK], a[WV], a[BV], a[WO], a[BO],
                                  NULL, NULL, nw ? a[QN] : NULL, nw ? a[KN] : NULL};
    vkattn_gqa_weights gw_ref = {ref_w[WQ], ref_w[BQ], ref_w[WK], ref_w[BK], ref_w[WV],
                                 ref_w[BV], ref_w[WO], ref_w[BO], NULL, NULL,
                                 nw ? ref_w[QN] : NULL, nw ? ref_w[KN] : NULL};
    const size_t nq_in = (size_t)c->batch * c->tq * c->dq, nv_in = (size_t)c->batch * c->tv * c->dv;
    float *q = grid_floats(nq_in, 1.0f), *v = grid_floats(nv_in, 1.0f);
    float *gout = grid_floats(nq_in, 1.0f);
    float *qp = c->max_pos ? positions((size_t)c->batch * c->tq, c->max_pos) : NULL;
    float *kp = c->max_pos ? positions((size_t)c->batch * c->tv, c->max_pos) : NULL;
    float *ref_gq = tu_floats(nq_in), *ref_gv = tu_floats(nv_in);
    const vkattn_gqa_desc desc = desc_of(c);
    vkattn_layer_call call = {.batch = c->batch, .tq = c->tq, .tv = c->tv, .causal = c->causal,
                              .path = c->path};
    const vkattn_layer_host_io hio = {.query = q, .value = v, .query_positions = qp,
                                      .key_positions = kp};
    const vkattn_layer_host_grads hg = {ref_gq, ref_gv, NULL};
    TH_OK(ctx, vkattn_reference_gqa_backward(&desc, &w, &call, &hio, gout, &hg, &gw_ref));

    vkattn_gqa *layer;
    TH_OK(ctx, vkattn_gqa_create(ctx, &desc, &layer));
    TH_OK(ctx, vkattn_gqa_set_weights(layer, &w));
    vkattn_tensor *tq = th_tensor(ctx, nq_in, q), *tv = th_tensor(ctx, nv_in, v);
    vkattn_tensor *tout = th_tensor(ctx, nq_in, NULL), *tgout = th_tensor(ctx, nq_in, gout);
    vkattn_tensor *tqp = qp ? th_tensor(ctx, (size_t)c->batch * c->tq, qp) : NULL;
    vkattn_tensor *tkp = kp ? th_tensor(ctx, (size_t)c->batch * c->tv, kp) : NULL;
    vkattn_tensor *tgq = th_tensor(ctx, nq_in, NULL), *tgv = th_tensor(ctx, nv_in, NULL);
    vkattn_tensor *tw[N_W];
    for (int i = 0; i < N_W; i++) {
        tw[i] = th_tensor(ctx, n[i], NULL);
        TH_OK(ctx, vkattn_tensor_fill(tw[i], NAN));
    }
    TH_OK(ctx, vkattn_tensor_fill(tgq, NAN));
    TH_OK(ctx, vkattn_tensor_fill(tgv, NAN));
    const vkattn_layer_io io = {.query = tq, .value = tv, .output = tout,
                                .query_positions = tqp, .key_positions = tkp};
    call.keep_for_backward = true;
    TH_OK(ctx, vkattn_gqa_record(layer, VKATTN_RUN_NOW, &call, &io));
    const vkattn_layer_grads g = {.grad_output = tgout, .grad_query = tgq, .grad_value = tgv};
    const vkattn_gqa_weight_tensors gw = {tw[WQ], tw[BQ], tw[WK], tw[BK], tw[WV], tw[BV],
                                          tw[WO], tw[BO], NULL, NULL,
                                          nw ? tw[QN] : NULL, nw ? tw[KN] : NULL};
    TH_OK(ctx, vkattn_gqa_backward_record(layer, VKATTN_PREPARE, &call, &io, &g, &gw));
    vkattn_result r = vkattn_gqa_backward_record(layer, VKATTN_RUN_NOW, &call, &io, &g, &gw);
    if (r)
        fail_msg("%s: backward gave %s: %s", what, vkattn_result_name(r), vkattn_last_error());
    const struct {
        vkattn_tensor *t;
        const float *ref;
        size_t n;
        const char *name;
    } out[] = {{tgq, ref_gq, nq_in, "grad_query"}, {tgv, ref_gv, nv_in, "grad_value"},
               {tw[WQ], ref_w[WQ], n[WQ], "query_kernel"}, {tw[BQ], ref_w[BQ], n[BQ], "query_bias"},
               {tw[WK], ref_w[WK], n[WK], "key_kernel"}, {tw[BK], ref_w[BK], n[BK], "key_bias"},
               {tw[WV], ref_w[WV], n[WV], "value_kernel"}, {tw[WO], ref_w[WO], n[WO], "output_kernel"},
               {tw[QN], ref_w[QN], nw ? n[QN] : 0, "query_norm"},
               {tw[KN], ref_w[KN], nw ? n[KN] : 0, "key_norm"}};
    for (size_t i = 0; i < sizeof out / sizeof out[0]; i++) {
        if (!out[i].n)
            continue;
        got_w = th_download(out[i].t, out[i].n);
        const double bound = c->f16 ? 8.0 / 1024 : 2e-4;
        const double err = tu_max_rel_err(got_w, out[i].ref, out[i].n, c->f16 ? 0.1 : 0.01);
        if (!TU_WITHIN(err, bound))
            fail_msg("%s: %s: error %.3g exceeds %.3g", what, out[i].name, err, bound);
        free(got_w);
    }
    th_assert_validation_clean();
    vkattn_gqa_destroy(layer);
    vkattn_tensor_destroy(tq), vkattn_tensor_destroy(tv), vkattn_tensor_destroy(tout);
    vkattn_tensor_destroy(tgout), vkattn_tensor_destroy(tqp), vkattn_tensor_destroy(tkp);
    vkattn_tensor_destroy(tgq), vkattn_tensor_destroy(tgv);
    for (int i = 0; i < N_W; i++)
        vkattn_tensor_destroy(tw[i]), free(a[i]), free(ref_w[i]);
    free(q), free(v), free(gout), free(qp), free(kp), free(ref_gq), free(ref_gv);
}

/* GQA and one head (the projection is the head tensor), each option alone
 * and both, both layouts, positions, both SDPA paths, causal, f16 once */
static void test_backward(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const rcase cases[] = {
        {.batch = 2, .nq = 4, .nkv = 2, .hd = 8, .dq = 9, .dv = 7, .tq = 5, .tv = 6,
         .norm = true, .rope = true, .rotary_dim = 6, .max_pos = 64},
        {.batch = 1, .nq = 1, .nkv = 1, .hd = 6, .dq = 5, .dv = 5, .tq = 4, .tv = 7,
         .norm = true, .rope = true, .layout = VKATTN_ROPE_INTERLEAVED,
         .path = VKATTN_SDPA_UNFUSED},
        {.batch = 2, .nq = 3, .nkv = 1, .hd = 5, .dq = 4, .dv = 6, .tq = 6, .tv = 6,
         .norm = true, .causal = VKATTN_CAUSAL_TOP_LEFT},
        {.batch = 2, .nq = 2, .nkv = 2, .hd = 4, .dq = 3, .dv = 5, .tq = 3, .tv = 5,
         .rope = true, .scaling = 2.0f, .max_pos = 64, .path = VKATTN_SDPA_UNFUSED},
        {.batch = 2, .nq = 4, .nkv = 2, .hd = 8, .dq = 9, .dv = 7, .tq = 5, .tv = 6,
         .norm = true, .rope = true, .rotary_dim = 6, .max_pos = 64, .f16 = true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_backward(ctx, &cases[i]);
}

/* positions without use_rope, of the wrong size, and (reference) not integers */
static void test_bad_positions(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    rcase c = {.batch = 1, .nq = 2, .nkv = 1, .hd = 4, .dq = 3, .dv = 3, .tq = 2, .tv = 3,
               .norm = true};
    vkattn_gqa_desc desc = desc_of(&c);
    vkattn_gqa *layer;
    TH_OK(ctx, vkattn_gqa_create(ctx, &desc, &layer));
    vkattn_tensor *q = th_tensor(ctx, 6, NULL), *v = th_tensor(ctx, 9, NULL);
    vkattn_tensor *out = th_tensor(ctx, 6, NULL), *p2 = th_tensor(ctx, 2, NULL);
    const vkattn_layer_call call = {.batch = 1, .tq = 2, .tv = 3};
    vkattn_layer_io io = {.query = q, .value = v, .output = out, .query_positions = p2};
    assert_int_equal(vkattn_gqa_record(layer, VKATTN_RUN_NOW, &call, &io),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "io->query_positions"));
    assert_non_null(strstr(vkattn_last_error(), "use_rope"));
    vkattn_gqa_destroy(layer);
    desc.use_rope = true;
    TH_OK(ctx, vkattn_gqa_create(ctx, &desc, &layer));
    io = (vkattn_layer_io){.query = q, .value = v, .output = out, .key_positions = p2};
    assert_int_equal(vkattn_gqa_record(layer, VKATTN_RUN_NOW, &call, &io),
                     VKATTN_ERROR_INVALID_ARGUMENT); /* (B, Tv) is 3 */
    assert_non_null(strstr(vkattn_last_error(), "io->key_positions"));
    vkattn_gqa_destroy(layer);

    const float half[2] = {0.5f, 1.0f}, neg[3] = {0.0f, -1.0f, 2.0f};
    float buf[9] = {0}, o[6];
    const float ones[4] = {1, 1, 1, 1};
    float k12[12] = {0}, k24[24] = {0};
    const vkattn_gqa_weights w = {k24, k24, k12, k12, k12, k12, k24, k12, NULL, NULL,
                                  (float *)ones, (float *)ones};
    vkattn_layer_host_io hio = {.query = buf, .value = buf, .output = o,
                                .query_positions = half};
    assert_int_equal(vkattn_reference_gqa(&desc, &w, &call, &hio), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "io->query_positions[0]"));
    hio.query_positions = NULL, hio.key_positions = neg;
    assert_int_equal(vkattn_reference_gqa(&desc, &w, &call, &hio), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_last_error(), "io->key_positions[1]"));
    th_assert_validation_clean();
    vkattn_tensor_destroy(q), vkattn_tensor_destroy(v), vkattn_tensor_destroy(out);
    vkattn_tensor_destroy(p2);
}

TU_MAIN(th_setup, th_teardown,
    test_random_cases, test_paths_and_far_positions, test_f16, test_cached, test_backward,
    test_bad_positions)
