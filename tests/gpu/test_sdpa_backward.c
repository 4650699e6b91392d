/* SDPA backward vs vkattn_reference_sdpa_backward, both paths.
 *
 * Random shapes: odd sizes, Tq != Tv, dk != dv, batch 1, Tq = 1, grouped K/V
 * heads (H / Hkv = 1, 2, 3), every mask kind with random broadcasts and an
 * additive bias, both causal alignments (bottom-right with Tq > Tv gives rows
 * with no key), whole masked rows (a batch whose value mask is all zero) under
 * both masked-row policies, dropout in training mode (the forward's Philox
 * mask regenerated from the same seed and offset). The chained path runs with
 * the weights recomputed and with the forward's weights given; the fused path
 * with out and lse from the fused forward. Fresh random inputs in [-1, 1];
 * gradients poisoned with NaN first. On devices with fewer than 10 storage
 * buffers per shader (mobile-min) the fused backward must refuse with
 * VKATTN_ERROR_UNSUPPORTED and AUTO must fall back to the chained path.
 *
 * Bound: for each of dQ, dK, dV, max|got - ref| / scale <= 1e-4, where scale
 * is the largest of max|ref| of that gradient, a tenth of the largest |ref|
 * of all three, and 0.01 (fp32 sums over Tq or Tv <= 80 rows of products of
 * moderate size; the fused path recomputes weights from the LSE, one more
 * rounding). The two floors are for gradients that are 0 analytically, as dK
 * and dQ when each row sees one key: they come out as the rounding left of
 * dP - D, sums of dv products the size of dV's entries (dO v / (1 - rate)),
 * so their error is measured against the call's gradient scale. CI once drew
 * such a dK (Tv = 1, dropout 0.31) 1.3e-6 from 0, over a floor of 0.01 alone.
 * Bad input: missing lse or out for the fused path, a too small gradient, a
 * gradient aliasing an input or another output: INVALID_ARGUMENT naming the
 * tensor, and the gradients untouched.
 *
 * The random cases run in the storage dtypes of `dtypes` below (a new dtype
 * is one row there): under a row past f32 each of q, k, v, grad_out, grad_q,
 * grad_k, grad_v (and the fused forward's out) is of the row's dtype or f32
 * at random (the bf16 row: or f16, so f16 meets bf16 in one call), the first
 * case of each test all of the dtype; masks, bias and lse stay f32. Inputs
 * are random values in [-1, 1] rounded to their tensor's type, so the
 * reference (double) runs on exactly what the device holds. Bound, per gradient, on max|got - ref| / scale with the scale above:
 *   1e-4                the f32 backward's bound: the f16 inputs are exact in
 *                       f32, so the arithmetic is the f32 backward's on the
 *                       same values
 * + 2^-10 (f16 grad)    the one rounding of an f16 gradient: half an f16
 *                       spacing, 2^-11 |x| (docs/SEMANTICS.md's ulp16 is
 *                       2^-10 relative), doubled for the f32 error it rounds
 * + 2^-7 (bf16 grad)    the twin for bf16: half a bf16 spacing (8 significand
 *                       bits: 2^-8 |x|; rounded to nearest even by vkattn's
 *                       own GLSL), doubled likewise
 * + shift (f16 out)     the fused path reads the forward's out to form
 *                       D_i = rowsum(dO_i * O_i); an f16 out, rounded once
 *                       (by 2^-11 |O| at most, 2^-25 below the normal range),
 *                       moves D_i by dD_i <= sum_d |dO_id| (2^-11 |O_id| +
 *                       2^-25), O and W taken from the reference forward.
 *                       dS_ij moves by W_ij dD_i, so dQ_i by at most
 *                       |scale| dD_i max|K| (sum_j W_ij <= 1) and dK_j by
 *                       |scale| max|Q| sum_i W_ij dD_i over the rows of its
 *                       group; dV does not read D. A bf16 out likewise with
 *                       2^-8 |O_id| + 2^-126 (f32's range: no bf16
 *                       subnormal floor; 2^-126 for a flushed f32 denormal).
 * + coopmat             a fused all-f16 (q, k, v, dO) call on a context running
 *                       the cooperative-matrix backward: its f16 P and dS
 *                       (backward_coopmat_bound.h).
 * Bad input of a dtype (test_bad_dtypes): an lse, weights, workspace, bias or
 * mask of it is refused naming it, as is a gradient of it aliasing an input
 * of it; a failed call writes nothing. */
#include "backward_coopmat_bound.h"
#include "harness.h"
#include "op_table.h"
#include "random_case.h"

