/* Gradients of scaled dot-product attention: argument and size checks, the
 * choice between the fused backward (ops/flash_backward.c) and the chained
 * one, the workspace, and the chained path: the forward's matmul -> softmax
 * recomputes W, then dropout, matmuls and the softmax backward through two
 * (B, H, Tq, Tv) tensors. Every check runs before anything is recorded or
 * allocated. */
#include "vkattn/sdpa_backward.h"

#include <stdlib.h>

#include "core/check.h"
#include "core/dropout_host.h"
#include "core/error.h"
#include "ops/flash_backward.h"
#include "ops/sdpa_shape.h"
#include "vk/context.h"
#include "vk/dispatch.h"
#include "vk/scratch.h"
#include "vk/tensor.h"
#include "vkattn/dropout.h"
#include "vkattn/matmul.h"
#include "vkattn/softmax.h"
#include "vkattn/softmax_backward.h"
#include "vk/record_mode.h"

/* Row statistics of the fused backward: (rowsum(dO * O), lse) per query row.
 * Cannot overflow: the q count, at least B*H*Tq, fits a binding. */
static uint64_t row_stats(const vka_sdpa_shape *s)
{
    return 2ull * s->batch * s->heads * s->tq;
}

/* The chained path's limits: score tensors in one binding, matmul grids
 * (matmul.c's smallest tile is 16 x 16). */
static vkattn_result check_chained(vkattn_context *ctx, const char *caller, const vka_sdpa_shape *s)
{
    const uint64_t range = vka_max_range(ctx);
    if (s->scores > range / sizeof(float))
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: the chained path's (B, H, Tq, Tv) = (%u, %u, %u, %u) tensors need "
                        "%llu bytes each; maxStorageBufferRange is %llu: use the fused path "
                        "(give io->lse from the fused forward), or split the batch or the heads",
                        caller, s->batch, s->heads, s->tq, s->tv,
                        (unsigned long long)(s->scores * sizeof(float)), (unsigned long long)range);
    const uint32_t *groups = ctx->info.max_workgroup_count;
    const uint64_t rows = (uint64_t)s->group * s->tq;
    uint64_t cols = s->tv > s->dv ? s->tv : s->dv;
    cols = cols > s->dk ? cols : s->dk;
    const uint64_t tall = rows > s->tv ? rows : s->tv;
    if ((uint64_t)s->batch * s->kv_heads > groups[2] || tall > 16ull * groups[1] ||
        cols > 16ull * groups[0])
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: the chained path's matmuls need more workgroups than the device "
                        "allows",
                        caller);
    return VKATTN_SUCCESS;
}

/* *fused: whether the fused backward serves this call. AUTO takes it whenever
 * the forward's lse is given and it can serve the call, under either tuning.
 * Under the CPU tuning that is measured (lavapipe: 5.2x faster than the
 * chained path at B1 H8 T1024 d64, docs/PERFORMANCE.md). Under the GPU tuning
 * it is an expectation from the design, not yet a measurement: the
 * CPU-shaped kernels lost 5.7x to the chained path on an H100 because they
 * spilled; the GPU-shaped ones keep within the register budget, touch O(T)
 * memory, and avoid the chained path's ~10 passes over two (B, H, Tq, Tv)
 * tensors. scripts/gpu-check.sh's fused and chained backward rows decide
 * whether the rule stays. */
static vkattn_result choose_fused(vkattn_context *ctx, const char *caller,
                                  const vkattn_sdpa_params *p, const vka_sdpa_shape *s,
                                  bool have_lse, bool *fused)
{
    const char *why = NULL;
    switch (p->path) {
    case VKATTN_SDPA_UNFUSED:
        *fused = false;
        return VKATTN_SUCCESS;
    case VKATTN_SDPA_AUTO:
        *fused = have_lse && vka_flash_backward_check(ctx, s, p, NULL) == VKATTN_SUCCESS;
        return VKATTN_SUCCESS;
    case VKATTN_SDPA_FUSED: {
        vkattn_result code = vka_flash_backward_check(ctx, s, p, &why);
        if (code != VKATTN_SUCCESS)
            return vka_fail(ctx, code,
                            "%s: params->path is VKATTN_SDPA_FUSED but the fused backward cannot "
                            "serve this call: %s",
                            caller, why ? why : "unsupported");
        *fused = true;
        return VKATTN_SUCCESS;
    }
    }
    return VKATTN_ERROR_INVALID_ARGUMENT; /* unreachable: vka_sdpa_resolve ran */
}

