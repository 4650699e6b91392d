/* Masked softmax vs vkattn_reference_softmax: random shapes (B, H, Tq, Tv with
 * 1, primes, Tv not a multiple of the workgroup), every mask alone and
 * combined, both causal anchors with Tq != Tv, broadcast bias and mask, both
 * masked-row policies, in place and out of place, the cached and the
 * multi-pass path (Tv = 70000), logits of +-1e4 and +-3e38, one allowed key per
 * row, NaN and +inf confined to their row, rows spread over workgroup y, and
 * bad arguments; then, under the GPU tuning in every mode, row widths across
 * its shapes (subgroup reductions), rows split into chunks, and which kernel
 * served a call. Fresh random inputs every run; outputs poisoned with NaN
 * first, and a guard tail after the output must stay untouched.
 *
 * Bound: relative error max|got - ref| / max|ref| <= bound(Tv) (the reference
 * works in double):
 *   bound(Tv) = 1e-5 + 6 u sqrt(Tv / 3),  u = 2^-24.
 * 1e-5 covers each weight's own rounding (its fp32 logit and exp2, a few ulp
 * near the row's largest weights, which set max|ref|). The second term is the
 * row sum's: every weight is divided by the same fp32 sum, a chain of up to Tv
 * online steps in one invocation (the CPU tuning gives short rows one
 * invocation each), each rounding by up to u relative. Its worst case, about
 * 2 u Tv, would hide a key dropped from a long row (1 / Tv), so the bound takes
 * the chain's rounding as a random walk, standard deviation u sqrt(Tv / 3) for
 * errors uniform in [-u, u], at 6 deviations: 2.8e-5 for Tv = 7680, 6.5e-5 for
 * Tv = 70000. Seen: 6.8e-6 at Tv = 7680 (seed 2793302258769280160), 0.68 of
 * the former fixed 1e-5. A key dropped from a row of 7680 errs by 1.3e-4.
 * On top of it, masked weights must be exactly 0 wherever the reference's are,
 * and NaN must appear exactly where the reference has it. */
#include "harness.h"

#include <vkattn/advanced.h>
#include <vkattn/reference.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOUND 1e-5 /* one weight's rounding; rows add row_bound's sum term */
#define GUARD 7       /* elements after the output that must stay untouched */
#define GUARD_VALUE 42.0f

/* One case's host inputs (each array NULL when its flag is off). */
typedef struct sm_data {
    float *scores, *bias, *vmask, *mask;
    size_t n, n_bias, n_vmask, n_mask;
} sm_data;

static uint32_t heads_of(const vkattn_softmax_params *p) { return p->heads ? p->heads : 1; }

static size_t bcast_count(vkattn_broadcast bc, const vkattn_softmax_params *p)
{
    return (size_t)(bc.batch ? 1 : p->batch) * (bc.heads ? 1 : heads_of(p)) *
           (bc.rows ? 1 : p->tq) * p->tv;
}

/* Random inputs: scores uniform in [lo, hi], bias in [-2, 2], masks 0/1 with
 * probability mask_p of 1. */
static sm_data sm_make(const vkattn_softmax_params *p, float lo, float hi, float mask_p)
{
    const vkattn_mask_params *m = &p->mask;
    sm_data d = {.n = (size_t)p->batch * heads_of(p) * p->tq * p->tv};
    d.scores = tu_floats(d.n);
    tu_fill_uniform(d.scores, d.n, lo, hi);
    if (m->has_bias) {
        d.n_bias = bcast_count(m->bias_broadcast, p);
        d.bias = tu_floats(d.n_bias);
        tu_fill_uniform(d.bias, d.n_bias, -2, 2);
    }
    if (m->has_value_mask) {
        d.n_vmask = (size_t)p->batch * p->tv;
        d.vmask = tu_floats(d.n_vmask);
        tu_fill_mask(d.vmask, d.n_vmask, mask_p);
    }
    if (m->has_mask) {
        d.n_mask = bcast_count(m->mask_broadcast, p);
        d.mask = tu_floats(d.n_mask);
        tu_fill_mask(d.mask, d.n_mask, mask_p);
    }
    return d;
}

static void sm_free(sm_data *d) { free(d->scores), free(d->bias), free(d->vmask), free(d->mask); }

static vkattn_tensor *opt_tensor(vkattn_context *ctx, const float *data, size_t n)
{
    return data ? th_tensor(ctx, n, data) : NULL;
}

