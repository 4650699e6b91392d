/* The public head ops (vkattn/head_op.h) against vkattn_reference_head_op:
 * each op on random small shapes (batch 1, seq != heads, odd dim for the
 * norms, rotary_dim < dim, both layouts, with and without positions, f16 x
 * once, in place once, into an app's command buffer once), outputs
 * poisoned with NaN first; ROPE then
 * ROPE_INVERSE gives x back; bad arguments to both entries name the field.
 * Bounds (docs/SEMANTICS.md, "QK-norm and rotary embeddings"), relative to
 * max(max|ref|, 1): the norm 2e-5 (fp32 sums over a row of <= 33); the
 * rotation 2e-5 at positions below 64, 2e-3 up to 4096 (the fp32 angle's
 * p * 2^-23 rad); f16 out one f16 epsilon (2^-10) more; the backward 1e-4
 * relative to max(max|ref|, 0.01) (grad_weight sums up to 150 rows). */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct hcase {
    vkattn_head_op_params p;
    bool positions, big_positions, f16, in_place;
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
    if (!(err <= bound))
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
    if (c->f16)
        th_round_f16(x, n);
    const vkattn_dtype xt = c->f16 ? VKATTN_DTYPE_F16 : VKATTN_DTYPE_F32;
    vkattn_tensor *tx = th_typed_tensor(ctx, n, xt, x), *tw = th_tensor(ctx, p->dim, w),
                  *tp = c->positions ? th_tensor(ctx, np, pos) : NULL;
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
             c->positions, c->big_positions ? " (to 4096)" : "", c->f16 ? " f16" : "",
             c->in_place ? " in place" : c->app_cmd ? " app command buffer" : "");
    const double bound = (c->big_positions ? 2e-3 : 2e-5) + (c->f16 ? 1.0 / 1024 : 0.0);
    float *got = th_download(bwd ? io.grad_x : tout, n);
    if (bwd) {
        check(what, "grad_x", got, ref, n, 0.01, 1e-4);
        float *gw = th_download(tgw, p->dim);
        check(what, "grad_weight", gw, ref_w, p->dim, 0.01, 1e-4);
        free(gw);
    } else {
        check(what, "out", got, ref, n, 1.0, bound);
    }
    if (p->op == VKATTN_HEAD_ROPE && !c->f16) { /* turned back: x again (the same fp32 angles) */
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
    hcase f16 = {.p = {.op = VKATTN_HEAD_RMS_NORM, .batch = 1, .heads = 3, .seq = 2, .dim = 7},
                 .f16 = true};
    run_case(ctx, &f16);
    f16.p.op = VKATTN_HEAD_ROPE, f16.p.dim = 8, f16.positions = true;
    run_case(ctx, &f16);
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

#define EXPECT(code, call, word)                                                                  \
    do {                                                                                          \
        assert_int_equal((call), (code));                                                         \
        if (!strstr(vkattn_last_error(), (word)))                                                 \
            fail_msg("%s: message \"%s\" does not name %s", #call, vkattn_last_error(), (word));  \
    } while (0)

static void test_bad_arguments(void **state)
{
    vkattn_context *ctx = TH_CTX(state);
    const uint32_t n = 2 * 3 * 4;
    vkattn_tensor *x = th_tensor(ctx, n, NULL), *out = th_tensor(ctx, n, NULL),
                  *small = th_tensor(ctx, n - 1, NULL), *w = th_tensor(ctx, 4, NULL),
                  *pos = th_tensor(ctx, 6, NULL), *g = th_tensor(ctx, n, NULL),
                  *gw = th_tensor(ctx, 4, NULL);
    const vkattn_head_op_params norm = {.op = VKATTN_HEAD_RMS_NORM, .batch = 2, .heads = 1,
                                        .seq = 3, .dim = 4};
    vkattn_head_op_params rope = norm, bwd = norm;
    rope.op = VKATTN_HEAD_ROPE;
    bwd.op = VKATTN_HEAD_RMS_NORM_BACKWARD;
    const vkattn_head_op_io nio = {.x = x, .out = out, .weight = w};
    const vkattn_head_op_io rio = {.x = x, .out = out, .positions = pos};
    const vkattn_head_op_io bio = {.x = x, .weight = w, .grad_out = g, .grad_x = out,
                                   .grad_weight = gw};
    const int INV = VKATTN_ERROR_INVALID_ARGUMENT;
    float hx[24] = {0}, hout[24], hw[4] = {1, 1, 1, 1}, hpos[6] = {0};
    const vkattn_head_op_host_io hnio = {.x = hx, .out = hout, .weight = hw};
    /* the params: both entries, the same words */
    struct {
        vkattn_head_op_params p;
        const vkattn_head_op_io *io;
        const vkattn_head_op_host_io *hio;
        int code;
        const char *word;
    } pc[] = {
        {norm, &nio, &hnio, INV, "params->op"},
        {norm, &nio, &hnio, INV, "params->seq"},
        {norm, &nio, &hnio, INV, "params->epsilon"},
        {norm, &nio, &hnio, INV, "params->epsilon"},
        {rope, &rio, NULL, INV, "params->rope.rotary_dim"},
        {rope, &rio, NULL, INV, "params->rope.rotary_dim"},
        {rope, &rio, NULL, INV, "params->rope.max_wavelength"},
        {rope, &rio, NULL, INV, "params->rope.scaling_factor"},
        {rope, &rio, NULL, INV, "params->rope.layout"},
        {norm, &nio, &hnio, VKATTN_ERROR_SIZE_OVERFLOW, "overflows"},
    };
    pc[0].p.op = (vkattn_head_op)7;
    pc[1].p.seq = 0;
    pc[2].p.epsilon = -1.0f;
    pc[3].p.epsilon = NAN;
    pc[4].p.rope.rotary_dim = 3;
    pc[5].p.rope.rotary_dim = 6;
    pc[6].p.rope.max_wavelength = 0.5f;
    pc[7].p.rope.scaling_factor = -1.0f;
    pc[8].p.rope.layout = (vkattn_rope_layout)5;
    pc[9].p.batch = pc[9].p.heads = pc[9].p.seq = pc[9].p.dim = UINT32_MAX;
    const vkattn_head_op_host_io hrio = {.x = hx, .out = hout, .positions = hpos};
    for (size_t i = 0; i < sizeof pc / sizeof pc[0]; i++) {
        EXPECT(pc[i].code, vkattn_head_op_record(ctx, VKATTN_RUN_NOW, &pc[i].p, pc[i].io),
               pc[i].word);
        EXPECT(pc[i].code, vkattn_reference_head_op(&pc[i].p, pc[i].hio ? pc[i].hio : &hrio),
               pc[i].word);
    }
    EXPECT(INV, vkattn_head_op_record(ctx, VKATTN_RUN_NOW, NULL, &nio), "params");
    EXPECT(INV, vkattn_head_op_record(ctx, VKATTN_RUN_NOW, &norm, NULL), "io");
    EXPECT(INV, vkattn_head_op_record(NULL, VKATTN_RUN_NOW, &norm, &nio), "ctx");
    EXPECT(INV, vkattn_reference_head_op(NULL, &hnio), "params");
    EXPECT(INV, vkattn_reference_head_op(&norm, NULL), "io");
    /* the tensors */
    struct {
        const vkattn_head_op_params *p;
        vkattn_head_op_io io;
        const char *word;
    } ic[] = {
        {&norm, {.x = small, .out = out, .weight = w}, "io->x"},
        {&norm, {.x = x, .out = small, .weight = w}, "io->out"},
        {&norm, {.x = x, .out = out}, "io->weight"},
        {&norm, {.x = x, .out = out, .weight = w, .positions = pos}, "io->positions"},
        {&norm, {.x = x, .out = out, .weight = w, .grad_out = g}, "io->grad_out"},
        {&rope, {.x = x, .out = out, .weight = w}, "io->weight"},
        {&rope, {.x = x, .out = out, .positions = gw}, "io->positions"},
        {&rope, {.x = x, .out = g, .positions = g}, "io->out"},
        {&bwd, {.x = x, .out = out, .weight = w, .grad_out = g, .grad_x = out, .grad_weight = gw},
         "io->out"},
        {&bwd, {.x = x, .weight = w, .grad_out = g, .grad_x = x, .grad_weight = gw}, "io->grad_x"},
        {&bwd, {.x = x, .weight = w, .grad_out = g, .grad_x = out, .grad_weight = w},
         "io->grad_weight"},
        {&bwd, {.x = x, .weight = w, .grad_out = g, .grad_x = out}, "io->grad_weight"},
    };
    for (size_t i = 0; i < sizeof ic / sizeof ic[0]; i++)
        EXPECT(INV, vkattn_head_op_record(ctx, VKATTN_RUN_NOW, ic[i].p, &ic[i].io), ic[i].word);
    float hg[24] = {0}, hgw[4];
    struct {
        const vkattn_head_op_params *p;
        vkattn_head_op_host_io io;
        const char *word;
    } hc[] = {
        {&norm, {.x = hx, .out = hout}, "io->weight"},
        {&norm, {.x = hx, .out = hout, .weight = hw, .positions = hpos}, "io->positions"},
        {&rope, {.x = hx, .out = hg, .positions = hg}, "io->out"},
        {&bwd, {.x = hx, .weight = hw, .grad_out = hg, .grad_x = hx, .grad_weight = hgw},
         "io->grad_x"},
        {&bwd, {.x = hx, .out = hout, .weight = hw, .grad_out = hg, .grad_x = hg,
                .grad_weight = hgw},
         "io->out"},
    };
    for (size_t i = 0; i < sizeof hc / sizeof hc[0]; i++)
        EXPECT(INV, vkattn_reference_head_op(hc[i].p, &hc[i].io), hc[i].word);
    /* the good calls of the same tensors pass, in every record mode */
    TH_OK(ctx, vkattn_head_op_record(ctx, VKATTN_PREPARE, &norm, &nio));
    TH_OK(ctx, vkattn_head_op_record(ctx, VKATTN_PREPARE, &rope, &rio));
    TH_OK(ctx, vkattn_head_op_record(ctx, VKATTN_PREPARE, &bwd, &bio));
    th_assert_validation_clean();
    vkattn_tensor_destroy(x), vkattn_tensor_destroy(out), vkattn_tensor_destroy(small);
    vkattn_tensor_destroy(w), vkattn_tensor_destroy(pos), vkattn_tensor_destroy(g);
    vkattn_tensor_destroy(gw);
}

int main(void)
{
    tu_seed();
    const struct CMUnitTest tests[] = {TU_TESTS(test_head_ops, test_bad_arguments)};
    return cmocka_run_group_tests(tests, th_setup, th_teardown);
}
