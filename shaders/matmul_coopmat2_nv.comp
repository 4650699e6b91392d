#version 450
// Batched matmul on GL_NV_cooperative_matrix2 (the path llama.cpp's mul_mm_cm2
// takes on NVIDIA): workgroup-scope matrices, so the compiler stages A and B
// through shared memory itself, fed by tensor-layout loads that zero-fill
// what lies past M, N and K. Host interface of matmul_coopmat_nv.comp
// (shaders/common/matmul_coopmat_decl.glsl: bindings, push constants,
// specialization constants, workgroup, dispatch grid), and its output rules
// (matmul_coopmat_io.glsl), so the host swaps one module for the other.
// - The workgroup owns BM x BN of C as one accumulator; each BK step loads an
//   A tile (BM x BK) and a B tile (BK x BN) whole and multiplies.
// - A tensor load must start 16-byte aligned: an operand whose offsets and
//   strides the host found multiples of 8 halves (VEC_A, VEC_B: its binding
//   16-byte aligned too) is read as uvec4s from its (b, h) offset / 8 through
//   a tensor layout (outer x inner, stride ld; a transposed operand through
//   the transposing view). Any other operand is staged in shared memory as
//   matmul_coopmat_nv.comp stages it (one buffer) and loaded from there.
// - The result leaves in FM x FN rounds: a per-element op copies one 16x16
//   square per warp into that warp's square of Cs, and the warps write their
//   squares with matmul_coopmat_io.glsl's write_square.
// Register budget: the accumulator is BM x BN over the workgroup, FM * FN *
// 8 f32 per invocation, as matmul_coopmat_nv.comp's fragments; its A and B
// tiles are (BM + BN) * BK / THREADS halves (16 words at 128 x 128 x 32),
// under its operand fragments and prefetched groups (40 words).
// Shared memory: Cs as matmul_coopmat_nv.comp's, and single-buffered As or
// Bs only for a staged operand, plus what the implementation reserves for
// workgroup scope (cooperativeMatrixWorkgroupScopeReservedSharedMemory).
// Needs VK_NV_cooperative_matrix2 (cooperativeMatrixWorkgroupScope,
// cooperativeMatrixFlexibleDimensions, cooperativeMatrixTensorAddressing,
// cooperativeMatrixPerElementOperations) with a workgroup-scope f16 x f16 ->
// f32 shape whose granularities divide BM, BN and BK at workgroupInvocations
// = THREADS; SPIR-V 1.6 (glslc --target-env=vulkan1.3).
// UNVERIFIED: compiled and validated only; no device here has the extension.
// The host runs it only after an on-device known-answer test.
#extension GL_GOOGLE_include_directive : require

#define COOPMAT_FAMILY COOPMAT_NV2
#include "coopmat_ext.glsl"
#extension GL_EXT_control_flow_attributes : require
#include "matmul_coopmat_decl.glsl"

// Single buffers, only for a staged operand (size 1 otherwise).
shared uvec4 As[VEC_A ? 1u : A_SIZE];
shared uvec4 Bs[VEC_B ? 1u : B_SIZE];
shared float Cs[WARPS_M * WARPS_N * 256];

#include "coopmat_frag.glsl"
// Warps of SG consecutive invocations (write_square's lanes): no matrix here
// is a subgroup's, so the subgroup's own numbering is not needed.
#undef WARP
#undef LANE
#define WARP (gl_LocalInvocationIndex / SG)
#define LANE (gl_LocalInvocationIndex % SG)
#include "matmul_coopmat_io.glsl"

const uint NW = WARPS_M * WARPS_N; // warps, and squares of C per round
const uint SQ_N = BN / 16;         // squares along a row of the tile

#define TILE_ACC coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>
#define TILE_A coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA>
#define TILE_B coopmat<float16_t, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB>
#define CLAMP gl_CooperativeMatrixClampModeConstantNV // out of range: 0 (clampValue)

// Element (r, c) of the accumulator into its warp's square of Cs if its
// square is one of round t's (squares numbered row-major over the tile).
// Called at least once per element: a plain store, so repeats are harmless.
float stage_square(const in uint r, const in uint c, const in float e, const in uint t)
{
    const uint q = (r / 16u) * SQ_N + c / 16u;
    if (r < BM && c < BN && q / NW == t)
        Cs[(q % NW) * 256u + (r % 16u) * 16u + c % 16u] = e;
    return e;
}