static void describe(char *buf, size_t size, const vkattn_softmax_params *p, bool in_place,
                     const char *tag)
{
    const vkattn_mask_params *m = &p->mask;
    snprintf(buf, size,
             "%s: softmax B=%u H=%u Tq=%u Tv=%u scale=%g causal=%d row=%d vmask=%d "
             "mask=%d(%d%d%d) bias=%d(%d%d%d)%s",
             tag, p->batch, heads_of(p), p->tq, p->tv, (double)p->scale, (int)m->causal,
             (int)m->masked_row, m->has_value_mask, m->has_mask, m->mask_broadcast.batch,
             m->mask_broadcast.heads, m->mask_broadcast.rows, m->has_bias,
             m->bias_broadcast.batch, m->bias_broadcast.heads, m->bias_broadcast.rows,
             in_place ? " in place" : "");
}

/* The header's bound(Tv): a weight's rounding plus its row sum's, 6 standard
 * deviations of a random walk of Tv roundings by u. */
static double row_bound(uint32_t tv)
{
    const double u = ldexp(1.0, -24);
    return BOUND + 6.0 * u * sqrt(tv / 3.0);
}

/* Runs the case on the GPU, returns the downloaded output (free it) after
 * checking it against the reference; *ref_out receives the reference if
 * non-NULL. */
static float *sm_check(vkattn_context *ctx, const vkattn_softmax_params *p, const sm_data *d,
                       bool in_place, const char *tag, float **ref_out)
{
    char what[320];
    describe(what, sizeof what, p, in_place, tag);
    float *ref = tu_floats(d->n);
    tu_poison(ref, d->n);
    TH_OK(ctx, vkattn_reference_softmax(p, NULL, d->scores, d->bias, d->vmask, d->mask, ref));

    /* Out of place: NaN output with a guard tail the op must not touch. */
    float *init = tu_floats(d->n + GUARD);
    if (in_place)
        memcpy(init, d->scores, d->n * sizeof(float));
    else
        tu_poison(init, d->n);
    for (size_t i = d->n; i < d->n + GUARD; i++)
        init[i] = GUARD_VALUE;
    vkattn_tensor *tout = th_tensor(ctx, d->n + GUARD, init);
    vkattn_tensor *tscores = in_place ? tout : th_tensor(ctx, d->n, d->scores);
    vkattn_softmax_io io = {
        .scores = tscores,
        .bias = opt_tensor(ctx, d->bias, d->n_bias),
        .value_mask = opt_tensor(ctx, d->vmask, d->n_vmask),
        .mask = opt_tensor(ctx, d->mask, d->n_mask),
        .out = tout,
    };
    TH_OK(ctx, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, p, &io));
    float *got = th_download(tout, d->n + GUARD);

    TU_ASSERT_CLOSE(got, ref, d->n, row_bound(p->tv), what);
    for (size_t i = 0; i < d->n; i++) {
        if (ref[i] == 0.0f && got[i] != 0.0f)
            fail_msg("%s: element %zu is %g; the reference has exactly 0", what, i,
                     (double)got[i]);
        if (isnan(ref[i]) != isnan(got[i]))
            fail_msg("%s: element %zu is %g; the reference has %g", what, i, (double)got[i],
                     (double)ref[i]);
    }
    for (size_t i = d->n; i < d->n + GUARD; i++)
        if (got[i] != GUARD_VALUE)
            fail_msg("%s: element %zu past the output was overwritten (%g)", what, i,
                     (double)got[i]);
    th_assert_validation_clean();

    if (!in_place)
        vkattn_tensor_destroy(tscores);
    vkattn_tensor_destroy(tout);
    vkattn_tensor_destroy(io.bias);
    vkattn_tensor_destroy(io.value_mask);
    vkattn_tensor_destroy(io.mask);
    free(init);
    if (ref_out)
        *ref_out = ref;
    else
        free(ref);
    return got;
}

/* Random inputs for p, checked, freed. */
static void sm_case(vkattn_context *ctx, const vkattn_softmax_params *p, bool in_place,
                    float mask_p, const char *tag)
{
    sm_data d = sm_make(p, -4, 4, mask_p);
    free(sm_check(ctx, p, &d, in_place, tag, NULL));
    sm_free(&d);
}

static bool coin(void) { return tu_rand_range(0, 1) == 1; }

static vkattn_broadcast rand_bcast(void)
{
    return (vkattn_broadcast){.batch = coin(), .heads = coin(), .rows = coin()};
}

