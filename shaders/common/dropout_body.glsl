// The body of the dropout kernels (shaders/dropout.comp, dropout_f16.comp):
// inverted dropout of a (B, H, Tq, Tv) tensor with the Philox stream of
// docs/SEMANTICS.md. The including shader declares the bindings and
// specialization constants, the push block `p`, and
//   float load(uint i)        element i of the input (of dst when IN_PLACE)
//   VKA_STORE(i, v)           stores float v as element i of the output
// One Philox block gives the decisions for four consecutive keys
// j = 4c .. 4c+3 of one row (its counter is j / 4), so each invocation owns
// such a quad: no Philox word is computed twice. Rows are padded to whole
// quads only in the index space; the tail quad of a row (Tv % 4 != 0) skips
// the missing keys. A grid-stride loop lets the host cap the group count (big
// per-invocation work suits lavapipe; a GPU still gets >= 1M invocations).
// Each element is stored by one invocation (so f16 elements only through
// float16_t storage, never packed halves).
#include "philox.glsl"

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
                VKA_STORE(base + t, load(base + t));
            continue;
        }
        const uint bh = row / p.tq;
        const uint i = row - bh * p.tq;
        // the counter of dropout_keep() in philox.glsl, shared by the quad
        const uvec4 x = philox4x32_10(uvec4(jq, i, bh, p.offset_mix), uvec2(p.seed_lo, p.seed_hi));
        for (uint t = 0u; t < n; t++) {
            const bool keep = (x[t] >> 8u) >= p.threshold;
            // select, not multiply by 0: a dropped NaN or inf becomes exactly +0
            VKA_STORE(base + t, keep ? load(base + t) * p.scale : 0.0);
        }
    }
}
