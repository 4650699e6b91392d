/* attnbench bench <layer> --backward, and mha --train-step: the layer
 * gradients of vkattn/layer_backward.h on the forward bench's layer and
 * inputs.
 *
 * --backward: setup runs the forward once with keep_for_backward (untimed);
 * the timed call is the backward alone, which may follow that one kept
 * forward any number of times. --check compares dL/d(query, key, value) and
 * every weight gradient with the CPU reference backward.
 *
 * --train-step (mha): the timed call is one whole training step recorded in
 * one command buffer: the forward keeping its state, the MSE loss against a
 * random target with its gradient, the backward into the weight gradients,
 * and one Adam step per weight tensor, updating the layer's own weights.
 * --check runs one step and compares its loss and weight gradients with the
 * CPU references at the weights the step started from.
 *
 * Flops (docs/ATTNBENCH.md): the backward counts 2x the forward's projection
 * flops and 2.5x its attention-core flops (as SDPA's backward does); a
 * training step counts the forward plus the backward (the loss and Adam are
 * elementwise, not counted). */
#include "common.h"
#include "layer_any.h"
#include "ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

struct ab_layer_bwd {
    ab_layer_fwd f;
    bool train;
    vkattn_layer_call call; /* the forward's, keeping state for the backward */
    uint32_t nslots;
    ab_weight_slot slots[AB_LAYER_WEIGHTS];
    ab_buf g, dq, dk, dv;        /* dL/d(output) in; input gradients out (--backward) */
    ab_buf dw[AB_LAYER_WEIGHTS]; /* weight gradients out */
    /* --train-step */
    ab_buf target, loss;
    vkattn_tensor *w[AB_LAYER_WEIGHTS]; /* the layer's own weight tensors */
    vkattn_tensor *opt_state[AB_LAYER_WEIGHTS], *opt_step[AB_LAYER_WEIGHTS];
    vkattn_optim_params adam;
};

void ab_layer_backward_destroy(ab_layer_bwd *s)
{
    if (!s)
        return;
    ab_buf *bufs[] = {&s->g, &s->dq, &s->dk, &s->dv, &s->target, &s->loss};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        ab_buf_free(bufs[i]);
    for (int i = 0; i < AB_LAYER_WEIGHTS; i++) {
        ab_buf_free(&s->dw[i]);
        vkattn_tensor_destroy(s->opt_state[i]);
        vkattn_tensor_destroy(s->opt_step[i]);
    }
    free(s);
}

static vkattn_layer_io io_of(const ab_layer_bwd *s)
{
    const ab_layer_fwd *f = &s->f;
    return (vkattn_layer_io){.query = f->q->t, .key = f->k->t, .value = f->v->t,
                             .value_mask = f->vmask->t, .output = f->out->t};
}

static vkattn_layer_grads grads_of(const ab_layer_bwd *s)
{
    return (vkattn_layer_grads){.grad_output = s->g.t, .grad_query = s->dq.t,
                                .grad_key = s->dk.t, .grad_value = s->dv.t};
}

static void dw_tensors(const ab_layer_bwd *s, vkattn_tensor *gw[AB_LAYER_WEIGHTS])
{
    for (int i = 0; i < AB_LAYER_WEIGHTS; i++)
        gw[i] = s->dw[i].t;
}

/* A buffer of src's shape and type (random in [-1, 1) with rng, rounded to
 * src's type, else undefined). */
static vkattn_result buf_like(vkattn_context *ctx, ab_buf *b, const ab_buf *src, ab_rng *rng)
{
    const vkattn_tensor_desc d = vkattn_tensor_get_info(src->t).desc;
    return ab_buf_make_as(ctx, b, d.rank, d.dims, rng, -1, 1, d.dtype);
}

