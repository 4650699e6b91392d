/* The host side of one call of a multi-head layer (MultiHeadAttention, and
 * GroupedQueryAttention: the same with Hkv key/value heads), shared by
 * tests/gpu/test_mha.c and test_gqa.c: which inputs and masks the call has,
 * their sizes, random data and Keras-layout weights (inputs in [-1, 1],
 * kernels scaled by 1/sqrt(fan-in)), the host and device io, and the exact
 * rows of fully masked queries. */
#ifndef VKATTN_TEST_MULTI_HEAD_CASE_H
#define VKATTN_TEST_MULTI_HEAD_CASE_H

#include "harness.h"
#include "kv_rows.h"
#include "mask_forms.h"
#include "random_case.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum attn_kind { ATTN_NONE, ATTN_SHARED, ATTN_PER_HEAD } attn_kind;

/* One call: the layer's widths and which inputs and masks exist. */
typedef struct mh_case {
    rc_mha_widths w; /* w.Hkv key/value heads */
    bool no_bias;
    bool use_gate; /* gate_kernel (Dq, H, dv) and gate_bias (H, dv) exist */
    const vkattn_layer_call *call;
    bool key_given; /* a key tensor of its own */
    bool self_attn; /* the query tensor is also value (and key) */
    bool query_mask, value_mask;
    attn_kind attn;
    const char *am_form; /* with attn SHARED: the mask's shape (mask_forms.h); NULL = flat */
} mh_case;

/* GroupedQueryAttention's widths: Nq heads of head_dim, Nkv of them for key
 * and value, the output as wide as the query. */
static inline rc_mha_widths mh_gqa_widths(const vkattn_gqa_desc *d)
{
    return (rc_mha_widths){
        .H = d->num_query_heads, .Hkv = d->num_key_value_heads, .dk = d->head_dim,
        .dv = d->head_dim, .Dq = d->query_width,
        .Dk = d->key_width ? d->key_width : d->value_width, .Dv = d->value_width,
        .Dout = d->query_width};
}

/* A GroupedQueryAttention key/value kernel or bias (rows, Hkv, hd) as the
 * MultiHeadAttention one of the same layer: each head repeated g times on
 * the head axis (query head n holds kv head n / g). A new array. */
static inline float *mh_repeat_heads(const float *src, uint32_t rows, uint32_t hkv, uint32_t g,
                                     uint32_t hd)
{
    float *dst = tu_floats((size_t)rows * hkv * g * hd);
    for (uint32_t a = 0; a < rows; a++)
        for (uint32_t n = 0; n < hkv * g; n++)
            memcpy(dst + ((size_t)a * hkv * g + n) * hd, src + ((size_t)a * hkv + n / g) * hd,
                   hd * sizeof(float));
    return dst;
}

/* Element counts of every array of a case. */
typedef struct sizes {
    size_t wq, bq, wk, bk, wv, bv, wo, bo, wg, bg;
    size_t query, key, value, qm, vm, am, out, scores;
} sizes;

/* Host data of one case: weights (Keras layout) and inputs. */
typedef struct host {
    vkattn_mha_weights w;
    float *query, *key, *value, *qm, *vm, *am;
} host;

static inline lt_mask_shape mh_mask_shape(const mh_case *m)
{
    return lt_mask_form(m->am_form, m->call->batch, m->w.H, m->call->tq, m->call->tv);
}

static inline sizes mh_sizes(const mh_case *m)
{
    const rc_mha_widths w = m->w;
    const size_t B = m->call->batch, Tq = m->call->tq, Tv = m->call->tv;
    sizes r = {
        .wq = (size_t)w.Dq * w.H * w.dk, .bq = (size_t)w.H * w.dk,
        .wk = (size_t)w.Dk * w.Hkv * w.dk, .bk = (size_t)w.Hkv * w.dk,
        .wv = (size_t)w.Dv * w.Hkv * w.dv, .bv = (size_t)w.Hkv * w.dv,
        .wo = (size_t)w.H * w.dv * w.Dout, .bo = w.Dout,
        .wg = (size_t)w.Dq * w.H * w.dv, .bg = (size_t)w.H * w.dv,
        .query = B * Tq * w.Dq, .key = B * Tv * w.Dk, .value = B * Tv * w.Dv,
        .qm = B * Tq, .vm = B * Tv,
        .am = B * (m->attn == ATTN_PER_HEAD ? w.H : 1) * Tq * Tv,
        .out = B * Tq * w.Dout, .scores = B * w.H * Tq * Tv,
    };
    if (m->am_form) {
        const lt_mask_shape ms = mh_mask_shape(m);
        r.am = lt_mask_count(&ms);
    }
    return r;
}

