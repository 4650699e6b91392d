/* The layer backward references (vkattn/reference_backward.h) against central
 * finite differences of the layer forward references, no device.
 *
 * The loss is L = sum(grad_output * output), computed in double from the f32
 * forward reference, so dL/dx is exactly what the backward returns for that
 * grad_output. Every element of every input and weight (in [-1, 1], scalars
 * up to 1.5) is perturbed by +-h and +-h/2, h = H_STEP = 0.05, and the two
 * central differences are combined by Richardson extrapolation, leaving a
 * truncation error O(h^4). The f32 forward (f32 tensors between its ops)
 * adds rounding noise of order 6e-8 * (the size of its intermediates) / h to
 * each difference; measured, the error falls as 1/h from h = 0.005 to 0.05
 * (noise) and grows again at h = 0.1 (truncation). Hence the bound, per
 * gradient array:
 *   max |backward - fd| <= FD_REL * max|fd| + FD_ABS * (1 + sum|go * out|)
 * with FD_REL = 2e-4, FD_ABS = 2e-5. Over 400 seeds (VKATTN_TEST_SEED
 * 1000..1400, 128 cases each) the largest error was 0.16 of this bound (the
 * run prints its own largest ratio); a missing term, factor or transpose in
 * a gradient is off by O(max|fd|) and fails (each was tried).
 *
 * Shapes are small and random (odd sizes, Tq != Tv, batch 1, dk != dv), with
 * key absent and present, masks (query, value, a (Tq, Tv) attention mask
 * broadcast over the batch, a per-head MultiHeadAttention mask, causal both
 * ways, fully masked rows), dropout in training mode, use_scale / use_bias
 * on and off, both Attention score modes, a rank-2 Bahdanau query (Tq = 1),
 * MultiHeadAttention and GroupedQueryAttention (Nq/Nkv from 1 to 3) with
 * use_gate (the gate kernel and bias are parameters too; with no_bias only
 * the kernel), a sliding window, logit soft-capping and attention sinks
 * (a parameter) sometimes, and their
 * self-attention (one array as query and value: its finite difference is the
 * sum of both gradients). Gradients are poisoned (NaN) before each backward
 * and must come back finite. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vkattn/reference_backward.h"

#define H_STEP 5e-2
#define FD_REL 2e-4
#define FD_ABS 2e-5

enum kind { ATT, ADD, BAH, MHA, GQA };

/* One differentiable array: x (n floats) and the gradient(s) the backward
 * wrote for it; grad2 is added (an array passed as two inputs). */
typedef struct param {
    const char *name;
    float *x;
    size_t n;
    float *grad, *grad2;
} param;

typedef struct lcase {
    enum kind kind;
    vkattn_attention_desc ad;
    vkattn_attention_weights aw, agw;
    vkattn_additive_attention_desc dd;
    vkattn_additive_attention_weights dw, dgw;
    vkattn_bahdanau_desc bd;
    vkattn_bahdanau_weights bw, bgw;
    vkattn_mha_desc md;
    vkattn_gqa_desc gd;
    vkattn_mha_weights mw, mgw; /* MHA and GQA (vkattn_gqa_weights is the same struct) */
    vkattn_layer_call call;
    vkattn_layer_host_io io;
    vkattn_layer_host_grads g;
    float *go; /* grad_output */
    size_t nout;
    param p[16];
    int np;
    float *owned[40]; /* every array to free */
    int nowned;
    char label[200];
} lcase;

static float *arr(lcase *c, size_t n, float lo, float hi)
{
    float *x = tu_floats(n ? n : 1);
    tu_fill_uniform(x, n ? n : 1, lo, hi);
    c->owned[c->nowned++] = x;
    return x;
}

static float *grad_arr(lcase *c, size_t n)
{
    float *x = tu_floats(n ? n : 1);
    tu_poison(x, n ? n : 1);
    c->owned[c->nowned++] = x;
    return x;
}

static void add_param(lcase *c, const char *name, float *x, size_t n, float *grad)
{
    c->p[c->np++] = (param){name, x, n, grad, NULL};
}

static void free_case(lcase *c)
{
    for (int i = 0; i < c->nowned; i++)
        free(c->owned[i]);
}

