#version 450
// Elements [0, count) between a 16-bit array (f16 or bf16) packed two per
// word and an f32 array, one word per invocation, so no two invocations write
// the same word. Converting into 16 bits, a last word with one element keeps
// its high half's bits. Needs no 16-bit storage; a grid-stride loop lets the host cap groups.
#extension GL_GOOGLE_include_directive : require
#include "half_convert_iface.h"
#include "elem_type.glsl"

// specialization constants: ids and meanings in half_convert_iface.h
layout(local_size_x_id = VKA_HALF_CONVERT_SPEC_WG, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = VKA_HALF_CONVERT_SPEC_HALF_TYPE) const uint HALF_TYPE = VKA_ELEM_F16;
layout(constant_id = VKA_HALF_CONVERT_SPEC_TO_HALF) const bool TO_HALF = false;

layout(std430, binding = 0) buffer HalfBuf { uint h[]; };
layout(std430, binding = 1) buffer FloatBuf { float f[]; };

layout(push_constant) uniform Push { VKA_HALF_CONVERT_PUSH } p;

void main()
{
    const uint words = p.count / 2 + p.count % 2;
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint w = gl_GlobalInvocationID.x; w < words; w += stride) {
        const bool both = 2 * w + 1 < p.count;
        if (TO_HALF) {
            uint v = VKA_PACK2(HALF_TYPE, vec2(f[2 * w], both ? f[2 * w + 1] : 0.0));
            h[w] = both ? v : (h[w] & 0xffff0000u) | (v & 0xffffu);
        } else {
            vec2 v = unpack16x2(HALF_TYPE, h[w]);
            f[2 * w] = v.x;
            if (both)
                f[2 * w + 1] = v.y;
        }
    }
}
