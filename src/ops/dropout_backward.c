/* Backward of dropout: the forward's kernel (src/ops/dropout.c) on the
 * gradient. The mask is regenerated from the same Philox stream, never stored. */
#include "vkattn/dropout.h"

#include "core/error.h"
#include "ops/dropout_record.h"
#include "vk/record_mode.h"

vkattn_result vkattn_dropout_backward_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                             const vkattn_dropout_op_params *params,
                                             const vkattn_dropout_backward_io *io)
{
    VKA_RECORD_MODES(ctx, ctx, cmd, vkattn_dropout_backward_record(ctx, cmd, params, io));
    if (!io)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: io is NULL", __func__);
    const vkattn_dropout_io fwd = {.in = io->grad_out, .out = io->grad_in};
    static const char *const names[2] = {"io->grad_out", "io->grad_in"};
    return vka_dropout_record(ctx, cmd, __func__, names, params, &fwd);
}
