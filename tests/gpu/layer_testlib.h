/* What the layer GPU tests share: one random layer call (inputs, masks, call
 * options) held on the host for the CPU reference and on the device for the
 * layer, and the comparison of the two. Header-only (static inline) so each
 * tests/gpu/test_*.c stays one self-contained executable. */
#ifndef VKATTN_TEST_LAYER_TESTLIB_H
#define VKATTN_TEST_LAYER_TESTLIB_H

#include "harness.h"
#include "mask_forms.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct lt_shape {
    uint32_t B, tq, tv;
    uint32_t dq, dk, dv, dout;
} lt_shape;

typedef struct lt_opts {
    bool key; /* a key tensor of its own (else key = value) */
    bool query_mask, value_mask, attention_mask;
    bool causal, bottom_right;
    bool training;
    bool scores; /* return_attention_scores */
    uint64_t seed, offset;
    vkattn_sdpa_path path;
    const char *am_form; /* attention mask shape (mask_forms.h); NULL = a flat full mask */
} lt_opts;

/* One call: host inputs, and the reference's outputs. */
typedef struct lt_data {
    lt_shape s;
    lt_opts o;
    size_t nq, nk, nv, nqm, nvm, nam, nout, nsc;
    float *q, *k, *v, *qm, *vm, *am;
    float *ref_out, *ref_scores;
    lt_mask_shape am_shape; /* when o.am_form */
} lt_data;

/* Random 0/1 mask; sometimes a whole row (the last batch's, or the first
 * query's) is 0 so fully masked rows are exercised. */
static inline void lt_fill_mask(float *m, size_t rows, size_t cols)
{
    tu_fill_mask(m, rows * cols, 0.7f);
    if (tu_rand_range(0, 2) == 0)
        memset(m + (rows - 1) * cols, 0, cols * sizeof(float));
}

static inline void lt_data_init(lt_data *d, const lt_shape *s, const lt_opts *o)
{
    memset(d, 0, sizeof *d);
    d->s = *s;
    d->o = *o;
    const size_t B = s->B, tq = s->tq, tv = s->tv;
    d->nq = B * tq * s->dq, d->nk = B * tv * s->dk, d->nv = B * tv * s->dv;
    d->nqm = B * tq, d->nvm = B * tv, d->nam = B * tq * tv;
    d->nout = B * tq * s->dout, d->nsc = B * tq * tv;
    d->q = tu_floats(d->nq), d->v = tu_floats(d->nv);
    tu_fill_uniform(d->q, d->nq, -1, 1);
    tu_fill_uniform(d->v, d->nv, -1, 1);
    if (o->key) {
        d->k = tu_floats(d->nk);
        tu_fill_uniform(d->k, d->nk, -1, 1);
    }
    if (o->query_mask) {
        d->qm = tu_floats(d->nqm);
        lt_fill_mask(d->qm, B, tq);
    }
    if (o->value_mask) {
        d->vm = tu_floats(d->nvm);
        lt_fill_mask(d->vm, B, tv);
    }
    if (o->attention_mask && o->am_form) {
        d->am_shape = lt_mask_form(o->am_form, s->B, 1, s->tq, s->tv);
        d->nam = lt_mask_count(&d->am_shape);
        d->am = lt_mask_random(&d->am_shape);
    } else if (o->attention_mask) {
        d->am = tu_floats(d->nam);
        lt_fill_mask(d->am, B * tq, tv);
    }
    d->ref_out = tu_floats(d->nout);
    tu_poison(d->ref_out, d->nout);
    if (o->scores) {
        d->ref_scores = tu_floats(d->nsc);
        tu_poison(d->ref_scores, d->nsc);
    }
}

static inline void lt_data_free(lt_data *d)
{
    free(d->q), free(d->k), free(d->v), free(d->qm), free(d->vm), free(d->am);
    free(d->ref_out), free(d->ref_scores);
}

static inline vkattn_layer_call lt_call(const lt_data *d)
{
    return (vkattn_layer_call){
        .batch = d->s.B, .tq = d->s.tq, .tv = d->s.tv,
        .causal = !d->o.causal         ? VKATTN_CAUSAL_NONE
                  : d->o.bottom_right ? VKATTN_CAUSAL_BOTTOM_RIGHT
                                      : VKATTN_CAUSAL_TOP_LEFT,
        .training = d->o.training, .seed = d->o.seed, .offset = d->o.offset,
        .return_attention_scores = d->o.scores, .path = d->o.path,
    };
}

static inline vkattn_layer_host_io lt_host_io(lt_data *d)
{
    vkattn_layer_host_io io = {
        .query = d->q, .value = d->v, .key = d->k, .query_mask = d->qm, .value_mask = d->vm,
        .attention_mask = d->am, .output = d->ref_out, .scores = d->ref_scores,
    };
    if (d->am && d->o.am_form) {
        io.attention_mask_rank = d->am_shape.rank;
        memcpy(io.attention_mask_dims, d->am_shape.dims, sizeof io.attention_mask_dims);
    }
    return io;
}

