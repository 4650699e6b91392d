// What the GPU-tuning gradient kernels of the fused SDPA backward share:
// shaders/common/flash_backward_kv_gpu_body.glsl (dK, dV) and
// flash_backward_q_gpu_body.glsl (dQ). The host: src/ops/flash_backward_gpu.c.
// Define FB_SUBGROUP (1: lane sums by subgroup shuffles, 0: through shared
// memory) and FB_KV (1: the kv bindings, with dV) before including this.
//
// The math is flash_backward_body.glsl's (see there: P = exp2(x - lse2),
// dS = P (dP keep - D), the same masks, bias, causal limits and Philox keep
// bits through flash_mask.glsl, the same DEAD-row rules). What differs is the
// shape: every key (kv) or query row (q) belongs to L consecutive lanes
// (invocations) that split the head widths -- lane c holds the vec4s
// c, c + L, c + 2L, ... of each width -- so the fp32 values one invocation
// keeps alive stay within the register budget the host chose L for
// (src/ops/flash_backward_budget.c). A dot product over a head width is the
// sum of the L lanes' parts: a butterfly of subgroup shuffles (the host
// guarantees L <= the smallest subgroup size) or a sum through shared memory;
// either way every lane of a group ends with the same bits.
//
// Every invocation runs the same loops (lanes past the end compute on clamped
// indices and store nothing), so barriers and shuffles stay in uniform
// control flow.

#extension GL_EXT_control_flow_attributes : require
#if FB_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#endif

#include "flash_backward_iface.h"

#include "flash_backward_io.glsl"

layout(constant_id = VKA_FB_SPEC_LANES) const uint L = 4;

const uint NK = (DK4 + L - 1u) / L; // this lane's vec4s of a DK-wide row
const uint NV = (DV4 + L - 1u) / L; // ... of a DV-wide row

#if !FB_SUBGROUP
// The lanes' partial sums of two vec4s; one slot when no sum is needed.
shared vec4 red_a[L > 1u ? WG : 1u], red_b[L > 1u ? WG : 1u];
#endif

uint tid;  // this invocation's place: group tid / L of the workgroup, lane tid % L
uint lane;

void init_lanes()
{
#if FB_SUBGROUP
    // The lanes of a group must share a subgroup: number invocations by subgroup.
    tid = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
#else
    tid = gl_LocalInvocationIndex;
#endif
    lane = tid % L;
}

// a and b summed over the L lanes of this invocation's group. Called by
// every invocation (uniform control flow).
void reduce_lanes2(inout vec4 a, inout vec4 b)
{
    if (L == 1u)
        return;
#if FB_SUBGROUP
    [[unroll]] for (uint s = 1u; s < L; s <<= 1u) {
        a += subgroupShuffleXor(a, s);
        b += subgroupShuffleXor(b, s);
    }
#else
    barrier(); // the previous sum's reads are done
    red_a[tid] = a;
    red_b[tid] = b;
    barrier();
    const uint first = tid - lane;
    a = red_a[first];
    b = red_b[first];
    [[unroll]] for (uint c = 1u; c < L; c++) {
        a += red_a[first + c];
        b += red_b[first + c];
    }
#endif
}

// The weight P of key j in a row with stats st from its masked logit x
// (flash_backward_body.glsl's weights4, one key).
float weight1(float x, vec2 st, uint j)
{
    if (st.x >= DEAD_MIN)
        return UNIFORM_ROWS && j < p.tv ? p.inv_tv : 0.0;
    const bool masked = is_masked(vec4(x)).x;
    return masked ? 0.0 : exp2((masked ? st.x : x) - st.x);
}
