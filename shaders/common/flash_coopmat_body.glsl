// The fused attention forward on 16x16 matrix fragments (FlashAttention-2's
// shape on cooperative matrices), shared by shaders/flash_coopmat_nv.comp
// (COOPMAT_NV1: tensor cores), flash_coopmat_khr.comp (COOPMAT_KHR) and
// flash_coopmat_emu.comp (COOPMAT_EMU: the fragments emulated, so CI runs
// this file on lavapipe); coopmat_frag.glsl has the fragment names. f16 Q,
// K and V; f32, f16 or bf16 out. flash_coopmat2_nv.comp (COOPMAT_NV2) runs the two
// products on workgroup-scope matrices instead (flash_coopmat2_steps.glsl),
// everything else as written here.
//
// Computes what flash_tiled_body.glsl computes (the same rows, masks, bias,
// Philox keep bits, masked-row policies, LSE and NaN rules, from
// flash_mask.glsl), but the two products run on fragments:
//
// A workgroup of NW warps owns BR = 16 NW consecutive rows of one (batch,
// K/V head), rows flattened as in flash_body.glsl, and stages them once as
// f16 in shared memory (zero past the rows and past DK). Per tile of BC keys
// (K and V staged as f16, zero past Tv and past the widths), each warp:
// 1. S = Q K^T for its 16 rows: BC/16 accumulators over DK/16 steps, each
//    stored to the warp's f32 square of shared memory (the fragment layout is
//    opaque, so the softmax reads S from there);
// 2. the online softmax in plain code: two invocations per row, 8 keys of
//    each 16 per invocation: logits scaled to log2 units and masked
//    (flash_mask_logits), the row max shared between the pair through shared
//    memory, weights exp2(x - max) summed in fp32 before dropout, then
//    multiplied by the keep bits and rounded to f16 into the warp's P tile
//    (as FlashAttention does; docs/SEMANTICS.md bounds it); the running sum
//    and the output are rescaled by exp2(old max - new max);
// 3. O += P V: per 16 columns of V one accumulator over BC/16 steps, stored
//    to the same square and added into the output the invocations hold in
//    plain registers (row LANE / 2, columns 8 (LANE % 2) .. + 7 of each 16):
//    they must be rescaled per row, which opaque fragments cannot be.
// Every invocation runs every loop and warp_sync whatever its row (rows past
// the end compute on zeros and store nothing): the emulation's warp_sync is a
// workgroup barrier. Key tiles wholly above a causal diagonal or before a
// window are never loaded.
//
// Register budget (src/ops/register_budget.h, vka_flash_coopmat_live_values):
// the output slice (DV/2 rounded up to 8 per 16 columns: 64 at DV 128), the
// lane's logits of a tile (BC/2), one accumulator fragment (8) and two operand
// fragments (4 + 4), the running max and sum (2), and the scalars: at most
// 64 + 16 + 16 + 2 + 12 = 110 at DV 128 with 32-key tiles. DK costs no
// registers (Q stays in shared memory), so DK may reach 256; DV is at most
// 128.

#extension GL_EXT_control_flow_attributes : require
#include "coopmat_ext.glsl"

#include "flash_coopmat_iface.h"
#include "elem_type.glsl"

layout(local_size_x_id = VKA_FLASH_COOPMAT_SPEC_WG, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = VKA_FLASH_COOPMAT_SPEC_BC) const uint BC = 32;
layout(constant_id = VKA_FLASH_COOPMAT_SPEC_DK) const uint DK = 64;
layout(constant_id = VKA_FLASH_COOPMAT_SPEC_DV) const uint DV = 64;
#include "flash_spec.glsl" // the masks and outputs, flash_iface.h's numbers
// Rows of Q, K and V are whole, 16-byte aligned uvec4s (DK and DV multiples
// of 8, bindings aligned: src/ops/flash_coopmat.c); else halves one by one.
layout(constant_id = VKA_FLASH_COOPMAT_SPEC_VEC8) const bool VEC8 = false;
// A 16-bit out has an even DV (the host sends odd ones through f32 scratch):
// an invocation's columns come in whole words no other invocation writes.
layout(constant_id = VKA_FLASH_COOPMAT_SPEC_OUT_TYPE) const uint OUT_TYPE = VKA_ELEM_F32;

