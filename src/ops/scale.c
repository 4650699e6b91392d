/* Scaling by a device scalar for the layers: shaders/scale.comp. */
#include "ops/scale.h"

#include "core/error.h"
#include "common/scale_iface.h"
#include "vk/context.h"
#include "vk/dispatch.h"
#include "vk/tensor.h"
#include "ops/half_stage.h"
#include "vka_shaders.h"

typedef struct scale_push {
    VKA_SCALE_PUSH
} scale_push;
_Static_assert(sizeof(scale_push) == VKA_SCALE_PUSH_SIZE, "scale_push: see scale_iface.h");

/* Enough groups to fill any GPU; beyond it invocations loop (lavapipe likes that). */
#define MAX_GROUPS 4096u

typedef struct scale_op {
    const char *caller;
    uint64_t n;
    vkattn_tensor *s, *x, *y;
} scale_op;

/* The staging passes and the dispatch, after the checks (vka_f16_record). */
static vkattn_result record_checked(vkattn_context *ctx, VkCommandBuffer cmd, const void *op_)
{
    const scale_op *op = op_;
    const char *caller = op->caller;
    const uint64_t n = op->n;
    vkattn_tensor *s = op->s, *x = op->x, *y = op->y;
    vkattn_result r;
    /* f16 tensors go through f32 scratch (ops/half_stage.h) */
    vkattn_tensor *sf, *xf, *yf;
    if ((r = vka_f16_stage_in(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE0, s, 1, &sf)) ||
        (r = vka_f16_stage_in(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE1, x, n, &xf)) ||
        (r = vka_f16_stage_out(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE2, y, n, false, &yf)))
        return r;
    const vka_grid_1d grid = vka_grid_stride_1d(ctx, n, MAX_GROUPS);
    vka_kernel kernel = {
        .name = "scale",
        .code = vka_spv_scale,
        .code_size = vka_spv_scale_size,
        .n_bindings = 3,
        .push_size = sizeof(scale_push),
        .n_spec = VKA_SCALE_N_SPEC,
        .spec = {
            [VKA_SCALE_SPEC_WG] = grid.threads,
        },
    };
    scale_push push = {.total = (uint32_t)n};
    vka_dispatch d = {
        .kernel = &kernel,
        .bindings = {vka_bind_tensor(sf, false), vka_bind_tensor(xf, false),
                     vka_bind_tensor(yf, true)},
        .push = &push,
        .groups = {grid.groups, 1, 1},
        .caller = caller,
    };
    if ((r = vka_record_dispatch(ctx, cmd, &d)))
        return r;
    return vka_f16_stage_finish(ctx, cmd, caller, y, yf, n);
}

vkattn_result vka_scale_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                               const char *what, uint64_t n, vkattn_tensor *s, vkattn_tensor *x,
                               vkattn_tensor *y)
{
    if (n > UINT32_MAX)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: %s (%llu elements) does not fit the scaling kernel's 32-bit indexing",
                        caller, what, (unsigned long long)n);
    vkattn_result r;
    const unsigned both = VKA_DTYPES_F32_F16;
    if ((r = vka_tensor_check_types(ctx, s, 1, caller, "the layer's scale", both)) ||
        (r = vka_tensor_check_types(ctx, x, n, caller, what, both)) ||
        (r = vka_tensor_check_types(ctx, y, n, caller, "the scaled copy", both)))
        return r;
    const scale_op op = {.caller = caller, .n = n, .s = s, .x = x, .y = y};
    const bool staged = s->dtype == VKATTN_DTYPE_F16 || x->dtype == VKATTN_DTYPE_F16 ||
                        y->dtype == VKATTN_DTYPE_F16;
    return vka_f16_record(ctx, cmd, staged, record_checked, &op);
}