/* Every option at random. */
static vkattn_mask_params rand_mask(void)
{
    return (vkattn_mask_params){
        .causal = (vkattn_causal)tu_rand_range(0, 2),
        .masked_row = (vkattn_masked_row)tu_rand_range(0, 1),
        .has_value_mask = coin(),
        .has_mask = coin(),
        .mask_broadcast = rand_bcast(),
        .has_bias = coin(),
        .bias_broadcast = rand_bcast(),
    };
}

static uint32_t rand_tv(void)
{
    static const uint32_t tvs[] = {1,   2,   3,   5,   7,   8,   13,  16,   31,   32,  33,
                                   61,  64,  97,  127, 128, 129, 251, 256,  257,  509, 512,
                                   777, 1000, 1031, 2053, 4096, 4099, 7001};
    return tvs[tu_rand_range(0, sizeof tvs / sizeof tvs[0] - 1)];
}

static void test_random_shapes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int c = 0; c < 48; c++) {
        vkattn_softmax_params p = {
            .batch = tu_rand_range(1, 3), .heads = tu_rand_range(0, 4),
            .tq = tu_rand_range(1, 37), .tv = rand_tv(),
            .scale = c % 4 == 0 ? 0.0f : tu_rand_float(-2, 2),
            .mask = rand_mask(),
        };
        while ((uint64_t)p.batch * heads_of(&p) * p.tq * p.tv > 60000 && p.tq > 1)
            p.tq = p.tq / 2;
        sm_case(ctx, &p, coin(), tu_rand_float(0.3f, 0.95f), "random");
    }
}

/* Each mask kind alone, then all together, with Tq < Tv, Tq > Tv and Tq == Tv. */
static void test_each_mask(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const uint32_t shapes[][2] = {{5, 11}, {11, 5}, {9, 9}, {3, 300}, {40, 33}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int kind = 0; kind < 7; kind++)
            for (int row = 0; row < 2; row++) {
                vkattn_softmax_params p = {.batch = 2, .heads = 3, .tq = shapes[s][0],
                                           .tv = shapes[s][1], .scale = 0.7f};
                vkattn_mask_params *m = &p.mask;
                m->masked_row = (vkattn_masked_row)row;
                m->causal = kind == 1 || kind == 6   ? VKATTN_CAUSAL_TOP_LEFT
                            : kind == 2              ? VKATTN_CAUSAL_BOTTOM_RIGHT
                                                     : VKATTN_CAUSAL_NONE;
                m->has_value_mask = kind == 3 || kind == 6;
                m->has_mask = kind == 4 || kind == 6;
                m->has_bias = kind == 5 || kind == 6;
                /* sparse masks so that some rows have nothing allowed */
                sm_case(ctx, &p, s % 2 == 1, kind == 6 ? 0.6f : 0.4f, "each mask");
            }
}

/* All 8 broadcast patterns of the mask and the bias, both causal anchors. */
static void test_broadcast(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int bits = 0; bits < 8; bits++)
        for (int c = 1; c <= 2; c++) {
            vkattn_broadcast bc = {.batch = bits & 1, .heads = (bits >> 1) & 1,
                                   .rows = (bits >> 2) & 1};
            vkattn_softmax_params p = {
                .batch = 3, .heads = 2, .tq = 7, .tv = 13,
                .mask = {.causal = (vkattn_causal)c, .has_mask = true, .mask_broadcast = bc,
                         .has_bias = true, .bias_broadcast = rand_bcast(),
                         .masked_row = (vkattn_masked_row)(bits & 1)},
            };
            sm_case(ctx, &p, false, 0.7f, "mask broadcast");
            p.mask.bias_broadcast = bc;
            p.mask.mask_broadcast = rand_bcast();
            sm_case(ctx, &p, true, 0.7f, "bias broadcast");
        }
}

/* Rows with nothing to attend to, by each route: a value mask all zero for one
 * batch, bottom-right causal with Tq > Tv (leading rows see nothing), an
 * explicit mask row all zero, and a -inf bias over a whole row. Both policies. */
