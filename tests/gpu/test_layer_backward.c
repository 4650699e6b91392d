/* The single-head layers' backward on the GPU (vkattn/layer_backward.h):
 * Attention (dot and concat, use_scale on and off), AdditiveAttention (scale
 * vector, no_scale) and BahdanauAttention, against
 * vkattn_reference_*_backward. Random shapes (odd sizes, Tq != Tv, Dk != Dv,
 * batch 1, Bahdanau's Tq = 1), key given or not, every mask kind (query,
 * value, broadcast attention masks, causal), dropout in training, some
 * gradients not wanted; every gradient NaN-poisoned first. Also forward
 * and backward in one command buffer, bad arguments, and an optimizer step
 * on the weight tensors that the next forward follows.
 *
 * Bound: fp32 on the GPU against the double references; the backward
 * recomputes the forward through the same ops and then sums Tq-, Tv- and
 * D-long products of terms of magnitude <= a few, so
 * max|got - ref| / max(max|ref|, 1e-2) <= 1e-4 for every input and weight
 * gradient. The floor: when a whole gradient cancels far below its terms
 * (a 7-element query_kernel at max|ref| 2.5e-3 was seen at 7e-5 of a 1e-3
 * floor, 2e-7 absolute), the rounding of its terms is what is left; 1e-2,
 * as in test_mha_backward and test_sdpa_backward. A scalar weight's gradient
 * (scale, concat_score_weight) is one fp32 sum over B*Tq*Tv (times D in
 * concat mode) terms, up to about 1500 here, whose rounding grows with their
 * number (about sqrt(n) ulp of a term, 2e-6 at n = 1000): 3e-4 of the same
 * scale (seen: 4e-5). Exact zeros (Bahdanau's score_bias, the scale of a
 * layer without use_scale) must be exactly 0.
 * 16-bit layers (test_16bit: f16, then bf16): inputs, weights and grad_output
 * rounded to the dtype before the reference, so it runs on what the device
 * holds. The backward recomputes the forward in f32 scratch from those exact
 * values (it reads none of the 16-bit forward's rounded intermediates), so
 * its arithmetic is the f32 backward's; a 16-bit gradient adds its one
 * rounding, half a spacing at 1 of |ref| <= that of max(max|ref|, 1e-2):
 * each bound above + 2^-11 (f16), + 2^-8 (bf16). */
#include "layer_testlib.h"

static const double BOUND = 1e-4, SCALAR_BOUND = 3e-4;
static const double ROUND_F16 = 0x1p-11, ROUND_BF16 = 0x1p-8; /* half a spacing at 1 */
static const double FLOOR = 1e-2;

typedef enum layer_kind { ATTENTION, ADDITIVE, BAHDANAU } layer_kind;

/* One layer configuration. */
typedef struct cfg {
    layer_kind kind;
    bool concat, use_scale; /* Attention */
    bool no_scale;          /* AdditiveAttention */
    uint32_t units;         /* Bahdanau */
    float dropout;
    vkattn_dtype dtype; /* F32, or F16 / BF16 with io, grad_output and gradients of it */
} cfg;

enum { MAX_W = 4 };

/* A layer with random weights, and its weight gradients (device and reference). */
typedef struct tlayer {
    cfg c;
    lt_shape s;
    vkattn_attention *att;
    vkattn_additive_attention *add;
    vkattn_bahdanau *bah;
    vkattn_attention_weights att_w;
    float *w[MAX_W]; /* host weights: additive scale; bahdanau wq, wk, v */
    float bias;
    uint32_t n_w;                     /* weight slots */
    const char *w_name[MAX_W];
    size_t w_count[MAX_W];
    vkattn_tensor *gw[MAX_W];         /* device gradients (NULL = not wanted) */
    float *ref_gw[MAX_W];             /* reference gradients */
} tlayer;

static const char *kind_name(const cfg *c)
{
    return c->kind == ATTENTION ? (c->concat ? "Attention(concat)" : "Attention(dot)")
           : c->kind == ADDITIVE ? "AdditiveAttention"
                                 : "BahdanauAttention";
}

static vkattn_dtype dtype_of(const cfg *c)
{
    return c->dtype;
}

/* x rounded to what a tensor of c's 16-bit dtype holds; nothing for f32. */
static void round_16(const cfg *c, float *x, size_t n) { th_round_to(x, n, c->dtype); }

/* An io tensor of type dt in place of lt_gpu_init's f32 one, holding the
 * same (already rounded) values; NULL data: NaN-poisoned. */
static void retype(vkattn_context *ctx, vkattn_tensor **t, size_t n, const float *data,
                   vkattn_dtype dt)
{
    if (!*t)
        return;
    vkattn_tensor_destroy(*t);
    *t = th_typed_tensor(ctx, n, dt, data);
}

static float *random_floats(size_t n, float lo, float hi)
{
    float *x = tu_floats(n);
    tu_fill_uniform(x, n, lo, hi);
    return x;
}

