/* GroupedQueryAttention backward on the GPU vs vkattn_reference_gqa_backward,
 * and the reference vs MultiHeadAttention's with the key/value kernels
 * repeated Nq/Nkv times on the head axis.
 *
 * Each case runs the forward with call.keep_for_backward, then the backward,
 * and compares every gradient (grad_query, grad_value, grad_key and the eight
 * weight gradients, the key/value ones of Nkv heads) with the double
 * reference. Random shapes: Nq in {1, 2, 4, 6} with Nkv in {1, Nq/2, Nq},
 * odd widths, Tq != Tv, batch 1, key given or omitted (grad_value then sums
 * both paths), self-attention, query/value/attention masks, causal both ways,
 * sliding windows, dropout in training, no_bias, Keras use_gate, the fused
 * (AUTO) and chained paths.
 * Gradients poisoned with NaN first.
 *
 * Bound (test_mha_backward.c's): max|got - ref| / max(max|ref|, 0.01) <= 2e-4
 * for each gradient. The property: a key/value head's weight gradient is the
 * sum of the gradients of its repetitions, so GQA's reference equals MHA's
 * summed over each group; the two sum the same double terms in another order
 * and round once to f32: 1e-5 relative.
 * f16 layers (test_random_cases_f16): the io, grad_output and gradients f16
 * (one case in three f32), inputs, weights and grad_output rounded to f16
 * before the reference; bound and floor as test_mha_backward.c's f16 ones,
 * max|got - ref| / max(max|ref|, 0.1) <= 8 * 2^-10 past what the kept f16
 * output adds to the query and key paths' gradients (kept_output_bound.h:
 * the key bias's, zero in exact arithmetic, went 0.00986 over the plain
 * bound with seed 1795945410295012949). bf16 layers (two of those cases):
 * the same with bf16's spacing, 8 * 2^-7, past the kept bf16 output's
 * allowance. */
#include "harness.h"
#include "kept_output_bound.h"
#include "multi_head_case.h"

#include <stdio.h>

#define BOUND 2e-4
#define PROPERTY_BOUND 1e-5
#define BOUND_F16 (8.0 / 1024) /* test_mha_backward.c's f16 bound and floor */
#define BOUND_BF16 (8.0 / 128)  /* its bf16 bound: 8 spacings at 1 */
#define FLOOR_F16 1e-1

enum { G_QUERY, G_VALUE, G_KEY, G_WQ, G_BQ, G_WK, G_BK, G_WV, G_BV, G_WO, G_BO, G_WG, G_BG,
       N_GRADS };

typedef struct bcase {
    vkattn_gqa_desc desc;
    vkattn_layer_call call;
    bool key_given, self_attn, query_mask, value_mask;
    attn_kind attn;
    bool f32_io; /* desc.dtype F16 or BF16: io, grad_output and the gradients f32, else of it */
} bcase;

static bool is_half(const bcase *m) { return m->desc.dtype != VKATTN_DTYPE_F32; }

static mh_case view(const bcase *m)
{
    return (mh_case){.w = mh_gqa_widths(&m->desc), .no_bias = m->desc.no_bias,
                     .use_gate = m->desc.use_gate,
                     .call = &m->call, .key_given = m->key_given, .self_attn = m->self_attn,
                     .query_mask = m->query_mask, .value_mask = m->value_mask, .attn = m->attn};
}

/* Element counts of the gradients, 0 where the case has none. */
static void grad_counts(const bcase *m, size_t n[N_GRADS])
{
    const mh_case v = view(m);
    const sizes s = mh_sizes(&v);
    const bool b = !m->desc.no_bias;
    const size_t c[N_GRADS] = {s.query, s.value, m->key_given ? s.key : 0, s.wq, b ? s.bq : 0,
                               s.wk, b ? s.bk : 0, s.wv, b ? s.bv : 0, s.wo, b ? s.bo : 0,
                               v.use_gate ? s.wg : 0, v.use_gate && b ? s.bg : 0};
    memcpy(n, c, sizeof c);
}

