/* The shared part of the single-head layers' backward: the kept forward,
 * the checks, and the tail from raw scores to dL/dS (layer_backward_util.h). */
#include "layers/layer_backward_util.h"

#include <stdlib.h>

#include "core/check.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/dropout_host.h"
#include "ops/elementwise.h"
#include "ops/rowmask.h"
#include "shape/layer_shape.h"
#include "vk/tensor.h"
#include "vkattn/dropout.h"
#include "vkattn/matmul.h"
#include "vkattn/softmax.h"
#include "vkattn/softmax_backward.h"

/* ---------------------------------------------------------------- the kept forward */

vkattn_result vka_layer_keep(vkattn_context *ctx, const char *caller, vka_layer_kept **kept,
                             const vkattn_layer_call *call, const vkattn_layer_io *io)
{
    if (!call->keep_for_backward) {
        if (*kept)
            (*kept)->valid = false;
        return VKATTN_SUCCESS;
    }
    if (!*kept && !(*kept = calloc(1, sizeof **kept)))
        return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY,
                        "%s: out of host memory keeping the forward for the backward", caller);
    (*kept)->valid = true;
    (*kept)->call = *call;
    (*kept)->io = *io;
    return VKATTN_SUCCESS;
}

void vka_layer_kept_destroy(vka_layer_kept *kept)
{
    if (!kept)
        return;
    vka_scratch *all[] = {&kept->mask, &kept->weights, &kept->grads, &kept->q,
                          &kept->k,    &kept->dq,      &kept->dk,    &kept->dv,
                          &kept->vec,  &kept->dvec,    &kept->part1, &kept->part2,
                          &kept->dk_scaled};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        vka_scratch_release(all[i]);
    free(kept);
}

/* ---------------------------------------------------------------- checks */

/* The first field of the call or io that differs from the kept forward's,
 * NULL if none. */
static const char *kept_mismatch(const vka_layer_kept *k, const vkattn_layer_call *c,
                                 const vkattn_layer_io *io)
{
    const vkattn_layer_call *f = &k->call;
    const vkattn_layer_io *fi = &k->io;
    if (c->batch != f->batch)
        return "call->batch";
    if (c->tq != f->tq)
        return "call->tq";
    if (c->tv != f->tv)
        return "call->tv";
    if (c->causal != f->causal)
        return "call->causal";
    if (c->training != f->training)
        return "call->training";
    if (c->seed != f->seed)
        return "call->seed";
    if (c->offset != f->offset)
        return "call->offset";
    if (c->path != f->path)
        return "call->path";
    if (io->query != fi->query)
        return "io->query";
    if (io->value != fi->value)
        return "io->value";
    if (io->key != fi->key)
        return "io->key";
    if (io->query_mask != fi->query_mask)
        return "io->query_mask";
    if (io->value_mask != fi->value_mask)
        return "io->value_mask";
    if (io->attention_mask != fi->attention_mask ||
        io->attention_mask_per_head != fi->attention_mask_per_head)
        return "io->attention_mask";
    if (io->output != fi->output)
        return "io->output";
    return NULL;
}

static bool overlaps(const vkattn_tensor *a, const vkattn_tensor *b)
{
    return a && b && a->buffer == b->buffer && a->offset < b->offset + b->bytes &&
           b->offset < a->offset + a->bytes;
}

/* Every tensor of a backward call, named, for the aliasing check. */
enum { MAX_NAMED = 24 };
typedef struct named_list {
    const vkattn_tensor *t[MAX_NAMED];
    const char *name[MAX_NAMED];
    bool written[MAX_NAMED];
    uint32_t n;
} named_list;

static void add_named(named_list *l, const vkattn_tensor *t, const char *name, bool written)
{
    if (t && l->n < MAX_NAMED) {
        l->t[l->n] = t;
        l->name[l->n] = name;
        l->written[l->n++] = written;
    }
}

/* One gradient tensor: f32, or of the layer's dtype `dt` (f16 or bf16), of
 * exactly `count` elements (any rank;
 * rank >= 2 with the last dim `last`, 0 = any). */
