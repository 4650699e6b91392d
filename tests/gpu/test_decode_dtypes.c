/* Decode reading a 16-bit or 8-bit KV cache, one op row over the cache's
 * dtypes (tests/gpu/op_table.h); it replaces test_decode_f16.c and
 * test_decode_i8.c, running every case they ran.
 *
 * Per case: a cache of the row's dtype gets two random ragged appends (the
 * first from f16 rows, for bf16 from bf16 and f16 rows in alternate cases,
 * the second from f32 rows, converted on the device), its storage is checked
 * against the host, then decode runs vs vkattn_reference_sdpa_decode on what
 * the cache holds:
 *   - f16: the appended rows bit for bit (f16 sources exactly, f32 sources
 *     the nearest f16, or one spacing towards zero for devices whose
 *     packHalf2x16 truncates); the reference reads the cache's own bits.
 *   - bf16: bit for bit the nearest bf16, ties to even (th_bf16_round, from
 *     the rule in double: kv_append's rounding is vkattn's own GLSL, so no
 *     device latitude); the reference reads the cache's own bits. Without
 *     dropout and with an f32 out, also vs the unquantized f32 cache as for
 *     i8 below, with each element's error |x - x^| <= 2^-8 |x| <= 2^-8 Kmax
 *     (half a bf16 spacing) in place of scale / 2: eps = scale ||q||_1 Kmax
 *     2^-8, |out - ref| <= (expm1(2 eps) + 2^-8) Vmax + 2e-5 max|ref| (no
 *     fp32 term: the rows are rounded once from their exact values).
 *   - i8: the storage against a twin of the documented rule
 *     (vkattn/kv_cache.h), not the library's: per row scale = max|x| / 127
 *     (fp32), q = clamp(rint(x / scale), -127, 127), a zero row scale 0 and
 *     q 0; bit for bit where division is correctly rounded (lavapipe), else
 *     (2.5 ulp divisions) a scale a few ulps off and a q off by 1 within
 *     1e-4 of a rounding tie. The reference reads the rows dequantized on
 *     the host; without dropout and with an f32 out, also per query row vs
 *     the reference on the unquantized values (docs/SEMANTICS.md, "Int8 KV
 *     cache"): |out - ref| <= (expm1(2 eps) + 1/254 + 2^-20) Vmax
 *     + 2e-5 max|ref|, eps = scale ||q||_1 Kmax / 254, Kmax, Vmax the largest
 *     |k|, |v| of the row's (b, K/V head); 2^-20 Vmax covers the fp32 x / scale
 *     and scale * q of the rule (127 u + u, u = 2^-24). The bound is reached:
 *     a row attending to one key outputs that key's value, off by up to half
 *     a quantization step (Vmax / 254), so margins near 1 (0.85 on seed
 *     6948452346637058841) are expected, not a sign of flakiness.
 * Bounds (vkattn/decode.h): max|got - ref| <= 2e-5 max|ref| with an f32 out;
 * with an f16 out (2e-5 + 2^-10) max|ref|: the f32 bound plus one rounding
 * to f16 (2^-11 relative, 2^-10 where packHalf2x16 truncates); with a bf16
 * out (2e-5 + 2^-8 (1 + 2e-5)) max|ref|: half a bf16 spacing of
 * |y| <= (1 + 2e-5) max|ref| (vkattn's own rounding to nearest even).
 * Cases: B 1..3 ragged (counts), grouped heads, Tq 1..4, dk != dv (f16: even
 * widths; i8: multiples of 4), value mask, dropout, q and out f32 or f16 at
 * random plus fixed pairings (bf16 cache: a 16-bit q or out is f16 or bf16
 * at random, bf16 in the fixed cases); f16: narrow non-vec4 widths, vec4
 * loads, an odd output count (the padding half of the last word); bf16:
 * 8-element loads of K and V (dk 16, dv 24), an odd bf16 output count, every
 * third case a cache over the app's NaN-filled bf16 tensors (rows past the
 * lengths never read); i8 and bf16: rows of magnitudes 0.01..10 and a zero
 * row, dk 160 (the tiles layout on lavapipe: the lanes layout stops at 128).
 * Outputs are poisoned with NaN first. Bad arguments:
 * odd or non-multiple-of-4 widths (naming the field), a bad dtype, app
 * tensors of the other type, an f16 value mask, I8 where only the cache
 * takes it. Run under the default profile and mobile-min
 * (decode_packed.comp, 4 storage buffers). */