typedef struct bwd_plan {
    vka_sdpa_shape s;
    bool fused;
    uint64_t ws_floats; /* per workspace tensor */
    uint32_t ws_count;
} bwd_plan;

static vkattn_result plan(vkattn_context *ctx, const char *caller, const vkattn_sdpa_params *p,
                          bool have_lse, bool have_weights, bwd_plan *pl)
{
    *pl = (bwd_plan){0};
    vkattn_result r = vka_sdpa_resolve(ctx, caller, p, &pl->s);
    if (r == VKATTN_SUCCESS)
        r = choose_fused(ctx, caller, p, &pl->s, have_lse, &pl->fused);
    if (r == VKATTN_SUCCESS && !pl->fused)
        r = check_chained(ctx, caller, &pl->s);
    if (r != VKATTN_SUCCESS)
        return r;
    if (pl->fused) {
        pl->ws_floats = row_stats(&pl->s), pl->ws_count = 1;
        if (row_stats(&pl->s) > vka_max_range(ctx) / sizeof(float))
            return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                            "%s: the fused backward's row statistics (2 * B * H * Tq floats) "
                            "exceed maxStorageBufferRange",
                            caller);
    } else {
        pl->ws_floats = pl->s.scores, pl->ws_count = have_weights ? 1 : 2;
    }
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_sdpa_backward_workspace_size(vkattn_context *ctx,
                                                  const vkattn_sdpa_params *params, bool have_lse,
                                                  bool have_weights, uint64_t *floats,
                                                  uint32_t *count)
{
    if (!ctx || !floats || !count)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", __func__,
                        !ctx ? "ctx" : !floats ? "floats" : "count");
    bwd_plan pl;
    vkattn_result r = plan(ctx, __func__, params, have_lse, have_weights, &pl);
    if (r == VKATTN_SUCCESS)
        *floats = pl.ws_floats, *count = pl.ws_count;
    return r;
}

/* ---------------------------------------------------------------- tensors */

/* Written tensors (the gradients, the workspaces the call uses) must not alias
 * any other tensor of the call. */
static vkattn_result check_aliasing(vkattn_context *ctx, const char *caller,
                                    const vkattn_sdpa_backward_io *io, const bwd_plan *pl)
{
    const bool ws0 = pl->ws_count >= 1, ws1 = pl->ws_count >= 2;
    const vkattn_tensor *all[] = {
        io->q, io->k, io->v, io->bias, io->value_mask, io->mask, io->out, io->lse,
        io->weights, io->grad_out, io->grad_q, io->grad_k, io->grad_v,
        ws0 ? io->workspace[0] : NULL, ws1 ? io->workspace[1] : NULL};
    static const char *names[] = {
        "io->q", "io->k", "io->v", "io->bias", "io->value_mask", "io->mask", "io->out",
        "io->lse", "io->weights", "io->grad_out", "io->grad_q", "io->grad_k", "io->grad_v",
        "io->workspace[0]", "io->workspace[1]"};
    return vka_check_written_distinct(ctx, caller, all, names, sizeof all / sizeof all[0], 10);
}

