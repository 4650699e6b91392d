/* The public head ops (vkattn/head_op.h) against vkattn_reference_head_op:
 * each op on random small shapes (batch 1, seq != heads, odd dim for the
 * norms, rotary_dim < dim, both layouts, with and without positions, f16 and
 * bf16 x once each, in place once, into an app's command buffer once), outputs
 * poisoned with NaN first; ROPE then
 * ROPE_INVERSE gives x back; bad arguments to both entries name the field.
 * Bounds (docs/SEMANTICS.md, "QK-norm and rotary embeddings"), relative to
 * max(max|ref|, 1): the norm 2e-5 (fp32 sums over a row of <= 33); the
 * rotation 2e-5 at positions below 64, 2e-3 up to 4096 (the fp32 angle's
 * p * 2^-23 rad); f16 out one f16 epsilon (2^-10) more (the device rounds);
 * bf16 out half a bf16 spacing, 2^-8 of |out|, more on the f32 result's error
 * (vkattn rounds it itself, to nearest even); the backward 1e-4
 * relative to max(max|ref|, 0.01) (grad_weight sums up to 150 rows). */
#include "op_table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct hcase {
    vkattn_head_op_params p;
    bool positions, big_positions, in_place;
    vkattn_dtype dt; /* of x and out (0: f32) */
    bool app_cmd; /* recorded into a command buffer of the app's, submitted after */
} hcase;

static double rel_err(const float *got, const float *ref, size_t n, double floor)
{
    double err = 0.0, scale = floor;
    for (size_t i = 0; i < n; i++) {
        scale = fmax(scale, fabs((double)ref[i]));
        const double e = fabs((double)got[i] - (double)ref[i]);
        err = isnan(got[i]) ? INFINITY : fmax(err, e);
    }
    return err / scale;
}

static void check(const char *what, const char *part, const float *got, const float *ref,
                  size_t n, double floor, double bound)
{
    const double err = rel_err(got, ref, n, floor);
    if (!TU_WITHIN(err, bound))
        fail_msg("%s: %s error %.3g exceeds %.3g", what, part, err, bound);
}

