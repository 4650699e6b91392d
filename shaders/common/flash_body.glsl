// The body of the fused attention kernel, shared by its entry points:
// shaders/flash.comp (one binding per tensor, 8 in all), flash_f16.comp (the
// same with float16_t views) and shaders/flash_packed.comp (4 bindings, for
// devices such as the Vulkan 1.1 minimum that allow 4 storage buffers per
// shader). Each defines FLASH_PACKED and FLASH_F16_STORAGE (0 or 1) and
// includes this file after #version.
//
// Fused scaled dot-product attention (FlashAttention-style):
//   out = dropout(softmax(Q K^T * scale + bias, masks)) V
// Q (B, H, Tq, DK), K (B, Hkv, Tv, DK), V (B, Hkv, Tv, DV), out (B, H, Tq, DV).
//
// One workgroup = one (batch, K/V head) and WG * RPI consecutive "rows", where
// the rows of a K/V head are the (query head of its group, query index) pairs
// flattened: row r -> h = hkv * group + r / Tq, i = r % Tq. The query heads
// sharing a K/V head (grouped-query attention) thus read one K/V tile together,
// with no copies. Each invocation owns RPI rows: their pre-scaled queries,
// running max m and sum l (fp32), and output accumulators in registers. K/V
// tiles of BC keys stream through shared memory; per tile each accumulator is
// rescaled once by exp2(m_old - m_new), and it is normalized once at the end.
// Every K or V element read from shared memory feeds RPI rows: that read, not
// the FMA, is the cost on CPU drivers (lavapipe runs a workgroup as one thread
// in 8-wide SIMD), so the host picks RPI > 1 there and 1 on GPUs, where the
// reads are broadcasts and registers are scarce. No subgroup operations, so
// any subgroup size works.
//
// Loops: only the loops over key tiles and the four-key loops inside a tile
// are real loops; every loop with a constant trip count is unrolled
// ([[unroll]]; the widths too, so q and o stay in registers). lavapipe ends an
// invocation after 65535 loop iterations in total (LP_MAX_TGSI_LOOP_ITERATIONS,
// shared by all its loops), so the host counts what this layout costs per
// tile (flash.c, loop_iterations) and refuses longer key ranges there.
//
// Element types: Q, K, V and out may each hold f16 or bf16 (spec constants);
// masks, bias and LSE are f32, and all arithmetic is fp32 (16-bit values
// convert on load and on the final store). FLASH_F16_STORAGE 1
// (shaders/flash_f16.comp, for devices with storageBuffer16BitAccess; f16
// only, the host never sends it bf16) reads and writes float16_t; 0 reads
// 16-bit elements packed two per uint word, and writes a 16-bit out only a
// whole word at a time (an invocation owns whole rows, so with DV even no word is shared;
// the host sends odd DV through f32 scratch).
//
// Layouts. Unpacked: Q, K, V, bias, value mask, mask, out, lse at bindings
// 0..7. Packed: binding 0 holds Q and then the side inputs (bias, value mask,
// mask; the host packs them, vk/pack.h) at element offsets from push
// constants, 1 and 2 are K and V, 3 holds out and then the LSE (at p.lse_off).
// Q is first in the pack, so its vec4 reads stay aligned.
//
// Long calls are split into several dispatches along the row blocks (x) and
// the (batch, K/V head) pairs (z) so that none exceeds the watchdog budget or
// the workgroup-count limits: p.x_base and p.z_base say where a piece starts.
// Nothing depends on which piece a workgroup is in, so a split call gives the
// same bits as an unsplit one.
//
// No inf or NaN is relied on (a compiler may assume neither occurs): logits
// are kept in log2 units (Q and bias pre-multiplied by log2(e)) so the
// exponentials are exp2; masked and out-of-range keys, and keys whose logit is
// at or below MASKED (-3e38: a -inf bias, say), get exactly the finite logit
// MASKED, recognized by its bits, and weight exactly 0 (selected, never
// computed from an infinite argument). The running max starts at MASKED, so
// a row with nothing allowed ends with l == 0 (every allowed key adds at least
// the weight 1 of the row's max) and gets the masked-row policy. Its LSE is
// -inf, stored as a bit pattern. Key tiles wholly above a causal diagonal are
// never loaded.

