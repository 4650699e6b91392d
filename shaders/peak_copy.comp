#version 450
// The device's copy bandwidth (vkattn_measure_peak): dst = src, vec4 at a
// time, consecutive invocations on consecutive addresses, grid-stride so any
// buffer size fits the workgroup-count limit.
#extension GL_GOOGLE_include_directive : require
#include "peak_iface.h"

// specialization constants: ids and meanings in peak_iface.h
layout(local_size_x_id = VKA_PEAK_COPY_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer SrcBuf { vec4 src[]; };
layout(std430, binding = 1) writeonly buffer DstBuf { vec4 dst[]; };

layout(push_constant) uniform Push { VKA_PEAK_COPY_PUSH } p;

void main()
{
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride)
        dst[i] = src[i];
}