static inline void lt_describe(char *buf, size_t n, const lt_data *d, const char *layer)
{
    const lt_shape *s = &d->s;
    const lt_opts *o = &d->o;
    snprintf(buf, n,
             "%s B=%u Tq=%u Tv=%u Dq=%u Dk=%u Dv=%u key=%d qmask=%d vmask=%d amask=%d causal=%d%s "
             "training=%d seed=%llu offset=%llu scores=%d path=%d amask_form=%s",
             layer, s->B, s->tq, s->tv, s->dq, s->dk, s->dv, o->key, o->query_mask, o->value_mask,
             o->attention_mask, o->causal, o->bottom_right ? "(br)" : "", o->training,
             (unsigned long long)o->seed, (unsigned long long)o->offset, o->scores, (int)o->path,
             o->am_form ? o->am_form : "full");
}

/* Random options; `causal_ok` false where a layer test wants none. */
static inline lt_opts lt_random_opts(void)
{
    lt_opts o = {
        .key = tu_rand_range(0, 1), .query_mask = tu_rand_range(0, 2) == 0,
        .value_mask = tu_rand_range(0, 1), .attention_mask = tu_rand_range(0, 3) == 0,
        .causal = tu_rand_range(0, 2) == 0, .training = tu_rand_range(0, 2) == 0,
        .scores = tu_rand_range(0, 1),
        .seed = ((uint64_t)tu_rand_u32() << 32) | tu_rand_u32(), .offset = tu_rand_u32() % 16,
    };
    o.bottom_right = o.causal && tu_rand_range(0, 2) == 0;
    return o;
}

/* ---------------------------------------------------------------- device side */

typedef struct lt_gpu {
    vkattn_tensor *q, *k, *v, *qm, *vm, *am, *out, *sc;
} lt_gpu;

static inline vkattn_tensor *lt_opt_tensor(vkattn_context *ctx, const float *data, size_t n)
{
    return data ? th_tensor(ctx, n, data) : NULL;
}

static inline void lt_gpu_init(vkattn_context *ctx, lt_gpu *g, const lt_data *d)
{
    g->q = th_tensor(ctx, d->nq, d->q);
    g->v = th_tensor(ctx, d->nv, d->v);
    g->k = lt_opt_tensor(ctx, d->k, d->nk);
    g->qm = lt_opt_tensor(ctx, d->qm, d->nqm);
    g->vm = lt_opt_tensor(ctx, d->vm, d->nvm);
    g->am = d->am && d->o.am_form ? lt_mask_tensor(ctx, &d->am_shape, d->am)
                                  : lt_opt_tensor(ctx, d->am, d->nam);
    g->out = th_tensor(ctx, d->nout, NULL); /* poisoned with NaN */
    g->sc = d->o.scores ? th_tensor(ctx, d->nsc, NULL) : NULL;
}

static inline vkattn_layer_io lt_gpu_io(const lt_gpu *g)
{
    return (vkattn_layer_io){
        .query = g->q, .value = g->v, .key = g->k, .query_mask = g->qm, .value_mask = g->vm,
        .attention_mask = g->am, .output = g->out, .scores = g->sc,
    };
}

static inline void lt_gpu_free(lt_gpu *g)
{
    vkattn_tensor *all[] = {g->q, g->k, g->v, g->qm, g->vm, g->am, g->out, g->sc};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vkattn_tensor_destroy(all[i]);
    memset(g, 0, sizeof *g);
}

/* Downloads the layer's output (and scores) and compares with the reference:
 * max|got - ref| / max|ref| <= bound. Where dropout is active, the dropped
 * weights must be exactly 0 in both (the Philox stream is bit-identical). */
static inline void lt_gpu_check(const lt_gpu *g, const lt_data *d, double bound, const char *what)
{
    float *out = th_download(g->out, d->nout);
    if (getenv("VKATTN_TEST_VERBOSE"))
        printf("# err out %.3g%s: %s\n", tu_max_rel_err(out, d->ref_out, d->nout, 1e-30),
               d->o.scores ? "" : " (no scores)", what);
    char msg[512];
    snprintf(msg, sizeof msg, "output of %s", what);
    TU_ASSERT_CLOSE(out, d->ref_out, d->nout, bound, msg);
    free(out);
    if (!d->o.scores)
        return;
    float *sc = th_download(g->sc, d->nsc);
    if (getenv("VKATTN_TEST_VERBOSE"))
        printf("# err scores %.3g\n", tu_max_rel_err(sc, d->ref_scores, d->nsc, 1e-30));
    snprintf(msg, sizeof msg, "scores of %s", what);
    TU_ASSERT_CLOSE(sc, d->ref_scores, d->nsc, bound, msg);
    for (size_t i = 0; i < d->nsc; i++)
        if ((sc[i] == 0.0f) != (d->ref_scores[i] == 0.0f) && d->o.training)
            fail_msg("%s: weight %zu is %g on the GPU and %g in the reference (dropout mask "
                     "differs)",
                     msg, i, (double)sc[i], (double)d->ref_scores[i]);
    free(sc);
}