static vkattn_result record_train_step(ab_layer_bwd *s, VkCommandBuffer cmd)
{
    vkattn_context *ctx = s->f.ctx;
    vkattn_layer_io io = io_of(s);
    vkattn_layer_grads g = {.grad_output = s->g.t};
    vkattn_tensor *gw[AB_LAYER_WEIGHTS];
    dw_tensors(s, gw);
    vkattn_mse_params mse = {.count = (uint32_t)s->g.n};
    vkattn_mse_io mio = {.pred = io.output, .target = s->target.t, .loss = s->loss.t,
                         .grad = s->g.t};
    vkattn_result r;
    if ((r = ab_layer_any_record(s->f.layer, cmd, &s->call, &io)) ||
        (r = vkattn_mse_record(ctx, cmd, &mse, &mio)) ||
        (r = ab_layer_any_backward_record(s->f.layer, cmd, &s->call, &io, &g, gw)))
        return r;
    for (uint32_t i = 0; i < s->nslots; i++) {
        if (!s->slots[i].n)
            continue;
        vkattn_optim_io o = {.count = (uint32_t)s->slots[i].n, .param = s->w[i],
                             .grad = gw[i], .state = s->opt_state[i], .step = s->opt_step[i]};
        if ((r = vkattn_optim_step_record(ctx, cmd, &s->adam, &o)))
            return r;
    }
    return VKATTN_SUCCESS;
}

vkattn_result ab_layer_backward_record(void *state, VkCommandBuffer cmd)
{
    ab_layer_bwd *s = state;
    if (s->train)
        return record_train_step(s, cmd);
    vkattn_layer_io io = io_of(s);
    vkattn_layer_grads g = grads_of(s);
    vkattn_tensor *gw[AB_LAYER_WEIGHTS];
    dw_tensors(s, gw);
    return ab_layer_any_backward_record(s->f.layer, cmd, &s->call, &io, &g, gw);
}

vkattn_result ab_layer_backward_prepare(ab_layer_bwd *s)
{
    vkattn_layer_io io = io_of(s);
    vkattn_layer_grads g = s->train ? (vkattn_layer_grads){.grad_output = s->g.t} : grads_of(s);
    vkattn_tensor *gw[AB_LAYER_WEIGHTS];
    dw_tensors(s, gw);
    vkattn_result r;
    if (s->train) {
        vkattn_mse_params mse = {.count = (uint32_t)s->g.n};
        vkattn_mse_io mio = {.pred = io.output, .target = s->target.t, .loss = s->loss.t,
                             .grad = s->g.t};
        if ((r = ab_layer_any_prepare(s->f.layer, &s->call, &io)) ||
            (r = vkattn_mse_record(s->f.ctx, VKATTN_PREPARE, &mse, &mio)))
            return r;
        for (uint32_t i = 0; i < s->nslots; i++) {
            vkattn_optim_io o = {.count = (uint32_t)s->slots[i].n, .param = s->w[i],
                                 .grad = gw[i], .state = s->opt_state[i],
                                 .step = s->opt_step[i]};
            if (s->slots[i].n && (r = vkattn_optim_step_record(s->f.ctx, VKATTN_PREPARE, &s->adam, &o)))
                return r;
        }
    }
    return ab_layer_any_backward_prepare(s->f.layer, &s->call, &io, &g, gw);
}