static vkattn_result forward(lcase *c)
{
    switch (c->kind) {
    case ATT:
        return vkattn_reference_attention(&c->ad, &c->aw, &c->call, &c->io);
    case ADD:
        return vkattn_reference_additive_attention(&c->dd, &c->dw, &c->call, &c->io);
    case BAH:
        return vkattn_reference_bahdanau(&c->bd, &c->bw, &c->call, &c->io);
    case GQA:
        return vkattn_reference_gqa(&c->gd, &c->mw, &c->call, &c->io);
    default:
        return vkattn_reference_mha(&c->md, &c->mw, &c->call, &c->io);
    }
}

static vkattn_result backward(lcase *c)
{
    switch (c->kind) {
    case ATT:
        return vkattn_reference_attention_backward(&c->ad, &c->aw, &c->call, &c->io, c->go,
                                                   &c->g, &c->agw);
    case ADD:
        return vkattn_reference_additive_attention_backward(&c->dd, &c->dw, &c->call, &c->io,
                                                            c->go, &c->g, &c->dgw);
    case BAH:
        return vkattn_reference_bahdanau_backward(&c->bd, &c->bw, &c->call, &c->io, c->go, &c->g,
                                                  &c->bgw);
    case GQA:
        return vkattn_reference_gqa_backward(&c->gd, &c->mw, &c->call, &c->io, c->go, &c->g,
                                             &c->mgw);
    default:
        return vkattn_reference_mha_backward(&c->md, &c->mw, &c->call, &c->io, c->go, &c->g,
                                             &c->mgw);
    }
}

/* L = sum(go * out) of the f32 forward; *mag = sum |go * out|. */
static double loss(lcase *c, double *mag)
{
    vkattn_result r = forward(c);
    if (r)
        fail_msg("%s: forward failed: %s", c->label, vkattn_last_error());
    double l = 0.0, m = 0.0;
    for (size_t i = 0; i < c->nout; i++) {
        l += (double)c->go[i] * c->io.output[i];
        m += fabs((double)c->go[i] * c->io.output[i]);
    }
    if (mag)
        *mag = m;
    return l;
}

/* Central difference of L in x[e] with step h, on the f32 values actually set. */
static double central(lcase *c, float *x, double h)
{
    const float x0 = *x, xp = (float)(x0 + h), xm = (float)(x0 - h);
    *x = xp;
    const double lp = loss(c, NULL);
    *x = xm;
    const double lm = loss(c, NULL);
    *x = x0;
    return (lp - lm) / ((double)xp - (double)xm);
}

static double worst_seen; /* largest error / bound over the run, printed at the end */

static void check_case(lcase *c)
{
    double mag;
    loss(c, &mag);
    assert_int_equal(backward(c), VKATTN_SUCCESS);
    for (int k = 0; k < c->np; k++) {
        const param *p = &c->p[k];
        double fd_max = 0.0, err_max = 0.0;
        size_t worst = 0;
        double *fd = tu_alloc(p->n * sizeof(double));
        for (size_t e = 0; e < p->n; e++) {
            const double d1 = central(c, &p->x[e], H_STEP), d2 = central(c, &p->x[e], H_STEP / 2);
            fd[e] = (4.0 * d2 - d1) / 3.0; /* Richardson: the h^2 terms cancel */
            fd_max = fmax(fd_max, fabs(fd[e]));
        }
        for (size_t e = 0; e < p->n; e++) {
            const double g = (double)p->grad[e] + (p->grad2 ? (double)p->grad2[e] : 0.0);
            if (!isfinite(g))
                fail_msg("%s: %s[%zu] is %g", c->label, p->name, e, g);
            const double err = fabs(g - fd[e]);
            if (err > err_max)
                err_max = err, worst = e;
        }
        const double bound = FD_REL * fd_max + FD_ABS * (1.0 + mag);
        worst_seen = fmax(worst_seen, err_max / bound);
        if (!TU_WITHIN(err_max, bound)) {
            const double g = (double)p->grad[worst] + (p->grad2 ? (double)p->grad2[worst] : 0.0);
            fail_msg("%s: %s[%zu]: backward %.9g, finite difference %.9g; max error %.3g > "
                     "bound %.3g (max|fd| %.3g)",
                     c->label, p->name, worst, g, fd[worst], err_max, bound, fd_max);
        }
        free(fd);
    }
}