/* |got - exp| <= atol + rtol * |exp| everywhere (the case-file rule). */
static inline void lt_assert_case(const float *got, const float *exp, size_t n, double atol,
                                  double rtol, const char *what)
{
    for (size_t i = 0; i < n; i++) {
        double diff = fabs((double)got[i] - (double)exp[i]);
        if (!TU_WITHIN(diff, atol + rtol * fabs((double)exp[i])))
            fail_msg("%s: element %zu is %.9g; expected %.9g (atol %g, rtol %g)", what, i,
                     (double)got[i], (double)exp[i], atol, rtol);
    }
}

/* ---------------------------------------------------------------- case files */

/* One case of tests/cases/examples.json, transcribed: the flags
 * of `o` that name tensors follow the arrays (NULL = absent). */
typedef struct lt_example {
    const char *name;
    lt_shape s;
    lt_opts o; /* causal, training, seed, offset, scores */
    const float *q, *k, *v, *qm, *vm, *am;
    const float *out, *scores; /* expected */
    double atol, rtol;
} lt_example;

static inline void lt_data_from_example(lt_data *d, const lt_example *e)
{
    lt_opts o = e->o;
    o.key = e->k != NULL, o.query_mask = e->qm != NULL, o.value_mask = e->vm != NULL;
    o.attention_mask = e->am != NULL;
    lt_data_init(d, &e->s, &o);
    memcpy(d->q, e->q, d->nq * sizeof(float));
    memcpy(d->v, e->v, d->nv * sizeof(float));
    if (e->k)
        memcpy(d->k, e->k, d->nk * sizeof(float));
    if (e->qm)
        memcpy(d->qm, e->qm, d->nqm * sizeof(float));
    if (e->vm)
        memcpy(d->vm, e->vm, d->nvm * sizeof(float));
    if (e->am)
        memcpy(d->am, e->am, d->nam * sizeof(float));
}

/* Checks host results (reference or downloaded) against the case's expected values. */
static inline void lt_check_example(const lt_example *e, const lt_data *d, const float *out,
                                    const float *scores, const char *who)
{
    char what[256];
    snprintf(what, sizeof what, "%s: %s output", e->name, who);
    lt_assert_case(out, e->out, d->nout, e->atol, e->rtol, what);
    if (e->scores && scores) {
        snprintf(what, sizeof what, "%s: %s scores", e->name, who);
        lt_assert_case(scores, e->scores, d->nsc, e->atol, e->rtol, what);
    }
}

/* The forms of mask_forms.h a single-head layer takes, each on two random
 * shapes (batch 1, then 2 or 3; odd sizes, Tq != Tv, Tv > 1 so a key axis of
 * 1 is a real broadcast), with other masks and causal drawn at random.
 * `make` fills the widths a layer needs; `check` runs one case vs the
 * reference (it poisons the outputs with NaN first). */
static inline void lt_each_mask_form(vkattn_context *ctx, void (*make)(lt_shape *, const lt_opts *),
                                     void (*check)(vkattn_context *, const lt_shape *,
                                                   const lt_opts *, int variant))
{
    const size_t n = sizeof lt_mask_forms_single / sizeof lt_mask_forms_single[0];
    for (size_t f = 0; f < n; f++)
        for (int rep = 0; rep < 2; rep++) {
            lt_opts o = {.key = tu_rand_range(0, 1), .query_mask = tu_rand_range(0, 2) == 0,
                         .value_mask = tu_rand_range(0, 2) == 0, .attention_mask = true,
                         .causal = tu_rand_range(0, 3) == 0, .scores = tu_rand_range(0, 1),
                         .am_form = lt_mask_forms_single[f]};
            lt_shape s = {rep ? tu_rand_range(2, 3) : 1, 2 * tu_rand_range(0, 4) + 1,
                          2 * tu_rand_range(1, 6), 2 * tu_rand_range(1, 4) + 1,
                          2 * tu_rand_range(1, 3) + 1, tu_rand_range(1, 7), 0};
            make(&s, &o);
            check(ctx, &s, &o, (int)(f * 2 + (size_t)rep));
        }
}

/* A mask of shape (Tq + 1, Tv + 1): broadcasts to nothing, and its element
 * count is not the full mask's either. */
static inline vkattn_tensor *lt_bad_mask(vkattn_context *ctx, uint32_t tq, uint32_t tv)
{
    const lt_mask_shape s = {.rank = 2, .dims = {tq + 1, tv + 1}};
    float *zeros = calloc(lt_mask_count(&s), sizeof(float));
    vkattn_tensor *t = lt_mask_tensor(ctx, &s, zeros);
    free(zeros);
    return t;
}

#endif /* VKATTN_TEST_LAYER_TESTLIB_H */
