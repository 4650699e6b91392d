/* MultiHeadAttention and GroupedQueryAttention with a KV cache
 * (vkattn_mha_record_cached, vkattn_gqa_record_cached) vs the CPU reference of
 * one causal call over the whole sequence (VKATTN_CAUSAL_TOP_LEFT, Keras
 * use_causal_mask=True), over the cache dtypes of `dtypes` below, each row
 * saying its schedule, the cases of `cases` it runs and its term of the
 * bound. A new cache dtype is one row there.
 *
 * Each case: batch 2, a prefill (long schedule: P = 67 tokens in two chunks,
 * 64 + 3; short: 9), then sequence 1 is reset (from there its tokens are rows
 * [P, N) and its reference is the causal call over them), then steps (long:
 * 1, 1, 3, 1, 1; short: 1, 1, 2) over ragged lengths (P + n keys in sequence
 * 0, n in sequence 1; checked after every step). Outputs are NaN-poisoned
 * before each call. Cases: f32 layer; its sliding_window (the cached rows
 * keep their band: 9 keys, the query's own included); Keras use_gate (each
 * new row's gate projected on the cached path); a value mask over the cache
 * (B, capacity) with sequence 1's first key masked after the reset, so that
 * row sees no key and is the output bias exactly, as vkattn_mha_record's
 * masked rows; the f16 layer (Keras's float16 policy: inputs and weights
 * f16-rounded, the f32 reference on them) with f16 io; the f16 layer with f32
 * io, a value mask and use_gate; GQA (4 query heads over 2 K/V heads of
 * head_dim 8) with f32 and f16 layers; the bf16 layer (Keras's bfloat16
 * policy, as f16's) with bf16 io on the bf16 cache. Widths: query/value width 10, MHA
 * output 7, 2 heads of key_dim 8 and value_dim 4 (16-bit storage needs even
 * widths, int8 multiples of 4). Bad arguments: test_bad_input.
 *
 * Bound, per output row: max|got - ref| <= layer + cache, where
 *   layer (the uncached layer's, vkattn/mha.h): f32 2e-5 max(max|ref|, 1)
 *     (fp32 projections and attention, reference in double); f16
 *     8 eps16 max(max|ref|, 1), eps16 = 2^-10 (7.8e-3): the cached path
 *     rounds the same intermediates to f16 as the uncached one (projections,
 *     heads, context), decode reading its f16 queries exactly and rounding its
 *     context once; bf16 the same with eps = 2^-7 for eps16 (6.3e-2);
 *   cache (the row's `bound`): f32 0; f16 0 (the f16 layer's heads are f16
 *     already; an f32 layer's appended keys and values round to f16 once,
 *     inside the f16 layer's bound, which is why f16 runs f16 layers only --
 *     see `layers`); int8 and bf16 (docs/SEMANTICS.md), carried through the
 *     output projection, with rel each stored element's error over Kmax
 *     (Vmax): int8 1/254 (half a step of max/127), bf16 2^-8 (half a bf16
 *     spacing, |x - x^| <= 2^-8 |x|):
 *       ctx error <= (expm1(2 eps) + rel) Vmax, eps = scale ||q||_1 Kmax rel
 *       out error <= ctx error * max_c sum_r |W_o[r, c]|
 *     with q, k, v the projected heads of every token (computed here in
 *     double; Kmax, Vmax, ||q||_1 their largest), 1% on top for the f16
 *     layer's rounded projections.
 * Each run prints its error as a share of the bound. */
#include "cached_steps.h"
#include "kv_rows.h"
#include "op_table.h"

#include <vkattn/gqa.h>
#include <vkattn/mha.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EPS16 (1.0 / 1024.0)
#define B 2u
#define W 10u    /* query and value width */
#define DOUT 7u  /* MHA output width (GQA: W) */
#define DK 8u    /* head widths: 16-bit storage needs even ones, int8 multiples of 4; */
#define DV 4u    /* one shape for every dtype (lavapipe compiles a pipeline per shape) */
#define CAP 80u   /* >= every schedule's tokens */

/* A layer run through the cache: kind, dtypes, options. */
typedef struct seq_case {
    const char *name;
    bool gqa;
    vkattn_dtype layer;
    vkattn_dtype io; /* of the call's tensors */
    uint32_t window;
    bool gate, mask;
} seq_case;