#include <vkattn/reference.h>
#include <vkattn/reference_backward.h>
#include <vkattn/sdpa.h>
#include <vkattn/sdpa_backward.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOUND 1e-4
#define EPS16 0x1p-10
#define EPS_BF16 0x1p-7
#define FLOOR 1e-2       /* a gradient that is 0 analytically (one key per row) */
#define JOINT_FLOOR 1e-1 /* ... measured against a tenth of the call's largest */

/* FUSED_AUTO: the fused forward's out and lse given, path AUTO */
typedef enum run_mode { CHAINED, CHAINED_WEIGHTS, FUSED, FUSED_AUTO } run_mode;

/* The widest random dk, dv: wider under the GPU tuning, so that its kernels
 * split keys and rows over 1, 2 and 4 lanes (ops/flash_backward_gpu_tiles.h). */
static uint32_t max_width = 20;

/* One storage dtype: what differs between them. */
typedef struct bwd_dtype {
    vkattn_dtype dtype;
    double eps;                      /* the bound's term for a gradient of it (header) */
    uint32_t max_tq, max_tv, max_d;  /* random shapes; max_d 0: max_width */
    unsigned chained, fused, fused_few; /* random cases per test */
} bwd_dtype;

static const bwd_dtype dtypes[] = {
    {VKATTN_DTYPE_F32, 0.0, 37, 45, 0, 12, 12, 5},
    /* smaller: lavapipe is slow on every f16 operand mix */
    {VKATTN_DTYPE_F16, EPS16, 21, 21, 13, 5, 5, 2},
    /* fewer: f16's cases cover the kernels; bf16 adds its staging and rounding */
    {VKATTN_DTYPE_BF16, EPS_BF16, 21, 21, 13, 3, 3, 2},
};
#define NDTYPES (sizeof dtypes / sizeof dtypes[0])

static double eps_of(vkattn_dtype t)
{
    for (size_t i = 0; i < NDTYPES; i++)
        if (dtypes[i].dtype == t)
            return dtypes[i].eps;
    fail_msg("no row for dtype %d", (int)t);
    return 0.0;
}

/* The tensors whose dtype a case draws (all f32 under the f32 row). */
enum { T_Q, T_K, T_V, T_G, T_DQ, T_DK, T_DV, T_OUT, N_T };

typedef struct bcase {
    vkattn_sdpa_params p;
    vkattn_dtype ty[N_T];
    uint32_t hkv;
    size_t nq, nk, nv, no, nw, nbias, nmask, nvm;
    float *q, *k, *v, *g, *bias, *mask, *vm;
    float *ref_dq, *ref_dk, *ref_dv;
} bcase;

static uint32_t heads_of(const vkattn_sdpa_params *p) { return p->heads ? p->heads : 1; }

static void make_case(bcase *c)
{
    const vkattn_sdpa_params *p = &c->p;
    const uint32_t h = heads_of(p), dv = p->dv ? p->dv : p->dk;
    c->hkv = p->kv_heads ? p->kv_heads : h;
    c->nq = (size_t)p->batch * h * p->tq * p->dk;
    c->nk = (size_t)p->batch * c->hkv * p->tv * p->dk;
    c->nv = (size_t)p->batch * c->hkv * p->tv * dv;
    c->no = (size_t)p->batch * h * p->tq * dv;
    c->nw = (size_t)p->batch * h * p->tq * p->tv;
    c->q = th_operand(c->nq, c->ty[T_Q]), c->k = th_operand(c->nk, c->ty[T_K]);
    c->v = th_operand(c->nv, c->ty[T_V]), c->g = th_operand(c->no, c->ty[T_G]);
    const rc_sdpa_sides sides = rc_sdpa_side_inputs(p);
    c->bias = sides.bias, c->mask = sides.mask, c->vm = sides.vm;
    c->nbias = sides.nbias, c->nmask = sides.nmask, c->nvm = sides.nvm;
    c->ref_dq = tu_floats(c->nq), c->ref_dk = tu_floats(c->nk), c->ref_dv = tu_floats(c->nv);
    assert_int_equal(vkattn_reference_sdpa_backward(p, c->q, c->k, c->v, c->bias, c->vm, c->mask,
                                                    c->g, c->ref_dq, c->ref_dk, c->ref_dv),
                     VKATTN_SUCCESS);
}

static void free_case(bcase *c)
{
    free(c->q), free(c->k), free(c->v), free(c->g), free(c->bias), free(c->mask), free(c->vm);
    free(c->ref_dq), free(c->ref_dk), free(c->ref_dv);
}

static vkattn_tensor *opt(vkattn_context *ctx, const float *x, size_t n)
{
    return x ? th_tensor(ctx, n, x) : NULL;
}

/* n elements of type t poisoned with NaN */
static vkattn_tensor *poisoned(vkattn_context *ctx, size_t n, vkattn_dtype t)
{
    return th_typed_tensor(ctx, n, t, NULL);
}

