#version 450
// Inverted dropout of a (B, H, Tq, Tv) tensor with the Philox stream of
// docs/SEMANTICS.md. One Philox block gives the decisions for four consecutive keys
// j = 4c .. 4c+3 of one row (its counter is j / 4), so each invocation owns
// such a quad: no Philox word is computed twice. Rows are padded to whole
// quads only in the index space; the tail quad of a row (Tv % 4 != 0) skips
// the missing keys. A grid-stride loop lets the host cap the group count (big
// per-invocation work suits lavapipe; a GPU still gets >= 1M invocations).

#include "philox.glsl"

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

// IN_PLACE: the host binds the dummy at binding 0 and the shader reads `dst`
// itself, so no buffer is bound twice in one dispatch.
layout(constant_id = 1) const bool IN_PLACE = false;

layout(std430, binding = 0) readonly buffer InBuf { float src[]; };
layout(std430, binding = 1) buffer OutBuf { float dst[]; };

layout(push_constant) uniform Push {
    uint tq, tv;
    uint quads_per_row; // ceil(tv / 4)
    uint total_quads;   // B * H * Tq * quads_per_row
    uint seed_lo, seed_hi;
    uint offset_mix;    // offset_lo ^ (offset_hi * 0x9E3779B9), from the host
    uint threshold;     // vkattn_dropout_threshold(rate), from the host
    float scale;        // the float nearest 1 / (1 - rate); 0 for rate 1
    uint apply;         // 0: plain copy (not training, or rate 0)
} p;

float load(uint idx) { return IN_PLACE ? dst[idx] : src[idx]; }

void main()
{
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint q = gl_GlobalInvocationID.x; q < p.total_quads; q += stride) {
        const uint row = q / p.quads_per_row;  // (b * H + h) * Tq + i
        const uint jq = q - row * p.quads_per_row;
        const uint j0 = jq * 4u;
        const uint n = min(4u, p.tv - j0);
        const uint base = row * p.tv + j0;
        if (p.apply == 0u) {
            for (uint t = 0u; t < n; t++)
                dst[base + t] = load(base + t);
            continue;
        }
        const uint bh = row / p.tq;
        const uint i = row - bh * p.tq;
        // the counter of dropout_keep() in philox.glsl, shared by the quad
        const uvec4 x = philox4x32_10(uvec4(jq, i, bh, p.offset_mix), uvec2(p.seed_lo, p.seed_hi));
        for (uint t = 0u; t < n; t++) {
            const bool keep = (x[t] >> 8u) >= p.threshold;
            // select, not multiply by 0: a dropped NaN or inf becomes exactly +0
            dst[base + t] = keep ? load(base + t) * p.scale : 0.0;
        }
    }
}
