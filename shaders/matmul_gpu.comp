#version 450
// Batched matmul of the GPU tuning, f32, f16 or bf16 operands and result (each
// chosen by a specialization constant, as in matmul_f16*.comp), f32 sums:
// C[b,h] = alpha * op(A[b,h]) @ op(B[b,h]) (+ bias row), the operation and
// push constants of shaders/common/matmul_body.glsl (same k/m splits, same
// f32 sums), shaped for GPUs:
// - 16-bit buffers are read as words of two elements (elem_type.glsl), so one
//   module serves devices with and without 16-bit storage and reads half the
//   bytes of f32; a 16-bit C is written a word at a time by the invocation that
//   owns both of its columns (columns in adjacent pairs), so no two
//   invocations share a word; the host sends C layouts with an odd row start,
//   and a split K, through an f32 scratch (src/ops/matmul.c);
// - global loads of four consecutive stored elements as one vec4 (16-bit: one
//   uvec2) where the host found the operand's offsets and strides multiples
//   of 4 (VEC_A, VEC_B); a group of four that crosses the end of a row or of
//   the dispatch's k range, or an unaligned operand, is read as scalars (same
//   values);
// - double-buffered shared tiles: the next BK step is read from global memory
//   into registers while the current one is multiplied, then stored into the
//   other buffer, so one barrier per step separates loads from reads;
// - TM x TN outputs per invocation (rows tr + i * BM / TM, columns
//   tc + j * BN / TN: reads of a shared row by neighbours hit distinct banks).
// Tile sizes are specialization constants the host picks from the device's
// limits (src/ops/matmul.c); nothing assumes a subgroup size. BM, BN and BK
// are multiples of 4. Out-of-range elements load as 0.
// Register budget (src/ops/register_budget.h): TM * TN sums + TM + TN
// operands + 4 * (LA + LB) prefetched floats + 12 scalars; at most 72 live
// values with the GPU tuning's 8 x 4 tiles (128x64x16: 68), 44 with the 4 x 4
// tiles the mobile profiles' budget of 64 keeps to (src/ops/gpu_tiles.c).
#extension GL_GOOGLE_include_directive : require
#include "matmul_iface.h"
#include "elem_type.glsl"