#include "kv_rows.h"
#include "op_table.h"

#include <vkattn/half.h>
#include <vkattn/mha.h>
#include <vkattn/reference.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOUND 2e-5
#define BOUND_OUT16 (2e-5 + 1.0 / 1024)
#define BOUND_OUT_BF16 (2e-5 + 0x1p-8 * (1 + 2e-5))

typedef struct shape {
    uint32_t B, kvh, group, tq, cap, dk, dv;
    bool vmask;
    float rate;
    bool q16, out16;
} shape;

/* The fixed cases after the random ones, per dtype. */
static const shape f16_fixed[] = {
    {1, 1, 1, 1, 70, 2, 2, false, 0.0f, false, false}, /* narrow, non-vec4 */
    {2, 2, 4, 3, 40, 16, 24, true, 0.0f, true, true},  /* vec4 loads */
    {1, 1, 3, 1, 33, 4, 6, false, 0.0f, true, false},  /* f16 q, f32 out */
    {3, 1, 1, 1, 50, 8, 2, true, 0.3f, false, true},   /* odd count, f16 out */
};
static const shape i8_fixed[] = {
    {2, 2, 4, 3, 40, 64, 32, true, 0.0f, false, false}, /* wide, f32 bound */
    {1, 1, 3, 1, 33, 4, 4, false, 0.0f, true, false},   /* f16 q */
    {2, 1, 2, 2, 50, 160, 8, true, 0.0f, false, false}, /* tiles layout */
};
static const shape bf16_fixed[] = {
    {2, 2, 4, 3, 40, 16, 24, true, 0.0f, true, true},   /* 8-element K, V loads */
    {3, 1, 1, 1, 50, 8, 2, true, 0.3f, false, true},    /* odd count, bf16 out */
};
#define F16_RANDOM 10
#define I8_RANDOM 8
#define BF16_RANDOM 3

typedef struct dcase {
    shape s;
    vkattn_kv_cache_desc cd;
    vkattn_sdpa_decode_params p;
    uint32_t len[3];
    float *hk, *hv;     /* the appended values, (B, Hkv, cap, width) */
    void *sk, *sv; /* 16-bit: the cache's bits; i8: the rows dequantized (floats) */
    float *q, *vm;
    vkattn_dtype qt, ot; /* q's and out's types */
} dcase;

static unsigned cases(vkattn_dtype dt)
{
    return dt == VKATTN_DTYPE_F16    ? F16_RANDOM + 4
           : dt == VKATTN_DTYPE_BF16 ? BF16_RANDOM + 2
                                     : I8_RANDOM + 3;
}

/* a 16-bit q or out: f16, or under a bf16 cache bf16 (fixed cases) or either */
static vkattn_dtype type16(const th_op_case *c, bool random)
{
    if (c->dtype != VKATTN_DTYPE_BF16 || (random && tu_rand_range(0, 1)))
        return VKATTN_DTYPE_F16;
    return VKATTN_DTYPE_BF16;
}

