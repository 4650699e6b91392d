/* The fused (flash-attention) SDPA kernel, forced with VKATTN_SDPA_FUSED, vs
 * vkattn_reference_sdpa and vs the chained path.
 *
 * Shapes: decode (Tq = 1) with short and long Tv, Tv = 1, Tv not a multiple of
 * the key tile, Tq != Tv both ways, dk != dv, widths 1 to 256, grouped K/V
 * heads with H / Hkv = 1, 2, 4, 8, batch 1 to 3. Masks: both causal variants
 * with Tq < Tv and Tq > Tv, value mask, explicit mask and bias with every
 * broadcast, all of them at once, rows with no allowed key (also through a
 * -inf bias) under both masked-row policies. Dropout: the output within the
 * bound, and the dropped keys bit for bit (V = identity makes out[i][j] the
 * weight of key j, exactly 0 iff the reference's Philox mask drops it), also
 * on uniform masked rows. Two fused calls in one command buffer, the second
 * reading the first's output (barriers under synchronization validation), and
 * what the kernel refuses (dk or dv above 256; on lavapipe, key ranges past
 * its loop-iteration limit, VKATTN_ERROR_DEVICE_LIMIT). The LSE output vs a
 * double log-sum-exp (bound |got - want| <= 1e-5 (1 + |want|); exactly -inf
 * for rows with nothing allowed). Three groups: the environment's profile
 * (shaders/flash.comp); profile "mobile-min" (4 storage buffers: the packed
 * layout, 16 KiB shared memory, 128 invocations; fused only, as the chained
 * path's softmax binds 5, and it needs pooled descriptor sets, which that
 * profile implies); a watchdog budget of 2^16 multiply-adds (calls split into
 * many dispatches: equal to the reference and, bit for bit, to one dispatch).
 * Fresh random inputs (q, k, v, bias in [-1, 1]); outputs poisoned with NaN.
 *
 * Bound: max|got - ref| / max|ref| <= 2e-5 (observed <= 1.5e-6 for Tv <= 1000,
 * d <= 256). Logits carry ~dk ulp of absolute error, which the softmax turns
 * into a relative weight error of the same size; the running max and sum are
 * fp32 with one rescale per key tile, and out is a convex (with dropout,
 * 1/(1-rate)-scaled) combination of V rows. A wrong dropout mask or masked
 * row gives an error of order 1. */
#include "harness.h"
#include "random_case.h"

#include <vkattn/advanced.h>
#include <vkattn/reference.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOUND 2e-5

/* False under profiles whose limits the chained path does not serve yet (its
 * softmax binds 5 storage buffers): fused-only checks there. */
static bool compare_chained = true;

typedef struct flash_case {
    vkattn_sdpa_params p;
    uint32_t h_kv, dv;
    bool v_identity;      /* V[j][e] = (j == e): out row i = dropped weights row i */
    bool neg_inf_rows;    /* some bias rows are all -inf (bias not broadcast over rows) */
    bool with_lse;        /* also write and check the log-sum-exp */
    size_t nq, nk, nv, nout, nbias, nmask, nvm, nrows;
    float *q, *k, *v, *bias, *mask, *vm, *ref;
    double *lse_ref;      /* -inf for a row with no allowed key */
} flash_case;

static size_t bcast_count(const vkattn_sdpa_params *p, vkattn_broadcast bc)
{
    return (size_t)(bc.batch ? 1 : p->batch) * (bc.heads ? 1 : p->heads) * (bc.rows ? 1 : p->tq) *
           p->tv;
}

static vkattn_broadcast rand_broadcast(void)
{
    return (vkattn_broadcast){tu_rand_range(0, 1), tu_rand_range(0, 1), tu_rand_range(0, 2) == 0};
}

/* Element offset of row (b, h, i) of a broadcast (B|1, H|1, Tq|1, Tv) operand. */
static size_t bcast_row(const vkattn_sdpa_params *p, vkattn_broadcast bc, size_t b, size_t h,
                        size_t i)
{
    const size_t rows_s = bc.rows ? 0 : p->tv;
    const size_t heads_s = bc.heads ? 0 : (bc.rows ? 1 : p->tq) * (size_t)p->tv;
    const size_t batch_s = bc.batch ? 0 : (bc.heads ? 1 : p->heads) * (bc.rows ? 1 : p->tq) *
                                              (size_t)p->tv;
    return b * batch_s + h * heads_s + i * rows_s;
}