#extension GL_EXT_control_flow_attributes : require

#include "flash_iface.h"
#include "elem_type.glsl"
#include "tanh_robust.glsl"

// specialization constants: ids and meanings in flash_iface.h
layout(local_size_x_id = VKA_FLASH_SPEC_WG, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = VKA_FLASH_SPEC_BC) const uint BC = 32;
layout(constant_id = VKA_FLASH_SPEC_DK) const uint DK = 64;
layout(constant_id = VKA_FLASH_SPEC_DV) const uint DV = 64;
#include "flash_spec.glsl"
layout(constant_id = VKA_FLASH_SPEC_RPI) const uint RPI = 1;
layout(constant_id = VKA_FLASH_SPEC_Q_TYPE) const uint Q_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_FLASH_SPEC_K_TYPE) const uint K_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_FLASH_SPEC_V_TYPE) const uint V_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_FLASH_SPEC_OUT_TYPE) const uint OUT_TYPE = VKA_ELEM_F32;

// Widths in vec4s; the padding lanes of q, K and V hold zeros.
const uint DK4 = (DK + 3u) / 4u;
const uint DV4 = (DV + 3u) / 4u;
const uint BC4 = BC / 4u;
const uint WG = gl_WorkGroupSize.x;
const bool DK_VEC4 = DK % 4u == 0u;
const bool DV_VEC4 = DV % 4u == 0u;

#if FLASH_PACKED
#define BIND_OUT 3
#define BIAS_OFF p.bias_off
#define VMASK_OFF p.vmask_off
#define MASK_OFF p.mask_off
#define LSE_OFF p.lse_off
#else
#define BIND_OUT 6
#define BIAS_OFF 0u
#define VMASK_OFF 0u
#define MASK_OFF 0u
#define LSE_OFF 0u
#endif

layout(std430, binding = 0) readonly buffer QBuf { float q_in[]; };
layout(std430, binding = 1) readonly buffer KBuf { float k_in[]; };
layout(std430, binding = 2) readonly buffer VBuf { float v_in[]; };
// The same buffers as vec4s, used when the width is a multiple of 4 (then every
// row starts on a 16-byte boundary): one access instead of four bounds-checked
// ones, which on lavapipe is most of the compile time of wide heads.
layout(std430, binding = 0) readonly buffer QBuf4 { vec4 q4_in[]; };
layout(std430, binding = 1) readonly buffer KBuf4 { vec4 k4_in[]; };
layout(std430, binding = 2) readonly buffer VBuf4 { vec4 v4_in[]; };
#if FLASH_PACKED // the side inputs live behind Q, the LSE behind out
#define bias_in q_in
#define vmask_in q_in
#define mask_in q_in
#define lse_u out_u
#else
layout(std430, binding = 3) readonly buffer BiasBuf { float bias_in[]; };
layout(std430, binding = 4) readonly buffer VMaskBuf { float vmask_in[]; };
layout(std430, binding = 5) readonly buffer MaskBuf { float mask_in[]; };
layout(std430, binding = 7) writeonly buffer LseBuf { uint lse_u[]; };
#endif
layout(std430, binding = BIND_OUT) writeonly buffer OutBuf { float out_o[]; };
layout(std430, binding = BIND_OUT) writeonly buffer OutBuf4 { vec4 out4_o[]; };
#if FLASH_PACKED
layout(std430, binding = BIND_OUT) writeonly buffer OutBufU { uint out_u[]; };
#endif