static int setup_train_step(ab_layer_bwd *s, ab_rng *rng)
{
    vkattn_context *ctx = s->f.ctx;
    uint32_t one = 1;
    vkattn_result r;
    if ((r = buf_like(ctx, &s->target, s->f.out, rng)) ||
        (r = ab_buf_make(ctx, &s->loss, 1, &one, NULL, 0, 0)))
        return ab_report(ctx, r, "mha --train-step: creating tensors");
    vkattn_mha_weight_tensors w;
    if ((r = vkattn_mha_get_weight_tensors(s->f.layer->handle.mha, &w)))
        return ab_report(ctx, r, "mha --train-step: the layer's weight tensors");
    vkattn_tensor *own[AB_LAYER_WEIGHTS] = {w.query_kernel, w.query_bias,   w.key_kernel,
                                            w.key_bias,     w.value_kernel, w.value_bias,
                                            w.output_kernel, w.output_bias, w.gate_kernel,
                                            w.gate_bias};
    for (uint32_t i = 0; i < s->nslots; i++) {
        s->w[i] = own[i];
        if (!s->slots[i].n)
            continue;
        /* a fresh Adam: zero moments, step 0 */
        uint32_t n2 = (uint32_t)(2 * s->slots[i].n), three = VKATTN_OPTIM_STEP_COUNT;
        if ((r = ab_tensor(ctx, 1, &n2, NULL, &s->opt_state[i])) ||
            (r = vkattn_tensor_fill(s->opt_state[i], 0.0f)) ||
            (r = ab_tensor(ctx, 1, &three, NULL, &s->opt_step[i])) ||
            (r = vkattn_tensor_fill(s->opt_step[i], 0.0f)))
            return ab_report(ctx, r, "mha --train-step: optimizer state");
    }
    s->adam = (vkattn_optim_params){.algorithm = VKATTN_OPTIM_ADAM, .lr = 1e-3f, .beta1 = 0.9f,
                                    .beta2 = 0.999f, .eps = 1e-8f};
    return ATTNBENCH_EXIT_OK;
}

int ab_layer_backward_setup(const ab_layer_fwd *f, bool train_step, uint64_t seed,
                            ab_layer_bwd **out, ab_op_info *info)
{
    vkattn_context *ctx = f->ctx;
    const char *what = train_step ? "--train-step" : "--backward";
    ab_layer_bwd *s = calloc(1, sizeof *s);
    if (!s)
        return ab_report(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, what);
    *out = s;
    s->f = *f;
    s->train = train_step;
    s->call = f->call;
    s->call.keep_for_backward = true;
    s->call.return_attention_scores = false;
    s->nslots = ab_layer_any_weight_slots(f->layer, s->slots);
    /* counts the calls take as 32 bits (a weight gradient's flat tensor, Adam's
     * two moments per weight, the MSE's count): the library's tensors already
     * bound them far below, but a cast must never wrap */
    bool fits = f->out->n <= UINT32_MAX;
    for (uint32_t i = 0; i < s->nslots; i++)
        fits = fits && s->slots[i].n <= UINT32_MAX / 2;
    if (!fits) {
        fprintf(stderr, "attnbench: %s: a weight past 2^31 - 1 or an output past 2^32 - 1 "
                        "elements does not fit the 32-bit counts of the gradient calls\n", what);
        return ATTNBENCH_EXIT_CHECK;
    }
    ab_rng rng = {seed ^ 0x9e3779b97f4a7c15u}; /* not the forward's inputs' stream */
    vkattn_result r = VKATTN_SUCCESS;
    for (uint32_t i = 0; i < s->nslots && !r; i++) {
        uint32_t n = (uint32_t)s->slots[i].n;
        if (n) /* the layer's type, as its weights */
            r = ab_buf_make_as(ctx, &s->dw[i], 1, &n, NULL, 0, 0,
                               f->dtype);
    }
    if (r || (r = buf_like(ctx, &s->g, f->out, train_step ? NULL : &rng)))
        return ab_report(ctx, r, what);
    const double proj = f->proj_flops, core = f->core_flops;
    const double in = (double)f->q->n + f->k->n + f->v->n + f->vmask->n;
    double weight_grads = 0;
    for (uint32_t i = 0; i < s->nslots; i++)
        weight_grads += (double)s->slots[i].n;
    if (train_step) {
        int st = setup_train_step(s, &rng);
        if (st)
            return st;
        info->train_step = true;
        info->flops = 3.0 * proj + 3.5 * core;
        /* inputs, output, target; weights read twice and written once, their
         * gradients written and read, Adam's two moments read and written */
        info->bytes = 4.0 * (in + f->out->n + s->target.n + 9.0 * weight_grads);
        return ATTNBENCH_EXIT_OK;
    }
    if ((r = buf_like(ctx, &s->dq, f->q, NULL)) || (r = buf_like(ctx, &s->dk, f->k, NULL)) ||
        (r = buf_like(ctx, &s->dv, f->v, NULL)))
        return ab_report(ctx, r, "--backward: creating tensors");
    vkattn_layer_io io = io_of(s);
    if ((r = ab_layer_any_run(f->layer, &s->call, &io)))
        return ab_report(ctx, r, "--backward: the forward keeping its state");
    info->backward = true;
    info->flops = 2.0 * proj + 2.5 * core;
    /* inputs and dL/d(output) read, their gradients written, weights read and
     * their gradients written: 2 bytes each under --dtype f16|bf16 (the mask
     * stays f32) */
    const double width = f->dtype != VKATTN_DTYPE_F32 ? 2.0 : 4.0;
    info->bytes = width * (2.0 * (in - f->vmask->n) + s->g.n + 2.0 * weight_grads) +
                  4.0 * f->vmask->n;
    return ATTNBENCH_EXIT_OK;
}

