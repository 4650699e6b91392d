/* Scaled dot-product attention: argument and size checks, the choice between
 * the fused kernel (ops/flash.c) and the chained path, the workspace, and the
 * chained path itself: matmul -> softmax -> dropout -> matmul through a
 * (B, H, Tq, Tv) score tensor. Every check runs before anything is recorded or
 * allocated, so a failing call leaves the command buffer untouched. */
#include "vkattn/sdpa.h"

#include <stdlib.h>

#include "core/check.h"
#include "core/dtype.h"
#include "core/dropout_host.h"
#include "core/error.h"
#include "ops/flash.h"
#include "ops/half_convert.h"
#include "ops/half_stage.h"
#include "ops/scratch_kinds.h"
#include "ops/sdpa_few_rows.h"
#include "ops/sdpa_open.h"
#include "ops/sdpa_shape.h"
#include "vk/dispatch.h"
#include "vk/tensor.h"
#include "vkattn/dropout.h"
#include "vkattn/matmul.h"
#include "vkattn/softmax.h"
#include "vk/record_mode.h"
#include "vk/view.h"

/* ---------------------------------------------------------------- path */

/* *fused: whether the fused kernel serves this call. AUTO falls back to the
 * chained path quietly; FUSED fails, naming the reason. */
static vkattn_result choose_fused(vkattn_context *ctx, const char *caller,
                                  const vkattn_sdpa_params *p, const vka_sdpa_shape *s,
                                  bool *fused, vka_flash_choice *fc)
{
    if (p->path == VKATTN_SDPA_FUSED && p->return_weights)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: params->path is VKATTN_SDPA_FUSED but return_weights is set; "
                        "the fused kernel never forms the weights (use AUTO or UNFUSED)",
                        caller);
    vkattn_result r = vka_sdpa_choose_fused(ctx, caller, p, s, vka_flash_check,
                                            !p->return_weights, "the fused kernel", fused);
    if (r == VKATTN_SUCCESS && *fused)
        vka_flash_choose(ctx, s, p, fc); /* the checked kernel's tiles, for the record */
    return r;
}

/* Floats of workspace the chained path needs: a score tensor, unless the
 * returned weights can hold the scores all along (no dropout, or weights
 * returned after it: dropout then runs in place on them). */
static uint64_t chained_workspace(const vkattn_sdpa_params *p, const vka_sdpa_shape *s)
{
    if (!p->return_weights || (s->drop && !p->weights_after_dropout))
        return s->scores;
    return 0;
}

/* The chained path's own limits: the score tensor in one binding, and the
 * matmul grids (matmul.c's smallest tile is 16 x 16, so a dimension up to
 * 16 * maxWorkgroupCount always fits). */
static vkattn_result check_chained(vkattn_context *ctx, const char *caller,
                                   const vkattn_sdpa_params *p, const vka_sdpa_shape *s)
{
    const uint64_t range = vka_max_range(ctx);
    if (s->scores > range / sizeof(float)) {
        /* say what would help: the fused path, unless it is the reason we are here */
        const char *why = NULL, *hint = "use the fused path (params->path = VKATTN_SDPA_AUTO "
                                        "or VKATTN_SDPA_FUSED), or split the batch or the heads";
        if (p->return_weights)
            hint = "returned weights need that tensor: split the batch or the heads, or do "
                   "not return the weights (then the fused path needs none)";
        else if (p->path == VKATTN_SDPA_AUTO && !vka_flash_supports(ctx, s, p, &why))
            hint = "the fused path cannot serve this call either; split the batch or the heads";
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: the chained path's score tensor (B, H, Tq, Tv) = (%u, %u, %u, %u) "
                        "needs %llu bytes; maxStorageBufferRange is %llu: %s%s%s%s",
                        caller, s->batch, s->heads, s->tq, s->tv,
                        (unsigned long long)(s->scores * sizeof(float)), (unsigned long long)range,
                        hint, why ? " (fused: " : "", why ? why : "", why ? ")" : "");
    }
    const uint32_t *groups = vka_info(ctx)->max_workgroup_count;
    const uint64_t rows = (uint64_t)s->group * s->tq, cols = s->tv > s->dv ? s->tv : s->dv;
    if ((uint64_t)s->batch * s->kv_heads > groups[2] || rows > 16ull * groups[1] ||
        cols > 16ull * groups[0])
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: the chained path's matmuls need more workgroups than the device "
                        "allows (batch * kv_heads = %llu, heads / kv_heads * tq = %llu, "
                        "max(tv, dv) = %llu)",
                        caller, (unsigned long long)s->batch * s->kv_heads,
                        (unsigned long long)rows, (unsigned long long)cols);
    return VKATTN_SUCCESS;
}

