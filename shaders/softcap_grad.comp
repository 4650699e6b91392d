#version 450
// Soft-capping's backward on the chained SDPA backward's dS (f32, in place):
// ds *= d capped / d raw = 1 - tanh^2(raw / c), raw the scaled scores before
// the cap. A grid-stride loop lets the host cap the group count.
#extension GL_GOOGLE_include_directive : require
#include "sink_iface.h"
#include "tanh_robust.glsl"

layout(local_size_x_id = VKA_SINK_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer RawBuf { float raw[]; };
layout(std430, binding = 1) buffer DsBuf { float ds[]; };

layout(push_constant) uniform Push { VKA_SINK_PUSH } p;

void main()
{
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint idx = gl_GlobalInvocationID.x; idx < p.total; idx += stride) {
        const float t = tanh_robust(raw[idx] / p.softcap);
        ds[idx] *= 1.0 - t * t;
    }
}
