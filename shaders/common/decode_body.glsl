// The split kernel of decode attention (flash-decoding), shared by its two
// entry points: shaders/decode.comp (one binding per tensor) and
// shaders/decode_packed.comp (4 bindings: the lengths and the value mask
// packed behind Q). Each defines DECODE_PACKED and includes this file.
//
// Q (B, H, Tq, DK) against a KV cache K (B, Hkv, C, DK), V (B, Hkv, C, DV)
// whose sequence b holds L_b = lengths[b] keys, read here on the device.
// Query i of Tq sees keys j < L_b - Tq + i + 1 (bottom-right causal: the
// queries are the last Tq tokens, already appended), and with a sliding
// window w only keys j >= L_b - Tq + i + 1 - w; the chunks then split the
// keys some row may see, [span_begin, L_b), so a window costs O(w) keys.
//
// Two layouts, picked by the spec constant LANES: the tiles layout described
// here (tiles_main, the GPU one) and the lanes layout (lanes_main, at the end,
// the CPU one). Grid of the tiles layout: x = key chunk c of n_chunks,
// y = a block of R rows, z = (b, K/V head). The rows of a K/V head are its
// query heads' (h, i) pairs, so the query heads of a group share every K/V
// read. Chunks are sized from L_b on the device: ceil(L_b / n_chunks)
// rounded up to the tile, so every chunk is busy whatever the capacity, and
// chunks past L_b write an empty partial.
// Per tile of WG keys:
//   1. QK: invocation t takes key j0 + t and computes its R logits (the
//      whole DK-wide dot product, vec4 reads of its K row);
//   2. softmax: invocation r < R updates row r's running max and sum and
//      turns the tile's logits into weights (then the dropout keep bits);
//   3. PV: the R * DV4 output vec4s ("slots") are spread over the
//      invocations, and where there are fewer slots than invocations, the
//      keys of the tile too: KS subsets (jj % KS), summed at the end.
// So one query row against many keys keeps every invocation busy: the keys
// split across workgroups and, inside one, across invocations.
// Output: a partial per (row, chunk): DV unnormalized sums, the max m (log2
// units) and the sum l; shaders/decode_merge.comp combines them.
// Loops with a constant trip count are unrolled; the tile loop is the only
// real one (lavapipe's loop budget: the host bounds the tiles per chunk).
// As in flash_body.glsl, masked keys get the finite logit MASKED and weight
// exactly 0, never an exp2 of an infinite argument.
// Register budget (src/ops/register_budget.h), split layout (the GPU
// tuning's): 3 R + R (rows' ends, heads, indices, logits) + 4 NS (o) + 8 (two
// key vec4s) + 2 (m_run, l_run) + 12 scalars: 86 at R = 8, DV = 256 (WG 64);
// the host takes fewer rows where the mobile profiles' 64 asks
// (src/ops/gpu_tiles.c). The lanes layout is the CPU tuning's.

#extension GL_EXT_control_flow_attributes : require

#include "decode_iface.h"
#include "elem_type.glsl"
#include "mask.glsl"
#include "philox.glsl"
#include "tanh_robust.glsl"