/* What workspace_size and record both decide before looking at tensors: the
 * resolved shape, the path (the fused kernel's tiles in *fc), the chained
 * path's limits and its workspace. */
static vkattn_result plan(vkattn_context *ctx, const char *caller, const vkattn_sdpa_params *p,
                          vka_sdpa_shape *s, bool *fused, vka_flash_choice *fc,
                          uint64_t *ws_floats)
{
    *fused = false;
    vkattn_result r = vka_sdpa_resolve(ctx, caller, p, s);
    if (r == VKATTN_SUCCESS)
        r = choose_fused(ctx, caller, p, s, fused, fc);
    if (r == VKATTN_SUCCESS && !*fused && p->has_sinks)
        r = vka_chained_sinks_check(ctx, caller, p, s);
    if (r == VKATTN_SUCCESS && !*fused)
        r = check_chained(ctx, caller, p, s);
    if (r != VKATTN_SUCCESS)
        return r;
    *ws_floats = *fused ? 0 : chained_workspace(p, s);
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_sdpa_workspace_size(vkattn_context *ctx, const vkattn_sdpa_params *params,
                                         uint64_t *floats)
{
    if (!ctx || !floats)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", __func__,
                        !ctx ? "ctx" : "floats");
    vka_sdpa_shape s;
    bool fused;
    vka_flash_choice fc;
    return plan(ctx, __func__, params, &s, &fused, &fc, floats);
}

/* ---------------------------------------------------------------- tensors */

/* Written tensors (out, weights, workspace, the fused path's lse) must not
 * alias any other operand. */
static vkattn_result check_aliasing(vkattn_context *ctx, const char *caller,
                                    const vkattn_sdpa_io *io, bool use_workspace, bool fused)
{
    const vkattn_tensor *all[] = {io->q,   io->k,       io->v,
                                  io->bias, io->value_mask, io->mask, io->sinks,
                                  io->out, io->weights, use_workspace ? io->workspace : NULL,
                                  fused ? io->lse : NULL};
    static const char *names[] = {"io->q",   "io->k",       "io->v",
                                  "io->bias", "io->value_mask", "io->mask", "io->sinks",
                                  "io->out", "io->weights", "io->workspace", "io->lse"};
    return vka_check_written_distinct(ctx, caller, all, names, sizeof all / sizeof all[0], 7);
}

/* Every tensor of the call, once: the fused kernel (ops/flash.c) binds them
 * as checked here. */
static vkattn_result check_io(vkattn_context *ctx, const char *caller,
                              const vkattn_sdpa_params *p, const vka_sdpa_shape *s,
                              const vkattn_sdpa_io *io, uint64_t workspace, bool fused)
{
    if (!io)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: io is NULL", caller);
    const unsigned types = VKA_DTYPES_FLOAT; /* f32, f16, bf16 */
    vkattn_result r;
    if ((r = vka_tensor_check_types(ctx, io->q, s->q, caller, "io->q", types)) ||
        (r = vka_tensor_check_types(ctx, io->k, s->k, caller, "io->k", types)) ||
        (r = vka_tensor_check_types(ctx, io->v, s->v, caller, "io->v", types)) ||
        (r = vka_tensor_check_types(ctx, io->out, s->out, caller, "io->out", types)) ||
        (r = vka_sdpa_check_masks(ctx, caller, p, s, io->bias, io->value_mask, io->mask)) ||
        (r = vka_sdpa_check_flagged(ctx, caller, "io->sinks", "params->has_sinks", p->has_sinks,
                                    io->sinks, s->heads)))
        return r;
    if (p->return_weights)
        r = vka_tensor_check_types(ctx, io->weights, s->scores, caller, "io->weights", types);
    else
        r = vka_sdpa_check_flagged(ctx, caller, "io->weights", "params->return_weights", false,
                          io->weights, s->scores);
    if (r != VKATTN_SUCCESS)
        return r;
    if (workspace && io->workspace &&
        (r = vka_tensor_check(ctx, io->workspace, workspace, caller, "io->workspace")))
        return r;
    if (fused && io->lse &&
        (r = vka_tensor_check(ctx, io->lse, vka_count4(s->batch, s->heads, s->tq, 1), caller,
                              "io->lse")))
        return r;
    return check_aliasing(ctx, caller, io, workspace != 0, fused);
}

