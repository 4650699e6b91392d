/* Backward of the head split and merge: each is the other's permutation on
 * the gradient, recorded through the forward's kernel (ops/heads_rows.h). */
#include "vkattn/heads.h"
#include "ops/heads_rows.h"

#include "core/error.h"
#include "vk/record_mode.h"

/* split: the backward of the split, which merges. */
static vkattn_result record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                            const vkattn_heads_params *params,
                            const vkattn_heads_backward_io *io, bool backward_of_split)
{
    if (!io)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: io is NULL", caller);
    const vkattn_heads_io fwd = {.in = io->grad_out, .out = io->grad_in};
    /* the whole sequence: rows [0, seq) of seq */
    const uint32_t seq = params ? params->seq : 0;
    static const char *const names[2] = {"io->grad_out", "io->grad_in"};
    return vka_heads_rows_record(ctx, cmd, caller, params, &fwd, !backward_of_split, seq, 0,
                                 names);
}

vkattn_result vkattn_heads_split_backward_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                                 const vkattn_heads_params *params,
                                                 const vkattn_heads_backward_io *io)
{
    VKA_RECORD_MODES(ctx, ctx, cmd, vkattn_heads_split_backward_record(ctx, cmd, params, io));
    return record(ctx, cmd, __func__, params, io, true);
}

vkattn_result vkattn_heads_merge_backward_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                                 const vkattn_heads_params *params,
                                                 const vkattn_heads_backward_io *io)
{
    VKA_RECORD_MODES(ctx, ctx, cmd, vkattn_heads_merge_backward_record(ctx, cmd, params, io));
    return record(ctx, cmd, __func__, params, io, false);
}
