// Batched matmul on 16x16 matrix fragments, shared by
// shaders/matmul_coopmat_nv.comp (COOPMAT_NV1: GL_NV_cooperative_matrix,
// tensor cores on NVIDIA), matmul_coopmat_khr.comp (COOPMAT_KHR:
// GL_KHR_cooperative_matrix) and matmul_coopmat_emu.comp (COOPMAT_EMU: the
// fragments emulated in plain GLSL, so CI runs this file on lavapipe);
// coopmat_frag.glsl has the fragment names. C[b,h] = alpha * op(A[b,h]) @
// op(B[b,h]) (+ bias row), f16 A and B, f32 sums, f32, f16 or bf16 bias and
// C, with the push constants, k/m splits and output rules of matmul_gpu.comp
// (so the host swaps one pipeline for the other; src/ops/matmul.c).
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
#include "matmul_coopmat_decl.glsl"

shared uvec4 As[2 * A_SIZE];
shared uvec4 Bs[2 * B_SIZE];
shared float Cs[WARPS_M * WARPS_N * 256];

#if !COOPMAT_HW
const uint As_ID = 0u, Bs_ID = 1u; // the arrays frag_load reads
uvec4 frag_src(uint id, uint i) { return id == As_ID ? As[i] : Bs[i]; }
#endif
#define FRAG_FAULT_ID VKA_COOPMAT_SPEC_FAULT
#include "coopmat_frag.glsl"

#include "matmul_coopmat_io.glsl"

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