static vkattn_result check_io(vkattn_context *ctx, const char *caller,
                              const vkattn_sdpa_params *p, const bwd_plan *pl,
                              const vkattn_sdpa_backward_io *io)
{
    const vka_sdpa_shape *s = &pl->s;
    vkattn_result r;
    if ((r = vka_tensor_check(ctx, io->q, s->q, caller, "io->q")) ||
        (r = vka_tensor_check(ctx, io->k, s->k, caller, "io->k")) ||
        (r = vka_tensor_check(ctx, io->v, s->v, caller, "io->v")) ||
        (r = vka_tensor_check(ctx, io->grad_out, s->out, caller, "io->grad_out")) ||
        (r = vka_tensor_check(ctx, io->grad_q, s->q, caller, "io->grad_q")) ||
        (r = vka_tensor_check(ctx, io->grad_k, s->k, caller, "io->grad_k")) ||
        (r = vka_tensor_check(ctx, io->grad_v, s->v, caller, "io->grad_v")) ||
        (r = vka_sdpa_check_masks(ctx, caller, p, s, io->bias, io->value_mask, io->mask)))
        return r;
    if (pl->fused &&
        ((r = vka_tensor_check(ctx, io->lse, row_stats(s) / 2, caller, "io->lse (required by the "
                                                                  "fused backward)")) ||
         (r = vka_tensor_check(ctx, io->out, s->out, caller, "io->out (required by the fused "
                                                            "backward)"))))
        return r;
    if (!pl->fused && io->weights &&
        (r = vka_tensor_check(ctx, io->weights, s->scores, caller, "io->weights")))
        return r;
    for (uint32_t i = 0; i < pl->ws_count; i++)
        if (io->workspace[i] &&
            (r = vka_tensor_check(ctx, io->workspace[i], pl->ws_floats, caller,
                                  i ? "io->workspace[1]" : "io->workspace[0]")))
            return r;
    return check_aliasing(ctx, caller, io, pl);
}

/* ---------------------------------------------------------------- chained */

/* One grouped matmul per (b, K/V head): the g = H / Hkv query heads sharing a
 * K/V head are consecutive, so Q, dO, W and dS read as (B, Hkv, g*Tq, .), and
 * a K/V-side result sums over the group by itself (the g*Tq contraction). */
typedef struct grouped_mm {
    uint32_t m, n, k;
    bool ta, tb;
    float alpha;
    uint64_t a_cols, b_cols; /* stored columns of A and B per row */
    uint64_t a_rows, b_rows; /* stored rows per (b, K/V head) */
} grouped_mm;

static vkattn_result record_mm(vkattn_context *ctx, VkCommandBuffer cmd, const vka_sdpa_shape *s,
                               const grouped_mm *g, vkattn_tensor *a, vkattn_tensor *b,
                               vkattn_tensor *c)
{
    const uint64_t a_mat = g->a_rows * g->a_cols, b_mat = g->b_rows * g->b_cols;
    vkattn_matmul_params mm = {
        .batch = s->batch, .heads = s->kv_heads, .m = g->m, .n = g->n, .k = g->k,
        .transpose_a = g->ta, .transpose_b = g->tb, .alpha = g->alpha,
        .a = {.batch_stride = a_mat * s->kv_heads, .head_stride = a_mat},
        .b = {.batch_stride = b_mat * s->kv_heads, .head_stride = b_mat},
    };
    vkattn_matmul_io mio = {.a = a, .b = b, .c = c};
    return vkattn_matmul_record(ctx, cmd, &mm, &mio);
}