// The f16 views of Q, K, V and out (see "Element types").
#if FLASH_F16_STORAGE
layout(std430, binding = 0) readonly buffer QBufH { float16_t q_h[]; };
layout(std430, binding = 1) readonly buffer KBufH { float16_t k_h[]; };
layout(std430, binding = 2) readonly buffer VBufH { float16_t v_h[]; };
layout(std430, binding = 0) readonly buffer QBufH4 { f16vec4 q4_h[]; };
layout(std430, binding = 1) readonly buffer KBufH4 { f16vec4 k4_h[]; };
layout(std430, binding = 2) readonly buffer VBufH4 { f16vec4 v4_h[]; };
layout(std430, binding = BIND_OUT) writeonly buffer OutBufH { float16_t out_h[]; };
layout(std430, binding = BIND_OUT) writeonly buffer OutBufH4 { f16vec4 out4_h[]; };
#else
layout(std430, binding = 0) readonly buffer QBufW { uint q_w[]; };
layout(std430, binding = 1) readonly buffer KBufW { uint k_w[]; };
layout(std430, binding = 2) readonly buffer VBufW { uint v_w[]; };
layout(std430, binding = 0) readonly buffer QBufW2 { uvec2 q4_w[]; };
layout(std430, binding = 1) readonly buffer KBufW2 { uvec2 k4_w[]; };
layout(std430, binding = 2) readonly buffer VBufW2 { uvec2 v4_w[]; };
layout(std430, binding = BIND_OUT) writeonly buffer OutBufW { uint out_w[]; };
layout(std430, binding = BIND_OUT) writeonly buffer OutBufW2 { uvec2 out4_w[]; };
#endif

layout(push_constant) uniform Push { VKA_FLASH_PUSH } p;

#include "flash_mask.glsl" // after p, the spec constants and the buffers it reads

// Element i, or elements 4 i4 .. 4 i4 + 3, of Q, K and V as f32.
#if FLASH_F16_STORAGE
float ld_q(uint i) { return VKA_LD(Q_TYPE, q_in, q_h, i); }
float ld_k(uint i) { return VKA_LD(K_TYPE, k_in, k_h, i); }
float ld_v(uint i) { return VKA_LD(V_TYPE, v_in, v_h, i); }
vec4 ld_q4(uint i4) { return VKA_LD4(Q_TYPE, q4_in, q4_h, i4); }
vec4 ld_k4(uint i4) { return VKA_LD4(K_TYPE, k4_in, k4_h, i4); }
vec4 ld_v4(uint i4) { return VKA_LD4(V_TYPE, v4_in, v4_h, i4); }
#else
float ld_q(uint i) { return VKA_LDW(Q_TYPE, q_in, q_w, i); }
float ld_k(uint i) { return VKA_LDW(K_TYPE, k_in, k_w, i); }
float ld_v(uint i) { return VKA_LDW(V_TYPE, v_in, v_w, i); }
vec4 ld_q4(uint i4) { return VKA_LDW4(Q_TYPE, q4_in, q4_w, i4); }
vec4 ld_k4(uint i4) { return VKA_LDW4(K_TYPE, k4_in, k4_w, i4); }
vec4 ld_v4(uint i4) { return VKA_LDW4(V_TYPE, v4_in, v4_w, i4); }
#endif

// Elements 4 i4 .. 4 i4 + 3 of out (whole words in either type).
void st_out4(uint i4, vec4 x)
{
    if (!VKA_IS_16(OUT_TYPE))
        out4_o[i4] = x;
    else
#if FLASH_F16_STORAGE
        out4_h[i4] = f16vec4(x);
#else
        out4_w[i4] = VKA_PACK4(OUT_TYPE, x);
#endif
}

const float LN2 = 0.6931471805599453;
const uint NEG_INF_BITS = 0xFF800000u; // the LSE of a row with nothing allowed

shared vec4 ks[BC * DK4];
shared vec4 vs[BC * DV4];
shared float vmask_s[BC];
shared uint need_uniform;

// This invocation's rows rr < RPI (private, so helpers need no copies).
vec4 q[RPI * DK4];    // query row rr at q[rr * DK4 ...], times scale * log2(e)
vec4 o[RPI * DV4];    // output accumulators
vec4 s4[RPI * BC4];   // the tile's logits, then weights: s4[rr * BC4 + jj / 4][jj % 4]
float m_run[RPI], l_run[RPI];
uint row_h[RPI], row_i[RPI];
uint row_end[RPI];    // keys j < row_end may be allowed: flash_row_end, at most Tv
bool row_ok[RPI];     // row exists (r < group * Tq)

