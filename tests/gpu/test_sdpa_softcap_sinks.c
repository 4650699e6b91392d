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
 * double. Backward, fused (lse given) and chained: vs
 * vkattn_reference_sdpa_backward, on the equivalent problem for sinks (its
 * extra key's rows dropped), grad_sinks against -sum p_sink * rowsum(dO * out)
 * from that problem's weights. Layers, forward and backward: MultiHeadAttention
 * and GroupedQueryAttention with either or both (dropout sometimes, scores
 * returned sometimes: the chained path) vs vkattn_reference_mha / _gqa and
 * their backward (grad_w->sinks), whose sinks go through the library's
 * internal reference. Refusals: sinks on a chained call the fused kernel
 * cannot serve. (Decode's soft-capping and sinks: test_decode_softcap_sinks.c.)
 *
 * Bounds: as tests/gpu/test_sdpa.c (2e-5 of max|ref| for f32: fp32 rounding
 * of dk-term dot products, tanh_robust's few ulp, the sink factor's exp);
 * 2e-3 for the f16 case (its output is rounded to f16, 2^-11 relative, and
 * the sink pass rounds it twice); the lse 1e-5 absolute (|lse| = O(1)
 * here); gradients as tests/gpu/test_sdpa_backward.c (1e-4 of max(max|ref|,
 * 0.01)). Outputs are poisoned with NaN. About 20 s on lavapipe at load ~4. */
#include "harness.h"
#include "multi_head_case.h"

#include <vkattn/gqa.h>
#include <vkattn/sdpa_backward.h>
#include <vkattn/reference.h>
#include <vkattn/reference_backward.h>

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

/* The equivalent problem of a call with sinks: one extra key in front (k = 0,
 * v = 0, bias sink_h, always allowed), sinks off, the zero policy. */
typedef struct extended {
    vkattn_sdpa_params p;
    float *k, *v, *bias, *vm;
} extended;

static extended extend(const vkattn_sdpa_params *p, const float *k, const float *v,
                       const float *bias, const float *vm, const float *sinks)
{
    const uint32_t B = p->batch, H = p->heads, Hkv = kv_heads(p), Tq = p->tq, Tv = p->tv;
    const uint32_t dk = p->dk, dv = dv_of(p), T1 = Tv + 1;
    extended e = {.p = *p,
                  .k = tu_floats((size_t)B * Hkv * T1 * dk),
                  .v = tu_floats((size_t)B * Hkv * T1 * dv),
                  .bias = tu_floats((size_t)B * H * Tq * T1),
                  .vm = tu_floats((size_t)B * T1)};
    for (size_t bh = 0; bh < (size_t)B * Hkv; bh++) {
        memset(e.k + bh * T1 * dk, 0, dk * sizeof(float));
        memcpy(e.k + bh * T1 * dk + dk, k + bh * Tv * dk, (size_t)Tv * dk * sizeof(float));
        memset(e.v + bh * T1 * dv, 0, dv * sizeof(float));
        memcpy(e.v + bh * T1 * dv + dv, v + bh * Tv * dv, (size_t)Tv * dv * sizeof(float));
    }
    for (size_t r = 0; r < (size_t)B * H * Tq; r++) {
        e.bias[r * T1] = sinks[(r / Tq) % H];
        for (uint32_t j = 0; j < Tv; j++)
            e.bias[r * T1 + 1 + j] = bias ? bias[r * Tv + j] : 0.0f;
    }
    for (uint32_t b = 0; b < B; b++) {
        e.vm[(size_t)b * T1] = 1.0f;
        for (uint32_t j = 0; j < Tv; j++)
            e.vm[(size_t)b * T1 + 1 + j] = vm ? vm[(size_t)b * Tv + j] : 1.0f;
    }
    e.p.tv = T1, e.p.has_sinks = false, e.p.mask.has_bias = true, e.p.mask.has_value_mask = true;
    e.p.mask.bias_broadcast = (vkattn_broadcast){0};
    e.p.mask.masked_row = VKATTN_MASKED_ROW_ZERO;
    e.p.return_weights = true;
    return e;
}

static void extended_free(extended *e) { free(e->k), free(e->v), free(e->bias), free(e->vm); }

/* Drops the extra key's column (rows of Tv + 1 -> Tv): weights, dK, dV. */
static void drop_first(const float *src, float *dst, size_t rows, size_t tv, size_t width)
{
    for (size_t r = 0; r < rows; r++)
        memcpy(dst + r * tv * width, src + (r * (tv + 1) + 1) * width, tv * width * sizeof(float));
}

/* The expected output (and weights) with sinks, by the equivalent problem. */
static void reference_with_sinks(const vkattn_sdpa_params *p, const float *q, const float *k,
                                 const float *v, const float *bias, const float *vm,
                                 const float *sinks, float *out, float *weights)
{
    extended e = extend(p, k, v, bias, vm, sinks);
    const size_t rows = (size_t)p->batch * p->heads * p->tq;
    float *w1 = tu_floats(rows * e.p.tv);
    assert_int_equal(vkattn_reference_sdpa(&e.p, NULL, q, e.k, e.v, e.bias, e.vm, NULL, out, w1),
                     VKATTN_SUCCESS);
    if (p->return_weights)
        drop_first(w1, weights, rows, p->tv, 1);
    extended_free(&e);
    free(w1);
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
            if (!TU_WITHIN(fabs(got[r] - want), LSE_BOUND))
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

/* ---------------------------------------------------------------- backward */

#define GRAD_BOUND 1e-4 /* tests/gpu/test_sdpa_backward.c's, relative to max|ref| */
#define GRAD_FLOOR 1e-2 /* ... and at least this scale (gradients that are 0 analytically) */

static void expect_grad(const float *got, const float *ref, size_t n, const char *what,
                        const char *name)
{
    const double err = tu_max_rel_err(got, ref, n, GRAD_FLOOR);
    if (!TU_WITHIN(err, GRAD_BOUND))
        fail_msg("%s: %s: max relative error %.3g exceeds %.3g", what, name, err, GRAD_BOUND);
}

/* The fused forward (lse kept) then the fused backward on the GPU (or, where
 * `chained`, the chained backward: no lse, it recomputes the weights), against
 * vkattn_reference_sdpa_backward: on the call itself for soft-capping, on the
 * equivalent problem for sinks (dQ; dK and dV without the extra key's rows;
 * dsink_h = -sum p_sink * rowsum(dO * out), p_sink the extra key's weight). */
static void run_op_backward(vkattn_context *ctx, const vkattn_sdpa_params *p, bool chained)
{
    const uint32_t dv = dv_of(p), hkv = kv_heads(p);
    const size_t rows = (size_t)p->batch * p->heads * p->tq, nq = rows * p->dk;
    const size_t nk = (size_t)p->batch * hkv * p->tv * p->dk;
    const size_t nv = (size_t)p->batch * hkv * p->tv * dv, nout = rows * dv;
    const size_t nbias = rows * p->tv, nvm = (size_t)p->batch * p->tv;
    float *q = tu_floats(nq), *k = tu_floats(nk), *v = tu_floats(nv), *go = tu_floats(nout);
    float *bias = tu_floats(nbias), *vm = tu_floats(nvm), *sinks = tu_floats(p->heads);
    float *rq = tu_floats(nq), *rk = tu_floats(nk), *rv = tu_floats(nv);
    float *rs = tu_floats(p->heads);
    tu_fill_uniform(q, nq, -2, 2);
    tu_fill_uniform(k, nk, -2, 2);
    tu_fill_uniform(v, nv, -1, 1);
    tu_fill_uniform(go, nout, -1, 1);
    tu_fill_uniform(bias, nbias, -1, 1);
    tu_fill_mask(vm, nvm, 0.8f);
    memset(vm, 0, p->tv * sizeof(float)); /* batch 0: every row fully masked */
    tu_fill_uniform(sinks, p->heads, -2, 2);
    const float *b = p->mask.has_bias ? bias : NULL, *m = p->mask.has_value_mask ? vm : NULL;
    if (!p->has_sinks) {
        assert_int_equal(vkattn_reference_sdpa_backward(p, q, k, v, b, m, NULL, go, rq, rk, rv),
                         VKATTN_SUCCESS);
    } else {
        extended e = extend(p, k, v, b, m, sinks);
        const uint32_t t1 = e.p.tv;
        float *k1 = tu_floats((size_t)p->batch * hkv * t1 * p->dk);
        float *v1 = tu_floats((size_t)p->batch * hkv * t1 * dv);
        float *out1 = tu_floats(nout), *w1 = tu_floats(rows * t1);
        vkattn_sdpa_params pb = e.p;
        pb.return_weights = false;
        assert_int_equal(vkattn_reference_sdpa_backward(&pb, q, e.k, e.v, e.bias, e.vm, NULL, go,
                                                        rq, k1, v1),
                         VKATTN_SUCCESS);
        drop_first(k1, rk, (size_t)p->batch * hkv, p->tv, p->dk);
        drop_first(v1, rv, (size_t)p->batch * hkv, p->tv, dv);
        assert_int_equal(vkattn_reference_sdpa(&e.p, NULL, q, e.k, e.v, e.bias, e.vm, NULL, out1,
                                               w1),
                         VKATTN_SUCCESS);
        double acc[16] = {0};
        for (size_t r = 0; r < rows; r++) {
            double d = 0.0;
            for (uint32_t x = 0; x < dv; x++)
                d += (double)go[r * dv + x] * out1[r * dv + x];
            acc[(r / p->tq) % p->heads] -= (double)w1[r * t1] * d;
        }
        for (uint32_t h = 0; h < p->heads; h++)
            rs[h] = (float)acc[h];
        free(k1), free(v1), free(out1), free(w1);
        extended_free(&e);
    }

    vkattn_tensor *tq = th_tensor(ctx, nq, q), *tk = th_tensor(ctx, nk, k);
    vkattn_tensor *tv = th_tensor(ctx, nv, v), *tout = th_tensor(ctx, nout, NULL);
    vkattn_tensor *tlse = th_tensor(ctx, rows, NULL);
    vkattn_tensor *tb = b ? th_tensor(ctx, nbias, b) : NULL, *tm = m ? th_tensor(ctx, nvm, m) : NULL;
    vkattn_tensor *ts = p->has_sinks ? th_tensor(ctx, p->heads, sinks) : NULL;
    vkattn_sdpa_params pf = *p;
    pf.path = VKATTN_SDPA_FUSED;
    vkattn_sdpa_io fio = {.q = tq, .k = tk, .v = tv, .bias = tb, .value_mask = tm, .out = tout,
                          .lse = tlse, .sinks = ts};
    TH_OK(ctx, vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &pf, &fio));
    vkattn_sdpa_backward_io bio = {
        .q = tq, .k = tk, .v = tv, .bias = tb, .value_mask = tm,
        .out = chained ? NULL : tout, .lse = chained ? NULL : tlse,
        .grad_out = th_tensor(ctx, nout, go), .grad_q = th_tensor(ctx, nq, NULL),
        .grad_k = th_tensor(ctx, nk, NULL), .grad_v = th_tensor(ctx, nv, NULL), .sinks = ts,
        .grad_sinks = p->has_sinks ? th_tensor(ctx, p->heads, NULL) : NULL};
    TH_OK(ctx, vkattn_sdpa_backward_record(ctx, VKATTN_RUN_NOW, p, &bio));
    op_case c = {.p = *p};
    char what[320];
    describe(&c, what, sizeof what);
    strncat(what, chained ? " backward chained" : " backward fused", sizeof what - strlen(what) - 1);
    float *got = th_download(bio.grad_q, nq);
    expect_grad(got, rq, nq, what, "grad_q");
    free(got);
    got = th_download(bio.grad_k, nk);
    expect_grad(got, rk, nk, what, "grad_k");
    free(got);
    got = th_download(bio.grad_v, nv);
    expect_grad(got, rv, nv, what, "grad_v");
    free(got);
    if (p->has_sinks) {
        got = th_download(bio.grad_sinks, p->heads);
        expect_grad(got, rs, p->heads, what, "grad_sinks");
        free(got);
    }
    vkattn_tensor *all[] = {tq,           tk,          tv,          tout,        tlse,
                            tb,           tm,          ts,          bio.grad_out, bio.grad_q,
                            bio.grad_k,   bio.grad_v,  bio.grad_sinks};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vkattn_tensor_destroy(all[i]);
    free(q), free(k), free(v), free(go), free(bias), free(vm), free(sinks);
    free(rq), free(rk), free(rv), free(rs);
    th_assert_validation_clean();
}

static void test_backward(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int n = 0; n < 12; n++) {
        vkattn_sdpa_params p = random_params();
        p.softcap = n % 4 == 3 ? 0.0f : tu_rand_float(0.3f, 2.0f);
        p.has_sinks = n % 2 == 1;
        if (n % 6 == 2) /* dropout (soft-capping alone: the equivalent problem has none) */
            p.dropout = (vkattn_dropout_params){.rate = 0.3f, .training = true, .seed = 3};
        run_op_backward(ctx, &p, n >= 6);
    }
}

/* ---------------------------------------------------------------- layers */

/* One MultiHeadAttention (3 heads, key_dim kd, value_dim 3) or
 * GroupedQueryAttention (4 query heads over 2, head_dim 3) with the options
 * under test: its descs, and the GPU layer once made. */
typedef struct test_layer {
    bool gqa;
    vkattn_mha_desc md;
    vkattn_gqa_desc gd;
    vkattn_mha *mha;
    vkattn_gqa *gqa_layer;
} test_layer;

static test_layer layer_of(bool gqa, uint32_t kd, float softcap, bool use_sinks, float dropout)
{
    return (test_layer){
        .gqa = gqa,
        .md = {.num_heads = 3, .key_dim = kd, .value_dim = 3, .query_width = kd + 1,
               .value_width = kd + 2, .dropout = dropout, .softcap = softcap,
               .use_sinks = use_sinks},
        .gd = {.num_query_heads = 4, .num_key_value_heads = 2, .head_dim = 3,
               .query_width = 5, .value_width = 6, .dropout = dropout, .softcap = softcap,
               .use_sinks = use_sinks}};
}

static rc_mha_widths widths_of(const test_layer *l)
{
    return l->gqa ? mh_gqa_widths(&l->gd) : rc_mha_widths_of(&l->md);
}

static vkattn_result reference(const test_layer *l, const vkattn_mha_weights *w,
                               const vkattn_layer_call *call, const vkattn_layer_host_io *io)
{
    return l->gqa ? vkattn_reference_gqa(&l->gd, w, call, io)
                  : vkattn_reference_mha(&l->md, w, call, io);
}

static void make(vkattn_context *ctx, test_layer *l, const vkattn_mha_weights *w)
{
    if (l->gqa) {
        TH_OK(ctx, vkattn_gqa_create(ctx, &l->gd, &l->gqa_layer));
        TH_OK(ctx, vkattn_gqa_set_weights(l->gqa_layer, w));
    } else {
        TH_OK(ctx, vkattn_mha_create(ctx, &l->md, &l->mha));
        TH_OK(ctx, vkattn_mha_set_weights(l->mha, w));
    }
}

static vkattn_result forward(test_layer *l, const vkattn_layer_call *call,
                             const vkattn_layer_io *io)
{
    return l->gqa ? vkattn_gqa_record(l->gqa_layer, VKATTN_RUN_NOW, call, io)
                  : vkattn_mha_record(l->mha, VKATTN_RUN_NOW, call, io);
}

static void destroy(test_layer *l)
{
    vkattn_gqa_destroy(l->gqa_layer), vkattn_mha_destroy(l->mha);
    l->gqa_layer = NULL, l->mha = NULL;
}

static void run_layer(vkattn_context *ctx, bool gqa, float softcap, bool use_sinks, float dropout,
                      bool scores)
{
    const vkattn_layer_call call = {.batch = tu_rand_range(1, 2), .tq = tu_rand_range(2, 7),
                                    .tv = tu_rand_range(2, 9), .training = dropout > 0.0f,
                                    .causal = VKATTN_CAUSAL_BOTTOM_RIGHT,
                                    .return_attention_scores = scores};
    test_layer l = layer_of(gqa, 5, softcap, use_sinks, dropout);
    const mh_case m = {.w = widths_of(&l), .call = &call, .value_mask = true,
                       .query_mask = true};
    host h;
    mh_host_random(&m, &h);
    float *sinks = tu_floats(m.w.H);
    tu_fill_uniform(sinks, m.w.H, -1.5f, 1.5f);
    h.w.sinks = use_sinks ? sinks : NULL;
    const sizes s = mh_sizes(&m);
    float *ref = tu_floats(s.out), *got = tu_floats(s.out);
    float *ref_s = tu_floats(s.scores), *got_s = tu_floats(s.scores);
    const vkattn_layer_host_io hio = mh_host_io(&m, &h, ref, ref_s);
    assert_int_equal(reference(&l, &h.w, &call, &hio), VKATTN_SUCCESS);
    vkattn_layer_io io = mh_gpu_io(ctx, &m, &h);
    make(ctx, &l, &h.w);
    TH_OK(ctx, forward(&l, &call, &io));
    destroy(&l);
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

/* The layer backward (forward kept; fused, or chained where scores are
 * returned) against
 * vkattn_reference_mha_backward / _gqa_backward: grad_query, grad_value,
 * grad_w->query_kernel and grad_w->sinks. */
static void run_layer_backward(vkattn_context *ctx, bool gqa, float softcap, bool use_sinks,
                               float dropout, bool scores)
{
    const vkattn_layer_call call = {.batch = tu_rand_range(1, 2), .tq = tu_rand_range(2, 6),
                                    .tv = tu_rand_range(2, 7), .training = dropout > 0.0f,
                                    .causal = VKATTN_CAUSAL_BOTTOM_RIGHT,
                                    .keep_for_backward = true,
                                    .return_attention_scores = scores};
    vkattn_layer_call ref_call = call;
    ref_call.return_attention_scores = false;
    test_layer l = layer_of(gqa, 4, softcap, use_sinks, dropout);
    const mh_case m = {.w = widths_of(&l), .call = &call, .value_mask = true};
    host h;
    mh_host_random(&m, &h);
    float *sinks = tu_floats(m.w.H);
    tu_fill_uniform(sinks, m.w.H, -1.5f, 1.5f);
    h.w.sinks = use_sinks ? sinks : NULL;
    const sizes s = mh_sizes(&m);
    float *go = mh_uniform(s.out, 1.0f), *out = tu_floats(s.out);
    float *ref_q = tu_floats(s.query), *ref_v = tu_floats(s.value), *ref_wq = tu_floats(s.wq);
    float *ref_s = tu_floats(m.w.H);
    const vkattn_layer_host_io hio = mh_host_io(&m, &h, out, NULL);
    vkattn_layer_host_grads hg = {.grad_query = ref_q, .grad_value = ref_v};
    vkattn_mha_weights hgw = {.query_kernel = ref_wq, .sinks = use_sinks ? ref_s : NULL};
    assert_int_equal(gqa ? vkattn_reference_gqa_backward(&l.gd, &h.w, &ref_call, &hio, go, &hg,
                                                         &hgw)
                         : vkattn_reference_mha_backward(&l.md, &h.w, &ref_call, &hio, go, &hg,
                                                         &hgw),
                     VKATTN_SUCCESS);
    vkattn_layer_io io = mh_gpu_io(ctx, &m, &h);
    vkattn_layer_grads g = {.grad_output = th_tensor(ctx, s.out, go),
                            .grad_query = th_tensor(ctx, s.query, NULL),
                            .grad_value = th_tensor(ctx, s.value, NULL)};
    vkattn_mha_weight_tensors gw = {
        .query_kernel = th_tensor(ctx, s.wq, NULL),
        .sinks = use_sinks ? th_tensor(ctx, m.w.H, NULL) : NULL};
    make(ctx, &l, &h.w);
    TH_OK(ctx, forward(&l, &call, &io));
    TH_OK(ctx, gqa ? vkattn_gqa_backward_record(l.gqa_layer, VKATTN_RUN_NOW, &call, &io, &g, &gw)
                   : vkattn_mha_backward_record(l.mha, VKATTN_RUN_NOW, &call, &io, &g, &gw));
    destroy(&l);
    char what[120];
    snprintf(what, sizeof what,
             "%s backward B=%u Tq=%u Tv=%u softcap=%g sinks=%d drop=%g scores (chained)=%d",
             gqa ? "gqa" : "mha", call.batch, call.tq, call.tv, (double)softcap, use_sinks,
             (double)dropout, scores);
    float *got = th_download(g.grad_query, s.query);
    expect_grad(got, ref_q, s.query, what, "grad_query");
    free(got);
    got = th_download(g.grad_value, s.value);
    expect_grad(got, ref_v, s.value, what, "grad_value");
    free(got);
    got = th_download(gw.query_kernel, s.wq);
    expect_grad(got, ref_wq, s.wq, what, "grad_w->query_kernel");
    free(got);
    if (use_sinks) {
        got = th_download(gw.sinks, m.w.H);
        expect_grad(got, ref_s, m.w.H, what, "grad_w->sinks");
        free(got);
    }
    mh_gpu_io_finish(ctx, &m, &io, false, NULL, NULL);
    vkattn_tensor *all[] = {g.grad_output, g.grad_query, g.grad_value, gw.query_kernel, gw.sinks};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vkattn_tensor_destroy(all[i]);
    free(go), free(out), free(ref_q), free(ref_v), free(ref_wq), free(ref_s), free(sinks);
    mh_host_free(&m, &h);
    th_assert_validation_clean();
}

static void test_layer_backward(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    run_layer_backward(ctx, false, 0.9f, true, 0.25f, false);
    run_layer_backward(ctx, false, 0.0f, true, 0.0f, true);
    run_layer_backward(ctx, true, 0.7f, true, 0.0f, false);
    run_layer_backward(ctx, true, 1.1f, false, 0.3f, true);
    run_layer_backward(ctx, false, 0.8f, true, 0.2f, true);
}

/* ---------------------------------------------------------------- refusals */

static void test_refusals(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    float host8[12];
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
    /* the chained backward keeps the raw scores for soft-capping's slope */
    TH_OK(ctx, vkattn_sdpa_backward_workspace_size(ctx, &capped, false, true, &floats, &count));
    assert_int_equal(count, 2);
    /* the layer: scores returned, so the chained forward and backward, whose
     * sinks need the fused kernel for the LSE: here it serves */
    const vkattn_mha_desc md = {.num_heads = 2, .key_dim = 4, .query_width = 4,
                                .value_width = 4, .use_sinks = true};
    vkattn_mha *layer = NULL;
    TH_OK(ctx, vkattn_mha_create(ctx, &md, &layer));
    const vkattn_layer_call call = {.batch = 1, .tq = 2, .tv = 3, .keep_for_backward = true,
                                    .return_attention_scores = true};
    vkattn_tensor *y = th_tensor(ctx, 8, NULL), *sc = th_tensor(ctx, 12, NULL);
    tu_fill_uniform(host8, 12, -1, 1);
    TH_OK(ctx, vkattn_tensor_upload(y, host8, 0, 8));
    vkattn_layer_io lio = {.query = y, .value = th_tensor(ctx, 12, host8),
                           .output = th_tensor(ctx, 8, NULL), .scores = sc};
    TH_OK(ctx, vkattn_mha_record(layer, VKATTN_RUN_NOW, &call, &lio));
    vkattn_layer_grads g = {.grad_output = th_tensor(ctx, 8, host8),
                            .grad_query = th_tensor(ctx, 8, NULL),
                            .grad_value = th_tensor(ctx, 12, NULL)};
    TH_OK(ctx, vkattn_mha_backward_record(layer, VKATTN_RUN_NOW, &call, &lio, &g, NULL));
    vkattn_mha_destroy(layer);
    vkattn_tensor *ts[] = {x,          s,          io.out,       y,           sc,
                           lio.value, lio.output, g.grad_query, g.grad_value, g.grad_output};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        vkattn_tensor_destroy(ts[i]);
    th_assert_validation_clean();
}

TU_MAIN(th_setup, th_teardown,
    test_softcap, test_sinks, test_backward, test_layers, test_layer_backward, test_refusals)
