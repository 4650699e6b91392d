/* Inverted dropout: the plan (shape/dropout_plan.h, with the CPU reference:
 * checks, threshold and scale) plus the kernel's indexing limit, the offset
 * mix (core/dropout_host.h) and the dispatch of shaders/dropout.comp (or
 * dropout_f16.comp for f16 tensors with 16-bit storage). */
#include "vkattn/dropout.h"
#include "common/elem_iface.h"
#include "core/dtype.h"
#include "ops/dropout_record.h"

#include "core/check.h"
#include "core/dropout_host.h"
#include "core/error.h"
#include "common/dropout_iface.h"
#include "vk/dispatch.h"
#include "vk/tensor.h"
#include "ops/half_stage.h"
#include "vka_shaders.h"
#include "vk/record_mode.h"
#include "shape/dropout_plan.h"
#include "vk/view.h"

VKA_PUSH_STRUCT(dropout_push, VKA_DROPOUT_PUSH);

/* The plan (shape/dropout_plan.h: the reference's checks and messages), then
 * the kernel's 32-bit indexing. */
static vkattn_result plan(vkattn_context *ctx, const char *caller,
                          const vkattn_dropout_op_params *p, vka_dropout_shape *s)
{
    vkattn_result r = vka_dropout_plan(ctx, caller, p, s);
    if (r != VKATTN_SUCCESS)
        return r;
    /* quads are counted per row, so (Tv + 3) / 4 * rows must fit too */
    if (s->count + 3u * (s->count / p->tv) > UINT32_MAX)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: the tensor (B, H, Tq, Tv) has %llu elements; the kernel's 32-bit "
                        "indexing allows fewer",
                        caller, (unsigned long long)s->count);
    return VKATTN_SUCCESS;
}

static vkattn_result check_io(vkattn_context *ctx, const char *caller, const char *const names[2],
                              uint64_t count, const vkattn_dropout_io *io)
{
    if (!io)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: io is NULL", caller);
    vkattn_result r;
    if ((r = vka_tensor_check_types(ctx, io->in, count, caller, names[0], VKA_DTYPES_FLOAT)) ||
        (r = vka_tensor_check_types(ctx, io->out, count, caller, names[1], VKA_DTYPES_FLOAT)))
        return r;
    return VKATTN_SUCCESS;
}

static dropout_push make_push(const vkattn_dropout_op_params *p, const vka_dropout_shape *s)
{
    const vkattn_dropout_params *d = &p->dropout;
    const uint32_t qpr = (p->tv + 3u) / 4u;
    return (dropout_push){
        .tq = p->tq, .tv = p->tv, .quads_per_row = qpr,
        .total_quads = (uint32_t)(s->count / p->tv * qpr),
        .seed_lo = (uint32_t)d->seed, .seed_hi = (uint32_t)(d->seed >> 32),
        .offset_mix = vka_philox_offset_mix(d->offset),
        .threshold = s->threshold,
        .scale = s->scale,
        .apply = s->active,
    };
}

typedef struct dropout_op {
    const char *caller;
    const vkattn_dropout_op_params *params;
    const vkattn_dropout_io *io;
    vka_dropout_shape plan;
} dropout_op;

static vkattn_result record_checked(vkattn_context *ctx, VkCommandBuffer cmd, const void *op_);

vkattn_result vkattn_dropout_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                    const vkattn_dropout_op_params *params,
                                    const vkattn_dropout_io *io)
{
    VKA_RECORD_MODES(ctx, ctx, cmd, vkattn_dropout_record(ctx, cmd, params, io));
    static const char *const names[2] = {"io->in", "io->out"};
    return vka_dropout_record(ctx, cmd, __func__, names, params, io);
}

vkattn_result vka_dropout_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                 const char *const names[2],
                                 const vkattn_dropout_op_params *params,
                                 const vkattn_dropout_io *io)
{
    if (!ctx || !cmd)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", caller,
                        !ctx ? "ctx" : "cmd");
    vka_dropout_shape s = {0};
    vkattn_result r = plan(ctx, caller, params, &s);
    if (r == VKATTN_SUCCESS)
        r = check_io(ctx, caller, names, s.count, io);
    if (r != VKATTN_SUCCESS)
        return r;
    if (!s.active && io->in == io->out)
        return VKATTN_SUCCESS; /* the exact no-op records nothing */
    const dropout_op op = {.caller = caller, .params = params, .io = io, .plan = s};
    const vkattn_tensor *const ts[2] = {io->in, io->out};
    const bool staged = vka_path16_of(ctx, ts, 2) == VKA_PATH_PACKED;
    return vka_f16_record(ctx, cmd, staged, record_checked, &op);
}

/* The staging passes and the dispatch, after the checks (vka_f16_record). */
static vkattn_result record_checked(vkattn_context *ctx, VkCommandBuffer cmd, const void *op_)
{
    const dropout_op *op = op_;
    const char *caller = op->caller;
    const vkattn_dropout_io *io = op->io;
    const uint64_t count = op->plan.count;
    dropout_push push = make_push(op->params, &op->plan);
    vkattn_result r;
    /* 16-bit tensors: all f16 with 16-bit storage, dropout_f16.comp reads and
     * writes them as float16_t. Otherwise (bf16, or no 16-bit storage) they
     * go through f32 scratch (ops/half_stage.h; packed words are never
     * written by this kernel): with 16-bit in and out the input's scratch is
     * dropped in place and then rounded into out. Either way the product is
     * the f32 op's, so the same elements are kept and each kept value is the
     * f32 result rounded once to out's type. */
    const vkattn_tensor *const ts[2] = {io->in, io->out};
    const bool in16 = vka_dtype_info_of(io->in->dtype)->is_16bit;
    const bool out16 = vka_dtype_info_of(io->out->dtype)->is_16bit;
    const bool native16 = vka_path16_of(ctx, ts, 2) == VKA_PATH_NATIVE16;
    vkattn_tensor *in = io->in, *out = io->out;
    if (!native16) {
        if ((r = vka_f16_stage_in(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE0, io->in, count, &in)))
            return r;
        if (in16 && out16)
            out = in;
        else if ((r = vka_f16_stage_out(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE1, io->out, count,
                                        false, &out)))
            return r;
    }
    const bool in_place = in == out;

    const vka_kernel kernel = {
        .name = native16 ? "dropout_f16" : "dropout",
        .code = native16 ? vka_spv_dropout_f16 : vka_spv_dropout,
        .code_size = native16 ? vka_spv_dropout_f16_size : vka_spv_dropout_size,
        .n_bindings = 2,
        .push_size = sizeof(dropout_push),
        .n_spec = VKA_DROPOUT_N_SPEC,
        .spec = {
            [VKA_DROPOUT_SPEC_IN_PLACE] = in_place,
            [VKA_DROPOUT_SPEC_IN_TYPE] = native16 ? vka_dtype_spec_code(io->in->dtype) : VKA_ELEM_F32,
            [VKA_DROPOUT_SPEC_OUT_TYPE] = native16 ? vka_dtype_spec_code(io->out->dtype) : VKA_ELEM_F32,
        },
    };
    const vka_dispatch d = {
        .bindings = {in_place ? vka_bind_optional(ctx, NULL) : vka_bind_tensor(in, false),
                     vka_bind_tensor(out, true)},
        .push = &push,
        .caller = caller,
    };
    if ((r = vka_record_grid_1d(ctx, cmd, kernel, VKA_DROPOUT_SPEC_WG, push.total_quads, d)))
        return r;
    return vka_f16_stage_finish(ctx, cmd, caller, io->out, out, count);
}