/* Gradients zero in exact arithmetic (softmax is shift-invariant): the
 * slots of the kind's zero_grad_slots (layer_kind.h). Their reference is
 * zero up to rounding, so their error is measured against the largest weight
 * gradient instead of their own. */
static bool identically_zero(const ab_layer_bwd *s, uint32_t slot)
{
    return (ab_layer_kind_of(s->f.layer->kind)->zero_grad_slots >> slot) & 1u;
}

static double max_abs(const float *x, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs((double)x[i]));
    return m;
}

static double worse(double err, double e) { return isnan(e) || e > err ? e : err; }

/* The weight gradients' part of *err: each gradient's max_rel_err. */
static double weight_grads_err(const ab_layer_bwd *s, float *const ref[AB_LAYER_WEIGHTS])
{
    double scale = 0, err = 0;
    for (uint32_t i = 0; i < s->nslots; i++)
        if (s->slots[i].n && !identically_zero(s, i))
            scale = fmax(scale, max_abs(ref[i], s->slots[i].n));
    for (uint32_t i = 0; i < s->nslots; i++) {
        const ab_buf *b = &s->dw[i];
        if (!b->n)
            continue;
        double e = identically_zero(s, i) ? ab_max_abs_err(b->host, ref[i], b->n) / scale
                                          : ab_max_rel_err(b->host, ref[i], b->n);
        err = worse(err, e);
    }
    return err;
}

/* Runs the recorded call once with every output poisoned, then downloads. */
static vkattn_result run_poisoned(ab_layer_bwd *s)
{
    ab_buf *outs[] = {&s->dq, &s->dk, &s->dv, &s->loss};
    vkattn_result r = VKATTN_SUCCESS;
    for (size_t i = 0; i < sizeof outs / sizeof outs[0] && !r; i++)
        if (outs[i]->t)
            r = vkattn_tensor_fill(outs[i]->t, NAN);
    for (int i = 0; i < AB_LAYER_WEIGHTS && !r; i++)
        if (s->dw[i].t)
            r = vkattn_tensor_fill(s->dw[i].t, NAN);
    if (!r)
        r = ab_run_once(s->f.ctx, ab_layer_backward_record, s);
    for (size_t i = 0; i < sizeof outs / sizeof outs[0] && !r; i++)
        if (outs[i]->t)
            r = vkattn_tensor_download(outs[i]->t, outs[i]->host, 0, outs[i]->n);
    for (int i = 0; i < AB_LAYER_WEIGHTS && !r; i++)
        if (s->dw[i].t)
            r = vkattn_tensor_download(s->dw[i].t, s->dw[i].host, 0, s->dw[i].n);
    return r;
}