static bool fused_possible(vkattn_context *ctx)
{
    vkattn_context_info info;
    assert_int_equal(vkattn_context_get_info(ctx, &info), VKATTN_SUCCESS);
    return info.max_storage_buffers_per_stage >= 10;
}

static void describe(char *buf, size_t n, const bcase *c, run_mode mode)
{
    const vkattn_sdpa_params *p = &c->p;
    const vkattn_mask_params *m = &p->mask;
    snprintf(buf, n,
             "%s: B=%u H=%u Hkv=%u Tq=%u Tv=%u dk=%u dv=%u causal=%d row=%d vm=%d mask=%d "
             "bias=%d drop=%g window=%u scale=%g types q %s k %s v %s dO %s dQ %s dK %s dV %s "
             "out %s",
             mode == FUSED        ? "fused"
             : mode == FUSED_AUTO ? "auto+lse"
             : mode == CHAINED    ? "chained"
                                  : "chained+weights",
             p->batch, heads_of(p), c->hkv, p->tq, p->tv, p->dk, p->dv ? p->dv : p->dk,
             (int)m->causal, (int)m->masked_row, m->has_value_mask, m->has_mask, m->has_bias,
             p->dropout.training ? (double)p->dropout.rate : 0.0, p->sliding_window,
             (double)p->scale, th_dtype_name(c->ty[T_Q]), th_dtype_name(c->ty[T_K]),
             th_dtype_name(c->ty[T_V]), th_dtype_name(c->ty[T_G]), th_dtype_name(c->ty[T_DQ]),
             th_dtype_name(c->ty[T_DK]), th_dtype_name(c->ty[T_DV]), th_dtype_name(c->ty[T_OUT]));
}

static double max_abs(const float *x, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs((double)x[i]));
    return m;
}

/* The bound (header): 1e-4, + eps of a narrow gradient, + extra (an f16
 * out's shift, the cooperative-matrix kernel's term) over the scale. */
static void check_grad(const char *what, const char *name, vkattn_tensor *t, const float *ref,
                       size_t n, vkattn_dtype ty, double joint, double extra)
{
    float *got = th_download(t, n);
    const double floor = fmax(FLOOR, JOINT_FLOOR * joint);
    const double bound = BOUND + eps_of(ty) + extra / fmax(max_abs(ref, n), floor);
    const double err = tu_max_rel_err(got, ref, n, floor);
    if (!TU_WITHIN(err, bound))
        fail_msg("%s: %s: max relative error %.3g exceeds bound %.3g", what, name, err, bound);
    free(got);
}

/* Whether a fused call of c may take the cooperative-matrix backward on this
 * context (ops/flash_backward_coopmat.h): q, k, v, grad_out f16 where it runs
 * (a bf16 tensor besides keeps it off: counted anyway, a looser bound). */
static bool coopmat_backward(vkattn_context *ctx, const bcase *c)
{
    vkattn_context_info info;
    assert_int_equal(vkattn_context_get_info(ctx, &info), VKATTN_SUCCESS);
    return info.coopmat_attention && !info.cpu_tuning && c->ty[T_Q] == VKATTN_DTYPE_F16 &&
           c->ty[T_K] == VKATTN_DTYPE_F16 && c->ty[T_V] == VKATTN_DTYPE_F16 &&
           c->ty[T_G] == VKATTN_DTYPE_F16;
}

/* The largest shifts of dQ and dK a 16-bit out can cause (the header's
 * "shift"): *xq, *xk. */
static void out16_shift(const bcase *c, double *xq, double *xk)
{
    const bool bf16 = c->ty[T_OUT] == VKATTN_DTYPE_BF16;
    const double rel = bf16 ? 0x1p-8 : 0x1p-11, tiny = bf16 ? 0x1p-126 : 0x1p-25;
    vkattn_sdpa_params rp = c->p;
    rp.return_weights = true, rp.weights_after_dropout = false;
    const uint32_t h = heads_of(&rp), g = h / c->hkv, dv = rp.dv ? rp.dv : rp.dk;
    const size_t rows = (size_t)rp.batch * h * rp.tq, keys = c->nk / rp.dk;
    float *out = tu_floats(c->no), *w = tu_floats(rows * rp.tv);
    double *per_key = calloc(keys, sizeof *per_key);
    assert_non_null(per_key);
    const vkattn_sdpa_dtypes ty = {0};
    assert_int_equal(vkattn_reference_sdpa(&rp, &ty, c->q, c->k, c->v, c->bias, c->vm, c->mask,
                                           out, w),
                     VKATTN_SUCCESS);
    const double scale = rp.scale != 0.0f ? fabs(rp.scale) : 1.0 / sqrt((double)rp.dk);
    const double max_k = max_abs(c->k, c->nk), max_q = max_abs(c->q, c->nq);
    double max_dd = 0.0, max_key = 0.0;
    for (size_t r = 0; r < rows; r++) {
        double dd = 0.0;
        for (uint32_t d = 0; d < dv; d++)
            dd += fabs((double)c->g[r * dv + d]) * (rel * fabs((double)out[r * dv + d]) + tiny);
        max_dd = fmax(max_dd, dd);
        const size_t b = r / ((size_t)h * rp.tq), head = r / rp.tq % h;
        const size_t key0 = (b * c->hkv + head / g) * rp.tv;
        for (uint32_t j = 0; j < rp.tv; j++)
            per_key[key0 + j] += w[r * rp.tv + j] * dd;
    }
    for (size_t j = 0; j < keys; j++)
        max_key = fmax(max_key, per_key[j]);
    *xq = scale * max_dd * max_k;
    *xk = scale * max_key * max_q;
    free(out), free(w), free(per_key);
}

