/* Mean-squared-error loss: argument checks and the one-workgroup dispatch of
 * shaders/mse.comp. 16-bit pred, target and grad (f16, bf16) go through f32
 * scratch (ops/half_stage.h): read exactly, the f32 kernel, grad rounded once;
 * the loss stays f32. */
#include "vkattn/loss.h"

#include "core/error.h"
#include "common/mse_iface.h"
#include "ops/half_stage.h"
#include "shape/train_shape.h"
#include "vk/dispatch.h"
#include "vk/tensor.h"
#include "vka_shaders.h"
#include "vk/record_mode.h"
#include "vk/view.h"

VKA_PUSH_STRUCT(mse_push, VKA_MSE_PUSH);

/* Tensors over overlapping memory share one tracked range (vk/tensor.h). */
static bool overlap(const vkattn_tensor *a, const vkattn_tensor *b)
{
    return a && b && a->range == b->range;
}

static vkattn_result check_io(vkattn_context *ctx, const char *caller, uint32_t n,
                              const vkattn_mse_io *io)
{
    if (!io)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: io is NULL", caller);
    vkattn_result r;
    if ((r = vka_tensor_check_types(ctx, io->pred, n, caller, "io->pred", VKA_DTYPES_FLOAT)) ||
        (r = vka_tensor_check_types(ctx, io->target, n, caller, "io->target",
                                    VKA_DTYPES_FLOAT)) ||
        (r = vka_f16_require_f32(ctx, io->loss, caller, "io->loss")) ||
        (r = vka_tensor_check(ctx, io->loss, 1, caller, "io->loss")) ||
        (io->grad &&
         (r = vka_tensor_check_types(ctx, io->grad, n, caller, "io->grad", VKA_DTYPES_FLOAT))))
        return r;
    /* pred and target are only read, so they may share memory; outputs may not. */
    const char *clash = overlap(io->loss, io->pred)     ? "io->loss and io->pred"
                        : overlap(io->loss, io->target) ? "io->loss and io->target"
                        : overlap(io->loss, io->grad)   ? "io->loss and io->grad"
                        : overlap(io->grad, io->pred)   ? "io->grad and io->pred"
                        : overlap(io->grad, io->target) ? "io->grad and io->target"
                                                        : NULL;
    if (clash)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s overlap; an output must have memory of its own", caller, clash);
    return VKATTN_SUCCESS;
}

typedef struct mse_op {
    const vkattn_mse_params *params;
    const vkattn_mse_io *io;
} mse_op;

/* Everything after the checks (run dry first when staged: vka_f16_record). */
static vkattn_result record_checked(vkattn_context *ctx, VkCommandBuffer cmd, const void *op_)
{
    const char *caller = "vkattn_mse_record";
    const mse_op *op = op_;
    const vkattn_mse_params *params = op->params;
    const vkattn_mse_io *io = op->io;
    const uint32_t n = params->count;
    vkattn_tensor *pred = NULL, *target = NULL, *grad = NULL;
    vkattn_result r;
    /* pred == target: one copy serves both */
    if ((r = vka_f16_stage_in(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE0, io->pred, n, &pred)) ||
        (io->target != io->pred &&
         (r = vka_f16_stage_in(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE1, io->target, n,
                               &target))) ||
        (io->grad && (r = vka_f16_stage_out(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE2, io->grad,
                                            n, false, &grad))))
        return r;
    if (io->target == io->pred)
        target = pred;
    const double scale = params->loss_scale != 0.0f ? params->loss_scale : 1.0;
    vka_kernel kernel = {
        VKA_KERNEL_SPV(mse),
        .n_bindings = 4,
        .push_size = sizeof(mse_push),
        .n_spec = VKA_MSE_N_SPEC,
        .spec = {[VKA_MSE_SPEC_GRAD] = io->grad != NULL},
    };
    mse_push push = {
        .count = n,
        .inv_count = (float)(1.0 / n),
        .grad_factor = (float)(2.0 * scale / n),
    };
    vka_dispatch d = {
        .kernel = &kernel,
        .bindings = {vka_bind_tensor(pred, false), vka_bind_tensor(target, false),
                     vka_bind_tensor(io->loss, true), vka_bind_optional_output(ctx, grad)},
        .push = &push,
        .groups = {1, 1, 1},
        .caller = caller,
    };
    if ((r = vka_record_dispatch(ctx, cmd, &d)) || !io->grad)
        return r;
    return vka_f16_stage_finish(ctx, cmd, caller, io->grad, grad, n);
}

vkattn_result vkattn_mse_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                const vkattn_mse_params *params, const vkattn_mse_io *io)
{
    VKA_RECORD_MODES(ctx, ctx, cmd, vkattn_mse_record(ctx, cmd, params, io));
    vkattn_result r = vka_mse_check_params(ctx, __func__, params);
    if (r == VKATTN_SUCCESS)
        r = check_io(ctx, __func__, params->count, io);
    if (r != VKATTN_SUCCESS)
        return r;
    const mse_op op = {.params = params, .io = io};
    const vkattn_tensor *const ts[3] = {io->pred, io->target, io->grad};
    const bool staged = vka_path16_of(ctx, ts, 3) != VKA_PATH_F32;
    return vka_f16_record(ctx, cmd, staged, record_checked, &op);
}
