// The CPU-tuning stats kernel, included by flash_backward_stats.comp and its
// f16 variant flash_backward_stats_f16.comp (FB_F16).
// Fused SDPA backward, pass 1 of 3 (src/ops/flash_backward.c): per query row
// of (B, H, Tq), stats = (lse * log2(e), D = sum_e dO * out), or (DEAD, 0)
// for a row whose LSE is -inf (no allowed key: the forward's masked-row
// policy). The gradient kernels (flash_backward_body.glsl) read both.
#include "flash_backward_iface.h"
#include "elem_type.glsl"

layout(local_size_x_id = VKA_FB_SPEC_WG, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = VKA_FB_SPEC_DV) const uint DV = 64;

layout(std430, binding = 0) readonly buffer DOBuf { float do_in[]; };
layout(std430, binding = 1) readonly buffer OBuf { float o_in[]; };
// flash_backward_stats_f16.comp (FB_F16): out and dO f16 or f32, widened exactly
#ifdef FB_F16
layout(constant_id = VKA_FB_SPEC_O_TYPE) const uint O_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_FB_SPEC_DO_TYPE) const uint DO_TYPE = VKA_ELEM_F32;
layout(std430, binding = 0) readonly buffer DOBuf16 { float16_t do16_in[]; };
layout(std430, binding = 1) readonly buffer OBuf16 { float16_t o16_in[]; };
#define FB_O(i) VKA_LD(O_TYPE, o_in, o16_in, i)
#define FB_DO(i) VKA_LD(DO_TYPE, do_in, do16_in, i)
#else
#define FB_O(i) o_in[i]
#define FB_DO(i) do_in[i]
#endif
layout(std430, binding = 2) readonly buffer LseBuf { uint lse_u[]; };
layout(std430, binding = 3) writeonly buffer StatsBuf { vec2 stats[]; };

layout(push_constant) uniform Push { VKA_FB_PUSH } p;

const float LOG2E = 1.4426950408889634;
const float DEAD = 3.0e38; // finite: no inf is relied on
const uint NEG_INF_BITS = 0xFF800000u;

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
