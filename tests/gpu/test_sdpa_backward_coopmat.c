/* The fused SDPA backward on cooperative-matrix fragments
 * (ops/flash_backward_coopmat.h), forced onto the emulated family
 * (coopmat_emulate under the GPU tuning), vs vkattn_reference_sdpa_backward.
 *
 * Random small shapes (random_case.h's draw: odd sizes, Tq != Tv, dk != dv,
 * batch 1 or 2, grouped heads, both causal alignments, both masked-row
 * policies, value mask, mask, bias, dropout), sizes off the 16-key and
 * 16-row fragments and the tiles; q, k, v, grad_out f16 (the kernels' case),
 * out, lse and the gradients f32, the gradients poisoned with NaN first. Run
 * twice: the library's tiles, and the forced flash_coopmat variant 4 (two
 * warps, 16-row/key tiles: several warps per workgroup; about 31 KiB of
 * shared memory at the widths drawn, within lavapipe's 32 KiB, so it always
 * fits there). Each run must create
 * the emulated backward pipeline (the kernels were taken): with 16-bit
 * storage the module reading f16 q, k, v and grad_out as they are, and no
 * half_convert pipeline (nothing of the forward or backward staged through
 * f32 scratch, as test_f16_staging.c counts it); without, the module reading
 * their staged f32 copies. Devices with
 * fewer than 10 storage buffers per shader (mobile-min) have no fused
 * backward: the test skips there. The same inputs with bf16 gradients must
 * not take the kernels (no emulated backward pipeline: a bf16 tensor stages
 * every operand into f32, which the f16 module would read as halves), and
 * hold test_sdpa_backward.c's bound: 1e-4 + 2^-7 (one bf16 spacing).
 *
 * Bound, per gradient, on max|got - ref| / scale (scale as
 * test_sdpa_backward.c's): 1e-4 (the f32 backward's bound: the f16
 * inputs are exact in f32) plus the roundings the kernels add, taken from
 * the reference forward's weights P (before dropout) and out O, ds the
 * dropout scale:
 *   A_ij = P_ij (ds |dO_i . V_j| + |D_i|), D_i = sum dO_i O_i, bounds |dS_ij|;
 *   dV_j: P keep rounded to f16: 2^-11 ds max|dO| sum_i P_ij;
 *   dK_j: dS rounded to f16 (2^-11 relative, 2^-25 below the normal range):
 *         |scale| max|Q| sum_i (2^-11 A_ij + 2^-25);
 *   dQ_i: |scale| max|K| sum_j (2^-11 A_ij + 2^-25);
 * sums over the rows (keys) that meet in one gradient element. */
#include "backward_coopmat_bound.h"
#include "harness.h"
#include "random_case.h"

#include <vkattn/advanced.h>
#include <vkattn/reference.h>
#include <vkattn/reference_backward.h>
#include <vkattn/sdpa.h>
#include <vkattn/sdpa_backward.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOUND32 1e-4
#define EPS_BF16 0x1p-7 /* test_sdpa_backward.c's bf16 row */
#define FLOOR 1e-2
#define JOINT_FLOOR 1e-1

typedef struct bcase {
    vkattn_sdpa_params p;
    uint32_t h, hkv, dv;
    size_t nq, nk, nv, no, nbias, nmask, nvm;
    float *q, *k, *v, *g, *bias, *mask, *vm;
    float *ref_dq, *ref_dk, *ref_dv;
    double xq, xk, xv; /* the roundings' bounds (header) */
} bcase;

static float *half_operand(size_t n)
{
    float *x = tu_floats(n);
    tu_fill_uniform(x, n, -1, 1);
    th_round_f16(x, n);
    return x;
}

static double max_abs(const float *x, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs((double)x[i]));
    return m;
}

/* The header's bounds of the f16 roundings of P and dS. */
static void rounding_bounds(bcase *c)
{
    const bcb_inputs in = {c->q, c->k, c->v, c->g, c->bias, c->vm, c->mask};
    bcb_bound(&c->p, &in, &c->xq, &c->xk, &c->xv);
}

/* The shared SDPA draw, small (lavapipe runs the emulated fragments slowly)
 * but past one tile of 16 and 32 rows and keys and one fragment of width. */