static void layer_create(vkattn_context *ctx, tlayer *L, const cfg *c, const lt_shape *s)
{
    memset(L, 0, sizeof *L);
    L->c = *c;
    L->s = *s;
    if (c->kind == ATTENTION) {
        const vkattn_attention_desc d = {.query_width = s->dq, .value_width = s->dv,
                                         .key_width = s->dk, .use_scale = c->use_scale,
                                         .score_mode = c->concat ? VKATTN_SCORE_CONCAT
                                                                 : VKATTN_SCORE_DOT,
                                         .dropout = c->dropout, .dtype = dtype_of(c)};
        TH_OK(ctx, vkattn_attention_create(ctx, &d, &L->att));
        L->att_w = (vkattn_attention_weights){tu_rand_float(0.5f, 1.5f),
                                              tu_rand_float(0.5f, 1.5f)};
        /* what a 16-bit layer holds: the reference's weights */
        round_16(c, &L->att_w.scale, 1), round_16(c, &L->att_w.concat_score_weight, 1);
        TH_OK(ctx, vkattn_attention_set_weights(L->att, &L->att_w));
        L->n_w = 2;
        L->w_name[0] = "scale", L->w_count[0] = 1;
        L->w_name[1] = "concat_score_weight", L->w_count[1] = 1;
    } else if (c->kind == ADDITIVE) {
        const vkattn_additive_attention_desc d = {.query_width = s->dq, .value_width = s->dv,
                                                  .key_width = s->dk, .no_scale = c->no_scale,
                                                  .dropout = c->dropout, .dtype = dtype_of(c)};
        TH_OK(ctx, vkattn_additive_attention_create(ctx, &d, &L->add));
        L->w[0] = random_floats(s->dq, -1.5f, 1.5f);
        round_16(c, L->w[0], s->dq);
        TH_OK(ctx, vkattn_additive_attention_set_weights(
                       L->add, &(vkattn_additive_attention_weights){L->w[0]}));
        L->n_w = c->no_scale ? 0 : 1;
        L->w_name[0] = "scale", L->w_count[0] = s->dq;
    } else {
        const vkattn_bahdanau_desc d = {.query_width = s->dq, .key_width = s->dk,
                                        .value_width = s->dv, .units = c->units,
                                        .dropout = c->dropout, .dtype = dtype_of(c)};
        TH_OK(ctx, vkattn_bahdanau_create(ctx, &d, &L->bah));
        L->w[0] = random_floats((size_t)s->dq * c->units, -0.7f, 0.7f);
        L->w[1] = random_floats((size_t)s->dk * c->units, -0.7f, 0.7f);
        L->w[2] = random_floats(c->units, -1.5f, 1.5f);
        L->bias = tu_rand_float(-1, 1);
        round_16(c, L->w[0], (size_t)s->dq * c->units);
        round_16(c, L->w[1], (size_t)s->dk * c->units);
        round_16(c, L->w[2], c->units), round_16(c, &L->bias, 1);
        TH_OK(ctx, vkattn_bahdanau_set_weights(
                       L->bah, &(vkattn_bahdanau_weights){L->w[0], L->w[1], L->w[2], L->bias}));
        L->n_w = 4;
        L->w_name[0] = "query_kernel", L->w_count[0] = (size_t)s->dq * c->units;
        L->w_name[1] = "key_kernel", L->w_count[1] = (size_t)s->dk * c->units;
        L->w_name[2] = "score_kernel", L->w_count[2] = c->units;
        L->w_name[3] = "score_bias", L->w_count[3] = 1;
    }
}

static void layer_destroy(tlayer *L)
{
    vkattn_attention_destroy(L->att);
    vkattn_additive_attention_destroy(L->add);
    vkattn_bahdanau_destroy(L->bah);
    for (uint32_t i = 0; i < MAX_W; i++) {
        free(L->w[i]), free(L->ref_gw[i]);
        vkattn_tensor_destroy(L->gw[i]);
    }
    memset(L, 0, sizeof *L);
}

static vkattn_result forward(tlayer *L, const vkattn_layer_call *call, const vkattn_layer_io *io)
{
    return L->att ? vkattn_attention_record(L->att, VKATTN_RUN_NOW, call, io)
           : L->add ? vkattn_additive_attention_record(L->add, VKATTN_RUN_NOW, call, io)
                    : vkattn_bahdanau_record(L->bah, VKATTN_RUN_NOW, call, io);
}

/* Forward and backward recorded into one command buffer, submitted once. */
static vkattn_result both_recorded(vkattn_context *ctx, tlayer *L, const vkattn_layer_call *call,
                                   const vkattn_layer_io *io, const vkattn_layer_grads *g)
{
    VkCommandBuffer cmd;
    vkattn_result r = vkattn_context_begin_commands(ctx, &cmd);
    if (r != VKATTN_SUCCESS)
        return r;
    if (L->att)
        r = vkattn_attention_record(L->att, cmd, call, io);
    else if (L->add)
        r = vkattn_additive_attention_record(L->add, cmd, call, io);
    else
        r = vkattn_bahdanau_record(L->bah, cmd, call, io);
    if (r == VKATTN_SUCCESS && L->att)
        r = vkattn_attention_backward_record(
            L->att, cmd, call, io, g, &(vkattn_attention_weight_tensors){L->gw[0], L->gw[1]});
    else if (r == VKATTN_SUCCESS && L->add)
        r = vkattn_additive_attention_backward_record(
            L->add, cmd, call, io, g, &(vkattn_additive_attention_weight_tensors){L->gw[0]});
    else if (r == VKATTN_SUCCESS)
        r = vkattn_bahdanau_backward_record(
            L->bah, cmd, call, io, g,
            &(vkattn_bahdanau_weight_tensors){L->gw[0], L->gw[1], L->gw[2], L->gw[3]});
    vkattn_result r2 = vkattn_context_submit_and_wait(ctx, cmd);
    return r != VKATTN_SUCCESS ? r : r2;
}

static vkattn_result backward(tlayer *L, const vkattn_layer_call *call,
                              const vkattn_layer_io *io, const vkattn_layer_grads *g)
{
    if (L->att)
        return vkattn_attention_backward_record(
            L->att, VKATTN_RUN_NOW, call, io, g, &(vkattn_attention_weight_tensors){L->gw[0], L->gw[1]});
    if (L->add)
        return vkattn_additive_attention_backward_record(
            L->add, VKATTN_RUN_NOW, call, io, g, &(vkattn_additive_attention_weight_tensors){L->gw[0]});
    return vkattn_bahdanau_backward_record(
        L->bah, VKATTN_RUN_NOW, call, io, g,
        &(vkattn_bahdanau_weight_tensors){L->gw[0], L->gw[1], L->gw[2], L->gw[3]});
}

