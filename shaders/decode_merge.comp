#version 450
// Decode attention, merge kernel: combines the per-chunk partials of
// decode_body.glsl (DV unnormalized sums, the max m in log2 units and the sum
// l of each (row, chunk)) into out = drop_scale * sum_c 2^(m_c - M) o_c /
// sum_c 2^(m_c - M) l_c, M = max_c m_c. A row with no allowed key (every
// l_c = 0) becomes zeros. One invocation per output element, grid-stride; for
// a 16-bit out (f16 or bf16), one per word of two elements (no two invocations
// share a word, so no 16-bit storage is needed; the padding half of an odd
// count gets 0).
// Sinks (SINKS): the row's query head h adds a logit sink_h (natural units)
// with no value to the denominator: M = max(M, sink_h log2 e), den +=
// 2^(sink_h log2 e - M); a row with no allowed key still gets zeros (num 0).
#extension GL_GOOGLE_include_directive : require
#include "decode_iface.h"
#include "elem_type.glsl"

// specialization constants: ids and meanings in decode_iface.h
layout(local_size_x_id = VKA_DECODE_MERGE_SPEC_WG, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = VKA_DECODE_MERGE_SPEC_DV) const uint DV = 64;
layout(constant_id = VKA_DECODE_MERGE_SPEC_OUT_TYPE) const uint OUT_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_DECODE_MERGE_SPEC_SINKS) const bool SINKS = false;

layout(std430, binding = 0) readonly buffer PartBuf { float part[]; };
layout(std430, binding = 1) writeonly buffer OutBuf { float out_o[]; };
layout(std430, binding = 1) writeonly buffer OutBufW { uint out_w[]; };
layout(std430, binding = 2) readonly buffer SinkBuf { float sinks[]; };

layout(push_constant) uniform Push { VKA_DECODE_MERGE_PUSH } p;

float merged(uint idx)
{
    const uint ps = DV + 2u;
    const uint row = idx / DV, e = idx % DV;
    const uint base = row * p.n_chunks * ps;
    float mx = -3.0e38;
    for (uint c = 0u; c < p.n_chunks; c++)
        if (part[base + c * ps + DV + 1u] != 0.0)
            mx = max(mx, part[base + c * ps + DV]);
    const float sink = SINKS ? sinks[(row / p.tq) % p.heads] * 1.4426950408889634 : 0.0;
    if (SINKS)
        mx = max(mx, sink);
    float num = 0.0, den = SINKS ? exp2(sink - mx) : 0.0;
    for (uint c = 0u; c < p.n_chunks; c++) {
        const float l = part[base + c * ps + DV + 1u];
        if (l != 0.0) {
            const float w = exp2(part[base + c * ps + DV] - mx);
            num += w * part[base + c * ps + e];
            den += w * l;
        }
    }
    return den == 0.0 ? 0.0 : num * (p.drop_scale / den);
}

void main()
{
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    if (VKA_IS_16(OUT_TYPE)) {
        const uint words = p.total / 2u + p.total % 2u;
        for (uint w = gl_GlobalInvocationID.x; w < words; w += stride) {
            const float hi = 2u * w + 1u < p.total ? merged(2u * w + 1u) : 0.0;
            out_w[w] = VKA_PACK2(OUT_TYPE, vec2(merged(2u * w), hi));
        }
    } else {
        for (uint idx = gl_GlobalInvocationID.x; idx < p.total; idx += stride)
            out_o[idx] = merged(idx);
    }
}