static vkattn_result record_chained(vkattn_context *ctx, VkCommandBuffer cmd,
                                    const vkattn_sdpa_params *p, const vka_sdpa_shape *s,
                                    const vkattn_sdpa_backward_io *io, vkattn_tensor *ws0,
                                    vkattn_tensor *ws1)
{
    const uint32_t gq = s->group * s->tq; /* fits: check_chained bounded it */
    vkattn_result r;
    vkattn_tensor *w = io->weights;
    if (!w) { /* W = softmax(Q K^T * scale + bias, masks), as the chained forward */
        w = ws1;
        grouped_mm qk = {.m = gq, .n = s->tv, .k = s->dk, .tb = true, .alpha = s->scale,
                         .a_rows = gq, .a_cols = s->dk, .b_rows = s->tv, .b_cols = s->dk};
        if ((r = record_mm(ctx, cmd, s, &qk, io->q, io->k, w)))
            return r;
        vkattn_softmax_params sp = {.batch = s->batch, .heads = s->heads, .tq = s->tq,
                                    .tv = s->tv, .mask = p->mask,
                                .sliding_window = p->sliding_window};
        vkattn_softmax_io sio = {.scores = w, .bias = io->bias, .value_mask = io->value_mask,
                                 .mask = io->mask, .out = w};
        if ((r = vkattn_softmax_record(ctx, cmd, &sp, &sio)))
            return r;
    }
    vkattn_dropout_op_params dp = {.batch = s->batch, .heads = s->heads, .tq = s->tq,
                                   .tv = s->tv, .dropout = p->dropout};
    /* dV = dropout(W)^T dO */
    vkattn_tensor *pd = w;
    if (s->drop) {
        vkattn_dropout_io dio = {.in = w, .out = ws0};
        if ((r = vkattn_dropout_record(ctx, cmd, &dp, &dio)))
            return r;
        pd = ws0;
    }
    grouped_mm dv = {.m = s->tv, .n = s->dv, .k = gq, .ta = true, .alpha = 1.0f,
                     .a_rows = gq, .a_cols = s->tv, .b_rows = gq, .b_cols = s->dv};
    if ((r = record_mm(ctx, cmd, s, &dv, pd, io->grad_out, io->grad_v)))
        return r;
    /* dP = dropout'(dO V^T), in place */
    grouped_mm dpm = {.m = gq, .n = s->tv, .k = s->dv, .tb = true, .alpha = 1.0f,
                      .a_rows = gq, .a_cols = s->dv, .b_rows = s->tv, .b_cols = s->dv};
    if ((r = record_mm(ctx, cmd, s, &dpm, io->grad_out, io->v, ws0)))
        return r;
    if (s->drop) {
        vkattn_dropout_io dio = {.in = ws0, .out = ws0};
        if ((r = vkattn_dropout_record(ctx, cmd, &dp, &dio)))
            return r;
    }
    /* dS = W * (dP - rowsum(W dP)), in place: dL/dlogits (the matmul applied the scale) */
    vkattn_softmax_params sp = {.batch = s->batch, .heads = s->heads, .tq = s->tq, .tv = s->tv,
                                .mask = p->mask,
                                .sliding_window = p->sliding_window};
    vkattn_softmax_backward_io sb = {.weights = w, .grad_out = ws0, .bias = io->bias,
                                     .value_mask = io->value_mask, .mask = io->mask,
                                     .grad_scores = ws0};
    if ((r = vkattn_softmax_backward_record(ctx, cmd, &sp, &sb)))
        return r;
    /* dQ = scale * dS K; dK = scale * dS^T Q */
    grouped_mm dq = {.m = gq, .n = s->dk, .k = s->tv, .alpha = s->scale,
                     .a_rows = gq, .a_cols = s->tv, .b_rows = s->tv, .b_cols = s->dk};
    if ((r = record_mm(ctx, cmd, s, &dq, ws0, io->k, io->grad_q)))
        return r;
    grouped_mm dk = {.m = s->tv, .n = s->dk, .k = gq, .ta = true, .alpha = s->scale,
                     .a_rows = gq, .a_cols = s->tv, .b_rows = gq, .b_cols = s->dk};
    return record_mm(ctx, cmd, s, &dk, ws0, io->q, io->grad_k);
}

/* ---------------------------------------------------------------- public */

vkattn_result vkattn_sdpa_backward_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                          const vkattn_sdpa_params *params,
                                          const vkattn_sdpa_backward_io *io)
{
    VKA_RECORD_MODES(ctx, ctx, cmd, vkattn_sdpa_backward_record(ctx, cmd, params, io));
    if (!ctx || !cmd)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", __func__,
                        !ctx ? "ctx" : "cmd");
    if (!io)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: io is NULL", __func__);
    bwd_plan pl;
    vkattn_result r = plan(ctx, __func__, params, io->lse != NULL, io->weights != NULL, &pl);
    if (r == VKATTN_SUCCESS)
        r = check_io(ctx, __func__, params, &pl, io);
    if (r != VKATTN_SUCCESS)
        return r;
    vkattn_tensor *ws[2] = {io->workspace[0], io->workspace[1]};
    if (pl.ws_count >= 1 && !ws[0] &&
        (r = vka_growable_get(ctx, VKA_SCRATCH_WORKSPACE, pl.ws_floats, __func__, &ws[0])))
        return r;
    if (pl.ws_count >= 2 && !ws[1] &&
        (r = vka_growable_get(ctx, VKA_SCRATCH_WORKSPACE_2, pl.ws_floats, __func__, &ws[1])))
        return r;
    if (pl.fused)
        return vka_flash_backward_record(ctx, cmd, &pl.s, params, io, ws[0], __func__);
    return record_chained(ctx, cmd, params, &pl.s, io, ws[0], ws[1]);
}