const uint WG = gl_WorkGroupSize.x;
const uint NW = WG / 32u; // warps
const uint BR = 16u * NW; // rows per workgroup
const uint DKP = (DK + 15u) / 16u * 16u, DVP = (DV + 15u) / 16u * 16u; // padded to fragments
const uint KF = DKP / 16u, VF = DVP / 16u, CF = BC / 16u; // fragments along DK, DV, keys
// Shared tiles in uvec4s (eight halves), rows padded by one uvec4 (16 bytes:
// the fragment loads' alignment, and rows off each other's banks).
const uint QLD = DKP / 8u + 1u, KLD = QLD, VLD = DVP / 8u + 1u, PLD = BC / 8u + 1u;
const uint SLD = BC + 4u; // floats per row of a warp's S square

layout(std430, binding = 0) readonly buffer QBufW { uint q_w[]; };
layout(std430, binding = 1) readonly buffer KBufW { uint k_w[]; };
layout(std430, binding = 2) readonly buffer VBufW { uint v_w[]; };
layout(std430, binding = 0) readonly buffer QBufW4 { uvec4 q_w4[]; };
layout(std430, binding = 1) readonly buffer KBufW4 { uvec4 k_w4[]; };
layout(std430, binding = 2) readonly buffer VBufW4 { uvec4 v_w4[]; };
layout(std430, binding = 3) readonly buffer BiasBuf { float bias_in[]; };
layout(std430, binding = 4) readonly buffer VMaskBuf { float vmask_in[]; };
layout(std430, binding = 5) readonly buffer MaskBuf { float mask_in[]; };
layout(std430, binding = 6) writeonly buffer OutBuf { float out_o[]; };
layout(std430, binding = 6) writeonly buffer OutBufW { uint out_w[]; };
layout(std430, binding = 7) writeonly buffer LseBuf { uint lse_u[]; };

layout(push_constant) uniform Push { VKA_FLASH_PUSH } p;

#include "flash_mask.glsl" // after p, the spec constants and the buffers it reads

const float LN2 = 0.6931471805599453;
const uint NEG_INF_BITS = 0xFF800000u;

shared uvec4 Qs[BR * QLD];
#if COOPMAT_FAMILY == COOPMAT_NV2
// K and V reach the products through tensor layouts where their rows are
// whole uvec4s (flash_coopmat2_steps.glsl); staged only otherwise.
const bool STAGE_KV = !VEC8;
shared uvec4 Ks[STAGE_KV ? BC * KLD : 1u];
shared uvec4 Vs[STAGE_KV ? BC * VLD : 1u];
uint tile_kv_head, tile_j0; // the tile load_tile last set up
#else
shared uvec4 Ks[BC * KLD];
shared uvec4 Vs[BC * VLD];
#endif
shared uvec4 Ps[NW * 16u * PLD]; // each warp's f16 weights, 16 rows x BC keys
shared float Ss[NW * 16u * SLD]; // each warp's f32 square: S, then P V
shared float vmask_s[BC];
shared float pair_s[WG]; // a row's two invocations exchange a value
shared uint need_uniform;

const uint Qs_ID = 0u, Ks_ID = 1u, Vs_ID = 2u, Ps_ID = 3u;
uvec4 frag_src(uint id, uint i)
{
    if (id == Qs_ID)
        return Qs[i];
    if (id == Ks_ID)
        return Ks[i];
    if (id == Vs_ID)
        return Vs[i];
    return Ps[i];
}

#define FRAG_FAULT_ID VKA_FLASH_COOPMAT_SPEC_FAULT
#include "coopmat_frag.glsl"

uint warp, lane, half_; // this invocation: warp, lane, which 8 of each 16 keys or columns
float o[VF * 8u];       // row lane / 2 of the warp, columns n * 16 + 8 half_ + c
float m_run, l_run;     // the row's running max (log2 units), this lane's share of the sum
uint row_h, row_i, row_end;
bool row_ok;