/* The log-sum-exp of each row's allowed logits, in double: the LSE output's truth. */
static void reference_lse(flash_case *c)
{
    const vkattn_sdpa_params *p = &c->p;
    const vkattn_mask_params *m = &p->mask;
    const double scale = p->scale != 0.0f ? p->scale : 1.0 / sqrt((double)p->dk);
    const size_t group = p->heads / c->h_kv;
    double *logit = malloc(sizeof(double) * p->tv);
    for (size_t r = 0; r < c->nrows; r++) {
        const size_t b = r / ((size_t)p->heads * p->tq), h = r / p->tq % p->heads, i = r % p->tq;
        const size_t kvh = b * c->h_kv + h / group;
        double mx = -INFINITY;
        for (size_t j = 0; j < p->tv; j++) {
            bool ok = m->causal == VKATTN_CAUSAL_TOP_LEFT      ? j <= i
                      : m->causal == VKATTN_CAUSAL_BOTTOM_RIGHT ? j + p->tq <= i + p->tv
                                                                 : true;
            /* the window |pos - j| < w, pos = i (+ Tv - Tq bottom-right) */
            const double pos = (double)i + (m->causal == VKATTN_CAUSAL_BOTTOM_RIGHT
                                                ? (double)p->tv - (double)p->tq
                                                : 0.0);
            ok = ok && (!p->sliding_window || fabs(pos - (double)j) < p->sliding_window);
            ok = ok && (!m->has_value_mask || c->vm[b * p->tv + j] != 0.0f);
            ok = ok && (!m->has_mask || c->mask[bcast_row(p, m->mask_broadcast, b, h, i) + j] != 0.0f);
            double dot = 0;
            for (size_t e = 0; e < p->dk; e++)
                dot += (double)c->q[r * p->dk + e] * c->k[(kvh * p->tv + j) * p->dk + e];
            logit[j] = !ok ? -INFINITY : dot * scale +
                       (m->has_bias ? c->bias[bcast_row(p, m->bias_broadcast, b, h, i) + j] : 0.0);
            mx = logit[j] > mx ? logit[j] : mx;
        }
        double sum = 0;
        for (size_t j = 0; mx > -INFINITY && j < p->tv; j++)
            sum += exp(logit[j] - mx);
        c->lse_ref[r] = mx > -INFINITY ? mx + log(sum) : -INFINITY;
    }
    free(logit);
}

/* Host inputs and the reference output. */
static void case_prepare(vkattn_context *ctx, flash_case *c)
{
    vkattn_sdpa_params *p = &c->p;
    c->h_kv = p->kv_heads ? p->kv_heads : p->heads;
    c->dv = p->dv ? p->dv : p->dk;
    c->nq = (size_t)p->batch * p->heads * p->tq * p->dk;
    c->nk = (size_t)p->batch * c->h_kv * p->tv * p->dk;
    c->nv = (size_t)p->batch * c->h_kv * p->tv * c->dv;
    c->nout = (size_t)p->batch * p->heads * p->tq * c->dv;
    c->nbias = p->mask.has_bias ? bcast_count(p, p->mask.bias_broadcast) : 0;
    c->nmask = p->mask.has_mask ? bcast_count(p, p->mask.mask_broadcast) : 0;
    c->nvm = p->mask.has_value_mask ? (size_t)p->batch * p->tv : 0;
    c->nrows = (size_t)p->batch * p->heads * p->tq;
    c->q = tu_floats(c->nq), c->k = tu_floats(c->nk), c->v = tu_floats(c->nv);
    c->bias = tu_floats(c->nbias + 1), c->mask = tu_floats(c->nmask + 1);
    c->vm = tu_floats(c->nvm + 1), c->ref = tu_floats(c->nout);
    tu_fill_uniform(c->q, c->nq, -1, 1);
    tu_fill_uniform(c->k, c->nk, -1, 1);
    tu_fill_uniform(c->v, c->nv, -1, 1);
    if (c->v_identity)
        for (size_t idx = 0; idx < c->nv; idx++)
            c->v[idx] = (idx / c->dv) % p->tv == idx % c->dv ? 1.0f : 0.0f;
    tu_fill_uniform(c->bias, c->nbias, -1, 1);
    if (c->neg_inf_rows) /* every third bias row: all -inf, a masked row by another name */
        for (size_t idx = 0; idx < c->nbias; idx++)
            if ((idx / p->tv) % 3 == 1)
                c->bias[idx] = -INFINITY;
    tu_fill_mask(c->mask, c->nmask, 0.7f);
    tu_fill_mask(c->vm, c->nvm, 0.75f);
    tu_poison(c->ref, c->nout);
    TH_OK(ctx, vkattn_reference_sdpa(p, NULL, c->q, c->k, c->v, c->nbias ? c->bias : NULL,
                                     c->nvm ? c->vm : NULL, c->nmask ? c->mask : NULL, c->ref,
                                     NULL));
    c->lse_ref = NULL;
    if (c->with_lse) {
        c->lse_ref = malloc(sizeof(double) * c->nrows);
        reference_lse(c);
    }
}

