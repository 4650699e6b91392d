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
#include "ops/flash_backward_coopmat.h"
#include "ops/half_stage.h"
#include "ops/scratch_kinds.h"
#include "ops/sdpa_open.h"
#include "ops/sdpa_shape.h"
#include "vk/dispatch.h"
#include "vk/tensor.h"
#include "vkattn/dropout.h"
#include "vkattn/matmul.h"
#include "vkattn/softmax.h"
#include "vkattn/softmax_backward.h"
#include "vk/record_mode.h"
#include "vk/view.h"

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
    const uint32_t *groups = vka_info(ctx)->max_workgroup_count;
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
    return vka_sdpa_choose_fused(ctx, caller, p, s, vka_flash_backward_check, have_lse,
                                 "the fused backward", fused);
}

typedef struct bwd_plan {
    vka_sdpa_shape s;
    bool fused;
    vka_flash_backward_choice fc; /* the fused path's kernels and tiles */
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
    /* the chained backward's sinks recompute the weights' LSE as the chained
     * forward does, by a fused run */
    if (r == VKATTN_SUCCESS && !pl->fused && p->has_sinks && !have_weights)
        r = vka_chained_sinks_check(ctx, caller, p, &pl->s);
    if (r == VKATTN_SUCCESS && !pl->fused)
        r = check_chained(ctx, caller, &pl->s);
    if (r != VKATTN_SUCCESS)
        return r;
    if (pl->fused) {
        vka_flash_backward_choose(ctx, &pl->s, p, &pl->fc); /* the checked tiles, for the record */
        pl->ws_floats = row_stats(&pl->s), pl->ws_count = 1;
        if (row_stats(&pl->s) > vka_max_range(ctx) / sizeof(float))
            return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                            "%s: the fused backward's row statistics (2 * B * H * Tq floats) "
                            "exceed maxStorageBufferRange",
                            caller);
    } else {
        /* the second: the recomputed weights, then (soft-capping) the raw scores */
        pl->ws_floats = pl->s.scores;
        pl->ws_count = have_weights && p->softcap == 0.0f ? 1 : 2;
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
        io->weights, io->grad_out, io->sinks, io->grad_q, io->grad_k, io->grad_v,
        io->grad_sinks, ws0 ? io->workspace[0] : NULL, ws1 ? io->workspace[1] : NULL};
    static const char *names[] = {
        "io->q", "io->k", "io->v", "io->bias", "io->value_mask", "io->mask", "io->out",
        "io->lse", "io->weights", "io->grad_out", "io->sinks", "io->grad_q", "io->grad_k",
        "io->grad_v", "io->grad_sinks", "io->workspace[0]", "io->workspace[1]"};
    return vka_check_written_distinct(ctx, caller, all, names, sizeof all / sizeof all[0], 11);
}