layout(local_size_x_id = VKA_DECODE_SPEC_WG, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = VKA_DECODE_SPEC_DK) const uint DK = 64;
layout(constant_id = VKA_DECODE_SPEC_DV) const uint DV = 64;
layout(constant_id = VKA_DECODE_SPEC_R) const uint R = 1;
layout(constant_id = VKA_DECODE_SPEC_KS) const uint KS = 1;
layout(constant_id = VKA_DECODE_SPEC_NS) const uint NS = 1;
layout(constant_id = VKA_DECODE_SPEC_HAS_VALUE_MASK) const bool HAS_VALUE_MASK = false;
layout(constant_id = VKA_DECODE_SPEC_DROPOUT) const bool DROPOUT = false;
// A 16-bit cache (f16 or bf16) is read as words of two elements
// (elem_type.glsl) on every device, so no 16-bit storage is needed and bf16
// never meets a float16_t view; all arithmetic stays fp32.
layout(constant_id = VKA_DECODE_SPEC_K_TYPE) const uint K_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_DECODE_SPEC_V_TYPE) const uint V_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_DECODE_SPEC_LANES) const bool LANES = false;
// 16-bit queries (f16 or bf16), read as words of two elements as the cache is
layout(constant_id = VKA_DECODE_SPEC_Q_TYPE) const uint Q_TYPE = VKA_ELEM_F32;
// An int8 cache (vkattn/kv_cache.h): each word holds four int8 of a row (DK
// and DV are multiples of 4), each row an fp32 scale at *_scale_off + row of
// the same buffer. No dequantized copy: the loads return the int8 as floats,
// the QK dot is scaled once per key and the P V weight carries V's scale.
layout(constant_id = VKA_DECODE_SPEC_KV_I8) const bool KV_I8 = false;
// Soft-capping (Gemma 2): c tanh(s / c) of the scaled score s, before the
// masks; in the logits' log2 units the cap is c log2(e) (p.softcap_log2).
layout(constant_id = VKA_DECODE_SPEC_SOFTCAP) const bool SOFTCAP = false;
// Every sequence full (SDPA's few-row calls, ops/sdpa_few_rows.c): no lengths to read.
layout(constant_id = VKA_DECODE_SPEC_FULL) const bool FULL = false;

const uint WG = gl_WorkGroupSize.x; // also the keys per tile
const uint DK4 = (DK + 3u) / 4u;
const uint DV4 = (DV + 3u) / 4u;
const bool DK_VEC4 = DK % 4u == 0u;
const bool DV_VEC4 = DV % 4u == 0u;
const uint SLOTS = R * DV4;
const uint SL = SLOTS < WG ? SLOTS : WG; // invocations per key subset
const float MASKED = -3.0e38;

layout(std430, binding = 0) readonly buffer QBuf { float q_in[]; };
layout(std430, binding = 0) readonly buffer QBuf4 { vec4 q4_in[]; };
layout(std430, binding = 0) readonly buffer QBufW { uint q_w[]; };
layout(std430, binding = 1) readonly buffer KBuf { float k_in[]; };
layout(std430, binding = 2) readonly buffer VBuf { float v_in[]; };
layout(std430, binding = 1) readonly buffer KBuf4 { vec4 k4_in[]; };
layout(std430, binding = 2) readonly buffer VBuf4 { vec4 v4_in[]; };
layout(std430, binding = 1) readonly buffer KBufW { uint k_w[]; };
layout(std430, binding = 2) readonly buffer VBufW { uint v_w[]; };
layout(std430, binding = 1) readonly buffer KBufW2 { uvec2 k4_w[]; };
layout(std430, binding = 2) readonly buffer VBufW2 { uvec2 v4_w[]; };
layout(std430, binding = 1) readonly buffer KBufW4 { uvec4 k16_w[]; }; // 16 bytes
layout(std430, binding = 2) readonly buffer VBufW4 { uvec4 v16_w[]; };
layout(std430, binding = 3) writeonly buffer PartBuf { float part[]; };
#if DECODE_PACKED
#define LENGTH(b) (FULL ? p.capacity : floatBitsToUint(q_in[p.len_off + (b)]))
#define VMASK(x) q_in[p.vmask_off + (x)]
#else
layout(std430, binding = 4) readonly buffer LenBuf { uint len_in[]; };
layout(std430, binding = 5) readonly buffer VMaskBuf { float vmask_in[]; };
#define LENGTH(b) (FULL ? p.capacity : len_in[b])
#define VMASK(x) vmask_in[x]
#endif

layout(push_constant) uniform Push { VKA_DECODE_PUSH } p;

// Whether key j is inside the sliding window of a row whose keys end at `end`
// (the host clamps the window to capacity + Tq, so j + window cannot wrap).
bool in_window(uint j, uint end)
{
    return p.window == 0u || j + p.window >= end;
}