/* The heads' widths of a case under a cache dtype. */
typedef struct widths {
    uint32_t hq, hkv, dk, dv, dout;
} widths;

/* The calls: a prefill (in chunks), the reset of sequence 1, then steps. */
typedef struct schedule {
    uint32_t p, n; /* prefill tokens; all tokens */
    uint32_t prefill[2], steps[5];
} schedule;
/* prefill in two chunks (64 + 3), then 1, 1, 3, 1, 1 */
static const schedule long_run = {67, 74, {64, 3}, {1, 1, 3, 1, 1}};
/* prefill 9, then 1, 1, 2 */
static const schedule short_run = {9, 13, {9, 0}, {1, 1, 2, 0, 0}};

/* One cache dtype: what differs between them. */
typedef struct cache_dtype {
    vkattn_dtype dtype;
    const schedule *run;
    uint32_t cases; /* which of `cases` it runs: bit i for cases[i] */
    /* the cache's own term of the bound (header comment) */
    double (*bound)(const widths *s, const vkattn_mha_weights *w, const float *x, uint32_t n);
} cache_dtype;

static double no_cache_term(const widths *s, const vkattn_mha_weights *w, const float *x,
                            uint32_t n)
{
    (void)s, (void)w, (void)x, (void)n;
    return 0;
}

/* The int8 or bf16 term of the bound (header comment), from x (B * n rows). */
static double rounded_term(const widths *s, const vkattn_mha_weights *w, const float *x,
                           uint32_t n, double rel)
{
    double q1 = 0, kmax = 0, vmax = 0, wo1 = 0;
    for (size_t t = 0; t < (size_t)B * n; t++) {
        const float *xt = x + t * W;
        for (uint32_t h = 0; h < s->hq; h++) {
            double l1 = 0;
            for (uint32_t e = 0; e < s->dk; e++) {
                const size_t col = (size_t)h * s->dk + e;
                double v = w->query_bias[col];
                for (uint32_t i = 0; i < W; i++)
                    v += (double)xt[i] * w->query_kernel[i * s->hq * s->dk + col];
                l1 += fabs(v);
            }
            q1 = fmax(q1, l1);
        }
        for (size_t col = 0; col < (size_t)s->hkv * s->dk; col++) {
            double v = w->key_bias[col];
            for (uint32_t i = 0; i < W; i++)
                v += (double)xt[i] * w->key_kernel[i * s->hkv * s->dk + col];
            kmax = fmax(kmax, fabs(v));
        }
        for (size_t col = 0; col < (size_t)s->hkv * s->dv; col++) {
            double v = w->value_bias[col];
            for (uint32_t i = 0; i < W; i++)
                v += (double)xt[i] * w->value_kernel[i * s->hkv * s->dv + col];
            vmax = fmax(vmax, fabs(v));
        }
    }
    for (uint32_t o = 0; o < s->dout; o++) {
        double v = 0;
        for (size_t r = 0; r < (size_t)s->hq * s->dv; r++)
            v += fabs(w->output_kernel[r * s->dout + o]);
        wo1 = fmax(wo1, v);
    }
    const double eps = q1 * kmax * rel / sqrt(s->dk);
    return (expm1(2 * eps) + rel) * vmax * wo1 * 1.01;
}

static double int8_term(const widths *s, const vkattn_mha_weights *w, const float *x, uint32_t n)
{
    return rounded_term(s, w, x, n, 1.0 / 254);
}

static double bf16_term(const widths *s, const vkattn_mha_weights *w, const float *x, uint32_t n)
{
    return rounded_term(s, w, x, n, 0x1p-8);
}


