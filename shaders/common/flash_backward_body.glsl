// The gradient kernels of the fused SDPA backward (flash-attention-2 style),
// shared by shaders/flash_backward_kv.comp (FB_KV 1: dK, dV) and
// shaders/flash_backward_q.comp (FB_KV 0: dQ). Each defines FB_KV and
// includes this file after #version. The host: src/ops/flash_backward.c.
//
// For a query row r = (b, h, i) and key j of the forward
//   x_rj = (q_r . k_j * scale + bias) * log2(e)        (masked: MASKED)
//   P_rj = exp2(x_rj - lse2_r)                           the softmax weight
//   keep_rj = Philox keep bit * drop_scale, or 1         (exactly the forward's)
//   dP_rj = (dO_r . v_j) * keep_rj
//   dS_rj = P_rj * (dP_rj - D_r),  D_r = dO_r . out_r    (= sum_j P dP)
//   dV_j += P_rj keep_rj dO_r;  dK_j += scale dS_rj q_r;  dQ_r += scale dS_rj k_j
// with (lse2_r, D_r) from flash_backward_stats.comp. A row whose LSE is -inf
// (no allowed key; stats.x = DEAD) has dS = 0 and, under the uniform policy,
// P = 1/Tv on every key (so it still feeds dV), else P = 0.
//
// FB_KV: a workgroup owns 4 * WG consecutive keys of one (batch, K/V head),
// 4 per invocation (one Philox call covers them: the keep bits come four keys
// at a time), with their K rows (times scale * log2(e)), V rows and the dK, dV
// accumulators in registers. It loops over every query row of the query heads
// sharing that K/V head (grouped-query attention sums there, no atomics), TILE
// rows at a time through shared memory (Q, dO, stats). Row tiles wholly above
// a causal diagonal or outside the sliding window are skipped (not under the
// uniform policy).
// FB_KV 0: the forward's layout: a workgroup owns WG * RPI query rows of one
// (batch, K/V head), each invocation RPI rows with q (times scale * log2(e)),
// dO and the dQ accumulator in registers; key tiles of TILE keys stream through
// shared memory (K, V, value mask); tiles past a causal limit or outside the
// sliding window are skipped.
// Every shared-memory read feeds 4 keys (kv) or RPI rows (q).
//
// No inf or NaN arithmetic is relied on: masked logits are the finite MASKED
// and their weight is selected as 0, dead rows are marked by a finite DEAD.
// No subgroup operations: any subgroup size works.

#extension GL_EXT_control_flow_attributes : require

#include "flash_backward_iface.h"

#include "flash_backward_io.glsl"
#include "tanh_robust.glsl"

layout(constant_id = VKA_FB_SPEC_RPI) const uint RPI = 1;

// Keep factors (0 or drop_scale) of keys j..j+3 (j a multiple of 4) of row (bh, i).
vec4 keep4(uint bh, uint i, uint j)
{
    return DROPOUT ? flash_keep4(bh, i, j) * p.drop_scale : vec4(1.0);
}

// Soft-capping of 4 logits in log2 units (x = s log2(e), C = c log2(e)):
// x becomes C tanh(x / C); returns d capped / d x = 1 - tanh^2 (1 when off),
// the factor dS takes on its way back to the raw scores.
vec4 softcap4(inout vec4 x)
{
    vec4 slope = vec4(1.0);
    if (p.softcap_log2 > 0.0)
        [[unroll]] for (uint c = 0u; c < 4u; c++) {
            const float t = tanh_robust(x[c] / p.softcap_log2);
            x[c] = p.softcap_log2 * t;
            slope[c] = 1.0 - t * t;
        }
    return slope;
}

// The forward's masked logits (flash_mask.glsl) of keys j..j+3 of row
// (b, h, i); vm: the value mask of those keys (true without one).
vec4 mask_logits(uint b, uint h, uint i, uint j, bvec4 vm, vec4 x)
{
    return flash_mask_logits(b, h, i, j, flash_row_end(i), vm, x);
}

#if FB_KV

shared vec4 qs[TILE * DK4];
shared vec4 dos[TILE * DV4];
shared vec2 sts[TILE];

vec4 kr[4 * DK4], vr[4 * DV4], dk_acc[4 * DK4], dv_acc[4 * DV4];

