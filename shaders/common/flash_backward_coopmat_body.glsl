// The fused attention backward's two gradient kernels on 16x16 matrix
// fragments (FlashAttention-2's backward on cooperative matrices), shared by
// shaders/flash_backward_coopmat_nv.comp (COOPMAT_NV1), _khr.comp
// (COOPMAT_KHR) and _emu.comp (COOPMAT_EMU: fragments emulated, so CI runs
// this file on lavapipe); coopmat_frag.glsl has the fragment names. The row
// statistics (lse * log2(e), D = rowsum(dO * O)) come from the stats pass as
// for the other kernels (src/ops/flash_backward.c).
//
// The math is flash_backward_body.glsl's (P = exp2(x - lse2) with the
// forward's masks, bias and Philox keep bits through flash_mask.glsl, dS =
// P (dP keep - D), the same DEAD-row rules); the four products run on
// fragments with f16 operands and f32 sums:
//   KV (dK, dV): a workgroup of NW warps owns BW = 16 NW keys of one (batch,
//     K/V head), K and V staged once as f16; it loops over every query row of
//     the group, BC rows a tile (Q, dO as f16, the rows' stats). Per tile each
//     warp forms S^T = K Q^T and dP^T = V dO^T for its 16 keys, then in plain
//     code P^T keep and dS^T (rounded to f16 into the warp's tiles), then
//     dV += (P keep)^T dO and dK += dS^T Q.
//   Q (dQ): a workgroup owns BW query rows (Q, dO, stats staged once) and
//     loops over the keys BC a tile (K, V as f16): S = Q K^T, dP = dO V^T,
//     dS in plain code, dQ += dS K.
// Q, K, V and dO are f16 (the only calls that take these kernels): the
// flash_backward_f16_coopmat_* modules (FBC_F16, 16-bit storage) read their
// bits as they are, straight into the fragments' halves; the
// flash_backward_coopmat_* ones read the f32 copies the caller staged where
// the device has no 16-bit storage (exact in f16). Either way the only
// roundings are P's and dS's, as in FlashAttention (docs/SEMANTICS.md bounds
// them). Accumulators live in each
// warp's f32 slice of shared memory (a product's fragment is stored to the
// warp's square, then each lane adds its 8 elements): opaque fragments
// cannot be rescaled or kept across tiles within the register budget.
// Every invocation runs every loop and warp_sync (the emulation's warp_sync
// is a workgroup barrier); elements past the ends compute on zeros and dead
// stats and are never stored.
//
// Register budget (src/ops/register_budget.h,
// vka_flash_backward_coopmat_live_values): one accumulator fragment (8), two
// operand fragments (4 + 4), four logits and four dP (8), the row's stats
// (2), P and dS of four keys (8), and the scalars: 8 + 8 + 8 + 2 + 8 + 12 =
// 46 at any width or tile (widths and tiles cost shared memory only).

#extension GL_EXT_control_flow_attributes : require
#include "coopmat_ext.glsl"

#include "flash_backward_coopmat_iface.h"

#define FB_KV 1 // both kernels declare dV's slot: the dQ dispatch binds a dummy
#include "flash_backward_io.glsl"

layout(constant_id = VKA_FBC_SPEC_KV) const bool KV = true;

const uint NW = WG / 32u;  // warps
const uint BW = 16u * NW;  // keys (KV) or query rows (Q) the workgroup owns
const uint BC = TILE;      // query rows (KV) or keys (Q) per tile
const uint DKP = (DK + 15u) / 16u * 16u, DVP = (DV + 15u) / 16u * 16u;
const uint KF = DKP / 16u, VF = DVP / 16u, CF = BC / 16u;
// Shared rows in uvec4s (eight halves), padded by one (alignment, banks).
const uint KLD = DKP / 8u + 1u, VLD = DVP / 8u + 1u, PLD = BC / 8u + 1u;
const uint SLD = BC + 4u; // floats per row of a warp's square