/* The reference backward into L->ref_gw (every weight) and the host grads. */
static void reference(tlayer *L, const vkattn_layer_call *call, const vkattn_layer_host_io *io,
                      const float *gout, const vkattn_layer_host_grads *hg)
{
    const lt_shape *s = &L->s;
    for (uint32_t i = 0; i < L->n_w; i++) {
        L->ref_gw[i] = tu_floats(L->w_count[i]);
        tu_poison(L->ref_gw[i], L->w_count[i]);
    }
    vkattn_result r;
    if (L->att) {
        const vkattn_attention_desc d = {.query_width = s->dq, .value_width = s->dv,
                                         .key_width = s->dk, .use_scale = L->c.use_scale,
                                         .score_mode = L->c.concat ? VKATTN_SCORE_CONCAT
                                                                   : VKATTN_SCORE_DOT,
                                         .dropout = L->c.dropout};
        vkattn_attention_weights gw;
        r = vkattn_reference_attention_backward(&d, &L->att_w, call, io, gout, hg, &gw);
        L->ref_gw[0][0] = gw.scale, L->ref_gw[1][0] = gw.concat_score_weight;
    } else if (L->add) {
        const vkattn_additive_attention_desc d = {.query_width = s->dq, .value_width = s->dv,
                                                  .key_width = s->dk,
                                                  .no_scale = L->c.no_scale,
                                                  .dropout = L->c.dropout};
        vkattn_additive_attention_weights gw = {L->n_w ? L->ref_gw[0] : NULL};
        r = vkattn_reference_additive_attention_backward(
            &d, &(vkattn_additive_attention_weights){L->w[0]}, call, io, gout, hg, &gw);
    } else {
        const vkattn_bahdanau_desc d = {.query_width = s->dq, .key_width = s->dk,
                                        .value_width = s->dv, .units = L->c.units,
                                        .dropout = L->c.dropout};
        vkattn_bahdanau_weights gw = {L->ref_gw[0], L->ref_gw[1], L->ref_gw[2], 0};
        r = vkattn_reference_bahdanau_backward(
            &d, &(vkattn_bahdanau_weights){L->w[0], L->w[1], L->w[2], L->bias}, call, io, gout,
            hg, &gw);
        L->ref_gw[3][0] = gw.score_bias;
    }
    if (r != VKATTN_SUCCESS)
        fail_msg("reference backward: %s", vkattn_last_error());
}

static double max_abs(const float *x, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs((double)x[i]));
    return m;
}

/* max|got - ref| / max(max|ref|, FLOOR) <= bound; NaN anywhere fails. */
static void check_close(vkattn_tensor *t, const float *ref, size_t n, double bound,
                        const char *what, const char *desc)
{
    float *got = th_download(t, n);
    const double err = tu_max_abs_err(got, ref, n) / fmax(FLOOR, max_abs(ref, n));
    if (getenv("VKATTN_TEST_VERBOSE"))
        printf("# err %s %.3g (max|ref| %.3g): %s\n", what, err, max_abs(ref, n), desc);
    if (!TU_WITHIN(err, bound))
        fail_msg("%s of %s: max error %.3g (relative to max(max|ref|, %g)) exceeds %g", what,
                 desc, err, FLOOR, bound);
    free(got);
}

static void check_zero(vkattn_tensor *t, size_t n, const char *what, const char *desc)
{
    float *got = th_download(t, n);
    for (size_t i = 0; i < n; i++)
        if (got[i] != 0.0f)
            fail_msg("%s of %s: element %zu is %g; must be exactly 0", what, desc, i,
                     (double)got[i]);
    free(got);
}

/* Which gradients a case asks for. */
typedef struct wanted {
    bool q, v, k, w[MAX_W];
} wanted;

static wanted want_all(void)
{
    return (wanted){true, true, true, {true, true, true, true}};
}

/* Some random subset (at least one). */
static wanted want_some(void)
{
    wanted w = {tu_rand_range(0, 1), tu_rand_range(0, 1), tu_rand_range(0, 1),
                {tu_rand_range(0, 1), tu_rand_range(0, 1), tu_rand_range(0, 1),
                 tu_rand_range(0, 1)}};
    if (!w.q && !w.v)
        w.q = true;
    return w;
}

/* One case: forward with keep_for_backward, backward vs the reference;
 * both runs, or both recorded into one command buffer (one_cmd). */
