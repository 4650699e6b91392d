// Batched matmul on 16x16 matrix fragments, shared by
// shaders/matmul_coopmat_nv.comp (COOPMAT_NV1: GL_NV_cooperative_matrix,
// tensor cores on NVIDIA), matmul_coopmat_khr.comp (COOPMAT_KHR:
// GL_KHR_cooperative_matrix) and matmul_coopmat_emu.comp (COOPMAT_EMU: the
// fragments emulated in plain GLSL, so CI runs this file on lavapipe);
// coopmat_frag.glsl has the fragment names. C[b,h] = alpha * op(A[b,h]) @
// op(B[b,h]) (+ bias row), f16 A and B, f32 sums, f32 or f16 C, with the push
// constants, k/m splits and output rules of matmul_gpu.comp (so the host swaps
// one pipeline for the other; src/ops/matmul.c).
// - A workgroup of WARPS_M x WARPS_N warps owns a BM x BN block of C; a warp
//   owns (BM / WARPS_M) x (BN / WARPS_N) of it, as FM x FN 16x16 f32
//   accumulator fragments. The hardware kernels' warps are subgroups of SG
//   invocations (the host requires a fixed subgroup size); the emulation's
//   are 32 invocations, whatever the subgroup.
// - Each BK step stages A's and B's tiles in shared memory as f16, in their
//   stored orientation (a transposed operand is loaded column-major by the
//   fragment load, not transposed by hand). Out-of-range elements stage as 0,
//   so edge tiles never read out of bounds and add nothing. Double-buffered:
//   the next step's tiles are fetched into registers while this one
//   multiplies, then stored into the other buffer, one barrier per step.
// - Global reads are eight halves (one uvec4) where the host found the
//   operand's offsets and strides multiples of 8 (VEC_A, VEC_B) and the
//   group is in range; else halves one by one (same values).
// - Results leave through a 16x16 f32 staging square per warp, so the output
//   rules (alpha, bias, accumulate, bounds, f16 words) are plain code.
// - Every invocation runs every loop and warp_sync (the emulation's
//   warp_sync is a workgroup barrier: uniform control flow of the workgroup).
// Register budget (src/ops/register_budget.h, vka_matmul_coopmat_live_values):
// FM * FN fragments of 8 f32 (a 16x16 fragment over 32 lanes) + (FM + FN)
// operand fragments of 4 words (emulated: 4 scalars) + the prefetched groups
// (LA + LB uvec4s) + 12 scalars: 64 + 24 + 16 + 12 = 116 with the largest
// tiles src/ops/gpu_tiles.c chooses (FM 2, FN 4, LA = LB = 2).
#include "coopmat_ext.glsl"
#extension GL_EXT_control_flow_attributes : require
#include "matmul_iface.h"

