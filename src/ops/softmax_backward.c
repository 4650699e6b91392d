/* The masked softmax's backward: argument checks, the workgroup shape, and the
 * dispatch of shaders/softmax_backward.comp, or of its 4-binding layout
 * softmax_backward_packed.comp (one body, softmax_backward_body.glsl). 16-bit
 * weights and gradients (f16, bf16) go through f32 scratch (ops/half_stage.h):
 * read exactly, the f32 kernel, grad_scores rounded once to its type. */
#include "vkattn/softmax_backward.h"

#include <math.h>
#include <stdio.h>

#include "core/broadcast.h"
#include "core/check.h"
#include "core/error.h"
#include "common/softmax_backward_iface.h"
#include "ops/half_stage.h"
#include "ops/softmax_rows.h"
#include "vk/dispatch.h"
#include "vk/pack.h"
#include "vk/tensor.h"
#include "vka_shaders.h"
#include "vk/record_mode.h"
#include "vk/view.h"

VKA_PUSH_STRUCT(smb_push, VKA_SMB_PUSH);

#define SMB_BINDINGS 6u
#define SMB_PACKED_BINDINGS 4u
/* loop iterations per invocation the shape aims for: half of lavapipe's limit */
#define SMB_LOOP_TARGET 32768u

/* 64 invocations (within the device's limits). On a CPU driver one invocation
 * per row, as the forward (a reduction across SIMD lanes costs barriers), more
 * for rows too long for the loop budget; on GPUs the whole workgroup per row. */
static bool choose_shape(const vkattn_context_info *info, uint32_t tv, uint32_t *wg, uint32_t *g)
{
    uint32_t w = 64;
    while (w > 1 && (w > info->max_workgroup_invocations || w > info->max_workgroup_size[0] ||
                     8u * w > info->max_shared_memory))
        w /= 2;
    if (w > info->max_workgroup_invocations || 8u * w > info->max_shared_memory)
        return false;
    uint32_t lanes = info->cpu_tuning ? 1 : w;
    while (lanes < w && 2 * ((uint64_t)tv / lanes) + 64 > SMB_LOOP_TARGET)
        lanes *= 2;
    *wg = w, *g = lanes;
    return true;
}

static vkattn_result check_io(vkattn_context *ctx, const char *caller,
                              const vkattn_softmax_params *p,
                              const vkattn_softmax_backward_io *io, vka_softmax_dims *d)
{
    if (!io)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: io is NULL", caller);
    vkattn_result r;
    if ((r = vka_tensor_check_types(ctx, io->weights, d->plan.total, caller, "io->weights",
                                    VKA_DTYPES_FLOAT)) ||
        (r = vka_tensor_check_types(ctx, io->grad_out, d->plan.total, caller, "io->grad_out",
                                    VKA_DTYPES_FLOAT)) ||
        (r = vka_tensor_check_types(ctx, io->grad_scores, d->plan.total, caller,
                                    "io->grad_scores", VKA_DTYPES_FLOAT)))
        return r;
    if (io->grad_scores == io->weights)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->grad_scores aliases io->weights (only io->grad_out may be "
                        "written in place)",
                        caller);
    return vka_softmax_check_mask_operands(ctx, caller, p, d, io->bias, io->value_mask,
                                           io->mask, io->grad_scores, "io->grad_scores",
                                           "io->grad_out", false);
}

typedef struct smb_op {
    const vkattn_softmax_params *params;
    const vkattn_softmax_backward_io *io;
    const vka_softmax_dims *dims;
    uint32_t wg, g;
    bool packed;
} smb_op;

/* Everything after the checks: the staging passes, the pack and the dispatch
 * (run dry first when staged: vka_f16_record). */