static inline float *mh_uniform(size_t n, float a)
{
    float *x = tu_floats(n);
    tu_fill_uniform(x, n, -a, a);
    return x;
}

static inline void mh_host_random(const mh_case *m, host *h)
{
    const rc_mha_widths wd = m->w;
    const sizes s = mh_sizes(m);
    const float aq = sqrtf(3.0f / wd.Dq), ak = sqrtf(3.0f / wd.Dk), av = sqrtf(3.0f / wd.Dv);
    const float ao = sqrtf(3.0f / (wd.H * wd.dv));
    h->w = (vkattn_mha_weights){
        .query_kernel = mh_uniform(s.wq, aq), .query_bias = mh_uniform(s.bq, 0.5f),
        .key_kernel = mh_uniform(s.wk, ak), .key_bias = mh_uniform(s.bk, 0.5f),
        .value_kernel = mh_uniform(s.wv, av), .value_bias = mh_uniform(s.bv, 0.5f),
        .output_kernel = mh_uniform(s.wo, ao), .output_bias = mh_uniform(s.bo, 0.5f),
    };
    /* the gate's pre-activations O(1) with a bias of +-2: sigmoid well away
     * from both 1/2 and its saturation, so a wrong gate shows */
    if (m->use_gate) {
        h->w.gate_kernel = mh_uniform(s.wg, 2.0f * aq);
        h->w.gate_bias = mh_uniform(s.bg, 2.0f);
    }
    h->query = mh_uniform(s.query, 1.0f);
    h->value = m->self_attn ? h->query : mh_uniform(s.value, 1.0f);
    h->key = m->key_given ? mh_uniform(s.key, 1.0f) : NULL;
    h->qm = h->vm = h->am = NULL;
    if (m->query_mask)
        tu_fill_mask(h->qm = tu_floats(s.qm), s.qm, 0.75f);
    if (m->value_mask)
        tu_fill_mask(h->vm = tu_floats(s.vm), s.vm, 0.75f);
    if (m->am_form) {
        const lt_mask_shape ms = mh_mask_shape(m);
        h->am = lt_mask_random(&ms);
    } else if (m->attn != ATTN_NONE) {
        tu_fill_mask(h->am = tu_floats(s.am), s.am, 0.75f);
    }
}

static inline void mh_weights_free(vkattn_mha_weights *w)
{
    free(w->query_kernel), free(w->query_bias), free(w->key_kernel), free(w->key_bias);
    free(w->value_kernel), free(w->value_bias), free(w->output_kernel), free(w->output_bias);
    free(w->gate_kernel), free(w->gate_bias);
}

static inline void mh_host_free(const mh_case *m, host *h)
{
    mh_weights_free(&h->w);
    free(h->query), free(h->key), free(h->qm), free(h->vm), free(h->am);
    if (!m->self_attn)
        free(h->value);
}

/* Rounds the case's weights (the gate's too) and inputs to type t in place:
 * what a layer and io tensors of type t hold (masks are 0 or 1). */
static inline void mh_host_round(const mh_case *m, host *h, vkattn_dtype t)
{
    const sizes s = mh_sizes(m);
    vkattn_mha_weights *w = &h->w;
    float *arrays[] = {w->query_kernel, w->query_bias, w->key_kernel, w->key_bias,
                       w->value_kernel, w->value_bias, w->output_kernel, w->output_bias,
                       w->gate_kernel, w->gate_bias,
                       h->query, m->self_attn ? NULL : h->value, h->key};
    const size_t counts[] = {s.wq, s.bq, s.wk, s.bk, s.wv, s.bv, s.wo, s.bo, s.wg, s.bg,
                             s.query, s.value, s.key};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        if (arrays[i])
            th_round_to(arrays[i], counts[i], t);
}

static inline void mh_host_round_f16(const mh_case *m, host *h)
{
    mh_host_round(m, h, VKATTN_DTYPE_F16);
}