static void run_case(vkattn_context *ctx, const hcase *c)
{
    const vkattn_head_op_params *p = &c->p;
    const size_t n = (size_t)p->batch * p->heads * p->seq * p->dim, np = (size_t)p->batch * p->seq;
    float *x = tu_floats(n), *w = tu_floats(p->dim), *pos = tu_floats(np), *g = tu_floats(n);
    float *ref = tu_floats(n), *ref_w = tu_floats(p->dim);
    tu_fill_uniform(x, n, -2, 2);
    tu_fill_uniform(w, p->dim, 0.5f, 1.5f);
    tu_fill_uniform(g, n, -1, 1);
    for (size_t i = 0; i < np; i++)
        pos[i] = (float)tu_rand_range(0, c->big_positions ? 4095 : 63);
    const vkattn_dtype xt = c->dt;
    vkattn_tensor *tx = th_typed_tensor(ctx, n, xt, x), *tw = th_tensor(ctx, p->dim, w),
                  *tp = c->positions ? th_tensor(ctx, np, pos) : NULL;
    if (xt != VKATTN_DTYPE_F32) { /* the values the 16-bit x holds, for the reference */
        float *held = th_download(tx, n);
        memcpy(x, held, n * sizeof *x);
        free(held);
    }
    vkattn_tensor *tout = c->in_place ? tx : th_typed_tensor(ctx, n, xt, NULL);
    vkattn_tensor *tg = NULL, *tgw = NULL;
    const bool norm = p->op == VKATTN_HEAD_RMS_NORM || p->op == VKATTN_HEAD_RMS_NORM_BACKWARD;
    const bool bwd = p->op == VKATTN_HEAD_RMS_NORM_BACKWARD;
    vkattn_head_op_io io = {.x = tx, .weight = norm ? tw : NULL, .positions = norm ? NULL : tp};
    vkattn_head_op_host_io hio = {.x = x, .weight = norm ? w : NULL,
                                  .positions = c->positions && !norm ? pos : NULL};
    if (bwd) {
        tg = th_tensor(ctx, n, g);
        tgw = th_tensor(ctx, p->dim, NULL);
        io.grad_out = tg, io.grad_x = c->in_place ? tg : tout, io.grad_weight = tgw;
        hio.grad_out = g, hio.grad_x = ref, hio.grad_weight = ref_w;
        if (c->in_place)
            tout = NULL;
    } else {
        io.out = tout;
        hio.out = ref;
    }
    TH_OK(NULL, vkattn_reference_head_op(p, &hio));
    if (c->app_cmd) {
        VkCommandBuffer cmd;
        TH_OK(ctx, vkattn_context_begin_commands(ctx, &cmd));
        TH_OK(ctx, vkattn_head_op_record(ctx, cmd, p, &io));
        TH_OK(ctx, vkattn_context_submit_and_wait(ctx, cmd));
    } else {
        TH_OK(ctx, vkattn_head_op_record(ctx, VKATTN_RUN_NOW, p, &io));
    }
    char what[200];
    snprintf(what, sizeof what,
             "op %d B=%u H=%u T=%u d=%u rotary_dim=%u layout=%d positions=%d%s%s%s", (int)p->op,
             p->batch, p->heads, p->seq, p->dim, p->rope.rotary_dim, (int)p->rope.layout,
             c->positions, c->big_positions ? " (to 4096)" : "",
             xt == VKATTN_DTYPE_F32   ? ""
             : xt == VKATTN_DTYPE_F16 ? " f16"
                                      : " bf16",
             c->in_place ? " in place" : c->app_cmd ? " app command buffer" : "");
    const double f32_bound = c->big_positions ? 2e-3 : 2e-5;
    const double bound = xt == VKATTN_DTYPE_F16    ? f32_bound + 1.0 / 1024
                         : xt == VKATTN_DTYPE_BF16 ? f32_bound * (1 + 1.0 / 256) + 1.0 / 256
                                                   : f32_bound;
    float *got = th_download(bwd ? io.grad_x : tout, n);
    if (bwd) {
        check(what, "grad_x", got, ref, n, 0.01, 1e-4);
        float *gw = th_download(tgw, p->dim);
        check(what, "grad_weight", gw, ref_w, p->dim, 0.01, 1e-4);
        free(gw);
    } else {
        check(what, "out", got, ref, n, 1.0, bound);
    }
    if (p->op == VKATTN_HEAD_ROPE && xt == VKATTN_DTYPE_F32) { /* turned back: x again (the same fp32 angles) */
        vkattn_head_op_params inv = *p;
        inv.op = VKATTN_HEAD_ROPE_INVERSE;
        vkattn_tensor *back = th_tensor(ctx, n, NULL);
        TH_OK(ctx, vkattn_head_op_record(ctx, VKATTN_RUN_NOW, &inv,
                                         &(vkattn_head_op_io){.x = tout, .out = back,
                                                              .positions = tp}));
        float *xb = th_download(back, n);
        check(what, "ROPE then ROPE_INVERSE vs x", xb, x, n, 1.0, 2e-6);
        free(xb);
        vkattn_tensor_destroy(back);
    }
    th_assert_validation_clean();
    free(got);
    if (tout != tx)
        vkattn_tensor_destroy(tout);
    vkattn_tensor_destroy(tx), vkattn_tensor_destroy(tw), vkattn_tensor_destroy(tp);
    vkattn_tensor_destroy(tg), vkattn_tensor_destroy(tgw);
    free(x), free(w), free(pos), free(g), free(ref), free(ref_w);
}

static hcase random_case(vkattn_head_op op)
{
    const bool rope = op == VKATTN_HEAD_ROPE || op == VKATTN_HEAD_ROPE_INVERSE;
    hcase c = {.p = {.op = op, .batch = tu_rand_range(1, 2), .heads = tu_rand_range(1, 3),
                     .seq = tu_rand_range(1, 9), .dim = tu_rand_range(1, 16) * (rope ? 2 : 1) +
                                                         (rope ? 0 : 1)}};
    if (rope) {
        c.p.rope.rotary_dim = 2 * tu_rand_range(1, c.p.dim / 2);
        c.p.rope.layout = (vkattn_rope_layout)tu_rand_range(0, 1);
        c.positions = tu_rand_range(0, 1);
    } else {
        c.p.epsilon = tu_rand_range(0, 1) ? 1e-5f : 0.0f;
    }
    return c;
}

