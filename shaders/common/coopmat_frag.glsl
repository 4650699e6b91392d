// 16x16 matrix fragments owned by a warp of 32 invocations, for kernels that
// run on cooperative matrices (COOPMAT_NV1: GL_NV_cooperative_matrix,
// COOPMAT_KHR: GL_KHR_cooperative_matrix; tensor cores) or on their emulation
// in plain GLSL (COOPMAT_EMU: any device, lavapipe included, so CI runs
// everything around the fragments: tiling, masks, softmax). COOPMAT_FAMILY
// (coopmat_ext.glsl) picks the back end. The kernel is written once against
// these names:
//   frag_acc        a 16x16 f32 accumulator; frag_acc_zero() is zeros
//   frag_a, frag_b  16x16 f16 operands A and B of a product (KHR types a
//                   matrix by its use; NV1 and the emulation have one type)
//   frag_load(f, S, off, ld, colmajor)  operand f (either) from shared uvec4
//                   array S (eight halves each): element (r, c) at uvec4 off
//                   + r * ld + c / 8, half c % 8, or with colmajor at off + c
//                   * ld + r / 8, half r % 8 (offsets and strides in elements
//                   of S, uvec4s, under NV1 and KHR alike; colmajor a
//                   constant)
//   frag_mad(a, b, c)  a * b + c, f32 sums of exact f16 products
//   frag_store(f, S, off, ld)  accumulator into shared float array S, row-major
//   warp_sync()     the warp's shared-memory writes are seen by the warp
//   WARP, LANE      the warp in the workgroup and the invocation in the warp
// The kernel declares its shared arrays, one `const uint NAME_ID` per array
// frag_load reads (0, 1, 2, ...), and `uvec4 frag_src(uint id, uint i)`
// returning element i of array `id`, then includes this file.
//
// The emulation keeps an accumulator as 8 floats per invocation (element e =
// LANE + 32 i) and an operand as where it lies in shared memory, read by
// frag_mad; its warp_sync is a workgroup barrier, so every warp_sync must be
// in uniform control flow of the whole workgroup (NV1's and KHR's need the
// warp's only). The two agree up to the order of fp32 additions. NV1's and
// KHR's warps are subgroups (WARP = gl_SubgroupID): the host fixes the
// subgroup at 32 for kernels that count 32 lanes a warp. COOPMAT_NV2 kernels
// get KHR's fragment types but the emulation's warps and warp_sync (their
// matrices are the workgroup's).
#ifndef VKA_COOPMAT_FRAG_GLSL
#define VKA_COOPMAT_FRAG_GLSL

#if COOPMAT_FAMILY == COOPMAT_NV1

#define frag_acc fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
#define frag_a fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define frag_b frag_a
#define frag_acc_zero() frag_acc(0.0)
#define frag_load(f, S, off, ld, colmajor) coopMatLoadNV(f, S, off, ld, colmajor)
#define frag_mad(a, b, c) coopMatMulAddNV(a, b, c)
#define frag_store(f, S, off, ld) coopMatStoreNV(f, S, off, ld, false)

#elif COOPMAT_HW // KHR's types (COOPMAT_NV2 kernels that use fragments too)

#define frag_acc coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define frag_a coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define frag_b coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define frag_acc_zero() frag_acc(0.0)
// the layout operand must be a constant: colmajor is a literal at every use
#define frag_load(f, S, off, ld, colmajor)                                     \
    coopMatLoad(f, S, off, ld,                                                 \
                (colmajor) ? gl_CooperativeMatrixLayoutColumnMajor             \
                           : gl_CooperativeMatrixLayoutRowMajor)
#define frag_mad(a, b, c) coopMatMulAdd(a, b, c)
#define frag_store(f, S, off, ld) coopMatStore(f, S, off, ld, gl_CooperativeMatrixLayoutRowMajor)

#endif

#if COOPMAT_FAMILY == COOPMAT_NV1 || COOPMAT_FAMILY == COOPMAT_KHR
#define warp_sync()                                                            \
    {                                                                          \
        subgroupMemoryBarrierShared();                                         \
        subgroupBarrier();                                                     \
    }
#define WARP gl_SubgroupID
#define LANE gl_SubgroupInvocationID
#define FRAG_LOOP [[unroll]]

#elif COOPMAT_HW
// COOPMAT_NV2 kernels multiply workgroup-scope matrices, which any warp may
// hold part of: a warp is 32 consecutive invocations (as emulated, whatever
// the subgroup) and warp_sync a workgroup barrier.
#define warp_sync()                                                            \
    {                                                                          \
        memoryBarrierShared();                                                 \
        barrier();                                                             \
    }
#define WARP (gl_LocalInvocationIndex / 32u)
#define LANE (gl_LocalInvocationIndex % 32u)
#define FRAG_LOOP [[unroll]]

#else

struct frag_acc {
    float e[8];
};
struct frag_op { // where an operand lies; A and B alike
    uint src, off, ld;
    bool colmajor;
};
#define frag_a frag_op
#define frag_b frag_op
// For vkattn's own tests (vkattn_context_advanced.coopmat_test_fault): the
// first element of every product off by one, a device that computes wrong
// for the self-test to refuse (ops/coopmat_selftest.h). FRAG_FAULT_ID is the
// kernel's spec id for it.
layout(constant_id = FRAG_FAULT_ID) const bool FRAG_FAULT = false;
#define WARP (gl_LocalInvocationIndex / 32u)
#define LANE (gl_LocalInvocationIndex % 32u)
#define FRAG_LOOP [[dont_unroll]]

frag_acc frag_acc_zero()
{
    frag_acc f;
    [[unroll]] for (uint i = 0u; i < 8u; i++)
        f.e[i] = 0.0;
    return f;
}

#define frag_load(f, S, off, ld, colmajor) f = frag_op(S##_ID, off, ld, colmajor)

float frag_elem(frag_op f, uint r, uint c)
{
    const uint major = f.colmajor ? c : r, minor = f.colmajor ? r : c;
    const uvec4 w = frag_src(f.src, f.off + major * f.ld + minor / 8u);
    const vec2 pair = unpackHalf2x16(w[(minor % 8u) / 2u]);
    return (minor & 1u) != 0u ? pair.y : pair.x;
}

frag_acc frag_mad(frag_a a, frag_b b, frag_acc c)
{
    [[dont_unroll]] for (uint i = 0u; i < 8u; i++) {
        const uint e = LANE + 32u * i, r = e / 16u, col = e % 16u;
        float s = c.e[i];
        for (uint k = 0u; k < 16u; k++)
            s = fma(frag_elem(a, r, k), frag_elem(b, k, col), s);
        c.e[i] = FRAG_FAULT && e == 0u ? s + 1.0 : s;
    }
    return c;
}

#define frag_store(f, S, off, ld)                                              \
    [[unroll]] for (uint fi_ = 0u; fi_ < 8u; fi_++) {                           \
        const uint fe_ = LANE + 32u * fi_;                                     \
        S[(off) + (fe_ / 16u) * (ld) + fe_ % 16u] = (f).e[fi_];                \
    }
#define warp_sync()                                                            \
    {                                                                          \
        memoryBarrierShared();                                                 \
        barrier();                                                             \
    }

#endif

#endif