static void run_case(vkattn_context *ctx, bcase *c, run_mode mode)
{
    char what[320];
    describe(what, sizeof what, c, mode);
    const vkattn_sdpa_params *p = &c->p;
    const vkattn_dtype *ty = c->ty;
    vkattn_sdpa_backward_io io = {
        .q = th_typed_tensor(ctx, c->nq, ty[T_Q], c->q),
        .k = th_typed_tensor(ctx, c->nk, ty[T_K], c->k),
        .v = th_typed_tensor(ctx, c->nv, ty[T_V], c->v), .bias = opt(ctx, c->bias, c->nbias),
        .value_mask = opt(ctx, c->vm, c->nvm), .mask = opt(ctx, c->mask, c->nmask),
        .grad_out = th_typed_tensor(ctx, c->no, ty[T_G], c->g),
        .grad_q = poisoned(ctx, c->nq, ty[T_DQ]), .grad_k = poisoned(ctx, c->nk, ty[T_DK]),
        .grad_v = poisoned(ctx, c->nv, ty[T_DV]),
    };
    double xq = 0.0, xk = 0.0, xv = 0.0; /* the fused path's terms (header) */
    vkattn_sdpa_params bp = *p;
    const bool fused = mode == FUSED || mode == FUSED_AUTO;
    if (mode != CHAINED) { /* run the forward for what the backward takes from it */
        vkattn_sdpa_params fp = *p;
        fp.path = fused ? VKATTN_SDPA_FUSED : VKATTN_SDPA_UNFUSED;
        fp.return_weights = mode == CHAINED_WEIGHTS;
        vkattn_sdpa_io fio = {.q = io.q, .k = io.k, .v = io.v, .bias = io.bias,
                              .value_mask = io.value_mask, .mask = io.mask,
                              .out = poisoned(ctx, c->no, fused ? ty[T_OUT] : VKATTN_DTYPE_F32)};
        if (fused)
            fio.lse = poisoned(ctx, c->nw / p->tv, VKATTN_DTYPE_F32);
        else
            fio.weights = poisoned(ctx, c->nw, VKATTN_DTYPE_F32);
        TH_OK(ctx, vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &fp, &fio));
        io.out = fio.out, io.lse = fio.lse, io.weights = fio.weights;
        if (fused && ty[T_OUT] != VKATTN_DTYPE_F32)
            out16_shift(c, &xq, &xk);
        if (fused && coopmat_backward(ctx, c)) { /* its f16 P and dS (docs/SEMANTICS.md) */
            const bcb_inputs in = {c->q, c->k, c->v, c->g, c->bias, c->vm, c->mask};
            double cq, ck;
            bcb_bound(p, &in, &cq, &ck, &xv);
            xq += cq, xk += ck;
        }
    }
    bp.path = mode == FUSED        ? VKATTN_SDPA_FUSED
              : mode == FUSED_AUTO ? VKATTN_SDPA_AUTO
                                   : VKATTN_SDPA_UNFUSED;
    if (mode == FUSED && !fused_possible(ctx)) {
        assert_int_equal(vkattn_sdpa_backward_record(ctx, VKATTN_RUN_NOW, &bp, &io), VKATTN_ERROR_UNSUPPORTED);
        assert_non_null(strstr(vkattn_context_last_error(ctx),
                               "VKATTN_SDPA_FUSED but the fused backward cannot serve"));
        bp.path = VKATTN_SDPA_AUTO; /* falls back to the chained path */
        xq = xk = xv = 0.0;
    }
    TH_OK(ctx, vkattn_sdpa_backward_record(ctx, VKATTN_RUN_NOW, &bp, &io));
    const double joint = fmax(max_abs(c->ref_dq, c->nq),
                              fmax(max_abs(c->ref_dk, c->nk), max_abs(c->ref_dv, c->nv)));
    check_grad(what, "grad_q", io.grad_q, c->ref_dq, c->nq, ty[T_DQ], joint, xq);
    check_grad(what, "grad_k", io.grad_k, c->ref_dk, c->nk, ty[T_DK], joint, xk);
    check_grad(what, "grad_v", io.grad_v, c->ref_dv, c->nv, ty[T_DV], joint, xv);
    th_assert_validation_clean();
    vkattn_tensor *all[] = {io.q, io.k, io.v, io.bias, io.value_mask, io.mask, io.grad_out,
                            io.grad_q, io.grad_k, io.grad_v, io.out, io.lse, io.weights};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vkattn_tensor_destroy(all[i]);
}

