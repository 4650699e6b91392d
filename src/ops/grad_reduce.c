/* Sums of strided slices for the backward ops: shaders/grad_reduce.comp and
 * grad_reduce_f16 (shaders/variants.txt). */
#include "ops/grad_reduce.h"

#include "core/dtype.h"
#include "core/error.h"
#include "ops/half_stage.h"
#include "ops/split.h"
#include "common/grad_reduce_iface.h"
#include "vk/dispatch.h"
#include "vk/tensor.h"
#include "vk/view.h"
#include "vka_shaders.h"

VKA_PUSH_STRUCT(grad_reduce_push, VKA_GRAD_REDUCE_PUSH);

/* The largest element index the kernel forms on either side, +1. */
static uint64_t in_reach(const vka_grad_reduce *g)
{
    uint64_t e = (uint64_t)(g->groups - 1) * g->in_g + (uint64_t)(g->rows - 1) * g->in_row + g->cols;
    for (int i = 0; i < 3; i++)
        e += (g->n[i] - 1) * g->s[i];
    return e;
}

vkattn_result vka_grad_reduce_check(vkattn_context *ctx, const char *caller,
                                    const vka_grad_reduce *g)
{
    /* every stride and count here is bounded by a tensor extent the caller
     * checked against 2^32, so these products cannot overflow 64 bits */
    const uint64_t total = (uint64_t)g->groups * g->rows * g->cols;
    const uint64_t out = (uint64_t)(g->groups - 1) * g->out_g +
                         (uint64_t)(g->rows - 1) * g->out_row + g->cols;
    if (total > UINT32_MAX || out > UINT32_MAX || in_reach(g) > UINT32_MAX)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: a gradient reduction does not fit the kernel's 32-bit indexing",
                        caller);
    const vka_grid_1d grid = vka_grid_stride_1d(ctx, total, VKA_GRID_MAX_GROUPS);
    const uint64_t per_output = g->n[0] * g->n[1] * g->n[2];
    const uint64_t outputs = vka_div_up(total, (uint64_t)grid.threads * grid.groups);
    return vka_check_loop_budget(ctx, caller, outputs * (per_output + 1),
                                 "the reduced (broadcast) axes");
}

/* grad_reduce_f16's float16_t views (f16 on a device with 16-bit storage),
 * or, with a bf16 tensor or without 16-bit storage, only through staging */
static vka_path16 path_of(const vkattn_context *ctx, const vkattn_tensor *in,
                          const vkattn_tensor *out)
{
    const vkattn_tensor *const ts[] = {in, out};
    return vka_path16_of(ctx, ts, 2);
}

vkattn_result vka_grad_reduce_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                     const vka_grad_reduce *g, vkattn_tensor *in,
                                     vkattn_tensor *out)
{
    vkattn_result r = vka_grad_reduce_check(ctx, caller, g);
    if (r)
        return r;
    const vka_path16 path = path_of(ctx, in, out);
    const bool n16 = path == VKA_PATH_NATIVE16;
    if (path == VKA_PATH_PACKED)
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED,
                        "%s: a gradient reduction reads 16-bit tensors only as f16 with 16-bit "
                        "storage (stage them: vka_grad_reduce_record_any)",
                        caller);
    const uint64_t total = (uint64_t)g->groups * g->rows * g->cols;
    const vka_kernel kernel = {
        .name = n16 ? "grad_reduce_f16" : "grad_reduce",
        .code = n16 ? vka_spv_grad_reduce_f16 : vka_spv_grad_reduce,
        .code_size = n16 ? vka_spv_grad_reduce_f16_size : vka_spv_grad_reduce_size,
        .n_bindings = 2,
        .push_size = sizeof(grad_reduce_push),
        .n_spec = n16 ? VKA_GRAD_REDUCE_N_SPEC_F16 : VKA_GRAD_REDUCE_N_SPEC,
        .spec = {[VKA_GRAD_REDUCE_SPEC_IN_TYPE] = vka_dtype_spec_code(in->dtype),
                 [VKA_GRAD_REDUCE_SPEC_OUT_TYPE] = vka_dtype_spec_code(out->dtype)},
    };
    grad_reduce_push push = {
        .rows = g->rows, .cols = g->cols,
        .out_g = (uint32_t)g->out_g, .out_row = (uint32_t)g->out_row,
        .in_g = (uint32_t)g->in_g, .in_row = (uint32_t)g->in_row,
        .n1 = (uint32_t)g->n[0], .s1 = (uint32_t)g->s[0],
        .n2 = (uint32_t)g->n[1], .s2 = (uint32_t)g->s[1],
        .n3 = (uint32_t)g->n[2], .s3 = (uint32_t)g->s[2],
        .alpha = g->alpha,
    };
    const vka_dispatch d = {
        .bindings = {vka_bind_tensor(in, false), vka_bind_tensor(out, true)},
        .push = &push,
        .caller = caller,
    };
    /* One dispatch, or ranges of outputs within the watchdog budget. */
    uint32_t per;
    if ((r = vka_split_rows(ctx, caller, "grad_reduce", (uint32_t)total, 1,
                            g->n[0] * g->n[1] * g->n[2], &per)))
        return r;
    return vka_record_grid_1d_ranges(ctx, cmd, kernel, VKA_GRAD_REDUCE_SPEC_WG, total, per, d,
                                     &push.begin, &push.end);
}

bool vka_grad_reduce_stages(vkattn_context *ctx, const vkattn_tensor *in,
                            const vkattn_tensor *out)
{
    return path_of(ctx, in, out) == VKA_PATH_PACKED;
}

vkattn_result vka_grad_reduce_record_any(vkattn_context *ctx, VkCommandBuffer cmd,
                                         const char *caller, const vka_grad_reduce *g,
                                         vkattn_tensor *in, uint64_t in_count,
                                         vkattn_tensor *out, uint64_t out_count,
                                         bool out_partial)
{
    if (!vka_grad_reduce_stages(ctx, in, out))
        return vka_grad_reduce_record(ctx, cmd, caller, g, in, out);
    vkattn_tensor *in_f = NULL, *out_f = NULL; /* set by the stage calls; gcc 14 cannot see it */
    vkattn_result r;
    if ((r = vka_f16_stage_in(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE0, in, in_count, &in_f)) ||
        (r = vka_f16_stage_out(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE1, out, out_count,
                               out_partial, &out_f)) ||
        (r = vka_grad_reduce_record(ctx, cmd, caller, g, in_f, out_f)))
        return r;
    return vka_f16_stage_finish(ctx, cmd, caller, out, out_f, out_count);
}
