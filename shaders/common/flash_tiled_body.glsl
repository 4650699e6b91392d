// The body of the GPU-shaped fused attention kernel, shared by
// shaders/flash_tiled.comp (FLASH_SUBGROUP 0: lane sums through shared
// memory, any device) and shaders/flash_tiled_sg.comp (FLASH_SUBGROUP 1:
// subgroup shuffles). Each defines FLASH_SUBGROUP and includes this file.
//
// Computes exactly what shaders/common/flash_body.glsl computes (the same
// masks, bias and Philox dropout element mapping, from flash_mask.glsl; the
// same grouped K/V heads, masked-row policies, LSE and NaN rules; see the
// comments there), shaped for GPUs:
//
// A workgroup owns BR = WG / L consecutive rows of one (batch, K/V head) --
// rows are (query head of the group, query index) pairs flattened as in
// flash_body.glsl -- and streams BC-key tiles of K and V through shared
// memory. Each row belongs to L consecutive lanes (invocations) that split
// the head widths: lane c holds the vec4s c, c + L, c + 2L, ... of its scaled
// query and of its output accumulator, so a lane keeps at most 4 + 4 vec4s
// (L is chosen from the widths on the host) and neighbouring lanes read
// neighbouring shared-memory vec4s. A logit is the sum of the L lanes'
// partial dot products: a butterfly of subgroup shuffles (FLASH_SUBGROUP 1;
// the host guarantees L <= the smallest subgroup size) or, for four keys at a
// time, a sum through shared memory. Either way every lane of a row ends with
// the same bits (each step adds the same two values), so the L lanes keep
// identical copies of the row's running max and sum (fp32) and weights.
//
// Every loop but the one over key tiles (and the masked-row sweep) is
// unrolled, so the tile's logits stay in registers. Every invocation runs the
// same tile loop whatever its row (rows past the end compute on row 0's
// indices and store nothing), so barriers and shuffles stay in uniform
// control flow. Key tiles wholly above a causal diagonal are never loaded.
// Unpacked layout only (8 storage buffers): devices with fewer use the packed
// row-per-invocation kernel.
//
// Register budget (src/ops/register_budget.h): 4 * NQ + 4 * NO (q, o) + BC
// (s4) + 8 (a quad's partial logits and weights) + 2 (m_run, l_run) + 12
// scalars: at most 86 live values at any width up to 256 (NQ, NO <= 4, BC <=
// 32); under the mobile profiles' 64 the host trades keys per tile for lanes
// per row (src/ops/gpu_tiles.c).

#extension GL_EXT_control_flow_attributes : require
#if FLASH_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#endif

#include "flash_tiled_iface.h"
#include "elem_type.glsl"

layout(local_size_x_id = VKA_FLASH_TILED_SPEC_WG, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = VKA_FLASH_TILED_SPEC_BC) const uint BC = 16;
layout(constant_id = VKA_FLASH_TILED_SPEC_DK) const uint DK = 64;
layout(constant_id = VKA_FLASH_TILED_SPEC_DV) const uint DV = 64;
#include "flash_spec.glsl" // the masks and outputs, flash_iface.h's numbers
layout(constant_id = VKA_FLASH_TILED_SPEC_LANES) const uint L = 4;
// f16 or bf16 Q, K, V and out are words of two 16-bit elements (elem_type.glsl's
// packed readers and writers: any device, half the bytes of f32), vec4s read as
// uvec2; sums, statistics and the shared tiles stay f32. A 16-bit out has an even DV
// (the host sends odd ones through an f32 scratch), so a lane's halves are
// whole words no other lane writes.
layout(constant_id = VKA_FLASH_TILED_SPEC_Q_TYPE) const uint Q_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_FLASH_TILED_SPEC_K_TYPE) const uint K_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_FLASH_TILED_SPEC_V_TYPE) const uint V_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_FLASH_TILED_SPEC_OUT_TYPE) const uint OUT_TYPE = VKA_ELEM_F32;

// Widths in vec4s (padding lanes of q, K and V hold zeros); per-lane vec4s.
const uint DK4 = (DK + 3u) / 4u;
const uint DV4 = (DV + 3u) / 4u;
const uint BC4 = BC / 4u;
const uint WG = gl_WorkGroupSize.x;
const uint BR = WG / L;
const uint NQ = (DK4 + L - 1u) / L;
const uint NO = (DV4 + L - 1u) / L;
const bool DK_VEC4 = DK % 4u == 0u;
const bool DV_VEC4 = DV % 4u == 0u;