static bool coin(void) { return tu_rand_range(0, 1) == 1; }

/* Case idx of row d: H / Hkv = 1, 2, 3, 4; Tq = 1 every 7th; a scale of
 * either sign or the default; dropout every 3rd (out of training every 9th,
 * at a large Philox offset half the time); under a row past f32 each tensor
 * of the dtype or f32 (bf16's: or f16), all of it in case 0, at least one the
 * backward takes. */
static bcase random_case(int idx, const bwd_dtype *d)
{
    bcase c = {0};
    vkattn_sdpa_params *p = &c.p;
    static const uint32_t groups[] = {1, 2, 3, 4};
    const uint32_t hkv = tu_rand_range(1, 2), g = groups[tu_rand_range(0, 3)];
    const uint32_t width = d->max_d ? d->max_d : max_width;
    p->batch = tu_rand_range(1, 2);
    p->heads = hkv * g;
    p->kv_heads = hkv;
    p->tq = idx % 7 == 6 ? 1 : tu_rand_range(1, d->max_tq);
    p->tv = tu_rand_range(1, d->max_tv);
    p->dk = tu_rand_range(1, width);
    p->dv = coin() ? 0 : tu_rand_range(1, width);
    p->scale = coin() ? 0.0f : tu_rand_float(0.2f, 1.5f) * (coin() ? 1.0f : -1.0f);
    vkattn_mask_params *m = &p->mask;
    rc_random_mask(m);
    if (idx % 3 == 2)
        p->dropout = (vkattn_dropout_params){.rate = tu_rand_float(0.1f, 0.6f),
                                             .training = idx % 9 != 8, .seed = tu_rand_u32(),
                                             .offset = coin() ? tu_rand_range(0, 9)
                                                              : tu_rand_u32()};
    if (d->dtype == VKATTN_DTYPE_F32)
        return c;
    bool any = false;
    const vkattn_dtype other =
        d->dtype == VKATTN_DTYPE_BF16 && coin() ? VKATTN_DTYPE_F16 : VKATTN_DTYPE_F32;
    for (int t = 0; t < N_T; t++) {
        c.ty[t] = idx == 0 || coin() ? d->dtype : other;
        any |= c.ty[t] == d->dtype && t != T_OUT;
    }
    if (!any) /* at least one tensor of the dtype the backward itself takes */
        c.ty[tu_rand_range(T_Q, T_DV)] = d->dtype;
    return c;
}

/* Every row's random cases: chained (the weights recomputed or given, in
 * turn), fused, or fused_few of them. */
static void random_rows(void **state, bool fused, bool few)
{
    vkattn_context *ctx = TH_CTX(state);
    for (size_t r = 0; r < NDTYPES; r++) {
        const bwd_dtype *d = &dtypes[r];
        const unsigned n = few ? d->fused_few : fused ? d->fused : d->chained;
        for (unsigned i = 0; i < n; i++) {
            bcase c = random_case((int)i, d);
            make_case(&c);
            run_case(ctx, &c, fused ? FUSED : i % 2 ? CHAINED_WEIGHTS : CHAINED);
            free_case(&c);
        }
    }
}

static void test_random_chained(void **state) { random_rows(state, false, false); }
static void test_random_fused(void **state) { random_rows(state, true, false); }

/* The GPU tuning's group in the default pass: fewer draws (CI's second pass
 * runs the full test_random_fused under the GPU tuning). */
static void test_random_fused_few(void **state) { random_rows(state, true, true); }

/* The sliding window on random calls (1, within the lengths, or wider than
 * both), both paths: the key tiles outside the band skipped by the fused
 * kernels, masked by the chained softmax backward. */