/* The context's shared workspace, grown to at least `count` floats. */
static vkattn_result library_workspace(vkattn_context *ctx, uint64_t count, vkattn_tensor **out)
{
    return vka_growable_get(ctx, VKA_SCRATCH_WORKSPACE, count, "vkattn_sdpa_record", out);
}

/* ---------------------------------------------------------------- chained */

/* Q K^T * scale -> scores. The g = H / Hkv query heads that share a K/V head
 * are consecutive in Q (B, H, Tq, dk), so Q reads as (B, Hkv, g*Tq, dk): one
 * matmul per (b, kv head) with g*Tq rows, and the scores come out packed as
 * (B, H, Tq, Tv). */
static vkattn_result record_scores(vkattn_context *ctx, VkCommandBuffer cmd, const vka_sdpa_shape *s,
                                   const vkattn_sdpa_io *io, vkattn_tensor *scores)
{
    const uint64_t rows = (uint64_t)s->group * s->tq;
    vkattn_matmul_params mm = {
        .batch = s->batch, .heads = s->kv_heads, .m = (uint32_t)rows, .n = s->tv, .k = s->dk,
        .transpose_b = true, .alpha = s->scale,
        .a = {.batch_stride = (uint64_t)s->heads * s->tq * s->dk, .head_stride = rows * s->dk},
        .b = {.batch_stride = (uint64_t)s->kv_heads * s->tv * s->dk,
              .head_stride = (uint64_t)s->tv * s->dk},
    };
    vkattn_matmul_io mio = {.a = io->q, .b = io->k, .c = scores};
    return vkattn_matmul_record(ctx, cmd, &mm, &mio);
}

/* probs (B, H, Tq, Tv) @ V -> out, grouped as in record_scores. */
static vkattn_result record_output(vkattn_context *ctx, VkCommandBuffer cmd, const vka_sdpa_shape *s,
                                   const vkattn_sdpa_io *io, vkattn_tensor *probs)
{
    const uint64_t rows = (uint64_t)s->group * s->tq;
    vkattn_matmul_params mm = {
        .batch = s->batch, .heads = s->kv_heads, .m = (uint32_t)rows, .n = s->dv, .k = s->tv,
        .a = {.batch_stride = (uint64_t)s->heads * s->tq * s->tv, .head_stride = rows * s->tv},
        .b = {.batch_stride = (uint64_t)s->kv_heads * s->tv * s->dv,
              .head_stride = (uint64_t)s->tv * s->dv},
    };
    vkattn_matmul_io mio = {.a = probs, .b = io->v, .c = io->out};
    return vkattn_matmul_record(ctx, cmd, &mm, &mio);
}

/* Whether the call returns 16-bit (f16 or bf16) weights: the scores then stay
 * in the f32 workspace and are rounded into io->weights once, so softmax,
 * dropout and W @ V read fp32 probabilities as with f32 weights. */
static bool half_weights(const vkattn_sdpa_params *p, const vkattn_sdpa_io *io)
{
    return p->return_weights && io && io->weights &&
           vka_dtype_info_of(io->weights->dtype)->is_16bit;
}