static vkattn_result check_grad(vkattn_context *ctx, const char *caller, const vkattn_tensor *t,
                                uint64_t count, uint32_t last, const char *name, vkattn_dtype dt)
{
    if (t->ctx != ctx)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s belongs to another context",
                        caller, name);
    const bool narrow = dt != VKATTN_DTYPE_F32;
    if (t->dtype != VKATTN_DTYPE_F32 && t->dtype != dt)
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED,
                        "%s: %s is %s tensor; the backward of %s layer takes f32%s%s "
                        "gradients",
                        caller, name, vka_dtype_a_name(t->dtype), vka_dtype_a_name(dt),
                        narrow ? " or " : "", narrow ? vka_dtype_name(dt) : "");
    if (t->count != count)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s has %llu elements; must have %llu", caller, name,
                        (unsigned long long)t->count, (unsigned long long)count);
    if (last && t->rank >= 2 && t->dims[t->rank - 1] != last)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s has last dim %u; must be %u", caller, name, t->dims[t->rank - 1],
                        last);
    return VKATTN_SUCCESS;
}

vkattn_result vka_layer_backward_check(vkattn_context *ctx, const char *caller,
                                       const vka_layer_kept *kept, const vka_layer_shape *shape,
                                       const vkattn_layer_call *call, const vkattn_layer_io *io,
                                       const vkattn_layer_grads *grads, const vka_grad_slot *wg,
                                       uint32_t n_wg, const vka_named_tensor *weights,
                                       uint32_t n_weights, vka_mask_layout *mask)
{
    if (!call || !io || !grads)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", caller,
                        !call ? "call" : !io ? "io" : "grads");
    vkattn_result r; /* io's element types: as the forward's (shape->data_dtype) */
    if ((r = vka_layer_check_call(ctx, caller, call)) ||
        (r = vka_layer_check_io(ctx, caller, call, io, shape, mask)))
        return r;
    if (!kept || !kept->valid)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: no forward kept for the backward; record the layer's forward with "
                        "call->keep_for_backward = true first",
                        caller);
    const char *differs = kept_mismatch(kept, call, io);
    if (differs)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s differs from the kept forward's; the backward must follow a "
                        "forward with the same call and io",
                        caller, differs);
    if (!grads->grad_output)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: grads->grad_output is NULL",
                        caller);
    if (grads->grad_key && !io->key)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: grads->grad_key is given but io->key is NULL (the key is the "
                        "value: grads->grad_value gets both paths)",
                        caller);
    const uint64_t B = call->batch, rq = B * call->tq, rv = B * call->tv;
    const vka_grad_slot in[] = {
        {grads->grad_query, rq * shape->dq, "grads->grad_query"},
        {grads->grad_value, rv * shape->dv, "grads->grad_value"},
        {grads->grad_key, rv * shape->dk, "grads->grad_key"},
    };
    const uint32_t in_last[] = {shape->dq, shape->dv, shape->dk};
    const vkattn_dtype dt = shape->data_dtype;
    if ((r = check_grad(ctx, caller, grads->grad_output, rq * shape->dout, shape->dout,
                        "grads->grad_output", dt)))
        return r;
    bool wanted = false;
    for (size_t i = 0; i < 3; i++) {
        if (in[i].t && (r = check_grad(ctx, caller, in[i].t, in[i].count, in_last[i], in[i].name,
                                          dt)))
            return r;
        wanted |= in[i].t != NULL;
    }
    for (uint32_t i = 0; i < n_wg; i++) {
        if (!wg[i].t)
            continue;
        if (!wg[i].count)
            return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                            "%s: %s is given but the layer has no such weight", caller,
                            wg[i].name);
        if ((r = check_grad(ctx, caller, wg[i].t, wg[i].count, 0, wg[i].name, dt)))
            return r;
        wanted = true;
    }
    if (!wanted)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: no gradient is wanted (every gradient tensor is NULL)", caller);
    named_list l = {.n = 0};
    add_named(&l, io->query, "io->query", false);
    add_named(&l, io->value, "io->value", false);
    add_named(&l, io->key, "io->key", false);
    add_named(&l, io->query_mask, "io->query_mask", false);
    add_named(&l, io->value_mask, "io->value_mask", false);
    add_named(&l, io->attention_mask, "io->attention_mask", false);
    add_named(&l, io->output, "io->output", false);
    add_named(&l, io->scores, "io->scores", false);
    add_named(&l, grads->grad_output, "grads->grad_output", false);
    for (uint32_t i = 0; i < n_weights; i++)
        add_named(&l, weights[i].t, weights[i].name, false);
    for (size_t i = 0; i < 3; i++)
        add_named(&l, in[i].t, in[i].name, true);
    for (uint32_t i = 0; i < n_wg; i++)
        add_named(&l, wg[i].t, wg[i].name, true);
    for (uint32_t w = 0; w < l.n; w++)
        for (uint32_t i = 0; l.written[w] && i < l.n; i++)
            if (i != w && overlaps(l.t[w], l.t[i]))
                return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                                "%s: %s overlaps %s; a gradient must not share memory with "
                                "any other tensor of the call",
                                caller, l.name[w], l.name[i]);
    return VKATTN_SUCCESS;
}

