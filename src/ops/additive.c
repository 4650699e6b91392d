/* Additive (tanh) scores: tile choice from the shape and the device's limits,
 * argument checks, and the dispatch of shaders/additive.comp. */
#include "vkattn/additive.h"

#include <math.h>

#include "core/check.h"
#include "core/error.h"
#include "shape/additive_shape.h"
#include "common/additive_iface.h"
#include "ops/split.h"
#include "vk/dispatch.h"
#include "vk/tensor.h"
#include "ops/half_stage.h"
#include "vka_shaders.h"
#include "vk/record_mode.h"
#include "vk/view.h"

VKA_PUSH_STRUCT(additive_push, VKA_ADDITIVE_PUSH);

/* A TQ x TV tile of S per workgroup, RQ x RV outputs per invocation, dim
 * staged DK at a time. */
typedef struct additive_tiles {
    uint32_t tq, tv, dk, rq, rv;
} additive_tiles;

/* The shared-memory budget the tiles are designed for; devices with less (the
 * Vulkan minimum is 16 KiB) get a shorter DK. */
#define ADDITIVE_SHARED_DESIGN 32768u

static uint32_t tile_threads(const additive_tiles *t) { return (t->tq / t->rq) * (t->tv / t->rv); }

/* Bytes of shared memory shaders/additive.comp declares for these tiles:
 * qs[DK * (TQ + 1)], ks[DK * (TV + 1)], ss[DK]. */
static uint32_t tile_shared_bytes(const additive_tiles *t)
{
    return 4u * t->dk * (t->tq + t->tv + 3u);
}

/* Tile length and outputs per invocation along one axis: 64 by 4 for long
 * axes, shorter tiles for short ones so a 5 x 1000 problem does not spend most
 * of its tanh calls on padding rows. */
static void axis_tile(uint32_t len, uint32_t *tile, uint32_t *reg)
{
    if (len > 32)
        *tile = 64, *reg = 4;
    else if (len > 8)
        *tile = 32, *reg = 2;
    else if (len > 1)
        *tile = 8, *reg = 1;
    else
        *tile = 1, *reg = 1;
}

/* Tiles for this shape that fit the device: the shape picks the tile, then
 * more outputs per invocation bring the invocation count under the device's
 * limit (256 by default; Vulkan guarantees 128), then DK is the longest of 32,
 * 16, 8, 4 whose shared footprint fits. */
static bool choose_tiles(const vkattn_context_info *info, uint32_t tq, uint32_t tv,
                         additive_tiles *out)
{
    additive_tiles t;
    axis_tile(tq, &t.tq, &t.rq);
    axis_tile(tv, &t.tv, &t.rv);
    if (t.tq == 1 && tv > 64)
        t.tv = 256, t.rv = 4; /* one query row (decoding): 64 invocations, not 16 */
    uint32_t max_threads = info->max_workgroup_invocations;
    if (info->max_workgroup_size[0] < max_threads)
        max_threads = info->max_workgroup_size[0];
    while (tile_threads(&t) > max_threads) {
        if (t.rv < 8 && t.tv / t.rv >= 2)
            t.rv *= 2;
        else if (t.rq < 8 && t.tq / t.rq >= 2)
            t.rq *= 2;
        else
            return false;
    }
    uint32_t budget = info->max_shared_memory < ADDITIVE_SHARED_DESIGN ? info->max_shared_memory
                                                                        : ADDITIVE_SHARED_DESIGN;
    for (t.dk = 32; t.dk >= 4; t.dk /= 2)
        if (tile_shared_bytes(&t) <= budget) {
            *out = t;
            return true;
        }
    return false;
}

static vkattn_result check_io(vkattn_context *ctx, const char *caller,
                              const vkattn_additive_params *p, const vkattn_additive_io *io)
{
    vka_additive_sizes n;
    vkattn_result r = vka_additive_check(ctx, caller, p, &n);
    if (r)
        return r;
    if (!io)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: io is NULL", caller);
    const unsigned both = VKA_DTYPES_FLOAT;
    if ((r = vka_tensor_check_types(ctx, io->q, n.q, caller, "io->q", both)) ||
        (r = vka_tensor_check_types(ctx, io->k, n.k, caller, "io->k", both)) ||
        (r = vka_tensor_check_types(ctx, io->scores, n.scores, caller, "io->scores", both)))
        return r;
    if (p->has_scale_vector &&
        (r = vka_tensor_check_types(ctx, io->scale, p->dim, caller, "io->scale", both)))
        return r;
    if (!p->has_scale_vector && io->scale)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->scale is given but params->has_scale_vector is false", caller);
    if (io->scores == io->q || io->scores == io->k || io->scores == io->scale)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->scores must not be an input tensor", caller);
    return VKATTN_SUCCESS;
}

typedef struct additive_op {
    const vkattn_additive_params *params;
    const vkattn_additive_io *io;
} additive_op;

/* Everything after the checks: the tiles, the staging passes and the
 * dispatches (vka_f16_record). */
