/* Matmul gradients (dA, dB, dBias) vs the CPU reference: random shapes from
 * 1x1x1 through sizes that are no tile multiple, batch 1, both transposes,
 * bias on and off, operands broadcast over the batch or the heads (summed
 * gradients), A with a padded row stride (padding left untouched), each
 * gradient omitted at random. Fresh random inputs every run; gradients
 * poisoned with NaN first (the padding of A too, which must stay NaN).
 *
 * Bound: fp32 sums of L products of values in [-1, 1], L = the contraction
 * length (N times A's broadcast count for dA, M times B's for dB, B*H*M for
 * dBias): max|got - ref| <= 2e-5 for L <= 256, 1e-4 above, relative to the
 * largest sum of term magnitudes (the reference on |A|, |B|, |dC|), not to
 * max|ref|: a dBias of 7 values of both signs can cancel to far below them.
 * f16 (test_f16): any of the six tensors f16, the inputs rounded to f16
 * before the reference; an f16 gradient adds its one rounding, 2^-11 of
 * |ref| <= 2^-11 of the term magnitudes. bf16 (test_bf16): the same with
 * bf16 among the types (f32, f16 and bf16 mixed); a bf16 gradient's rounding
 * (vkattn's own, to nearest even) is half a bf16 spacing, 2^-8 of |ref|. */
#include "harness.h"

#include <vkattn/matmul_backward.h>
#include <vkattn/reference_backward.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double bound_for(uint64_t len) { return len <= 256 ? 2e-5 : 1e-4; }

typedef struct bwd_case {
    vkattn_matmul_params p;
    size_t na, nb, nc;
    uint32_t a_count, b_count; /* how many (b, h) matrices share one stored matrix */
    bool want_a, want_b, want_bias;
    vkattn_dtype t[6]; /* of a, b, dC, dA, dB, dBias; zero = f32 */
} bwd_case;

enum { T_A, T_B, T_DC, T_GA, T_GB, T_GBIAS };

/* x as a tensor of type t holds it (uploads round to nearest even) */
static void round_to(vkattn_context *ctx, float *x, size_t n, vkattn_dtype t)
{
    if (t == VKATTN_DTYPE_F32)
        return;
    vkattn_tensor *d = th_typed_tensor(ctx, n, t, x);
    float *y = th_download(d, n);
    memcpy(x, y, n * sizeof *x);
    vkattn_tensor_destroy(d);
    free(y);
}

static bwd_case random_case(uint32_t batch, uint32_t heads, uint32_t m, uint32_t n, uint32_t k)
{
    bwd_case c = {0};
    vkattn_matmul_params *p = &c.p;
    p->batch = batch, p->heads = heads, p->m = m, p->n = n, p->k = k;
    p->transpose_a = tu_rand_range(0, 1), p->transpose_b = tu_rand_range(0, 1);
    p->has_bias = tu_rand_range(0, 1);
    p->alpha = tu_rand_range(0, 2) ? tu_rand_float(-2, 2) : 0.0f;
    const size_t ar = p->transpose_a ? k : m, ac = p->transpose_a ? m : k;
    const size_t br = p->transpose_b ? n : k, bc = p->transpose_b ? k : n;
    const uint32_t lda = (uint32_t)ac + (tu_rand_range(0, 2) == 0 ? tu_rand_range(1, 3) : 0);
    const bool a_bb = batch > 1 && tu_rand_range(0, 3) == 0;
    const bool a_bh = heads > 1 && tu_rand_range(0, 3) == 0;
    const bool b_bb = batch > 1 && tu_rand_range(0, 2) == 0;
    const bool b_bh = heads > 1 && tu_rand_range(0, 2) == 0;
    const uint64_t amat = ar * lda, bmat = br * bc;
    p->a = (vkattn_matrix_layout){.batch_stride = a_bb ? 0 : (a_bh ? 1 : heads) * amat,
                                  .head_stride = a_bh ? 0 : amat, .row_stride = lda};
    p->b = (vkattn_matrix_layout){.batch_stride = b_bb ? 0 : (b_bh ? 1 : heads) * bmat,
                                  .head_stride = b_bh ? 0 : bmat};
    c.na = (a_bb ? 1 : batch) * (a_bh ? 1 : heads) * amat;
    c.nb = (b_bb ? 1 : batch) * (b_bh ? 1 : heads) * bmat;
    c.nc = (size_t)batch * heads * m * n;
    c.a_count = (a_bb ? batch : 1) * (a_bh ? heads : 1);
    c.b_count = (b_bb ? batch : 1) * (b_bh ? heads : 1);
    do {
        c.want_a = tu_rand_range(0, 3) != 0;
        c.want_b = tu_rand_range(0, 3) != 0;
        c.want_bias = p->has_bias && tu_rand_range(0, 3) != 0;
    } while (!c.want_a && !c.want_b && !c.want_bias);
    return c;
}