void main()
{
    const uint tid = gl_LocalInvocationID.x;
    const uint zb = gl_WorkGroupID.z + p.z_base; // b * Hkv + K/V head
    const uint kv_heads = p.heads / p.group;
    const uint b = zb / kv_heads, hkv = zb % kv_heads;
    const uint j_first = (gl_WorkGroupID.x + p.x_base) * WG * 4u;
    const uint j = j_first + tid * 4u;
    const bool key_ok = j < p.tv;
    bvec4 vm = bvec4(true);
    [[unroll]] for (uint c = 0u; c < 4u; c++) {
        const bool in_range = j + c < p.tv;
        const uint krow = zb * p.tv + (in_range ? j + c : 0u);
        [[unroll]] for (uint e4 = 0u; e4 < DK4; e4++) {
            kr[c * DK4 + e4] = in_range ? load_dk(1u, krow, e4) * p.scale_log2 : vec4(0.0);
            dk_acc[c * DK4 + e4] = vec4(0.0);
        }
        [[unroll]] for (uint e4 = 0u; e4 < DV4; e4++) {
            vr[c * DV4 + e4] = in_range ? load_dv(1u, krow, e4) : vec4(0.0);
            dv_acc[c * DV4 + e4] = vec4(0.0);
        }
        if (HAS_VALUE_MASK)
            vm[c] = in_range && vka_mask_allows(vmask_in[b * p.tv + (in_range ? j + c : 0u)]);
    }
    const uint rows_total = p.group * p.tq;
    for (uint r0 = 0u; r0 < rows_total; r0 += TILE) {
        const uint r1 = min(r0 + TILE, rows_total) - 1u;
        if (!UNIFORM_ROWS && (flash_key_end(r0, r1) <= j_first ||
                              flash_key_begin(r0, r1) >= j_first + WG * 4u))
            continue; // uniform over the workgroup: no key of the block is seen
        barrier(); // the previous tile is no longer read
        [[unroll]] for (uint it = 0u; it < (TILE * DK4 + WG - 1u) / WG; it++) {
            const uint slot = it * WG + tid, rr = slot / DK4, r = r0 + rr;
            if (slot < TILE * DK4) {
                const uint row = (b * p.heads + hkv * p.group) * p.tq + min(r, rows_total - 1u);
                qs[slot] = r < rows_total ? load_dk(0u, row, slot % DK4) : vec4(0.0);
            }
        }
        [[unroll]] for (uint it = 0u; it < (TILE * DV4 + WG - 1u) / WG; it++) {
            const uint slot = it * WG + tid, rr = slot / DV4, r = r0 + rr;
            if (slot < TILE * DV4) {
                const uint row = (b * p.heads + hkv * p.group) * p.tq + min(r, rows_total - 1u);
                dos[slot] = r < rows_total ? load_dv(0u, row, slot % DV4) : vec4(0.0);
            }
        }
        [[unroll]] for (uint it = 0u; it < (TILE + WG - 1u) / WG; it++) {
            const uint rr = it * WG + tid, r = r0 + rr;
            if (rr < TILE)
                sts[rr] = r < rows_total
                              ? stats_in[(b * p.heads + hkv * p.group) * p.tq + r]
                              : vec2(DEAD_MIN, 0.0);
        }
        barrier();
        if (!key_ok)
            continue;
        const uint n_rows = r1 + 1u - r0;
        [[dont_unroll]] for (uint rr = 0u; rr < n_rows; rr++) {
            const vec2 st = sts[rr];
            if (!UNIFORM_ROWS && st.x >= DEAD_MIN)
                continue;
            const uint r = r0 + rr;
            const uint h = hkv * p.group + r / p.tq, i = r % p.tq;
            vec4 x = vec4(0.0), dp = vec4(0.0);
            [[unroll]] for (uint e4 = 0u; e4 < DK4; e4++) {
                const vec4 qe = qs[rr * DK4 + e4];
                x += vec4(dot(qe, kr[e4]), dot(qe, kr[DK4 + e4]), dot(qe, kr[2u * DK4 + e4]),
                          dot(qe, kr[3u * DK4 + e4]));
            }
            [[unroll]] for (uint e4 = 0u; e4 < DV4; e4++) {
                const vec4 de = dos[rr * DV4 + e4];
                dp += vec4(dot(de, vr[e4]), dot(de, vr[DV4 + e4]), dot(de, vr[2u * DV4 + e4]),
                           dot(de, vr[3u * DV4 + e4]));
            }
            const vec4 slope = softcap4(x);
            x = mask_logits(b, h, i, j, vm, x);
            const vec4 pw = weights4(x, st, j);
            const vec4 kd = keep4(b * p.heads + h, i, j);
            const vec4 pv = pw * kd;
            const vec4 ds = st.x >= DEAD_MIN ? vec4(0.0) : pw * (dp * kd - st.y) * slope;
            [[unroll]] for (uint e4 = 0u; e4 < DV4; e4++) {
                const vec4 de = dos[rr * DV4 + e4];
                [[unroll]] for (uint c = 0u; c < 4u; c++)
                    dv_acc[c * DV4 + e4] = fma(vec4(pv[c]), de, dv_acc[c * DV4 + e4]);
            }
            [[unroll]] for (uint e4 = 0u; e4 < DK4; e4++) {
                const vec4 qe = qs[rr * DK4 + e4];
                [[unroll]] for (uint c = 0u; c < 4u; c++)
                    dk_acc[c * DK4 + e4] = fma(vec4(ds[c]), qe, dk_acc[c * DK4 + e4]);
            }
        }
    }
    [[unroll]] for (uint c = 0u; c < 4u; c++) {
        if (j + c >= p.tv)
            continue;
        const uint krow = zb * p.tv + j + c;
        [[unroll]] for (uint e4 = 0u; e4 < DK4; e4++)
            [[unroll]] for (uint cc = 0u; cc < 4u; cc++)
                if (e4 * 4u + cc < DK)
                    out0[krow * DK + e4 * 4u + cc] = dk_acc[c * DK4 + e4][cc] * p.scale;
        [[unroll]] for (uint e4 = 0u; e4 < DV4; e4++)
            [[unroll]] for (uint cc = 0u; cc < 4u; cc++)
                if (e4 * 4u + cc < DV)
                    out1[krow * DV + e4 * 4u + cc] = dv_acc[c * DV4 + e4][cc];
    }
}

