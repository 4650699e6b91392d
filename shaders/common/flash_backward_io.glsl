// The declarations both shapes of the fused SDPA backward's gradient kernels
// share: flash_backward_body.glsl (CPU tuning) and
// flash_backward_gpu_common.glsl (GPU tuning) include this after
// flash_backward_iface.h, having defined FB_KV (1: the dK, dV kernel's
// bindings). The spec constants, the bindings, the push constants, the
// forward's mask rules (flash_mask.glsl), row loads and the weights P
// recomputed from the row statistics.

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

const uint DK4 = (DK + 3u) / 4u;
const uint DV4 = (DV + 3u) / 4u;
const uint WG = gl_WorkGroupSize.x;
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
// The _f16 variants (FB_F16, 16-bit storage): q, k and v each f16 or f32,
// widened exactly on load (then the f32 kernel's arithmetic).
#ifdef FB_F16
#include "elem_type.glsl"
layout(constant_id = VKA_FB_SPEC_Q_TYPE) const uint Q_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_FB_SPEC_K_TYPE) const uint K_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_FB_SPEC_V_TYPE) const uint V_TYPE = VKA_ELEM_F32;
layout(std430, binding = 0) readonly buffer QBuf16 { float16_t q16_in[]; };
layout(std430, binding = 1) readonly buffer KBuf16 { float16_t k16_in[]; };
layout(std430, binding = 2) readonly buffer VBuf16 { float16_t v16_in[]; };
layout(std430, binding = 0) readonly buffer QBuf16x4 { f16vec4 q16x4_in[]; };
layout(std430, binding = 1) readonly buffer KBuf16x4 { f16vec4 k16x4_in[]; };
layout(std430, binding = 2) readonly buffer VBuf16x4 { f16vec4 v16x4_in[]; };
#define FB_Q(i) VKA_LD(Q_TYPE, q_in, q16_in, i)
#define FB_K(i) VKA_LD(K_TYPE, k_in, k16_in, i)
#define FB_V(i) VKA_LD(V_TYPE, v_in, v16_in, i)
#define FB_Q4(i) VKA_LD4(Q_TYPE, q4_in, q16x4_in, i)
#define FB_K4(i) VKA_LD4(K_TYPE, k4_in, k16x4_in, i)
#define FB_V4(i) VKA_LD4(V_TYPE, v4_in, v16x4_in, i)
#else
#define FB_Q(i) q_in[i]
#define FB_K(i) k_in[i]
#define FB_V(i) v_in[i]
#define FB_Q4(i) q4_in[i]
#define FB_K4(i) k4_in[i]
#define FB_V4(i) v4_in[i]
#endif
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

// Element e4 (as a vec4; zeros past the width) of row `row` of Q or K
// (which 0 or 1), and of dO or V.
vec4 load_dk(uint which, uint row, uint e4)
{
    vec4 x = vec4(0.0);
    if (e4 >= DK4)
        return x; // zeros past the width
    if (DK_VEC4)
        return which == 0u ? FB_Q4(row * DK4 + e4) : FB_K4(row * DK4 + e4);
    [[unroll]] for (uint c = 0u; c < 4u; c++)
        if (e4 * 4u + c < DK)
            x[c] = which == 0u ? FB_Q(row * DK + e4 * 4u + c) : FB_K(row * DK + e4 * 4u + c);
    return x;
}
vec4 load_dv(uint which, uint row, uint e4)
{
    vec4 x = vec4(0.0);
    if (e4 >= DV4)
        return x;
    if (DV_VEC4)
        return which == 0u ? do4_in[row * DV4 + e4] : FB_V4(row * DV4 + e4);
    [[unroll]] for (uint c = 0u; c < 4u; c++)
        if (e4 * 4u + c < DV)
            x[c] = which == 0u ? do_in[row * DV + e4 * 4u + c] : FB_V(row * DV + e4 * 4u + c);
    return x;
}

// Weights P of keys j..j+3 of a row with stats st, from masked logits x.
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