typedef struct grads {
    float *a, *b, *bias;
} grads;

/* The GPU gradients asked for (NULL others), from NaN-poisoned tensors: an
 * element the GPU forgets (or one outside the view it writes) shows. */
static grads run_gpu(vkattn_context *ctx, const bwd_case *c, const float *a, const float *b,
                     const float *dc)
{
    const vkattn_matmul_params *p = &c->p;
    vkattn_tensor *ta = th_typed_tensor(ctx, c->na, c->t[T_A], a);
    vkattn_tensor *tb = th_typed_tensor(ctx, c->nb, c->t[T_B], b);
    vkattn_tensor *tdc = th_typed_tensor(ctx, c->nc, c->t[T_DC], dc);
    float *nan_a = tu_floats(c->na), *nan_b = tu_floats(c->nb), *nan_bias = tu_floats(p->n);
    tu_poison(nan_a, c->na), tu_poison(nan_b, c->nb), tu_poison(nan_bias, p->n);
    vkattn_tensor *ga = c->want_a ? th_typed_tensor(ctx, c->na, c->t[T_GA], nan_a) : NULL;
    vkattn_tensor *gb = c->want_b ? th_typed_tensor(ctx, c->nb, c->t[T_GB], nan_b) : NULL;
    vkattn_tensor *gbias = c->want_bias ? th_typed_tensor(ctx, p->n, c->t[T_GBIAS], nan_bias)
                                        : NULL;
    vkattn_matmul_backward_io io = {.a = ta, .b = tb, .grad_c = tdc,
                                    .grad_a = ga, .grad_b = gb, .grad_bias = gbias};
    TH_OK(ctx, vkattn_matmul_backward_record(ctx, VKATTN_RUN_NOW, p, &io));
    grads g = {ga ? th_download(ga, c->na) : NULL, gb ? th_download(gb, c->nb) : NULL,
               gbias ? th_download(gbias, p->n) : NULL};
    th_assert_validation_clean();
    vkattn_tensor_destroy(ta), vkattn_tensor_destroy(tb), vkattn_tensor_destroy(tdc);
    vkattn_tensor_destroy(ga), vkattn_tensor_destroy(gb), vkattn_tensor_destroy(gbias);
    free(nan_a), free(nan_b), free(nan_bias);
    return g;
}

static void free_grads(grads g) { free(g.a), free(g.b), free(g.bias); }

/* The reference gradients asked for; with magnitudes, of |A|, |B|, |dC| and
 * |alpha|: per element, the sum of the magnitudes of the terms it adds. */
static grads reference(vkattn_context *ctx, const bwd_case *c, const float *a, const float *b,
                       const float *dc, bool magnitudes)
{
    vkattn_matmul_params p = c->p;
    float *xa = tu_floats(c->na), *xb = tu_floats(c->nb), *xdc = tu_floats(c->nc);
    memcpy(xa, a, c->na * sizeof *xa), memcpy(xb, b, c->nb * sizeof *xb);
    memcpy(xdc, dc, c->nc * sizeof *xdc);
    if (magnitudes) {
        p.alpha = fabsf(p.alpha);
        for (size_t i = 0; i < c->na; i++)
            xa[i] = fabsf(xa[i]);
        for (size_t i = 0; i < c->nb; i++)
            xb[i] = fabsf(xb[i]);
        for (size_t i = 0; i < c->nc; i++)
            xdc[i] = fabsf(xdc[i]);
    }
    grads r = {tu_floats(c->na), tu_floats(c->nb), tu_floats(p.n)};
    tu_poison(r.a, c->na), tu_poison(r.b, c->nb), tu_poison(r.bias, p.n);
    TH_OK(ctx, vkattn_reference_matmul_backward(&p, xa, xb, xdc, c->want_a ? r.a : NULL,
                                                c->want_b ? r.b : NULL,
                                                c->want_bias ? r.bias : NULL));
    free(xa), free(xb), free(xdc);
    return r;
}