/* Replaces an f32 io tensor by one of type t holding the same (t-exact)
 * values; a NULL `data` makes it a NaN-poisoned output. */
static inline void mh_retype(vkattn_context *ctx, vkattn_tensor **t, vkattn_dtype type, size_t n,
                             const float *data)
{
    if (!*t || type == VKATTN_DTYPE_F32)
        return;
    vkattn_tensor_destroy(*t);
    *t = th_typed_tensor(ctx, n, type, data);
}

static inline vkattn_layer_host_io mh_host_io(const mh_case *m, const host *h, float *out,
                                              float *scores)
{
    vkattn_layer_host_io io = {
        .query = h->query, .value = h->value, .key = h->key, .query_mask = h->qm,
        .value_mask = h->vm, .attention_mask = h->am,
        .attention_mask_per_head = m->attn == ATTN_PER_HEAD,
        .output = out, .scores = m->call->return_attention_scores ? scores : NULL,
    };
    if (m->am_form) {
        const lt_mask_shape ms = mh_mask_shape(m);
        io.attention_mask_rank = ms.rank;
        memcpy(io.attention_mask_dims, ms.dims, sizeof ms.dims);
    }
    return io;
}

/* The case's tensors on the device (the attention mask of its own shape, or
 * flat); output and scores (if asked for) poisoned with NaN. */
static inline vkattn_layer_io mh_gpu_io(vkattn_context *ctx, const mh_case *m, const host *h)
{
    const sizes s = mh_sizes(m);
    vkattn_tensor *query = th_tensor(ctx, s.query, h->query), *am = NULL;
    if (h->am && m->am_form) {
        const lt_mask_shape ms = mh_mask_shape(m);
        am = lt_mask_tensor(ctx, &ms, h->am);
    } else if (h->am) {
        am = th_tensor(ctx, s.am, h->am);
    }
    vkattn_layer_io io = {
        .query = query,
        .value = m->self_attn ? query : th_tensor(ctx, s.value, h->value),
        .key = h->key ? th_tensor(ctx, s.key, h->key) : NULL,
        .query_mask = h->qm ? th_tensor(ctx, s.qm, h->qm) : NULL,
        .value_mask = h->vm ? th_tensor(ctx, s.vm, h->vm) : NULL,
        .attention_mask = am,
        .attention_mask_per_head = m->attn == ATTN_PER_HEAD,
        .output = th_tensor(ctx, s.out, NULL),
        .scores = m->call->return_attention_scores ? th_tensor(ctx, s.scores, NULL) : NULL,
    };
    TH_OK(ctx, vkattn_tensor_fill(io.output, NAN));
    if (io.scores)
        TH_OK(ctx, vkattn_tensor_fill(io.scores, NAN));
    return io;
}

/* Downloads output and scores (after a successful run), then frees io. */
static inline void mh_gpu_io_finish(vkattn_context *ctx, const mh_case *m, vkattn_layer_io *io,
                                    bool download, float *out, float *scores)
{
    const sizes s = mh_sizes(m);
    if (download) {
        TH_OK(ctx, vkattn_tensor_download(io->output, out, 0, s.out));
        if (io->scores)
            TH_OK(ctx, vkattn_tensor_download(io->scores, scores, 0, s.scores));
    }
    vkattn_tensor *all[] = {io->query, m->self_attn ? NULL : io->value, io->key, io->query_mask,
                            io->value_mask, io->attention_mask, io->output, io->scores};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vkattn_tensor_destroy(all[i]);
}

/* Rows whose query mask is 0 have no allowed key: weights exactly 0 and the
 * output row exactly the output bias (0 without bias). */
