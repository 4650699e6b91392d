#version 450
// y[i] = value, as a dispatch rather than vkCmdFillBuffer, so that it needs
// no transfer usage on an app's buffer and is ordered like every other
// kernel. The layer backward writes its identically-zero gradients so.
#extension GL_GOOGLE_include_directive : require
#include "elementwise_iface.h"

// specialization constants: ids and meanings in elementwise_iface.h
layout(local_size_x_id = VKA_ELEMENTWISE_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) writeonly buffer OutBuf { float y[]; };

layout(push_constant) uniform Push { VKA_ELEMENTWISE_PUSH } p;

void main()
{
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint idx = gl_GlobalInvocationID.x; idx < p.total; idx += stride)
        y[idx] = p.value;
}