/* A 16-bit gradient is rounded once from its f32 result: half a spacing,
 * 2^-11 (f16) or 2^-8 (bf16) of |ref| <= that of the sum of term magnitudes. */
static double rounding(const bwd_case *c, int i)
{
    return c->t[i] == VKATTN_DTYPE_F16 ? 0x1p-11 : c->t[i] == VKATTN_DTYPE_BF16 ? 0x1p-8 : 0.0;
}

static bool same(const float *x, const float *y, size_t n)
{
    return !x || memcmp(x, y, n * sizeof(float)) == 0; /* NaN padding: same bits */
}

/* One case on ctx vs the reference; with bctx (a context with a dispatch
 * budget, or one that stages f16) also there, bit-identical to ctx's. */
static void check_case_on(vkattn_context *ctx, vkattn_context *bctx, const bwd_case *c)
{
    const vkattn_matmul_params *p = &c->p;
    float *a = tu_floats(c->na), *b = tu_floats(c->nb), *dc = tu_floats(c->nc);
    tu_fill_uniform(a, c->na, -1, 1);
    tu_fill_uniform(b, c->nb, -1, 1);
    tu_fill_uniform(dc, c->nc, -1, 1);
    /* the reference runs on what the 16-bit tensors hold */
    round_to(ctx, a, c->na, c->t[T_A]);
    round_to(ctx, b, c->nb, c->t[T_B]);
    round_to(ctx, dc, c->nc, c->t[T_DC]);
    grads r = reference(ctx, c, a, b, dc, false), terms = reference(ctx, c, a, b, dc, true);
    grads g = run_gpu(ctx, c, a, b, dc);
    char what[220];
    int len = snprintf(what, sizeof what,
                       "matmul_backward B=%u H=%u m=%u n=%u k=%u ta=%d tb=%d bias=%d alpha=%g "
                       "lda=%u shared a/b=%u/%u",
                       p->batch, p->heads, p->m, p->n, p->k, p->transpose_a, p->transpose_b,
                       p->has_bias, (double)p->alpha, p->a.row_stride, c->a_count, c->b_count);
    if (g.a) {
        snprintf(what + len, sizeof what - len, " dA");
        TU_ASSERT_CLOSE_TERMS(g.a, r.a, terms.a, c->na,
                              bound_for((uint64_t)p->n * c->a_count) + rounding(c, T_GA), what);
    }
    if (g.b) {
        snprintf(what + len, sizeof what - len, " dB");
        TU_ASSERT_CLOSE_TERMS(g.b, r.b, terms.b, c->nb,
                              bound_for((uint64_t)p->m * c->b_count) + rounding(c, T_GB), what);
    }
    if (g.bias) {
        snprintf(what + len, sizeof what - len, " dBias");
        TU_ASSERT_CLOSE_TERMS(g.bias, r.bias, terms.bias, p->n,
                              bound_for((uint64_t)p->batch * (p->heads ? p->heads : 1) * p->m) +
                                  rounding(c, T_GBIAS),
                              what);
    }
    if (bctx) {
        grads s = run_gpu(bctx, c, a, b, dc);
        if (!same(g.a, s.a, c->na) || !same(g.b, s.b, c->nb) || !same(g.bias, s.bias, p->n))
            fail_msg("%s: the second context's call (split, or f16 staged) differs from the "
                     "first's",
                     what);
        free_grads(s);
    }
    free_grads(g), free_grads(r), free_grads(terms);
    free(a), free(b), free(dc);
}

static void check_case(vkattn_context *ctx, const bwd_case *c) { check_case_on(ctx, NULL, c); }