shared uvec4 Ao[BW * KLD]; // own K (KV) or Q (Q)
shared uvec4 Bo[BW * VLD]; // own V (KV) or dO (Q)
shared uvec4 At[BC * KLD]; // the tile's Q (KV) or K (Q)
shared uvec4 Bt[BC * VLD]; // the tile's dO (KV) or V (Q)
shared uvec4 Ps[KV ? NW * 16u * PLD : 1u]; // each warp's f16 (P keep)^T
shared uvec4 Ds[NW * 16u * PLD];           // each warp's f16 dS^T (KV) or dS (Q)
shared float Ss[NW * 16u * SLD];           // each warp's S square, then a product's
shared float Pd[NW * 16u * SLD];           // each warp's dP square, then dS
shared float acc_k[NW * 16u * DKP];        // dK (KV) or dQ (Q), unscaled
shared float acc_v[KV ? NW * 16u * DVP : 1u]; // dV
shared vec2 st_s[KV ? BC : BW];            // the rows' stats
shared float vm_s[KV ? BW : BC];           // the keys' value mask

const uint Ao_ID = 0u, Bo_ID = 1u, At_ID = 2u, Bt_ID = 3u, Ps_ID = 4u, Ds_ID = 5u;
uvec4 frag_src(uint id, uint i)
{
    if (id == Ao_ID)
        return Ao[i];
    if (id == Bo_ID)
        return Bo[i];
    if (id == At_ID)
        return At[i];
    if (id == Bt_ID)
        return Bt[i];
    if (id == Ps_ID)
        return Ps[i];
    return Ds[i];
}

#define FRAG_FAULT_ID VKA_FBC_SPEC_FAULT
#include "coopmat_frag.glsl"

uint warp, lane;

#if FBC_F16
// the f16 tensors' bits (uint16_t: no f16 arithmetic, nothing rounds)
layout(std430, binding = 0) readonly buffer QBufH { uint16_t qh_in[]; };
layout(std430, binding = 1) readonly buffer KBufH { uint16_t kh_in[]; };
layout(std430, binding = 2) readonly buffer VBufH { uint16_t vh_in[]; };
layout(std430, binding = 3) readonly buffer DOBufH { uint16_t doh_in[]; };

// The f16 bits of element i of buffer which (0 Q, 1 K, 2 V, 3 dO).
uint rd(uint which, uint i)
{
    if (which == 0u)
        return uint(qh_in[i]);
    if (which == 1u)
        return uint(kh_in[i]);
    if (which == 2u)
        return uint(vh_in[i]);
    return uint(doh_in[i]);
}
#define HALF_PAIR(x, c) ((x)[c] | ((x)[c + 1u] << 16u))
#else
// Element i of the staged f32 copy which (0 Q, 1 K, 2 V, 3 dO).
float rd(uint which, uint i)
{
    if (which == 0u)
        return q_in[i];
    if (which == 1u)
        return k_in[i];
    if (which == 2u)
        return v_in[i];
    return do_in[i];
}
#define HALF_PAIR(x, c) packHalf2x16(vec2((x)[c], (x)[c + 1u]))
#endif

// Halves g*8 .. g*8+7 of row `row` (width w) of buffer which (0 Q, 1 K, 2 V,
// 3 dO), zeros past w; whole rows are absent where !ok.
uvec4 row8(uint which, uint row, uint g, uint w, bool ok)
{
#if FBC_F16
    uint x[8];
#else
    float x[8];
#endif
    [[unroll]] for (uint c = 0u; c < 8u; c++) {
        x[c] = 0u; // +0 either way
        if (ok && g * 8u + c < w)
            x[c] = rd(which, row * w + g * 8u + c);
    }
    return uvec4(HALF_PAIR(x, 0u), HALF_PAIR(x, 2u), HALF_PAIR(x, 4u), HALF_PAIR(x, 6u));
}

// Rows first .. first + N - 1 (global row base + first + r, present below
// `valid`) of buffer which, width W, into shared S (LD uvec4s a row).
#define STAGE(S, LD, N, W, which, base, first, valid)                          \
    {                                                                          \
        const uint G_ = LD - 1u;                                               \
        [[unroll]] for (uint it_ = 0u; it_ < (N * G_ + WG - 1u) / WG; it_++) { \
            const uint s_ = it_ * WG + gl_LocalInvocationIndex;                \
            const uint r_ = s_ / G_, g_ = s_ % G_;                             \
            if (s_ < N * G_)                                                   \
                S[r_ * LD + g_] =                                              \
                    row8(which, (base) + (first) + r_, g_, W, (first) + r_ < (valid)); \
        }                                                                      \
    }