// Cooperative copy of keys [j0, j0 + BC) of K/V head kv_head (= b * Hkv + hkv)
// and of batch b's value mask into shared memory, one vec4 slot per step; rows
// past Tv become zeros (their logits are forced to -inf, and a zero V row keeps
// 0 * V finite).
void load_tile(uint b, uint kv_head, uint j0, bool with_k)
{
    const uint tid = gl_LocalInvocationID.x;
    const uint rows = min(BC, p.tv - j0);
    if (with_k)
        [[unroll]] for (uint it = 0u; it < (BC * DK4 + WG - 1u) / WG; it++) {
            uint slot = it * WG + tid, jj = slot / DK4, e = (slot % DK4) * 4u;
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
        uint slot = it * WG + tid, jj = slot / DV4, e = (slot % DV4) * 4u;
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
            uint jj = it * WG + tid;
            if (jj < BC)
                vmask_s[jj] = jj < rows ? vmask_in[VMASK_OFF + b * p.tv + j0 + jj] : 0.0;
        }
}

// The value mask's verdict on keys jj..jj+3 of the tile (all true without one).
bvec4 tile_value_mask4(uint jj)
{
    return HAS_VALUE_MASK ? flash_value_mask4(vmask_s[jj], vmask_s[jj + 1u], vmask_s[jj + 2u],
                                              vmask_s[jj + 3u])
                          : bvec4(true);
}

// x[rr][c] = q[rr] . K row jj + c of the tile.
void qk_block(uint jj, inout vec4 x[RPI])
{
    [[unroll]] for (uint e4 = 0u; e4 < DK4; e4++) {
        vec4 k0 = ks[jj * DK4 + e4], k1 = ks[(jj + 1u) * DK4 + e4];
        vec4 k2 = ks[(jj + 2u) * DK4 + e4], k3 = ks[(jj + 3u) * DK4 + e4];
        vec4 kx = vec4(k0.x, k1.x, k2.x, k3.x), ky = vec4(k0.y, k1.y, k2.y, k3.y);
        vec4 kz = vec4(k0.z, k1.z, k2.z, k3.z), kw = vec4(k0.w, k1.w, k2.w, k3.w);
        [[unroll]] for (uint rr = 0u; rr < RPI; rr++) {
            vec4 qe = q[rr * DK4 + e4];
            x[rr] = fma(vec4(qe.x), kx, x[rr]);
            x[rr] = fma(vec4(qe.y), ky, x[rr]);
            x[rr] = fma(vec4(qe.z), kz, x[rr]);
            x[rr] = fma(vec4(qe.w), kw, x[rr]);
        }
    }
}

// s4 = masked logits of the tile's keys for every row, four keys at a time.
void tile_logits(uint b, uint j0)
{
    [[dont_unroll]] for (uint jj = 0u; jj < BC; jj += 4u) {
        vec4 x[RPI];
        [[unroll]] for (uint rr = 0u; rr < RPI; rr++)
            x[rr] = vec4(0.0);
        qk_block(jj, x);
        // soft-capping in log2 units: c' tanh(s' / c') with c' = c log2(e), s' = s log2(e)
        if (p.softcap_log2 > 0.0)
            [[unroll]] for (uint rr = 0u; rr < RPI; rr++)
                [[unroll]] for (uint c = 0u; c < 4u; c++)
                    x[rr][c] = p.softcap_log2 * tanh_robust(x[rr][c] / p.softcap_log2);
        const bvec4 vm = tile_value_mask4(jj);
        [[unroll]] for (uint rr = 0u; rr < RPI; rr++)
            s4[rr * BC4 + jj / 4u] =
                flash_mask_logits(b, row_h[rr], row_i[rr], j0 + jj, row_end[rr], vm, x[rr]);
    }
}

// o[rr] += sum over c of pw[rr][c] * V row jj + c of the tile.
void accumulate_v(uint jj, vec4 pw[RPI])
{
    [[unroll]] for (uint e4 = 0u; e4 < DV4; e4++) {
        vec4 v0 = vs[jj * DV4 + e4], v1 = vs[(jj + 1u) * DV4 + e4];
        vec4 v2 = vs[(jj + 2u) * DV4 + e4], v3 = vs[(jj + 3u) * DV4 + e4];
        [[unroll]] for (uint rr = 0u; rr < RPI; rr++) {
            vec4 acc = fma(vec4(pw[rr].x), v0, o[rr * DV4 + e4]);
            acc = fma(vec4(pw[rr].y), v1, acc);
            acc = fma(vec4(pw[rr].z), v2, acc);
            o[rr * DV4 + e4] = fma(vec4(pw[rr].w), v3, acc);
        }
    }
}

