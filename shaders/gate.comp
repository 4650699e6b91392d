#version 450
// Keras use_gate: y[i] = x[i] * sigmoid(g[i]), x the merged attention
// context (B, Tq, H*dv) and g the gate projection of the query, same layout.
// Two loads and one store per element (a register budget of a few floats).
// sigmoid as 1 / (1 + exp(-g)): exp overflows to inf for g < -88 and the
// quotient is then exactly 0, Keras's limit; never NaN for a finite g.
// A grid-stride loop lets the host cap the group count.
#extension GL_GOOGLE_include_directive : require
#include "elementwise_iface.h"

// the layout of every binary elementwise kernel (src/ops/elementwise.h)
layout(local_size_x_id = VKA_ELEMENTWISE_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer XBuf { float x[]; };
layout(std430, binding = 1) readonly buffer GBuf { float g[]; };
layout(std430, binding = 2) writeonly buffer OutBuf { float y[]; };

layout(push_constant) uniform Push { VKA_ELEMENTWISE_PUSH } p;

void main()
{
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint idx = gl_GlobalInvocationID.x; idx < p.total; idx += stride)
        y[idx] = x[idx] * (1.0 / (1.0 + exp(-g[idx])));
}
