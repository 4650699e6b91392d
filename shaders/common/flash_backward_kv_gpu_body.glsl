// The dK, dV kernel of the GPU-tuning fused SDPA backward, shared by
// shaders/flash_backward_kv_gpu.comp (FB_SUBGROUP 0) and
// flash_backward_kv_gpu_sg.comp (FB_SUBGROUP 1). See
// flash_backward_gpu_common.glsl for the lanes and flash_backward_body.glsl
// for the math; the host is src/ops/flash_backward_gpu.c.
//
// A workgroup owns KB = WG / L consecutive keys of one (batch, K/V head); a
// key's L lanes each hold NK vec4s of its K row (times scale * log2(e)) and
// of its dK accumulator, and NV of its V row and dV accumulator. It loops over
// every query row of the query heads sharing that K/V head (grouped-query
// attention sums here, no atomics), TILE rows at a time through shared memory
// (Q, dO, stats), four rows per step: the lanes' partial logits and dP of the
// four rows go through one lane reduction, then each row's mask, weight and
// keep bit (flash_mask.glsl, one Philox call per row and key: the keep bits
// of keys j & ~3 .. (j & ~3) + 3, this key's taken), then dV += P keep dO and
// dK += dS q on the lane's slices. Row tiles wholly above a causal diagonal
// are skipped (not under the uniform policy).
//
// Live fp32 values per invocation (src/ops/flash_backward_budget.c,
// vka_flash_backward_kv_live_values): 8 (NK + NV) for K, V, dK, dV slices;
// 8 for the four rows' logits and dP; 8 for their stats; 8 for their P keep
// and dS; 4 for the shared vec4 being used; 12 scalars (indices, limits) =
// 8 (NK + NV) + 40. The host picks L so this is <= 128 (NK = NV = 4 at any
// width up to 256: 104) and <= 64 under the mali and adreno profiles (NK =
// NV = 1: 56).

#include "flash_backward_gpu_common.glsl"

const uint KB = WG / L; // keys per workgroup

shared vec4 qs[TILE * DK4];
shared vec4 dos[TILE * DV4];
shared vec2 sts[TILE];

vec4 kr[NK], vr[NV], dk_acc[NK], dv_acc[NV];

// Copies rows r0 .. r0 + TILE - 1 (of rows_total) of Q, dO and the stats
// into shared memory; rows past the end become zeros and dead stats.
void load_rows(uint row_base, uint r0, uint rows_total)
{
    [[unroll]] for (uint it = 0u; it < (TILE * DK4 + WG - 1u) / WG; it++) {
        const uint slot = it * WG + gl_LocalInvocationIndex, r = r0 + slot / DK4;
        if (slot < TILE * DK4)
            qs[slot] = r < rows_total ? load_dk(0u, row_base + r, slot % DK4) : vec4(0.0);
    }
    [[unroll]] for (uint it = 0u; it < (TILE * DV4 + WG - 1u) / WG; it++) {
        const uint slot = it * WG + gl_LocalInvocationIndex, r = r0 + slot / DV4;
        if (slot < TILE * DV4)
            dos[slot] = r < rows_total ? load_dv(0u, row_base + r, slot % DV4) : vec4(0.0);
    }
    [[unroll]] for (uint it = 0u; it < (TILE + WG - 1u) / WG; it++) {
        const uint rr = it * WG + gl_LocalInvocationIndex, r = r0 + rr;
        if (rr < TILE)
            sts[rr] = r < rows_total ? stats_in[row_base + r] : vec2(DEAD_MIN, 0.0);
    }
}