static void case_describe(const flash_case *c, const char *path, char *buf, size_t size)
{
    const vkattn_sdpa_params *p = &c->p;
    const vkattn_mask_params *m = &p->mask;
    snprintf(buf, size,
             "%s B=%u H=%u Hkv=%u Tq=%u Tv=%u dk=%u dv=%u scale=%g causal=%d row=%d vm=%d "
             "mask=%d[%d%d%d] bias=%d[%d%d%d]%s drop=%g/%d window=%u",
             path, p->batch, p->heads, c->h_kv, p->tq, p->tv, p->dk, c->dv, (double)p->scale,
             m->causal, m->masked_row, m->has_value_mask, m->has_mask, m->mask_broadcast.batch,
             m->mask_broadcast.heads, m->mask_broadcast.rows, m->has_bias,
             m->bias_broadcast.batch, m->bias_broadcast.heads, m->bias_broadcast.rows,
             c->neg_inf_rows ? "(-inf rows)" : "", (double)p->dropout.rate, p->dropout.training,
             p->sliding_window);
}

/* Runs c on the GPU along `path`; returns the downloaded output (free it),
 * and with c->with_lse the LSE in *lse (free it). */
static float *case_run_lse(vkattn_context *ctx, const flash_case *c, vkattn_sdpa_path path,
                           float **lse)
{
    vkattn_sdpa_params p = c->p;
    p.path = path;
    vkattn_sdpa_io io = {
        .q = th_tensor(ctx, c->nq, c->q), .k = th_tensor(ctx, c->nk, c->k),
        .v = th_tensor(ctx, c->nv, c->v),
        .bias = c->nbias ? th_tensor(ctx, c->nbias, c->bias) : NULL,
        .value_mask = c->nvm ? th_tensor(ctx, c->nvm, c->vm) : NULL,
        .mask = c->nmask ? th_tensor(ctx, c->nmask, c->mask) : NULL,
        .out = th_tensor(ctx, c->nout, NULL),
        .lse = c->with_lse && path == VKATTN_SDPA_FUSED ? th_tensor(ctx, c->nrows, NULL) : NULL,
    };
    TH_OK(ctx, vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &p, &io));
    float *got = th_download(io.out, c->nout);
    if (lse)
        *lse = io.lse ? th_download(io.lse, c->nrows) : NULL;
    vkattn_tensor *ts[] = {io.q, io.k, io.v, io.bias, io.value_mask, io.mask, io.out, io.lse};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        vkattn_tensor_destroy(ts[i]);
    return got;
}

static float *case_run(vkattn_context *ctx, const flash_case *c, vkattn_sdpa_path path)
{
    return case_run_lse(ctx, c, path, NULL);
}

/* LSE bound: |got - want| <= 1e-5 (1 + |want|) (fp32 logits carry ~dk ulp);
 * a row with no allowed key must be exactly -inf, never NaN. */
static void check_lse(const flash_case *c, const float *lse, const char *what)
{
    for (size_t r = 0; r < c->nrows; r++) {
        const double want = c->lse_ref[r];
        const bool ok = isinf(want) ? isinf(lse[r]) && lse[r] < 0
                                    : fabs(lse[r] - want) <= 1e-5 * (1.0 + fabs(want));
        if (!ok)
            fail_msg("%s: lse row %zu: got %.9g, want %.9g", what, r, (double)lse[r], want);
    }
}

static void case_free(flash_case *c)
{
    free(c->lse_ref);
    float *fs[] = {c->q, c->k, c->v, c->bias, c->mask, c->vm, c->ref};
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
        free(fs[i]);
}

/* Fused vs the reference; with `chained`, also vs the chained path. */
static void run_case(vkattn_context *ctx, flash_case *c, bool chained)
{
    char what[400];
    case_prepare(ctx, c);
    float *lse = NULL;
    float *got = case_run_lse(ctx, c, VKATTN_SDPA_FUSED, &lse);
    case_describe(c, "fused", what, sizeof what);
    TU_ASSERT_CLOSE(got, c->ref, c->nout, BOUND, what);
    if (lse)
        check_lse(c, lse, what);
    free(lse);
    if (chained && compare_chained) {
        float *unfused = case_run(ctx, c, VKATTN_SDPA_UNFUSED);
        case_describe(c, "fused vs chained", what, sizeof what);
        TU_ASSERT_CLOSE(got, unfused, c->nout, BOUND, what);
        free(unfused);
    }
    th_assert_validation_clean();
    free(got);
    case_free(c);
}

static flash_case plain(uint32_t b, uint32_t h, uint32_t h_kv, uint32_t tq, uint32_t tv,
                        uint32_t dk, uint32_t dv)
{
    return (flash_case){.p = {.batch = b, .heads = h, .kv_heads = h_kv, .tq = tq, .tv = tv,
                              .dk = dk, .dv = dv}};
}

/* Decode, one key, non-multiples of the tile, dk != dv, widths 1 to 256 (each
 * width pair is a pipeline, slow to compile on lavapipe when wide: dk = dv =
 * 256 is in test_flash_long). */