static void test_fixed_shapes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    static const uint32_t shapes[][5] = {
        {1, 1, 1, 1, 1}, {1, 1, 7, 1, 5}, {1, 1, 1, 9, 3}, {2, 1, 17, 33, 5},
        {1, 2, 16, 16, 16}, {3, 2, 5, 7, 11}, {1, 1, 65, 3, 70}, {2, 3, 1, 1, 1},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int rep = 0; rep < 3; rep++) {
            bwd_case c = random_case(shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3],
                                     shapes[i][4]);
            check_case(ctx, &c);
        }
}

static void test_random_shapes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 24; i++) {
        bwd_case c = random_case(tu_rand_range(1, 3), tu_rand_range(1, 3), tu_rand_range(1, 70),
                                 tu_rand_range(1, 70), tu_rand_range(1, 70));
        check_case(ctx, &c);
    }
}

/* Type `t` (`odds` in odds + 1) or another at random (f32; for bf16 f16
 * too), or t itself where `all`. */
static vkattn_dtype pick(vkattn_dtype t, bool all, uint32_t odds)
{
    if (all || tu_rand_range(0, odds))
        return t;
    return t == VKATTN_DTYPE_F16 || tu_rand_range(0, 1) ? VKATTN_DTYPE_F32 : VKATTN_DTYPE_F16;
}

/* 16-bit tensors: each of a, b, dC, dA, dB, dBias of type t or another at
 * random (the first case all t), the inputs rounded before the reference, so
 * it runs on what the device holds; the bound adds a 16-bit gradient's one
 * rounding (rounding()). */
static void typed_cases(vkattn_context *ctx, vkattn_dtype t, int count)
{
    for (int i = 0; i < count; i++) {
        bwd_case c = random_case(tu_rand_range(1, 3), tu_rand_range(1, 3), tu_rand_range(1, 40),
                                 tu_rand_range(1, 40), tu_rand_range(1, 40));
        for (int o = 0; o < 6; o++)
            c.t[o] = pick(t, i == 0, t == VKATTN_DTYPE_F16 ? 2 : 1);
        check_case(ctx, &c);
    }
}

static void test_f16(void **state) { typed_cases(TH_CTX(state), VKATTN_DTYPE_F16, 12); }
/* fewer: the f16 cases cover the shapes, these the bf16 loads and rounding */
static void test_bf16(void **state) { typed_cases(TH_CTX(state), VKATTN_DTYPE_BF16, 6); }

/* The reductions on 16-bit tensors: A broadcast over the batch or heads, B
 * too, a bias, every gradient of type t (the first case every tensor, then
 * the inputs t or another at random). With 16-bit storage grad_reduce_f16
 * reads an f16 dC and writes f16 dA, dB and dBias as they are; bf16, and the
 * mobile-min profile (no 16-bit storage), stage them through f32 copies.
 * Against the reference (bound as test_f16), and bit-identical to a
 * mobile-min context's staged call, the same f32 sums rounded once (skipped
 * where the mobile-min group is). */
static void typed_reductions(vkattn_context *ctx, vkattn_dtype t, int count)
{
    void *mstate = NULL;
    assert_int_equal(th_setup_with(&mstate, TH_MOBILE_PROFILE, 0), 0);
    for (int i = 0; i < count; i++) {
        bwd_case c;
        do
            c = random_case(2, 2, tu_rand_range(1, 20), tu_rand_range(1, 20),
                            tu_rand_range(1, 20));
        while (c.a_count == 1 || c.b_count == 1 || !c.p.has_bias);
        c.want_a = c.want_b = c.want_bias = true;
        for (int o = 0; o < 6; o++)
            c.t[o] = pick(t, i == 0 || o >= T_GA, 1);
        check_case_on(ctx, mstate, &c);
    }
    assert_int_equal(th_teardown(&mstate), 0);
}

static void test_f16_reductions(void **state)
{
    typed_reductions(TH_CTX(state), VKATTN_DTYPE_F16, 4);
}
static void test_bf16_reductions(void **state)
{
    typed_reductions(TH_CTX(state), VKATTN_DTYPE_BF16, 2);
}

/* Gradients of head-strided views, as attention reads Q (B, T, H, d) in place:
 * interleaved heads, each written exactly where its values are. */