/* ---------------------------------------------------------------- inputs and masks */

/* The io arrays of a single-head or MHA call: widths dq, dk, dv, output width dout. */
static void make_io(lcase *c, int variant, uint32_t dq, uint32_t dk, uint32_t dv, uint32_t dout,
                    bool key)
{
    const size_t B = c->call.batch, tq = c->call.tq, tv = c->call.tv;
    c->io = (vkattn_layer_host_io){0};
    c->io.query = arr(c, B * tq * dq, -1, 1);
    c->io.value = arr(c, B * tv * dv, -1, 1);
    if (key)
        c->io.key = arr(c, B * tv * dk, -1, 1);
    c->io.output = arr(c, B * tq * dout, 0, 0);
    c->nout = B * tq * dout;
    c->go = arr(c, c->nout, -1, 1);
    c->g = (vkattn_layer_host_grads){
        .grad_query = grad_arr(c, B * tq * dq),
        .grad_value = grad_arr(c, B * tv * dv),
        .grad_key = key ? grad_arr(c, B * tv * dk) : NULL,
    };
    add_param(c, "query", (float *)c->io.query, B * tq * dq, c->g.grad_query);
    add_param(c, "value", (float *)c->io.value, B * tv * dv, c->g.grad_value);
    if (key)
        add_param(c, "key", (float *)c->io.key, B * tv * dk, c->g.grad_key);
    /* masks: variant bit 1 = query/value masks (one batch row fully masked),
     * bit 2 = an attention mask broadcast over the batch, (Tq, Tv) */
    if (variant & 1) {
        float *qm = arr(c, B * tq, 0, 0), *vm = arr(c, B * tv, 0, 0);
        tu_fill_mask(qm, B * tq, 0.7f);
        tu_fill_mask(vm, B * tv, 0.7f);
        vm[0] = 1.0f;
        if (B > 1) /* the last batch row has no allowed key at all */
            for (size_t j = 0; j < tv; j++)
                vm[(B - 1) * tv + j] = 0.0f;
        c->io.query_mask = qm, c->io.value_mask = vm;
    }
    if (variant & 2) {
        float *am = arr(c, tq * tv, 0, 0);
        tu_fill_mask(am, tq * tv, 0.75f);
        c->io.attention_mask = am;
        c->io.attention_mask_rank = 2;
        c->io.attention_mask_dims[0] = (uint32_t)tq;
        c->io.attention_mask_dims[1] = (uint32_t)tv;
    }
}

static vkattn_layer_call make_call(int variant, uint32_t tq_fixed)
{
    vkattn_layer_call call = {
        .batch = variant % 5 == 0 ? 1 : tu_rand_range(2, 3),
        .tq = tq_fixed ? tq_fixed : tu_rand_range(1, 5),
        .tv = tu_rand_range(2, 6),
        .seed = tu_rand_u32(), .offset = tu_rand_u32(),
    };
    /* variant bit 4: causal, top-left or bottom-right (Tq > Tv masks whole rows) */
    if (variant & 4)
        call.causal = variant & 8 ? VKATTN_CAUSAL_BOTTOM_RIGHT : VKATTN_CAUSAL_TOP_LEFT;
    call.training = (variant & 16) != 0; /* dropout active when the desc has a rate */
    return call;
}

static void label(lcase *c, const char *layer, int variant)
{
    snprintf(c->label, sizeof c->label,
             "%s variant %d (B %u Tq %u Tv %u, key %s, causal %d, training %d)", layer, variant,
             c->call.batch, c->call.tq, c->call.tv, c->io.key ? "given" : "absent",
             (int)c->call.causal, (int)c->call.training);
}

/* ---------------------------------------------------------------- the five layers */

#define VARIANTS 32