static void check_case_in(vkattn_context *ctx, const cfg *c, const lt_shape *s,
                          const lt_opts *o, wanted want, bool one_cmd)
{
    tlayer L;
    layer_create(ctx, &L, c, s);
    lt_data d;
    lt_data_init(&d, s, o);
    char desc[512];
    lt_describe(desc, sizeof desc, &d, kind_name(c));
    char more[700];
    snprintf(more, sizeof more, "%s use_scale=%d no_scale=%d units=%u dropout=%g dtype=%d",
             desc, c->use_scale, c->no_scale, c->units, (double)c->dropout, (int)c->dtype);
    const vkattn_dtype t = dtype_of(c);
    /* the reference runs on what the 16-bit tensors hold */
    round_16(c, d.q, d.nq), round_16(c, d.v, d.nv);
    if (d.k)
        round_16(c, d.k, d.nk);
    lt_gpu g;
    lt_gpu_init(ctx, &g, &d);
    if (t != VKATTN_DTYPE_F32) {
        retype(ctx, &g.q, d.nq, d.q, t), retype(ctx, &g.v, d.nv, d.v, t);
        retype(ctx, &g.k, d.nk, d.k, t), retype(ctx, &g.out, d.nout, NULL, t);
    }
    const vkattn_layer_io io = lt_gpu_io(&g);
    vkattn_layer_call call = lt_call(&d);
    call.keep_for_backward = true;
    if (!one_cmd)
        TH_OK(ctx, forward(&L, &call, &io));

    float *gout = random_floats(d.nout, -1, 1);
    round_16(c, gout, d.nout);
    vkattn_tensor *t_gout = th_typed_tensor(ctx, d.nout, t, gout);
    /* NaN-poisoned gradients (th_typed_tensor with NULL data) */
    vkattn_tensor *gq = want.q ? th_typed_tensor(ctx, d.nq, t, NULL) : NULL;
    vkattn_tensor *gv = want.v ? th_typed_tensor(ctx, d.nv, t, NULL) : NULL;
    vkattn_tensor *gk = want.k && o->key ? th_typed_tensor(ctx, d.nk, t, NULL) : NULL;
    for (uint32_t i = 0; i < L.n_w; i++)
        L.gw[i] = want.w[i] ? th_typed_tensor(ctx, L.w_count[i], t, NULL) : NULL;
    const vkattn_layer_grads grads = {t_gout, gq, gv, gk};
    if (one_cmd)
        TH_OK(ctx, both_recorded(ctx, &L, &call, &io, &grads));
    else
        TH_OK(ctx, backward(&L, &call, &io, &grads));

    float *rq = tu_floats(d.nq), *rv = tu_floats(d.nv), *rk = o->key ? tu_floats(d.nk) : NULL;
    const vkattn_layer_host_io hio = lt_host_io(&d);
    reference(&L, &call, &hio, gout, &(vkattn_layer_host_grads){rq, rv, rk});
    /* a 16-bit gradient's one rounding */
    const double round16 = t == VKATTN_DTYPE_F16    ? ROUND_F16
                           : t == VKATTN_DTYPE_BF16 ? ROUND_BF16
                                                    : 0.0;
    if (gq)
        check_close(gq, rq, d.nq, BOUND + round16, "grad_query", more);
    if (gv)
        check_close(gv, rv, d.nv, BOUND + round16, "grad_value", more);
    if (gk)
        check_close(gk, rk, d.nk, BOUND + round16, "grad_key", more);
    for (uint32_t i = 0; i < L.n_w; i++) {
        if (!L.gw[i])
            continue;
        const bool exact_zero = (c->kind == BAHDANAU && i == 3) ||
                                (c->kind == ATTENTION && i == 0 && !c->use_scale) ||
                                (c->kind == ATTENTION && i == 1 && !c->concat);
        if (exact_zero)
            check_zero(L.gw[i], L.w_count[i], L.w_name[i], more);
        else
            check_close(L.gw[i], L.ref_gw[i], L.w_count[i],
                        (L.w_count[i] == 1 ? SCALAR_BOUND : BOUND) + round16, L.w_name[i], more);
    }
    th_assert_validation_clean();
    free(gout), free(rq), free(rv), free(rk);
    vkattn_tensor_destroy(t_gout), vkattn_tensor_destroy(gq), vkattn_tensor_destroy(gv);
    vkattn_tensor_destroy(gk);
    lt_gpu_free(&g);
    lt_data_free(&d);
    layer_destroy(&L);
}

static void check_case(vkattn_context *ctx, const cfg *c, const lt_shape *s, const lt_opts *o,
                       wanted want)
{
    check_case_in(ctx, c, s, o, want, false);
}

/* A random shape for a layer: odd sizes, Tq != Tv mostly, batch 1 sometimes;
 * the widths the layer needs (Attention and AdditiveAttention: Dk = Dq, and
 * Dv = Dk when the key is the value). */
static lt_shape random_shape(const cfg *c, const lt_opts *o)
{
    lt_shape s = {tu_rand_range(1, 3), tu_rand_range(1, 9), tu_rand_range(1, 11),
                  tu_rand_range(1, 9), 0, tu_rand_range(1, 7), 0};
    s.dk = c->kind == BAHDANAU ? tu_rand_range(1, 8) : s.dq;
    if (!o->key)
        s.dv = s.dk;
    s.dout = s.dv;
    return s;
}

static cfg random_cfg(layer_kind kind)
{
    cfg c = {.kind = kind, .concat = tu_rand_range(0, 1), .use_scale = tu_rand_range(0, 1),
             .no_scale = tu_rand_range(0, 2) == 0, .units = tu_rand_range(1, 9),
             .dropout = tu_rand_range(0, 1) ? 0.0f : tu_rand_float(0.1f, 0.6f)};
    return c;
}

static void random_cases(vkattn_context *ctx, layer_kind kind, int n)
{
    for (int i = 0; i < n; i++) {
        const cfg c = random_cfg(kind);
        lt_opts o = lt_random_opts();
        o.scores = false;
        lt_shape s = random_shape(&c, &o);
        if (kind == BAHDANAU && tu_rand_range(0, 2) == 0)
            s.tq = 1; /* a rank-2 query */
        check_case(ctx, &c, &s, &o, i % 3 == 2 ? want_some() : want_all());
    }
}

static void test_attention_dot(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 10; i++) {
        cfg c = random_cfg(ATTENTION);
        c.concat = false;
        c.use_scale = i % 2;
        lt_opts o = lt_random_opts();
        o.scores = i % 4 == 0; /* returned scores change nothing */
        /* every forward path; the backward recomputes alike after each */
        o.path = (vkattn_sdpa_path)(i % 3);
        if (o.path == VKATTN_SDPA_FUSED)
            o.scores = false;
        const lt_shape s = random_shape(&c, &o);
        check_case(ctx, &c, &s, &o, i % 3 == 2 ? want_some() : want_all());
    }
}

