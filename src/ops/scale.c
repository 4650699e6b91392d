/* Scaling by a device scalar for the layers: shaders/scale.comp. */
#include "ops/scale.h"

#include "core/error.h"
#include "common/scale_iface.h"
#include "vk/context.h"
#include "vk/dispatch.h"
#include "vk/tensor.h"
#include "vka_shaders.h"

typedef struct scale_push {
    VKA_SCALE_PUSH
} scale_push;
_Static_assert(sizeof(scale_push) == VKA_SCALE_PUSH_SIZE, "scale_push: see scale_iface.h");

/* Enough groups to fill any GPU; beyond it invocations loop (lavapipe likes that). */
#define MAX_GROUPS 4096u

vkattn_result vka_scale_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                               const char *what, uint64_t n, vkattn_tensor *s, vkattn_tensor *x,
                               vkattn_tensor *y)
{
    if (n > UINT32_MAX)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: %s (%llu elements) does not fit the scaling kernel's 32-bit indexing",
                        caller, what, (unsigned long long)n);
    vkattn_result r;
    if ((r = vka_tensor_check(ctx, s, 1, caller, "the layer's scale")) ||
        (r = vka_tensor_check(ctx, x, n, caller, what)) ||
        (r = vka_tensor_check(ctx, y, n, caller, "the scaled copy")))
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
        .bindings = {vka_bind_tensor(s, false), vka_bind_tensor(x, false),
                     vka_bind_tensor(y, true)},
        .push = &push,
        .groups = {grid.groups, 1, 1},
        .caller = caller,
    };
    return vka_record_dispatch(ctx, cmd, &d);
}