// Eight halves from element `first` of Q, K or V (0: q, 1: k, 2: v), the
// first `n` of them real (the rest 0), as a uvec4.
uvec4 load8(uint which, uint first, uint n)
{
    if (VEC8 && n == 8u)
        return which == 0u ? q_w4[first / 8u] : which == 1u ? k_w4[first / 8u] : v_w4[first / 8u];
    uint w[4] = uint[4](0u, 0u, 0u, 0u);
    [[unroll]] for (uint c = 0u; c < 8u; c++) {
        const uint i = first + c;
        if (c < n) {
            const uint word = which == 0u ? q_w[i / 2u] : which == 1u ? k_w[i / 2u] : v_w[i / 2u];
            const uint bits = (i & 1u) != 0u ? word >> 16u : word & 0xffffu;
            w[c / 2u] |= bits << (16u * (c & 1u));
        }
    }
    return uvec4(w[0], w[1], w[2], w[3]);
}

// The workgroup's query rows into Qs: row r of the block is flattened row
// r0 + r of K/V head zb (zeros past rows_total).
void stage_q(uint zb, uint b, uint r0, uint rows_total)
{
    const uint kv_heads = p.heads / p.group, groups = DKP / 8u;
    [[unroll]] for (uint it = 0u; it < (BR * groups + WG - 1u) / WG; it++) {
        const uint slot = it * WG + gl_LocalInvocationIndex;
        const uint r = slot / groups, g = slot % groups, fr = r0 + r;
        uvec4 x = uvec4(0u);
        if (fr < rows_total && g * 8u < DK) {
            const uint h = (zb % kv_heads) * p.group + fr / p.tq;
            const uint row = (b * p.heads + h) * p.tq + fr % p.tq;
            x = load8(0u, row * DK + g * 8u, min(DK - g * 8u, 8u));
        }
        if (slot < BR * groups)
            Qs[r * QLD + g] = x;
    }
}

// Keys [j0, j0 + BC) of K/V head kv_head (K only if with_k) and batch b's
// value mask into shared memory; rows past Tv are zeros.
void load_tile(uint b, uint kv_head, uint j0, bool with_k)
{
    const uint t0 = gl_LocalInvocationIndex, rows = min(BC, p.tv - j0);
    const uint kg = DKP / 8u, vg = DVP / 8u;
#if COOPMAT_FAMILY == COOPMAT_NV2
    tile_kv_head = kv_head;
    tile_j0 = j0;
    if (STAGE_KV) {
#endif
    if (with_k)
        [[unroll]] for (uint it = 0u; it < (BC * kg + WG - 1u) / WG; it++) {
            const uint slot = it * WG + t0, jj = slot / kg, g = slot % kg;
            uvec4 x = uvec4(0u);
            if (jj < rows && g * 8u < DK)
                x = load8(1u, (kv_head * p.tv + j0 + jj) * DK + g * 8u, min(DK - g * 8u, 8u));
            if (slot < BC * kg)
                Ks[jj * KLD + g] = x;
        }
    [[unroll]] for (uint it = 0u; it < (BC * vg + WG - 1u) / WG; it++) {
        const uint slot = it * WG + t0, jj = slot / vg, g = slot % vg;
        uvec4 x = uvec4(0u);
        if (jj < rows && g * 8u < DV)
            x = load8(2u, (kv_head * p.tv + j0 + jj) * DV + g * 8u, min(DV - g * 8u, 8u));
        if (slot < BC * vg)
            Vs[jj * VLD + g] = x;
    }
#if COOPMAT_FAMILY == COOPMAT_NV2
    }
#endif
    if (HAS_VALUE_MASK)
        [[unroll]] for (uint it = 0u; it < (BC + WG - 1u) / WG; it++) {
            const uint jj = it * WG + t0;
            if (jj < BC)
                vmask_s[jj] = jj < rows ? vmask_in[b * p.tv + j0 + jj] : 0.0;
        }
}

// The partner invocation's x (the other half of the row). Called by every
// invocation; the two warp_syncs keep pair_s free for the next exchange.
float partner(float x)
{
    pair_s[warp * 32u + lane] = x; // warp-relative: a subgroup's invocations need
    warp_sync();                   // not be consecutive local indices
    const float y = pair_s[warp * 32u + (lane ^ 1u)];
    warp_sync();
    return y;
}