// The first key any row may see under the sliding window (row 0's, the
// lowest: L_b - Tq + 1 - w), aligned down to 4 so that the Philox words stay
// those of the full SDPA (keys j..j+3, j a multiple of 4); 0 without one.
uint span_begin(uint len)
{
    if (p.window == 0u)
        return 0u;
    return len + 1u > p.tq + p.window ? (len + 1u - p.tq - p.window) & ~3u : 0u;
}

shared vec4 q_s[R * DK4];  // the rows' queries times scale * log2(e)
shared float s_s[R * WG];  // the tile's logits, then weights
shared float alpha_s[R];   // the tile's rescale of each row
shared vec4 red_s[WG];     // the key subsets' sums, at the end
// An int8 cache's V scales of the tile's keys, read once per key in QK and
// folded into the weights by the softmax, not read per output slot in P V.
shared float vs_s[KV_I8 ? WG : 1u];

// Element i, or elements 4 i4 .. 4 i4 + 3, of K or V as f32.
float ld_kv(bool is_k, uint i)
{
    if (is_k)
        return VKA_LDW(K_TYPE, k_in, k_w, i);
    return VKA_LDW(V_TYPE, v_in, v_w, i);
}
vec4 int8x4(uint w) { return vec4(ivec4(int(w)) << ivec4(24, 16, 8, 0) >> 24); }
vec4 ld_kv4(bool is_k, uint i4)
{
    if (KV_I8)
        return int8x4(is_k ? k_w[i4] : v_w[i4]);
    if (is_k)
        return VKA_LDW4(K_TYPE, k4_in, k4_w, i4);
    return VKA_LDW4(V_TYPE, v4_in, v4_w, i4);
}

float ld_q(uint i) { return VKA_LDW(Q_TYPE, q_in, q_w, i); }

// A key's logit (log2 units) after the int8 scale kq and the soft cap.
float finish_logit(float x, float kq)
{
    x *= kq; // 1 unless KV_I8: folded away
    return SOFTCAP ? p.softcap_log2 * tanh_robust(x / p.softcap_log2) : x;
}

// An int8 cache's scale of cache row `row` (1 for the other types), 0 when
// !ok: the row's dequantized key or value is its loads times the scale.
float k_scale(uint row, bool ok) { return KV_I8 ? (ok ? k_in[p.k_scale_off + row] : 0.0) : 1.0; }
float v_scale(uint row, bool ok) { return KV_I8 ? (ok ? v_in[p.v_scale_off + row] : 0.0) : 1.0; }

// A 16-bit K (f16 or bf16: the same words, unpacked per type) with DK a
// multiple of 8 is read 8 elements (16 bytes) per load, an
// int8 K with DK a multiple of 16 16 int8 per load, as an f32 K is read 16
// bytes per vec4: each invocation reads its own key row (rows DK apart across
// invocations), so the bytes per load instruction, not the row, set how much
// each access moves. K rows then start on 16 bytes. The lanes layout reads V
// rows the same way (each invocation its own key's row); on llvmpipe a load
// costs about the same per instruction whatever its width (16-byte loads cut
// the int8 step 17%, the f16 one 19%: docs/PERFORMANCE.md). Macros, not
// consts: a spec-constant && used in both layouts' functions trips glslang's
// optimizer ("does not dominate its use").
#define K_VEC8 (VKA_IS_16(K_TYPE) && DK % 8u == 0u)
#define V_VEC8 (VKA_IS_16(V_TYPE) && DV % 8u == 0u)
#define K_I8_VEC16 (KV_I8 && DK % 16u == 0u)
#define V_I8_VEC16 (KV_I8 && DV % 16u == 0u)