static void test_masked_rows(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int row = 0; row < 2; row++)
        for (int in_place = 0; in_place < 2; in_place++) {
            vkattn_softmax_params p = {
                .batch = 2, .heads = 2, .tq = 9, .tv = 6,
                .mask = {.causal = VKATTN_CAUSAL_BOTTOM_RIGHT, .masked_row = (vkattn_masked_row)row,
                         .has_value_mask = true, .has_mask = true, .has_bias = true},
            };
            sm_data d = sm_make(&p, -3, 3, 0.8f);
            for (uint32_t j = 0; j < p.tv; j++)
                d.vmask[j] = 0.0f; /* batch 0: nothing */
            for (uint32_t j = 0; j < p.tv; j++)
                d.mask[(size_t)(1 * 2 + 1) * p.tq * p.tv + 7 * p.tv + j] = 0.0f; /* (1,1,7) */
            for (uint32_t j = 0; j < p.tv; j++)
                d.bias[(size_t)(1 * 2 + 0) * p.tq * p.tv + 8 * p.tv + j] = -INFINITY; /* (1,0,8) */
            d.bias[(size_t)(1 * 2 + 0) * p.tq * p.tv + 6 * p.tv + 1] = -INFINITY; /* one key */
            float *ref = NULL;
            float *got = sm_check(ctx, &p, &d, in_place, "masked rows", &ref);
            const float want = row ? 1.0f / 6 : 0.0f;
            for (size_t i = 0; i < (size_t)2 * p.tq * p.tv; i++) /* batch 0 */
                if (got[i] != want)
                    fail_msg("masked row element %zu is %g; want %g", i, (double)got[i],
                             (double)want);
            sm_free(&d);
            free(ref), free(got);
        }
}

/* In place and out of place on both paths (cached rows, multi-pass rows). */
static void test_in_place(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const uint32_t tvs[] = {1, 3, 200, 7679, 7680, 12000};
    for (size_t t = 0; t < sizeof tvs / sizeof tvs[0]; t++)
        for (int in_place = 0; in_place < 2; in_place++) {
            vkattn_softmax_params p = {.batch = 1, .heads = 2, .tq = 3, .tv = tvs[t],
                                       .scale = 1.5f, .mask = rand_mask()};
            sm_case(ctx, &p, in_place, 0.9f, "in place");
        }
}

/* Rows far longer than shared memory: the multi-pass path, with masks. */
static void test_large_tv(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_softmax_params p = {.batch = 1, .heads = 1, .tq = 3, .tv = 70000, .scale = 0.3f};
    sm_case(ctx, &p, false, 1.0f, "large tv");
    p.mask = (vkattn_mask_params){.causal = VKATTN_CAUSAL_BOTTOM_RIGHT, .has_value_mask = true,
                                  .has_bias = true, .bias_broadcast = {.rows = true}};
    sm_case(ctx, &p, true, 0.5f, "large tv");
    p.mask = (vkattn_mask_params){.causal = VKATTN_CAUSAL_TOP_LEFT, .has_mask = true,
                                  .masked_row = VKATTN_MASKED_ROW_UNIFORM};
    sm_case(ctx, &p, false, 0.5f, "large tv"); /* rows see 1..3 keys, some none */
    p.tq = 2;
    p.tv = 70001;
    p.mask = (vkattn_mask_params){.has_mask = true, .mask_broadcast = {.batch = true}};
    sm_case(ctx, &p, true, 0.01f, "large tv sparse");
}

/* Logits of +-1e4: values chosen exactly representable in fp32 (multiples of
 * 1/64 near 1e4, power-of-two scales), so the fp32 logits are exact and only
 * the exponential rounds. Rows mix near-equal large logits (meaningful weights)
 * with opposite-sign ones (weights exactly 0). */
static void test_large_logits(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const float scales[] = {1.0f, 0.5f, 2.0f, -1.0f};
    for (size_t s = 0; s < 4; s++)
        for (int bias = 0; bias < 2; bias++) {
            vkattn_softmax_params p = {.batch = 2, .heads = 2, .tq = 5, .tv = 37,
                                       .scale = scales[s], .mask = {.has_bias = bias}};
            sm_data d = sm_make(&p, 0, 1, 1.0f);
            for (size_t i = 0; i < d.n; i++) {
                float v = 1e4f + (float)((int)tu_rand_range(0, 512) - 256) / 64.0f;
                d.scores[i] = tu_rand_range(0, 3) == 0 ? -v : v;
            }
            for (size_t i = 0; i < d.n_bias; i++)
                d.bias[i] = (float)((int)tu_rand_range(0, 512) - 256) / 64.0f;
            free(sm_check(ctx, &p, &d, s == 1, "logits +-1e4", NULL));
            sm_free(&d);
        }
}