// Online softmax step for one tile whose logits are in s4: new running max,
// one rescale of l and o, then o += weights (after dropout) @ V tile.
void tile_update(uint b, uint j0)
{
    [[unroll]] for (uint rr = 0u; rr < RPI; rr++) {
        float mt = m_run[rr];
        [[unroll]] for (uint j4 = 0u; j4 < BC4; j4++) {
            vec4 x = s4[rr * BC4 + j4];
            mt = max(mt, max(max(x.x, x.y), max(x.z, x.w)));
        }
        // By about 2^-127 rather than 0 on lavapipe when the max jumps by more:
        // negligible next to the new max's weight of 1.
        float alpha = exp2(m_run[rr] - mt);
        m_run[rr] = mt;
        l_run[rr] *= alpha;
        [[unroll]] for (uint e4 = 0u; e4 < DV4; e4++)
            o[rr * DV4 + e4] *= alpha;
    }
    [[dont_unroll]] for (uint jj = 0u; jj < BC; jj += 4u) {
        vec4 pw[RPI];
        [[unroll]] for (uint rr = 0u; rr < RPI; rr++) {
            vec4 x = s4[rr * BC4 + jj / 4u];
            // Selected, not computed: lavapipe clamps exp2's argument to about
            // -127, so a masked key would still get weight 2^-127; and a
            // masked key's argument is 0, never MASKED - m (finite, but not
            // a value to feed exp2).
            const bvec4 masked = is_masked(x);
            const vec4 arg = mix(x, vec4(m_run[rr]), masked) - m_run[rr];
            pw[rr] = mix(exp2(arg), vec4(0.0), masked);
            l_run[rr] += (pw[rr].x + pw[rr].y) + (pw[rr].z + pw[rr].w);
            if (DROPOUT) // after the sum: dropout acts on the normalized weights
                pw[rr] *= flash_keep4(b * p.heads + row_h[rr], row_i[rr], j0 + jj);
        }
        accumulate_v(jj, pw);
    }
}

// Rows with no allowed key under the uniform policy: weights 1/Tv on every key
// (then dropout), i.e. the mean of all V rows, masked or not. Only workgroups
// holding such a row pay for this second sweep over V.
void uniform_rows(uint b, uint zb)
{
    bool mine = false;
    [[unroll]] for (uint rr = 0u; rr < RPI; rr++)
        mine = mine || (row_ok[rr] && l_run[rr] == 0.0);
    barrier();
    if (mine)
        atomicOr(need_uniform, 1u);
    barrier();
    if (need_uniform == 0u)
        return;
    [[unroll]] for (uint rr = 0u; rr < RPI; rr++)
        [[unroll]] for (uint e4 = 0u; e4 < DV4; e4++) // o is 0 unless V held inf or NaN
            o[rr * DV4 + e4] = l_run[rr] == 0.0 ? vec4(0.0) : o[rr * DV4 + e4];
    for (uint j0 = 0u; j0 < p.tv; j0 += BC) {
        barrier();
        load_tile(b, zb, j0, false);
        barrier();
        if (!mine)
            continue;
        [[dont_unroll]] for (uint jj = 0u; jj < BC; jj += 4u) {
            vec4 pw[RPI];
            [[unroll]] for (uint rr = 0u; rr < RPI; rr++) {
                pw[rr] = vec4(l_run[rr] == 0.0); // V rows past Tv are zeros
                if (DROPOUT)
                    pw[rr] *= flash_keep4(b * p.heads + row_h[rr], row_i[rr], j0 + jj);
            }
            accumulate_v(jj, pw);
        }
    }
}