static inline void mh_check_masked_query_rows(const mh_case *m, const host *h, const float *out,
                                              const float *scores, const char *what)
{
    if (!h->qm)
        return;
    const rc_mha_widths w = m->w;
    const uint32_t B = m->call->batch, Tq = m->call->tq, Tv = m->call->tv;
    for (uint32_t b = 0; b < B; b++)
        for (uint32_t i = 0; i < Tq; i++) {
            if (h->qm[b * Tq + i] != 0.0f)
                continue;
            for (uint32_t e = 0; e < w.Dout; e++) {
                float want = m->no_bias ? 0.0f : h->w.output_bias[e];
                if (out[((size_t)b * Tq + i) * w.Dout + e] != want)
                    fail_msg("%s: masked query row b=%u i=%u: output[%u] = %g, want the bias %g",
                             what, b, i, e, (double)out[((size_t)b * Tq + i) * w.Dout + e],
                             (double)want);
            }
            for (uint32_t hh = 0; scores && hh < w.H; hh++)
                for (uint32_t j = 0; j < Tv; j++)
                    if (scores[(((size_t)b * w.H + hh) * Tq + i) * Tv + j] != 0.0f)
                        fail_msg("%s: masked query row b=%u h=%u i=%u has a nonzero score", what,
                                 b, hh, i);
        }
}

/* A random GroupedQueryAttention case: test_gqa.c draws its f32 and f16
 * ones here, each within its bounds (f16 is slower: smaller). */
typedef struct mh_gqa_bounds {
    uint32_t heads;                /* Nq one of the first `heads` of {1, 2, 4, 6, 8} */
    uint32_t max_head_dim, max_width, max_t, max_batch; /* each from 1 */
    uint32_t dropout_one_in;       /* a rate with probability 1 / dropout_one_in, */
    float max_dropout;             /* in [0.05, max_dropout] */
    bool offset, gate;             /* draw a dropout offset, use_gate */
} mh_gqa_bounds;
typedef struct mh_gqa_case {
    vkattn_gqa_desc desc;
    vkattn_layer_call call;
    bool key_given, self_attn, query_mask, value_mask;
    attn_kind attn;
} mh_gqa_case;

/* Nkv in {1, Nq/2, Nq} (Nq/2 only when Nq is even), any Tq, Tv, masks, causal,
 * window, path, scores. */
static inline mh_gqa_case mh_random_gqa(const mh_gqa_bounds *b)
{
    static const uint32_t heads[] = {1, 2, 4, 6, 8};
    mh_gqa_case m = {0};
    vkattn_gqa_desc *d = &m.desc;
    vkattn_layer_call *c = &m.call;
    d->num_query_heads = heads[tu_rand_range(0, b->heads - 1)];
    const uint32_t pick = tu_rand_range(0, 2), nq = d->num_query_heads;
    d->num_key_value_heads = pick == 0 ? 1 : pick == 1 && nq % 2 == 0 ? nq / 2 : nq;
    d->head_dim = tu_rand_range(1, b->max_head_dim);
    d->query_width = tu_rand_range(1, b->max_width);
    d->value_width = tu_rand_range(1, b->max_width);
    d->no_bias = rc_one_in(4);
    d->dropout = rc_one_in(b->dropout_one_in) ? tu_rand_float(0.05f, b->max_dropout) : 0.0f;
    c->batch = rc_one_in(3) ? 1 : tu_rand_range(2, b->max_batch);
    c->tq = tu_rand_range(1, b->max_t);
    m.self_attn = rc_one_in(4);
    m.key_given = !m.self_attn && rc_one_in(2);
    d->value_width = m.self_attn ? d->query_width : d->value_width;
    c->tv = m.self_attn ? c->tq : tu_rand_range(1, b->max_t);
    if (m.key_given && rc_one_in(2))
        d->key_width = tu_rand_range(1, b->max_width);
    c->causal = (vkattn_causal)tu_rand_range(0, 2);
    c->training = d->dropout > 0.0f && rc_one_in(2);
    c->seed = tu_rand_u32();
    if (b->offset)
        c->offset = tu_rand_range(0, 100);
    c->return_attention_scores = rc_one_in(2);
    c->path = c->return_attention_scores ? (vkattn_sdpa_path)(tu_rand_range(0, 1) * 2)
                                         : (vkattn_sdpa_path)tu_rand_range(0, 2);
    m.query_mask = rc_one_in(2);
    m.value_mask = rc_one_in(2);
    m.attn = (attn_kind)tu_rand_range(0, 2);
    if (rc_one_in(3))
        d->sliding_window = (int32_t)rc_random_window(c->tq, c->tv);
    d->use_gate = b->gate && rc_one_in(2); /* Keras use_gate */
    return m;
}

#endif /* VKATTN_TEST_MULTI_HEAD_CASE_H */