static void attention_grads(void **state)
{
    (void)state;
    tu_seed();
    for (int v = 0; v < VARIANTS; v++) {
        lcase c = {.kind = ATT};
        c.call = make_call(v, 0);
        const bool key = tu_rand_range(0, 1);
        const uint32_t d = tu_rand_range(1, 5), dv = key ? tu_rand_range(1, 5) : d;
        c.ad = (vkattn_attention_desc){
            .query_width = d, .value_width = dv, .key_width = key ? d : 0,
            .use_scale = (v / 2) % 2 == 0, .score_mode = v % 2 ? VKATTN_SCORE_CONCAT
                                                              : VKATTN_SCORE_DOT,
            .dropout = v & 16 ? 0.3f : 0.0f,
        };
        c.aw = (vkattn_attention_weights){tu_rand_float(-1.5f, 1.5f), tu_rand_float(-1.5f, 1.5f)};
        make_io(&c, v, d, d, dv, dv, key);
        add_param(&c, "scale", &c.aw.scale, 1, &c.agw.scale);
        add_param(&c, "concat_score_weight", &c.aw.concat_score_weight, 1,
                  &c.agw.concat_score_weight);
        c.agw.scale = c.agw.concat_score_weight = NAN;
        label(&c, c.ad.score_mode ? "Attention concat" : "Attention dot", v);
        check_case(&c);
        /* unused scalars get exactly 0 */
        if (!c.ad.use_scale)
            assert_true(c.agw.scale == 0.0f);
        if (c.ad.score_mode == VKATTN_SCORE_DOT)
            assert_true(c.agw.concat_score_weight == 0.0f);
        free_case(&c);
    }
}

static void additive_attention_grads(void **state)
{
    (void)state;
    tu_seed();
    for (int v = 0; v < VARIANTS; v++) {
        lcase c = {.kind = ADD};
        c.call = make_call(v, 0);
        const bool key = tu_rand_range(0, 1);
        const uint32_t d = tu_rand_range(1, 5), dv = key ? tu_rand_range(1, 5) : d;
        c.dd = (vkattn_additive_attention_desc){
            .query_width = d, .value_width = dv, .key_width = key ? d : 0,
            .no_scale = v % 3 == 2, .dropout = v & 16 ? 0.25f : 0.0f,
        };
        make_io(&c, v, d, d, dv, dv, key);
        if (!c.dd.no_scale) {
            c.dw.scale = arr(&c, d, -1, 1);
            c.dgw.scale = grad_arr(&c, d);
            add_param(&c, "scale", c.dw.scale, d, c.dgw.scale);
        }
        label(&c, "AdditiveAttention", v);
        check_case(&c);
        free_case(&c);
    }
}

static void bahdanau_grads(void **state)
{
    (void)state;
    tu_seed();
    for (int v = 0; v < VARIANTS; v++) {
        lcase c = {.kind = BAH};
        c.call = make_call(v, v % 4 == 3 ? 1 : 0); /* every 4th: a rank-2 query, Tq = 1 */
        const bool key = tu_rand_range(0, 1);
        const uint32_t dq = tu_rand_range(1, 5), dv = tu_rand_range(1, 5);
        const uint32_t dk = key ? tu_rand_range(1, 5) : dv, u = tu_rand_range(1, 4);
        c.bd = (vkattn_bahdanau_desc){.query_width = dq, .key_width = key ? dk : 0,
                                      .value_width = dv, .units = u,
                                      .dropout = v & 16 ? 0.3f : 0.0f};
        make_io(&c, v, dq, dk, dv, dv, key);
        c.bw = (vkattn_bahdanau_weights){arr(&c, (size_t)dq * u, -1, 1),
                                         arr(&c, (size_t)dk * u, -1, 1), arr(&c, u, -1, 1),
                                         tu_rand_float(-1, 1)};
        c.bgw = (vkattn_bahdanau_weights){grad_arr(&c, (size_t)dq * u),
                                          grad_arr(&c, (size_t)dk * u), grad_arr(&c, u), NAN};
        add_param(&c, "query_kernel", c.bw.query_kernel, (size_t)dq * u, c.bgw.query_kernel);
        add_param(&c, "key_kernel", c.bw.key_kernel, (size_t)dk * u, c.bgw.key_kernel);
        add_param(&c, "score_kernel", c.bw.score_kernel, u, c.bgw.score_kernel);
        add_param(&c, "score_bias", &c.bw.score_bias, 1, &c.bgw.score_bias);
        label(&c, "Bahdanau", v);
        check_case(&c);
        assert_true(c.bgw.score_bias == 0.0f);
        free_case(&c);
    }
}

/* The draw both multi-head layers start with: the call, self-attention
 * (every sixth variant: one array as query and value, key absent, Tq = Tv),
 * the key given or not, and the input widths. */