layout(std430, binding = 0) readonly buffer QBuf { float q_in[]; };
layout(std430, binding = 1) readonly buffer KBuf { float k_in[]; };
layout(std430, binding = 2) readonly buffer VBuf { float v_in[]; };
layout(std430, binding = 0) readonly buffer QBuf4 { vec4 q4_in[]; };
layout(std430, binding = 1) readonly buffer KBuf4 { vec4 k4_in[]; };
layout(std430, binding = 2) readonly buffer VBuf4 { vec4 v4_in[]; };
layout(std430, binding = 3) readonly buffer BiasBuf { float bias_in[]; };
layout(std430, binding = 4) readonly buffer VMaskBuf { float vmask_in[]; };
layout(std430, binding = 5) readonly buffer MaskBuf { float mask_in[]; };
layout(std430, binding = 6) writeonly buffer OutBuf { float out_o[]; };
layout(std430, binding = 6) writeonly buffer OutBuf4 { vec4 out4_o[]; };
layout(std430, binding = 0) readonly buffer QBufW { uint q_w[]; };
layout(std430, binding = 1) readonly buffer KBufW { uint k_w[]; };
layout(std430, binding = 2) readonly buffer VBufW { uint v_w[]; };
layout(std430, binding = 0) readonly buffer QBufW2 { uvec2 q4_w[]; };
layout(std430, binding = 1) readonly buffer KBufW2 { uvec2 k4_w[]; };
layout(std430, binding = 2) readonly buffer VBufW2 { uvec2 v4_w[]; };
layout(std430, binding = 6) writeonly buffer OutBufW { uint out_w[]; };
layout(std430, binding = 6) writeonly buffer OutBufW2 { uvec2 out4_w[]; };
layout(std430, binding = 7) writeonly buffer LseBuf { uint lse_u[]; };

layout(push_constant) uniform Push { VKA_FLASH_PUSH } p;

#include "flash_mask.glsl" // after p, the spec constants and the buffers it reads

const float LN2 = 0.6931471805599453;
const uint NEG_INF_BITS = 0xFF800000u;

shared vec4 ks[BC * DK4];
shared vec4 vs[BC * DV4];
shared float vmask_s[BC];
shared uint need_uniform;
#if !FLASH_SUBGROUP
shared vec4 red4[WG]; // the lanes' partial logits of four keys
#endif

uint tid;  // this invocation's place: row tid / L of the workgroup, lane tid % L
uint lane;
vec4 q[NQ];  // vec4s lane + t * L of the query row, times scale * log2(e)
vec4 o[NO];  // vec4s lane + t * L of the output accumulator
vec4 s4[BC4]; // the tile's logits, then weights
float m_run, l_run;
uint row_h, row_i, row_end;
bool row_ok;

// vec4 i4 (element i) of Q, K or V in its element type
vec4 ld_q4(uint i4) { return VKA_LDW4(Q_TYPE, q4_in, q4_w, i4); }
vec4 ld_k4(uint i4) { return VKA_LDW4(K_TYPE, k4_in, k4_w, i4); }
vec4 ld_v4(uint i4) { return VKA_LDW4(V_TYPE, v4_in, v4_w, i4); }
float ld_q(uint i) { return VKA_LDW(Q_TYPE, q_in, q_w, i); }
float ld_k(uint i) { return VKA_LDW(K_TYPE, k_in, k_w, i); }
float ld_v(uint i) { return VKA_LDW(V_TYPE, v_in, v_w, i); }

// The same copy as flash_body.glsl's load_tile: keys [j0, j0 + BC) of K/V
// head kv_head and batch b's value mask; rows past Tv become zeros.
void load_tile(uint b, uint kv_head, uint j0, bool with_k)
{
    const uint t0 = gl_LocalInvocationIndex;
    const uint rows = min(BC, p.tv - j0);
    if (with_k)
        [[unroll]] for (uint it = 0u; it < (BC * DK4 + WG - 1u) / WG; it++) {
            uint slot = it * WG + t0, jj = slot / DK4, e = (slot % DK4) * 4u;
            uint base = (kv_head * p.tv + j0 + jj) * DK + e;
            vec4 x = vec4(0.0);
            if (DK_VEC4 && jj < rows)
                x = ld_k4(base / 4u);
            else if (!DK_VEC4)
                [[unroll]] for (uint c = 0u; c < 4u; c++)
                    if (jj < rows && e + c < DK)
                        x[c] = ld_k(base + c);
            if (slot < BC * DK4)
                ks[slot] = x;
        }
    [[unroll]] for (uint it = 0u; it < (BC * DV4 + WG - 1u) / WG; it++) {
        uint slot = it * WG + t0, jj = slot / DV4, e = (slot % DV4) * 4u;
        uint base = (kv_head * p.tv + j0 + jj) * DV + e;
        vec4 x = vec4(0.0);
        if (DV_VEC4 && jj < rows)
            x = ld_v4(base / 4u);
        else if (!DV_VEC4)
            [[unroll]] for (uint c = 0u; c < 4u; c++)
                if (jj < rows && e + c < DV)
                    x[c] = ld_v(base + c);
        if (slot < BC * DV4)
            vs[slot] = x;
    }
    if (HAS_VALUE_MASK)
        [[unroll]] for (uint it = 0u; it < (BC + WG - 1u) / WG; it++) {
            uint jj = it * WG + t0;
            if (jj < BC)
                vmask_s[jj] = jj < rows ? vmask_in[b * p.tv + j0 + jj] : 0.0;
        }
}