/* --train-step --check: the reference step at the weights the step starts from. */
static vkattn_result reference_train_step(ab_layer_bwd *s, float *const rw[AB_LAYER_WEIGHTS],
                                          float *ref_loss)
{
    float *w[AB_LAYER_WEIGHTS] = {0};
    float *y = ab_floats(s->f.out->n), *dy = ab_floats(s->g.n);
    vkattn_result r = y && dy ? VKATTN_SUCCESS : VKATTN_ERROR_OUT_OF_HOST_MEMORY;
    for (uint32_t i = 0; i < s->nslots && !r; i++) {
        if (!s->slots[i].n)
            continue;
        if (!(w[i] = ab_floats(s->slots[i].n)))
            r = VKATTN_ERROR_OUT_OF_HOST_MEMORY;
        else
            r = vkattn_tensor_download(s->w[i], w[i], 0, s->slots[i].n);
    }
    ab_layer_any l = *s->f.layer;
    l.w.mha = (vkattn_mha_weights){w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9],
                                      w[10], w[11], w[12]};
    const ab_layer_fwd *f = &s->f;
    vkattn_layer_host_io io = {.query = f->q->host, .key = f->k->host, .value = f->v->host,
                               .value_mask = f->vmask->host, .output = y};
    vkattn_mse_params mse = {.count = (uint32_t)s->g.n};
    if (!r && !(r = ab_layer_any_reference(&l, &s->call, &io)) &&
        !(r = vkattn_reference_mse(&mse, y, s->target.host, ref_loss, dy)))
        r = ab_layer_any_reference_backward(&l, &s->call, &io, dy, NULL, rw);
    for (int i = 0; i < AB_LAYER_WEIGHTS; i++)
        free(w[i]);
    free(y), free(dy);
    return r;
}

int ab_layer_backward_check(vkattn_context *ctx, ab_layer_bwd *s, double *err)
{
    float *rw[AB_LAYER_WEIGHTS] = {0};
    float *rq = NULL, *rk = NULL, *rv = NULL, ref_loss = 0;
    int st = ATTNBENCH_EXIT_CHECK;
    bool ok = true;
    for (uint32_t i = 0; i < s->nslots; i++)
        if (s->slots[i].n)
            ok = ok && (rw[i] = ab_floats(s->slots[i].n)) != NULL;
    if (!s->train)
        ok = ok && (rq = ab_floats(s->dq.n)) && (rk = ab_floats(s->dk.n)) &&
             (rv = ab_floats(s->dv.n));
    if (!ok)
        goto done;
    vkattn_result r;
    if (s->train) {
        r = reference_train_step(s, rw, &ref_loss);
    } else {
        const ab_layer_fwd *f = &s->f;
        vkattn_layer_host_io io = {.query = f->q->host, .key = f->k->host, .value = f->v->host,
                                   .value_mask = f->vmask->host};
        vkattn_layer_host_grads hg = {.grad_query = rq, .grad_value = rv, .grad_key = rk};
        r = ab_layer_any_reference_backward(f->layer, &s->call, &io, s->g.host, &hg, rw);
    }
    if (r) {
        st = ab_report(NULL, r, "the layer backward reference");
        goto done;
    }
    if ((r = run_poisoned(s))) {
        st = ab_report(ctx, r, "--check run");
        goto done;
    }
    *err = weight_grads_err(s, rw);
    if (s->train) {
        *err = worse(*err, fabs((double)s->loss.host[0] - ref_loss) / fabs((double)ref_loss));
    } else {
        *err = worse(*err, ab_max_rel_err(s->dq.host, rq, s->dq.n));
        *err = worse(*err, ab_max_rel_err(s->dk.host, rk, s->dk.n));
        *err = worse(*err, ab_max_rel_err(s->dv.host, rv, s->dv.n));
    }
    st = ATTNBENCH_EXIT_OK;
done:
    for (int i = 0; i < AB_LAYER_WEIGHTS; i++)
        free(rw[i]);
    free(rq), free(rk), free(rv);
    return st;
}
