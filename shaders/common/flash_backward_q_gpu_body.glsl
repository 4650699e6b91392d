// The dQ kernel of the GPU-tuning fused SDPA backward, shared by
// shaders/flash_backward_q_gpu.comp (FB_SUBGROUP 0) and
// flash_backward_q_gpu_sg.comp (FB_SUBGROUP 1). See
// flash_backward_gpu_common.glsl for the lanes and flash_backward_body.glsl
// for the math; the host is src/ops/flash_backward_gpu.c.
//
// The forward's shape (flash_tiled_body.glsl): a workgroup owns BR = WG / L
// consecutive rows of one (batch, K/V head), rows being (query head of the
// group, query index) pairs flattened; a row's L lanes each hold NK vec4s of
// its query (times scale * log2(e)) and of its dQ accumulator, and NV of its
// dO. Key tiles of TILE keys stream through shared memory (K, V, value mask),
// four keys per step: the lanes' partial logits and dP of the four keys go
// through one lane reduction, then masks, weights and keep bits exactly as
// the forward (flash_mask.glsl: one Philox call per row and four keys), and
// dQ += dS k on the lane's slices. Tiles past a causal limit are skipped.
//
// Live fp32 values per invocation (src/ops/flash_backward_budget.c,
// vka_flash_backward_q_live_values): 8 NK + 4 NV for the query, dQ and dO
// slices; 8 for the four keys' logits and dP; 4 for their weights, then dS;
// 4 for their keep factors; 2 for the row's stats; 4 for the shared vec4 being
// used; 12 scalars = 8 NK + 4 NV + 34. The host picks L so this is <= 128
// (NK = NV = 4 at any width up to 256: 82) and <= 64 under the mali and
// adreno profiles (NK = NV = 2: 58).

#include "flash_backward_gpu_common.glsl"

const uint BR = WG / L; // query rows per workgroup

shared vec4 ks[TILE * DK4];
shared vec4 vs[TILE * DV4];
shared float vmask_s[TILE];

vec4 qr[NK], dq_acc[NK], dor[NV];

// Copies keys j0 .. j0 + TILE - 1 of K/V head zb (and batch b's value mask)
// into shared memory; keys past Tv become zeros (and masked).
void load_keys(uint b, uint zb, uint j0)
{
    const uint n_keys = min(TILE, p.tv - j0);
    [[unroll]] for (uint it = 0u; it < (TILE * DK4 + WG - 1u) / WG; it++) {
        const uint slot = it * WG + gl_LocalInvocationIndex, jj = slot / DK4;
        if (slot < TILE * DK4)
            ks[slot] = jj < n_keys ? load_dk(1u, zb * p.tv + j0 + jj, slot % DK4) : vec4(0.0);
    }
    [[unroll]] for (uint it = 0u; it < (TILE * DV4 + WG - 1u) / WG; it++) {
        const uint slot = it * WG + gl_LocalInvocationIndex, jj = slot / DV4;
        if (slot < TILE * DV4)
            vs[slot] = jj < n_keys ? load_dv(1u, zb * p.tv + j0 + jj, slot % DV4) : vec4(0.0);
    }
    if (HAS_VALUE_MASK)
        [[unroll]] for (uint it = 0u; it < (TILE + WG - 1u) / WG; it++) {
            const uint jj = it * WG + gl_LocalInvocationIndex;
            if (jj < TILE)
                vmask_s[jj] = jj < n_keys ? vmask_in[b * p.tv + j0 + jj] : 0.0;
        }
}

