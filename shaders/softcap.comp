#version 450
// Logit soft-capping of the chained SDPA path, in place on its f32 scores
// (already scaled, before bias and masks): s = c * tanh(s / c). tanh_robust
// keeps |s| > 44 c finite on every driver. A grid-stride loop lets the host
// cap the group count.
#extension GL_GOOGLE_include_directive : require
#include "sink_iface.h"
#include "tanh_robust.glsl"

layout(local_size_x_id = VKA_SINK_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) buffer ScoreBuf { float s[]; };

layout(push_constant) uniform Push { VKA_SINK_PUSH } p;

void main()
{
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint idx = gl_GlobalInvocationID.x; idx < p.total; idx += stride)
        s[idx] = p.softcap * tanh_robust(s[idx] / p.softcap);
}