static void test_shapes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const uint32_t shapes[][7] = {
        /* B, H, Hkv, Tq, Tv, dk, dv */
        {1, 1, 1, 1, 1, 1, 1},       {1, 2, 2, 1, 300, 64, 64}, {2, 8, 2, 1, 77, 16, 16},
        {1, 3, 3, 5, 1, 16, 16},     {2, 2, 1, 37, 33, 24, 8},  {1, 2, 2, 20, 45, 5, 256},
        {1, 1, 1, 3, 70, 256, 7},    {1, 1, 1, 33, 95, 64, 64}, {3, 1, 1, 100, 31, 16, 16},
        {1, 4, 4, 130, 129, 64, 64}, {1, 1, 1, 9, 40, 100, 3},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const uint32_t *s = shapes[i];
        flash_case c = plain(s[0], s[1], s[2], s[3], s[4], s[5], s[6]);
        c.p.scale = i % 3 == 0 ? tu_rand_float(-2, 2) : 0.0f;
        run_case(ctx, &c, i % 4 == 1);
    }
}

/* The widths that set the GPU-shaped kernel's lanes per row (4 up to 16
 * vec4s, 8 up to 32, 16 above) and its key tiles: 80, 96, 128, dk != dv
 * across those classes, small odd widths, batch 1, odd Tq and Tv, with causal
 * masks of both alignments, a bias and the LSE. */
static void test_lane_widths(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const uint32_t shapes[][7] = {
        /* B, H, Hkv, Tq, Tv, dk, dv */
        {1, 2, 1, 19, 41, 80, 96}, {1, 1, 1, 37, 23, 128, 128}, {2, 3, 3, 13, 29, 3, 5},
        {1, 2, 2, 33, 70, 96, 40}, {1, 4, 2, 9, 17, 7, 130},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const uint32_t *s = shapes[i];
        flash_case c = plain(s[0], s[1], s[2], s[3], s[4], s[5], s[6]);
        c.p.mask.causal = (vkattn_causal)(i % 3);
        c.p.mask.has_bias = i % 2 == 1;
        c.p.mask.bias_broadcast = rand_broadcast();
        c.with_lse = true;
        run_case(ctx, &c, false);
    }
}

/* Query heads sharing a K/V head become rows of one workgroup: ratios 1..8,
 * with row blocks that straddle two query heads. */
static void test_grouped_heads(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const uint32_t ratios[] = {1, 2, 4, 8};
    for (size_t i = 0; i < 4; i++) {
        flash_case c = plain(tu_rand_range(1, 2), 8, 8 / ratios[i], tu_rand_range(1, 45),
                             tu_rand_range(1, 70), 16, 16);
        run_case(ctx, &c, i == 2);
        c = plain(1, 8, 8 / ratios[i], 23, 50, 16, 16);
        c.p.mask.causal = VKATTN_CAUSAL_BOTTOM_RIGHT; /* limits differ across the group's rows */
        c.p.mask.has_mask = true;
        c.p.mask.mask_broadcast = rand_broadcast();
        run_case(ctx, &c, false);
    }
}

/* Each mask kind alone, then all at once, under both masked-row policies; the
 * shapes leave some rows with no allowed key. */
static void test_masks(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int policy = 0; policy < 2; policy++) {
        for (int kind = 0; kind < 7; kind++) {
            flash_case c = plain(2, 4, 2, tu_rand_range(1, 70), tu_rand_range(1, 70), 16, 16);
            vkattn_mask_params *m = &c.p.mask;
            m->masked_row = (vkattn_masked_row)policy;
            if (kind == 0 || kind == 1) { /* causal, Tq < Tv and Tq > Tv */
                m->causal = (vkattn_causal)(kind + 1);
                c.p.tq = 20 + 15 * (uint32_t)kind, c.p.tv = 27;
            }
            m->has_value_mask = kind == 2 || kind == 6;
            m->has_mask = kind == 3 || kind == 6;
            m->has_bias = kind == 4 || kind == 5 || kind == 6;
            m->mask_broadcast = rand_broadcast();
            m->bias_broadcast = rand_broadcast();
            if (kind == 5) /* -inf bias rows */
                m->bias_broadcast.rows = false, c.neg_inf_rows = true;
            if (kind == 6)
                m->causal = (vkattn_causal)tu_rand_range(1, 2);
            run_case(ctx, &c, kind == 6);
        }
    }
}

/* Value masks that mask everything or nothing, and one key. */
static void test_mask_edges(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int policy = 0; policy < 2; policy++) {
        flash_case c = plain(1, 2, 2, 9, 1, 16, 16);
        c.p.mask.masked_row = (vkattn_masked_row)policy;
        c.p.mask.has_value_mask = true;
        run_case(ctx, &c, false);
        c = plain(1, 2, 2, 40, 3, 16, 16); /* bottom-right with Tq >> Tv: most rows masked */
        c.p.mask.masked_row = (vkattn_masked_row)policy;
        c.p.mask.causal = VKATTN_CAUSAL_BOTTOM_RIGHT;
        run_case(ctx, &c, true);
    }
}