static void test_attention_concat(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 10; i++) {
        cfg c = random_cfg(ATTENTION);
        c.concat = true;
        c.use_scale = i % 2;
        lt_opts o = lt_random_opts();
        o.scores = i % 4 == 0;
        const lt_shape s = random_shape(&c, &o);
        check_case(ctx, &c, &s, &o, i % 3 == 2 ? want_some() : want_all());
    }
}

static void test_additive(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    random_cases(ctx, ADDITIVE, 12);
}

static void test_bahdanau(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    random_cases(ctx, BAHDANAU, 12);
}

/* Fixed shapes that must be covered whatever the random draw: batch 1,
 * Tq != Tv, Dk != Dv, every mask with dropout in training, key NULL. */
static void test_fixed(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const lt_opts all = {.key = true, .query_mask = true, .value_mask = true,
                         .attention_mask = true, .am_form = "QV", .causal = true,
                         .training = true, .seed = 77, .offset = 3};
    lt_opts nokey = all;
    nokey.key = false;
    const cfg cs[] = {
        {.kind = ATTENTION, .use_scale = true, .dropout = 0.3f},
        {.kind = ATTENTION, .concat = true, .use_scale = true, .dropout = 0.3f},
        {.kind = ADDITIVE, .dropout = 0.3f},
        {.kind = ADDITIVE, .no_scale = true, .dropout = 0.3f},
        {.kind = BAHDANAU, .units = 5, .dropout = 0.3f},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const bool bah = cs[i].kind == BAHDANAU;
        check_case(ctx, &cs[i], &(lt_shape){1, 5, 7, 3, bah ? 4 : 3, 6, 6}, &all, want_all());
        check_case(ctx, &cs[i], &(lt_shape){2, 7, 3, 5, 5, 5, 5}, &nokey, want_all());
    }
    /* Bahdanau's rank-2 query: Tq = 1 */
    check_case(ctx, &cs[4], &(lt_shape){3, 1, 9, 4, 2, 3, 3}, &all, want_all());
}

/* 16-bit layers of dtype dt with io, grad_output and gradients of it:
 * n_random random cases of every layer and score mode, then the fixed mask,
 * causal, dropout and key-NULL cases. */
static void cases_16(vkattn_context *ctx, vkattn_dtype dt, int n_random)
{
    for (int i = 0; i < n_random; i++) {
        cfg c = random_cfg(i % 4 < 2 ? ATTENTION : i % 4 == 2 ? ADDITIVE : BAHDANAU);
        c.concat = i % 4 == 1;
        c.dtype = dt;
        lt_opts o = lt_random_opts();
        o.scores = false;
        lt_shape s = random_shape(&c, &o);
        if (i == 3)
            s.B = 1, s.tq = 1; /* Bahdanau's rank-2 query */
        check_case(ctx, &c, &s, &o, i % 3 == 2 ? want_some() : want_all());
    }
    const lt_opts all = {.key = true, .query_mask = true, .value_mask = true,
                         .attention_mask = true, .am_form = "QV", .causal = true,
                         .training = true, .seed = 78, .offset = 5};
    lt_opts nokey = all;
    nokey.key = false, nokey.bottom_right = true, nokey.am_form = "1V";
    const cfg cs[] = {
        {.kind = ATTENTION, .use_scale = true, .dropout = 0.3f, .dtype = dt},
        {.kind = ATTENTION, .concat = true, .use_scale = true, .dropout = 0.3f, .dtype = dt},
        {.kind = ADDITIVE, .dropout = 0.3f, .dtype = dt},
        {.kind = BAHDANAU, .units = 5, .dropout = 0.3f, .dtype = dt},
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const bool bah = cs[i].kind == BAHDANAU;
        check_case(ctx, &cs[i], &(lt_shape){1, 5, 7, 3, bah ? 4 : 3, 6, 6}, &all, want_all());
        check_case(ctx, &cs[i], &(lt_shape){2, 7, 3, 5, 5, 5, 5}, &nokey, want_all());
    }
}

/* bf16 with fewer random cases: the same code as f16's, other element macros. */
static void test_16bit(void **state)
{
    cases_16(TH_CTX(state), VKATTN_DTYPE_F16, 8);
    cases_16(TH_CTX(state), VKATTN_DTYPE_BF16, 4);
}

static layer_kind g_mask_kind;
static void mask_make(lt_shape *s, const lt_opts *o)
{
    if (g_mask_kind != BAHDANAU)
        s->dk = s->dq;
    if (!o->key)
        s->dv = s->dk;
    s->dout = s->dv;
}
static void mask_check(vkattn_context *ctx, const lt_shape *s, const lt_opts *o, int variant)
{
    cfg c = random_cfg(g_mask_kind);
    c.concat = variant % 2;
    lt_opts oo = *o;
    oo.training = c.dropout > 0;
    oo.seed = (uint64_t)variant * 7919u + 1;
    check_case(ctx, &c, s, &oo, want_all());
}

/* Every broadcast form of the attention mask (mask_forms.h) through each layer. */
static void test_mask_forms(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const layer_kind kinds[] = {ATTENTION, ADDITIVE, BAHDANAU};
    for (size_t k = 0; k < 3; k++) {
        g_mask_kind = kinds[k];
        lt_each_mask_form(ctx, mask_make, mask_check);
    }
}

/* Forward and backward in one command buffer: the backward's barriers order
 * it after the forward (validation with synchronization checks is on). */
static void test_one_command_buffer(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const layer_kind kinds[] = {ATTENTION, ATTENTION, ADDITIVE, BAHDANAU};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        cfg c = random_cfg(kinds[i]);
        c.concat = i == 1;
        lt_opts o = lt_random_opts();
        o.scores = false;
        const lt_shape s = random_shape(&c, &o);
        check_case_in(ctx, &c, &s, &o, want_all(), true);
    }
}

/* An SGD step on each weight tensor of get_weight_tensors, with the
 * backward's gradients: get_weights sees w - lr * grad, and the next forward
 * matches the reference forward with those weights. */