/* scores -> softmax (in place) -> dropout -> probs. The scores live in f32
 * returned weights when there are any, else in the workspace. Weights wanted
 * before an active dropout stay in io->weights while dropout writes the
 * workspace; otherwise dropout runs in place. 16-bit weights are converted from
 * the workspace after softmax or after dropout, whichever the call returns. */
static vkattn_result record_chained(vkattn_context *ctx, VkCommandBuffer cmd,
                                    const vkattn_sdpa_params *p, const vka_sdpa_shape *s,
                                    const vkattn_sdpa_io *io, vkattn_tensor *workspace)
{
    const bool half = half_weights(p, io);
    const char *caller = "vkattn_sdpa_record";
    vkattn_tensor *scores = p->return_weights && !half ? io->weights : workspace;
    vkattn_tensor *lse = NULL;
    vkattn_result r;
    if (p->has_sinks && (r = vka_chained_sinks_lse(ctx, cmd, caller, p, s, io, &lse)))
        return r;
    if ((r = record_scores(ctx, cmd, s, io, scores)) != VKATTN_SUCCESS)
        return r;
    if (p->softcap > 0.0f &&
        (r = vka_softcap_record(ctx, cmd, caller, s->scores, p->softcap, scores)))
        return r;
    vkattn_softmax_params sp = {.batch = s->batch, .heads = s->heads, .tq = s->tq, .tv = s->tv,
                                .mask = p->mask,
                                .sliding_window = p->sliding_window}; /* scale 0 = 1: the matmul applied it */
    if (p->has_sinks) /* a row with nothing allowed: weights 0 (the sink takes them) */
        sp.mask.masked_row = VKATTN_MASKED_ROW_ZERO;
    vkattn_softmax_io sio = {.scores = scores, .bias = io->bias, .value_mask = io->value_mask,
                             .mask = io->mask, .out = scores};
    if ((r = vkattn_softmax_record(ctx, cmd, &sp, &sio)) != VKATTN_SUCCESS)
        return r;
    if (p->has_sinks &&
        (r = vka_sink_rows_record(ctx, cmd, caller, s, s->tv, io->sinks, scores, lse, false)))
        return r;
    const bool convert_after_dropout = s->drop && p->weights_after_dropout;
    if (half && !convert_after_dropout &&
        (r = vka_half_convert_record(ctx, cmd, caller, io->weights, scores, s->scores, true)))
        return r;
    vkattn_tensor *probs = scores;
    if (s->drop) {
        if (p->return_weights && !p->weights_after_dropout && !half)
            probs = workspace;
        vkattn_dropout_op_params dp = {.batch = s->batch, .heads = s->heads, .tq = s->tq,
                                       .tv = s->tv, .dropout = p->dropout};
        vkattn_dropout_io dio = {.in = scores, .out = probs};
        if ((r = vkattn_dropout_record(ctx, cmd, &dp, &dio)) != VKATTN_SUCCESS)
            return r;
    }
    if (half && convert_after_dropout &&
        (r = vka_half_convert_record(ctx, cmd, caller, io->weights, probs, s->scores, true)))
        return r;
    return record_output(ctx, cmd, s, io, probs);
}

/* ---------------------------------------------------------------- sinks */

typedef struct sinks_op {
    const vkattn_sdpa_params *p;
    const vka_sdpa_shape *s;
    const vkattn_sdpa_io *io;
    vkattn_tensor *ws;           /* the chained path's workspace */
    const vka_flash_choice *fc; /* the fused path's kernel and tiles */
} sinks_op;

static vkattn_result record_chained_op(vkattn_context *ctx, VkCommandBuffer cmd, const void *op_)
{
    const sinks_op *op = op_;
    return record_chained(ctx, cmd, op->p, op->s, op->io, op->ws);
}

/* The params the fused kernel runs with sinks: the zero policy (a row with
 * nothing allowed keeps output 0 whatever masked_row: the sink takes all its
 * weight). */
static vkattn_sdpa_params sinks_fused_params(const vkattn_sdpa_params *p)
{
    vkattn_sdpa_params fp = *p;
    fp.mask.masked_row = VKATTN_MASKED_ROW_ZERO;
    return fp;
}