static void test_window(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    /* Every path under every causal mode, the first three with a window
     * narrower than Tv (the band then cuts keys on both sides of a row), the
     * rest drawn from every width class. */
    for (int i = 0; i < 6; i++) {
        bcase c = random_case(i, &dtypes[0]);
        c.p.mask.causal = (vkattn_causal)(i % 3);
        c.p.sliding_window = i < 3 ? 1 + tu_rand_range(0, c.p.tv > 1 ? c.p.tv - 2 : 0)
                                   : rc_random_window(c.p.tq, c.p.tv);
        make_case(&c);
        for (int mode = CHAINED; mode <= FUSED; mode++)
            run_case(ctx, &c, (run_mode)mode);
        free_case(&c);
    }
}

/* Hand-picked corners for both paths: bottom-right with Tq > Tv (rows with no
 * key) under each policy with dropout, a key block larger than one workgroup
 * (Tv = 150), and widths that are multiples of 4 (the vec4 loads). */
static void test_corners(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const vkattn_sdpa_params ps[] = {
        {.batch = 2, .heads = 2, .kv_heads = 1, .tq = 9, .tv = 4, .dk = 5, .dv = 3,
         .mask = {.causal = VKATTN_CAUSAL_BOTTOM_RIGHT, .masked_row = VKATTN_MASKED_ROW_UNIFORM,
                  .has_value_mask = true},
         .dropout = {.rate = 0.25f, .training = true, .seed = 9, .offset = 2}},
        {.batch = 2, .heads = 2, .tq = 9, .tv = 4, .dk = 5, .dv = 3,
         .mask = {.causal = VKATTN_CAUSAL_BOTTOM_RIGHT, .has_value_mask = true}},
        {.batch = 1, .heads = 4, .kv_heads = 2, .tq = 20, .tv = 150, .dk = 16, .dv = 8,
         .mask = {.causal = VKATTN_CAUSAL_TOP_LEFT}},
        {.batch = 1, .heads = 2, .tq = 70, .tv = 33, .dk = 8, .dv = 12,
         .mask = {.has_bias = true, .bias_broadcast = {.batch = true}},
         .dropout = {.rate = 0.5f, .training = true, .seed = 1234567890123ull}},
    };
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        for (int mode = CHAINED; mode <= FUSED; mode++) {
            bcase c = {.p = ps[i]};
            make_case(&c);
            run_case(ctx, &c, (run_mode)mode);
            free_case(&c);
        }
}

/* The GPU tuning's kernels at widths that split a key (dK, dV kernel) or a
 * query row (dQ kernel) over 2, 4, 8 and 16 lanes (over 16 to 64 under the
 * mali profile's budget of 64 live values), sizes off every tile, each with
 * a different mask form. Lanes within lavapipe's subgroup (8, or 4 with
 * LP_NATIVE_VECTOR_WIDTH=128) sum by shuffles, wider ones through shared
 * memory; the no-subgroups group runs the shared-memory sums everywhere. */
static void test_gpu_lanes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const vkattn_sdpa_params ps[] = {
        {.batch = 1, .heads = 2, .kv_heads = 1, .tq = 7, .tv = 13, .dk = 48, .dv = 40,
         .mask = {.causal = VKATTN_CAUSAL_TOP_LEFT},
         .dropout = {.rate = 0.3f, .training = true, .seed = 77, .offset = 5}},
        {.batch = 2, .heads = 3, .tq = 9, .tv = 6, .dk = 100, .dv = 36, .scale = 0.3f,
         .mask = {.causal = VKATTN_CAUSAL_BOTTOM_RIGHT, .has_mask = true, .has_bias = true,
                  .mask_broadcast = {.heads = true}, .bias_broadcast = {.batch = true}}},
        {.batch = 2, .heads = 1, .tq = 5, .tv = 9, .dk = 130, .dv = 129,
         .mask = {.has_value_mask = true, .masked_row = VKATTN_MASKED_ROW_UNIFORM}},
        {.batch = 1, .heads = 2, .kv_heads = 2, .tq = 3, .tv = 37, .dk = 256, .dv = 200,
         .dropout = {.rate = 0.5f, .training = true, .seed = 3}},
    };
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        bcase c = {.p = ps[i]};
        make_case(&c);
        run_case(ctx, &c, i % 2 ? FUSED_AUTO : FUSED);
        free_case(&c);
    }
}

/* Which kernels serve the fused backward, from the context's debug log
 * ("pipeline NAME created"): under the GPU tuning the GPU-shaped ones
 * (flash_backward_{stats,kv,q}_gpu, or their _sg twins), and AUTO picks them
 * when given the forward's lse; under the CPU tuning the CPU-shaped ones. */