static const seq_case cases[] = {
    {"mha f32", false, VKATTN_DTYPE_F32, VKATTN_DTYPE_F32, 0, false, false},
    {"mha f32 window 9", false, VKATTN_DTYPE_F32, VKATTN_DTYPE_F32, 9, false, false},
    {"mha f32 gate", false, VKATTN_DTYPE_F32, VKATTN_DTYPE_F32, 0, true, false},
    {"mha f32 value mask", false, VKATTN_DTYPE_F32, VKATTN_DTYPE_F32, 0, false, true},
    {"mha f16", false, VKATTN_DTYPE_F16, VKATTN_DTYPE_F16, 0, false, false},
    {"mha f16 f32-io value mask gate", false, VKATTN_DTYPE_F16, VKATTN_DTYPE_F32, 0, true, true},
    {"gqa f32", true, VKATTN_DTYPE_F32, VKATTN_DTYPE_F32, 0, false, false},
    {"gqa f16", true, VKATTN_DTYPE_F16, VKATTN_DTYPE_F16, 0, false, false},
    {"mha bf16", false, VKATTN_DTYPE_BF16, VKATTN_DTYPE_BF16, 0, false, false},
};

/* The cache dtypes, each with the cases where it differs from the others
 * (lavapipe compiles 3-8 s of pipelines per case and dtype, cold: CI time).
 * f32: the f32 layer's options (window, gate, value mask), the f16 layer;
 * f16: the f16 layer with f16 io, and with f32 io, mask and gate (not an f32
 * layer: header comment); int8: MHA and GQA, f32 and f16 layers, short;
 * bf16: MHA on an f32 layer and on a bf16 one, GQA on an f16 one, short. */
static const cache_dtype dtypes[] = {
    {VKATTN_DTYPE_F32, &long_run, 0x1f, no_cache_term},
    {VKATTN_DTYPE_F16, &long_run, 0x30, no_cache_term},
    {VKATTN_DTYPE_I8, &short_run, 0xd1, int8_term},
    {VKATTN_DTYPE_BF16, &short_run, 0x181, bf16_term},
};

/* Weight array i (query kernel, bias, key kernel, bias, value kernel, bias,
 * output kernel, bias, gate kernel, bias) in [-amp[i], amp[i]]: pre-activations
 * O(1); the f16 layer's kernels scaled by about 1/sqrt(fan-in). */
static const float amp32[10] = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 2.0f, 2.0f};
static const float amp16[10] = {0.32f, 0.1f, 0.32f, 0.1f, 0.32f, 0.1f, 0.35f, 0.1f, 0.6f, 2.0f};

/* Rows [from, to) of sequence b of got vs the causal reference over them
 * (value mask vm, its first to - from entries, or NULL); returns the largest
 * share of the bound. */
static double check_rows(const seq_case *c, const widths *s, const vkattn_mha_weights *w,
                         const float *x, const float *got, uint32_t n, uint32_t b,
                         uint32_t from, uint32_t to, const float *vm, double cache_term,
                         const char *what)
{
    const uint32_t T = to - from;
    const float *seq = x + ((size_t)b * n + from) * W;
    float *ref = tu_floats((size_t)T * s->dout);
    const vkattn_layer_call call = {.batch = 1, .tq = T, .tv = T,
                                    .causal = VKATTN_CAUSAL_TOP_LEFT};
    const vkattn_layer_host_io hio = {.query = seq, .value = seq, .value_mask = vm,
                                      .output = ref};
    if (c->gqa) {
        const vkattn_gqa_desc gd = {.head_dim = s->dk, .num_query_heads = s->hq,
                                    .num_key_value_heads = s->hkv, .query_width = W,
                                    .value_width = W};
        TH_OK(NULL, vkattn_reference_gqa(&gd, w, &call, &hio));
    } else {
        const vkattn_mha_desc md = {.num_heads = s->hq, .key_dim = s->dk, .value_dim = s->dv,
                                    .query_width = W, .value_width = W, .output_dim = s->dout,
                                    .sliding_window = c->window, .use_gate = c->gate};
        TH_OK(NULL, vkattn_reference_mha(&md, w, &call, &hio));
    }
    const double fp = c->layer == VKATTN_DTYPE_F16    ? 8 * EPS16
                      : c->layer == VKATTN_DTYPE_BF16 ? 8 * 0x1p-7 /* eps16's twin */
                                                      : 2e-5;
    double worst = 0;
    for (uint32_t t = 0; t < T; t++) {
        const float *g = got + ((size_t)b * n + from + t) * s->dout, *r = ref + (size_t)t * s->dout;
        double rmax = 1, err = 0;
        for (uint32_t e = 0; e < s->dout; e++) {
            rmax = fmax(rmax, fabs(r[e]));
            err = isnan(g[e]) ? INFINITY : fmax(err, fabs((double)g[e] - r[e]));
        }
        const double bound = fp * rmax + cache_term;
        if (!TU_WITHIN(err, bound))
            fail_msg("%s: sequence %u row %u (position %u since its start): error %.3g exceeds "
                     "%.3g (layer %.3g + cache %.3g)",
                     what, b, from + t, t, err, bound, fp * rmax, cache_term);
        worst = fmax(worst, err / bound);
    }
    free(ref);
    return worst;
}