layout(constant_id = VKA_MATMUL_SPEC_BM) const uint BM = 64;
layout(constant_id = VKA_MATMUL_SPEC_BN) const uint BN = 64;
layout(constant_id = VKA_MATMUL_SPEC_BK) const uint BK = 16;
layout(constant_id = VKA_MATMUL_SPEC_TM) const uint TM = 4;
layout(constant_id = VKA_MATMUL_SPEC_TN) const uint TN = 4;
layout(constant_id = VKA_MATMUL_SPEC_TRANS_A) const bool TRANS_A = false;
layout(constant_id = VKA_MATMUL_SPEC_TRANS_B) const bool TRANS_B = false;
layout(constant_id = VKA_MATMUL_SPEC_HAS_BIAS) const bool HAS_BIAS = false;
layout(constant_id = VKA_MATMUL_SPEC_VEC_A) const bool VEC_A = false;
layout(constant_id = VKA_MATMUL_SPEC_VEC_B) const bool VEC_B = false;
layout(constant_id = VKA_MATMUL_SPEC_A_TYPE) const uint A_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_MATMUL_SPEC_B_TYPE) const uint B_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_MATMUL_SPEC_BIAS_TYPE) const uint BIAS_TYPE = VKA_ELEM_F32;
layout(constant_id = VKA_MATMUL_SPEC_C_TYPE) const uint C_TYPE = VKA_ELEM_F32;
// invocations = (BM / TM) * (BN / TN), set by the host
layout(local_size_x_id = VKA_MATMUL_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer ABuf { float a[]; };
layout(std430, binding = 0) readonly buffer ABuf4 { vec4 a4[]; };
layout(std430, binding = 0) readonly buffer ABufW { uint a_w[]; };
layout(std430, binding = 0) readonly buffer ABufW2 { uvec2 a_w2[]; };
layout(std430, binding = 1) readonly buffer BBuf { float b[]; };
layout(std430, binding = 1) readonly buffer BBuf4 { vec4 b4[]; };
layout(std430, binding = 1) readonly buffer BBufW { uint b_w[]; };
layout(std430, binding = 1) readonly buffer BBufW2 { uvec2 b_w2[]; };
layout(std430, binding = 2) readonly buffer BiasBuf { float bias[]; };
layout(std430, binding = 2) readonly buffer BiasBufW { uint bias_w[]; };
layout(std430, binding = 3) buffer CBuf { float c[]; };
layout(std430, binding = 3) buffer CBufW { uint c_w[]; };

layout(push_constant) uniform Push { VKA_MATMUL_PUSH } p;

const uint THREADS = (BM / TM) * (BN / TN);
// groups of four stored elements per tile, and per invocation
const uint QA = BM * BK / 4, QB = BN * BK / 4;
const uint LA = (QA + THREADS - 1) / THREADS, LB = (QB + THREADS - 1) / THREADS;

// two buffers of each tile, k-major; +1 padding keeps column reads on
// distinct banks
shared float As[2 * BK * (BM + 1)];
shared float Bs[2 * BK * (BN + 1)];

// Columns of an invocation's outputs: strided by BN / TN, or with a 16-bit
// C (f16, bf16) in adjacent pairs (2 * (tc + (j / 2) * (BN / TN)) + j % 2;
// TN is even).
const bool PAIRS = VKA_IS_16(C_TYPE);
uint col_of(uint tc, uint j)
{
    return PAIRS ? 2 * (tc + (j >> 1) * (BN / TN)) + (j & 1) : tc + j * (BN / TN);
}

float ld_a(uint i) { return VKA_LDW(A_TYPE, a, a_w, i); }
float ld_b(uint i) { return VKA_LDW(B_TYPE, b, b_w, i); }
float ld_bias(uint i) { return VKA_LDW(BIAS_TYPE, bias, bias_w, i); }
float ld_c(uint i) { return VKA_LDW(C_TYPE, c, c_w, i); }

// Four stored elements from `base` along the operand's contiguous axis; `n`
// of them (0..4) are in range, the others read as 0.
vec4 load4(bool is_a, bool vec, uint base, uint n)
{
    if (vec && n == 4) {
        if (is_a)
            return VKA_LDW4(A_TYPE, a4, a_w2, base >> 2);
        return VKA_LDW4(B_TYPE, b4, b_w2, base >> 2);
    }
    vec4 v = vec4(0.0);
    for (uint e = 0; e < n; e++)
        v[e] = is_a ? ld_a(base + e) : ld_b(base + e);
    return v;
}

// In range count of four elements starting at `first` below `limit`.
uint in_range(uint first, uint limit)
{
    return first >= limit ? 0u : min(limit - first, 4u);
}

// Group q of A's tile at k0 as stored: without TRANS_A rows of M, four k
// each; with it rows of k, four m each.
vec4 fetch_a(uint q, uint k0, uint row0, uint a_off)
{
    if (q >= QA)
        return vec4(0.0);
    if (TRANS_A) {
        const uint k = q / (BM / 4), m = (q % (BM / 4)) * 4;
        const uint gk = k0 + k, gm = row0 + m;
        const uint n = gk < p.k_end ? in_range(gm, p.m) : 0u;
        return load4(true, VEC_A, a_off + gk * p.lda + gm, n);
    }
    const uint m = q / (BK / 4), k = (q % (BK / 4)) * 4;
    const uint gm = row0 + m, gk = k0 + k;
    const uint n = gm < p.m ? in_range(gk, p.k_end) : 0u;
    return load4(true, VEC_A, a_off + gm * p.lda + gk, n);
}

void store_a(uint q, vec4 v, uint buf)
{
    if (q >= QA)
        return;
    const uint base = buf * BK * (BM + 1);
    if (TRANS_A) {
        const uint k = q / (BM / 4), m = (q % (BM / 4)) * 4;
        for (uint e = 0; e < 4; e++)
            As[base + k * (BM + 1) + m + e] = v[e];
    } else {
        const uint m = q / (BK / 4), k = (q % (BK / 4)) * 4;
        for (uint e = 0; e < 4; e++)
            As[base + (k + e) * (BM + 1) + m] = v[e];
    }
}

// Group q of B's tile: without TRANS_B rows of k, four n each; with it rows
// of N, four k each.
vec4 fetch_b(uint q, uint k0, uint col0, uint b_off)
{
    if (q >= QB)
        return vec4(0.0);
    if (TRANS_B) {
        const uint n = q / (BK / 4), k = (q % (BK / 4)) * 4;
        const uint gn = col0 + n, gk = k0 + k;
        const uint cnt = gn < p.n ? in_range(gk, p.k_end) : 0u;
        return load4(false, VEC_B, b_off + gn * p.ldb + gk, cnt);
    }
    const uint k = q / (BN / 4), n = (q % (BN / 4)) * 4;
    const uint gk = k0 + k, gn = col0 + n;
    const uint cnt = gk < p.k_end ? in_range(gn, p.n) : 0u;
    return load4(false, VEC_B, b_off + gk * p.ldb + gn, cnt);
}

void store_b(uint q, vec4 v, uint buf)
{
    if (q >= QB)
        return;
    const uint base = buf * BK * (BN + 1);
    if (TRANS_B) {
        const uint n = q / (BK / 4), k = (q % (BK / 4)) * 4;
        for (uint e = 0; e < 4; e++)
            Bs[base + (k + e) * (BN + 1) + n] = v[e];
    } else {
        const uint k = q / (BN / 4), n = (q % (BN / 4)) * 4;
        for (uint e = 0; e < 4; e++)
            Bs[base + k * (BN + 1) + n + e] = v[e];
    }
}

float out_value(float acc, uint ci, uint gn)
{
    float v = p.alpha * acc;
    if (p.accumulate != 0)
        v += ld_c(ci);
    else if (HAS_BIAS)
        v += ld_bias(gn);
    return v;
}

void main()
{
    const uint tid = gl_LocalInvocationID.x;
    const uint row0 = p.m_begin + gl_WorkGroupID.y * BM;
    const uint col0 = gl_WorkGroupID.x * BN;
    const uint z = gl_WorkGroupID.z;
    const uint bi = z / p.heads, hi = z % p.heads;
    const uint a_off = bi * p.a_batch + hi * p.a_head;
    const uint b_off = bi * p.b_batch + hi * p.b_head;
    const uint c_off = bi * p.c_batch + hi * p.c_head;
    const uint tr = tid / (BN / TN), tc = tid % (BN / TN);

    float acc[TM][TN];
    for (uint i = 0; i < TM; i++)
        for (uint j = 0; j < TN; j++)
            acc[i][j] = 0.0;

    vec4 ra[LA], rb[LB];
    for (uint l = 0; l < LA; l++)
        store_a(tid + l * THREADS, fetch_a(tid + l * THREADS, p.k_begin, row0, a_off), 0);
    for (uint l = 0; l < LB; l++)
        store_b(tid + l * THREADS, fetch_b(tid + l * THREADS, p.k_begin, col0, b_off), 0);
    barrier();

    uint cur = 0;
    for (uint k0 = p.k_begin; k0 < p.k_end; k0 += BK) {
        const bool more = k0 + BK < p.k_end;
        if (more) { // in flight while this step multiplies
            for (uint l = 0; l < LA; l++)
                ra[l] = fetch_a(tid + l * THREADS, k0 + BK, row0, a_off);
            for (uint l = 0; l < LB; l++)
                rb[l] = fetch_b(tid + l * THREADS, k0 + BK, col0, b_off);
        }
        const uint abase = cur * BK * (BM + 1), bbase = cur * BK * (BN + 1);
        for (uint k = 0; k < BK; k++) {
            float av[TM], bv[TN];
            for (uint i = 0; i < TM; i++)
                av[i] = As[abase + k * (BM + 1) + tr + i * (BM / TM)];
            for (uint j = 0; j < TN; j++)
                bv[j] = Bs[bbase + k * (BN + 1) + col_of(tc, j)];
            for (uint i = 0; i < TM; i++)
                for (uint j = 0; j < TN; j++)
                    acc[i][j] = fma(av[i], bv[j], acc[i][j]);
        }
        // The other buffer was last read in the previous step, which the
        // barrier below (of that step) closed.
        if (more) {
            for (uint l = 0; l < LA; l++)
                store_a(tid + l * THREADS, ra[l], cur ^ 1u);
            for (uint l = 0; l < LB; l++)
                store_b(tid + l * THREADS, rb[l], cur ^ 1u);
        }
        barrier();
        cur ^= 1u;
    }

    for (uint i = 0; i < TM; i++) {
        const uint gm = row0 + tr + i * (BM / TM);
        if (gm >= p.m)
            continue;
        for (uint j = 0; j < TN; j += (PAIRS ? 2 : 1)) {
            const uint gn = col0 + col_of(tc, j);
            if (gn >= p.n)
                continue;
            const uint ci = c_off + gm * p.ldc + gn;
            const float v = out_value(acc[i][j], ci, gn);
            if (!PAIRS) {
                c[ci] = v;
                continue;
            }
            // columns gn, gn + 1 are this invocation's and ci is even (the
            // host's rows_word_aligned); past N the high half keeps its bits
            const bool both = gn + 1 < p.n;
            uint w = VKA_PACK2(C_TYPE, vec2(v, both ? out_value(acc[i][j + 1], ci + 1, gn + 1) : 0.0));
            if (!both)
                w = (c_w[ci >> 1] & 0xffff0000u) | (w & 0xffffu);
            c_w[ci >> 1] = w;
        }
    }
}