static void test_head_ops(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    for (vkattn_head_op op = VKATTN_HEAD_RMS_NORM; op <= VKATTN_HEAD_ROPE_INVERSE; op++)
        for (int i = 0; i < 3; i++) {
            hcase c = random_case(op);
            run_case(ctx, &c);
        }
    /* batch 1, seq != heads, rotary_dim < dim, each layout, positions to 4096 */
    for (int layout = 0; layout < 2; layout++) {
        hcase c = {.p = {.op = VKATTN_HEAD_ROPE, .batch = 1, .heads = 2, .seq = 5, .dim = 12,
                         .rope = {.rotary_dim = 8, .layout = (vkattn_rope_layout)layout,
                                  .max_wavelength = 500.0f, .scaling_factor = 2.0f}},
                   .positions = true, .big_positions = true};
        run_case(ctx, &c);
    }
    static const vkattn_dtype narrow[] = {VKATTN_DTYPE_F16, VKATTN_DTYPE_BF16};
    for (int t = 0; t < 2; t++) {
        hcase h = {.p = {.op = VKATTN_HEAD_RMS_NORM, .batch = 1, .heads = 3, .seq = 2, .dim = 7},
                   .dt = narrow[t]};
        run_case(ctx, &h);
        h.p.op = VKATTN_HEAD_ROPE, h.p.dim = 8, h.positions = true;
        run_case(ctx, &h);
    }
    hcase in_place = {.p = {.op = VKATTN_HEAD_RMS_NORM, .batch = 2, .heads = 1, .seq = 3,
                            .dim = 9},
                      .in_place = true};
    run_case(ctx, &in_place);
    in_place.p.op = VKATTN_HEAD_RMS_NORM_BACKWARD;
    run_case(ctx, &in_place);
    in_place.p.op = VKATTN_HEAD_ROPE, in_place.p.dim = 10;
    run_case(ctx, &in_place);
    /* a rope never used before: its table is made while the app records */
    hcase app = {.p = {.op = VKATTN_HEAD_ROPE_INVERSE, .batch = 2, .heads = 3, .seq = 4,
                       .dim = 6, .rope = {.max_wavelength = 777.0f}},
                 .positions = true, .app_cmd = true};
    run_case(ctx, &app);
    app.p.op = VKATTN_HEAD_RMS_NORM_BACKWARD;
    run_case(ctx, &app);
}

/* Bad arguments as "change one field" rows over one valid call per op: the
 * device and host io of that call, and spare tensors a spoil may put in. */
typedef struct hargs {
    vkattn_head_op_params p;
    vkattn_head_op_io io;
    vkattn_head_op_host_io hio;
    vkattn_tensor *small, *g, *gw, *w, *pos; /* spares: n - 1, n, 4, 4, 6 elements */
    float *hx, *hout, *hg, *hpos;
} hargs;

static vkattn_result dev_call(vkattn_context *ctx, void *v)
{
    const hargs *a = v;
    return vkattn_head_op_record(ctx, VKATTN_RUN_NOW, &a->p, &a->io);
}

static vkattn_result ref_call(vkattn_context *ctx, void *v)
{
    (void)ctx;
    const hargs *a = v;
    return vkattn_reference_head_op(&a->p, &a->hio);
}

#define INV VKATTN_ERROR_INVALID_ARGUMENT
/* the params: both entries, the same words */
TH_SPOIL(hargs, bad_op, INV, "params->op", a->p.op = (vkattn_head_op)7)
TH_SPOIL(hargs, no_seq, INV, "params->seq", a->p.seq = 0)
TH_SPOIL(hargs, neg_eps, INV, "params->epsilon", a->p.epsilon = -1.0f)
TH_SPOIL(hargs, nan_eps, INV, "params->epsilon", a->p.epsilon = NAN)
TH_SPOIL(hargs, huge, VKATTN_ERROR_SIZE_OVERFLOW, "overflows",
         a->p.batch = a->p.heads = a->p.seq = a->p.dim = UINT32_MAX)
