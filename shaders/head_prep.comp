#version 450
// QK-norm then the rotary embedding, in place on (B, heads, seq, dim) query
// or key heads (docs/SEMANTICS.md, "QK-norm and rotary embeddings"). One
// invocation per row: the row is read twice (its mean square, then each pair
// once), so a pair is turned from its own normalized values before either is
// written. f32 only: an f16 layer stages its heads (src/ops/half_stage.h).
// Angles are fp32, pos * inv_freq[i] with inv_freq from the host (rounded
// from double), reduced to about [-pi, pi] before cos and sin, whose
// precision Vulkan bounds only there.
#extension GL_GOOGLE_include_directive : require
#include "head_prep_iface.h"

layout(local_size_x_id = VKA_HEAD_PREP_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) buffer XBuf { float x[]; };
layout(std430, binding = 1) readonly buffer WBuf { float w[]; };          // (dim) use_norm
layout(std430, binding = 2) readonly buffer PosBuf { float pos[]; };      // POS_TENSOR
layout(std430, binding = 2) readonly buffer LenBuf { uint lengths[]; };   // POS_LENGTHS
layout(std430, binding = 3) readonly buffer FreqBuf { float inv_freq[]; }; // (rotary_dim/2)

layout(push_constant) uniform Push { VKA_HEAD_PREP_PUSH } p;

// 2 pi as a short high part (k * HI exact for k < 2^16) and the rest
const float TWO_PI_HI = 6.28125;
const float TWO_PI_LO = 1.9353071795864769e-3;
const float INV_TWO_PI = 0.15915494309189535;

void main()
{
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint row = gl_GlobalInvocationID.x; row < p.rows; row += stride) {
        const uint base = row * p.dim;
        const uint t = row % p.seq, b = row / p.seq / p.heads;
        float s = 1.0;
        if (p.use_norm != 0u) {
            float ss = 0.0;
            for (uint e = 0u; e < p.dim; e++)
                ss += x[base + e] * x[base + e];
            s = inversesqrt(ss / float(p.dim) + p.eps);
        }
        const uint rot = p.use_rope != 0u ? p.rotary_dim : 0u, half_rot = rot / 2u;
        float position = float(t);
        if (p.pos_mode == VKA_HEAD_PREP_POS_TENSOR)
            position = pos[b * p.seq + t];
        else if (p.pos_mode == VKA_HEAD_PREP_POS_LENGTHS)
            position = float(lengths[b] + t);
        for (uint i = 0u; i < half_rot; i++) {
            const uint ia = p.interleaved != 0u ? 2u * i : i;
            const uint ib = p.interleaved != 0u ? 2u * i + 1u : i + half_rot;
            float x1 = x[base + ia] * s, x2 = x[base + ib] * s;
            if (p.use_norm != 0u) {
                x1 *= w[ia];
                x2 *= w[ib];
            }
            const float angle = (p.inverse != 0u ? -position : position) * inv_freq[i];
            const float k = round(angle * INV_TWO_PI);
            const float r = (angle - k * TWO_PI_HI) - k * TWO_PI_LO;
            const float c = cos(r), sn = sin(r);
            x[base + ia] = x1 * c - x2 * sn;
            x[base + ib] = x2 * c + x1 * sn;
        }
        if (p.use_norm != 0u)
            for (uint e = rot; e < p.dim; e++)
                x[base + e] = x[base + e] * s * w[e];
    }
}