layout(constant_id = VKA_COOPMAT_SPEC_BM) const uint BM = 128;
layout(constant_id = VKA_COOPMAT_SPEC_BN) const uint BN = 128;
layout(constant_id = VKA_COOPMAT_SPEC_BK) const uint BK = 32;
layout(constant_id = VKA_COOPMAT_SPEC_WARPS_M) const uint WARPS_M = 4;
layout(constant_id = VKA_COOPMAT_SPEC_WARPS_N) const uint WARPS_N = 2;
#if COOPMAT_HW
layout(constant_id = VKA_COOPMAT_SPEC_SUBGROUP) const uint SG = 32;
#else
const uint SG = 32; // the emulation's warps (coopmat_frag.glsl)
#endif
layout(constant_id = VKA_COOPMAT_SPEC_TRANS_A) const bool TRANS_A = false;
layout(constant_id = VKA_COOPMAT_SPEC_TRANS_B) const bool TRANS_B = false;
layout(constant_id = VKA_COOPMAT_SPEC_HAS_BIAS) const bool HAS_BIAS = false;
layout(constant_id = VKA_COOPMAT_SPEC_BIAS_F16) const bool BIAS_F16 = false;
layout(constant_id = VKA_COOPMAT_SPEC_C_F16) const bool C_F16 = false;
layout(constant_id = VKA_COOPMAT_SPEC_VEC_A) const bool VEC_A = false;
layout(constant_id = VKA_COOPMAT_SPEC_VEC_B) const bool VEC_B = false;
// invocations = WARPS_M * WARPS_N * SG, set by the host
layout(local_size_x_id = VKA_COOPMAT_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer ABufW { uint a_w[]; };
layout(std430, binding = 0) readonly buffer ABufW4 { uvec4 a_w4[]; };
layout(std430, binding = 1) readonly buffer BBufW { uint b_w[]; };
layout(std430, binding = 1) readonly buffer BBufW4 { uvec4 b_w4[]; };
layout(std430, binding = 2) readonly buffer BiasBuf { float bias[]; };
layout(std430, binding = 2) readonly buffer BiasBufW { uint bias_w[]; };
layout(std430, binding = 3) buffer CBuf { float c[]; };
layout(std430, binding = 3) buffer CBufW { uint c_w[]; };

layout(push_constant) uniform Push { VKA_MATMUL_PUSH } p;

const uint THREADS = WARPS_M * WARPS_N * SG;
const uint FM = BM / (WARPS_M * 16), FN = BN / (WARPS_N * 16);
// Shared tiles in stored orientation, rows padded by 8 halves (16 bytes: the
// fragment loads' alignment, and rows off each other's banks), two buffers
// each; held as uvec4s (eight halves), so a staged group is one store and
// the fragment loads count offsets and strides in uvec4s.
const uint A_ROWS = TRANS_A ? BK : BM, A_COLS = TRANS_A ? BM : BK;
const uint B_ROWS = TRANS_B ? BN : BK, B_COLS = TRANS_B ? BK : BN;
const uint A_LD = A_COLS / 8 + 1, B_LD = B_COLS / 8 + 1; // in uvec4s
const uint A_SIZE = A_ROWS * A_LD, B_SIZE = B_ROWS * B_LD;
// groups of eight stored halves per tile, and per invocation
const uint QA = A_ROWS * A_COLS / 8, QB = B_ROWS * B_COLS / 8;
const uint LA = (QA + THREADS - 1) / THREADS, LB = (QB + THREADS - 1) / THREADS;

shared uvec4 As[2 * A_SIZE];
shared uvec4 Bs[2 * B_SIZE];
shared float Cs[WARPS_M * WARPS_N * 256];

#if !COOPMAT_HW
const uint As_ID = 0u, Bs_ID = 1u; // the arrays frag_load reads
uvec4 frag_src(uint id, uint i) { return id == As_ID ? As[i] : Bs[i]; }
#endif
#include "coopmat_frag.glsl"

float half_at(uint word, uint i)
{
    const vec2 v = unpackHalf2x16(word);
    return (i & 1u) != 0 ? v.y : v.x;
}
float ld_bias(uint i) { return BIAS_F16 ? half_at(bias_w[i >> 1], i) : bias[i]; }
float ld_c(uint i) { return C_F16 ? half_at(c_w[i >> 1], i) : c[i]; }

uint pack2(float x, float y) { return packHalf2x16(vec2(x, y)); }

// Eight stored halves of one operand from element `base`, `n` (0..8) of them
// in range (the rest 0), as four words of two halves.
uvec4 load8(bool is_a, bool vec, uint base, uint n)
{
    if (vec && n == 8)
        return is_a ? a_w4[base >> 3] : b_w4[base >> 3];
    float v[8];
    for (uint e = 0; e < 8; e++) {
        const uint i = base + e;
        v[e] = e < n ? half_at(is_a ? a_w[i >> 1] : b_w[i >> 1], i) : 0.0;
    }
    return uvec4(pack2(v[0], v[1]), pack2(v[2], v[3]), pack2(v[4], v[5]), pack2(v[6], v[7]));
}

uint in_range(uint first, uint limit)
{
    return first >= limit ? 0u : min(limit - first, 8u);
}

// Group q of a tile at depth k0: `rows` stored rows of `cols` halves; row r
// of the tile is stored row (row0 + r), column c stored column (col0 + c),
// with `row_end`/`col_end` the stored extents.
uvec4 fetch(bool is_a, bool vec, uint q, uint cols, uint row0, uint col0, uint row_end,
            uint col_end, uint off, uint ld)
{
    const uint r = q / (cols / 8), cc = (q % (cols / 8)) * 8;
    const uint gr = row0 + r, gc = col0 + cc;
    const uint n = gr < row_end ? in_range(gc, col_end) : 0u;
    return load8(is_a, vec, off + gr * ld + gc, n);
}

uvec4 fetch_a(uint q, uint k0, uint row0, uint off)
{
    if (q >= QA)
        return uvec4(0);
    // stored A is M x K (K x M transposed); rows of M end at p.m, k at k_end
    return TRANS_A ? fetch(true, VEC_A, q, A_COLS, k0, row0, p.k_end, p.m, off, p.lda)
                   : fetch(true, VEC_A, q, A_COLS, row0, k0, p.m, p.k_end, off, p.lda);
}

uvec4 fetch_b(uint q, uint k0, uint col0, uint off)
{
    if (q >= QB)
        return uvec4(0);
    return TRANS_B ? fetch(false, VEC_B, q, B_COLS, col0, k0, p.n, p.k_end, off, p.ldb)
                   : fetch(false, VEC_B, q, B_COLS, k0, col0, p.k_end, p.n, off, p.ldb);
}

void store8(bool is_a, uint q, uvec4 w, uint buf)
{
    if (is_a && q < QA)
        As[buf * A_SIZE + (q / (A_COLS / 8)) * A_LD + q % (A_COLS / 8)] = w;
    else if (!is_a && q < QB)
        Bs[buf * B_SIZE + (q / (B_COLS / 8)) * B_LD + q % (B_COLS / 8)] = w;
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

// Writes the 16x16 square at (gm0, gn0) of C from this warp's staging
// square `sq` of Cs.
void write_square(uint sq, uint gm0, uint gn0, uint c_off)
{
    const uint lane = LANE;
    if (!C_F16) {
        for (uint e = lane; e < 256; e += SG) {
            const uint gm = gm0 + e / 16, gn = gn0 + e % 16;
            if (gm < p.m && gn < p.n) {
                const uint ci = c_off + gm * p.ldc + gn;
                c[ci] = out_value(Cs[sq + e], ci, gn);
            }
        }
        return;
    }
    // f16 C: a word (two adjacent columns) per write; the host's
    // rows_word_aligned makes every ci of an even column even, and past N
    // the high half keeps its bits
    for (uint e = lane; e < 128; e += SG) {
        const uint r = e / 8, cp = (e % 8) * 2;
        const uint gm = gm0 + r, gn = gn0 + cp;
        if (gm >= p.m || gn >= p.n)
            continue;
        const uint ci = c_off + gm * p.ldc + gn;
        const bool both = gn + 1 < p.n;
        const float lo = out_value(Cs[sq + r * 16 + cp], ci, gn);
        const float hi = both ? out_value(Cs[sq + r * 16 + cp + 1], ci + 1, gn + 1) : 0.0;
        uint w = packHalf2x16(vec2(lo, hi));
        if (!both)
            w = (c_w[ci >> 1] & 0xffff0000u) | (w & 0xffffu);
        c_w[ci >> 1] = w;
    }
}

void main()
{
    const uint tid = gl_LocalInvocationID.x;
    const uint warp = WARP;
    const uint wm = warp / WARPS_N, wn = warp % WARPS_N;
    const uint row0 = p.m_begin + gl_WorkGroupID.y * BM;
    const uint col0 = gl_WorkGroupID.x * BN;
    const uint z = gl_WorkGroupID.z;
    const uint bi = z / p.heads, hi = z % p.heads;
    const uint a_off = bi * p.a_batch + hi * p.a_head;
    const uint b_off = bi * p.b_batch + hi * p.b_head;
    const uint c_off = bi * p.c_batch + hi * p.c_head;

    frag_acc acc[FM * FN];
    for (uint f = 0; f < FM * FN; f++)
        acc[f] = frag_acc_zero();

    uvec4 ra[LA], rb[LB];
    [[unroll]] for (uint l = 0; l < LA; l++)
        store8(true, tid + l * THREADS, fetch_a(tid + l * THREADS, p.k_begin, row0, a_off), 0);
    [[unroll]] for (uint l = 0; l < LB; l++)
        store8(false, tid + l * THREADS, fetch_b(tid + l * THREADS, p.k_begin, col0, b_off), 0);
    barrier();

    uint cur = 0;
    for (uint k0 = p.k_begin; k0 < p.k_end; k0 += BK) {
        const bool more = k0 + BK < p.k_end;
        if (more) { // in flight while this step multiplies
            [[unroll]] for (uint l = 0; l < LA; l++)
                ra[l] = fetch_a(tid + l * THREADS, k0 + BK, row0, a_off);
            [[unroll]] for (uint l = 0; l < LB; l++)
                rb[l] = fetch_b(tid + l * THREADS, k0 + BK, col0, b_off);
        }
        const uint abase = cur * A_SIZE, bbase = cur * B_SIZE;
        [[unroll]] for (uint kk = 0; kk < BK; kk += 16) {
            frag_a fa[FM];
            frag_b fb[FN];
            [[unroll]] for (uint i = 0; i < FM; i++) {
                const uint m = wm * (BM / WARPS_M) + i * 16;
                // element (m, k) of the tile: row-major at row m, column k,
                // or stored transposed (k-major) at row k, column m
                if (TRANS_A)
                    frag_load(fa[i], As, abase + kk * A_LD + m / 8, A_LD, true);
                else
                    frag_load(fa[i], As, abase + m * A_LD + kk / 8, A_LD, false);
            }
            [[unroll]] for (uint j = 0; j < FN; j++) {
                const uint n = wn * (BN / WARPS_N) + j * 16;
                if (TRANS_B)
                    frag_load(fb[j], Bs, bbase + n * B_LD + kk / 8, B_LD, true);
                else
                    frag_load(fb[j], Bs, bbase + kk * B_LD + n / 8, B_LD, false);
            }
            [[unroll]] for (uint i = 0; i < FM; i++)
                [[unroll]] for (uint j = 0; j < FN; j++)
                    acc[i * FN + j] = frag_mad(fa[i], fb[j], acc[i * FN + j]);
        }
        // The other buffer was last read in the previous step, which the
        // barrier below (of that step) closed.
        if (more) {
            [[unroll]] for (uint l = 0; l < LA; l++)
                store8(true, tid + l * THREADS, ra[l], cur ^ 1u);
            [[unroll]] for (uint l = 0; l < LB; l++)
                store8(false, tid + l * THREADS, rb[l], cur ^ 1u);
        }
        barrier();
        cur ^= 1u;
    }

    const uint sq = warp * 256;
    for (uint i = 0; i < FM; i++) {
        for (uint j = 0; j < FN; j++) {
            frag_store(acc[i * FN + j], Cs, sq, 16);
            warp_sync();
            write_square(sq, row0 + wm * (BM / WARPS_M) + i * 16,
                         col0 + wn * (BN / WARPS_N) + j * 16, c_off);
            // the square is reused by the next fragment
#if COOPMAT_HW
            subgroupBarrier();
#else
            warp_sync();
#endif
        }
    }
}