// The warp's 16 x BC product of its 16 own rows of A (LD, F fragments wide)
// with the tile's rows of B read column-major, into square Q.
#define SCORES(Q, A, B, LD, F)                                                 \
    FRAG_LOOP for (uint n = 0u; n < CF; n++) {                                 \
        frag_acc acc = frag_acc_zero();                                        \
        FRAG_LOOP for (uint k = 0u; k < F; k++) {                              \
            frag_a a;                                                          \
            frag_b bb;                                                         \
            frag_load(a, A, warp * 16u * LD + k * 2u, LD, false);              \
            frag_load(bb, B, n * 16u * LD + k * 2u, LD, true);                 \
            acc = frag_mad(a, bb, acc);                                        \
        }                                                                      \
        frag_store(acc, Q, warp * 16u * SLD + n * 16u, SLD);                   \
    }

// acc_x (row width DXP) += the warp's 16 x BC f16 tile T times the tile's
// B (LD, F fragments wide), a fragment at a time through the warp's square.
#define ACCUMULATE(ACC, DXP, T, B, LD, F)                                      \
    FRAG_LOOP for (uint n = 0u; n < F; n++) {                                  \
        frag_acc acc = frag_acc_zero();                                        \
        FRAG_LOOP for (uint g = 0u; g < CF; g++) {                             \
            frag_a a;                                                          \
            frag_b bb;                                                         \
            frag_load(a, T, warp * 16u * PLD + g * 2u, PLD, false);            \
            frag_load(bb, B, g * 16u * LD + n * 2u, LD, false);                \
            acc = frag_mad(a, bb, acc);                                        \
        }                                                                      \
        frag_store(acc, Ss, warp * 16u * SLD, SLD);                            \
        warp_sync();                                                           \
        [[unroll]] for (uint i = 0u; i < 8u; i++) {                            \
            const uint e = lane + 32u * i;                                     \
            ACC[(warp * 16u + e / 16u) * DXP + n * 16u + e % 16u] +=           \
                Ss[warp * 16u * SLD + (e / 16u) * SLD + e % 16u];              \
        }                                                                      \
        warp_sync(); /* the square is written again by the next n */          \
    }

// The warp's square Q (16 x BC floats) rounded to f16 into its tile T.
#define PACK(T, Q)                                                             \
    [[unroll]] for (uint t = 0u; t < (16u * (BC / 8u) + 31u) / 32u; t++) {     \
        const uint gi = lane + 32u * t, r = gi / (BC / 8u), g = gi % (BC / 8u); \
        const uint s = warp * 16u * SLD + r * SLD + g * 8u;                    \
        if (gi < 16u * (BC / 8u))                                              \
            T[(warp * 16u + r) * PLD + g] = uvec4(                             \
                packHalf2x16(vec2(Q[s], Q[s + 1u])), packHalf2x16(vec2(Q[s + 2u], Q[s + 3u])), \
                packHalf2x16(vec2(Q[s + 4u], Q[s + 5u])),                      \
                packHalf2x16(vec2(Q[s + 6u], Q[s + 7u])));                     \
    }

// The value mask's verdict on keys kk..kk+3 of vm_s (all true without one).
bvec4 vmask4(uint kk)
{
    return HAS_VALUE_MASK
               ? flash_value_mask4(vm_s[kk], vm_s[kk + 1u], vm_s[kk + 2u], vm_s[kk + 3u])
               : bvec4(true);
}

