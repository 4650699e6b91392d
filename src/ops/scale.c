/* Scaling by a device scalar for the layers: shaders/scale.comp. */
#include "ops/scale.h"

#include "core/error.h"
#include "vk/tensor.h"
#include "ops/elementwise.h"
#include "ops/half_stage.h"
#include "vka_shaders.h"

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
    const vka_binary_kernel k = {"scale", vka_spv_scale, vka_spv_scale_size};
    return vka_binary_record(ctx, cmd, caller, &k, n, s, 1, x, y);
}