static const th_spoil_fn norm_params[] = {bad_op, no_seq, neg_eps, nan_eps, huge};
TH_SPOIL(hargs, odd_rot, INV, "params->rope.rotary_dim", a->p.rope.rotary_dim = 3)
TH_SPOIL(hargs, big_rot, INV, "params->rope.rotary_dim", a->p.rope.rotary_dim = 6)
TH_SPOIL(hargs, short_wave, INV, "params->rope.max_wavelength", a->p.rope.max_wavelength = 0.5f)
TH_SPOIL(hargs, neg_scaling, INV, "params->rope.scaling_factor", a->p.rope.scaling_factor = -1)
TH_SPOIL(hargs, bad_layout, INV, "params->rope.layout", a->p.rope.layout = (vkattn_rope_layout)5)
static const th_spoil_fn rope_params[] = {odd_rot, big_rot, short_wave, neg_scaling, bad_layout};

/* the tensors */
TH_SPOIL(hargs, small_x, INV, "io->x", a->io.x = a->small)
TH_SPOIL(hargs, small_out, INV, "io->out", a->io.out = a->small)
TH_SPOIL(hargs, no_weight, INV, "io->weight", a->io.weight = NULL)
TH_SPOIL(hargs, with_positions, INV, "io->positions", a->io.positions = a->pos)
TH_SPOIL(hargs, with_grad_out, INV, "io->grad_out", a->io.grad_out = a->g)
static const th_spoil_fn norm_io[] = {small_x, small_out, no_weight, with_positions,
                                      with_grad_out};
TH_SPOIL(hargs, with_weight, INV, "io->weight", a->io.weight = a->w)
TH_SPOIL(hargs, short_positions, INV, "io->positions", a->io.positions = a->gw)
TH_SPOIL(hargs, out_is_positions, INV, "io->out", a->io.out = a->io.positions = a->g)
static const th_spoil_fn rope_io[] = {with_weight, short_positions, out_is_positions};
TH_SPOIL(hargs, with_out, INV, "io->out", a->io.out = a->g)
TH_SPOIL(hargs, grad_x_is_x, INV, "io->grad_x", a->io.grad_x = a->io.x)
TH_SPOIL(hargs, grad_weight_is_weight, INV, "io->grad_weight", a->io.grad_weight = a->io.weight)
TH_SPOIL(hargs, no_grad_weight, INV, "io->grad_weight", a->io.grad_weight = NULL)
static const th_spoil_fn bwd_io[] = {with_out, grad_x_is_x, grad_weight_is_weight,
                                     no_grad_weight};

/* the host arrays of the reference */
TH_SPOIL(hargs, h_no_weight, INV, "io->weight", a->hio.weight = NULL)
TH_SPOIL(hargs, h_with_positions, INV, "io->positions", a->hio.positions = a->hpos)
static const th_spoil_fn norm_hio[] = {h_no_weight, h_with_positions};
TH_SPOIL(hargs, h_out_is_positions, INV, "io->out", a->hio.positions = a->hio.out = a->hg)
static const th_spoil_fn rope_hio[] = {h_out_is_positions};
TH_SPOIL(hargs, h_grad_x_is_x, INV, "io->grad_x", a->hio.grad_x = a->hx)
TH_SPOIL(hargs, h_with_out, INV, "io->out", a->hio.out = a->hout)
static const th_spoil_fn bwd_hio[] = {h_grad_x_is_x, h_with_out};
#undef INV