// P keep and dS of keys j..j+3 (j a multiple of 4, local kk in vm_s) of
// flattened row r of K/V head hkv, from the raw logits s and dP.
void grads4(uint b, uint hkv, uint r, uint j, uint kk, vec2 st, vec4 s, vec4 dp,
            out vec4 pk, out vec4 ds)
{
    const uint rc = min(r, p.group * p.tq - 1u); // rows past the end: dead stats
    const uint h = hkv * p.group + rc / p.tq, i = rc % p.tq;
    const vec4 x = flash_mask_logits(b, h, i, j, flash_row_end(i), vmask4(kk), s * p.scale_log2);
    const vec4 pw = weights4(x, st, j);
    const vec4 kd = DROPOUT ? flash_keep4(b * p.heads + h, i, j) * p.drop_scale : vec4(1.0);
    pk = pw * kd;
    ds = st.x >= DEAD_MIN ? vec4(0.0) : pw * (dp * kd - st.y);
}

void zero_acc()
{
    for (uint i = gl_LocalInvocationIndex; i < NW * 16u * DKP; i += WG)
        acc_k[i] = 0.0;
    if (KV)
        for (uint i = gl_LocalInvocationIndex; i < NW * 16u * DVP; i += WG)
            acc_v[i] = 0.0;
}

void main_kv(uint zb, uint b, uint hkv)
{
    const uint j_first = (gl_WorkGroupID.x + p.x_base) * BW;
    STAGE(Ao, KLD, BW, DK, 1u, zb * p.tv, j_first, p.tv);
    STAGE(Bo, VLD, BW, DV, 2u, zb * p.tv, j_first, p.tv);
    for (uint jj = gl_LocalInvocationIndex; jj < BW; jj += WG)
        vm_s[jj] = HAS_VALUE_MASK && j_first + jj < p.tv ? vmask_in[b * p.tv + j_first + jj]
                                                          : 0.0;
    zero_acc();
    const uint rows_total = p.group * p.tq;
    const uint row_base = (b * p.heads + hkv * p.group) * p.tq;
    const uint sq = warp * 16u * SLD;
    for (uint r0 = 0u; r0 < rows_total; r0 += BC) {
        const uint r1 = min(r0 + BC, rows_total) - 1u;
        if (!UNIFORM_ROWS && CAUSAL != VKA_CAUSAL_NONE && flash_key_end(r0, r1) <= j_first)
            continue; // uniform over the workgroup: no key of the block is seen
        barrier(); // the previous tile is no longer read
        STAGE(At, KLD, BC, DK, 0u, row_base, r0, rows_total);
        STAGE(Bt, VLD, BC, DV, 3u, row_base, r0, rows_total);
        for (uint rr = gl_LocalInvocationIndex; rr < BC; rr += WG)
            st_s[rr] = r0 + rr < rows_total ? stats_in[row_base + r0 + rr] : vec2(DEAD_MIN, 0.0);
        barrier();
        SCORES(Ss, Ao, At, KLD, KF) // S^T = K Q^T
        SCORES(Pd, Bo, Bt, VLD, VF) // dP^T = V dO^T
        warp_sync();
        // four keys (a Philox group) of one row per step
        [[unroll]] for (uint t = 0u; t < BC / 8u; t++) {
            const uint gi = lane + 32u * t, quad = gi / BC, rr = gi % BC;
            const uint kk = warp * 16u + quad * 4u, at = sq + quad * 4u * SLD + rr;
            const vec4 s = vec4(Ss[at], Ss[at + SLD], Ss[at + 2u * SLD], Ss[at + 3u * SLD]);
            const vec4 dp = vec4(Pd[at], Pd[at + SLD], Pd[at + 2u * SLD], Pd[at + 3u * SLD]);
            vec4 pk, ds;
            grads4(b, hkv, r0 + rr, j_first + kk, kk, st_s[rr], s, dp, pk, ds);
            [[unroll]] for (uint c = 0u; c < 4u; c++) {
                Ss[at + c * SLD] = pk[c];
                Pd[at + c * SLD] = ds[c];
            }
        }
        warp_sync();
        PACK(Ps, Ss)
        PACK(Ds, Pd)
        warp_sync();
        ACCUMULATE(acc_v, DVP, Ps, Bt, VLD, VF) // dV += (P keep)^T dO
        ACCUMULATE(acc_k, DKP, Ds, At, KLD, KF) // dK += dS^T Q
    }
    barrier();
    for (uint e = lane; e < 16u * DKP; e += 32u) {
        const uint key = j_first + warp * 16u + e / DKP, c = e % DKP;
        if (key < p.tv && c < DK)
            out0[(zb * p.tv + key) * DK + c] = acc_k[warp * 16u * DKP + e] * p.scale;
    }
    for (uint e = lane; e < 16u * DVP; e += 32u) {
        const uint key = j_first + warp * 16u + e / DVP, c = e % DVP;
        if (key < p.tv && c < DV)
            out1[(zb * p.tv + key) * DV + c] = acc_v[warp * 16u * DVP + e];
    }
}