void main()
{
    init_lanes();
    const uint zb = gl_WorkGroupID.z + p.z_base;
    const uint kv_heads = p.heads / p.group;
    const uint b = zb / kv_heads, hkv = zb % kv_heads;
    const uint rows_total = p.group * p.tq;
    const uint r0 = (gl_WorkGroupID.x + p.x_base) * BR;
    const uint r1 = min(r0 + BR, rows_total) - 1u;
    const uint r = r0 + tid / L;
    const bool row_ok = r < rows_total;
    const uint h = hkv * p.group + (row_ok ? r / p.tq : 0u);
    const uint i = row_ok ? r % p.tq : 0u;
    const uint row = (b * p.heads + h) * p.tq + i;
    const vec2 st = row_ok ? stats_in[row] : vec2(DEAD_MIN, 0.0);
    [[unroll]] for (uint t = 0u; t < NK; t++) {
        qr[t] = row_ok ? load_dk(0u, row, lane + t * L) * p.scale_log2 : vec4(0.0);
        dq_acc[t] = vec4(0.0);
    }
    [[unroll]] for (uint t = 0u; t < NV; t++)
        dor[t] = row_ok ? load_dv(0u, row, lane + t * L) : vec4(0.0);
    const uint limit = flash_row_end(i); // causal and the window
    const uint kend = flash_key_end(r0, r1);
    for (uint j0 = 0u; j0 < kend; j0 += TILE) {
        barrier(); // the previous tile is no longer read
        load_keys(b, zb, j0);
        barrier();
        [[dont_unroll]] for (uint jj = 0u; jj < TILE; jj += 4u) {
            vec4 x = vec4(0.0), dp = vec4(0.0); // keys jj .. jj + 3 of the tile
            [[unroll]] for (uint t = 0u; t < NK; t++) {
                const uint e4 = lane + t * L;
                if (e4 < DK4)
                    x += vec4(dot(qr[t], ks[jj * DK4 + e4]), dot(qr[t], ks[(jj + 1u) * DK4 + e4]),
                              dot(qr[t], ks[(jj + 2u) * DK4 + e4]),
                              dot(qr[t], ks[(jj + 3u) * DK4 + e4]));
            }
            [[unroll]] for (uint t = 0u; t < NV; t++) {
                const uint e4 = lane + t * L;
                if (e4 < DV4)
                    dp += vec4(dot(dor[t], vs[jj * DV4 + e4]),
                               dot(dor[t], vs[(jj + 1u) * DV4 + e4]),
                               dot(dor[t], vs[(jj + 2u) * DV4 + e4]),
                               dot(dor[t], vs[(jj + 3u) * DV4 + e4]));
            }
            reduce_lanes2(x, dp);
            const bvec4 vm = HAS_VALUE_MASK
                                 ? flash_value_mask4(vmask_s[jj], vmask_s[jj + 1u],
                                                     vmask_s[jj + 2u], vmask_s[jj + 3u])
                                 : bvec4(true);
            const vec4 pw = weights4(flash_mask_logits(b, h, i, j0 + jj, limit, vm, x), st, j0 + jj);
            const vec4 kd = DROPOUT ? flash_keep4(b * p.heads + h, i, j0 + jj) * p.drop_scale
                                    : vec4(1.0);
            const vec4 ds = st.x >= DEAD_MIN ? vec4(0.0) : pw * (dp * kd - st.y);
            [[unroll]] for (uint t = 0u; t < NK; t++) {
                const uint e4 = lane + t * L;
                if (e4 < DK4) {
                    vec4 acc = fma(vec4(ds.x), ks[jj * DK4 + e4], dq_acc[t]);
                    acc = fma(vec4(ds.y), ks[(jj + 1u) * DK4 + e4], acc);
                    acc = fma(vec4(ds.z), ks[(jj + 2u) * DK4 + e4], acc);
                    dq_acc[t] = fma(vec4(ds.w), ks[(jj + 3u) * DK4 + e4], acc);
                }
            }
        }
    }
    if (!row_ok)
        return;
    [[unroll]] for (uint t = 0u; t < NK; t++) {
        const uint e4 = lane + t * L;
        [[unroll]] for (uint c = 0u; c < 4u; c++)
            if (e4 * 4u + c < DK)
                out0[row * DK + e4 * 4u + c] = dq_acc[t][c] * p.scale;
    }
}
