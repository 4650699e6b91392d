#version 450
// The device's fp32 FMA ceiling (vkattn_measure_peak): every invocation runs
// CHAINS independent vec4 chains of fma(), so the loop is bound by FMA
// throughput and never by latency or memory. GPUs hide latency across
// invocations; CPU devices (lavapipe) need the chains within one invocation.
// The values stay bounded (x -> x * a + b with a just below 1), and the sum is
// stored so the compiler cannot drop the work.
#extension GL_GOOGLE_include_directive : require
#include "peak_iface.h"

// specialization constants: ids and meanings in peak_iface.h
layout(constant_id = VKA_PEAK_FMA_SPEC_CHAINS) const uint CHAINS = 4;
layout(local_size_x_id = VKA_PEAK_FMA_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) writeonly buffer OutBuf { vec4 o[]; };

layout(push_constant) uniform Push { VKA_PEAK_FMA_PUSH } p;

void main()
{
    const uint id = gl_GlobalInvocationID.x;
    vec4 x[8];
    for (uint c = 0; c < CHAINS; c++)
        x[c] = vec4(float(id & 255u) * 1e-3 + float(c), 0.25, 0.5, 0.75);
    const vec4 va = vec4(p.a), vb = vec4(p.b);
    for (uint i = 0; i < p.iters; i++) {
        for (uint c = 0; c < CHAINS; c++) {
            x[c] = fma(x[c], va, vb);
            x[c] = fma(x[c], va, vb);
            x[c] = fma(x[c], va, vb);
            x[c] = fma(x[c], va, vb);
        }
    }
    vec4 s = vec4(0.0);
    for (uint c = 0; c < CHAINS; c++)
        s += x[c];
    o[id] = s;
}