typedef struct mh_inputs {
    bool self, key;
    uint32_t dq, dk, dv;
} mh_inputs;

static mh_inputs multi_head_draw(lcase *c, int v)
{
    mh_inputs m = {.self = v % 6 == 5};
    c->call = make_call(v, 0);
    if (m.self)
        c->call.tq = c->call.tv;
    m.key = !m.self && tu_rand_range(0, 1);
    m.dq = tu_rand_range(1, 5);
    m.dv = m.self ? m.dq : tu_rand_range(1, 5);
    m.dk = m.key ? tu_rand_range(1, 5) : m.dv;
    return m;
}

/* What the multi-head layers add to make_io: for some variants a per-head
 * attention mask (B|1, heads, Tq, Tv); with self, the query array passed as
 * value too (one parameter, two gradients). */
static void multi_head_extras(lcase *c, int v, size_t heads, bool self)
{
    if ((v & 2) && v % 3 == 0) {
        const uint32_t mb = v % 2 ? c->call.batch : 1;
        const size_t n = (size_t)mb * heads * c->call.tq * c->call.tv;
        float *am = arr(c, n, 0, 0);
        tu_fill_mask(am, n, 0.75f);
        c->io.attention_mask = am;
        c->io.attention_mask_rank = 4;
        const uint32_t dims[4] = {mb, (uint32_t)heads, c->call.tq, c->call.tv};
        memcpy(c->io.attention_mask_dims, dims, sizeof dims);
    }
    if (self) {
        c->io.value = c->io.query;
        c->p[0].grad2 = c->g.grad_value;
        c->p[1] = c->p[--c->np];
    }
}

/* The weights of a multi-head layer (vkattn_mha_weights, in its field
 * order), each a parameter: hq query heads of width kd, hkv key/value heads
 * (key width kd, value width vd), input widths dq, dk, dv, output width dout;
 * no bias with no_bias, no gate without use_gate. */
static void add_multi_head_weights(lcase *c, size_t hq, size_t hkv, size_t kd, size_t vd,
                                   size_t dq, size_t dk, size_t dv, size_t dout, bool no_bias,
                                   bool use_gate)
{
    const size_t b = no_bias ? 0 : 1, gate = use_gate ? 1 : 0; /* n[i] = 0: no such weight */
    const size_t n[10] = {dq * hq * kd,   b * hq * kd,   dk * hkv * kd,      b * hkv * kd,
                          dv * hkv * vd,  b * hkv * vd,  hq * vd * dout,     b * dout,
                          gate * dq * hq * vd, gate * b * hq * vd};
    float **w[10] = {&c->mw.query_kernel,  &c->mw.query_bias,  &c->mw.key_kernel,
                     &c->mw.key_bias,      &c->mw.value_kernel, &c->mw.value_bias,
                     &c->mw.output_kernel, &c->mw.output_bias,  &c->mw.gate_kernel,
                     &c->mw.gate_bias};
    float **gw[10] = {&c->mgw.query_kernel,  &c->mgw.query_bias,  &c->mgw.key_kernel,
                      &c->mgw.key_bias,      &c->mgw.value_kernel, &c->mgw.value_bias,
                      &c->mgw.output_kernel, &c->mgw.output_bias,  &c->mgw.gate_kernel,
                      &c->mgw.gate_bias};
    static const char *names[10] = {"query_kernel",  "query_bias",  "key_kernel",
                                    "key_bias",      "value_kernel", "value_bias",
                                    "output_kernel", "output_bias",  "gate_kernel",
                                    "gate_bias"};
    for (int i = 0; i < 10; i++) {
        if (!n[i])
            continue;
        *w[i] = arr(c, n[i], -1, 1);
        *gw[i] = grad_arr(c, n[i]);
        add_param(c, names[i], *w[i], n[i], *gw[i]);
    }
}

/* Soft-capping (Gemma 2) on some variants, sinks (gpt-oss) on others, both
 * at once on some: the sinks (H) are a parameter like any weight. */
static void open_model_options(lcase *c, int v, size_t heads, float *softcap, bool *use_sinks)
{
    if (v % 5 == 1 || v % 5 == 3)
        *softcap = tu_rand_float(0.4f, 1.5f); /* scores reach it: tanh bends */
    if (v % 4 == 2 || v % 5 == 3) {
        *use_sinks = true;
        c->mw.sinks = arr(c, heads, -1.5f, 1.5f);
        c->mgw.sinks = grad_arr(c, heads);
        add_param(c, "sinks", c->mw.sinks, heads, c->mgw.sinks);
    }
}

