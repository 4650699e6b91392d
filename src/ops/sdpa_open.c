/* Soft-capping and sinks steps of SDPA: shaders/softcap.comp, sink_rows.comp. */
#include "ops/sdpa_open.h"

#include "common/sink_iface.h"
#include "core/dtype.h"
#include "core/error.h"
#include "ops/flash.h"
#include "ops/half_stage.h"
#include "ops/scratch_kinds.h"
#include "vk/dispatch.h"
#include "vk/pipeline.h"
#include "vk/tensor.h"
#include "vk/view.h"
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
    /* an f16 out: scaled as it is where the device has 16-bit storage; a
     * bf16 one (or f16 without it) through f32 scratch */
    const vkattn_tensor *const outs[] = {out};
    const bool n16 = vka_path16_of(ctx, outs, 1) == VKA_PATH_NATIVE16;
    vkattn_tensor *of = out;
    if ((r = check_u32(ctx, caller, "the output's element count", n_out)) ||
        (!n16 && (r = vka_f16_stage_out(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE0, out, n_out,
                                        true, &of))))
        return r;
    const vka_kernel kernel = {
        .name = n16 ? "sink_rows_f16" : "sink_rows",
        .code = n16 ? vka_spv_sink_rows_f16 : vka_spv_sink_rows,
        .code_size = n16 ? vka_spv_sink_rows_f16_size : vka_spv_sink_rows_size,
        .n_bindings = 3,
        .push_size = sizeof(sink_push),
        .n_spec = n16 ? VKA_SINK_N_SPEC_F16 : VKA_SINK_N_SPEC,
        .spec = {[VKA_SINK_SPEC_OUT_TYPE] = vka_dtype_spec_code(out->dtype)},
    };
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

/* grad_sinks reduces each head in a workgroup of its own. */
static vkattn_result check_heads(vkattn_context *ctx, const char *caller, uint32_t heads)
{
    if (heads > vka_info(ctx)->max_workgroup_count[0])
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: grad_sinks takes a workgroup per head; %u heads exceed "
                        "maxComputeWorkGroupCount[0]",
                        caller, heads);
    return VKATTN_SUCCESS;
}

/* Invocations of one head's reduction: a power of two the device allows. */
static uint32_t grad_workgroup(const vkattn_context *ctx)
{
    uint32_t wg = 64;
    while (wg > 1 && (wg > vka_info(ctx)->max_workgroup_invocations ||
                      wg > vka_info(ctx)->max_workgroup_size[0] ||
                      4u * wg > vka_info(ctx)->max_shared_memory))
        wg /= 2;
    return wg;
}

vkattn_result vka_sink_grad_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                   const vka_sdpa_shape *s, vkattn_tensor *sinks,
                                   vkattn_tensor *stats, vkattn_tensor *grad_sinks)
{
    vkattn_result r;
    const uint64_t rows = (uint64_t)s->batch * s->tq;
    if ((r = check_u32(ctx, caller, "the rows of a head (B * Tq)", rows)) ||
        (r = check_heads(ctx, caller, s->heads)))
        return r;
    vka_kernel kernel = {VKA_KERNEL_SPV(sink_grad), .n_bindings = 3,
                         .push_size = sizeof(sink_push), .n_spec = VKA_SINK_N_SPEC};
    kernel.spec[VKA_SINK_SPEC_WG] = grad_workgroup(ctx);
    sink_push push = {.heads = s->heads, .tq = s->tq, .width = s->batch};
    const vka_dispatch d = {.kernel = &kernel,
                            .bindings = {vka_bind_tensor(sinks, false),
                                         vka_bind_tensor(stats, false),
                                         vka_bind_tensor(grad_sinks, true)},
                            .push = &push,
                            .groups = {s->heads, 1, 1},
                            .caller = caller};
    return vka_record_dispatch(ctx, cmd, &d);
}

/* What the fused run for the chained path's LSE is: no sinks, weights or
 * dropout (the LSE does not depend on it), the zero policy. */
static vkattn_sdpa_params lse_run_params(const vkattn_sdpa_params *p)
{
    vkattn_sdpa_params f = *p;
    f.has_sinks = false, f.return_weights = false, f.weights_after_dropout = false;
    f.dropout = (vkattn_dropout_params){0};
    f.mask.masked_row = VKATTN_MASKED_ROW_ZERO;
    f.path = VKATTN_SDPA_FUSED;
    return f;
}

/* Its plan: the call's, with dropout off as in lse_run_params. */
static vka_sdpa_shape lse_run_shape(const vka_sdpa_shape *s)
{
    vka_sdpa_shape f = *s;
    f.drop = false, f.drop_threshold = 0, f.drop_scale = 1.0f;
    return f;
}