void main()
{
    init_lanes();
    const uint zb = gl_WorkGroupID.z + p.z_base; // b * Hkv + K/V head
    const uint kv_heads = p.heads / p.group;
    const uint b = zb / kv_heads, hkv = zb % kv_heads;
    const uint j_first = (gl_WorkGroupID.x + p.x_base) * KB;
    const uint key = j_first + tid / L;
    const bool key_ok = key < p.tv;
    const uint krow = zb * p.tv + (key_ok ? key : 0u);
    [[unroll]] for (uint t = 0u; t < NK; t++) {
        kr[t] = key_ok ? load_dk(1u, krow, lane + t * L) * p.scale_log2 : vec4(0.0);
        dk_acc[t] = vec4(0.0);
    }
    [[unroll]] for (uint t = 0u; t < NV; t++) {
        vr[t] = key_ok ? load_dv(1u, krow, lane + t * L) : vec4(0.0);
        dv_acc[t] = vec4(0.0);
    }
    const bool vm = !HAS_VALUE_MASK ||
                    (key_ok && vka_mask_allows(vmask_in[b * p.tv + (key_ok ? key : 0u)]));
    const uint j4 = key & ~3u, c = key & 3u; // the Philox group of this key, its place
    const uint rows_total = p.group * p.tq;
    const uint row_base = (b * p.heads + hkv * p.group) * p.tq;
    for (uint r0 = 0u; r0 < rows_total; r0 += TILE) {
        const uint r1 = min(r0 + TILE, rows_total) - 1u;
        if (!UNIFORM_ROWS && CAUSAL != VKA_CAUSAL_NONE && flash_key_end(r0, r1) <= j_first)
            continue; // uniform over the workgroup: no key of the block is seen
        barrier(); // the previous tile is no longer read
        load_rows(row_base, r0, rows_total);
        barrier();
        const uint n_rows = r1 + 1u - r0;
        [[dont_unroll]] for (uint rr = 0u; rr < n_rows; rr += 4u) {
            vec4 x = vec4(0.0), dp = vec4(0.0); // rows rr .. rr + 3
            [[unroll]] for (uint t = 0u; t < NK; t++) {
                const uint e4 = lane + t * L;
                if (e4 < DK4)
                    x += vec4(dot(qs[rr * DK4 + e4], kr[t]), dot(qs[(rr + 1u) * DK4 + e4], kr[t]),
                              dot(qs[(rr + 2u) * DK4 + e4], kr[t]),
                              dot(qs[(rr + 3u) * DK4 + e4], kr[t]));
            }
            [[unroll]] for (uint t = 0u; t < NV; t++) {
                const uint e4 = lane + t * L;
                if (e4 < DV4)
                    dp += vec4(dot(dos[rr * DV4 + e4], vr[t]),
                               dot(dos[(rr + 1u) * DV4 + e4], vr[t]),
                               dot(dos[(rr + 2u) * DV4 + e4], vr[t]),
                               dot(dos[(rr + 3u) * DV4 + e4], vr[t]));
            }
            reduce_lanes2(x, dp);
            vec4 pv, ds;
            [[unroll]] for (uint s = 0u; s < 4u; s++) {
                const vec2 st = sts[rr + s];
                // Rows past the end: dead stats and zero dO, so they add nothing.
                const uint r = min(r0 + rr + s, rows_total - 1u);
                const uint h = hkv * p.group + r / p.tq, i = r % p.tq;
                vec4 xm = vec4(0.0);
                xm[c] = x[s];
                xm = flash_mask_logits(b, h, i, j4, flash_row_end(i),
                                       bvec4(vm), xm);
                const float pw = weight1(xm[c], st, key);
                const float kd = DROPOUT ? flash_keep4(b * p.heads + h, i, j4)[c] * p.drop_scale
                                         : 1.0;
                pv[s] = pw * kd;
                ds[s] = st.x >= DEAD_MIN ? 0.0 : pw * (dp[s] * kd - st.y);
            }
            [[unroll]] for (uint t = 0u; t < NV; t++) {
                const uint e4 = lane + t * L;
                if (e4 < DV4) {
                    vec4 acc = fma(vec4(pv.x), dos[rr * DV4 + e4], dv_acc[t]);
                    acc = fma(vec4(pv.y), dos[(rr + 1u) * DV4 + e4], acc);
                    acc = fma(vec4(pv.z), dos[(rr + 2u) * DV4 + e4], acc);
                    dv_acc[t] = fma(vec4(pv.w), dos[(rr + 3u) * DV4 + e4], acc);
                }
            }
            [[unroll]] for (uint t = 0u; t < NK; t++) {
                const uint e4 = lane + t * L;
                if (e4 < DK4) {
                    vec4 acc = fma(vec4(ds.x), qs[rr * DK4 + e4], dk_acc[t]);
                    acc = fma(vec4(ds.y), qs[(rr + 1u) * DK4 + e4], acc);
                    acc = fma(vec4(ds.z), qs[(rr + 2u) * DK4 + e4], acc);
                    dk_acc[t] = fma(vec4(ds.w), qs[(rr + 3u) * DK4 + e4], acc);
                }
            }
        }
    }
    if (!key_ok)
        return;
    [[unroll]] for (uint t = 0u; t < NK; t++) {
        const uint e4 = lane + t * L;
        [[unroll]] for (uint cc = 0u; cc < 4u; cc++)
            if (e4 * 4u + cc < DK)
                out0[krow * DK + e4 * 4u + cc] = dk_acc[t][cc] * p.scale;
    }
    [[unroll]] for (uint t = 0u; t < NV; t++) {
        const uint e4 = lane + t * L;
        [[unroll]] for (uint cc = 0u; cc < 4u; cc++)
            if (e4 * 4u + cc < DV)
                out1[krow * DV + e4 * 4u + cc] = dv_acc[t][cc];
    }
}