static void test_bad_arguments(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const uint32_t n = 2 * 3 * 4;
    vkattn_tensor *x = th_tensor(ctx, n, NULL), *out = th_tensor(ctx, n, NULL);
    float hx[24] = {0}, hout[24], hw[4] = {1, 1, 1, 1}, hpos[6] = {0}, hg[24] = {0}, hgx[24],
          hgw[4];
    hargs norm = {.p = {.op = VKATTN_HEAD_RMS_NORM, .batch = 2, .heads = 1, .seq = 3, .dim = 4},
                  .small = th_tensor(ctx, n - 1, NULL), .g = th_tensor(ctx, n, NULL),
                  .gw = th_tensor(ctx, 4, NULL), .w = th_tensor(ctx, 4, NULL),
                  .pos = th_tensor(ctx, 6, NULL), .hx = hx, .hout = hout, .hg = hg,
                  .hpos = hpos};
    hargs rope = norm, bwd = norm;
    norm.io = (vkattn_head_op_io){.x = x, .out = out, .weight = norm.w};
    norm.hio = (vkattn_head_op_host_io){.x = hx, .out = hout, .weight = hw};
    rope.p.op = VKATTN_HEAD_ROPE;
    rope.io = (vkattn_head_op_io){.x = x, .out = out, .positions = norm.pos};
    rope.hio = (vkattn_head_op_host_io){.x = hx, .out = hout, .positions = hpos};
    bwd.p.op = VKATTN_HEAD_RMS_NORM_BACKWARD;
    bwd.io = (vkattn_head_op_io){.x = x, .weight = norm.w, .grad_out = norm.g, .grad_x = out,
                                 .grad_weight = norm.gw};
    bwd.hio = (vkattn_head_op_host_io){.x = hx, .weight = hw, .grad_out = hg, .grad_x = hgx,
                                       .grad_weight = hgw};
    TH_RUN_SPOILS(ctx, dev_call, norm, norm_params);
    TH_RUN_SPOILS(ctx, ref_call, norm, norm_params);
    TH_RUN_SPOILS(ctx, dev_call, rope, rope_params);
    TH_RUN_SPOILS(ctx, ref_call, rope, rope_params);
    TH_RUN_SPOILS(ctx, dev_call, norm, norm_io);
    TH_RUN_SPOILS(ctx, dev_call, rope, rope_io);
    TH_RUN_SPOILS(ctx, dev_call, bwd, bwd_io);
    TH_RUN_SPOILS(ctx, ref_call, norm, norm_hio);
    TH_RUN_SPOILS(ctx, ref_call, rope, rope_hio);
    TH_RUN_SPOILS(ctx, ref_call, bwd, bwd_hio);
    th_expect_invalid(vkattn_head_op_record(ctx, VKATTN_RUN_NOW, NULL, &norm.io), "params");
    th_expect_invalid(vkattn_head_op_record(ctx, VKATTN_RUN_NOW, &norm.p, NULL), "io");
    th_expect_invalid(vkattn_head_op_record(NULL, VKATTN_RUN_NOW, &norm.p, &norm.io), "ctx");
    th_expect_invalid(vkattn_reference_head_op(NULL, &norm.hio), "params");
    th_expect_invalid(vkattn_reference_head_op(&norm.p, NULL), "io");
    /* the valid calls pass in every record mode (th_run_spoils ran them now) */
    TH_OK(ctx, vkattn_head_op_record(ctx, VKATTN_PREPARE, &norm.p, &norm.io));
    TH_OK(ctx, vkattn_head_op_record(ctx, VKATTN_PREPARE, &rope.p, &rope.io));
    TH_OK(ctx, vkattn_head_op_record(ctx, VKATTN_PREPARE, &bwd.p, &bwd.io));
    th_assert_validation_clean();
    vkattn_tensor_destroy(x), vkattn_tensor_destroy(out), vkattn_tensor_destroy(norm.small);
    vkattn_tensor_destroy(norm.w), vkattn_tensor_destroy(norm.pos), vkattn_tensor_destroy(norm.g);
    vkattn_tensor_destroy(norm.gw);
}

int main(void)
{
    tu_seed();
    const struct CMUnitTest tests[] = {TU_TESTS(test_head_ops, test_bad_arguments)};
    return cmocka_run_group_tests(tests, th_setup, th_teardown);
}