static void mha_grads(void **state)
{
    (void)state;
    tu_seed();
    for (int v = 0; v < VARIANTS; v++) {
        lcase c = {.kind = MHA};
        const mh_inputs m = multi_head_draw(&c, v);
        const bool self = m.self, key = m.key;
        const uint32_t dq = m.dq, dk = m.dk, dv = m.dv;
        c.md = (vkattn_mha_desc){
            .num_heads = tu_rand_range(1, 3), .key_dim = tu_rand_range(1, 4),
            .value_dim = v % 3 ? tu_rand_range(1, 4) : 0, .query_width = dq,
            .key_width = key ? dk : 0, .value_width = dv,
            .output_dim = v % 2 ? tu_rand_range(1, 5) : 0, .no_bias = v % 4 == 1,
            .dropout = v & 16 ? 0.3f : 0.0f,
            .use_gate = v % 3 != 2, /* with and without biases (no_bias) and dropout */
        };
        if (v % 7 == 3)
            c.md.sliding_window = tu_rand_range(1, 3);
        const size_t H = c.md.num_heads, kd = c.md.key_dim;
        const size_t vd = c.md.value_dim ? c.md.value_dim : kd;
        const size_t dout = c.md.output_dim ? c.md.output_dim : dq;
        make_io(&c, v, dq, dk, dv, dout, key);
        multi_head_extras(&c, v, H, self);
        add_multi_head_weights(&c, H, H, kd, vd, dq, dk, dv, dout, c.md.no_bias, c.md.use_gate);
        open_model_options(&c, v, H, &c.md.softcap, &c.md.use_sinks);
        label(&c, self ? "MultiHeadAttention self" : "MultiHeadAttention", v);
        check_case(&c);
        free_case(&c);
    }
}

/* GroupedQueryAttention: Nq/Nkv in {1, 2, 3}, Nkv 1 or 2 (G = Nq/Nkv query heads per
 * key/value head, whose weight gradients sum over the group), use_gate with
 * and without biases, a sliding window sometimes, a per-head mask
 * (B|1, Nq, Tq, Tv), self-attention. */
static void gqa_grads(void **state)
{
    (void)state;
    tu_seed();
    for (int v = 0; v < VARIANTS; v++) {
        lcase c = {.kind = GQA};
        const mh_inputs m = multi_head_draw(&c, v);
        const bool self = m.self, key = m.key;
        const uint32_t dq = m.dq, dk = m.dk, dv = m.dv;
        const uint32_t nkv = tu_rand_range(1, 2), group = 1 + (uint32_t)(v >> 1) % 3;
        c.gd = (vkattn_gqa_desc){
            .num_query_heads = nkv * group, .num_key_value_heads = nkv,
            .query_width = dq, .key_width = key ? dk : 0, .value_width = dv,
            .no_bias = v % 4 == 1, .dropout = v & 16 ? 0.3f : 0.0f,
            .use_gate = v % 3 != 2, /* with and without biases (no_bias) and dropout */
        };
        c.gd.head_dim = tu_rand_range(1, 3);
        if (v % 7 == 3)
            c.gd.sliding_window = (int32_t)tu_rand_range(1, 3);
        const size_t nq = c.gd.num_query_heads, h = c.gd.head_dim;
        make_io(&c, v, dq, dk, dv, dq, key);
        multi_head_extras(&c, v, nq, self);
        add_multi_head_weights(&c, nq, nkv, h, h, dq, dk, dv, dq, c.gd.no_bias, c.gd.use_gate);
        open_model_options(&c, v, nq, &c.gd.softcap, &c.gd.use_sinks);
        label(&c, self ? "GroupedQueryAttention self" : "GroupedQueryAttention", v);
        check_case(&c);
        free_case(&c);
    }
}

/* ---------------------------------------------------------------- bad inputs */

