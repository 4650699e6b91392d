// The CPU-tuning stats kernel, included by flash_backward_stats.comp and its
// f16 variant flash_backward_stats_f16.comp (FB_F16).
// Fused SDPA backward, pass 1 of 3 (src/ops/flash_backward.c): per query row
// of (B, H, Tq), stats = (lse * log2(e), D = sum_e dO * out), or (DEAD, 0)
// for a row whose LSE is -inf (no allowed key: the forward's masked-row
// policy). The gradient kernels (flash_backward_body.glsl) read both.
#include "flash_backward_iface.h"

layout(local_size_x_id = VKA_FB_SPEC_WG, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = VKA_FB_SPEC_DV) const uint DV = 64;

#include "flash_backward_stats_io.glsl"

void main()
{
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint row = gl_GlobalInvocationID.x; row < p.rows; row += stride) {
        float d = 0.0;
        for (uint e = 0u; e < DV; e++)
            d = fma(FB_DO(row * DV + e), FB_O(row * DV + e), d);
        const uint bits = lse_u[row];
        stats[row] =
            bits == NEG_INF_BITS ? vec2(DEAD, 0.0) : vec2(uintBitsToFloat(bits) * LOG2E, d);
    }
}
