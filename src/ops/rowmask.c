/* Row masking (query_mask) for the layers: shaders/rowmask.comp. */
#include "ops/rowmask.h"

#include "core/check.h"
#include "core/error.h"
#include "common/rowmask_iface.h"
#include "vk/dispatch.h"
#include "vk/tensor.h"
#include "vk/view.h"
#include "ops/half_stage.h"
#include "vka_shaders.h"

VKA_PUSH_STRUCT(rowmask_push, VKA_ROWMASK_PUSH);

vkattn_result vka_rowmask_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                 uint32_t rows, uint32_t width, vkattn_tensor *mask,
                                 vkattn_tensor *data)
{
    uint64_t total;
    if (!vka_mul_u64(rows, width, &total) || total > UINT32_MAX)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: the output (%u rows x %u) does not fit the kernel's 32-bit indexing",
                        caller, rows, width);
    vkattn_result r;
    vkattn_tensor *df; /* f32 data: a 16-bit output goes through scratch (ops/half_stage.h) */
    if ((r = vka_tensor_check(ctx, mask, rows, caller, "io->query_mask")) ||
        (r = vka_tensor_check_types(ctx, data, total, caller, "io->output", VKA_DTYPES_FLOAT)) ||
        (r = vka_f16_stage_out(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE0, data, total, true, &df)))
        return r;
    const vka_kernel kernel = {VKA_KERNEL_SPV(rowmask), .n_bindings = 2,
                               .push_size = sizeof(rowmask_push), .n_spec = VKA_ROWMASK_N_SPEC};
    rowmask_push push = {.width = width, .total = (uint32_t)total};
    const vka_dispatch d = {
        .bindings = {vka_bind_tensor(mask, false), vka_bind_tensor(df, true)},
        .push = &push,
        .caller = caller,
    };
    if ((r = vka_record_grid_1d(ctx, cmd, kernel, VKA_ROWMASK_SPEC_WG, total, d)))
        return r;
    return vka_f16_stage_finish(ctx, cmd, caller, data, df, total);
}