// The row's full logits of four keys from the lanes' partial sums. Called by
// every invocation (uniform control flow).
vec4 reduce_lanes(vec4 x)
{
#if FLASH_SUBGROUP
    [[unroll]] for (uint s = 1u; s < L; s <<= 1u)
        x += subgroupShuffleXor(x, s);
    return x;
#else
    barrier(); // the previous sum's reads are done
    red4[tid] = x;
    barrier();
    vec4 sum = red4[tid - lane];
    [[unroll]] for (uint c = 1u; c < L; c++)
        sum += red4[tid - lane + c];
    return sum;
#endif
}

// The value mask's verdict on keys jj..jj+3 of the tile (all true without one).
bvec4 tile_value_mask4(uint jj)
{
    return HAS_VALUE_MASK ? flash_value_mask4(vmask_s[jj], vmask_s[jj + 1u], vmask_s[jj + 2u],
                                              vmask_s[jj + 3u])
                          : bvec4(true);
}

// s4 = masked logits of the tile's keys for this row.
void tile_logits(uint b, uint j0)
{
    [[unroll]] for (uint jj = 0u; jj < BC; jj += 4u) {
        vec4 x = vec4(0.0);
        [[unroll]] for (uint t = 0u; t < NQ; t++) {
            const uint e4 = lane + t * L;
            if (e4 < DK4)
                x += vec4(dot(q[t], ks[jj * DK4 + e4]), dot(q[t], ks[(jj + 1u) * DK4 + e4]),
                          dot(q[t], ks[(jj + 2u) * DK4 + e4]), dot(q[t], ks[(jj + 3u) * DK4 + e4]));
        }
        s4[jj / 4u] = flash_mask_logits(b, row_h, row_i, j0 + jj, row_end, tile_value_mask4(jj),
                                        reduce_lanes(x));
    }
}

// o += sum over c of pw[c] * V row jj + c of the tile, this lane's vec4s.
void accumulate_v(uint jj, vec4 pw)
{
    [[unroll]] for (uint t = 0u; t < NO; t++) {
        const uint e4 = lane + t * L;
        if (e4 < DV4) {
            vec4 acc = fma(vec4(pw.x), vs[jj * DV4 + e4], o[t]);
            acc = fma(vec4(pw.y), vs[(jj + 1u) * DV4 + e4], acc);
            acc = fma(vec4(pw.z), vs[(jj + 2u) * DV4 + e4], acc);
            o[t] = fma(vec4(pw.w), vs[(jj + 3u) * DV4 + e4], acc);
        }
    }
}

// flash_body.glsl's tile_update for this row.
void tile_update(uint b, uint j0)
{
    float mt = m_run;
    [[unroll]] for (uint j4 = 0u; j4 < BC4; j4++)
        mt = max(mt, max(max(s4[j4].x, s4[j4].y), max(s4[j4].z, s4[j4].w)));
    const float alpha = exp2(m_run - mt);
    m_run = mt;
    l_run *= alpha;
    [[unroll]] for (uint t = 0u; t < NO; t++)
        o[t] *= alpha;
    [[unroll]] for (uint jj = 0u; jj < BC; jj += 4u) {
        const vec4 x = s4[jj / 4u];
        const bvec4 masked = is_masked(x); // selected, never computed (flash_body.glsl)
        const vec4 arg = mix(x, vec4(m_run), masked) - m_run;
        vec4 pw = mix(exp2(arg), vec4(0.0), masked);
        l_run += (pw.x + pw.y) + (pw.z + pw.w);
        if (DROPOUT)
            pw *= flash_keep4(b * p.heads + row_h, row_i, j0 + jj);
        accumulate_v(jj, pw);
    }
}