static vkattn_result record_checked(vkattn_context *ctx, VkCommandBuffer cmd, const void *op_)
{
    const char *caller = "vkattn_softmax_backward_record";
    const smb_op *op = op_;
    const vkattn_softmax_params *params = op->params;
    const vkattn_softmax_backward_io *io = op->io;
    const vka_softmax_dims *dims = op->dims;
    const vkattn_mask_params *m = &params->mask;
    const bool in_place = io->grad_scores == io->grad_out;
    const bool packed = op->packed;
    const uint64_t total = dims->plan.total;
    /* In place the scratch for grad_scores starts as grad_out's values
     * (partial), and the kernel reads them through it. */
    vkattn_tensor *weights = NULL, *grad_out = NULL, *grad_scores = NULL;
    vkattn_result r;
    if ((r = vka_f16_stage_in(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE0, io->weights, total,
                              &weights)) ||
        (!in_place && (r = vka_f16_stage_in(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE1,
                                            io->grad_out, total, &grad_out))) ||
        (r = vka_f16_stage_out(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE2, io->grad_scores, total,
                               in_place, &grad_scores)))
        return r;
    vka_kernel kernel = {
        .name = packed ? "softmax_backward_packed" : "softmax_backward",
        .code = packed ? vka_spv_softmax_backward_packed : vka_spv_softmax_backward,
        .code_size = packed ? vka_spv_softmax_backward_packed_size : vka_spv_softmax_backward_size,
        .n_bindings = packed ? SMB_PACKED_BINDINGS : SMB_BINDINGS,
        .push_size = sizeof(smb_push),
        .n_spec = VKA_SMB_N_SPEC,
        .spec = {
            [VKA_SMB_SPEC_WG] = op->wg,
            [VKA_SMB_SPEC_G] = op->g,
            [VKA_SMB_SPEC_IN_PLACE] = in_place,
            [VKA_SMB_SPEC_HAS_BIAS] = m->has_bias,
            [VKA_SMB_SPEC_HAS_VMASK] = m->has_value_mask,
            [VKA_SMB_SPEC_HAS_MASK] = m->has_mask,
        },
    };
    const uint64_t rows = total / params->tv;
    smb_push push = {
        .rows = (uint32_t)rows, .heads = dims->plan.heads, .tq = params->tq, .tv = params->tv,
        .causal = (uint32_t)m->causal,
        .bias_b = (uint32_t)dims->bias_s[0], .bias_h = (uint32_t)dims->bias_s[1],
        .bias_i = (uint32_t)dims->bias_s[2],
        .mask_b = (uint32_t)dims->mask_s[0], .mask_h = (uint32_t)dims->mask_s[1],
        .mask_i = (uint32_t)dims->mask_s[2],
        .window = dims->plan.window,
        .scale = dims->plan.scale,
    };
    /* In place dL/dW is read through the written binding (a binding is either
     * read-only or written per dispatch); binding 1 is then unused. */
    vka_dispatch d = {
        .kernel = &kernel,
        .bindings = {vka_bind_tensor(weights, false),
                     in_place ? vka_bind_optional(ctx, NULL) : vka_bind_tensor(grad_out, false),
                     vka_bind_optional(ctx, io->bias), vka_bind_optional(ctx, io->value_mask),
                     vka_bind_optional(ctx, io->mask), vka_bind_tensor(grad_scores, true)},
        .push = &push,
        .caller = caller,
    };
    if ((r = vka_softmax_spread_groups(ctx, caller, rows, op->wg / op->g, d.groups)))
        return r;
    push.groups_x = d.groups[0];
    if (packed) {
        vkattn_tensor *const side[3] = {io->bias, io->value_mask, io->mask};
        vka_packed pk;
        if ((r = vka_pack_inputs(ctx, cmd, caller, side, 3, &pk)))
            return r;
        push.bias_off = pk.offset[0], push.vmask_off = pk.offset[1], push.mask_off = pk.offset[2];
        d.bindings[2] = pk.binding;
        d.bindings[3] = d.bindings[5];
    }
    if ((r = vka_record_dispatch(ctx, cmd, &d)))
        return r;
    return vka_f16_stage_finish(ctx, cmd, caller, io->grad_scores, grad_scores, total);
}

vkattn_result vkattn_softmax_backward_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                             const vkattn_softmax_params *params,
                                             const vkattn_softmax_backward_io *io)
{
    VKA_RECORD_MODES(ctx, ctx, cmd, vkattn_softmax_backward_record(ctx, cmd, params, io));
    vka_softmax_dims dims = {0};
    vkattn_result r = vka_softmax_plan(ctx, __func__, params, "weights", UINT32_MAX, &dims);
    if (r == VKATTN_SUCCESS)
        r = check_io(ctx, __func__, params, io, &dims);
    if (r != VKATTN_SUCCESS)
        return r;
    smb_op op = {.params = params, .io = io, .dims = &dims};
    if (!choose_shape(vka_info(ctx), params->tv, &op.wg, &op.g))
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: no workgroup fits the device's limits", __func__);
    if ((r = vka_check_loop_budget(ctx, __func__, 2 * vka_div_up(params->tv, op.g) + 64,
                                   "params->tv")))
        return r;
    op.packed = vka_info(ctx)->max_storage_buffers_per_stage < SMB_BINDINGS;
    if (op.packed && vka_info(ctx)->max_storage_buffers_per_stage < SMB_PACKED_BINDINGS)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: the kernel needs %u storage buffers per shader stage; "
                        "maxPerStageDescriptorStorageBuffers is %u",
                        __func__, SMB_PACKED_BINDINGS, vka_info(ctx)->max_storage_buffers_per_stage);
    const vkattn_tensor *const ts[3] = {io->weights, io->grad_out, io->grad_scores};
    const bool staged = vka_path16_of(ctx, ts, 3) != VKA_PATH_F32;
    return vka_f16_record(ctx, cmd, staged, record_checked, &op);
}