/* Dropout: the output within the bound, several rates, not training. */
static void test_dropout(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const float rates[] = {0.1f, 0.5f, 0.9f, 1.0f, 0.5f};
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        flash_case c = plain(2, 4, 2, tu_rand_range(1, 50), tu_rand_range(1, 90), 16, 16);
        c.p.dropout = (vkattn_dropout_params){
            .rate = rates[i], .training = i != 4,
            .seed = (uint64_t)tu_rand_u32() << 32 | tu_rand_u32(),
            .offset = (uint64_t)tu_rand_u32() << 32 | tu_rand_u32()};
        c.p.mask.causal = (vkattn_causal)(i % 3);
        c.p.mask.masked_row = (vkattn_masked_row)(i % 2);
        run_case(ctx, &c, i == 1);
    }
}

/* With V = identity (Tv <= dv), out[i][j] is key j's weight after dropout:
 * exactly 0 iff the reference's Philox mask drops (b, h, i, j). Also on rows
 * with no allowed key under the uniform policy (weights 1/Tv, then dropout). */
static void test_dropout_mask_bits(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int round = 0; round < 3; round++) {
        flash_case c = plain(2, 4, 2, 30, 27 + (uint32_t)round * 5, 16, 48);
        c.v_identity = true;
        c.p.dropout = (vkattn_dropout_params){
            .rate = 0.3f + 0.2f * (float)round, .training = true,
            .seed = (uint64_t)tu_rand_u32() << 32 | tu_rand_u32(), .offset = tu_rand_u32()};
        if (round == 2) { /* rows i < Tq - Tv see nothing: uniform 1/Tv, then dropout */
            c.p.mask.causal = VKATTN_CAUSAL_BOTTOM_RIGHT;
            c.p.mask.masked_row = VKATTN_MASKED_ROW_UNIFORM;
            c.p.tv = 17;
        }
        case_prepare(ctx, &c);
        float *got = case_run(ctx, &c, VKATTN_SDPA_FUSED);
        const vkattn_sdpa_params *p = &c.p;
        vkattn_dropout_op_params dp = {p->batch, p->heads, p->tq, p->tv, p->dropout};
        const size_t rows = (size_t)p->batch * p->heads * p->tq;
        uint8_t *keep = tu_alloc(rows * p->tv);
        TH_OK(ctx, vkattn_reference_dropout_mask(&dp, keep));
        for (size_t r = 0; r < rows; r++) {
            const uint32_t i = (uint32_t)(r % p->tq);
            for (uint32_t j = 0; j < p->tv; j++) {
                bool causal_ok = round < 2 || j + p->tq <= i + p->tv || i + p->tv < p->tq;
                bool nonzero = got[r * c.dv + j] != 0.0f;
                if (causal_ok && nonzero != (keep[r * p->tv + j] != 0))
                    fail_msg("dropout mask differs at row %zu key %u: out %g, reference keep %u",
                             r, j, (double)got[r * c.dv + j], keep[r * p->tv + j]);
            }
        }
        TU_ASSERT_CLOSE(got, c.ref, c.nout, BOUND, "dropout with V = identity");
        th_assert_validation_clean();
        free(keep), free(got);
        case_free(&c);
    }
}

/* Everything drawn at random, from a few widths (each width is a pipeline);
 * with `window`, a sliding window too (1, within the lengths, or wider than
 * both), and every case also against the chained path. */
static void random_cases(vkattn_context *ctx, int n_cases, bool window)
{
    static const uint32_t widths[][2] = {{16, 16}, {24, 8}, {5, 33}};
    for (int n = 0; n < n_cases; n++) {
        const uint32_t *w = widths[tu_rand_range(0, 2)];
        const uint32_t g = 1u << tu_rand_range(0, 2), h_kv = tu_rand_range(1, 2);
        flash_case c = plain(tu_rand_range(1, 2), g * h_kv, h_kv, tu_rand_range(1, 80),
                             tu_rand_range(1, 80), w[0], w[1]);
        vkattn_mask_params *m = &c.p.mask;
        c.p.scale = tu_rand_range(0, 1) ? 0.0f : tu_rand_float(-1.5f, 1.5f);
        m->causal = (vkattn_causal)tu_rand_range(0, 2);
        m->masked_row = (vkattn_masked_row)tu_rand_range(0, 1);
        m->has_value_mask = true, m->has_mask = true, m->has_bias = true;
        m->mask_broadcast = rand_broadcast(), m->bias_broadcast = rand_broadcast();
        c.p.dropout = (vkattn_dropout_params){
            .rate = tu_rand_float(0.05f, 0.6f), .training = tu_rand_range(0, 1),
            .seed = tu_rand_u32(), .offset = tu_rand_u32()};
        if (window) {
            c.p.sliding_window = rc_random_window(c.p.tq, c.p.tv);
            m->has_mask = tu_rand_range(0, 1), m->has_bias = tu_rand_range(0, 1);
        }
        c.with_lse = n % 2 == 0;
        run_case(ctx, &c, window || n < 3);
    }
}