static vkattn_mha_weights weights_of(float *const g[N_GRADS])
{
    return (vkattn_mha_weights){g[G_WQ], g[G_BQ], g[G_WK], g[G_BK], g[G_WV],
                                g[G_BV], g[G_WO], g[G_BO], g[G_WG], g[G_BG]};
}

static void describe(const bcase *m, char *buf, size_t n)
{
    char d[160], k[96];
    rc_describe_gqa(d, sizeof d, &m->desc), rc_describe_call(k, sizeof k, &m->call);
    snprintf(buf, n, "gqa backward %s | %s key=%d self=%d qm=%d vm=%d attn=%d dtype=%d f32_io=%d", d,
             k, m->key_given, m->self_attn, m->query_mask, m->value_mask, (int)m->attn,
             (int)m->desc.dtype, m->f32_io);
}

/* The reverse for gradients: the sum over each group of G heads. */
static void summed(const float *src, uint32_t rows, uint32_t nkv, uint32_t g, uint32_t hd,
                   float *dst)
{
    for (uint32_t a = 0; a < rows; a++)
        for (uint32_t k = 0; k < nkv; k++)
            for (uint32_t e = 0; e < hd; e++) {
                double acc = 0.0;
                for (uint32_t j = 0; j < g; j++)
                    acc += src[((size_t)a * nkv * g + k * g + j) * hd + e];
                dst[((size_t)a * nkv + k) * hd + e] = (float)acc;
            }
}

/* GQA's reference backward == MHA's with repeated kernels, summed per group. */
static void check_property(const bcase *m, const host *h, const float *gout,
                           float *const ref[N_GRADS], const char *what)
{
    const vkattn_gqa_desc *d = &m->desc;
    const uint32_t nkv = d->num_key_value_heads, G = d->num_query_heads / nkv, hd = d->head_dim;
    const uint32_t dk = d->key_width ? d->key_width : d->value_width;
    size_t n[N_GRADS];
    grad_counts(m, n);
    const vkattn_mha_desc md = {
        .num_heads = d->num_query_heads, .key_dim = hd, .query_width = d->query_width,
        .key_width = d->key_width, .value_width = d->value_width, .no_bias = d->no_bias,
        .dropout = d->dropout, .sliding_window = (uint32_t)d->sliding_window,
        .use_gate = d->use_gate};
    vkattn_mha_weights mw = h->w;
    mw.key_kernel = mh_repeat_heads(h->w.key_kernel, dk, nkv, G, hd);
    mw.value_kernel = mh_repeat_heads(h->w.value_kernel, d->value_width, nkv, G, hd);
    mw.key_bias = d->no_bias ? NULL : mh_repeat_heads(h->w.key_bias, 1, nkv, G, hd);
    mw.value_bias = d->no_bias ? NULL : mh_repeat_heads(h->w.value_bias, 1, nkv, G, hd);
    float *g[N_GRADS] = {0};
    for (int i = 0; i < N_GRADS; i++)
        if (n[i])
            g[i] = tu_floats(i == G_WK || i == G_BK || i == G_WV || i == G_BV ? n[i] * G : n[i]);
    const mh_case v = view(m);
    const vkattn_layer_host_io hio = mh_host_io(&v, h, NULL, NULL);
    const vkattn_layer_host_grads hg = {g[G_QUERY], g[G_VALUE], g[G_KEY]};
    vkattn_mha_weights gw = weights_of(g);
    TH_OK(NULL, vkattn_reference_mha_backward(&md, &mw, &m->call, &hio, gout, &hg, &gw));
    float *sum = tu_floats(n[G_WV] > n[G_WK] ? n[G_WV] : n[G_WK]);
    const int kv[4] = {G_WK, G_BK, G_WV, G_BV};
    const uint32_t rows[4] = {dk, 1, d->value_width, 1};
    for (int i = 0; i < N_GRADS; i++) {
        if (!n[i])
            continue;
        const float *cmp = g[i];
        for (int j = 0; j < 4; j++)
            if (kv[j] == i) {
                summed(g[i], rows[j], nkv, G, hd, sum);
                cmp = sum;
            }
        const double err = tu_max_rel_err(ref[i], cmp, n[i], 0.01);
        if (!TU_WITHIN(err, PROPERTY_BOUND))
            fail_msg("%s: gradient %d of the GQA reference vs MHA's with repeated kernels: %.3g",
                     what, i, err);
    }
    free(sum), free(mw.key_kernel), free(mw.value_kernel), free(mw.key_bias);
    free(mw.value_bias);
    for (int i = 0; i < N_GRADS; i++)
        free(g[i]);
}