// Normalizes and stores row rr (and its log-sum-exp).
void store_row(uint b, uint rr)
{
    const float l = l_run[rr];
    const uint row = (b * p.heads + row_h[rr]) * p.tq + row_i[rr];
    // NaN in l (a NaN logit) propagates to the row, as in the reference.
    float inv = l == 0.0 ? (UNIFORM_ROWS ? p.drop_scale / float(p.tv) : 0.0) : p.drop_scale / l;
    [[unroll]] for (uint e4 = 0u; e4 < DV4; e4++) {
        vec4 x = (l == 0.0 && !UNIFORM_ROWS) ? vec4(0.0) : o[rr * DV4 + e4] * inv;
        if (DV_VEC4) {
            st_out4(row * DV4 + e4, x);
        } else if (!VKA_IS_16(OUT_TYPE)) {
            [[unroll]] for (uint c = 0u; c < 4u; c++)
                if (e4 * 4u + c < DV)
                    out_o[row * DV + e4 * 4u + c] = x[c];
        } else {
#if FLASH_F16_STORAGE
            [[unroll]] for (uint c = 0u; c < 4u; c++)
                if (e4 * 4u + c < DV)
                    out_h[row * DV + e4 * 4u + c] = float16_t(x[c]);
#else // DV is even here (flash.c): each pair is a whole word of this row
            [[unroll]] for (uint c = 0u; c < 4u; c += 2u)
                if (e4 * 4u + c < DV)
                    out_w[(row * DV + e4 * 4u + c) >> 1u] = VKA_PACK2(OUT_TYPE, vec2(x[c], x[c + 1u]));
#endif
        }
    }
    if (WRITE_LSE)
        lse_u[LSE_OFF + row] =
            l == 0.0 ? NEG_INF_BITS : floatBitsToUint((m_run[rr] + log2(l)) * LN2);
}

// Rows of this invocation, their scaled queries, zeroed state.
void init_rows(uint zb, uint b, uint r0, uint rows_total)
{
    const uint kv_heads = p.heads / p.group;
    [[unroll]] for (uint rr = 0u; rr < RPI; rr++) {
        uint r = r0 + rr * WG + gl_LocalInvocationID.x;
        row_ok[rr] = r < rows_total;
        row_h[rr] = (zb % kv_heads) * p.group + (row_ok[rr] ? r / p.tq : 0u);
        row_i[rr] = row_ok[rr] ? r % p.tq : 0u;
        row_end[rr] = flash_row_end(row_i[rr]);
        const uint row = (b * p.heads + row_h[rr]) * p.tq + row_i[rr];
        [[unroll]] for (uint e4 = 0u; e4 < DK4; e4++) {
            vec4 x = vec4(0.0);
            if (DK_VEC4 && row_ok[rr])
                x = ld_q4(row * DK4 + e4);
            else if (!DK_VEC4)
                [[unroll]] for (uint c = 0u; c < 4u; c++)
                    if (row_ok[rr] && e4 * 4u + c < DK)
                        x[c] = ld_q(row * DK + e4 * 4u + c);
            q[rr * DK4 + e4] = x * p.scale_log2;
        }
        [[unroll]] for (uint e4 = 0u; e4 < DV4; e4++)
            o[rr * DV4 + e4] = vec4(0.0);
        m_run[rr] = MASKED;
        l_run[rr] = 0.0;
    }
}

void main()
{
    const uint zb = gl_WorkGroupID.z + p.z_base; // b * Hkv + K/V head
    const uint b = zb / (p.heads / p.group);
    const uint rows_total = p.group * p.tq;
    const uint r0 = (gl_WorkGroupID.x + p.x_base) * WG * RPI;
    const uint r1 = min(r0 + WG * RPI, rows_total) - 1u;

    if (gl_LocalInvocationID.x == 0u)
        need_uniform = 0u;
    init_rows(zb, b, r0, rows_total);
    const uint kend = flash_key_end(r0, r1);
    for (uint j0 = flash_tile_begin(r0, r1, BC); j0 < kend; j0 += BC) {
        barrier(); // the previous tile is no longer read
        load_tile(b, zb, j0, true);
        barrier();
        if (!row_ok[0]) // row 0 is this invocation's first: all of them are past the end
            continue;
        tile_logits(b, j0);
        tile_update(b, j0);
    }
    if (UNIFORM_ROWS)
        uniform_rows(b, zb);
    [[unroll]] for (uint rr = 0u; rr < RPI; rr++)
        if (row_ok[rr])
            store_row(b, rr);
}