static void gen(th_op_case *c)
{
    const bool f16 = c->dtype == VKATTN_DTYPE_F16, bf16 = c->dtype == VKATTN_DTYPE_BF16;
    const unsigned nrand = f16 ? F16_RANDOM : bf16 ? BF16_RANDOM : I8_RANDOM;
    dcase *d = calloc(1, sizeof *d);
    assert_non_null(d);
    c->p = d;
    shape s;
    if (c->index < nrand) {
        s.B = tu_rand_range(1, 3), s.kvh = tu_rand_range(1, 2), s.group = tu_rand_range(1, 2);
        s.tq = tu_rand_range(1, 4), s.cap = tu_rand_range(5, 80);
        s.dk = 8, s.dv = f16 || bf16 ? 6 : 12;
        s.vmask = tu_rand_range(0, 1), s.rate = tu_rand_range(0, 2) ? 0.0f : 0.3f;
        s.q16 = tu_rand_range(0, 1), s.out16 = tu_rand_range(0, 1);
    } else {
        s = (f16 ? f16_fixed : bf16 ? bf16_fixed : i8_fixed)[c->index - nrand];
    }
    d->s = s;
    d->qt = s.q16 ? type16(c, c->index < nrand) : VKATTN_DTYPE_F32;
    d->ot = s.out16 ? type16(c, c->index < nrand) : VKATTN_DTYPE_F32;
    d->cd = (vkattn_kv_cache_desc){.batch = s.B, .kv_heads = s.kvh, .capacity = s.cap,
                                   .key_dim = s.dk, .value_dim = s.dv, .dtype = c->dtype};
    d->p = (vkattn_sdpa_decode_params){
        .batch = s.B, .heads = s.kvh * s.group, .tq = s.tq, .kv_heads = s.kvh,
        .capacity = s.cap, .dk = s.dk, .dv = s.dv,
        .scale = tu_rand_range(0, 1) ? 0.0f : tu_rand_float(0.1f, 1.0f),
        .has_value_mask = s.vmask,
        .dropout = {.rate = s.rate, .training = s.rate > 0, .seed = tu_rand_u32(),
                    .offset = tu_rand_u32()},
    };
    const size_t nk = (size_t)s.B * s.kvh * s.cap * s.dk, nv = (size_t)s.B * s.kvh * s.cap * s.dv;
    const size_t nq = (size_t)s.B * d->p.heads * s.tq * s.dk;
    d->hk = tu_floats(nk), d->hv = tu_floats(nv);
    memset(d->hk, 0, nk * 4), memset(d->hv, 0, nv * 4);
    const size_t es = f16 || bf16 ? 2 : 4;
    d->sk = malloc(nk * es), d->sv = malloc(nv * es);
    assert_true(d->sk && d->sv);
    d->q = tu_floats(nq), d->vm = tu_floats((size_t)s.B * s.cap);
    tu_fill_uniform(d->q, nq, -1, 1);
    th_round_to(d->q, nq, d->qt);
    tu_fill_mask(d->vm, (size_t)s.B * s.cap, 0.8f);
    c->n = (size_t)s.B * d->p.heads * s.tq * s.dv;
    snprintf(c->what, sizeof c->what, "B=%u Hkv=%u G=%u Tq=%u cap=%u dk=%u dv=%u vm=%d rate=%g "
             "q %s out %s", s.B, s.kvh, s.group, s.tq, s.cap, s.dk, s.dv, s.vmask,
             (double)s.rate, th_dtype_name(d->qt), th_dtype_name(d->ot));
}

/* 16-bit: the cache's bits of rows [0, len_b) equal the nearest f16 of the
 * host values, or one spacing off towards zero; the nearest bf16 exactly. */
static void check_16_rows(const uint16_t *got, const float *want, const vkattn_kv_cache_desc *cd,
                          uint32_t width, const uint32_t *len)
{
    const bool bf16 = cd->dtype == VKATTN_DTYPE_BF16;
    for (uint32_t bh = 0; bh < cd->batch * cd->kv_heads; bh++)
        for (uint32_t t = 0; t < len[bh / cd->kv_heads]; t++)
            for (uint32_t e = 0; e < width; e++) {
                const size_t i = ((size_t)bh * cd->capacity + t) * width + e;
                const uint16_t n = bf16 ? th_bf16_bits(want[i]) : tu_f16_bits(want[i]);
                if (!(got[i] == n || (!bf16 && got[i] + 1 == n)))
                    fail_msg("cache bh %u row %u e %u: bits %04x, nearest %04x", bh, t, e,
                             got[i], n);
            }
}

/* i8: the documented rule, on the host. */
static void quantize_row(const float *x, uint32_t w, int8_t *q, float *scale)
{
    float mx = 0.0f;
    for (uint32_t e = 0; e < w; e++)
        mx = fmaxf(mx, fabsf(x[e]));
    const float s = mx / 127.0f;
    for (uint32_t e = 0; e < w; e++)
        q[e] = s > 0.0f ? (int8_t)fminf(fmaxf(rintf(x[e] / s), -127.0f), 127.0f) : 0;
    *scale = s;
}

/* i8: the storage of rows [0, len_b) against the rule's twin; fills deq
 * (B, Hkv, cap, width) with the stored rows dequantized (0 elsewhere). */