/* Logits near the float limit, where score * scale (+ bias) overflows fp32:
 * the reference's double arithmetic keeps them finite and ordered, so the
 * largest wins outright, ties split evenly, and a row of equal -3e38 * 2 is
 * uniform. Scales above 1, below 1, negative, huge; biases of +-3e38. With a
 * bias, scores and biases are 0 or huge: fp32 cannot hold 3e38 + 1 apart from
 * 3e38, which the double reference would split by e : 1. */
static void test_huge_logits(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const float scales[] = {1.0f, 2.0f, -3.0f, 1e-3f, 0.125f, 1e30f};
    static const float values[] = {3e38f, -3e38f, 3.4e38f, -3.4e38f, 1.0f, -2.5f, 0.0f, 1e38f};
    static const float huge[] = {3e38f, -3e38f, 3.4e38f, -3.4e38f, 0.0f};
    for (size_t s = 0; s < sizeof scales / sizeof scales[0]; s++)
        for (int bias = 0; bias < (s < 5 ? 2 : 1); bias++) {
            vkattn_softmax_params p = {.batch = 1, .heads = 3, .tq = 8, .tv = 9,
                                       .scale = scales[s],
                                       .mask = {.has_bias = bias, .has_value_mask = true}};
            sm_data d = sm_make(&p, 0, 1, 0.8f);
            for (size_t i = 0; i < d.n; i++)
                d.scores[i] = bias ? huge[tu_rand_range(0, 4)] : values[tu_rand_range(0, 7)];
            for (size_t i = 0; i < d.n_bias; i++)
                d.bias[i] = huge[tu_rand_range(0, 4)];
            /* row 0: all equal huge negatives -> uniform; row 1: a tie at the top */
            for (uint32_t j = 0; j < p.tv; j++)
                d.scores[j] = -3e38f, d.scores[p.tv + j] = j % 2 ? 3e38f : -1.0f;
            if (bias)
                for (uint32_t j = 0; j < 2 * p.tv; j++)
                    d.bias[j] = -3e38f;
            free(sm_check(ctx, &p, &d, bias == 1, "logits +-3e38", NULL));
            sm_free(&d);
        }
}

/* Exactly one allowed key per row: weight exactly 1 there, 0 elsewhere. */
static void test_single_key(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const uint32_t tvs[] = {1, 5, 300, 9000};
    for (size_t t = 0; t < 4; t++) {
        vkattn_softmax_params p = {.batch = 2, .heads = 2, .tq = 3, .tv = tvs[t],
                                   .mask = {.has_mask = true}};
        sm_data d = sm_make(&p, -30, 30, 0.0f);
        const size_t rows = d.n / p.tv;
        uint32_t *key = tu_alloc(rows * sizeof *key);
        for (size_t r = 0; r < rows; r++)
            d.mask[r * p.tv + (key[r] = tu_rand_range(0, p.tv - 1))] = 1.0f;
        float *got = sm_check(ctx, &p, &d, t % 2 == 1, "single key", NULL);
        for (size_t r = 0; r < rows; r++)
            if (got[r * p.tv + key[r]] != 1.0f)
                fail_msg("single key: row %zu weight %g; want exactly 1", r,
                         (double)got[r * p.tv + key[r]]);
        sm_free(&d);
        free(key), free(got);
    }
}

/* NaN or +inf among a row's allowed logits makes that row's allowed weights
 * NaN and nothing else; a NaN at a masked key is ignored; a NaN mask value
 * counts as "may attend", -0 as masked. */
static void test_nan_confined(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const uint32_t tvs[] = {6, 300, 20000};
    for (size_t t = 0; t < 3; t++) {
        vkattn_softmax_params p = {.batch = 2, .heads = 1, .tq = 4, .tv = tvs[t],
                                   .mask = {.has_mask = true, .has_bias = true}};
        sm_data d = sm_make(&p, -3, 3, 0.7f);
        const uint32_t tv = p.tv;
        d.mask[0 * tv + 1] = 1.0f, d.scores[0 * tv + 1] = NAN;           /* row 0: NaN score */
        d.mask[2 * tv + 0] = 1.0f, d.scores[2 * tv + 0] = INFINITY;      /* row 2: +inf */
        d.mask[3 * tv + 2] = 0.0f, d.scores[3 * tv + 2] = NAN;           /* row 3: masked NaN */
        d.mask[5 * tv + tv - 1] = 1.0f, d.bias[5 * tv + tv - 1] = NAN;   /* row 5: NaN bias */
        d.mask[6 * tv + 1] = NAN, d.mask[6 * tv + 2] = -0.0f;            /* row 6: odd masks */
        d.mask[7 * tv + 0] = -1.0f, d.mask[7 * tv + 1] = 0.5f;
        float *ref = NULL;
        float *got = sm_check(ctx, &p, &d, t == 1, "NaN confined", &ref);
        static const bool nan_rows[8] = {true, false, true, false, false, true, false, false};
        for (size_t r = 0; r < 8; r++)
            for (uint32_t j = 0; j < tv; j++) {
                bool allowed = !(d.mask[r * tv + j] == 0.0f);
                bool want_nan = nan_rows[r] && allowed;
                if ((bool)isnan(got[r * tv + j]) != want_nan)
                    fail_msg("NaN confined: row %zu key %u is %g", r, j, (double)got[r * tv + j]);
            }
        sm_free(&d);
        free(ref), free(got);
    }
}