vec4 load4(bool vec, uint base, uint e4, uint width, bool ok, bool is_k)
{
    vec4 x = vec4(0.0);
    if (vec && ok)
        x = ld_kv4(is_k, base / 4u + e4);
    else if (!vec)
        [[unroll]] for (uint c = 0u; c < 4u; c++)
            if (ok && e4 * 4u + c < width)
                x[c] = ld_kv(is_k, base + e4 * 4u + c);
    return x;
}

void tiles_main()
{
    const uint t = gl_LocalInvocationID.x;
    const uint kv_heads = p.heads / p.group;
    const uint zb = gl_WorkGroupID.z + p.z_base; // b * Hkv + K/V head
    const uint b = zb / kv_heads, hkv = zb % kv_heads;
    const uint rows_total = p.group * p.tq;
    const uint r0 = gl_WorkGroupID.y * R, c = gl_WorkGroupID.x;
    const uint len = min(LENGTH(b), p.capacity);
    const uint base = span_begin(len);
    const uint chunk =
        max(WG, (len - base + p.n_chunks - 1u) / p.n_chunks + WG - 1u) / WG * WG;
    const uint start = min(base + c * chunk, len), stop = min(start + chunk, len);

    // Rows of this workgroup: (h, i) and their causal end.
    uint row_end[R], row_bh[R], row_i[R];
    uint kend = start;
    [[unroll]] for (uint rr = 0u; rr < R; rr++) {
        const uint r = r0 + rr;
        const bool ok = r < rows_total;
        row_i[rr] = ok ? r % p.tq : 0u;
        row_bh[rr] = b * p.heads + hkv * p.group + (ok ? r / p.tq : 0u);
        row_end[rr] = ok && len + row_i[rr] + 1u > p.tq ? len + row_i[rr] + 1u - p.tq : 0u;
        kend = max(kend, min(row_end[rr], stop));
    }
    [[unroll]] for (uint it = 0u; it < (R * DK4 + WG - 1u) / WG; it++) {
        const uint slot = it * WG + t, rr = slot / DK4, e4 = slot % DK4;
        if (slot < R * DK4) {
            const bool ok = r0 + rr < rows_total;
            vec4 x = vec4(0.0);
            const uint qrow = ((b * p.heads + hkv * p.group + (r0 + rr) / p.tq) * p.tq +
                               (r0 + rr) % p.tq) * DK;
            [[unroll]] for (uint cc = 0u; cc < 4u; cc++)
                if (ok && e4 * 4u + cc < DK)
                    x[cc] = ld_q(qrow + e4 * 4u + cc);
            q_s[slot] = x * p.scale_log2;
        }
    }
    float m_run = MASKED, l_run = 0.0; // row t's, for t < R
    vec4 o[NS];
    [[unroll]] for (uint n = 0u; n < NS; n++)
        o[n] = vec4(0.0);
    const uint ks = t / SL, s0 = t % SL;
    const uint kvbase = zb * p.capacity;

    for (uint j0 = start; j0 < kend; j0 += WG) {
        barrier(); // q_s written; the previous tile's weights no longer read
        { // 1. QK
            const uint j = j0 + t;
            const bool in_range = j < kend;
            float x[R];
            [[unroll]] for (uint rr = 0u; rr < R; rr++)
                x[rr] = 0.0;
            if (K_VEC8) // the same sums in the same order, two vec4s per load
                [[unroll]] for (uint e8 = 0u; e8 < DK / 8u; e8++) {
                    const uvec4 w = in_range ? k16_w[(kvbase + j) * (DK / 8u) + e8] : uvec4(0u);
                    const vec4 k = VKA_UNPACK4(K_TYPE, w.xy), k2 = VKA_UNPACK4(K_TYPE, w.zw);
                    [[unroll]] for (uint rr = 0u; rr < R; rr++)
                        x[rr] += dot(q_s[rr * DK4 + 2u * e8], k);
                    [[unroll]] for (uint rr = 0u; rr < R; rr++)
                        x[rr] += dot(q_s[rr * DK4 + 2u * e8 + 1u], k2);
                }
            else if (K_I8_VEC16) // the same sums in the same order, four vec4s per load
                // (live: the 4 words and one vec4, the budget's 8)
                [[unroll]] for (uint e16 = 0u; e16 < DK / 16u; e16++) {
                    const uvec4 w = in_range ? k16_w[(kvbase + j) * (DK / 16u) + e16] : uvec4(0u);
                    [[unroll]] for (uint c = 0u; c < 4u; c++) {
                        const vec4 k = int8x4(w[c]);
                        [[unroll]] for (uint rr = 0u; rr < R; rr++)
                            x[rr] += dot(q_s[rr * DK4 + 4u * e16 + c], k);
                    }
                }
            else
                [[unroll]] for (uint e4 = 0u; e4 < DK4; e4++) {
                    const vec4 k = load4(DK_VEC4, (kvbase + j) * DK, e4, DK, in_range, true);
                    [[unroll]] for (uint rr = 0u; rr < R; rr++)
                        x[rr] += dot(q_s[rr * DK4 + e4], k);
                }
            if (KV_I8 || SOFTCAP) {
                const float kq = k_scale(kvbase + j, in_range);
                [[unroll]] for (uint rr = 0u; rr < R; rr++)
                    x[rr] = finish_logit(x[rr], kq);
            }
            if (KV_I8)
                vs_s[t] = v_scale(kvbase + j, in_range);
            const bool vm_ok =
                !HAS_VALUE_MASK || (in_range && vka_mask_allows(VMASK(b * p.capacity + min(j, p.capacity - 1u))));
            [[unroll]] for (uint rr = 0u; rr < R; rr++) {
                const bool ok = in_range && j < row_end[rr] && in_window(j, row_end[rr]) &&
                                vm_ok && !(x[rr] <= MASKED);
                s_s[rr * WG + t] = ok ? x[rr] : MASKED;
            }
        }
        barrier();
        if (t < R) { // 2. softmax of row t
            float mt = m_run;
            [[unroll]] for (uint jj = 0u; jj < WG; jj++)
                mt = max(mt, s_s[t * WG + jj]);
            const float alpha = exp2(m_run - mt);
            m_run = mt;
            float sum = 0.0;
            [[unroll]] for (uint jj = 0u; jj < WG; jj += 4u) {
                vec4 x = vec4(s_s[t * WG + jj], s_s[t * WG + jj + 1u], s_s[t * WG + jj + 2u],
                              s_s[t * WG + jj + 3u]);
                const bvec4 masked = equal(floatBitsToUint(x), uvec4(floatBitsToUint(MASKED)));
                vec4 w = mix(exp2(mix(x, vec4(mt), masked) - mt), vec4(0.0), masked);
                sum += (w.x + w.y) + (w.z + w.w);
                if (DROPOUT) {
                    // the Philox word of keys j..j+3, j a multiple of 4 as in
                    // the full SDPA; chunks start at multiples of the tile
                    const uvec4 bits = philox4x32_10(
                        uvec4((j0 + jj) >> 2u, row_i[t], row_bh[t], p.offset_mix),
                        uvec2(p.seed_lo, p.seed_hi));
                    w *= vec4(greaterThanEqual(bits >> 8u, uvec4(p.threshold)));
                }
                if (KV_I8) // after the sum: l counts the weights, not the scales
                    w *= vec4(vs_s[jj], vs_s[jj + 1u], vs_s[jj + 2u], vs_s[jj + 3u]);
                s_s[t * WG + jj] = w.x, s_s[t * WG + jj + 1u] = w.y;
                s_s[t * WG + jj + 2u] = w.z, s_s[t * WG + jj + 3u] = w.w;
            }
            l_run = l_run * alpha + sum;
            alpha_s[t] = alpha;
        }
        barrier();
        if (ks < KS) // 3. PV
            [[unroll]] for (uint n = 0u; n < NS; n++) {
                const uint slot = s0 + n * SL, rr = slot / DV4, e4 = slot % DV4;
                if (slot < SLOTS) {
                    vec4 acc = o[n] * alpha_s[rr];
                    [[unroll]] for (uint u = 0u; u < WG / KS; u++) {
                        const uint jj = u * KS + ks, j = j0 + jj;
                        const vec4 v = load4(DV_VEC4, (kvbase + j) * DV, e4, DV, j < kend, false);
                        acc = fma(vec4(s_s[rr * WG + jj]), v, acc);
                    }
                    o[n] = acc;
                }
            }
    }
    // Sum the key subsets (NS is 1 when KS > 1), then store the partial.
    const uint out_stride = DV + 2u;
    if (KS > 1u) {
        barrier();
        red_s[t] = o[0];
        barrier();
        if (ks == 0u)
            [[unroll]] for (uint u = 1u; u < KS; u++)
                o[0] += red_s[u * SL + s0];
    }
    if (ks == 0u)
        [[unroll]] for (uint n = 0u; n < NS; n++) {
            const uint slot = s0 + n * SL, rr = slot / DV4, e4 = slot % DV4;
            if (slot < SLOTS && r0 + rr < rows_total) {
                const uint row = row_bh[rr] * p.tq + row_i[rr];
                const uint base = (row * p.n_chunks + c) * out_stride + e4 * 4u;
                [[unroll]] for (uint cc = 0u; cc < 4u; cc++)
                    if (e4 * 4u + cc < DV)
                        part[base + cc] = o[n][cc];
            }
        }
    if (t < R && r0 + t < rows_total) {
        const uint row = row_bh[t] * p.tq + row_i[t];
        part[(row * p.n_chunks + c) * out_stride + DV] = m_run;
        part[(row * p.n_chunks + c) * out_stride + DV + 1u] = l_run;
    }
}