static void check_i8_storage(vkattn_tensor *t, const float *want, const vkattn_kv_cache_desc *cd,
                             uint32_t width, const uint32_t *len, float *deq, const char *what)
{
    const size_t rows = (size_t)cd->batch * cd->kv_heads * cd->capacity;
    const size_t w4 = width / 4, nw = rows * w4 + rows;
    assert_int_equal(vkattn_tensor_get_info(t).count, nw);
    uint32_t *words = malloc(nw * 4);
    int8_t q[256];
    assert_non_null(words);
    TH_OK(NULL, vkattn_tensor_download_raw(t, words, 0, nw));
    memset(deq, 0, sizeof(float) * rows * width);
    for (size_t bh = 0; bh < (size_t)cd->batch * cd->kv_heads; bh++)
        for (uint32_t r = 0; r < len[bh / cd->kv_heads]; r++) {
            const size_t row = bh * cd->capacity + r;
            float s, gs;
            quantize_row(want + row * width, width, q, &s);
            memcpy(&gs, &words[rows * w4 + row], 4);
            if (!TU_WITHIN(fabsf(gs - s), 4 * 1.2e-7f * s))
                fail_msg("%s row %zu: scale %.9g, the rule gives %.9g", what, row, gs, s);
            for (uint32_t e = 0; e < width; e++) {
                const int8_t g = (int8_t)(words[row * w4 + e / 4] >> (8 * (e % 4)));
                const double u = s > 0 ? fabs((double)want[row * width + e] / s) : 0.0;
                const bool tie = fabs(u - floor(u) - 0.5) < 1e-4;
                if (g != q[e] && !(tie && abs(g - q[e]) == 1))
                    fail_msg("%s row %zu e %u: q %d, the rule gives %d (x %.9g, scale %.9g)",
                             what, row, e, g, q[e], (double)want[row * width + e], (double)s);
                deq[row * width + e] = (float)g * gs;
            }
        }
    free(words);
}

static void run(vkattn_context *ctx, th_op_case *c)
{
    dcase *d = c->p;
    const shape *s = &d->s;
    vkattn_kv_cache *cache;
    vkattn_kv_cache_desc cd = d->cd;
    if (c->dtype == VKATTN_DTYPE_BF16 && c->index % 3 == 0) { /* over the app's bf16 tensors */
        cd.keys = th_rows_tensor(ctx, s->B, s->kvh, s->cap, s->dk, VKATTN_DTYPE_BF16, NULL);
        cd.values = th_rows_tensor(ctx, s->B, s->kvh, s->cap, s->dv, VKATTN_DTYPE_BF16, NULL);
    }
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    uint32_t count[3];
    for (int step = 0; step < 2; step++) {
        const uint32_t tnew = tu_rand_range(1, s->cap / 2);
        for (uint32_t b = 0; b < s->B; b++)
            count[b] = tu_rand_range(0, tnew);
        /* the first from 16-bit rows: bf16 or f16 into a bf16 cache */
        vkattn_dtype src = step ? VKATTN_DTYPE_F32 : VKATTN_DTYPE_F16;
        if (!step && c->dtype == VKATTN_DTYPE_BF16 && c->index % 2 == 0)
            src = VKATTN_DTYPE_BF16;
        th_kv_append_random(ctx, cache, &d->cd, tnew, d->len, count, src,
                            c->dtype != VKATTN_DTYPE_F16, d->hk, d->hv);
        for (uint32_t b = 0; b < s->B; b++)
            d->len[b] += count[b];
    }
    uint32_t dev_len[3];
    TH_OK(ctx, vkattn_kv_cache_lengths(cache, dev_len, NULL));
    assert_memory_equal(dev_len, d->len, sizeof(uint32_t) * s->B);
    const vkattn_kv_cache_desc got_d = vkattn_kv_cache_get_desc(cache);
    assert_int_equal(got_d.dtype, c->dtype);
    assert_true(!cd.keys || (got_d.keys == cd.keys && got_d.values == cd.values));
    if (c->dtype != VKATTN_DTYPE_I8) {
        const size_t nk = (size_t)s->B * s->kvh * s->cap * s->dk;
        const size_t nv = (size_t)s->B * s->kvh * s->cap * s->dv;
        TH_OK(ctx, vkattn_tensor_download_raw(got_d.keys, d->sk, 0, nk));
        TH_OK(ctx, vkattn_tensor_download_raw(got_d.values, d->sv, 0, nv));
        check_16_rows(d->sk, d->hk, &d->cd, s->dk, d->len);
        check_16_rows(d->sv, d->hv, &d->cd, s->dv, d->len);
    } else {
        check_i8_storage(got_d.keys, d->hk, &d->cd, s->dk, d->len, d->sk, c->what);
        check_i8_storage(got_d.values, d->hv, &d->cd, s->dv, d->len, d->sv, c->what);
    }
    const uint32_t H = d->p.heads;
    const size_t nq = (size_t)s->B * H * s->tq * s->dk;
    vkattn_sdpa_decode_io io = {
        .q = s->q16 ? th_rows_tensor(ctx, s->B, H, s->tq, s->dk, d->qt, d->q)
                    : th_tensor(ctx, nq, d->q),
        .cache = cache, .value_mask = s->vmask ? th_tensor(ctx, (size_t)s->B * s->cap, d->vm)
                                               : NULL,
        .out = s->out16 ? th_rows_tensor(ctx, s->B, H, s->tq, s->dv, d->ot, NULL)
                        : th_tensor(ctx, c->n, NULL)};
    if (s->out16)
        TH_OK(ctx, vkattn_tensor_fill(io.out, NAN));
    TH_OK(ctx, vkattn_sdpa_decode_record(ctx, VKATTN_RUN_NOW, &d->p, &io));
    c->got = th_download(io.out, c->n);
    vkattn_tensor_destroy(io.q);
    vkattn_tensor_destroy(io.value_mask);
    vkattn_tensor_destroy(io.out);
    vkattn_kv_cache_destroy(cache);
    vkattn_tensor_destroy(cd.keys), vkattn_tensor_destroy(cd.values);
}