#else // FB_KV 0: dQ

shared vec4 ks[TILE * DK4];
shared vec4 vs[TILE * DV4];
shared float vmask_s[TILE];

vec4 qr[RPI * DK4], dor[RPI * DV4], dq_acc[RPI * DK4];
vec2 st_r[RPI];
uint row_h[RPI], row_i[RPI];
bool row_ok[RPI];

void main()
{
    const uint tid = gl_LocalInvocationID.x;
    const uint zb = gl_WorkGroupID.z + p.z_base;
    const uint kv_heads = p.heads / p.group;
    const uint b = zb / kv_heads, hkv = zb % kv_heads;
    const uint rows_total = p.group * p.tq;
    const uint r0 = (gl_WorkGroupID.x + p.x_base) * WG * RPI;
    const uint r1 = min(r0 + WG * RPI, rows_total) - 1u;
    bool any_live = false;
    [[unroll]] for (uint rr = 0u; rr < RPI; rr++) {
        const uint r = r0 + rr * WG + tid;
        row_ok[rr] = r < rows_total;
        row_h[rr] = hkv * p.group + (row_ok[rr] ? r / p.tq : 0u);
        row_i[rr] = row_ok[rr] ? r % p.tq : 0u;
        const uint row = (b * p.heads + row_h[rr]) * p.tq + row_i[rr];
        st_r[rr] = row_ok[rr] ? stats_in[row] : vec2(DEAD_MIN, 0.0);
        any_live = any_live || st_r[rr].x < DEAD_MIN;
        [[unroll]] for (uint e4 = 0u; e4 < DK4; e4++) {
            qr[rr * DK4 + e4] = row_ok[rr] ? load_dk(0u, row, e4) * p.scale_log2 : vec4(0.0);
            dq_acc[rr * DK4 + e4] = vec4(0.0);
        }
        [[unroll]] for (uint e4 = 0u; e4 < DV4; e4++)
            dor[rr * DV4 + e4] = row_ok[rr] ? load_dv(0u, row, e4) : vec4(0.0);
    }
    const uint kend = flash_key_end(r0, r1);
    for (uint j0 = flash_tile_begin(r0, r1, TILE); j0 < kend; j0 += TILE) {
        barrier();
        const uint n_keys = min(TILE, p.tv - j0);
        [[unroll]] for (uint it = 0u; it < (TILE * DK4 + WG - 1u) / WG; it++) {
            const uint slot = it * WG + tid, jj = slot / DK4;
            if (slot < TILE * DK4)
                ks[slot] = jj < n_keys ? load_dk(1u, zb * p.tv + j0 + min(jj, n_keys - 1u),
                                                 slot % DK4)
                                       : vec4(0.0);
        }
        [[unroll]] for (uint it = 0u; it < (TILE * DV4 + WG - 1u) / WG; it++) {
            const uint slot = it * WG + tid, jj = slot / DV4;
            if (slot < TILE * DV4)
                vs[slot] = jj < n_keys ? load_dv(1u, zb * p.tv + j0 + min(jj, n_keys - 1u),
                                                 slot % DV4)
                                       : vec4(0.0);
        }
        if (HAS_VALUE_MASK)
            [[unroll]] for (uint it = 0u; it < (TILE + WG - 1u) / WG; it++) {
                const uint jj = it * WG + tid;
                if (jj < TILE)
                    vmask_s[jj] = jj < n_keys ? vmask_in[b * p.tv + j0 + min(jj, n_keys - 1u)]
                                              : 0.0;
            }
        barrier();
        if (!any_live)
            continue;
        [[dont_unroll]] for (uint jj = 0u; jj < TILE; jj += 4u) {
            const bvec4 vm = HAS_VALUE_MASK ? flash_value_mask4(vmask_s[jj], vmask_s[jj + 1u],
                                                                vmask_s[jj + 2u], vmask_s[jj + 3u])
                                            : bvec4(true);
            vec4 x[RPI], dp[RPI];
            [[unroll]] for (uint rr = 0u; rr < RPI; rr++)
                x[rr] = vec4(0.0), dp[rr] = vec4(0.0);
            [[unroll]] for (uint e4 = 0u; e4 < DK4; e4++) {
                const vec4 k0 = ks[jj * DK4 + e4], k1 = ks[(jj + 1u) * DK4 + e4];
                const vec4 k2 = ks[(jj + 2u) * DK4 + e4], k3 = ks[(jj + 3u) * DK4 + e4];
                [[unroll]] for (uint rr = 0u; rr < RPI; rr++) {
                    const vec4 qe = qr[rr * DK4 + e4];
                    x[rr] += vec4(dot(qe, k0), dot(qe, k1), dot(qe, k2), dot(qe, k3));
                }
            }
            [[unroll]] for (uint e4 = 0u; e4 < DV4; e4++) {
                const vec4 v0 = vs[jj * DV4 + e4], v1 = vs[(jj + 1u) * DV4 + e4];
                const vec4 v2 = vs[(jj + 2u) * DV4 + e4], v3 = vs[(jj + 3u) * DV4 + e4];
                [[unroll]] for (uint rr = 0u; rr < RPI; rr++) {
                    const vec4 de = dor[rr * DV4 + e4];
                    dp[rr] += vec4(dot(de, v0), dot(de, v1), dot(de, v2), dot(de, v3));
                }
            }
            vec4 ds[RPI];
            [[unroll]] for (uint rr = 0u; rr < RPI; rr++) {
                const vec4 slope = softcap4(x[rr]);
                const vec4 xm = mask_logits(b, row_h[rr], row_i[rr], j0 + jj, vm, x[rr]);
                const vec4 pw = weights4(xm, st_r[rr], j0 + jj);
                const vec4 kd = keep4(b * p.heads + row_h[rr], row_i[rr], j0 + jj);
                ds[rr] = st_r[rr].x >= DEAD_MIN ? vec4(0.0)
                                                : pw * (dp[rr] * kd - st_r[rr].y) * slope;
            }
            [[unroll]] for (uint e4 = 0u; e4 < DK4; e4++) {
                const vec4 k0 = ks[jj * DK4 + e4], k1 = ks[(jj + 1u) * DK4 + e4];
                const vec4 k2 = ks[(jj + 2u) * DK4 + e4], k3 = ks[(jj + 3u) * DK4 + e4];
                [[unroll]] for (uint rr = 0u; rr < RPI; rr++) {
                    vec4 acc = fma(vec4(ds[rr].x), k0, dq_acc[rr * DK4 + e4]);
                    acc = fma(vec4(ds[rr].y), k1, acc);
                    acc = fma(vec4(ds[rr].z), k2, acc);
                    dq_acc[rr * DK4 + e4] = fma(vec4(ds[rr].w), k3, acc);
                }
            }
        }
    }
    [[unroll]] for (uint rr = 0u; rr < RPI; rr++) {
        if (!row_ok[rr])
            continue;
        const uint row = (b * p.heads + row_h[rr]) * p.tq + row_i[rr];
        [[unroll]] for (uint e4 = 0u; e4 < DK4; e4++)
            [[unroll]] for (uint c = 0u; c < 4u; c++)
                if (e4 * 4u + c < DK)
                    out0[row * DK + e4 * 4u + c] = dq_acc[rr * DK4 + e4][c] * p.scale;
    }
}

#endif