// Rows with no allowed key under the uniform policy: the mean of all V rows
// (then dropout), a second sweep paid only by workgroups holding such a row.
void uniform_rows(uint b, uint zb)
{
    const bool mine = row_ok && l_run == 0.0;
    barrier();
    if (mine)
        atomicOr(need_uniform, 1u);
    barrier();
    if (need_uniform == 0u)
        return;
    [[unroll]] for (uint t = 0u; t < NO; t++)
        o[t] = mine ? vec4(0.0) : o[t];
    for (uint j0 = 0u; j0 < p.tv; j0 += BC) {
        barrier();
        load_tile(b, zb, j0, false);
        barrier();
        if (!mine)
            continue;
        [[unroll]] for (uint jj = 0u; jj < BC; jj += 4u) {
            vec4 pw = vec4(1.0); // V rows past Tv are zeros
            if (DROPOUT)
                pw *= flash_keep4(b * p.heads + row_h, row_i, j0 + jj);
            accumulate_v(jj, pw);
        }
    }
}

// Normalizes and stores this lane's part of the row (lane 0: the LSE).
void store_row(uint b)
{
    const float l = l_run;
    const uint row = (b * p.heads + row_h) * p.tq + row_i;
    float inv = l == 0.0 ? (UNIFORM_ROWS ? p.drop_scale / float(p.tv) : 0.0) : p.drop_scale / l;
    [[unroll]] for (uint t = 0u; t < NO; t++) {
        const uint e4 = lane + t * L;
        if (e4 >= DV4)
            continue;
        vec4 x = (l == 0.0 && !UNIFORM_ROWS) ? vec4(0.0) : o[t] * inv;
        if (VKA_IS_16(OUT_TYPE) && DV_VEC4)
            out4_w[row * DV4 + e4] = VKA_PACK4(OUT_TYPE, x);
        else if (VKA_IS_16(OUT_TYPE)) // DV even: pairs (2c, 2c + 1) are whole words
            [[unroll]] for (uint c = 0u; c < 4u; c += 2u) {
                if (e4 * 4u + c < DV)
                    out_w[(row * DV + e4 * 4u + c) >> 1u] = VKA_PACK2(OUT_TYPE, vec2(x[c], x[c + 1u]));
            }
        else if (DV_VEC4)
            out4_o[row * DV4 + e4] = x;
        else
            [[unroll]] for (uint c = 0u; c < 4u; c++)
                if (e4 * 4u + c < DV)
                    out_o[row * DV + e4 * 4u + c] = x[c];
    }
    if (WRITE_LSE && lane == 0u)
        lse_u[row] = l == 0.0 ? NEG_INF_BITS : floatBitsToUint((m_run + log2(l)) * LN2);
}

void init_row(uint zb, uint b, uint r, uint rows_total)
{
    const uint kv_heads = p.heads / p.group;
    row_ok = r < rows_total;
    row_h = (zb % kv_heads) * p.group + (row_ok ? r / p.tq : 0u);
    row_i = row_ok ? r % p.tq : 0u;
    row_end = flash_row_end(row_i);
    const uint row = (b * p.heads + row_h) * p.tq + row_i;
    [[unroll]] for (uint t = 0u; t < NQ; t++) {
        const uint e4 = lane + t * L;
        vec4 x = vec4(0.0);
        if (DK_VEC4 && e4 < DK4)
            x = ld_q4(row * DK4 + e4);
        else if (!DK_VEC4)
            [[unroll]] for (uint c = 0u; c < 4u; c++)
                if (e4 * 4u + c < DK)
                    x[c] = ld_q(row * DK + e4 * 4u + c);
        q[t] = x * p.scale_log2;
    }
    [[unroll]] for (uint t = 0u; t < NO; t++)
        o[t] = vec4(0.0);
    m_run = MASKED;
    l_run = 0.0;
}

void main()
{
#if FLASH_SUBGROUP
    // Lanes of a row must share a subgroup: number invocations by subgroup.
    tid = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
#else
    tid = gl_LocalInvocationIndex;
#endif
    lane = tid % L;
    const uint zb = gl_WorkGroupID.z + p.z_base; // b * Hkv + K/V head
    const uint b = zb / (p.heads / p.group);
    const uint rows_total = p.group * p.tq;
    const uint r0 = (gl_WorkGroupID.x + p.x_base) * BR;
    const uint r1 = min(r0 + BR, rows_total) - 1u;

    if (gl_LocalInvocationIndex == 0u)
        need_uniform = 0u;
    init_row(zb, b, r0 + tid / L, rows_total);
    const uint kend = flash_key_end(r0, r1);
    for (uint j0 = flash_tile_begin(r0, r1, BC); j0 < kend; j0 += BC) {
        barrier();
        load_tile(b, zb, j0, true);
        barrier();
        tile_logits(b, j0);
        tile_update(b, j0);
    }
    if (UNIFORM_ROWS)
        uniform_rows(b, zb);
    if (row_ok)
        store_row(b);
}
