/* Backward of dropout: the forward's kernel (src/ops/dropout.c) on the
 * gradient. The mask is regenerated from the same Philox stream, never stored. */
#include "vkattn/dropout.h"

#include "core/error.h"
#include "ops/dropout_record.h"
#include "vk/prepare.h"
#include "vk/submit.h"
#include "vk/record_mode.h"

vkattn_result vkattn_dropout_backward_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                             const vkattn_dropout_op_params *params,
                                             const vkattn_dropout_backward_io *io)
{
    VKA_RECORD_MODES(ctx, ctx, cmd, vkattn_dropout_backward_record(ctx, cmd, params, io));
    const char *caller = "vkattn_dropout_backward_record";
    if (!io)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: io is NULL", caller);
    const vkattn_dropout_io fwd = {.in = io->grad_out, .out = io->grad_in};
    return vka_dropout_record(ctx, cmd, caller, params, &fwd);
}

vkattn_result vkattn_dropout_backward_run(vkattn_context *ctx,
                                          const vkattn_dropout_op_params *params,
                                          const vkattn_dropout_backward_io *io)
{
    if (!ctx)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "vkattn_dropout_backward_run: ctx is NULL");
    VKA_RUN(ctx, vkattn_dropout_backward_record(ctx, cmd, params, io));
}

vkattn_result vkattn_dropout_backward_prepare(vkattn_context *ctx,
                                              const vkattn_dropout_op_params *params,
                                              const vkattn_dropout_backward_io *io)
{
    const char *fn = "vkattn_dropout_backward_prepare";
    if (!ctx)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    return vka_prepare_result(ctx, fn,
                              vkattn_dropout_backward_record(ctx, VKA_DRY_CMD, params, io));
}