/* ---------------------------------------------------------------- the tail */

vkattn_result vka_layer_tail_begin(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                   vka_layer_kept *kept, const vkattn_layer_call *call,
                                   const vkattn_layer_io *io, const vkattn_layer_grads *grads,
                                   const vka_mask_layout *mask, uint32_t dv, vka_layer_tail *tail)
{
    *tail = (vka_layer_tail){.grad_value = grads->grad_value};
    const uint64_t n = (uint64_t)call->batch * call->tq * call->tv; /* the io checks bounded it */
    vkattn_result r;
    if ((r = vka_scratch_get(ctx, caller, &kept->weights, n, &tail->weights)) ||
        (r = vka_scratch_get(ctx, caller, &kept->grads, n, &tail->scores)))
        return r;
    /* the value is also the key: its output-path gradient waits in scratch */
    if (!io->key && grads->grad_value &&
        (r = vka_scratch_get(ctx, caller, &kept->dv, (uint64_t)call->batch * call->tv * dv,
                             &tail->grad_value)))
        return r;
    return vka_layer_mask_record(ctx, cmd, caller, &kept->mask, call, io, mask, false, &tail->mask);
}

/* rows of the query axis whose query_mask is 0 become 0 in `t` (B*Tq rows
 * of `width`); nothing without a query mask. */
static vkattn_result query_rows(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                const vkattn_layer_call *call, const vkattn_layer_io *io,
                                uint32_t width, vkattn_tensor *t)
{
    if (!io->query_mask)
        return VKATTN_SUCCESS;
    /* the io checks bounded B*Tq*Tv and B*Tq*Dv by the device's buffer range */
    return vka_rowmask_record(ctx, cmd, caller, call->batch * call->tq, width, io->query_mask, t);
}

