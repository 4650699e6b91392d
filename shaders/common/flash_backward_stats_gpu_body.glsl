// Pass 1 of the GPU-tuning fused SDPA backward, shared by
// shaders/flash_backward_stats_gpu.comp (FB_SUBGROUP 0: lane sums through
// shared memory, any device) and flash_backward_stats_gpu_sg.comp
// (FB_SUBGROUP 1: subgroup shuffles). Computes what
// shaders/flash_backward_stats.comp computes -- per query row, stats =
// (lse * log2(e), D = sum_e dO * out), or (DEAD, 0) for a row whose LSE is
// -inf -- with L lanes per row: lane c reads the vec4s c, c + L, ... of dO and
// out (neighbouring lanes read neighbouring vec4s), and D is the sum of the
// lanes' parts (a butterfly of subgroup shuffles, the host guaranteeing L <=
// the smallest subgroup size, or a sum through shared memory). A grid-stride
// loop covers rows past the dispatch (uniform over the workgroup).
//
// Live fp32 values per invocation (vka_flash_backward_stats_live_values):
// 1 partial sum, 8 for the two vec4s being multiplied, 2 for the stats,
// 12 scalars = 23, at any width.

#extension GL_EXT_control_flow_attributes : require
#if FB_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#endif

#include "flash_backward_iface.h"

layout(local_size_x_id = VKA_FB_SPEC_WG, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = VKA_FB_SPEC_DV) const uint DV = 64;
layout(constant_id = VKA_FB_SPEC_LANES) const uint L = 4;

const uint DV4 = (DV + 3u) / 4u;
const uint WG = gl_WorkGroupSize.x;
const uint ROWS = WG / L; // rows per workgroup and step
const bool DV_VEC4 = DV % 4u == 0u;

#include "flash_backward_stats_io.glsl"

#if !FB_SUBGROUP
shared float red[L > 1u ? WG : 1u];
#endif

// Element e4 (as a vec4) of row `row` of dO (which 0) or out (1).
vec4 load_row(uint which, uint row, uint e4)
{
    vec4 x = vec4(0.0);
    if (DV_VEC4)
        return which == 0u ? FB_DO4(row * DV4 + e4) : FB_O4(row * DV4 + e4);
    [[unroll]] for (uint c = 0u; c < 4u; c++)
        if (e4 * 4u + c < DV)
            x[c] = which == 0u ? FB_DO(row * DV + e4 * 4u + c) : FB_O(row * DV + e4 * 4u + c);
    return x;
}

void main()
{
#if FB_SUBGROUP
    const uint tid = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
#else
    const uint tid = gl_LocalInvocationIndex;
#endif
    const uint lane = tid % L;
    const uint stride = gl_NumWorkGroups.x * ROWS;
    for (uint row0 = gl_WorkGroupID.x * ROWS; row0 < p.rows; row0 += stride) {
        const uint row = row0 + tid / L;
        const bool ok = row < p.rows;
        float d = 0.0;
        if (ok)
            for (uint e4 = lane; e4 < DV4; e4 += L) {
                const vec4 a = load_row(0u, row, e4), o = load_row(1u, row, e4);
                d += dot(a, o);
            }
        if (L > 1u) {
#if FB_SUBGROUP
            [[unroll]] for (uint s = 1u; s < L; s <<= 1u)
                d += subgroupShuffleXor(d, s);
#else
            barrier(); // the previous step's reads are done
            red[tid] = d;
            barrier();
            d = red[tid - lane];
            [[unroll]] for (uint c = 1u; c < L; c++)
                d += red[tid - lane + c];
#endif
        }
        if (ok && lane == 0u) {
            const uint bits = lse_u[row];
            stats[row] = bits == NEG_INF_BITS ? vec2(DEAD, 0.0)
                                              : vec2(uintBitsToFloat(bits) * LOG2E, d);
        }
    }
}