static bcase make_case(void)
{
    const rc_sdpa_bounds bounds = {.max_batch = 2, .max_kv_heads = 2, .max_t = 37, .max_d = 40};
    bcase c = {.p = rc_random_sdpa(&bounds)};
    const vkattn_sdpa_params *p = &c.p;
    c.h = p->heads, c.hkv = p->kv_heads, c.dv = p->dv ? p->dv : p->dk;
    c.nq = (size_t)p->batch * c.h * p->tq * p->dk;
    c.nk = (size_t)p->batch * c.hkv * p->tv * p->dk;
    c.nv = (size_t)p->batch * c.hkv * p->tv * c.dv;
    c.no = (size_t)p->batch * c.h * p->tq * c.dv;
    c.q = half_operand(c.nq), c.k = half_operand(c.nk);
    c.v = half_operand(c.nv), c.g = half_operand(c.no);
    const rc_sdpa_sides sides = rc_sdpa_side_inputs(p);
    c.bias = sides.bias, c.mask = sides.mask, c.vm = sides.vm;
    c.nbias = sides.nbias, c.nmask = sides.nmask, c.nvm = sides.nvm;
    c.ref_dq = tu_floats(c.nq), c.ref_dk = tu_floats(c.nk), c.ref_dv = tu_floats(c.nv);
    assert_int_equal(vkattn_reference_sdpa_backward(p, c.q, c.k, c.v, c.bias, c.vm, c.mask, c.g,
                                                    c.ref_dq, c.ref_dk, c.ref_dv),
                     VKATTN_SUCCESS);
    rounding_bounds(&c);
    return c;
}

static void free_case(bcase *c)
{
    free(c->q), free(c->k), free(c->v), free(c->g), free(c->bias), free(c->mask), free(c->vm);
    free(c->ref_dq), free(c->ref_dk), free(c->ref_dv);
}

static void check_grad(const char *what, const char *name, vkattn_tensor *t, const float *ref,
                       size_t n, double joint, double eps, double extra)
{
    float *got = th_download(t, n);
    const double floor_ = fmax(FLOOR, JOINT_FLOOR * joint);
    const double scale = fmax(max_abs(ref, n), floor_);
    const double bound = BOUND32 + eps + extra / scale;
    const double err = tu_max_rel_err(got, ref, n, floor_);
    if (!TU_WITHIN(err, bound))
        fail_msg("%s: %s: max relative error %.3g exceeds bound %.3g", what, name, err, bound);
    free(got);
}

static vkattn_tensor *f16_tensor(vkattn_context *ctx, const float *x, size_t n)
{
    return th_typed_tensor(ctx, n, VKATTN_DTYPE_F16, x);
}
static vkattn_tensor *f32_tensor(vkattn_context *ctx, const float *x, size_t n)
{
    return x ? th_tensor(ctx, n, x) : NULL;
}

/* Gradients of type gt: f32 (the kernels' rounding terms), or bf16 (off the
 * kernels: its rounding instead). */
