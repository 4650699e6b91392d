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
    const vka_binary_kernel k = {"scale",     vka_spv_scale,     vka_spv_scale_size,
                                 "the layer's scale", what,  "the scaled copy",
                                 "scale_f16", vka_spv_scale_f16, vka_spv_scale_f16_size};
    return vka_binary_record(ctx, cmd, caller, &k, n, s, 1, x, y);
}