static void test_random(void **state) { random_cases(TH_CTX(state), 7, false); }

/* The sliding window: random calls (both causal alignments, masks, dropout,
 * grouped heads, the LSE) against the reference and the chained path; and
 * long rows, where the key tiles outside the band are skipped. */
static void test_window(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    random_cases(ctx, 6, true);
    static const uint32_t shapes[][3] = {{150, 170, 7}, {170, 150, 33}, {1, 300, 20}, {90, 90, 64}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        flash_case c = plain(1, 2, 1, shapes[i][0], shapes[i][1], 16, 8);
        c.p.mask.causal = (vkattn_causal)(i % 3);
        c.p.sliding_window = shapes[i][2];
        c.with_lse = true;
        run_case(ctx, &c, false);
    }
}

/* Many key tiles (the online softmax rescales across them) and long rows. */
static void test_long_rows(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    flash_case c = plain(1, 2, 1, 70, 1000, 16, 16);
    c.p.mask.has_bias = true, c.p.mask.bias_broadcast = (vkattn_broadcast){true, true, false};
    run_case(ctx, &c, true);
    c = plain(1, 2, 2, 257, 300, 16, 16);
    c.p.mask.causal = VKATTN_CAUSAL_TOP_LEFT;
    run_case(ctx, &c, false);
}

/* Two fused calls recorded in one command buffer, the second reading the
 * first's output as its query (a read-after-write barrier vkattn records). */
static void test_one_command_buffer(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    flash_case c = plain(1, 2, 2, 21, 35, 16, 16);
    c.p.path = VKATTN_SDPA_FUSED;
    case_prepare(ctx, &c);
    float *ref2 = tu_floats(c.nout);
    TH_OK(ctx, vkattn_reference_sdpa(&c.p, NULL, c.ref, c.k, c.v, NULL, NULL, NULL, ref2, NULL));
    vkattn_tensor *tq = th_tensor(ctx, c.nq, c.q), *tk = th_tensor(ctx, c.nk, c.k);
    vkattn_tensor *tv = th_tensor(ctx, c.nv, c.v), *o1 = th_tensor(ctx, c.nout, NULL);
    vkattn_tensor *o2 = th_tensor(ctx, c.nout, NULL);
    vkattn_sdpa_io first = {.q = tq, .k = tk, .v = tv, .out = o1};
    vkattn_sdpa_io second = {.q = o1, .k = tk, .v = tv, .out = o2};
    VkCommandBuffer cmd;
    TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
    TH_OK(ctx, vkattn_sdpa_record(ctx, cmd, &c.p, &first));
    TH_OK(ctx, vkattn_sdpa_record(ctx, cmd, &c.p, &second));
    TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd));
    float *got1 = th_download(o1, c.nout), *got2 = th_download(o2, c.nout);
    TU_ASSERT_CLOSE(got1, c.ref, c.nout, BOUND, "first of two fused calls");
    TU_ASSERT_CLOSE(got2, ref2, c.nout, BOUND, "second fused call, reading the first's output");
    th_assert_validation_clean();
    vkattn_tensor *ts[] = {tq, tk, tv, o1, o2};
    for (size_t i = 0; i < 5; i++)
        vkattn_tensor_destroy(ts[i]);
    free(got1), free(got2), free(ref2);
    case_free(&c);
}

/* Widths above 256: VKATTN_SDPA_FUSED refuses with the reason, AUTO takes
 * the chained path. On lavapipe, key ranges beyond its loop limit too. */
