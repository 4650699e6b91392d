#version 450
// The gradient of the attention sinks on the chained SDPA backward, from its
// weights W (the sink's share p_sink = 1 - sum_j W_j; a row with nothing
// allowed has W = 0 and dP . W = 0, so it adds nothing) and dP (after
// dropout), both (B, H, Tq, Tv) f32:
//   grad_sinks[h] = -sum over (b, i) of p_sink * sum_j W_j dP_j.
// One workgroup per head, its invocations striding over the B * Tq rows, a
// tree sum in shared memory (WG a power of two). p.total is the batch,
// p.width Tv.
#extension GL_GOOGLE_include_directive : require
#include "sink_iface.h"

layout(local_size_x_id = VKA_SINK_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer WBuf { float w[]; };
layout(std430, binding = 1) readonly buffer DpBuf { float dp[]; };
layout(std430, binding = 2) writeonly buffer GradBuf { float grad_sinks[]; };

layout(push_constant) uniform Push { VKA_SINK_PUSH } p;

shared float part[gl_WorkGroupSize.x];

void main()
{
    const uint h = gl_WorkGroupID.x, n = p.total * p.tq;
    float acc = 0.0;
    for (uint k = gl_LocalInvocationID.x; k < n; k += gl_WorkGroupSize.x) {
        const uint base = (((k / p.tq) * p.heads + h) * p.tq + k % p.tq) * p.width;
        float sw = 0.0, d = 0.0;
        for (uint j = 0u; j < p.width; j++) {
            sw += w[base + j];
            d = fma(w[base + j], dp[base + j], d);
        }
        acc = fma(1.0 - sw, d, acc);
    }
    part[gl_LocalInvocationID.x] = acc;
    for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s /= 2u) {
        barrier();
        if (gl_LocalInvocationID.x < s)
            part[gl_LocalInvocationID.x] += part[gl_LocalInvocationID.x + s];
    }
    if (gl_LocalInvocationID.x == 0u)
        grad_sinks[h] = -part[0];
}
