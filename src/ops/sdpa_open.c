/* Soft-capping and sinks steps of SDPA: shaders/softcap.comp, sink_rows.comp. */
#include "ops/sdpa_open.h"

#include "common/sink_iface.h"
#include "core/error.h"
#include "ops/half_stage.h"
#include "vk/context.h"
#include "vk/dispatch.h"
#include "vk/pipeline.h"
#include "vk/tensor.h"
#include "vka_shaders.h"

VKA_PUSH_STRUCT(sink_push, VKA_SINK_PUSH);

static vkattn_result check_u32(vkattn_context *ctx, const char *caller, const char *what,
                               uint64_t n)
{
    if (n > UINT32_MAX)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: %s (%llu) does not fit the kernel's 32-bit indexing", caller, what,
                        (unsigned long long)n);
    return VKATTN_SUCCESS;
}

vkattn_result vka_softcap_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                 uint64_t n, float softcap, vkattn_tensor *scores)
{
    vkattn_result r = check_u32(ctx, caller, "the score tensor", n);
    if (r)
        return r;
    const vka_kernel kernel = {VKA_KERNEL_SPV(softcap), .n_bindings = 1,
                               .push_size = sizeof(sink_push), .n_spec = VKA_SINK_N_SPEC};
    sink_push push = {.total = (uint32_t)n, .softcap = softcap};
    const vka_dispatch d = {.bindings = {vka_bind_tensor(scores, true)}, .push = &push,
                            .caller = caller};
    return vka_record_grid_1d(ctx, cmd, kernel, VKA_SINK_SPEC_WG, n, d);
}

vkattn_result vka_sink_rows_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                   const vka_sdpa_shape *s, uint32_t width, vkattn_tensor *sinks,
                                   vkattn_tensor *out, vkattn_tensor *lse, bool update_lse)
{
    const uint64_t rows = (uint64_t)s->batch * s->heads * s->tq, n_out = rows * width;
    vkattn_result r;
    vkattn_tensor *of;
    if ((r = check_u32(ctx, caller, "the output's element count", n_out)) ||
        (r = vka_f16_stage_out(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE0, out, n_out, true, &of)))
        return r;
    const vka_kernel kernel = {VKA_KERNEL_SPV(sink_rows), .n_bindings = 3,
                               .push_size = sizeof(sink_push), .n_spec = VKA_SINK_N_SPEC};
    sink_push push = {.total = (uint32_t)rows, .heads = s->heads, .tq = s->tq, .width = width,
                      .update_lse = update_lse};
    const vka_dispatch d = {.bindings = {vka_bind_tensor(sinks, false), vka_bind_tensor(of, true),
                                         vka_bind_tensor(lse, true)},
                            .push = &push,
                            .caller = caller};
    if ((r = vka_record_grid_1d(ctx, cmd, kernel, VKA_SINK_SPEC_WG, rows, d)))
        return r;
    return vka_f16_stage_finish(ctx, cmd, caller, out, of, n_out);
}
