#version 450
// y[i] = x[i] * s[0]: a learned scalar read on the device, so a recorded
// command buffer follows set_weights. A grid-stride loop lets the host cap
// the group count.
#extension GL_GOOGLE_include_directive : require
#include "elementwise_iface.h"

// the layout of every binary elementwise kernel (src/ops/elementwise.h)
layout(local_size_x_id = VKA_ELEMENTWISE_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer ScaleBuf { float s[]; };
layout(std430, binding = 1) readonly buffer InBuf { float x[]; };
layout(std430, binding = 2) writeonly buffer OutBuf { float y[]; };

layout(push_constant) uniform Push { VKA_ELEMENTWISE_PUSH } p;

void main()
{
    const float f = s[0];
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint idx = gl_GlobalInvocationID.x; idx < p.total; idx += stride)
        y[idx] = x[idx] * f;
}