static void test_kernel_choice(void **state)
{
    (void)TH_CTX(state);
    for (int tuning = VKATTN_TUNING_GPU; tuning <= VKATTN_TUNING_CPU; tuning++) {
        th_pipelines seen;
        vkattn_context *ctx = th_tuning_context(tuning, &seen);
        if (fused_possible(ctx)) {
            bcase c = {.p = {.batch = 1, .heads = 2, .kv_heads = 1, .tq = 5, .tv = 7, .dk = 24,
                             .dv = 8}};
            make_case(&c);
            run_case(ctx, &c, FUSED_AUTO);
            free_case(&c);
            const bool gpu = tuning == VKATTN_TUNING_GPU;
            const char *names[3] = {"flash_backward_stats", "flash_backward_kv",
                                    "flash_backward_q"};
            for (int k = 0; k < 3; k++) {
                char gpu_name[48];
                snprintf(gpu_name, sizeof gpu_name, "%s_gpu", names[k]);
                const bool used_gpu = th_pipeline_seen(&seen, gpu_name, true);
                const bool used_cpu = th_pipeline_seen(&seen, names[k], false);
                if (used_gpu != gpu || used_cpu == gpu)
                    fail_msg("%s tuning: %s %s, %s %s", gpu ? "GPU" : "CPU", gpu_name,
                             used_gpu ? "used" : "unused", names[k],
                             used_cpu ? "used" : "unused");
            }
        }
        vkattn_context_destroy(ctx);
    }
}

static void expect_error(vkattn_context *ctx, const vkattn_sdpa_params *p,
                         const vkattn_sdpa_backward_io *io, vkattn_result code, const char *needle)
{
    th_expect_error(ctx, vkattn_sdpa_backward_record(ctx, VKATTN_RUN_NOW, p, io), code, needle);
}

static void test_bad_arguments(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    enum { N = 64 };
    float x[N];
    tu_fill_uniform(x, N, -1, 1);
    vkattn_sdpa_params p = {.batch = 1, .heads = 2, .tq = 3, .tv = 4, .dk = 4};
    vkattn_tensor *t[12];
    for (int i = 0; i < 12; i++)
        t[i] = th_tensor(ctx, N, x);
    vkattn_tensor *small = th_tensor(ctx, 5, x);
    vkattn_sdpa_backward_io io = {.q = t[0], .k = t[1], .v = t[2], .grad_out = t[3],
                                  .grad_q = t[4], .grad_k = t[5], .grad_v = t[6]};
    p.path = VKATTN_SDPA_FUSED;
    if (fused_possible(ctx)) {
        expect_error(ctx, &p, &io, VKATTN_ERROR_INVALID_ARGUMENT, "io->lse");
        io.lse = t[7];
        expect_error(ctx, &p, &io, VKATTN_ERROR_INVALID_ARGUMENT, "io->out");
        io.lse = NULL;
    }
    p.path = VKATTN_SDPA_UNFUSED;
    io.grad_q = small;
    expect_error(ctx, &p, &io, VKATTN_ERROR_INVALID_ARGUMENT, "io->grad_q");
    io.grad_q = t[4];
    io.grad_k = t[1];
    expect_error(ctx, &p, &io, VKATTN_ERROR_INVALID_ARGUMENT, "io->grad_k");
    io.grad_k = t[5];
    io.grad_v = t[3];
    expect_error(ctx, &p, &io, VKATTN_ERROR_INVALID_ARGUMENT, "io->grad_v");
    io.grad_v = t[5];
    expect_error(ctx, &p, &io, VKATTN_ERROR_INVALID_ARGUMENT, "io->grad_v");
    io.grad_v = t[6];
    io.workspace[0] = t[4];
    expect_error(ctx, &p, &io, VKATTN_ERROR_INVALID_ARGUMENT, "io->workspace[0]");
    io.workspace[0] = NULL;
    p.mask.has_mask = true;
    expect_error(ctx, &p, &io, VKATTN_ERROR_INVALID_ARGUMENT, "io->mask");
    p.mask.has_mask = false;
    p.kv_heads = 3;
    expect_error(ctx, &p, &io, VKATTN_ERROR_INVALID_ARGUMENT, "kv_heads");
    p.kv_heads = 0;
    /* the failed calls wrote nothing */
    for (int i = 4; i <= 6; i++) {
        float *got = th_download(t[i], N);
        assert_memory_equal(got, x, sizeof x);
        free(got);
    }
    TH_OK(ctx, vkattn_sdpa_backward_record(ctx, VKATTN_RUN_NOW, &p, &io));
    for (int i = 0; i < 12; i++)
        vkattn_tensor_destroy(t[i]);
    vkattn_tensor_destroy(small);
    th_assert_validation_clean();
}

/* The tensors with no form of a narrow dtype in the backward are refused
 * naming them, and a refused call leaves the gradients as they were. */