/* The call returned INVALID_ARGUMENT naming fn and `what`, and wrote nothing. */
static void expect_refused(vkattn_result got, const char *fn, const char *what, const float *g,
                           size_t n)
{
    if (got != VKATTN_ERROR_INVALID_ARGUMENT)
        fail_msg("%s (%s): got %s", fn, what, vkattn_result_name(got));
    const char *msg = vkattn_last_error();
    if (!strstr(msg, fn) || !strstr(msg, what))
        fail_msg("last error \"%s\" does not name %s and %s", msg, fn, what);
    for (size_t i = 0; i < n; i++)
        assert_true(isnan(g[i]));
}

static void bad_inputs(void **state)
{
    (void)state;
    enum { N = 64 };
    static float q[N], k[N], v[N], out[N], go[N], gq[N], gk[N], gv[N], wbuf[N], gwbuf[N];
    for (int i = 0; i < N; i++)
        q[i] = k[i] = v[i] = go[i] = wbuf[i] = 0.5f;
    tu_poison(gq, N), tu_poison(gk, N), tu_poison(gv, N), tu_poison(gwbuf, N);
    const vkattn_layer_call call = {.batch = 1, .tq = 2, .tv = 3};
    const vkattn_layer_host_io io = {.query = q, .value = v, .key = k, .output = out};
    const vkattn_layer_host_io io_nokey = {.query = q, .value = v, .output = out};
    vkattn_layer_host_grads g = {gq, gv, gk};

    /* Attention */
    static const char afn[] = "vkattn_reference_attention_backward";
    const vkattn_attention_desc ad = {.query_width = 2, .value_width = 2};
    vkattn_attention_weights aw = {1.0f, 1.0f}, agw;
    expect_refused(vkattn_reference_attention_backward(&ad, &aw, &call, &io, NULL, &g, &agw), afn,
                   "grad_output", gq, N);
    const vkattn_layer_host_grads g_key = {gq, gv, gk};
    expect_refused(vkattn_reference_attention_backward(&ad, &aw, &call, &io_nokey, go, &g_key,
                                                       &agw),
                   afn, "grad_key", gq, N);
    g = (vkattn_layer_host_grads){q, gv, gk};
    expect_refused(vkattn_reference_attention_backward(&ad, &aw, &call, &io, go, &g, &agw), afn,
                   "io->query", gv, N);
    g = (vkattn_layer_host_grads){gq, gv, gk};
    g.grad_value = gq + 1; /* overlaps grad_query */
    expect_refused(vkattn_reference_attention_backward(&ad, &aw, &call, &io, go, &g, &agw), afn,
                   "grad_value", gk, N);
    g = (vkattn_layer_host_grads){gq, gv, go + 2}; /* grad_key inside grad_output */
    expect_refused(vkattn_reference_attention_backward(&ad, &aw, &call, &io, go, &g, &agw), afn,
                   "grad_output", gq, N);
    g = (vkattn_layer_host_grads){gq, gv, gk};
    expect_refused(vkattn_reference_attention_backward(&ad, &aw, &call, &io, go, &g, &aw), afn,
                   "grad_w", gq, N);
    vkattn_attention_desc bad = ad;
    bad.query_width = 0;
    expect_refused(vkattn_reference_attention_backward(&bad, &aw, &call, &io, go, &g, &agw), afn,
                   "query_width", gq, N);
    expect_refused(vkattn_reference_attention_backward(&ad, &aw, NULL, &io, go, &g, &agw), afn,
                   "call", gq, N);
    expect_refused(vkattn_reference_attention_backward(&ad, &aw, &call, NULL, go, &g, &agw), afn,
                   "io", gq, N);
    vkattn_layer_host_io io_bad = io;
    io_bad.value = NULL;
    expect_refused(vkattn_reference_attention_backward(&ad, &aw, &call, &io_bad, go, &g, &agw),
                   afn, "io->value", gq, N);
    aw.scale = INFINITY;
    expect_refused(vkattn_reference_attention_backward(&ad, &aw, &call, &io, go, &g, &agw), afn,
                   "w->scale", gq, N);
    aw.scale = 1.0f;
    /* io->output and io->scores are ignored: NULL output is fine */
    io_bad = io;
    io_bad.output = NULL;
    assert_int_equal(vkattn_reference_attention_backward(&ad, &aw, &call, &io_bad, go, NULL, NULL),
                     VKATTN_SUCCESS);

    /* AdditiveAttention: a scale gradient with no_scale */
    static const char dfn[] = "vkattn_reference_additive_attention_backward";
    const vkattn_additive_attention_desc dd = {.query_width = 2, .value_width = 2,
                                               .no_scale = true};
    const vkattn_additive_attention_weights dw = {0};
    vkattn_additive_attention_weights dgw = {gwbuf};
    expect_refused(vkattn_reference_additive_attention_backward(&dd, &dw, &call, &io, go, &g,
                                                                &dgw),
                   dfn, "grad_w->scale", gq, N);
    /* with a scale: its gradient must not alias it */
    const vkattn_additive_attention_desc ds = {.query_width = 2, .value_width = 2};
    const vkattn_additive_attention_weights sw = {wbuf};
    dgw.scale = wbuf;
    expect_refused(vkattn_reference_additive_attention_backward(&ds, &sw, &call, &io, go, &g,
                                                                &dgw),
                   dfn, "w->scale", gq, N);

    /* Bahdanau: a kernel gradient aliasing the query */
    static const char bfn[] = "vkattn_reference_bahdanau_backward";
    const vkattn_bahdanau_desc bd = {.query_width = 2, .value_width = 2, .units = 3};
    const vkattn_bahdanau_weights bw = {wbuf, wbuf + 6, wbuf + 12, 0.0f};
    vkattn_bahdanau_weights bgw = {q, gwbuf + 6, gwbuf + 12, 0.0f};
    expect_refused(vkattn_reference_bahdanau_backward(&bd, &bw, &call, &io, go, &g, &bgw), bfn,
                   "grad_w->query_kernel", gq, N);
    bgw.query_kernel = gwbuf;
    const vkattn_bahdanau_weights bw_missing = {wbuf, NULL, wbuf + 12, 0.0f};
    expect_refused(vkattn_reference_bahdanau_backward(&bd, &bw_missing, &call, &io, go, &g, &bgw),
                   bfn, "key_kernel", gq, N);

    /* MultiHeadAttention: bias gradients without biases, a missing weight */
    static const char mfn[] = "vkattn_reference_mha_backward";
    const vkattn_mha_desc md = {.num_heads = 1, .key_dim = 2, .query_width = 2,
                                .value_width = 2, .no_bias = true};
    const vkattn_mha_weights mw = {.query_kernel = wbuf, .key_kernel = wbuf + 4,
                                   .value_kernel = wbuf + 8, .output_kernel = wbuf + 12};
    vkattn_mha_weights mgw = {.query_kernel = gwbuf, .output_bias = gwbuf + 20};
    expect_refused(vkattn_reference_mha_backward(&md, &mw, &call, &io, go, &g, &mgw), mfn,
                   "grad_w->output_bias", gq, N);
    mgw.output_bias = NULL;
    expect_refused(vkattn_reference_mha_backward(&md, &mw, &call, &io, NULL, &g, &mgw), mfn,
                   "grad_output", gq, N);
    expect_refused(vkattn_reference_mha_backward(&md, &mw, &call, &io_nokey, go, &g_key, &mgw),
                   mfn, "grad_key", gq, N);
    mgw.query_kernel = wbuf + 8; /* the value kernel */
    expect_refused(vkattn_reference_mha_backward(&md, &mw, &call, &io, go, &g, &mgw), mfn,
                   "w->value_kernel", gq, N);
    mgw.query_kernel = gwbuf;
    vkattn_mha_weights mw_missing = mw;
    mw_missing.output_kernel = NULL;
    expect_refused(vkattn_reference_mha_backward(&md, &mw_missing, &call, &io, go, &g, &mgw), mfn,
                   "w->output_kernel", gq, N);
    vkattn_mha_desc md_bad = md;
    md_bad.num_heads = 0;
    expect_refused(vkattn_reference_mha_backward(&md_bad, &mw, &call, &io, go, &g, &mgw), mfn,
                   "num_heads", gq, N);
}

static int report(void **state)
{
    (void)state;
    print_message("largest finite-difference error / bound so far: %.3g\n", worst_seen);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(attention_grads, report),
        cmocka_unit_test_teardown(additive_attention_grads, report),
        cmocka_unit_test_teardown(bahdanau_grads, report),
        cmocka_unit_test_teardown(mha_grads, report),
        cmocka_unit_test_teardown(gqa_grads, report),
        cmocka_unit_test(bad_inputs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