static void ref(th_op_case *c)
{
    dcase *d = c->p;
    const float *vm = d->s.vmask ? d->vm : NULL;
    if (c->dtype != VKATTN_DTYPE_I8) {
        const vkattn_sdpa_dtypes ty = {.k = c->dtype, .v = c->dtype};
        TH_OK(NULL, vkattn_reference_sdpa_decode(&d->p, &ty, d->q, d->sk, d->sv, d->len, vm,
                                                 c->ref));
    } else {
        TH_OK(NULL, vkattn_reference_sdpa_decode(&d->p, NULL, d->q, d->sk, d->sv, d->len, vm,
                                                 c->ref));
    }
}

static double bound(const th_op_case *c)
{
    const vkattn_dtype ot = ((const dcase *)c->p)->ot;
    return ot == VKATTN_DTYPE_BF16 ? BOUND_OUT_BF16 : ot == VKATTN_DTYPE_F16 ? BOUND_OUT16 : BOUND;
}

/* i8 and bf16, no dropout, f32 out: per query row against the unquantized
 * reference; rel is each stored element's error over Kmax (Vmax), fp the
 * fp32 arithmetic of int8 quantization. */
static void check_vs_f32(th_op_case *c)
{
    const dcase *d = c->p;
    const vkattn_sdpa_decode_params *p = &d->p;
    if (c->dtype == VKATTN_DTYPE_F16 || d->s.rate != 0.0f || d->s.out16)
        return;
    const bool i8 = c->dtype == VKATTN_DTYPE_I8;
    const double rel = i8 ? 1.0 / 254 : 0x1p-8, fp = i8 ? 0x1p-20 : 0.0;
    float *ref32 = tu_floats(c->n);
    TH_OK(NULL, vkattn_reference_sdpa_decode(p, NULL, d->q, d->hk, d->hv, d->len,
                                             d->s.vmask ? d->vm : NULL, ref32));
    const uint32_t G = p->heads / p->kv_heads;
    double rmax = 0, worst = 0;
    for (size_t i = 0; i < c->n; i++)
        rmax = fmax(rmax, fabs(ref32[i]));
    const double scale = p->scale != 0 ? p->scale : 1.0 / sqrt(p->dk);
    for (uint32_t b = 0; b < p->batch; b++)
        for (uint32_t h = 0; h < p->heads; h++) {
            const size_t bhk = (size_t)b * p->kv_heads + h / G;
            double kmax = 0, vmax = 0;
            for (uint32_t r = 0; r < d->len[b]; r++) {
                for (uint32_t e = 0; e < p->dk; e++)
                    kmax = fmax(kmax, fabs(d->hk[(bhk * p->capacity + r) * p->dk + e]));
                for (uint32_t e = 0; e < p->dv; e++)
                    vmax = fmax(vmax, fabs(d->hv[(bhk * p->capacity + r) * p->dv + e]));
            }
            for (uint32_t i = 0; i < p->tq; i++) {
                const size_t row = ((size_t)b * p->heads + h) * p->tq + i;
                double q1 = 0;
                for (uint32_t e = 0; e < p->dk; e++)
                    q1 += fabs(d->q[row * p->dk + e]);
                const double eps = scale * q1 * kmax * rel;
                const double bnd = (expm1(2 * eps) + rel + fp) * vmax + BOUND * rmax;
                for (uint32_t e = 0; e < p->dv; e++) {
                    const double err = fabs(c->got[row * p->dv + e] - ref32[row * p->dv + e]);
                    if (!TU_WITHIN(err, bnd))
                        fail_msg("%s: row %zu e %u: error %.3g vs the f32 cache exceeds the "
                                 "%s bound %.3g", c->what, row, e, err, th_dtype_name(c->dtype),
                                 bnd);
                    worst = fmax(worst, err / bnd);
                }
            }
        }
    print_message("%s: error vs the f32 cache at most %.2g of the %s bound\n", c->what, worst,
                  th_dtype_name(c->dtype));
    free(ref32);
}