static void test_unsupported(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const uint32_t widths[][2] = {{257, 16}, {16, 300}};
    static const char *reasons[] = {"dk is above 256", "dv is above 256"};
    for (int i = 0; i < 2; i++) {
        flash_case c = plain(1, 1, 1, 3, 5, widths[i][0], widths[i][1]);
        c.p.path = VKATTN_SDPA_FUSED;
        case_prepare(ctx, &c);
        vkattn_sdpa_io io = {
            .q = th_tensor(ctx, c.nq, c.q), .k = th_tensor(ctx, c.nk, c.k),
            .v = th_tensor(ctx, c.nv, c.v), .out = th_tensor(ctx, c.nout, NULL)};
        assert_int_equal(vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &c.p, &io), VKATTN_ERROR_UNSUPPORTED);
        if (!strstr(vkattn_context_last_error(ctx), reasons[i]))
            fail_msg("message does not say \"%s\": %s", reasons[i], vkattn_context_last_error(ctx));
        c.p.path = VKATTN_SDPA_AUTO;
        TH_OK(ctx, vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &c.p, &io));
        float *got = th_download(io.out, c.nout);
        TU_ASSERT_CLOSE(got, c.ref, c.nout, BOUND, "AUTO falls back to the chained path");
        vkattn_tensor_destroy(io.q), vkattn_tensor_destroy(io.k), vkattn_tensor_destroy(io.v);
        vkattn_tensor_destroy(io.out);
        free(got);
        case_free(&c);
    }
    /* lavapipe ends a shader invocation after 65535 loop iterations: the kernel
     * refuses key ranges that would need more (a device limit), rather than
     * return garbage */
    vkattn_context_info info;
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    if (strstr(info.device_name, "llvmpipe")) {
        /* past both kernels' limits at d = 4: about 100k keys for the
         * row-per-invocation kernel (CPU tuning), 22k for the tiled one */
        const uint32_t tv = 1u << 21;
        flash_case c = plain(1, 1, 1, 1, tv, 4, 4);
        c.p.path = VKATTN_SDPA_FUSED;
        vkattn_sdpa_io io = {
            .q = th_tensor(ctx, 4, NULL), .k = th_tensor(ctx, 4 * (size_t)tv, NULL),
            .v = th_tensor(ctx, 4 * (size_t)tv, NULL), .out = th_tensor(ctx, 4, NULL)};
        assert_int_equal(vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &c.p, &io), VKATTN_ERROR_DEVICE_LIMIT);
        if (!strstr(vkattn_context_last_error(ctx), "65535 loop iterations"))
            fail_msg("message does not name lavapipe's loop limit: %s",
                     vkattn_context_last_error(ctx));
        vkattn_tensor_destroy(io.q), vkattn_tensor_destroy(io.k), vkattn_tensor_destroy(io.v);
        vkattn_tensor_destroy(io.out);
    }
    th_assert_validation_clean();
}

/* The LSE output with every mask kind, rows with nothing allowed included
 * (bottom-right causal with Tq > Tv; -inf bias rows), also with no side
 * input (the packed layout then binds Q directly). */
static void test_lse(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int n = 0; n < 4; n++) {
        flash_case c = plain(tu_rand_range(1, 2), 4, n % 2 ? 2 : 4, 40, tu_rand_range(1, 37), 16, 16);
        vkattn_mask_params *m = &c.p.mask;
        c.with_lse = true;
        if (n > 0) {
            m->causal = VKATTN_CAUSAL_BOTTOM_RIGHT;
            m->masked_row = (vkattn_masked_row)(n % 2);
            m->has_value_mask = m->has_mask = m->has_bias = n >= 2;
            m->mask_broadcast = rand_broadcast(), m->bias_broadcast = rand_broadcast();
            if (n == 3)
                m->bias_broadcast.rows = false, c.neg_inf_rows = true;
        }
        run_case(ctx, &c, false);
    }
}

/* A watchdog budget of 2^16 multiply-adds per dispatch splits each call into
 * many dispatches along row blocks and (batch, K/V head) pairs: the output and
 * LSE equal the reference and, bit for bit, an unsplit run (dropout's Philox
 * stream depends only on element indices). */
static void test_split(void **state)
{
    vkattn_context *ctx = TH_CTX(state); /* budget 2^16 */
    void *whole_state = NULL;
    assert_int_equal(th_setup_with(&whole_state, getenv("VKATTN_TEST_PROFILE"), UINT64_MAX), 0);
    vkattn_context *whole = TH_CTX(&whole_state);
    vkattn_context_info info;
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    assert_int_equal(info.max_dispatch_work, 1u << 16);
    for (int n = 0; n < 3; n++) {
        flash_case c = plain(2, 4, n == 2 ? 1 : 2, n == 1 ? 600 : tu_rand_range(50, 300),
                             tu_rand_range(20, 90), 16, 16);
        vkattn_mask_params *m = &c.p.mask;
        c.with_lse = true;
        m->causal = (vkattn_causal)(n % 3);
        m->has_value_mask = m->has_mask = m->has_bias = n != 1;
        m->mask_broadcast = rand_broadcast(), m->bias_broadcast = rand_broadcast();
        c.p.dropout = (vkattn_dropout_params){.rate = 0.3f, .training = n != 0,
                                              .seed = tu_rand_u32(), .offset = tu_rand_u32()};
        run_case(ctx, &c, false);
        case_prepare(ctx, &c);
        float *lse_split, *lse_whole;
        float *split = case_run_lse(ctx, &c, VKATTN_SDPA_FUSED, &lse_split);
        float *one = case_run_lse(whole, &c, VKATTN_SDPA_FUSED, &lse_whole);
        if (memcmp(split, one, c.nout * sizeof(float)) || memcmp(lse_split, lse_whole, c.nrows * sizeof(float)))
            fail_msg("a split call differs from one dispatch (case %d)", n);
        th_assert_validation_clean();
        free(split), free(one), free(lse_split), free(lse_whole);
        case_free(&c);
    }
    th_teardown(&whole_state);
}