// The lanes layout (LANES, chosen under the CPU tuning): every invocation owns
// a run of keys, a multiple of 4 long, and keeps its own online softmax and
// its own partial, so the loop has no barrier and no shared memory. On a CPU
// driver that runs a workgroup's invocations as SIMD lanes, a storage or
// shared access costs about the same per element whatever its pattern, so
// this reads each K/V element once and nothing else in the loop; the 4 keys
// of a step share one max, one rescale of the output and one Philox word,
// and the exp2 runs across the lanes. The partial of invocation t of
// workgroup x is partial x * WG + t of its rows (p.n_chunks per row).
void lanes_main()
{
    const uint t = gl_LocalInvocationID.x;
    const uint kv_heads = p.heads / p.group;
    const uint zb = gl_WorkGroupID.z + p.z_base; // b * Hkv + K/V head
    const uint b = zb / kv_heads, hkv = zb % kv_heads;
    const uint rows_total = p.group * p.tq;
    const uint r0 = gl_WorkGroupID.y * R, g = gl_WorkGroupID.x * WG + t;
    const uint len = min(LENGTH(b), p.capacity);
    const uint base = span_begin(len);
    const uint run = ((len - base + p.n_chunks - 1u) / p.n_chunks + 3u) & ~3u;
    const uint start = min(base + g * run, len), stop = min(start + run, len);

    uint row_end[R], row_bh[R], row_i[R];
    uint kend = start;
    vec4 qv[R * DK4]; // the rows' queries times scale * log2(e)
    [[unroll]] for (uint rr = 0u; rr < R; rr++) {
        const uint r = r0 + rr;
        const bool ok = r < rows_total;
        row_i[rr] = ok ? r % p.tq : 0u;
        row_bh[rr] = b * p.heads + hkv * p.group + (ok ? r / p.tq : 0u);
        row_end[rr] = ok && len + row_i[rr] + 1u > p.tq ? len + row_i[rr] + 1u - p.tq : 0u;
        kend = max(kend, min(row_end[rr], stop));
        const uint qrow = (row_bh[rr] * p.tq + row_i[rr]) * DK;
        [[unroll]] for (uint e4 = 0u; e4 < DK4; e4++) {
            vec4 x = vec4(0.0);
            if (DK_VEC4 && !VKA_IS_16(Q_TYPE))
                x = q4_in[qrow / 4u + e4];
            else
                [[unroll]] for (uint cc = 0u; cc < 4u; cc++)
                    if (e4 * 4u + cc < DK)
                        x[cc] = ld_q(qrow + e4 * 4u + cc);
            qv[rr * DK4 + e4] = x * p.scale_log2;
        }
    }
    float m_run[R], l_run[R];
    vec4 o[R * DV4];
    [[unroll]] for (uint rr = 0u; rr < R; rr++)
        m_run[rr] = MASKED, l_run[rr] = 0.0;
    [[unroll]] for (uint n = 0u; n < R * DV4; n++)
        o[n] = vec4(0.0);
    const uint kvbase = zb * p.capacity;

    for (uint j0 = start; j0 < kend; j0 += 4u) {
        vec4 s[R];
        [[unroll]] for (uint u = 0u; u < 4u; u++) {
            const uint j = j0 + u;
            const bool in_range = j < kend;
            float x[R];
            [[unroll]] for (uint rr = 0u; rr < R; rr++)
                x[rr] = 0.0;
            if (K_I8_VEC16)
                [[unroll]] for (uint e16 = 0u; e16 < DK / 16u; e16++) {
                    const uvec4 w = in_range ? k16_w[(kvbase + j) * (DK / 16u) + e16] : uvec4(0u);
                    [[unroll]] for (uint c = 0u; c < 4u; c++)
                        [[unroll]] for (uint rr = 0u; rr < R; rr++)
                            x[rr] += dot(qv[rr * DK4 + 4u * e16 + c], int8x4(w[c]));
                }
            else if (K_VEC8)
                [[unroll]] for (uint e8 = 0u; e8 < DK / 8u; e8++) {
                    const uvec4 w = in_range ? k16_w[(kvbase + j) * (DK / 8u) + e8] : uvec4(0u);
                    const vec4 k = VKA_UNPACK4(K_TYPE, w.xy), k2 = VKA_UNPACK4(K_TYPE, w.zw);
                    [[unroll]] for (uint rr = 0u; rr < R; rr++)
                        x[rr] += dot(qv[rr * DK4 + 2u * e8], k);
                    [[unroll]] for (uint rr = 0u; rr < R; rr++)
                        x[rr] += dot(qv[rr * DK4 + 2u * e8 + 1u], k2);
                }
            else
                [[unroll]] for (uint e4 = 0u; e4 < DK4; e4++) {
                    const vec4 k = load4(DK_VEC4, (kvbase + j) * DK, e4, DK, in_range, true);
                    [[unroll]] for (uint rr = 0u; rr < R; rr++)
                        x[rr] += dot(qv[rr * DK4 + e4], k);
                }
            if (KV_I8 || SOFTCAP) {
                const float kq = k_scale(kvbase + j, in_range);
                [[unroll]] for (uint rr = 0u; rr < R; rr++)
                    x[rr] = finish_logit(x[rr], kq);
            }
            const uint vm_at = b * p.capacity + min(j, p.capacity - 1u);
            const bool vm_ok = !HAS_VALUE_MASK || (in_range && vka_mask_allows(VMASK(vm_at)));
            [[unroll]] for (uint rr = 0u; rr < R; rr++) {
                const bool ok = in_range && j < row_end[rr] && in_window(j, row_end[rr]) &&
                                vm_ok && !(x[rr] <= MASKED);
                s[rr][u] = ok ? x[rr] : MASKED;
            }
        }
        vec4 w[R];
        [[unroll]] for (uint rr = 0u; rr < R; rr++) {
            const float mt = max(max(m_run[rr], max(s[rr].x, s[rr].y)), max(s[rr].z, s[rr].w));
            const float alpha = exp2(m_run[rr] - mt);
            m_run[rr] = mt;
            const bvec4 masked = equal(floatBitsToUint(s[rr]), uvec4(floatBitsToUint(MASKED)));
            w[rr] = mix(exp2(mix(s[rr], vec4(mt), masked) - mt), vec4(0.0), masked);
            l_run[rr] = l_run[rr] * alpha + ((w[rr].x + w[rr].y) + (w[rr].z + w[rr].w));
            if (DROPOUT) {
                // the Philox word of keys j0..j0+3 as in the full SDPA: runs
                // start at multiples of 4
                const uvec4 bits =
                    philox4x32_10(uvec4(j0 >> 2u, row_i[rr], row_bh[rr], p.offset_mix),
                                  uvec2(p.seed_lo, p.seed_hi));
                w[rr] *= vec4(greaterThanEqual(bits >> 8u, uvec4(p.threshold)));
            }
            [[unroll]] for (uint e4 = 0u; e4 < DV4; e4++)
                o[rr * DV4 + e4] *= alpha;
        }
        [[unroll]] for (uint u = 0u; u < 4u; u++) { // 16-byte loads where they fit (K_VEC8)
            const uint j = j0 + u;
            const float vq = v_scale(kvbase + j, j < kend);
            if (V_VEC8)
                [[unroll]] for (uint e8 = 0u; e8 < DV / 8u; e8++) {
                    const uvec4 vw = j < kend ? v16_w[(kvbase + j) * (DV / 8u) + e8] : uvec4(0u);
                    const vec4 v = VKA_UNPACK4(V_TYPE, vw.xy), v2 = VKA_UNPACK4(V_TYPE, vw.zw);
                    [[unroll]] for (uint rr = 0u; rr < R; rr++) {
                        const vec4 wq = vec4(w[rr][u] * vq);
                        o[rr * DV4 + 2u * e8] = fma(wq, v, o[rr * DV4 + 2u * e8]);
                        o[rr * DV4 + 2u * e8 + 1u] = fma(wq, v2, o[rr * DV4 + 2u * e8 + 1u]);
                    }
                }
            else if (V_I8_VEC16)
                [[unroll]] for (uint e16 = 0u; e16 < DV / 16u; e16++) {
                    const uvec4 vw = j < kend ? v16_w[(kvbase + j) * (DV / 16u) + e16] : uvec4(0u);
                    [[unroll]] for (uint c = 0u; c < 4u; c++)
                        [[unroll]] for (uint rr = 0u; rr < R; rr++)
                            o[rr * DV4 + 4u * e16 + c] = fma(vec4(w[rr][u] * vq), int8x4(vw[c]),
                                                             o[rr * DV4 + 4u * e16 + c]);
                }
            else
                [[unroll]] for (uint e4 = 0u; e4 < DV4; e4++) {
                    const vec4 v = load4(DV_VEC4, (kvbase + j) * DV, e4, DV, j < kend, false);
                    [[unroll]] for (uint rr = 0u; rr < R; rr++)
                        o[rr * DV4 + e4] = fma(vec4(w[rr][u] * vq), v, o[rr * DV4 + e4]);
                }
        }
    }
    const uint out_stride = DV + 2u;
    [[unroll]] for (uint rr = 0u; rr < R; rr++)
        if (r0 + rr < rows_total) {
            const uint base = ((row_bh[rr] * p.tq + row_i[rr]) * p.n_chunks + g) * out_stride;
            [[unroll]] for (uint e4 = 0u; e4 < DV4; e4++)
                [[unroll]] for (uint cc = 0u; cc < 4u; cc++)
                    if (e4 * 4u + cc < DV)
                        part[base + e4 * 4u + cc] = o[rr * DV4 + e4][cc];
            part[base + DV] = m_run[rr];
            part[base + DV + 1u] = l_run[rr];
        }
}

void main()
{
    if (LANES)
        lanes_main();
    else
        tiles_main();
}
