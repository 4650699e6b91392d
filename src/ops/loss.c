/* Mean-squared-error loss: argument checks and the one-workgroup dispatch of
 * shaders/mse.comp. */
#include "vkattn/loss.h"

#include "core/error.h"
#include "common/mse_iface.h"
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
    if ((r = vka_tensor_check(ctx, io->pred, n, caller, "io->pred")) ||
        (r = vka_tensor_check(ctx, io->target, n, caller, "io->target")) ||
        (r = vka_tensor_check(ctx, io->loss, 1, caller, "io->loss")) ||
        (io->grad && (r = vka_tensor_check(ctx, io->grad, n, caller, "io->grad"))))
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

vkattn_result vkattn_mse_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                const vkattn_mse_params *params, const vkattn_mse_io *io)
{
    VKA_RECORD_MODES(ctx, ctx, cmd, vkattn_mse_record(ctx, cmd, params, io));
    vkattn_result r = vka_mse_check_params(ctx, __func__, params);
    if (r == VKATTN_SUCCESS)
        r = check_io(ctx, __func__, params->count, io);
    if (r != VKATTN_SUCCESS)
        return r;
    const double scale = params->loss_scale != 0.0f ? params->loss_scale : 1.0;
    vka_kernel kernel = {
        VKA_KERNEL_SPV(mse),
        .n_bindings = 4,
        .push_size = sizeof(mse_push),
        .n_spec = VKA_MSE_N_SPEC,
        .spec = {[VKA_MSE_SPEC_GRAD] = io->grad != NULL},
    };
    mse_push push = {
        .count = params->count,
        .inv_count = (float)(1.0 / params->count),
        .grad_factor = (float)(2.0 * scale / params->count),
    };
    vka_dispatch d = {
        .kernel = &kernel,
        .bindings = {vka_bind_tensor(io->pred, false), vka_bind_tensor(io->target, false),
                     vka_bind_tensor(io->loss, true), vka_bind_optional_output(ctx, io->grad)},
        .push = &push,
        .groups = {1, 1, 1},
        .caller = __func__,
    };
    return vka_record_dispatch(ctx, cmd, &d);
}