static void test_bad_dtypes(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    enum { N = 64 };
    for (size_t r = 1; r < NDTYPES; r++) { /* past f32 */
        const vkattn_dtype h = dtypes[r].dtype;
        float *x = th_operand(N, h);
        vkattn_sdpa_params p = {.batch = 1, .heads = 2, .tq = 3, .tv = 4, .dk = 4};
        vkattn_tensor *t[7], *f32 = th_tensor(ctx, N, x), *f16 = th_typed_tensor(ctx, N, h, x);
        for (int i = 0; i < 7; i++)
            t[i] = th_typed_tensor(ctx, N, h, x);
        vkattn_sdpa_backward_io io = {.q = t[0], .k = t[1], .v = t[2], .grad_out = t[3],
                                      .grad_q = t[4], .grad_k = t[5], .grad_v = t[6]};
        p.path = VKATTN_SDPA_UNFUSED;
        io.weights = f16;
        expect_error(ctx, &p, &io, VKATTN_ERROR_UNSUPPORTED, "io->weights");
        io.weights = NULL;
        io.workspace[0] = f16;
        expect_error(ctx, &p, &io, VKATTN_ERROR_UNSUPPORTED, "io->workspace[0]");
        io.workspace[0] = NULL;
        p.mask.has_mask = true;
        io.mask = f16;
        expect_error(ctx, &p, &io, VKATTN_ERROR_INVALID_ARGUMENT, "io->mask");
        p.mask.has_mask = false, p.mask.has_bias = true;
        io.mask = NULL, io.bias = f16;
        expect_error(ctx, &p, &io, VKATTN_ERROR_INVALID_ARGUMENT, "io->bias");
        p.mask.has_bias = false;
        io.bias = NULL;
        if (fused_possible(ctx)) {
            p.path = VKATTN_SDPA_FUSED;
            io.out = f32, io.lse = f16;
            expect_error(ctx, &p, &io, VKATTN_ERROR_UNSUPPORTED, "io->lse");
            io.out = NULL, io.lse = NULL;
            p.path = VKATTN_SDPA_UNFUSED;
        }
        io.grad_q = t[0]; /* a gradient aliasing an input, both of the dtype */
        expect_error(ctx, &p, &io, VKATTN_ERROR_INVALID_ARGUMENT, "io->grad_q");
        io.grad_q = t[4];
        /* the failed calls wrote nothing */
        for (int i = 4; i <= 6; i++) {
            float *got = th_download(t[i], N);
            assert_memory_equal(got, x, N * sizeof *x);
            free(got);
        }
        TH_OK(ctx, vkattn_sdpa_backward_record(ctx, VKATTN_RUN_NOW, &p, &io));
        for (int i = 0; i < 7; i++)
            vkattn_tensor_destroy(t[i]);
        vkattn_tensor_destroy(f32);
        vkattn_tensor_destroy(f16);
        free(x);
    }
    th_assert_validation_clean();
}

static int setup_gpu(void **state)
{
    max_width = 72;
    return th_setup_gpu_tuning(state);
}
static int teardown_gpu(void **state)
{
    max_width = 20;
    return th_teardown_gpu_tuning(state);
}
/* The shared-memory lane sums at every lane count. */
static int setup_gpu_no_subgroups(void **state)
{
    th_force_no_subgroups(true);
    return setup_gpu(state);
}
static int teardown_gpu_no_subgroups(void **state)
{
    th_force_no_subgroups(false);
    return teardown_gpu(state);
}
/* The mali profile: a budget of 64 live values, so more lanes per key or
 * row. */
static int setup_gpu_mali(void **state)
{
    return th_setup_gpu_tuning_profile(state, "mali");
}

int main(void)
{
    const struct CMUnitTest tests[] = {TU_TESTS(
        test_random_chained, test_random_fused, test_window, test_corners, test_bad_arguments,
        test_kernel_choice, test_bad_dtypes)};
    /* The GPU tuning's kernels in every CI pass (CI's second pass runs the
     * groups above under the GPU tuning as well). */
    const struct CMUnitTest gpu[] = {TU_TESTS(test_random_fused_few, test_gpu_lanes)};
    const struct CMUnitTest lanes[] = {cmocka_unit_test(test_gpu_lanes)};
    int failed = TH_RUN_WITH_MOBILE("sdpa backward", tests);
    failed += cmocka_run_group_tests_name("sdpa backward, GPU tuning", gpu, setup_gpu,
                                          teardown_gpu);
    failed += cmocka_run_group_tests_name("sdpa backward, GPU tuning, no subgroups", lanes,
                                          setup_gpu_no_subgroups, teardown_gpu_no_subgroups);
    return failed + cmocka_run_group_tests_name("sdpa backward, GPU tuning, mali", lanes,
                                                setup_gpu_mali, teardown_gpu);
}