static void test_head_views(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (int i = 0; i < 4; i++) {
        uint32_t B = tu_rand_range(1, 2), H = tu_rand_range(1, 3), T = tu_rand_range(1, 20);
        uint32_t S = tu_rand_range(1, 20), d = tu_rand_range(1, 12);
        bwd_case c = {
            .p = {.batch = B, .heads = H, .m = T, .n = S, .k = d, .transpose_b = true,
                  .a = {.batch_stride = (uint64_t)T * H * d, .head_stride = d, .row_stride = H * d},
                  .b = {.batch_stride = (uint64_t)S * H * d, .head_stride = d, .row_stride = H * d}},
            .na = (size_t)B * T * H * d, .nb = (size_t)B * S * H * d,
            .nc = (size_t)B * H * T * S, .a_count = 1, .b_count = 1,
            .want_a = true, .want_b = true,
        };
        check_case(ctx, &c);
    }
}

/* max_dispatch_work = 2^12 multiply-adds: the matmuls split along rows (and
 * K), the reductions along outputs; results bit-identical to one dispatch.
 * One row of each product (batch * heads * n * k of that product) stays
 * within the budget, as the forward requires. */
static void test_dispatch_budget(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    void *bstate = NULL;
    assert_int_equal(th_setup_with(&bstate, NULL, 1u << 12), 0);
    for (int i = 0; i < 4; i++) {
        bwd_case c = random_case(tu_rand_range(1, 2), tu_rand_range(1, 2), tu_rand_range(10, 30),
                                 tu_rand_range(10, 30), tu_rand_range(10, 30));
        check_case_on(ctx, bstate, &c);
    }
    /* dA and dBias: the reduction (n outputs of 240 terms) is split too; A
     * not transposed, so dA's rows are k * n = 150 multiply-adds each */
    bwd_case c;
    do
        c = random_case(2, 2, 60, 30, 5);
    while (c.p.transpose_a);
    c.p.has_bias = true, c.want_a = true, c.want_b = false, c.want_bias = true;
    check_case_on(ctx, bstate, &c);
    assert_int_equal(th_teardown(&bstate), 0);
}

/* After *_prepare, recording the same call creates no pipeline, scratch or
 * descriptor set. */
static void test_prepare(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    vkattn_matmul_params p = {.batch = 3, .m = 9, .n = 7, .k = 5, .has_bias = true,
                              .transpose_a = true, .b = {.batch_stride = 0}};
    vkattn_tensor *a = th_tensor(ctx, 135, NULL), *b = th_tensor(ctx, 35, NULL);
    vkattn_tensor *dc = th_tensor(ctx, 189, NULL), *ga = th_tensor(ctx, 135, NULL);
    vkattn_tensor *gb = th_tensor(ctx, 35, NULL), *gbias = th_tensor(ctx, 7, NULL);
    p.a.batch_stride = 45;
    vkattn_matmul_backward_io io = {.a = a, .b = b, .grad_c = dc, .grad_a = ga, .grad_b = gb,
                                    .grad_bias = gbias};
    TH_OK(ctx, vkattn_matmul_backward_record(ctx, VKATTN_PREPARE, &p, &io));
    vkattn_context_stats before, after;
    TH_OK(ctx, vkattn_context_get_stats(ctx, &before));
    TH_OK(ctx, vkattn_matmul_backward_record(ctx, VKATTN_RUN_NOW, &p, &io));
    TH_OK(ctx, vkattn_context_get_stats(ctx, &after));
    assert_int_equal(before.pipelines_created, after.pipelines_created);
    assert_int_equal(before.scratch_allocations, after.scratch_allocations);
    p.k = 0;
    assert_int_equal(vkattn_matmul_backward_record(ctx, VKATTN_PREPARE, &p, &io), VKATTN_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(vkattn_context_last_error(ctx), "vkattn_matmul_backward_record"));
    vkattn_tensor_destroy(a), vkattn_tensor_destroy(b), vkattn_tensor_destroy(dc);
    vkattn_tensor_destroy(ga), vkattn_tensor_destroy(gb), vkattn_tensor_destroy(gbias);
    th_assert_validation_clean();
}