static void done(th_op_case *c)
{
    dcase *d = c->p;
    void *fs[] = {d->hk, d->hv, d->sk, d->sv, d->q, d->vm, d};
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
        free(fs[i]);
}

static const th_op_row rows[] = {
    {.op = "decode (KV cache)", .dtypes = {VKATTN_DTYPE_F16, VKATTN_DTYPE_I8, VKATTN_DTYPE_BF16},
     .ndtypes = 3,
     .cases = cases, .gen = gen, .run = run, .ref = ref, .bound = bound, .check = check_vs_f32,
     .done = done},
};

/* Bad arguments: each call builds what it needs and releases it. */
static vkattn_result cache_with(vkattn_context *ctx, vkattn_kv_cache_desc cd, bool app_keys)
{
    vkattn_kv_cache *cache = NULL;
    if (app_keys)
        cd.keys = th_tensor(ctx, 16, NULL); /* f32: not the cache's type */
    const vkattn_result r = vkattn_kv_cache_create(ctx, &cd, &cache);
    vkattn_tensor_destroy(cd.keys);
    if (r != VKATTN_SUCCESS && cache)
        fail_msg("a failed kv_cache_create left *out set");
    vkattn_kv_cache_destroy(cache);
    return r;
}
#define CD(kd, vd, t)                                                                              \
    (vkattn_kv_cache_desc){.batch = 1, .kv_heads = 1, .capacity = 4, .key_dim = (kd),             \
                           .value_dim = (vd), .dtype = (t)}