static void test_optimizer_step(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const cfg cs[] = {
        {.kind = ATTENTION, .concat = true, .use_scale = true},
        {.kind = ATTENTION, .use_scale = true},
        {.kind = ADDITIVE},
        {.kind = BAHDANAU, .units = 4},
    };
    const float lr = 0.5f;
    for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++) {
        const cfg *c = &cs[ci];
        /* no masks: a random mask can hide every key of both batch rows, and
         * then no weight has a gradient to step along (masks are covered above) */
        const lt_opts o = {.key = true};
        const lt_shape s = {2, 3, 5, 4, c->kind == BAHDANAU ? 3 : 4, 3, 3};
        tlayer L;
        layer_create(ctx, &L, c, &s);
        lt_data d;
        lt_data_init(&d, &s, &o);
        lt_gpu g;
        lt_gpu_init(ctx, &g, &d);
        const vkattn_layer_io io = lt_gpu_io(&g);
        vkattn_layer_call call = lt_call(&d);
        call.keep_for_backward = true;
        TH_OK(ctx, forward(&L, &call, &io));
        float *gout = random_floats(d.nout, -1, 1);
        vkattn_tensor *t_gout = th_tensor(ctx, d.nout, gout);
        for (uint32_t i = 0; i < L.n_w; i++)
            L.gw[i] = th_tensor(ctx, L.w_count[i], NULL);
        TH_OK(ctx, backward(&L, &call, &io, &(vkattn_layer_grads){.grad_output = t_gout}));

        vkattn_tensor *wt[MAX_W] = {0};
        if (L.att) {
            vkattn_attention_weight_tensors w;
            TH_OK(ctx, vkattn_attention_get_weight_tensors(L.att, &w));
            wt[0] = w.scale, wt[1] = w.concat_score_weight;
        } else if (L.add) {
            vkattn_additive_attention_weight_tensors w;
            TH_OK(ctx, vkattn_additive_attention_get_weight_tensors(L.add, &w));
            wt[0] = w.scale;
        } else {
            vkattn_bahdanau_weight_tensors w;
            TH_OK(ctx, vkattn_bahdanau_get_weight_tensors(L.bah, &w));
            wt[0] = w.query_kernel, wt[1] = w.key_kernel, wt[2] = w.score_kernel;
            wt[3] = w.score_bias;
        }
        const vkattn_optim_params sgd = {.algorithm = VKATTN_OPTIM_SGD, .lr = lr};
        float *before[MAX_W] = {0}, *grad[MAX_W] = {0};
        for (uint32_t i = 0; i < L.n_w; i++) {
            assert_non_null(wt[i]);
            assert_int_equal(vkattn_tensor_get_info(wt[i]).count, L.w_count[i]);
            before[i] = th_download(wt[i], L.w_count[i]);
            grad[i] = th_download(L.gw[i], L.w_count[i]);
            float zeros[VKATTN_OPTIM_STEP_COUNT] = {0};
            vkattn_tensor *step = th_tensor(ctx, VKATTN_OPTIM_STEP_COUNT, zeros);
            TH_OK(ctx, vkattn_optim_step_record(ctx, VKATTN_RUN_NOW, &sgd,
                                             &(vkattn_optim_io){.count = (uint32_t)L.w_count[i],
                                                                .param = wt[i],
                                                                .grad = L.gw[i],
                                                                .step = step}));
            vkattn_tensor_destroy(step);
        }
        /* the host view of the weights follows, and so does the forward */
        vkattn_layer_host_io hio = lt_host_io(&d);
        vkattn_layer_call hcall = lt_call(&d);
        char what[128];
        snprintf(what, sizeof what, "%s after an SGD step", kind_name(c));
        if (L.att) {
            vkattn_attention_weights w;
            TH_OK(ctx, vkattn_attention_get_weights(L.att, &w));
            assert_float_equal(w.scale, before[0][0] - lr * grad[0][0], 1e-6);
            assert_float_equal(w.concat_score_weight, before[1][0] - lr * grad[1][0], 1e-6);
            const vkattn_attention_desc dd = {.query_width = s.dq, .value_width = s.dv,
                                              .key_width = s.dk, .use_scale = c->use_scale,
                                              .score_mode = c->concat ? VKATTN_SCORE_CONCAT
                                                                      : VKATTN_SCORE_DOT};
            TH_OK(ctx, vkattn_reference_attention(&dd, &w, &hcall, &hio));
        } else if (L.add) {
            float *w = tu_floats(s.dq);
            TH_OK(ctx, vkattn_additive_attention_get_weights(
                           L.add, &(vkattn_additive_attention_weights){w}));
            for (uint32_t j = 0; j < s.dq; j++)
                assert_float_equal(w[j], before[0][j] - lr * grad[0][j], 1e-6);
            const vkattn_additive_attention_desc dd = {.query_width = s.dq,
                                                       .value_width = s.dv, .key_width = s.dk};
            TH_OK(ctx, vkattn_reference_additive_attention(
                           &dd, &(vkattn_additive_attention_weights){w}, &hcall, &hio));
            free(w);
        } else {
            vkattn_bahdanau_weights w = {tu_floats(L.w_count[0]), tu_floats(L.w_count[1]),
                                         tu_floats(L.w_count[2]), 0};
            TH_OK(ctx, vkattn_bahdanau_get_weights(L.bah, &w));
            float *arr[3] = {w.query_kernel, w.key_kernel, w.score_kernel};
            for (uint32_t i = 0; i < 3; i++)
                for (size_t j = 0; j < L.w_count[i]; j++)
                    assert_float_equal(arr[i][j], before[i][j] - lr * grad[i][j], 1e-6);
            assert_float_equal(w.score_bias, before[3][0], 0); /* its gradient is 0 */
            const vkattn_bahdanau_desc dd = {.query_width = s.dq, .key_width = s.dk,
                                             .value_width = s.dv, .units = c->units};
            TH_OK(ctx, vkattn_reference_bahdanau(&dd, &w, &hcall, &hio));
            free(w.query_kernel), free(w.key_kernel), free(w.score_kernel);
        }
        TH_OK(ctx, forward(&L, &call, &io));
        lt_gpu_check(&g, &d, 1e-4, what);
        /* and the update moved something: the gradients were not all zero */
        double moved = 0;
        for (uint32_t i = 0; i < L.n_w; i++)
            moved += max_abs(grad[i], L.w_count[i]);
        assert_true(moved > 0);
        th_assert_validation_clean();
        for (uint32_t i = 0; i < MAX_W; i++)
            free(before[i]), free(grad[i]);
        free(gout);
        vkattn_tensor_destroy(t_gout);
        lt_gpu_free(&g);
        lt_data_free(&d);
        layer_destroy(&L);
    }
}