vkattn_result vka_chained_sinks_check(vkattn_context *ctx, const char *caller,
                                      const vkattn_sdpa_params *p, const vka_sdpa_shape *s)
{
    const vkattn_sdpa_params f = lse_run_params(p);
    const vka_sdpa_shape fs = lse_run_shape(s);
    const char *why = NULL;
    if (vka_flash_supports(ctx, &fs, &f, &why))
        return VKATTN_SUCCESS;
    return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED,
                    "%s: params->has_sinks on the chained path takes each row's log-sum-exp "
                    "from the fused kernel, which cannot serve this call: %s",
                    caller, why ? why : "unsupported");
}

vkattn_result vka_chained_sinks_lse(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                    const vkattn_sdpa_params *p, const vka_sdpa_shape *s,
                                    const vkattn_sdpa_io *io, vkattn_tensor **lse)
{
    const uint64_t rows = (uint64_t)s->batch * s->heads * s->tq;
    vkattn_tensor *out;
    vkattn_result r;
    if ((r = vka_growable_get(ctx, VKA_SCRATCH_SINK_LSE, rows, caller, lse)) ||
        (r = vka_growable_get(ctx, VKA_SCRATCH_SINK_OUT, rows * s->dv, caller, &out)))
        return r;
    const vkattn_sdpa_params f = lse_run_params(p);
    const vka_sdpa_shape fs = lse_run_shape(s);
    vkattn_sdpa_io fio = *io;
    fio.out = out, fio.weights = NULL, fio.lse = *lse, fio.workspace = NULL;
    /* the run vka_chained_sinks_check accepted; chosen here, where its
     * tensors are known (the chained forward and backward carry no fused
     * plan of their own) */
    vka_flash_choice fc;
    vka_flash_choose(ctx, &fs, &f, &fc);
    vka_flash_choose_coopmat(ctx, &fs, &f, &fio, &fc);
    return vka_flash_record_lse(ctx, cmd, &fs, &f, &fc, &fio, *lse, caller);
}

vkattn_result vka_softcap_grad_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                      const char *caller, uint64_t n, float softcap,
                                      vkattn_tensor *raw, vkattn_tensor *ds)
{
    vkattn_result r = check_u32(ctx, caller, "the score tensor", n);
    if (r)
        return r;
    const vka_kernel kernel = {VKA_KERNEL_SPV(softcap_grad), .n_bindings = 2,
                               .push_size = sizeof(sink_push), .n_spec = VKA_SINK_N_SPEC};
    sink_push push = {.total = (uint32_t)n, .softcap = softcap};
    const vka_dispatch d = {.bindings = {vka_bind_tensor(raw, false), vka_bind_tensor(ds, true)},
                            .push = &push,
                            .caller = caller};
    return vka_record_grid_1d(ctx, cmd, kernel, VKA_SINK_SPEC_WG, n, d);
}

vkattn_result vka_sink_grad_rows_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                        const char *caller, const vka_sdpa_shape *s,
                                        vkattn_tensor *weights, vkattn_tensor *dp,
                                        vkattn_tensor *grad_sinks)
{
    vkattn_result r;
    if ((r = check_u32(ctx, caller, "the score tensor", s->scores)) ||
        (r = check_heads(ctx, caller, s->heads)))
        return r;
    vka_kernel kernel = {VKA_KERNEL_SPV(sink_grad_rows), .n_bindings = 3,
                         .push_size = sizeof(sink_push), .n_spec = VKA_SINK_N_SPEC};
    kernel.spec[VKA_SINK_SPEC_WG] = grad_workgroup(ctx);
    /* each invocation walks B * Tq / WG rows of Tv keys: within a CPU
     * driver's loop budget (lavapipe: 65535 iterations per invocation) */
    const uint64_t iters = ((uint64_t)s->batch * s->tq / kernel.spec[VKA_SINK_SPEC_WG] + 1) *
                           ((uint64_t)s->tv + 1);
    if (iters > vka_loop_budget(ctx))
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: grad_sinks on the chained path walks %llu loop iterations per "
                        "invocation, past the device's loop budget (%llu): use the fused "
                        "backward (give io->lse)",
                        caller, (unsigned long long)iters, (unsigned long long)vka_loop_budget(ctx));
    sink_push push = {.total = s->batch, .heads = s->heads, .tq = s->tq, .width = s->tv};
    const vka_dispatch d = {.kernel = &kernel,
                            .bindings = {vka_bind_tensor(weights, false),
                                         vka_bind_tensor(dp, false),
                                         vka_bind_tensor(grad_sinks, true)},
                            .push = &push,
                            .groups = {s->heads, 1, 1},
                            .caller = caller};
    return vka_record_dispatch(ctx, cmd, &d);
}