static vkattn_result f16_odd_width(vkattn_context *ctx)
{
    return cache_with(ctx, CD(3, 4, VKATTN_DTYPE_F16), false);
}
static vkattn_result bad_dtype(vkattn_context *ctx)
{
    return cache_with(ctx, CD(4, 4, (vkattn_dtype)9), false);
}
static vkattn_result bf16_odd_width(vkattn_context *ctx)
{
    return cache_with(ctx, CD(4, 5, VKATTN_DTYPE_BF16), false);
}
static vkattn_result f16_app_keys_f32(vkattn_context *ctx)
{
    return cache_with(ctx, CD(4, 4, VKATTN_DTYPE_F16), true);
}
static vkattn_result i8_key_dim(vkattn_context *ctx)
{
    return cache_with(ctx, CD(6, 4, VKATTN_DTYPE_I8), false);
}
static vkattn_result i8_value_dim(vkattn_context *ctx)
{
    return cache_with(ctx, CD(4, 2, VKATTN_DTYPE_I8), false);
}
static vkattn_result i8_app_keys(vkattn_context *ctx)
{
    return cache_with(ctx, CD(4, 4, VKATTN_DTYPE_I8), true);
}
static vkattn_result f16_value_mask(vkattn_context *ctx)
{
    vkattn_kv_cache *cache = NULL;
    const vkattn_kv_cache_desc cd = CD(4, 4, VKATTN_DTYPE_F16);
    TH_OK(ctx, vkattn_kv_cache_create(ctx, &cd, &cache));
    const vkattn_tensor_desc h4 = {.rank = 1, .dims = {4}, .dtype = VKATTN_DTYPE_F16};
    vkattn_tensor *vm = NULL;
    TH_OK(ctx, vkattn_tensor_create(ctx, &h4, &vm));
    const vkattn_sdpa_decode_params p = {.batch = 1, .heads = 1, .tq = 1, .capacity = 4,
                                         .dk = 4, .has_value_mask = true};
    vkattn_sdpa_decode_io io = {.q = th_tensor(ctx, 4, NULL), .cache = cache, .value_mask = vm,
                                .out = th_tensor(ctx, 4, NULL)};
    const vkattn_result r = vkattn_sdpa_decode_record(ctx, VKATTN_RUN_NOW, &p, &io);
    vkattn_tensor_destroy(vm);
    vkattn_tensor_destroy(io.q);
    vkattn_tensor_destroy(io.out);
    vkattn_kv_cache_destroy(cache);
    return r;
}
/* only the cache takes I8: tensors, layers and the references refuse it */
static vkattn_result i8_tensor(vkattn_context *ctx)
{
    vkattn_tensor *t = NULL;
    const vkattn_tensor_desc td = {.rank = 1, .dims = {4}, .dtype = VKATTN_DTYPE_I8};
    const vkattn_result r = vkattn_tensor_create(ctx, &td, &t);
    vkattn_tensor_destroy(t);
    return r;
}
static vkattn_result i8_mha(vkattn_context *ctx)
{
    vkattn_mha *mha = NULL;
    const vkattn_mha_desc md = {.num_heads = 1, .key_dim = 4, .query_width = 4, .value_width = 4,
                                .dtype = VKATTN_DTYPE_I8};
    const vkattn_result r = vkattn_mha_create(ctx, &md, &mha);
    vkattn_mha_destroy(mha);
    return r;
}
static vkattn_result i8_reference(vkattn_context *ctx)
{
    (void)ctx;
    const vkattn_sdpa_decode_params p = {.batch = 1, .heads = 1, .tq = 1, .capacity = 4, .dk = 4};
    float h[16] = {0};
    const uint32_t len = 1;
    const vkattn_sdpa_dtypes ty = {.k = VKATTN_DTYPE_I8};
    return vkattn_reference_sdpa_decode(&p, &ty, h, h, h, &len, NULL, h);
}

static const th_bad_arg bad_args[] = {
    {"f16 cache, odd key_dim", f16_odd_width, VKATTN_ERROR_UNSUPPORTED, "even"},
    {"bf16 cache, odd value_dim", bf16_odd_width, VKATTN_ERROR_UNSUPPORTED,
     "a bf16 cache needs even"},
    {"cache dtype 9", bad_dtype, VKATTN_ERROR_INVALID_ARGUMENT, "dtype"},
    {"f16 cache, f32 app keys", f16_app_keys_f32, VKATTN_ERROR_INVALID_ARGUMENT, "desc->keys"},
    {"f16 value mask", f16_value_mask, VKATTN_ERROR_UNSUPPORTED, "io->value_mask"},
    {"i8 cache, key_dim 6", i8_key_dim, VKATTN_ERROR_UNSUPPORTED, "desc->key_dim (6)"},
    {"i8 cache, value_dim 2", i8_value_dim, VKATTN_ERROR_UNSUPPORTED, "desc->value_dim (2)"},
    {"i8 cache, app keys", i8_app_keys, VKATTN_ERROR_UNSUPPORTED, "desc->keys"},
    {"i8 tensor", i8_tensor, VKATTN_ERROR_INVALID_ARGUMENT, "desc->dtype is 2"},
    {"i8 mha", i8_mha, VKATTN_ERROR_INVALID_ARGUMENT, "desc->dtype is 2"},
    {"i8 reference", i8_reference, VKATTN_ERROR_INVALID_ARGUMENT, "types->k is 2"},
};

static void test_bad_args(void **state)
{
    th_run_bad_args(TH_CTX(state), bad_args, sizeof bad_args / sizeof bad_args[0]);
}

static void test_rows(void **state)
{
    th_run_op_rows(TH_CTX(state), rows, sizeof rows / sizeof rows[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {TU_TESTS(test_bad_args, test_rows)};
    return TH_RUN_WITH_MOBILE("decode dtypes", tests);
}