static void run_case(vkattn_context *ctx, const cache_dtype *d, const seq_case *c)
{
    const bool h16 = c->layer != VKATTN_DTYPE_F32;
    const widths s = {.hq = c->gqa ? 4 : 2, .hkv = 2, .dk = DK, .dv = c->gqa ? DK : DV,
                      .dout = c->gqa ? W : DOUT};
    const vkattn_dtype io = c->io;
    const schedule *run = d->run;
    const uint32_t P = run->p, N = run->n;
    char what[160];
    snprintf(what, sizeof what, "%s cache: %s, %s io", th_dtype_name(d->dtype), c->name,
             th_dtype_name(io));
    const float *amp = h16 ? amp16 : amp32;
    const size_t n[10] = {W * s.hq * s.dk, s.hq * s.dk, W * s.hkv * s.dk, s.hkv * s.dk,
                          W * s.hkv * s.dv, s.hkv * s.dv, s.hq * s.dv * s.dout, s.dout,
                          W * s.hq * s.dv, s.hq * s.dv};
    float *a[10];
    for (int i = 0; i < 10; i++) {
        a[i] = tu_floats(n[i]);
        tu_fill_uniform(a[i], n[i], -amp[i], amp[i]);
        th_round_to(a[i], n[i], c->layer);
    }
    const vkattn_mha_weights w = {a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7],
                                  c->gate ? a[8] : NULL, c->gate ? a[9] : NULL};
    vkattn_mha *mha = NULL;
    vkattn_gqa *gqa = NULL;
    if (c->gqa) {
        const vkattn_gqa_desc gd = {.head_dim = s.dk, .num_query_heads = s.hq,
                                    .num_key_value_heads = s.hkv, .query_width = W,
                                    .value_width = W, .dtype = c->layer};
        TH_OK(ctx, vkattn_gqa_create(ctx, &gd, &gqa));
        TH_OK(ctx, vkattn_gqa_set_weights(gqa, &w));
    } else {
        const vkattn_mha_desc md = {.num_heads = s.hq, .key_dim = s.dk, .value_dim = s.dv,
                                    .query_width = W, .value_width = W, .output_dim = s.dout,
                                    .sliding_window = c->window, .use_gate = c->gate,
                                    .dtype = c->layer};
        TH_OK(ctx, vkattn_mha_create(ctx, &md, &mha));
        TH_OK(ctx, vkattn_mha_set_weights(mha, &w));
    }
    const vkattn_kv_cache_desc cd = {.batch = B, .kv_heads = s.hkv, .capacity = CAP,
                                     .key_dim = s.dk, .value_dim = s.dv, .dtype = d->dtype};
    vkattn_kv_cache *cache;
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    const size_t nx = (size_t)B * N * W, no = (size_t)B * N * s.dout;
    float *x = tu_floats(nx), *got = tu_floats(no), *mask = tu_floats((size_t)B * CAP);
    tu_fill_uniform(x, nx, -1, 1);
    th_round_to(x, nx, c->layer);
    tu_poison(got, no);
    /* every row sees a key, but sequence 1's first after the reset (entry 0
     * again): that row is the output bias */
    tu_fill_mask(mask, (size_t)B * CAP, 0.7f);
    mask[0] = 1.0f, mask[CAP] = 0.0f, mask[CAP + 1] = 1.0f;
    vkattn_tensor *vm = c->mask ? th_tensor(ctx, (size_t)B * CAP, mask) : NULL;

    const th_cached_run r = {.mha = mha, .gqa = gqa, .cache = cache, .batch = B, .len = N,
                             .width = W, .out_width = s.dout, .io_type = io, .value_mask = vm,
                             .prepare = true};
    uint32_t t = th_cached_steps(ctx, &r, x, 0, run->prefill, run->prefill[1] ? 2 : 1, got);
    TH_OK(ctx, vkattn_kv_cache_reset_record(cache, VKATTN_RUN_NOW, 1));
    for (size_t i = 0; i < 5 && run->steps[i]; i++) {
        th_cached_call(ctx, &r, x, t, run->steps[i], got);
        t += run->steps[i];
        uint32_t len[B];
        TH_OK(ctx, vkattn_kv_cache_lengths(cache, len, NULL));
        assert_int_equal(len[0], t);
        assert_int_equal(len[1], t - P);
    }
    assert_int_equal(t, N);
    const double cache_term = d->bound(&s, &w, x, N);
    const double e0 = check_rows(c, &s, &w, x, got, N, 0, 0, N, c->mask ? mask : NULL, cache_term,
                                 what);
    const double e1 = check_rows(c, &s, &w, x, got, N, 1, P, N, c->mask ? mask + CAP : NULL,
                                 cache_term, what);
    if (c->mask && !h16 && io == VKATTN_DTYPE_F32)
        for (uint32_t e = 0; e < s.dout; e++)
            if (got[((size_t)N + P) * s.dout + e] != w.output_bias[e])
                fail_msg("%s: sequence 1's fully masked row [%u] = %.9g, want the bias %.9g",
                         what, e, (double)got[((size_t)N + P) * s.dout + e],
                         (double)w.output_bias[e]);
    print_message("%s: error %.2g of the bound\n", what, fmax(e0, e1));
    th_assert_validation_clean();
    vkattn_tensor_destroy(vm);
    vkattn_kv_cache_destroy(cache);
    vkattn_gqa_destroy(gqa);
    vkattn_mha_destroy(mha);
    for (int i = 0; i < 10; i++)
        free(a[i]);
    free(x), free(got), free(mask);
}

