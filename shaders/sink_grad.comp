#version 450
// The gradient of the attention sinks after the fused SDPA backward's row
// statistics (flash_backward_stats*.comp: per row (lse * log2(e), D =
// rowsum(dO * out)), or (DEAD, 0) for a row whose LSE is -inf):
//   grad_sinks[h] = -sum over (b, i) of p_sink * D,  p_sink = exp(sink_h - lse)
// (dL/dsink = p_sink * (0 - sum_j p_j dP_j): the sink takes no value). One
// workgroup per head, its invocations striding over the B * Tq rows, then a
// tree sum in shared memory (WG a power of two).
#extension GL_GOOGLE_include_directive : require
#include "sink_iface.h"

layout(local_size_x_id = VKA_SINK_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer SinkBuf { float sinks[]; };
layout(std430, binding = 1) readonly buffer StatsBuf { vec2 stats[]; };
layout(std430, binding = 2) writeonly buffer GradBuf { float grad_sinks[]; };

layout(push_constant) uniform Push { VKA_SINK_PUSH } p;

const float LOG2E = 1.4426950408889634;
const float DEAD_MIN = 1.0e38; // the stats kernels' DEAD is 3e38

shared float part[gl_WorkGroupSize.x];

void main()
{
    const uint h = gl_WorkGroupID.x, n = p.width * p.tq; // width: the batch
    const float sink2 = sinks[h] * LOG2E;
    float acc = 0.0;
    for (uint k = gl_LocalInvocationID.x; k < n; k += gl_WorkGroupSize.x) {
        const vec2 st = stats[((k / p.tq) * p.heads + h) * p.tq + k % p.tq];
        if (st.x < DEAD_MIN)
            acc = fma(exp2(sink2 - st.x), st.y, acc);
    }
    part[gl_LocalInvocationID.x] = acc;
    for (uint w = gl_WorkGroupSize.x / 2u; w > 0u; w /= 2u) {
        barrier();
        if (gl_LocalInvocationID.x < w)
            part[gl_LocalInvocationID.x] += part[gl_LocalInvocationID.x + w];
    }
    if (gl_LocalInvocationID.x == 0u)
        grad_sinks[h] = -part[0];
}