static void check_case(vkattn_context *ctx, const bcase *m)
{
    char what[400];
    describe(m, what, sizeof what);
    const mh_case v = view(m);
    const sizes s = mh_sizes(&v);
    host h;
    mh_host_random(&v, &h);
    size_t n[N_GRADS];
    grad_counts(m, n);
    float *gout = mh_uniform(s.out, 1.0f), *ref[N_GRADS] = {0}, *got[N_GRADS] = {0};
    /* an f16 layer: the reference runs on what its f16 tensors hold */
    const vkattn_dtype io_type = is_half(m) && !m->f32_io ? m->desc.dtype : VKATTN_DTYPE_F32;
    if (is_half(m)) {
        mh_host_round(&v, &h, m->desc.dtype);
        th_round_f16(gout, s.out);
    }
    for (int i = 0; i < N_GRADS; i++)
        if (n[i]) {
            ref[i] = tu_floats(n[i]), got[i] = tu_floats(n[i]);
            tu_poison(ref[i], n[i]), tu_poison(got[i], n[i]);
        }
    const vkattn_layer_host_io hio = mh_host_io(&v, &h, NULL, NULL);
    const vkattn_layer_host_grads hg = {ref[G_QUERY], ref[G_VALUE], ref[G_KEY]};
    vkattn_mha_weights gw_ref = weights_of(ref);
    TH_OK(ctx, vkattn_reference_gqa_backward(&m->desc, &h.w, &m->call, &hio, gout, &hg, &gw_ref));
    check_property(m, &h, gout, ref, what);

    vkattn_gqa *layer;
    TH_OK(ctx, vkattn_gqa_create(ctx, &m->desc, &layer));
    TH_OK(ctx, vkattn_gqa_set_weights(layer, &h.w));
    vkattn_layer_io io = mh_gpu_io(ctx, &v, &h);
    mh_retype(ctx, &io.query, io_type, s.query, h.query);
    if (m->self_attn)
        io.value = io.query;
    else
        mh_retype(ctx, &io.value, io_type, s.value, h.value);
    mh_retype(ctx, &io.key, io_type, s.key, h.key);
    mh_retype(ctx, &io.output, io_type, s.out, NULL);
    vkattn_layer_call call = m->call;
    call.keep_for_backward = true;
    TH_OK(ctx, vkattn_gqa_record(layer, VKATTN_RUN_NOW, &call, &io));
    vkattn_tensor *gt[N_GRADS] = {0}, *tgout = th_typed_tensor(ctx, s.out, io_type, gout);
    for (int i = 0; i < N_GRADS; i++)
        if (n[i]) /* poisoned with NaN */
            gt[i] = th_typed_tensor(ctx, n[i], io_type, NULL);
    const vkattn_layer_grads g = {.grad_output = tgout, .grad_query = gt[G_QUERY],
                                  .grad_value = gt[G_VALUE], .grad_key = gt[G_KEY]};
    const vkattn_gqa_weight_tensors gw = {gt[G_WQ], gt[G_BQ], gt[G_WK], gt[G_BK],
                                          gt[G_WV], gt[G_BV], gt[G_WO], gt[G_BO],
                                          gt[G_WG], gt[G_BG]};
    TH_OK(ctx, vkattn_gqa_backward_record(layer, VKATTN_PREPARE, &call, &io, &g, &gw));
    vkattn_result r = vkattn_gqa_backward_record(layer, VKATTN_RUN_NOW, &call, &io, &g, &gw);
    if (r)
        fail_msg("%s: vkattn_gqa_backward_record(VKATTN_RUN_NOW) gave %s: %s", what, vkattn_result_name(r),
                 vkattn_last_error());
    ko_allowance ko = {0};
    if (is_half(m)) {
        const ko_call kc = {.w = v.w, .batch = m->call.batch, .tq = m->call.tq, .tv = m->call.tv,
                            .dropout = m->call.training ? m->desc.dropout : 0.0f,
                            .query = h.query, .value = h.value, .key = h.key, .grad_out = gout,
                            .weights = &h.w, .use_gate = m->desc.use_gate,
                            .bf16 = m->desc.dtype == VKATTN_DTYPE_BF16};
        ko_allowances(&kc, &ko);
    }
    for (int i = 0; i < N_GRADS; i++) {
        if (!n[i])
            continue;
        TH_OK(ctx, vkattn_tensor_download(gt[i], got[i], 0, n[i]));
        const double bound = !is_half(m)                         ? BOUND
                              : m->desc.dtype == VKATTN_DTYPE_BF16 ? BOUND_BF16
                                                                   : BOUND_F16;
        double err = tu_max_rel_err(got[i], ref[i], n[i], is_half(m) ? FLOOR_F16 : 0.01);
        if (is_half(m)) /* what the kept f16 output adds (kept_output_bound.h) */
            err = tu_max_rel_err_past(got[i], ref[i], ko_of(&ko, i, m->key_given), n[i], FLOOR_F16);
        if (getenv("VKATTN_TEST_VERBOSE"))
            printf("# err %d %.3g: %s\n", i, err, what);
        if (!TU_WITHIN(err, bound))
            fail_msg("%s: gradient %d: error %.3g exceeds %.3g", what, i, err, bound);
        vkattn_tensor_destroy(gt[i]);
    }
    ko_free(&ko);
    th_assert_validation_clean();
    vkattn_tensor_destroy(tgout);
    mh_gpu_io_finish(ctx, &v, &io, false, NULL, NULL);
    vkattn_gqa_destroy(layer);
    mh_host_free(&v, &h);
    free(gout);
    for (int i = 0; i < N_GRADS; i++)
        free(ref[i]), free(got[i]);
}