#if COOPMAT_FAMILY == COOPMAT_NV2
#include "flash_coopmat2_steps.glsl" // tile_scores and accumulate_pv
#else
// Step 1: the warp's S = Q K^T into its square of Ss (raw dot products).
void tile_scores()
{
    FRAG_LOOP for (uint n = 0u; n < CF; n++) {
        frag_acc acc = frag_acc_zero();
        FRAG_LOOP for (uint k = 0u; k < KF; k++) {
            frag_a a;
            frag_b bk;
            frag_load(a, Qs, warp * 16u * QLD + k * 2u, QLD, false);
            // B(d, key) = K[key][d]: K's rows read column-major
            frag_load(bk, Ks, n * 16u * KLD + k * 2u, KLD, true);
            acc = frag_mad(a, bk, acc);
        }
        frag_store(acc, Ss, warp * 16u * SLD + n * 16u, SLD);
    }
}
#endif

// The value mask's verdict on keys jj..jj+3 of the tile (all true without one).
bvec4 tile_value_mask4(uint jj)
{
    return HAS_VALUE_MASK ? flash_value_mask4(vmask_s[jj], vmask_s[jj + 1u], vmask_s[jj + 2u],
                                              vmask_s[jj + 3u])
                          : bvec4(true);
}

// The f16 weights of keys jj..jj+7 of this lane's row into the warp's P tile.
void store_p8(uint jj, vec4 w0, vec4 w1)
{
    Ps[(warp * 16u + lane / 2u) * PLD + jj / 8u] =
        uvec4(packHalf2x16(w0.xy), packHalf2x16(w0.zw), packHalf2x16(w1.xy), packHalf2x16(w1.zw));
}

// Step 2: the online softmax of the tile for this lane's half of its row.
void tile_softmax(uint b, uint j0)
{
    const uint srow = warp * 16u * SLD + (lane / 2u) * SLD;
    vec4 x[CF * 2u];
    float mt = m_run;
    [[unroll]] for (uint g = 0u; g < CF * 2u; g++) {
        const uint jj = (g / 2u) * 16u + half_ * 8u + (g % 2u) * 4u;
        const vec4 s = vec4(Ss[srow + jj], Ss[srow + jj + 1u], Ss[srow + jj + 2u],
                            Ss[srow + jj + 3u]) * p.scale_log2;
        x[g] = flash_mask_logits(b, row_h, row_i, j0 + jj, row_end, tile_value_mask4(jj), s);
        mt = max(mt, max(max(x[g].x, x[g].y), max(x[g].z, x[g].w)));
    }
    mt = max(mt, partner(mt));
    const float alpha = exp2(m_run - mt);
    m_run = mt;
    l_run *= alpha;
    [[unroll]] for (uint i = 0u; i < VF * 8u; i++)
        o[i] *= alpha;
    [[unroll]] for (uint g = 0u; g < CF * 2u; g += 2u) {
        const uint jj = (g / 2u) * 16u + half_ * 8u;
        vec4 w[2];
        [[unroll]] for (uint q = 0u; q < 2u; q++) {
            const bvec4 masked = is_masked(x[g + q]); // selected, never computed (flash_body.glsl)
            const vec4 arg = mix(x[g + q], vec4(m_run), masked) - m_run;
            w[q] = mix(exp2(arg), vec4(0.0), masked);
            l_run += (w[q].x + w[q].y) + (w[q].z + w[q].w);
            if (DROPOUT)
                w[q] *= flash_keep4(b * p.heads + row_h, row_i, j0 + jj + q * 4u);
        }
        store_p8(jj, w[0], w[1]);
    }
}

#if COOPMAT_FAMILY != COOPMAT_NV2
// Step 3: o += P V for the warp's rows, through the warp's square.
void accumulate_pv()
{
    const uint sq = warp * 16u * SLD, mine = sq + (lane / 2u) * SLD + half_ * 8u;
    FRAG_LOOP for (uint n = 0u; n < VF; n++) {
        frag_acc acc = frag_acc_zero();
        FRAG_LOOP for (uint g = 0u; g < CF; g++) {
            frag_a a;
            frag_b bv;
            frag_load(a, Ps, warp * 16u * PLD + g * 2u, PLD, false);
            frag_load(bv, Vs, g * 16u * VLD + n * 2u, VLD, false);
            acc = frag_mad(a, bv, acc);
        }
        frag_store(acc, Ss, sq, SLD);
        warp_sync();
        [[unroll]] for (uint c = 0u; c < 8u; c++)
            o[n * 8u + c] += Ss[mine + c];
        warp_sync(); // the square is written again by the next n
    }
}
#endif

