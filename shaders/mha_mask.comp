#version 450
// MultiHeadAttention's query mask, folded into one explicit attention mask
// (Keras does the same: query_mask[:, :, None] & attention_mask):
//   out[b, h, i, j] = (query_mask[b, i] != 0 && (!HAS_ATTN || attn[b, h, i, j] != 0)) ? 1 : 0
// over (B, Hm, Tq, Tv), Hm = H for a per-head attention mask, else 1. A masked
// query row then has no allowed key, so SDPA gives it all-zero weights. Masks
// are f32, nonzero (NaN included) = may attend. A grid-stride loop lets the
// host cap the group count.

#extension GL_GOOGLE_include_directive : require
#include "mask.glsl"

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 1) const bool HAS_ATTN = false;

layout(std430, binding = 0) readonly buffer QueryMask { float query_mask[]; };
layout(std430, binding = 1) readonly buffer AttnMask { float attn[]; };
layout(std430, binding = 2) writeonly buffer OutMask { float out_mask[]; };

layout(push_constant) uniform Push {
    uint tq, tv;
    uint rows_per_batch; // Hm * Tq
    uint total;          // B * Hm * Tq * Tv
} p;


void main()
{
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint idx = gl_GlobalInvocationID.x; idx < p.total; idx += stride) {
        const uint row = idx / p.tv;               // (b * Hm + h) * Tq + i
        const uint b = row / p.rows_per_batch;
        const uint i = row % p.tq;
        bool keep = vka_mask_allows(query_mask[b * p.tq + i]);
        if (HAS_ATTN)
            keep = keep && vka_mask_allows(attn[idx]);
        out_mask[idx] = keep ? 1.0 : 0.0;
    }
}