/* Bad arguments: each is INVALID_ARGUMENT (or UNSUPPORTED) naming what is wrong. */
static void test_bad_args(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const cfg c = {.kind = ATTENTION, .use_scale = true};
    const lt_shape s = {2, 3, 4, 3, 3, 3, 3};
    const lt_opts o = {.key = true, .value_mask = true, .training = true, .seed = 5};
    tlayer L;
    layer_create(ctx, &L, &c, &s);
    lt_data d;
    lt_data_init(&d, &s, &o);
    lt_gpu g;
    lt_gpu_init(ctx, &g, &d);
    vkattn_layer_io io = lt_gpu_io(&g);
    vkattn_layer_call call = lt_call(&d);
    vkattn_tensor *gout = th_tensor(ctx, d.nout, d.q); /* nq == nout here */
    vkattn_tensor *gq = th_tensor(ctx, d.nq, NULL), *gv = th_tensor(ctx, d.nv, NULL);
    vkattn_tensor *small = th_tensor(ctx, d.nq - 1, NULL);
    vkattn_layer_grads gr = {gout, gq, gv, NULL};
    vkattn_attention_weight_tensors none = {0};
    const vkattn_result BAD = VKATTN_ERROR_INVALID_ARGUMENT;

    TH_EXPECT_ERROR(vkattn_attention_backward_record(L.att, VKATTN_RUN_NOW, &call, &io, &gr, &none), BAD,
                    "no forward kept");
    TH_OK(ctx, forward(&L, &call, &io)); /* without keep_for_backward */
    TH_EXPECT_ERROR(vkattn_attention_backward_record(L.att, VKATTN_RUN_NOW, &call, &io, &gr, &none), BAD,
                    "keep_for_backward");
    call.keep_for_backward = true;
    TH_OK(ctx, forward(&L, &call, &io));
    TH_OK(ctx, vkattn_attention_backward_record(L.att, VKATTN_RUN_NOW, &call, &io, &gr, &none));

    vkattn_layer_call c2 = call;
    c2.seed++;
    TH_EXPECT_ERROR(vkattn_attention_backward_record(L.att, VKATTN_RUN_NOW, &c2, &io, &gr, &none), BAD,
                    "call->seed");
    c2 = call, c2.causal = VKATTN_CAUSAL_TOP_LEFT;
    TH_EXPECT_ERROR(vkattn_attention_backward_record(L.att, VKATTN_RUN_NOW, &c2, &io, &gr, &none), BAD,
                    "call->causal");
    c2 = call, c2.offset = 9;
    TH_EXPECT_ERROR(vkattn_attention_backward_record(L.att, VKATTN_RUN_NOW, &c2, &io, &gr, &none), BAD,
                    "call->offset");
    vkattn_layer_io io2 = io;
    io2.value_mask = NULL;
    TH_EXPECT_ERROR(vkattn_attention_backward_record(L.att, VKATTN_RUN_NOW, &call, &io2, &gr, &none), BAD,
                    "io->value_mask");
    io2 = io, io2.key = NULL; /* dk == dv here, so only the kept io tells */
    TH_EXPECT_ERROR(vkattn_attention_backward_record(L.att, VKATTN_RUN_NOW, &call, &io2, &gr, &none), BAD,
                    "io->key");

    vkattn_layer_grads g2 = gr;
    g2.grad_output = NULL;
    TH_EXPECT_ERROR(vkattn_attention_backward_record(L.att, VKATTN_RUN_NOW, &call, &io, &g2, &none), BAD,
                    "grads->grad_output");
    g2 = gr, g2.grad_output = small;
    TH_EXPECT_ERROR(vkattn_attention_backward_record(L.att, VKATTN_RUN_NOW, &call, &io, &g2, &none), BAD,
                    "grads->grad_output");
    g2 = gr, g2.grad_query = small;
    TH_EXPECT_ERROR(vkattn_attention_backward_record(L.att, VKATTN_RUN_NOW, &call, &io, &g2, &none), BAD,
                    "grads->grad_query");
    g2 = gr, g2.grad_query = io.query;
    TH_EXPECT_ERROR(vkattn_attention_backward_record(L.att, VKATTN_RUN_NOW, &call, &io, &g2, &none), BAD,
                    "overlaps");
    g2 = gr, g2.grad_key = gv; /* two gradients in one tensor */
    TH_EXPECT_ERROR(vkattn_attention_backward_record(L.att, VKATTN_RUN_NOW, &call, &io, &g2, &none), BAD,
                    "overlaps");
    g2 = gr, g2.grad_query = gout;
    TH_EXPECT_ERROR(vkattn_attention_backward_record(L.att, VKATTN_RUN_NOW, &call, &io, &g2, &none), BAD,
                    "grads->grad_output");
    g2 = (vkattn_layer_grads){.grad_output = gout};
    TH_EXPECT_ERROR(vkattn_attention_backward_record(L.att, VKATTN_RUN_NOW, &call, &io, &g2, &none), BAD,
                    "no gradient");
    vkattn_attention_weight_tensors own;
    TH_OK(ctx, vkattn_attention_get_weight_tensors(L.att, &own));
    vkattn_attention_weight_tensors wbad = {.scale = own.scale};
    TH_EXPECT_ERROR(vkattn_attention_backward_record(L.att, VKATTN_RUN_NOW, &call, &io, &gr, &wbad), BAD,
                    "overlaps");
    assert_non_null(strstr(vkattn_context_last_error(ctx), "the layer's scale"));
    wbad = (vkattn_attention_weight_tensors){.concat_score_weight = small};
    TH_EXPECT_ERROR(vkattn_attention_backward_record(L.att, VKATTN_RUN_NOW, &call, &io, &gr, &wbad), BAD,
                    "grad_w->concat_score_weight");
    wbad = (vkattn_attention_weight_tensors){.scale = small};
    TH_EXPECT_ERROR(vkattn_attention_backward_record(L.att, VKATTN_RUN_NOW, &call, &io, &gr, &wbad), BAD,
                    "grad_w->scale");
    TH_EXPECT_ERROR(vkattn_attention_backward_record(NULL, VKATTN_RUN_NOW, &call, &io, &gr, &none), BAD, "layer");
    TH_EXPECT_ERROR(vkattn_attention_backward_record(L.att, VKATTN_RUN_NOW, NULL, &io, &gr, &none), BAD, "call");
    TH_EXPECT_ERROR(vkattn_attention_backward_record(L.att, VKATTN_RUN_NOW, &call, &io, NULL, &none), BAD,
                    "grads");
    TH_EXPECT_ERROR(vkattn_attention_backward_record(L.att, VK_NULL_HANDLE, &call, &io, &gr,
                                                     &none),
                    BAD, "cmd");
    TH_EXPECT_ERROR(vkattn_attention_get_weight_tensors(L.att, NULL), BAD, "out");
    /* an f32 layer's backward takes f32 gradients (a 16-bit layer's: its dtype too) */
    vkattn_tensor *half = NULL;
    TH_OK(ctx, vkattn_tensor_create(ctx,
                                    &(vkattn_tensor_desc){.rank = 1, .dims = {(uint32_t)d.nq},
                                                          .dtype = VKATTN_DTYPE_F16},
                                    &half));
    g2 = gr, g2.grad_query = half;
    TH_EXPECT_ERROR(vkattn_attention_backward_record(L.att, VKATTN_RUN_NOW, &call, &io, &g2, &none),
                    VKATTN_ERROR_UNSUPPORTED, "f32");
    /* prepare checks as record */
    TH_OK(ctx, vkattn_attention_backward_record(L.att, VKATTN_PREPARE, &call, &io, &gr, &none));
    TH_EXPECT_ERROR(vkattn_attention_backward_record(L.att, VKATTN_PREPARE, &c2, &io, &gr, &none), BAD,
                    "call->offset");
    /* still usable after the errors */
    TH_OK(ctx, vkattn_attention_backward_record(L.att, VKATTN_RUN_NOW, &call, &io, &gr, &none));

    /* AdditiveAttention with no_scale has no scale to differentiate */
    {
        const cfg ca = {.kind = ADDITIVE, .no_scale = true};
        tlayer A;
        layer_create(ctx, &A, &ca, &s);
        TH_OK(ctx, forward(&A, &call, &io));
        vkattn_tensor *gs = th_tensor(ctx, s.dq, NULL);
        TH_EXPECT_ERROR(vkattn_additive_attention_backward_record(
                            A.add, VKATTN_RUN_NOW, &call, &io, &gr,
                            &(vkattn_additive_attention_weight_tensors){gs}),
                        BAD, "no such weight");
        TH_OK(ctx, vkattn_additive_attention_backward_record(A.add, VKATTN_RUN_NOW, &call, &io, &gr, NULL));
        vkattn_additive_attention_weight_tensors aw;
        TH_OK(ctx, vkattn_additive_attention_get_weight_tensors(A.add, &aw));
        assert_null(aw.scale);
        vkattn_tensor_destroy(gs);
        layer_destroy(&A);
    }
    /* grad_key without a key */
    {
        const cfg cb = {.kind = BAHDANAU, .units = 3};
        tlayer Bh;
        layer_create(ctx, &Bh, &cb, &s);
        io2 = io, io2.key = NULL;
        TH_OK(ctx, forward(&Bh, &call, &io2));
        vkattn_tensor *gk = th_tensor(ctx, d.nk, NULL);
        g2 = gr, g2.grad_key = gk;
        TH_EXPECT_ERROR(vkattn_bahdanau_backward_record(Bh.bah, VKATTN_RUN_NOW, &call, &io2, &g2, NULL), BAD,
                        "grads->grad_key");
        /* an io other than the kept forward's */
        TH_EXPECT_ERROR(vkattn_bahdanau_backward_record(Bh.bah, VKATTN_RUN_NOW, &call, &io, &gr, NULL), BAD,
                        "io->key");
        vkattn_tensor_destroy(gk);
        layer_destroy(&Bh);
    }
    th_assert_validation_clean();
    vkattn_tensor *all[] = {gout, gq, gv, small, half};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vkattn_tensor_destroy(all[i]);
    lt_gpu_free(&g);
    lt_data_free(&d);
    layer_destroy(&L);
}

TU_MAIN(th_setup, th_teardown,
    test_fixed, test_attention_dot, test_attention_concat, test_additive, test_bahdanau, test_16bit,
    test_mask_forms, test_one_command_buffer, test_optimizer_step, test_bad_args)
