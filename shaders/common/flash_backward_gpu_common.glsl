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

layout(local_size_x_id = VKA_FB_SPEC_WG, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = VKA_FB_SPEC_TILE) const uint TILE = 16;
layout(constant_id = VKA_FB_SPEC_DK) const uint DK = 64;
layout(constant_id = VKA_FB_SPEC_DV) const uint DV = 64;
layout(constant_id = VKA_FB_SPEC_CAUSAL) const uint CAUSAL = 0;
layout(constant_id = VKA_FB_SPEC_HAS_VALUE_MASK) const bool HAS_VALUE_MASK = false;
layout(constant_id = VKA_FB_SPEC_HAS_MASK) const bool HAS_MASK = false;
layout(constant_id = VKA_FB_SPEC_HAS_BIAS) const bool HAS_BIAS = false;
layout(constant_id = VKA_FB_SPEC_DROPOUT) const bool DROPOUT = false;
layout(constant_id = VKA_FB_SPEC_UNIFORM_ROWS) const bool UNIFORM_ROWS = false;
layout(constant_id = VKA_FB_SPEC_LANES) const uint L = 4;

const uint DK4 = (DK + 3u) / 4u;
const uint DV4 = (DV + 3u) / 4u;
const uint WG = gl_WorkGroupSize.x;
const uint NK = (DK4 + L - 1u) / L; // this lane's vec4s of a DK-wide row
const uint NV = (DV4 + L - 1u) / L; // ... of a DV-wide row
const bool DK_VEC4 = DK % 4u == 0u;
const bool DV_VEC4 = DV % 4u == 0u;

layout(std430, binding = 0) readonly buffer QBuf { float q_in[]; };
layout(std430, binding = 1) readonly buffer KBuf { float k_in[]; };
layout(std430, binding = 2) readonly buffer VBuf { float v_in[]; };
layout(std430, binding = 3) readonly buffer DOBuf { float do_in[]; };
layout(std430, binding = 0) readonly buffer QBuf4 { vec4 q4_in[]; };
layout(std430, binding = 1) readonly buffer KBuf4 { vec4 k4_in[]; };
layout(std430, binding = 2) readonly buffer VBuf4 { vec4 v4_in[]; };
layout(std430, binding = 3) readonly buffer DOBuf4 { vec4 do4_in[]; };
layout(std430, binding = 4) readonly buffer StatsBuf { vec2 stats_in[]; };
layout(std430, binding = 5) readonly buffer BiasBuf { float bias_in[]; };
layout(std430, binding = 6) readonly buffer VMaskBuf { float vmask_in[]; };
layout(std430, binding = 7) readonly buffer MaskBuf { float mask_in[]; };
layout(std430, binding = 8) writeonly buffer Out0 { float out0[]; }; // dK or dQ
#if FB_KV
layout(std430, binding = 9) writeonly buffer Out1 { float out1[]; }; // dV
#endif

layout(push_constant) uniform Push { VKA_FB_PUSH } p;

#include "flash_mask.glsl" // after p, the spec constants and the buffers it reads

const float DEAD_MIN = 1.0e38; // stats.x at or above: a row with no allowed key

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

// Element e4 (as a vec4, zeros past the width) of row `row` of Q (which 0)
// or K (1), and of dO (0) or V (1).
vec4 load_dk(uint which, uint row, uint e4)
{
    vec4 x = vec4(0.0);
    if (e4 >= DK4)
        return x;
    if (DK_VEC4)
        return which == 0u ? q4_in[row * DK4 + e4] : k4_in[row * DK4 + e4];
    [[unroll]] for (uint c = 0u; c < 4u; c++)
        if (e4 * 4u + c < DK)
            x[c] = which == 0u ? q_in[row * DK + e4 * 4u + c] : k_in[row * DK + e4 * 4u + c];
    return x;
}
vec4 load_dv(uint which, uint row, uint e4)
{
    vec4 x = vec4(0.0);
    if (e4 >= DV4)
        return x;
    if (DV_VEC4)
        return which == 0u ? do4_in[row * DV4 + e4] : v4_in[row * DV4 + e4];
    [[unroll]] for (uint c = 0u; c < 4u; c++)
        if (e4 * 4u + c < DV)
            x[c] = which == 0u ? do_in[row * DV + e4 * 4u + c] : v_in[row * DV + e4 * 4u + c];
    return x;
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

// The weights of keys j..j+3 (flash_backward_body.glsl's weights4).
vec4 weights4(vec4 x, vec2 st, uint j)
{
    if (st.x >= DEAD_MIN)
        return UNIFORM_ROWS ? vec4(lessThan(uvec4(j) + uvec4(0u, 1u, 2u, 3u), uvec4(p.tv))) *
                                  p.inv_tv
                            : vec4(0.0);
    const bvec4 masked = is_masked(x);
    const vec4 arg = mix(x, vec4(st.x), masked) - st.x;
    return mix(exp2(arg), vec4(0.0), masked);
}