/* Which kernel served a call, from the context's debug log ("pipeline NAME
 * created"): under the GPU tuning on a device with 8 storage buffers the
 * tiled kernel (flash_tiled, or flash_tiled_sg with subgroup shuffles), else
 * the row-per-invocation kernel (flash, flash_packed). Also the pipeline statistics:
 * refused without capture_pipeline_stats; with it, given where the device
 * offers VK_KHR_pipeline_executable_properties (Mesa 22.3's lavapipe does
 * not: then refused naming the extension). */
static void on_stat(void *user, uint32_t index, const char *pipeline, const char *stat, double value)
{
    (void)index, (void)pipeline, (void)stat, (void)value;
    ++*(unsigned *)user;
}

static void test_kernel_choice(void **state)
{
    unsigned stats = 0;
    assert_int_equal(vkattn_context_pipeline_stats(TH_CTX(state), on_stat, &stats),
                     VKATTN_ERROR_UNSUPPORTED);
    th_pipelines seen;
    vkattn_context_advanced adv = th_advanced();
    adv.capture_pipeline_stats = true;
    vkattn_context *ctx = th_logged_context(&adv, &seen);
    vkattn_context_info info;
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    flash_case c = plain(1, 2, 1, 21, 35, 16, 16);
    run_case(ctx, &c, false);
    const bool want_tiled = !info.cpu_tuning && info.max_storage_buffers_per_stage >= 8;
    const bool tiled = th_pipeline_seen(&seen, "flash_tiled", true);
    const bool one_row = th_pipeline_seen(&seen, "flash", false) ||
                         th_pipeline_seen(&seen, "flash_packed", false);
    if (tiled != want_tiled || one_row == want_tiled)
        fail_msg("tiled kernel %s, row-per-invocation kernel %s (%s tuning)",
                 tiled ? "used" : "unused", one_row ? "used" : "unused",
                 info.cpu_tuning ? "CPU" : "GPU");
    vkattn_result r = vkattn_context_pipeline_stats(ctx, on_stat, &stats);
    if (r == VKATTN_ERROR_UNSUPPORTED) {
        if (!strstr(vkattn_context_last_error(ctx), "VK_KHR_pipeline_executable_properties"))
            fail_msg("refusal does not name the extension: %s", vkattn_context_last_error(ctx));
        printf("# no pipeline statistics: %s\n", vkattn_context_last_error(ctx));
    } else {
        TH_OK(ctx, r);
        assert_true(stats > 0);
    }
    th_assert_validation_clean();
    vkattn_context_destroy(ctx);
}

static int setup_packed(void **state)
{
    compare_chained = false;
    return th_setup_with(state, "mobile-min", 0);
}

/* No subgroup operations: the tiled kernel's shared-memory lane sums. */
static int setup_no_subgroups(void **state)
{
    th_force_no_subgroups(true);
    return th_setup(state);
}
static int teardown_no_subgroups(void **state)
{
    th_force_no_subgroups(false);
    return th_teardown(state);
}
static int setup_split(void **state)
{
    return th_setup_with(state, getenv("VKATTN_TEST_PROFILE"), 1u << 16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {TU_TESTS(
        test_shapes, test_grouped_heads, test_masks, test_mask_edges, test_dropout,
        test_dropout_mask_bits, test_random, test_long_rows, test_window, test_one_command_buffer,
        test_unsupported, test_lse, test_lane_widths, test_kernel_choice)};
    /* Profile "mobile-min" allows 4 storage buffers per shader: the packed
     * layout (shaders/flash_packed.comp), 16 KiB shared memory, 128 invocations. */
    const struct CMUnitTest packed[] = {TU_TESTS(
        test_grouped_heads, test_mask_edges, test_dropout_mask_bits, test_random, test_lse,
        test_window)};
    const struct CMUnitTest no_subgroups[] = {TU_TESTS(
        test_grouped_heads, test_dropout_mask_bits, test_random, test_lane_widths,
        test_kernel_choice)};
    const struct CMUnitTest split[] = {cmocka_unit_test(test_split)};
    int failed = cmocka_run_group_tests_name("flash", tests, th_setup, th_teardown);
    failed += cmocka_run_group_tests_name("flash_packed", packed, setup_packed, th_teardown);
    failed += cmocka_run_group_tests_name("flash_no_subgroups", no_subgroups, setup_no_subgroups,
                                          teardown_no_subgroups);
    return failed + cmocka_run_group_tests_name("flash_split", split, setup_split, th_teardown);
}