/* More rows than one workgroup axis allows (65535): rows spread over y. */
static void test_many_rows(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_softmax_params p = {.batch = 3, .heads = 5, .tq = 1118490, .tv = 1};
    sm_case(ctx, &p, false, 1.0f, "many rows"); /* 16.8M rows of one key */
    p = (vkattn_softmax_params){.batch = 2, .heads = 1, .tq = 70001, .tv = 33,
                                .mask = {.causal = VKATTN_CAUSAL_TOP_LEFT}};
    sm_case(ctx, &p, true, 1.0f, "many rows");
}

/* Two softmaxes in one command buffer, the second in place on the first's
 * output: barriers from tracked access must order them (sync validation on). */
static void test_chained(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_softmax_params p = {.batch = 2, .heads = 3, .tq = 17, .tv = 29, .scale = 2.0f,
                               .mask = {.causal = VKATTN_CAUSAL_TOP_LEFT}};
    const size_t n = (size_t)2 * 3 * 17 * 29;
    float *x = tu_floats(n), *r1 = tu_floats(n), *r2 = tu_floats(n);
    tu_fill_uniform(x, n, -3, 3);
    TH_OK(ctx, vkattn_reference_softmax(&p, NULL, x, NULL, NULL, NULL, r1));
    TH_OK(ctx, vkattn_reference_softmax(&p, NULL, r1, NULL, NULL, NULL, r2));
    vkattn_tensor *tx = th_tensor(ctx, n, x), *ty = th_tensor(ctx, n, NULL);
    VkCommandBuffer cmd;
    TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
    vkattn_softmax_io first = {.scores = tx, .out = ty}, second = {.scores = ty, .out = ty};
    TH_OK(ctx, vkattn_softmax_record(ctx, cmd, &p, &first));
    TH_OK(ctx, vkattn_softmax_record(ctx, cmd, &p, &second));
    TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd));
    float *got = th_download(ty, n);
    TU_ASSERT_CLOSE(got, r2, n, row_bound(p.tv), "chained softmax");
    th_assert_validation_clean();
    vkattn_tensor_destroy(tx), vkattn_tensor_destroy(ty);
    free(x), free(r1), free(r2), free(got);
}

#define EXPECT(code, call, text)                                                                \
    do {                                                                                        \
        assert_int_equal((call), (code));                                                       \
        if ((text) && !strstr(vkattn_context_last_error(ctx), (text)))                           \
            fail_msg("message \"%s\" lacks \"%s\"", vkattn_context_last_error(ctx), (text));     \
    } while (0)