static vkattn_result record_checked(vkattn_context *ctx, VkCommandBuffer cmd, const void *op_)
{
    const char *caller = "vkattn_additive_record";
    const additive_op *op = op_;
    const vkattn_additive_params *params = op->params;
    const vkattn_additive_io *io = op->io;
    vkattn_result r;
    additive_tiles t;
    if (!choose_tiles(vka_info(ctx), params->tq, params->tv, &t))
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED,
                        "%s: no additive-score tile fits this device's workgroup limits", caller);
    /* per chunk of DK features: the chunk loop, the three tile loads, and the
     * feature loop (counted as if the compiler kept it rolled) */
    const uint32_t threads = tile_threads(&t);
    const uint64_t per_chunk = 4 + vka_div_up((uint64_t)t.tq * t.dk, threads) +
                               vka_div_up((uint64_t)t.tv * t.dk, threads) +
                               vka_div_up(t.dk, threads) + t.dk;
    if ((r = vka_check_loop_budget(ctx, caller, vka_div_up(params->dim, t.dk) * per_chunk,
                                   "params->dim")))
        return r;
    vka_kernel kernel = {
        VKA_KERNEL_SPV(additive),
        .n_bindings = 4,
        .push_size = sizeof(additive_push),
        .n_spec = VKA_ADDITIVE_N_SPEC,
        .spec = {
            [VKA_ADDITIVE_SPEC_TQ] = t.tq,
            [VKA_ADDITIVE_SPEC_TV] = t.tv,
            [VKA_ADDITIVE_SPEC_DK] = t.dk,
            [VKA_ADDITIVE_SPEC_RQ] = t.rq,
            [VKA_ADDITIVE_SPEC_RV] = t.rv,
            [VKA_ADDITIVE_SPEC_HAS_SCALE] = params->has_scale_vector,
            [VKA_ADDITIVE_SPEC_WG] = tile_threads(&t),
        },
    };
    additive_push push = {
        .tq = params->tq,
        .tv = params->tv,
        .dim = params->dim,
        .inner = vka_default_f32(params->inner_scale, 1.0f),
        .outer = vka_default_f32(params->outer_scale, 1.0f),
    };
    vka_dispatch d = {
        .kernel = &kernel,
        .push = &push,
        .groups = {(uint32_t)vka_div_up(params->tv, t.tv), (uint32_t)vka_div_up(params->tq, t.tq),
                   params->batch},
        .caller = caller,
    };
    /* One dispatch, or blocks of query rows within the watchdog budget. */
    uint32_t rows;
    if ((r = vka_split_rows(ctx, caller, "additive", params->tq, t.tq,
                            (uint64_t)params->batch * params->tv * params->dim, &rows)))
        return r;
    /* 16-bit tensors go through f32 scratch (ops/half_stage.h) */
    const uint64_t b = params->batch, nq = b * params->tq * params->dim,
                   nk = b * params->tv * params->dim, ns = b * params->tq * params->tv;
    vkattn_tensor *q, *k, *scale, *scores;
    if ((r = vka_f16_stage_in(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE0, io->q, nq, &q)) ||
        (r = vka_f16_stage_in(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE1, io->k, nk, &k)) ||
        (r = vka_f16_stage_in(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE2, io->scale, params->dim,
                              &scale)) ||
        (r = vka_f16_stage_out(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE3, io->scores, ns, false,
                               &scores)))
        return r;
    d.bindings[0] = vka_bind_tensor(q, false);
    d.bindings[1] = vka_bind_tensor(k, false);
    d.bindings[2] = vka_bind_optional(ctx, scale);
    d.bindings[3] = vka_bind_tensor(scores, true);
    for (uint32_t i0 = 0; i0 < params->tq && r == VKATTN_SUCCESS; i0 += rows) {
        push.row_begin = i0;
        push.row_end = params->tq - i0 > rows ? i0 + rows : params->tq;
        d.groups[1] = (uint32_t)vka_div_up(push.row_end - i0, t.tq);
        /* one tanh-add and multiply-add per score and feature */
        d.work = (uint64_t)params->batch * (push.row_end - i0) * params->tv * params->dim;
        r = vka_record_dispatch(ctx, cmd, &d);
    }
    if (r == VKATTN_SUCCESS)
        r = vka_f16_stage_finish(ctx, cmd, caller, io->scores, scores, ns);
    return r;
}

vkattn_result vkattn_additive_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                     const vkattn_additive_params *params,
                                     const vkattn_additive_io *io)
{
    VKA_RECORD_MODES(ctx, ctx, cmd, vkattn_additive_record(ctx, cmd, params, io));
    vkattn_result r = check_io(ctx, __func__, params, io);
    if (r != VKATTN_SUCCESS)
        return r;
    /* 16-bit tensors always go through f32 scratch (ops/half_stage.h) */
    const additive_op op = {.params = params, .io = io};
    const vkattn_tensor *const ts[4] = {io->q, io->k, io->scale, io->scores};
    const bool staged = vka_path16_of(ctx, ts, 4) != VKA_PATH_F32;
    return vka_f16_record(ctx, cmd, staged, record_checked, &op);
}
