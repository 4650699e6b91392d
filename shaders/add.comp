#version 450
// y[i] = a[i] + b[i]: the layer backward sums the two paths into a tensor
// used twice (the value when it is also the key). A grid-stride loop lets
// the host cap the group count.
#extension GL_GOOGLE_include_directive : require
#include "elementwise_iface.h"

// specialization constants: ids and meanings in elementwise_iface.h
layout(local_size_x_id = VKA_ELEMENTWISE_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer ABuf { float a[]; };
layout(std430, binding = 1) readonly buffer BBuf { float b[]; };
layout(std430, binding = 2) writeonly buffer OutBuf { float y[]; };

layout(push_constant) uniform Push { VKA_ELEMENTWISE_PUSH } p;

void main()
{
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint idx = gl_GlobalInvocationID.x; idx < p.total; idx += stride)
        y[idx] = a[idx] + b[idx];
}
