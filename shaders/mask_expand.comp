#version 450
// A layer's attention mask made readable by the ops, as 1/0 over
// (Bo, Ho, Tqo, Tv):
//   out[b, h, i, j] = (!HAS_QUERY || query_mask[b, i] != 0)
//                     && (!HAS_ATTN || attn[b*sb + h*sh + i*si + j*sj] != 0)
// The strides (0 on a broadcast axis, src/core/mask_shape.h) let one kernel
// both expand a mask stored with a key axis of 1 (which the ops cannot read)
// and fold MultiHeadAttention's query mask into the attention mask as Keras
// does (query_mask[:, :, None] & attention_mask): a masked query row then has
// no allowed key. With HAS_QUERY, Bo = B and Tqo = Tq. Masks are f32, nonzero
// (NaN included) = may attend. A grid-stride loop lets the host cap the
// group count.

#extension GL_GOOGLE_include_directive : require
#include "mask_expand_iface.h"
#include "mask.glsl"

// specialization constants: ids and meanings in mask_expand_iface.h
layout(local_size_x_id = VKA_MASK_EXPAND_SPEC_WG, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = VKA_MASK_EXPAND_SPEC_HAS_ATTN) const bool HAS_ATTN = false;
layout(constant_id = VKA_MASK_EXPAND_SPEC_HAS_QUERY) const bool HAS_QUERY = false;

layout(std430, binding = 0) readonly buffer QueryMask { float query_mask[]; };
layout(std430, binding = 1) readonly buffer AttnMask { float attn[]; };
layout(std430, binding = 2) writeonly buffer OutMask { float out_mask[]; };

layout(push_constant) uniform Push { VKA_MASK_EXPAND_PUSH } p;

void main()
{
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint idx = gl_GlobalInvocationID.x; idx < p.total; idx += stride) {
        const uint j = idx % p.tv;
        const uint row = idx / p.tv; // (b * Ho + h) * Tqo + i
        const uint i = row % p.tq;
        const uint bh = row / p.tq;
        const uint h = bh % p.heads;
        const uint b = bh / p.heads;
        bool keep = true;
        if (HAS_QUERY)
            keep = vka_mask_allows(query_mask[b * p.tq + i]);
        if (HAS_ATTN)
            keep = keep && vka_mask_allows(attn[b * p.sb + h * p.sh + i * p.si + j * p.sj]);
        out_mask[idx] = keep ? 1.0 : 0.0;
    }
}