static void test_bad_arguments(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const char *none = NULL;
    vkattn_tensor *s = th_tensor(ctx, 24, NULL), *o = th_tensor(ctx, 24, NULL);
    vkattn_tensor *small = th_tensor(ctx, 5, NULL);
    vkattn_softmax_params p = {.batch = 2, .heads = 3, .tq = 1, .tv = 4};
    vkattn_softmax_io io = {.scores = s, .out = o};
    const vkattn_result INVALID = VKATTN_ERROR_INVALID_ARGUMENT;

    assert_int_equal(vkattn_softmax_record(NULL, VKATTN_RUN_NOW, &p, &io), INVALID);
    EXPECT(INVALID, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, NULL, &io), "params is NULL");
    EXPECT(INVALID, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &p, NULL), "io is NULL");
    EXPECT(INVALID, vkattn_softmax_record(ctx, VK_NULL_HANDLE, &p, &io), "cmd is NULL");
    p.tv = 0;
    EXPECT(INVALID, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &p, &io), "params->tv is 0");
    p.tv = 4, p.batch = 0;
    EXPECT(INVALID, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &p, &io), "params->batch is 0");
    p.batch = 2, p.tq = 0;
    EXPECT(INVALID, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &p, &io), "params->tq is 0");
    p.tq = 1, p.scale = NAN;
    EXPECT(INVALID, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &p, &io), "scale");
    p.scale = INFINITY;
    EXPECT(INVALID, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &p, &io), "scale");
    p.scale = 0, p.mask.causal = (vkattn_causal)7;
    EXPECT(INVALID, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &p, &io), "mask.causal");
    p.mask.causal = VKATTN_CAUSAL_NONE, p.mask.masked_row = (vkattn_masked_row)3;
    EXPECT(INVALID, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &p, &io), "mask.masked_row");
    p.mask.masked_row = VKATTN_MASKED_ROW_ZERO;

    /* flags vs tensors */
    p.mask.has_bias = true;
    EXPECT(INVALID, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &p, &io), "io->bias is NULL");
    p.mask.has_bias = false, io.bias = small;
    EXPECT(INVALID, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &p, &io), "io->bias is given");
    io.bias = NULL, io.value_mask = small;
    EXPECT(INVALID, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &p, &io), "io->value_mask is given");
    p.mask.has_value_mask = true, io.value_mask = NULL;
    EXPECT(INVALID, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &p, &io), "io->value_mask is NULL");
    io.value_mask = small; /* needs B * Tv = 8 */
    EXPECT(INVALID, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &p, &io), "io->value_mask has 5 elements");
    p.mask.has_value_mask = false, io.value_mask = NULL, p.mask.has_mask = true;
    EXPECT(INVALID, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &p, &io), "io->mask is NULL");
    io.mask = small; /* (2, 3, 1, 4) = 24 */
    EXPECT(INVALID, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &p, &io), "io->mask has 5 elements");
    p.mask.mask_broadcast = (vkattn_broadcast){.batch = true, .heads = true}; /* needs 4 */
    TH_OK(ctx, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &p, &io));
    io.mask = o; /* the output as a mask */
    EXPECT(INVALID, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &p, &io), "must not be io->mask");
    p.mask.has_mask = false, io.mask = NULL;

    /* sizes */
    io.scores = small;
    EXPECT(INVALID, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &p, &io), "io->scores has 5 elements");
    io.scores = s, io.out = small;
    EXPECT(INVALID, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &p, &io), "io->out has 5 elements");
    io.out = NULL;
    EXPECT(INVALID, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &p, &io), "io->out is NULL");
    io.out = o, io.scores = NULL;
    EXPECT(INVALID, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &p, &io), "io->scores is NULL");
    io.scores = s;
    vkattn_softmax_params big = {.batch = UINT32_MAX, .heads = UINT32_MAX, .tq = UINT32_MAX,
                                 .tv = UINT32_MAX};
    EXPECT(VKATTN_ERROR_SIZE_OVERFLOW, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &big, &io), "overflow");
    big = (vkattn_softmax_params){.batch = 70000, .tq = 1, .tv = 70000};
    EXPECT(VKATTN_ERROR_DEVICE_LIMIT, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &big, &io), "32-bit");

    /* still fine afterwards */
    TH_OK(ctx, vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &p, &io));
    (void)none;
    vkattn_tensor_destroy(s), vkattn_tensor_destroy(o), vkattn_tensor_destroy(small);
    th_assert_validation_clean();
}

/* Row lengths across the GPU tuning's shapes: one to several invocations per
 * row with several rows per workgroup (and per subgroup), a row's lanes over
 * several subgroups (the shuffle butterfly, then shared memory), a whole
 * workgroup per row (cached), and long rows. */
static void test_row_widths(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const uint32_t tvs[] = {1,  2,  3,   4,   5,   8,   9,   16,   17,   31,
                                   33, 64, 100, 129, 250, 600, 1100, 2100, 5000, 7700};
    for (size_t i = 0; i < sizeof tvs / sizeof tvs[0]; i++) {
        vkattn_softmax_params p = {.batch = 2, .heads = 1 + (uint32_t)i % 3,
                                   .tq = tvs[i] > 1000 ? 2 : 7, .tv = tvs[i], .scale = 0.9f,
                                   .mask = rand_mask()};
        sm_case(ctx, &p, coin(), 0.6f, "row width");
    }
}

/* Rows too long for shared memory, split into chunks under the GPU tuning
 * (4096 keys a chunk at 256 invocations): a last chunk of one key, an exact
 * multiple, causal rows whose later chunks hold no allowed key, sparse masks
 * that leave chunks empty, rows with nothing allowed (both policies), in
 * place, and NaN / +inf confined to their rows. */
