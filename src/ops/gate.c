/* Keras use_gate for the multi-head layers: shaders/gate.comp, gate_backward.comp
 * (their _f16 variants where the device has 16-bit storage). */
#include "ops/gate.h"

#include "common/gate_iface.h"
#include "core/dtype.h"
#include "core/error.h"
#include "ops/elementwise.h"
#include "ops/half_stage.h"
#include "vk/dispatch.h"
#include "vk/tensor.h"
#include "vk/view.h"
#include "vka_shaders.h"

VKA_PUSH_STRUCT(gate_push, VKA_GATE_PUSH);

static vkattn_result check_count(vkattn_context *ctx, const char *caller, uint64_t n)
{
    if (n > UINT32_MAX)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: the gated context (%llu elements) does not fit the gate kernel's "
                        "32-bit indexing",
                        caller, (unsigned long long)n);
    return VKATTN_SUCCESS;
}

vkattn_result vka_gate_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                              uint64_t n, vkattn_tensor *x, vkattn_tensor *g, vkattn_tensor *y)
{
    const vka_binary_kernel k = {"gate",     vka_spv_gate,     vka_spv_gate_size,
                                 "the attention context", "the gate projection",
                                 "the gated context",
                                 "gate_f16", vka_spv_gate_f16, vka_spv_gate_f16_size};
    return vka_binary_record(ctx, cmd, caller, &k, n, x, n, g, y);
}

typedef struct gate_backward_op {
    const char *caller;
    uint64_t n;
    vkattn_tensor *dy, *x, *g, *dx, *dg;
    bool native16; /* gate_backward_f16, no staging */
} gate_backward_op;

/* The two dispatches: gate_backward_f16 on x and g as they are
 * (`native16`), else gate_backward with 16-bit ones (f16, or bf16 on every
 * device) staged (vka_f16_record). */
static vkattn_result record_gate_backward(vkattn_context *ctx, VkCommandBuffer cmd,
                                          const void *op_)
{
    const gate_backward_op *op = op_;
    const uint64_t n = op->n;
    const bool n16 = op->native16;
    vkattn_tensor *x = op->x, *g = op->g;
    vkattn_result r;
    if (!n16 &&
        ((r = vka_f16_stage_in(ctx, cmd, op->caller, VKA_SCRATCH_F16_STAGE0, op->x, n, &x)) ||
         (r = vka_f16_stage_in(ctx, cmd, op->caller, VKA_SCRATCH_F16_STAGE1, op->g, n, &g))))
        return r;
    /* dx, then dg: one output per dispatch keeps to 4 storage buffers */
    vkattn_tensor *out[2] = {op->dx, op->dg};
    for (int want_dg = 0; want_dg < 2; want_dg++) {
        const vka_kernel kernel = {
            .name = n16 ? "gate_backward_f16" : "gate_backward",
            .code = n16 ? vka_spv_gate_backward_f16 : vka_spv_gate_backward,
            .code_size = n16 ? vka_spv_gate_backward_f16_size : vka_spv_gate_backward_size,
            .n_bindings = 4,
            .push_size = sizeof(gate_push),
            .n_spec = n16 ? VKA_GATE_N_SPEC_F16 : VKA_GATE_N_SPEC,
            .spec = {[VKA_GATE_SPEC_OUT_DG] = want_dg,
                     [VKA_GATE_SPEC_X_TYPE] = vka_dtype_spec_code(x->dtype),
                     [VKA_GATE_SPEC_G_TYPE] = vka_dtype_spec_code(g->dtype)},
        };
        gate_push push = {.total = (uint32_t)n};
        const vka_dispatch d = {
            .bindings = {vka_bind_tensor(op->dy, false), vka_bind_tensor(x, false),
                         vka_bind_tensor(g, false), vka_bind_tensor(out[want_dg], true)},
            .push = &push,
            .caller = op->caller,
        };
        if ((r = vka_record_grid_1d(ctx, cmd, kernel, VKA_GATE_SPEC_WG, n, d)))
            return r;
    }
    return VKATTN_SUCCESS;
}

vkattn_result vka_gate_backward_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                       const char *caller, uint64_t n, vkattn_tensor *dy,
                                       vkattn_tensor *x, vkattn_tensor *g, vkattn_tensor *dx,
                                       vkattn_tensor *dg)
{
    vkattn_result r;
    const unsigned types = VKA_DTYPES_FLOAT;
    if ((r = check_count(ctx, caller, n)) ||
        (r = vka_tensor_check(ctx, dy, n, caller, "the gated context's gradient")) ||
        (r = vka_tensor_check_types(ctx, x, n, caller, "the attention context", types)) ||
        (r = vka_tensor_check_types(ctx, g, n, caller, "the gate projection", types)) ||
        (r = vka_tensor_check(ctx, dx, n, caller, "the context's gradient")) ||
        (r = vka_tensor_check(ctx, dg, n, caller, "the gate projection's gradient")))
        return r;
    const vkattn_tensor *const ts[] = {x, g};
    const vka_path16 path = vka_path16_of(ctx, ts, 2);
    const gate_backward_op op = {.caller = caller, .n = n, .dy = dy, .x = x, .g = g,
                                 .dx = dx, .dg = dg, .native16 = path == VKA_PATH_NATIVE16};
    return vka_f16_record(ctx, cmd, path == VKA_PATH_PACKED, record_gate_backward, &op);
}