void main_q(uint zb, uint b, uint hkv)
{
    const uint rows_total = p.group * p.tq;
    const uint row_base = (b * p.heads + hkv * p.group) * p.tq;
    const uint r0 = (gl_WorkGroupID.x + p.x_base) * BW;
    const uint r1 = min(r0 + BW, rows_total) - 1u;
    STAGE(Ao, KLD, BW, DK, 0u, row_base, r0, rows_total);
    STAGE(Bo, VLD, BW, DV, 3u, row_base, r0, rows_total);
    for (uint rr = gl_LocalInvocationIndex; rr < BW; rr += WG)
        st_s[rr] = r0 + rr < rows_total ? stats_in[row_base + r0 + rr] : vec2(DEAD_MIN, 0.0);
    zero_acc();
    const uint sq = warp * 16u * SLD;
    const uint kend = flash_key_end(r0, r1);
    // dead rows have dS = 0: the causal and window limits hold under either policy
    for (uint j0 = flash_tile_begin(r0, r1, BC); j0 < kend; j0 += BC) {
        barrier(); // the previous tile is no longer read (and the rows are staged)
        STAGE(At, KLD, BC, DK, 1u, zb * p.tv, j0, p.tv);
        STAGE(Bt, VLD, BC, DV, 2u, zb * p.tv, j0, p.tv);
        for (uint jj = gl_LocalInvocationIndex; jj < BC; jj += WG)
            vm_s[jj] = HAS_VALUE_MASK && j0 + jj < p.tv ? vmask_in[b * p.tv + j0 + jj] : 0.0;
        barrier();
        SCORES(Ss, Ao, At, KLD, KF) // S = Q K^T
        SCORES(Pd, Bo, Bt, VLD, VF) // dP = dO V^T
        warp_sync();
        [[unroll]] for (uint t = 0u; t < BC / 8u; t++) {
            const uint gi = lane + 32u * t, r = gi / (BC / 4u), quad = gi % (BC / 4u);
            const uint at = sq + r * SLD + quad * 4u;
            const vec4 s = vec4(Ss[at], Ss[at + 1u], Ss[at + 2u], Ss[at + 3u]);
            const vec4 dp = vec4(Pd[at], Pd[at + 1u], Pd[at + 2u], Pd[at + 3u]);
            vec4 pk, ds;
            const uint rr = warp * 16u + r;
            grads4(b, hkv, r0 + rr, j0 + quad * 4u, quad * 4u, st_s[rr], s, dp, pk, ds);
            [[unroll]] for (uint c = 0u; c < 4u; c++)
                Pd[at + c] = ds[c];
        }
        warp_sync();
        PACK(Ds, Pd)
        warp_sync();
        ACCUMULATE(acc_k, DKP, Ds, At, KLD, KF) // dQ += dS K
    }
    barrier();
    for (uint e = lane; e < 16u * DKP; e += 32u) {
        const uint r = r0 + warp * 16u + e / DKP, c = e % DKP;
        if (r < rows_total && c < DK)
            out0[(row_base + r) * DK + c] = acc_k[warp * 16u * DKP + e] * p.scale;
    }
}

void main()
{
    warp = WARP;
    lane = LANE;
    const uint zb = gl_WorkGroupID.z + p.z_base; // b * Hkv + K/V head
    const uint kv_heads = p.heads / p.group;
    if (KV)
        main_kv(zb, zb / kv_heads, zb % kv_heads);
    else
        main_q(zb, zb / kv_heads, zb % kv_heads);
}