static void run_case(vkattn_context *ctx, bcase *c, vkattn_dtype gt)
{
    const vkattn_sdpa_params *p = &c->p;
    const vkattn_mask_params *m = &p->mask;
    char what[300];
    snprintf(what, sizeof what,
             "B=%u H=%u Hkv=%u Tq=%u Tv=%u dk=%u dv=%u causal=%d row=%d vm=%d mask=%d bias=%d "
             "drop=%g",
             p->batch, c->h, c->hkv, p->tq, p->tv, p->dk, c->dv, (int)m->causal,
             (int)m->masked_row, m->has_value_mask, m->has_mask, m->has_bias,
             p->dropout.training ? (double)p->dropout.rate : 0.0);
    vkattn_sdpa_backward_io io = {
        .q = f16_tensor(ctx, c->q, c->nq), .k = f16_tensor(ctx, c->k, c->nk),
        .v = f16_tensor(ctx, c->v, c->nv), .grad_out = f16_tensor(ctx, c->g, c->no),
        .bias = f32_tensor(ctx, c->bias, c->nbias),
        .value_mask = f32_tensor(ctx, c->vm, c->nvm), .mask = f32_tensor(ctx, c->mask, c->nmask),
        .grad_q = th_typed_tensor(ctx, c->nq, gt, NULL),
        .grad_k = th_typed_tensor(ctx, c->nk, gt, NULL),
        .grad_v = th_typed_tensor(ctx, c->nv, gt, NULL),
        .out = th_tensor(ctx, c->no, NULL), .lse = th_tensor(ctx, c->no / c->dv, NULL),
    };
    vkattn_sdpa_params fp = *p;
    fp.path = VKATTN_SDPA_FUSED;
    const vkattn_sdpa_io fio = {.q = io.q, .k = io.k, .v = io.v, .bias = io.bias,
                                .value_mask = io.value_mask, .mask = io.mask, .out = io.out,
                                .lse = io.lse};
    TH_OK(ctx, vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &fp, &fio));
    TH_OK(ctx, vkattn_sdpa_backward_record(ctx, VKATTN_RUN_NOW, &fp, &io));
    const double joint = fmax(max_abs(c->ref_dq, c->nq),
                              fmax(max_abs(c->ref_dk, c->nk), max_abs(c->ref_dv, c->nv)));
    const bool bf16 = gt == VKATTN_DTYPE_BF16;
    const double eps = bf16 ? EPS_BF16 : 0.0, on = bf16 ? 0.0 : 1.0;
    check_grad(what, "grad_q", io.grad_q, c->ref_dq, c->nq, joint, eps, on * c->xq);
    check_grad(what, "grad_k", io.grad_k, c->ref_dk, c->nk, joint, eps, on * c->xk);
    check_grad(what, "grad_v", io.grad_v, c->ref_dv, c->nv, joint, eps, on * c->xv);
    th_assert_validation_clean();
    vkattn_tensor *all[] = {io.q, io.k, io.v, io.bias, io.value_mask, io.mask, io.grad_out,
                            io.grad_q, io.grad_k, io.grad_v, io.out, io.lse};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vkattn_tensor_destroy(all[i]);
}

/* `cases` random cases on the emulated family with flash_coopmat variant
 * `variant` (0: the library's tiles), gradients of type gt (run_case). */
static void run_cases(uint32_t variant, int cases, vkattn_dtype gt)
{
    vkattn_context_advanced adv = th_advanced();
    adv.tuning = VKATTN_TUNING_GPU;
    adv.coopmat_emulate = true;
    adv.cooperative_matrix = VKATTN_COOPMAT_AUTO;
    adv.variants[VKATTN_VARIANT_FLASH_COOPMAT] = variant;
    th_pipelines seen;
    vkattn_context *ctx = th_logged_context(&adv, &seen);
    vkattn_context_info info;
    TH_OK(ctx, vkattn_context_get_info(ctx, &info));
    if (info.max_storage_buffers_per_stage < 10 || !info.coopmat_attention) {
        vkattn_context_destroy(ctx); /* no fused backward, or no emulated tile (mobile-min) */
        skip();
    }
    for (int i = 0; i < cases; i++) {
        bcase c = make_case();
        run_case(ctx, &c, gt);
        free_case(&c);
    }
    vkattn_context_destroy(ctx);
    if (seen.count == sizeof seen.names / sizeof seen.names[0])
        fail_msg("more pipelines than th_pipelines holds: a staging pass could be missed");
    const bool native16 = info.storage_buffer_16bit;
    if (gt == VKATTN_DTYPE_BF16) {
        if (th_pipeline_seen(&seen, "flash_backward_f16_coopmat_emu", false) ||
            th_pipeline_seen(&seen, "flash_backward_coopmat_emu", false))
            fail_msg("a call with bf16 gradients took the cooperative-matrix backward");
        return;
    }
    assert_true(th_pipeline_seen(
        &seen, native16 ? "flash_backward_f16_coopmat_emu" : "flash_backward_coopmat_emu", false));
    if (native16 && th_pipeline_seen(&seen, "half_convert", false))
        fail_msg("an all-f16 call staged through f32 scratch (half_convert) on a device with "
                 "16-bit storage");
}

static void test_library_tiles(void **state)
{
    (void)TH_CTX(state);
    run_cases(0, 3, VKATTN_DTYPE_F32);
}

static void test_forced_variant(void **state)
{
    (void)TH_CTX(state);
    run_cases(4, 1, VKATTN_DTYPE_F32);
}

static void test_bf16_gradients(void **state)
{
    (void)TH_CTX(state);
    run_cases(0, 1, VKATTN_DTYPE_BF16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_library_tiles),
        cmocka_unit_test(test_forced_variant),
        cmocka_unit_test(test_bf16_gradients),
    };
    return cmocka_run_group_tests_name("SDPA backward on cooperative-matrix fragments", tests,
                                       th_setup, th_teardown);
}
