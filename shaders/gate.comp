#version 450
// Keras use_gate: y[i] = x[i] * sigmoid(g[i]), x the merged attention
// context (B, Tq, H*dv) and g the gate projection of the query, same layout.
// Two loads and one store per element (a register budget of a few floats).
// sigmoid: common/gate_fn.glsl. gate_f16.comp is the f16 variant.
// A grid-stride loop lets the host cap the group count.
#extension GL_GOOGLE_include_directive : require
#include "elementwise_iface.h"
#include "gate_fn.glsl"

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
        y[idx] = x[idx] * vka_sigmoid(g[idx]);
}