static bcase random_case(int idx)
{
    static const uint32_t nq[] = {1, 2, 4, 6};
    bcase m = {0};
    vkattn_gqa_desc *d = &m.desc;
    d->num_query_heads = nq[tu_rand_range(0, 3)];
    const uint32_t pick = (uint32_t)idx % 3;
    d->num_key_value_heads = pick == 0 ? 1 : pick == 1 && d->num_query_heads % 2 == 0
                                                 ? d->num_query_heads / 2
                                                 : d->num_query_heads;
    d->head_dim = tu_rand_range(1, 7);
    d->query_width = tu_rand_range(1, 13);
    d->value_width = tu_rand_range(1, 13);
    d->no_bias = idx % 4 == 3;
    d->use_gate = idx % 5 < 3; /* Keras use_gate, on both paths, with and without biases */
    m.call = (vkattn_layer_call){.batch = idx % 3 ? 2 : 1, .tq = tu_rand_range(1, 11),
                                 .causal = (vkattn_causal)tu_rand_range(0, 2),
                                 /* AUTO takes the fused path where the backward can
                                  * follow it (not under mobile-min: FUSED would be
                                  * UNSUPPORTED there, as test_mha_backward.c checks) */
                                 .path = idx % 2 ? VKATTN_SDPA_UNFUSED : VKATTN_SDPA_AUTO};
    m.self_attn = idx % 5 == 1;
    if (m.self_attn) {
        d->value_width = d->query_width;
        m.call.tv = m.call.tq;
    } else {
        m.call.tv = tu_rand_range(1, 13);
        m.key_given = idx % 2 == 0;
        if (m.key_given)
            d->key_width = tu_rand_range(1, 13);
    }
    if (idx % 4 == 1) {
        d->dropout = 0.3f;
        m.call.training = true;
        m.call.seed = tu_rand_u32();
    }
    if (idx % 3 == 2)
        d->sliding_window = (int32_t)rc_random_window(m.call.tq, m.call.tv);
    m.query_mask = idx % 4 == 2;
    m.value_mask = idx % 2 == 1;
    m.attn = (attn_kind)(idx % 3);
    return m;
}

