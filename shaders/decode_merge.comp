#version 450
// Decode attention, merge kernel: combines the per-chunk partials of
// decode_body.glsl (DV unnormalized sums, the max m in log2 units and the sum
// l of each (row, chunk)) into out = drop_scale * sum_c 2^(m_c - M) o_c /
// sum_c 2^(m_c - M) l_c, M = max_c m_c. A row with no allowed key (every
// l_c = 0) becomes zeros. One invocation per output element, grid-stride.
#extension GL_GOOGLE_include_directive : require
#include "decode_iface.h"

// specialization constants: ids and meanings in decode_iface.h
layout(local_size_x_id = VKA_DECODE_MERGE_SPEC_WG, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = VKA_DECODE_MERGE_SPEC_DV) const uint DV = 64;

layout(std430, binding = 0) readonly buffer PartBuf { float part[]; };
layout(std430, binding = 1) writeonly buffer OutBuf { float out_o[]; };

layout(push_constant) uniform Push { VKA_DECODE_MERGE_PUSH } p;

void main()
{
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    const uint ps = DV + 2u;
    for (uint idx = gl_GlobalInvocationID.x; idx < p.total; idx += stride) {
        const uint row = idx / DV, e = idx % DV;
        const uint base = row * p.n_chunks * ps;
        float mx = -3.0e38;
        for (uint c = 0u; c < p.n_chunks; c++)
            if (part[base + c * ps + DV + 1u] != 0.0)
                mx = max(mx, part[base + c * ps + DV]);
        float num = 0.0, den = 0.0;
        for (uint c = 0u; c < p.n_chunks; c++) {
            const float l = part[base + c * ps + DV + 1u];
            if (l != 0.0) {
                const float w = exp2(part[base + c * ps + DV] - mx);
                num += w * part[base + c * ps + e];
                den += w * l;
            }
        }
        out_o[idx] = den == 0.0 ? 0.0 : num * (p.drop_scale / den);
    }
}