// Rows with no allowed key under the uniform policy: the mean of all V rows
// (then dropout), a second sweep paid only by workgroups holding such a row.
// `l` is the row's whole sum.
void uniform_rows(uint b, uint zb, float l)
{
    const bool mine = row_ok && l == 0.0;
    barrier();
    if (mine)
        atomicOr(need_uniform, 1u);
    barrier();
    if (need_uniform == 0u)
        return;
    [[unroll]] for (uint i = 0u; i < VF * 8u; i++)
        o[i] = mine ? 0.0 : o[i];
    for (uint j0 = 0u; j0 < p.tv; j0 += BC) {
        barrier();
        load_tile(b, zb, j0, false);
        barrier();
        [[unroll]] for (uint g = 0u; g < CF; g++) {
            const uint jj = g * 16u + half_ * 8u; // V rows past Tv are zeros
            vec4 w0 = vec4(mine ? 1.0 : 0.0), w1 = w0;
            if (DROPOUT) {
                w0 *= flash_keep4(b * p.heads + row_h, row_i, j0 + jj);
                w1 *= flash_keep4(b * p.heads + row_h, row_i, j0 + jj + 4u);
            }
            store_p8(jj, w0, w1);
        }
        warp_sync();
        accumulate_pv();
    }
}

// Normalizes and stores this lane's columns of the row (half 0: the LSE).
void store_row(uint b, float l)
{
    const uint row = (b * p.heads + row_h) * p.tq + row_i;
    const float inv =
        l == 0.0 ? (UNIFORM_ROWS ? p.drop_scale / float(p.tv) : 0.0) : p.drop_scale / l;
    const bool zero = l == 0.0 && !UNIFORM_ROWS;
    [[unroll]] for (uint n = 0u; n < VF; n++)
        [[unroll]] for (uint c = 0u; c < 8u; c += 2u) {
            const uint col = n * 16u + half_ * 8u + c;
            const float lo = zero ? 0.0 : o[n * 8u + c] * inv;
            const float hi = zero ? 0.0 : o[n * 8u + c + 1u] * inv;
            if (VKA_IS_16(OUT_TYPE) && col < DV) // DV even: the pair is whole
                out_w[(row * DV + col) / 2u] = VKA_PACK2(OUT_TYPE, vec2(lo, hi));
            else if (!VKA_IS_16(OUT_TYPE)) {
                if (col < DV)
                    out_o[row * DV + col] = lo;
                if (col + 1u < DV)
                    out_o[row * DV + col + 1u] = hi;
            }
        }
    if (WRITE_LSE && half_ == 0u)
        lse_u[row] = l == 0.0 ? NEG_INF_BITS : floatBitsToUint((m_run + log2(l)) * LN2);
}

void init_row(uint zb, uint r, uint rows_total)
{
    const uint kv_heads = p.heads / p.group;
    row_ok = r < rows_total;
    row_h = (zb % kv_heads) * p.group + (row_ok ? r / p.tq : 0u);
    row_i = row_ok ? r % p.tq : 0u;
    row_end = flash_row_end(row_i);
    [[unroll]] for (uint i = 0u; i < VF * 8u; i++)
        o[i] = 0.0;
    m_run = MASKED;
    l_run = 0.0;
}

void main()
{
    warp = WARP;
    lane = LANE;
    half_ = lane % 2u;
    const uint zb = gl_WorkGroupID.z + p.z_base; // b * Hkv + K/V head
    const uint b = zb / (p.heads / p.group);
    const uint rows_total = p.group * p.tq;
    const uint r0 = (gl_WorkGroupID.x + p.x_base) * BR;
    const uint r1 = min(r0 + BR, rows_total) - 1u;

    if (gl_LocalInvocationIndex == 0u)
        need_uniform = 0u;
    init_row(zb, r0 + warp * 16u + lane / 2u, rows_total);
    stage_q(zb, b, r0, rows_total);
    const uint kend = flash_key_end(r0, r1);
    for (uint j0 = flash_tile_begin(r0, r1, BC); j0 < kend; j0 += BC) {
        barrier(); // every warp is done with the previous tile (and Qs is staged)
        load_tile(b, zb, j0, true);
        barrier();
        tile_scores();
        warp_sync();
        tile_softmax(b, j0);
        warp_sync();
        accumulate_pv();
    }
    const float l = l_run + partner(l_run);
    if (UNIFORM_ROWS)
        uniform_rows(b, zb, l);
    if (row_ok)
        store_row(b, l);
}