static void test_random_cases(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 12; i++) {
        bcase m = random_case(i);
        check_case(ctx, &m);
    }
}

/* 16-bit layers: random cases as above, the io, grad_output and gradient
 * tensors of the dtype (one case in three f32); six f16, then two bf16. */
static void test_random_cases_f16(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 8; i++) {
        bcase m = random_case(i + 1);
        m.desc.dtype = i < 6 ? VKATTN_DTYPE_F16 : VKATTN_DTYPE_BF16;
        m.f32_io = i % 3 == 2;
        check_case(ctx, &m);
    }
}

/* A bad call names the GQA function and the argument; nothing is recorded. */
static void test_bad_input(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const vkattn_gqa_desc desc = {.head_dim = 2, .num_query_heads = 4, .num_key_value_heads = 2,
                                  .query_width = 3, .value_width = 3};
    vkattn_gqa *layer;
    TH_OK(ctx, vkattn_gqa_create(ctx, &desc, &layer));
    vkattn_tensor *x = th_tensor(ctx, 2 * 3, NULL), *o = th_tensor(ctx, 2 * 3, NULL);
    vkattn_tensor *wrong = th_tensor(ctx, 3 * 4 * 2, NULL); /* (3, Nq, 2): not (3, Nkv, 2) */
    vkattn_tensor *gq = th_tensor(ctx, 2 * 3, NULL), *go = th_tensor(ctx, 2 * 3, NULL);
    const vkattn_layer_call call = {.batch = 1, .tq = 2, .tv = 2, .keep_for_backward = true};
    const vkattn_layer_io io = {.query = x, .value = x, .output = o};
    const vkattn_layer_grads g = {.grad_output = go, .grad_query = gq};
    const vkattn_gqa_weight_tensors gw = {.key_kernel = wrong};
    TH_EXPECT_ERROR(vkattn_gqa_backward_record(layer, VKATTN_RUN_NOW, &call, &io, &g, NULL),
                    VKATTN_ERROR_INVALID_ARGUMENT, "vkattn_gqa_backward_record");
    assert_non_null(strstr(vkattn_last_error(), "no forward kept"));
    TH_OK(ctx, vkattn_gqa_record(layer, VKATTN_RUN_NOW, &call, &io));
    TH_EXPECT_ERROR(vkattn_gqa_backward_record(layer, VKATTN_RUN_NOW, &call, &io, &g, &gw),
                    VKATTN_ERROR_INVALID_ARGUMENT, "grad_w->key_kernel");
    assert_non_null(strstr(vkattn_last_error(), "Hkv"));
    TH_EXPECT_ERROR(vkattn_gqa_backward_record(NULL, VKATTN_RUN_NOW, &call, &io, &g, &gw),
                    VKATTN_ERROR_INVALID_ARGUMENT, "layer");
    /* the layer's own tensors, for an optimizer step: key kernel (3, Nkv, 2) */
    vkattn_gqa_weight_tensors own;
    TH_OK(ctx, vkattn_gqa_get_weight_tensors(layer, &own));
    assert_int_equal(vkattn_tensor_get_info(own.key_kernel).count, 3 * 2 * 2);
    assert_int_equal(vkattn_tensor_get_info(own.query_kernel).count, 3 * 4 * 2);
    TH_EXPECT_ERROR(vkattn_gqa_get_weight_tensors(layer, NULL), VKATTN_ERROR_INVALID_ARGUMENT,
                    "vkattn_gqa_get_weight_tensors: out");
    th_assert_validation_clean();
    vkattn_tensor_destroy(x), vkattn_tensor_destroy(o), vkattn_tensor_destroy(wrong);
    vkattn_tensor_destroy(gq), vkattn_tensor_destroy(go);
    vkattn_gqa_destroy(layer);
}

TU_MAIN(th_setup, th_teardown, test_random_cases, test_random_cases_f16, test_bad_input)
