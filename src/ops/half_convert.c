/* f16 or bf16 <-> f32 conversion on the device: shaders/half_convert.comp. */
#include "ops/half_convert.h"

#include "common/elem_iface.h"
#include "core/dtype.h"
#include "core/error.h"
#include "common/half_convert_iface.h"
#include "vk/dispatch.h"
#include "vk/tensor.h"
#include "vk/view.h"
#include "vka_shaders.h"

VKA_PUSH_STRUCT(half_convert_push, VKA_HALF_CONVERT_PUSH);

vkattn_result vka_half_convert_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                     vkattn_tensor *half, vkattn_tensor *f, uint64_t count,
                                     bool to_half)
{
    if (count > UINT32_MAX - 1)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: %llu elements do not fit the 16-bit conversion's 32-bit indexing", caller,
                        (unsigned long long)count);
    vkattn_result r;
    if ((r = vka_tensor_check_types(ctx, half, count, caller, "the 16-bit tensor",
                                    VKA_DTYPES_16)) ||
        (r = vka_tensor_check(ctx, f, count, caller, "the f32 sums")))
        return r;
    const vka_kernel kernel = {
        VKA_KERNEL_SPV(half_convert),
        .n_bindings = 2,
        .push_size = sizeof(half_convert_push),
        .n_spec = VKA_HALF_CONVERT_N_SPEC,
        .spec = {[VKA_HALF_CONVERT_SPEC_HALF_TYPE] = vka_dtype_spec_code(half->dtype),
                 [VKA_HALF_CONVERT_SPEC_TO_HALF] = to_half},
    };
    half_convert_push push = {.count = (uint32_t)count};
    /* both bindings are declared writable: validation counts them as written */
    const vka_dispatch d = {
        .bindings = {vka_bind_tensor(half, true), vka_bind_tensor(f, true)},
        .push = &push,
        .caller = caller,
    };
    /* one invocation per pair of halves */
    return vka_record_grid_1d(ctx, cmd, kernel, VKA_HALF_CONVERT_SPEC_WG, count / 2 + count % 2,
                              d);
}
