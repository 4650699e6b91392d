/* Elementwise add and fill for the layer backward: shaders/add.comp, fill.comp
 * (add_f16.comp and the other binary kernels' f16 variants with 16-bit storage). */
#include "ops/elementwise.h"

#include "common/elementwise_iface.h"
#include "core/dtype.h"
#include "core/error.h"
#include "ops/half_stage.h"
#include "vk/dispatch.h"
#include "vk/tensor.h"
#include "vk/view.h"
#include "vka_shaders.h"

VKA_PUSH_STRUCT(elementwise_push, VKA_ELEMENTWISE_PUSH);

static vkattn_result check_count(vkattn_context *ctx, const char *caller, const char *what,
                                 uint64_t n)
{
    if (n > UINT32_MAX)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: %s (%llu elements) does not fit an elementwise kernel's 32-bit "
                        "indexing",
                        caller, what, (unsigned long long)n);
    return VKATTN_SUCCESS;
}

typedef struct binary_op {
    const char *caller;
    const vka_binary_kernel *k;
    uint64_t n, a_count;
    vkattn_tensor *a, *b, *y;
    bool native16; /* k's f16 variant, no staging */
} binary_op;

/* The dispatch: of k's f16 variant on the tensors as they are (`native16`),
 * else of k on f32 tensors, f16 ones staged through scratch (vka_f16_record). */
static vkattn_result record_binary(vkattn_context *ctx, VkCommandBuffer cmd, const void *op_)
{
    const binary_op *op = op_;
    const char *caller = op->caller;
    const uint64_t n = op->n;
    vkattn_result r;
    vkattn_tensor *af = op->a, *bf = op->b, *yf = op->y;
    if (!op->native16 &&
        ((r = vka_f16_stage_in(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE0, op->a, op->a_count,
                               &af)) ||
         (r = vka_f16_stage_in(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE1, op->b, n, &bf)) ||
         (r = vka_f16_stage_out(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE2, op->y, n, false,
                                &yf))))
        return r;
    const bool n16 = op->native16;
    const vka_kernel kernel = {
        .name = n16 ? op->k->name16 : op->k->name,
        .code = n16 ? op->k->code16 : op->k->code,
        .code_size = n16 ? op->k->code16_size : op->k->code_size,
        .n_bindings = 3,
        .push_size = sizeof(elementwise_push),
        .n_spec = n16 ? VKA_ELEMENTWISE_N_SPEC_F16 : VKA_ELEMENTWISE_N_SPEC,
        .spec = {[VKA_ELEMENTWISE_SPEC_A_TYPE] = vka_dtype_spec_code(af->dtype),
                 [VKA_ELEMENTWISE_SPEC_B_TYPE] = vka_dtype_spec_code(bf->dtype),
                 [VKA_ELEMENTWISE_SPEC_Y_TYPE] = vka_dtype_spec_code(yf->dtype)},
    };
    elementwise_push push = {.total = (uint32_t)n};
    const vka_dispatch d = {
        .bindings = {vka_bind_tensor(af, false), vka_bind_tensor(bf, false),
                     vka_bind_tensor(yf, true)},
        .push = &push,
        .caller = caller,
    };
    if ((r = vka_record_grid_1d(ctx, cmd, kernel, VKA_ELEMENTWISE_SPEC_WG, n, d)))
        return r;
    return vka_f16_stage_finish(ctx, cmd, caller, op->y, yf, n);
}

vkattn_result vka_binary_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                const vka_binary_kernel *k, uint64_t n, vkattn_tensor *a,
                                uint64_t a_count, vkattn_tensor *b, vkattn_tensor *y)
{
    vkattn_result r;
    const unsigned types = VKA_DTYPES_FLOAT; /* bf16 only staged: k has no bf16 variant */
    if ((r = check_count(ctx, caller, k->y_name, n)) ||
        (r = vka_tensor_check_types(ctx, a, a_count, caller, k->a_name, types)) ||
        (r = vka_tensor_check_types(ctx, b, n, caller, k->b_name, types)) ||
        (r = vka_tensor_check_types(ctx, y, n, caller, k->y_name, types)))
        return r;
    const vkattn_tensor *const ts[3] = {a, b, y};
    const vka_path16 path = vka_path16_of(ctx, ts, 3);
    const binary_op op = {.caller = caller, .k = k, .n = n, .a_count = a_count, .a = a, .b = b,
                          .y = y, .native16 = path == VKA_PATH_NATIVE16};
    return vka_f16_record(ctx, cmd, path == VKA_PATH_PACKED, record_binary, &op);
}

vkattn_result vka_add_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                             const char *what, uint64_t n, vkattn_tensor *a, vkattn_tensor *b,
                             vkattn_tensor *y)
{
    const vka_binary_kernel k = {"add",      vka_spv_add,     vka_spv_add_size,
                                 "a summand", "a summand",     what,
                                 "add_f16",  vka_spv_add_f16, vka_spv_add_f16_size};
    return vka_binary_record(ctx, cmd, caller, &k, n, a, n, b, y);
}

typedef struct fill_op {
    const char *caller;
    uint64_t n;
    float value;
    vkattn_tensor *y;
} fill_op;

/* The fill into y, or into f32 scratch rounded into an f16 y (vka_f16_record). */
static vkattn_result record_fill(vkattn_context *ctx, VkCommandBuffer cmd, const void *op_)
{
    const fill_op *op = op_;
    vkattn_tensor *yf;
    vkattn_result r;
    if ((r = vka_f16_stage_out(ctx, cmd, op->caller, VKA_SCRATCH_F16_STAGE0, op->y, op->n, false,
                               &yf)))
        return r;
    const vka_kernel kernel = {VKA_KERNEL_SPV(fill), .n_bindings = 1,
                               .push_size = sizeof(elementwise_push),
                               .n_spec = VKA_ELEMENTWISE_N_SPEC};
    elementwise_push push = {.total = (uint32_t)op->n, .value = op->value};
    const vka_dispatch d = {.bindings = {vka_bind_tensor(yf, true)}, .push = &push,
                            .caller = op->caller};
    if ((r = vka_record_grid_1d(ctx, cmd, kernel, VKA_ELEMENTWISE_SPEC_WG, op->n, d)))
        return r;
    return vka_f16_stage_finish(ctx, cmd, op->caller, op->y, yf, op->n);
}

vkattn_result vka_fill_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                              const char *what, uint64_t n, float value, vkattn_tensor *y)
{
    vkattn_result r;
    if ((r = check_count(ctx, caller, what, n)) ||
        (r = vka_tensor_check_types(ctx, y, n, caller, what, VKA_DTYPES_FLOAT)))
        return r;
    const fill_op op = {.caller = caller, .n = n, .value = value, .y = y};
    return vka_f16_record(ctx, cmd, y->dtype != VKATTN_DTYPE_F32, record_fill, &op);
}