static void test_bad_arguments(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    float ones[16];
    for (int i = 0; i < 16; i++)
        ones[i] = 1.0f;
    vkattn_tensor *a = th_tensor(ctx, 16, ones), *b = th_tensor(ctx, 16, ones);
    vkattn_tensor *dc = th_tensor(ctx, 16, ones), *ga = th_tensor(ctx, 16, ones);
    vkattn_tensor *gb = th_tensor(ctx, 16, ones), *small = th_tensor(ctx, 8, ones);
    vkattn_matmul_params p = {.m = 4, .n = 4, .k = 4};
    vkattn_matmul_backward_io io = {.a = a, .b = b, .grad_c = dc, .grad_a = ga, .grad_b = gb};
    const vkattn_result bad = VKATTN_ERROR_INVALID_ARGUMENT;
    assert_int_equal(vkattn_matmul_backward_record(ctx, VKATTN_RUN_NOW, NULL, &io), bad);
    assert_int_equal(vkattn_matmul_backward_record(ctx, VKATTN_RUN_NOW, &p, NULL), bad);
    p.k = 0;
    assert_int_equal(vkattn_matmul_backward_record(ctx, VKATTN_RUN_NOW, &p, &io), bad);
    p.k = 5; /* shape mismatch: A and B would need 20 elements */
    assert_int_equal(vkattn_matmul_backward_record(ctx, VKATTN_RUN_NOW, &p, &io), bad);
    p.k = 4;
    io.grad_b = small; /* too small for B's gradient */
    assert_int_equal(vkattn_matmul_backward_record(ctx, VKATTN_RUN_NOW, &p, &io), bad);
    io.grad_b = gb, io.b = NULL; /* dA needs B */
    assert_int_equal(vkattn_matmul_backward_record(ctx, VKATTN_RUN_NOW, &p, &io), bad);
    io.b = b, io.grad_c = NULL;
    assert_int_equal(vkattn_matmul_backward_record(ctx, VKATTN_RUN_NOW, &p, &io), bad);
    io.grad_c = dc, io.grad_bias = small; /* no bias in the forward */
    assert_int_equal(vkattn_matmul_backward_record(ctx, VKATTN_RUN_NOW, &p, &io), bad);
    io.grad_bias = NULL, io.grad_b = a; /* a gradient aliasing an input */
    assert_int_equal(vkattn_matmul_backward_record(ctx, VKATTN_RUN_NOW, &p, &io), bad);
    assert_non_null(strstr(vkattn_context_last_error(ctx), "io->grad_b"));
    io.grad_b = ga; /* two gradients in one tensor */
    assert_int_equal(vkattn_matmul_backward_record(ctx, VKATTN_RUN_NOW, &p, &io), bad);
    io.grad_a = dc, io.grad_b = gb;
    assert_int_equal(vkattn_matmul_backward_record(ctx, VKATTN_RUN_NOW, &p, &io), bad);

    /* nothing recorded: a failed record leaves grad_a as it was */
    io.grad_a = ga, io.grad_b = b;
    VkCommandBuffer cmd;
    TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
    assert_int_equal(vkattn_matmul_backward_record(ctx, cmd, &p, &io), bad);
    TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd));
    float *got = th_download(ga, 16);
    assert_memory_equal(got, ones, sizeof ones);
    free(got);
    /* and no gradient asked for is a successful no-op */
    vkattn_matmul_backward_io none = {.a = a, .b = b, .grad_c = dc};
    TH_OK(ctx, vkattn_matmul_backward_record(ctx, VKATTN_RUN_NOW, &p, &none));

    vkattn_tensor_destroy(a), vkattn_tensor_destroy(b), vkattn_tensor_destroy(dc);
    vkattn_tensor_destroy(ga), vkattn_tensor_destroy(gb), vkattn_tensor_destroy(small);
    th_assert_validation_clean();
}

int main(void)
{
    const struct CMUnitTest tests[] = {TU_TESTS(
        test_fixed_shapes, test_random_shapes, test_f16, test_f16_reductions, test_bf16,
        test_bf16_reductions, test_head_views,
        test_dispatch_budget,
        test_prepare, test_bad_arguments)};
    return cmocka_run_group_tests_name("matmul_backward", tests, th_setup, th_teardown);
}