/* Every case under cache dtype k (the cases the row runs). */
static void run_dtype(void **state, size_t k)
{
    vkattn_context *ctx = TH_CTX(state);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (dtypes[k].cases >> i & 1)
            run_case(ctx, &dtypes[k], &cases[i]);
}

static void test_f32_cache(void **state) { run_dtype(state, 0); }
static void test_f16_cache(void **state) { run_dtype(state, 1); }
static void test_i8_cache(void **state) { run_dtype(state, 2); }
static void test_bf16_cache(void **state) { run_dtype(state, 3); }

/* The cache's shape must match the layer's; what a cached call does not take;
 * none of it changes the cache. */
static void test_bad_input(void **state)
{
    enum { H = 2 };
    vkattn_context *ctx = TH_CTX(state);
    th_cache_model m;
    const vkattn_mha_desc md = {.num_heads = H, .key_dim = DK, .value_dim = DV, .query_width = W,
                                .value_width = W};
    th_cache_model_init(ctx, &m, &md, amp32);
    vkattn_kv_cache_desc cd = {.batch = B, .kv_heads = H, .capacity = 4, .key_dim = DK,
                               .value_dim = DV};
    vkattn_kv_cache *good, *bad;
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &good));
    vkattn_tensor *tin = th_tensor(ctx, (size_t)B * W, NULL);
    vkattn_tensor *tout = th_tensor(ctx, (size_t)B * W, NULL);
    vkattn_tensor *vm = th_tensor(ctx, (size_t)B, NULL); /* a query mask (B, 1) */
    vkattn_tensor *vm_small = th_tensor(ctx, (size_t)B * 3, NULL);
    vkattn_layer_call call = {.batch = B, .tq = 1, .causal = VKATTN_CAUSAL_TOP_LEFT};
    vkattn_layer_io io = {.query = tin, .value = tin, .output = tout};
    TH_OK(ctx, vkattn_mha_record_cached(m.mha, VKATTN_RUN_NOW, &call, &io, good)); /* one row each */
    const size_t nk = (size_t)B * H * 4 * DK;
    float *k0 = th_download(vkattn_kv_cache_get_desc(good).keys, nk);

    /* caches that do not match the layer */
    const vkattn_kv_cache_desc mismatch[4] = {
        {.batch = B, .kv_heads = 1, .capacity = 4, .key_dim = DK, .value_dim = DV},
        {.batch = B, .kv_heads = H, .capacity = 4, .key_dim = DK + 1, .value_dim = DV},
        {.batch = B, .kv_heads = H, .capacity = 4, .key_dim = DK, .value_dim = DK},
        {.batch = B + 1, .kv_heads = H, .capacity = 4, .key_dim = DK, .value_dim = DV},
    };
    for (int i = 0; i < 4; i++) {
        TH_OK(ctx, vkattn_kv_cache_create(ctx, &mismatch[i], &bad));
        assert_int_equal(vkattn_mha_record_cached(m.mha, VKATTN_RUN_NOW, &call, &io, bad),
                         VKATTN_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(vkattn_last_error(), i < 3 ? "the layer has" : "call->batch"));
        uint32_t len[B + 1];
        TH_OK(ctx, vkattn_kv_cache_lengths(bad, len, NULL));
        for (uint32_t b = 0; b < mismatch[i].batch; b++)
            assert_int_equal(len[b], 0);
        vkattn_kv_cache_destroy(bad);
    }
    /* what a cached call does not take */
    io.query_mask = vm;
    assert_int_equal(vkattn_mha_record_cached(m.mha, VKATTN_RUN_NOW, &call, &io, good), VKATTN_ERROR_UNSUPPORTED);
    io.query_mask = NULL;
    io.value_mask = vm_small; /* the value mask covers the cache: (B, capacity) */
    assert_int_equal(vkattn_mha_record_cached(m.mha, VKATTN_RUN_NOW, &call, &io, good),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    io.value_mask = NULL;
    call.return_attention_scores = true;
    assert_int_equal(vkattn_mha_record_cached(m.mha, VKATTN_RUN_NOW, &call, &io, good), VKATTN_ERROR_UNSUPPORTED);
    call.return_attention_scores = false;
    call.causal = VKATTN_CAUSAL_NONE;
    assert_int_equal(vkattn_mha_record_cached(m.mha, VKATTN_RUN_NOW, &call, &io, good), VKATTN_ERROR_UNSUPPORTED);
    call.causal = VKATTN_CAUSAL_BOTTOM_RIGHT;
    call.tv = 2;
    assert_int_equal(vkattn_mha_record_cached(m.mha, VKATTN_RUN_NOW, &call, &io, good),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    call.tv = 0;
    /* 1 + 4 rows pass the capacity 4; the host knows the lengths */
    call.tq = 4;
    vkattn_tensor *big_in = th_tensor(ctx, (size_t)B * 4 * W, NULL);
    vkattn_tensor *big_out = th_tensor(ctx, (size_t)B * 4 * W, NULL);
    vkattn_layer_io big = {.query = big_in, .value = big_in, .output = big_out};
    assert_int_equal(vkattn_mha_record_cached(m.mha, VKATTN_RUN_NOW, &call, &big, good),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    assert_int_equal(vkattn_mha_record_cached(m.mha, VKATTN_RUN_NOW, &call, &big, NULL),
                     VKATTN_ERROR_INVALID_ARGUMENT);
    /* the cache is unchanged by all of it */
    uint32_t len[B];
    TH_OK(ctx, vkattn_kv_cache_lengths(good, len, NULL));
    assert_int_equal(len[0], 1);
    assert_int_equal(len[1], 1);
    float *k1 = th_download(vkattn_kv_cache_get_desc(good).keys, nk);
    assert_memory_equal(k0, k1, sizeof(float) * (size_t)B * H * 4 * DK);
    free(k0), free(k1);
    vkattn_tensor_destroy(tin), vkattn_tensor_destroy(tout), vkattn_tensor_destroy(vm);
    vkattn_tensor_destroy(vm_small);
    vkattn_tensor_destroy(big_in), vkattn_tensor_destroy(big_out);
    vkattn_kv_cache_destroy(good);
    th_cache_model_free(&m);
    th_assert_validation_clean();
}

TU_MAIN(th_setup, th_teardown, test_f32_cache, test_f16_cache, test_i8_cache, test_bf16_cache,
        test_bad_input)