static vkattn_result check_io(vkattn_context *ctx, const char *caller,
                              const vkattn_sdpa_params *p, const bwd_plan *pl,
                              const vkattn_sdpa_backward_io *io)
{
    const vka_sdpa_shape *s = &pl->s;
    vkattn_result r;
    /* the data tensors: f32, f16 or bf16 each, staged through f32 (record_staged) */
    const unsigned both = VKA_DTYPES_FLOAT;
    if ((r = vka_tensor_check_types(ctx, io->q, s->q, caller, "io->q", both)) ||
        (r = vka_tensor_check_types(ctx, io->k, s->k, caller, "io->k", both)) ||
        (r = vka_tensor_check_types(ctx, io->v, s->v, caller, "io->v", both)) ||
        (r = vka_tensor_check_types(ctx, io->grad_out, s->out, caller, "io->grad_out", both)) ||
        (r = vka_tensor_check_types(ctx, io->grad_q, s->q, caller, "io->grad_q", both)) ||
        (r = vka_tensor_check_types(ctx, io->grad_k, s->k, caller, "io->grad_k", both)) ||
        (r = vka_tensor_check_types(ctx, io->grad_v, s->v, caller, "io->grad_v", both)) ||
        (r = vka_sdpa_check_masks(ctx, caller, p, s, io->bias, io->value_mask, io->mask)) ||
        (r = vka_sdpa_check_flagged(ctx, caller, "io->sinks", "params->has_sinks", p->has_sinks,
                                    io->sinks, s->heads)) ||
        (r = vka_sdpa_check_flagged(ctx, caller, "io->grad_sinks", "params->has_sinks",
                                    p->has_sinks, io->grad_sinks, s->heads)))
        return r;
    if (pl->fused &&
        ((r = vka_tensor_check(ctx, io->lse, row_stats(s) / 2, caller, "io->lse (required by the "
                                                                  "fused backward)")) ||
         (r = vka_tensor_check_types(ctx, io->out, s->out, caller,
                                     "io->out (required by the fused backward)", both))))
        return r;
    /* the chained path reads neither lse nor out, but those given are still
     * checked: a wrong one must not pass because the device took the other
     * path */
    if (!pl->fused &&
        ((io->lse && (r = vka_tensor_check(ctx, io->lse, row_stats(s) / 2, caller, "io->lse"))) ||
         (io->out && (r = vka_tensor_check_types(ctx, io->out, s->out, caller, "io->out", both)))))
        return r;
    /* f32 only: f16 weights would add their rounding to every gradient; leave
     * them out and the chained path recomputes them in f32 */
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

/* Q K^T * scale into c (B, H, Tq, Tv): the raw scores. */
static vkattn_result record_scores(vkattn_context *ctx, VkCommandBuffer cmd,
                                   const vka_sdpa_shape *s, const vkattn_sdpa_backward_io *io,
                                   vkattn_tensor *c)
{
    const uint32_t gq = s->group * s->tq;
    grouped_mm qk = {.m = gq, .n = s->tv, .k = s->dk, .tb = true, .alpha = s->scale,
                     .a_rows = gq, .a_cols = s->dk, .b_rows = s->tv, .b_cols = s->dk};
    return record_mm(ctx, cmd, s, &qk, io->q, io->k, c);
}

/* With soft-capping and sinks (ops/sdpa_open.h): the recomputed scores are
 * capped before the softmax and its weights scaled for the sinks after it (p
 * has the zero policy then), grad_sinks is taken from W and dP before the
 * softmax backward, and dS goes through the cap's slope after it (the raw
 * scores recomputed into ws1, which the weights no longer need). */
static vkattn_result record_chained(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                    const vkattn_sdpa_params *p, const vka_sdpa_shape *s,
                                    const vkattn_sdpa_backward_io *io, vkattn_tensor *ws0,
                                    vkattn_tensor *ws1)
{
    const uint32_t gq = s->group * s->tq; /* fits: check_chained bounded it */
    vkattn_result r;
    vkattn_tensor *w = io->weights;
    if (!w) { /* W = softmax(Q K^T * scale + bias, masks), as the chained forward */
        w = ws1;
        const vkattn_sdpa_io fio = {.q = io->q, .k = io->k, .v = io->v, .bias = io->bias,
                                    .value_mask = io->value_mask, .mask = io->mask,
                                    .sinks = io->sinks};
        vkattn_tensor *lse = NULL; /* before ws1 is written: see vka_chained_sinks_lse */
        if (p->has_sinks && (r = vka_chained_sinks_lse(ctx, cmd, caller, p, s, &fio, &lse)))
            return r;
        if ((r = record_scores(ctx, cmd, s, io, w)))
            return r;
        if (p->softcap > 0.0f &&
            (r = vka_softcap_record(ctx, cmd, caller, s->scores, p->softcap, w)))
            return r;
        vkattn_softmax_params sp = {.batch = s->batch, .heads = s->heads, .tq = s->tq,
                                    .tv = s->tv, .mask = p->mask,
                                .sliding_window = p->sliding_window};
        vkattn_softmax_io sio = {.scores = w, .bias = io->bias, .value_mask = io->value_mask,
                                 .mask = io->mask, .out = w};
        if ((r = vkattn_softmax_record(ctx, cmd, &sp, &sio)))
            return r;
        if (p->has_sinks &&
            (r = vka_sink_rows_record(ctx, cmd, caller, s, s->tv, io->sinks, w, lse, false)))
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
    if (p->has_sinks && (r = vka_sink_grad_rows_record(ctx, cmd, caller, s, w, ws0,
                                                       io->grad_sinks)))
        return r;
    /* dS = W * (dP - rowsum(W dP)), in place: dL/dlogits (the matmul applied the scale) */
    vkattn_softmax_params sp = {.batch = s->batch, .heads = s->heads, .tq = s->tq, .tv = s->tv,
                                .mask = p->mask,
                                .sliding_window = p->sliding_window};
    vkattn_softmax_backward_io sb = {.weights = w, .grad_out = ws0, .bias = io->bias,
                                     .value_mask = io->value_mask, .mask = io->mask,
                                     .grad_scores = ws0};
    if ((r = vkattn_softmax_backward_record(ctx, cmd, &sp, &sb)))
        return r;
    if (p->softcap > 0.0f &&
        ((r = record_scores(ctx, cmd, s, io, ws1)) ||
         (r = vka_softcap_grad_record(ctx, cmd, caller, s->scores, p->softcap, ws1, ws0))))
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

/* ---------------------------------------------------------------- f16 */

/* The data tensors a call reads and writes, in the order they are staged. */
enum { IN_Q, IN_K, IN_V, IN_GRAD_OUT, IN_OUT, N_IN }; /* out: the fused path's */
enum { OUT_GRAD_Q, OUT_GRAD_K, OUT_GRAD_V, N_OUT };

typedef struct bwd_op {
    const char *caller;
    const vkattn_sdpa_params *p;
    const bwd_plan *pl;
    const vkattn_sdpa_backward_io *io;
} bwd_op;

/* One scratch kind per staged tensor: eight, STAGE0 to STAGE7. */
_Static_assert(VKA_SCRATCH_F16_STAGE0 + N_IN + N_OUT - 1 == VKA_SCRATCH_F16_STAGE7,
               "sdpa_backward.c stages N_IN + N_OUT tensors: see ops/scratch_kinds.h");
static vka_scratch_kind stage_kind(int i) { return (vka_scratch_kind)(VKA_SCRATCH_F16_STAGE0 + i); }

/* The path of the call's data tensors (ops/half_stage.h): F32 when none is
 * 16-bit. */
static vka_path16 path16(const vkattn_context *ctx, const vkattn_sdpa_backward_io *io, bool fused)
{
    const vkattn_tensor *all[] = {io->q, io->k, io->v, io->grad_out, fused ? io->out : NULL,
                                  io->grad_q, io->grad_k, io->grad_v};
    return vka_path16_of(ctx, all, sizeof all / sizeof all[0]);
}

/* The checked call: 16-bit inputs converted exactly into f32 scratch (on the
 * fused path with 16-bit storage and no bf16 tensor none but dO, and dO too
 * where the cooperative-matrix gradient kernels take the call: the kernels
 * read f16 q, k, v, out and there dO as they are, widened exactly or packed
 * into fragments as f16, so the values are the same; on the chained path
 * none: its matmuls read and write f16 and bf16 themselves), the f32
 * backward (fp32 accumulation, as for f32 calls), each 16-bit gradient
 * rounded once from its f32 result (ops/half_stage.h; bf16 to nearest even).
 * f32 tensors are used in place. Runs dry first through vka_f16_record when
 * anything is staged, so nothing is recorded on failure. */
static vkattn_result record_staged(vkattn_context *ctx, VkCommandBuffer cmd, const void *op_)
{
    const bwd_op *op = op_;
    const char *caller = op->caller;
    const bwd_plan *pl = op->pl;
    const vka_sdpa_shape *s = &pl->s;
    const vkattn_sdpa_backward_io *io = op->io;
    vkattn_sdpa_backward_io f = *io;
    vkattn_tensor *in[N_IN] = {io->q, io->k, io->v, io->grad_out, pl->fused ? io->out : NULL};
    const uint64_t in_n[N_IN] = {s->q, s->k, s->v, s->out, s->out};
    vkattn_tensor *out[N_OUT] = {io->grad_q, io->grad_k, io->grad_v};
    const uint64_t out_n[N_OUT] = {s->q, s->k, s->v};
    vkattn_tensor *in_f[N_IN], *out_f[N_OUT];
    vkattn_result r;
    /* the fused kernels read f16 q, k, v and out as they are where the device
     * has 16-bit storage and no tensor of the call is bf16 (their _f16
     * variants' float16_t views, ops/flash_backward.c; a bf16 call stages
     * every 16-bit tensor); dO only the cooperative-matrix ones (and then
     * their stats pass), which take all-f16 operands (vka_fb_coopmat.f16), as
     * the plan chose. The chained path touches q, k, v, dO and the gradients
     * only by matmuls, which read and write f16 and bf16 themselves on every
     * device (vkattn/matmul.h): none staged */
    const bool chained = !pl->fused;
    const bool native16 = pl->fused && path16(ctx, io, true) == VKA_PATH_NATIVE16;
    const bool native_do = native16 && pl->fc.coopmat && pl->fc.cm.f16;
    for (int i = 0; i < N_IN; i++) {
        in_f[i] = in[i];
        if (!chained && !(native16 && (i != IN_GRAD_OUT || native_do)) &&
            (r = vka_f16_stage_in(ctx, cmd, caller, stage_kind(i), in[i], in_n[i], &in_f[i])))
            return r;
    }
    for (int i = 0; i < N_OUT; i++) {
        out_f[i] = out[i];
        if (!chained && (r = vka_f16_stage_out(ctx, cmd, caller, stage_kind(N_IN + i), out[i],
                                               out_n[i], false, &out_f[i])))
            return r;
    }
    f.q = in_f[IN_Q], f.k = in_f[IN_K], f.v = in_f[IN_V], f.grad_out = in_f[IN_GRAD_OUT];
    if (pl->fused)
        f.out = in_f[IN_OUT];
    f.grad_q = out_f[OUT_GRAD_Q], f.grad_k = out_f[OUT_GRAD_K], f.grad_v = out_f[OUT_GRAD_V];
    vkattn_tensor *ws[2] = {io->workspace[0], io->workspace[1]};
    if (pl->ws_count >= 1 && !ws[0] &&
        (r = vka_growable_get(ctx, VKA_SCRATCH_WORKSPACE, pl->ws_floats, caller, &ws[0])))
        return r;
    if (pl->ws_count >= 2 && !ws[1] &&
        (r = vka_growable_get(ctx, VKA_SCRATCH_WORKSPACE_2, pl->ws_floats, caller, &ws[1])))
        return r;
    r = pl->fused ? vka_flash_backward_record(ctx, cmd, s, op->p, &pl->fc, &f, ws[0], caller)
                  : record_chained(ctx, cmd, caller, op->p, s, &f, ws[0], ws[1]);
    /* the fused path's sinks: from its row statistics in ws[0] */
    if (r == VKATTN_SUCCESS && pl->fused && op->p->has_sinks)
        r = vka_sink_grad_record(ctx, cmd, caller, s, io->sinks, ws[0], io->grad_sinks);
    for (int i = 0; i < N_OUT && r == VKATTN_SUCCESS; i++)
        r = vka_f16_stage_finish(ctx, cmd, caller, out[i], out_f[i], out_n[i]);
    return r;
}

/* ---------------------------------------------------------------- public */

vkattn_result vkattn_sdpa_backward_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                          const vkattn_sdpa_params *params,
                                          const vkattn_sdpa_backward_io *io)
{
    VKA_RECORD_MODES(ctx, ctx, cmd, vkattn_sdpa_backward_record(ctx, cmd, params, io));
    if (!io)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: io is NULL", __func__);
    bwd_plan pl;
    vkattn_result r = plan(ctx, __func__, params, io->lse != NULL, io->weights != NULL, &pl);
    if (r == VKATTN_SUCCESS)
        r = check_io(ctx, __func__, params, &pl, io);
    if (r != VKATTN_SUCCESS)
        return r;
    /* sinks: the forward gave a row with nothing allowed weights 0 (its LSE
     * holds the sink), whatever masked_row */
    vkattn_sdpa_params bp = *params;
    if (bp.has_sinks)
        bp.mask.masked_row = VKATTN_MASKED_ROW_ZERO;
    /* the tensors are known: the cooperative-matrix gradient kernels or not,
     * decided once for the dry and the recorded run */
    if (pl.fused)
        vka_flash_backward_choose_coopmat(ctx, &pl.s, &bp, io, &pl.fc);
    const bwd_op op = {.caller = __func__, .p = &bp, .pl = &pl, .io = io};
    /* soft-capping and sinks add steps with limits of their own: dry first */
    const bool dry_first =
        path16(ctx, io, pl.fused) != VKA_PATH_F32 || bp.has_sinks || bp.softcap != 0.0f;
    return vka_f16_record(ctx, cmd, dry_first, record_staged, &op);
}