void main()
{
    const uint tid = gl_LocalInvocationID.x;
    const uint warp = WARP;
    const uint row0 = p.m_begin + gl_WorkGroupID.y * BM;
    const uint col0 = gl_WorkGroupID.x * BN;
    const uint z = gl_WorkGroupID.z;
    const uint bi = z / p.heads, hi = z % p.heads;
    const uint a_off = bi * p.a_batch + hi * p.a_head;
    const uint b_off = bi * p.b_batch + hi * p.b_head;
    const uint c_off = bi * p.c_batch + hi * p.c_head;

    // Stored A is M x K (K x M transposed), rows ending at m and k_end; B is
    // K x N (N x K). Dimension 0 is the stored rows, 1 the stored columns
    // (ld >= stored columns: the layout's stride rule).
    tensorLayoutNV<2, CLAMP> la = createTensorLayoutNV(2, CLAMP);
    la = setTensorLayoutDimensionNV(la, TRANS_A ? p.k_end : p.m, TRANS_A ? p.m : p.k_end);
    la = setTensorLayoutStrideNV(la, p.lda, 1);
    tensorLayoutNV<2, CLAMP> lb = createTensorLayoutNV(2, CLAMP);
    lb = setTensorLayoutDimensionNV(lb, TRANS_B ? p.n : p.k_end, TRANS_B ? p.k_end : p.n);
    lb = setTensorLayoutStrideNV(lb, p.ldb, 1);
    tensorViewNV<2, false, 1, 0> transposed = createTensorViewNV(2, false, 1, 0);

    TILE_ACC acc = TILE_ACC(0.0);
    for (uint k0 = p.k_begin; k0 < p.k_end; k0 += BK) {
        if (!VEC_A || !VEC_B) {
            barrier(); // the previous step's loads from As and Bs are done
            if (!VEC_A)
                [[unroll]] for (uint l = 0; l < LA; l++)
                    store8(true, tid + l * THREADS,
                           fetch_a(tid + l * THREADS, k0, row0, a_off), 0u);
            if (!VEC_B)
                [[unroll]] for (uint l = 0; l < LB; l++)
                    store8(false, tid + l * THREADS,
                           fetch_b(tid + l * THREADS, k0, col0, b_off), 0u);
            barrier();
        }
        TILE_A ta;
        if (VEC_A && TRANS_A)
            coopMatLoadTensorNV(ta, a_w4, a_off / 8u, sliceTensorLayoutNV(la, k0, BK, row0, BM),
                                transposed);
        else if (VEC_A)
            coopMatLoadTensorNV(ta, a_w4, a_off / 8u, sliceTensorLayoutNV(la, row0, BM, k0, BK));
        else if (TRANS_A) // staged K x M
            coopMatLoad(ta, As, 0u, A_LD, gl_CooperativeMatrixLayoutColumnMajor);
        else
            coopMatLoad(ta, As, 0u, A_LD, gl_CooperativeMatrixLayoutRowMajor);
        TILE_B tb;
        if (VEC_B && TRANS_B)
            coopMatLoadTensorNV(tb, b_w4, b_off / 8u, sliceTensorLayoutNV(lb, col0, BN, k0, BK),
                                transposed);
        else if (VEC_B)
            coopMatLoadTensorNV(tb, b_w4, b_off / 8u, sliceTensorLayoutNV(lb, k0, BK, col0, BN));
        else if (TRANS_B) // staged N x K
            coopMatLoad(tb, Bs, 0u, B_LD, gl_CooperativeMatrixLayoutColumnMajor);
        else
            coopMatLoad(tb, Bs, 0u, B_LD, gl_CooperativeMatrixLayoutRowMajor);
        acc = coopMatMulAdd(ta, tb, acc);
    }

    const uint sq = warp * 256u;
    for (uint t = 0; t < FM * FN; t++) {
        barrier(); // Cs is free (the previous round was written out)
        coopMatPerElementNV(acc, acc, stage_square, t);
        barrier();
        const uint q = t * NW + warp;
        write_square(sq, row0 + (q / SQ_N) * 16u, col0 + (q % SQ_N) * 16u, c_off);
    }
}