/* The fused kernel with the zero policy (sinks_fused_params) writing the
 * LSE (io->lse, else scratch), then the sinks joined to each row. */
static vkattn_result record_fused_sinks(vkattn_context *ctx, VkCommandBuffer cmd, const void *op_)
{
    const sinks_op *op = op_;
    const char *caller = "vkattn_sdpa_record";
    const vkattn_sdpa_params fp = sinks_fused_params(op->p);
    vkattn_tensor *lse = op->io->lse;
    vkattn_result r;
    if (!lse && (r = vka_growable_get(ctx, VKA_SCRATCH_SINK_LSE,
                                      (uint64_t)op->s->batch * op->s->heads * op->s->tq, caller,
                                      &lse)))
        return r;
    if ((r = vka_flash_record_lse(ctx, cmd, op->s, &fp, op->fc, op->io, lse, caller)))
        return r;
    return vka_sink_rows_record(ctx, cmd, caller, op->s, op->s->dv, op->io->sinks, op->io->out,
                                lse, true);
}

/* ---------------------------------------------------------------- public */

vkattn_result vkattn_sdpa_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                 const vkattn_sdpa_params *params, const vkattn_sdpa_io *io)
{
    VKA_RECORD_MODES(ctx, ctx, cmd, vkattn_sdpa_record(ctx, cmd, params, io));
    vka_sdpa_shape s;
    bool fused;
    vka_flash_choice fc;
    uint64_t ws_floats;
    /* sizes before tensors: a too-large shape fails the same with any io */
    vkattn_result r = plan(ctx, __func__, params, &s, &fused, &fc, &ws_floats);
    if (r != VKATTN_SUCCESS)
        return r;
    if (!fused && half_weights(params, io))
        ws_floats = s.scores; /* the f32 scores behind 16-bit weights */
    if ((r = check_io(ctx, __func__, params, &s, io, ws_floats, fused)) != VKATTN_SUCCESS)
        return r;
    vka_decode_call dc = {0};
    const vka_sdpa_rows_kernel rows = fused ? vka_sdpa_few_rows_kernel(ctx, params, &s, io, &dc)
                                             : VKA_SDPA_ROWS_FUSED;
    if (rows != VKA_SDPA_ROWS_FUSED) { /* few rows: the split-K decode kernel */
        /* the route's one public word (attnbench's "path" column reads it) */
        vka_log(ctx, VKATTN_LOG_DEBUG, "%s: path decode (Tq = %u on the split-K decode kernel)",
                __func__, s.tq);
        return vka_sdpa_few_rows_record(ctx, cmd, __func__, rows, params, &s, &dc, io);
    }
    if (fused) { /* the tensors are known: the cooperative-matrix kernel or not */
        const vkattn_sdpa_params fp = params->has_sinks ? sinks_fused_params(params) : *params;
        vka_flash_choose_coopmat(ctx, &s, &fp, io, &fc);
    }
    if (fused && params->has_sinks) {
        /* two steps and scratch: run dry first, so a failure records nothing */
        const sinks_op op = {params, &s, io, NULL, &fc};
        return vka_f16_record(ctx, cmd, true, record_fused_sinks, &op);
    }
    if (fused)
        return vka_flash_record_lse(ctx, cmd, &s, params, &fc, io, io->lse, __func__);
    if (io->lse)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->lse is written by the fused path only, and this call takes the "
                        "chained one (weights returned, path UNFUSED, or a shape the fused "
                        "kernel cannot serve)",
                        __func__);
    vkattn_tensor *ws = NULL;
    if (ws_floats) {
        ws = io->workspace;
        if (!ws && (r = library_workspace(ctx, ws_floats, &ws)) != VKATTN_SUCCESS)
            return r;
    }
    /* sinks add a fused run and scratch: dry first, so a failure records nothing */
    const sinks_op op = {params, &s, io, ws, NULL};
    return vka_f16_record(ctx, cmd, params->has_sinks, record_chained_op, &op);
}