static void test_split_rows(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_softmax_params p = {.batch = 1, .heads = 2, .tq = 2, .tv = 8193, .scale = 0.5f};
    sm_case(ctx, &p, false, 1.0f, "split");
    p.tv = 12288;
    p.mask = (vkattn_mask_params){.has_bias = true, .bias_broadcast = {.heads = true}};
    sm_case(ctx, &p, true, 1.0f, "split");
    p = (vkattn_softmax_params){.batch = 1, .heads = 1, .tq = 9000, .tv = 9001, .scale = 1.0f};
    p.tq = 3;
    p.mask = (vkattn_mask_params){.causal = VKATTN_CAUSAL_TOP_LEFT};
    sm_case(ctx, &p, false, 1.0f, "split causal"); /* rows see 1..3 keys of chunk 0 */
    p.mask = (vkattn_mask_params){.has_value_mask = true, .has_mask = true,
                                  .masked_row = VKATTN_MASKED_ROW_UNIFORM};
    sm_case(ctx, &p, true, 0.0004f, "split sparse"); /* empty chunks and rows */
    p.mask.masked_row = VKATTN_MASKED_ROW_ZERO;
    sm_case(ctx, &p, false, 0.0004f, "split sparse");

    p = (vkattn_softmax_params){.batch = 2, .heads = 1, .tq = 2, .tv = 9000, .scale = 1.0f};
    sm_data d = sm_make(&p, -4, 4, 1.0f);
    d.scores[1 * 9000 + 5000] = NAN;      /* row 1, second chunk */
    d.scores[2 * 9000 + 8999] = INFINITY; /* row 2, last chunk */
    free(sm_check(ctx, &p, &d, false, "split nan", NULL));
    sm_free(&d);
}

/* Which kernel served a call, from the context's debug log ("pipeline NAME
 * created"): under the GPU tuning softmax_sg where the device has subgroup
 * operations and 5 bindings, softmax_split for rows past shared memory with 6;
 * softmax under the CPU tuning. */
static void test_kernel_choice(void **state)
{
    (void)TH_CTX(state);
    for (int tuning = VKATTN_TUNING_GPU; tuning <= VKATTN_TUNING_CPU; tuning++) {
        th_pipelines seen;
        vkattn_context *ctx = th_tuning_context(tuning, &seen);
        vkattn_context_info info;
        TH_OK(ctx, vkattn_context_get_info(ctx, &info));
        vkattn_softmax_params p = {.batch = 1, .tq = 3, .tv = 33};
        sm_case(ctx, &p, false, 1.0f, "choice");
        const bool gpu = tuning == VKATTN_TUNING_GPU;
        const bool want_sg = gpu && info.subgroup_operations && !th_advanced().no_subgroups &&
                             info.max_storage_buffers_per_stage >= 5;
        const bool used_sg = th_pipeline_seen(&seen, "softmax_sg", false);
        if (used_sg != want_sg)
            fail_msg("%s tuning, short rows: softmax_sg %s", gpu ? "GPU" : "CPU",
                     used_sg ? "used" : "unused");
        p.tv = 9000;
        sm_case(ctx, &p, false, 1.0f, "choice");
        const bool want_split = gpu && info.max_storage_buffers_per_stage >= 6;
        const bool used_split = th_pipeline_seen(&seen, "softmax_split", false);
        if (used_split != want_split)
            fail_msg("%s tuning, long rows: softmax_split %s", gpu ? "GPU" : "CPU",
                     used_split ? "used" : "unused");
        vkattn_context_destroy(ctx);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {TU_TESTS(
        test_random_shapes, test_each_mask, test_broadcast, test_masked_rows, test_in_place,
        test_large_tv, test_large_logits, test_huge_logits, test_single_key, test_nan_confined,
        test_many_rows, test_chained, test_bad_arguments)};
    /* Then the same under the mobile-min limits: 4 storage buffers per stage
     * selects shaders/softmax_packed.comp, 16 KiB / 128 invocations smaller
     * workgroups. */
    int failed = TH_RUN_WITH_MOBILE("softmax", tests);
    const struct CMUnitTest gpu_tests[] = {TU_TESTS(
        test_row_widths, test_split_rows, test_random_shapes, test_nan_confined, test_large_tv,
        test_kernel_choice)};
    return failed + cmocka_run_group_tests_name("softmax, GPU tuning", gpu_tests,
                                                th_setup_gpu_tuning, th_teardown_gpu_tuning);
}