vkattn_result vka_layer_tail_backward(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                      vka_layer_kept *kept, const vkattn_layer_call *call,
                                      const vkattn_layer_io *io, const vkattn_layer_grads *grads,
                                      uint32_t dv, float rate, vka_layer_tail *tail)
{
    (void)kept;
    const uint32_t B = call->batch, tq = call->tq, tv = call->tv;
    const vkattn_softmax_params sp = {
        .batch = B, .heads = 1, .tq = tq, .tv = tv,
        .mask = vka_layer_mask_params(call, VKATTN_MASKED_ROW_UNIFORM, io->value_mask != NULL,
                                      tail->mask.tensor ? &tail->mask.broadcast : NULL),
    };
    vkattn_tensor *s = tail->scores, *w = tail->weights;
    /* W = softmax(S): the forward's weights, recomputed */
    const vkattn_softmax_io sio = {.scores = s, .value_mask = io->value_mask,
                                   .mask = tail->mask.tensor, .out = w};
    vkattn_result r = vkattn_softmax_record(ctx, cmd, &sp, &sio);
    if (r != VKATTN_SUCCESS)
        return r;
    /* Wd = dropout(W) into the gradient buffer (its next use writes it), or W
     * itself; query-masked rows zeroed: they never reach the output. Zeroing
     * W's rows is harmless: softmax' of a row whose dW is 0 is 0 anyway. */
    const vkattn_dropout_op_params dp = vka_layer_dropout_params(call, rate, 1);
    const bool dropout = vka_dropout_active(&dp.dropout);
    vkattn_tensor *wd = w;
    if (dropout) {
        const vkattn_dropout_io dio = {.in = w, .out = s};
        if ((r = vkattn_dropout_record(ctx, cmd, &dp, &dio)))
            return r;
        wd = s;
    }
    if ((r = query_rows(ctx, cmd, caller, call, io, tv, wd)))
        return r;
    /* dV[b] = Wd[b]^T (Tv x Tq) @ dO[b] (Tq x Dv) */
    if (tail->grad_value) {
        const vkattn_matmul_params mp = {
            .batch = B, .m = tv, .n = dv, .k = tq, .transpose_a = true,
            .a = {.batch_stride = (uint64_t)tq * tv},
            .b = {.batch_stride = (uint64_t)tq * dv},
        };
        const vkattn_matmul_io mio = {.a = wd, .b = grads->grad_output, .c = tail->grad_value};
        if ((r = vkattn_matmul_record(ctx, cmd, &mp, &mio)))
            return r;
    }
    /* dWd[b] = dO[b] (Tq x Dv) @ value[b]^T (Dv x Tv), masked rows zeroed */
    const vkattn_matmul_params mp = {
        .batch = B, .m = tq, .n = tv, .k = dv, .transpose_b = true,
        .a = {.batch_stride = (uint64_t)tq * dv},
        .b = {.batch_stride = (uint64_t)tv * dv},
    };
    const vkattn_matmul_io mio = {.a = grads->grad_output, .b = io->value, .c = s};
    if ((r = vkattn_matmul_record(ctx, cmd, &mp, &mio)) ||
        (r = query_rows(ctx, cmd, caller, call, io, tv, s)))
        return r;
    /* dW = dropout'(dWd), the same kept elements; dS = softmax'(W, dW) */
    if (dropout) {
        const vkattn_dropout_backward_io dbio = {.grad_out = s, .grad_in = s};
        if ((r = vkattn_dropout_backward_record(ctx, cmd, &dp, &dbio)))
            return r;
    }
    const vkattn_softmax_backward_io sbio = {.weights = w, .grad_out = s,
                                             .value_mask = io->value_mask,
                                             .mask = tail->mask.tensor, .grad_scores = s};
    return vkattn_softmax_backward_record(ctx, cmd, &sp, &sbio);
}

vkattn_result vka_layer_key_grad_target(vkattn_context *ctx, const char *caller,
                                        vka_layer_kept *kept, const vkattn_layer_call *call,
                                        const vkattn_layer_io *io,
                                        const vkattn_layer_grads *grads, uint32_t dk,
                                        vkattn_tensor **out)
{
    *out = io->key ? grads->grad_key : NULL;
    if (io->key || !grads->grad_value)
        return VKATTN_SUCCESS;
    return vka_scratch_get(ctx, caller, &kept->dk, (uint64_t)call->batch * call->tv * dk, out);
}

vkattn_result vka_layer_value_grad_finish(vkattn_context *ctx, VkCommandBuffer cmd,
                                          const char *caller, const vkattn_layer_call *call,
                                          const vkattn_layer_io *io,
                                          const vkattn_layer_grads *grads, uint32_t dv,
                                          const vka_layer_tail *tail, vkattn_tensor *key_grad)
{
    if (io->key || !grads->grad_value)
        return VKATTN_SUCCESS;
    return vka_add_record(ctx, cmd, caller, "grads->grad_value",
                          (uint64_t)call->batch * call->tv * dv, tail->grad_value, key_grad,
                          grads->grad_value);
}

vkattn_result vka_layer_dot_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                   uint64_t n, vkattn_tensor *a, vkattn_tensor *b,
                                   vkattn_tensor *out)
{
    if (n > UINT32_MAX)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: a scalar weight's gradient sums %llu products, beyond 32-bit "
                        "indexing",
                        caller, (unsigned long long)n);
    /* (1 x n) @ (n x 1) */
    const vkattn_matmul_params mp = {.m = 1, .n = 1, .k = (uint32_t)n};
    const vkattn_matmul_io mio = {.a = a, .b = b, .c = out};
    return vkattn_matmul_record(ctx, cmd, &mp, &mio);
}
