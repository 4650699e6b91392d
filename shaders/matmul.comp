#version 450
// Batched matmul: C[b,h] = alpha * op(A[b,h]) @ op(B[b,h]) (+ bias row).
// Tiled in shared memory (BM x BK of A, BK x BN of B per step) and register
// blocked (TM x TN outputs per invocation). Tile sizes are specialization
// constants the host picks from the device's limits; nothing here assumes a
// subgroup size. Out-of-range elements load as 0, so any M, N, K >= 1 works.
// One dispatch covers k in [k_begin, k_end); with `accumulate` it adds to C, so
// the host can split a long K over several dispatches, and rows [m_begin, M)
// start at workgroup y = 0, so it can split M for a watchdog budget (see
// src/ops/matmul.c). Either split leaves every output's sum order unchanged.
#extension GL_GOOGLE_include_directive : require
#include "matmul_iface.h"

// specialization constants: ids and meanings in matmul_iface.h
layout(constant_id = VKA_MATMUL_SPEC_BM) const uint BM = 64;
layout(constant_id = VKA_MATMUL_SPEC_BN) const uint BN = 64;
layout(constant_id = VKA_MATMUL_SPEC_BK) const uint BK = 16;
layout(constant_id = VKA_MATMUL_SPEC_TM) const uint TM = 4;
layout(constant_id = VKA_MATMUL_SPEC_TN) const uint TN = 4;
layout(constant_id = VKA_MATMUL_SPEC_TRANS_A) const bool TRANS_A = false;
layout(constant_id = VKA_MATMUL_SPEC_TRANS_B) const bool TRANS_B = false;
layout(constant_id = VKA_MATMUL_SPEC_HAS_BIAS) const bool HAS_BIAS = false;
// invocations = (BM / TM) * (BN / TN), set by the host
layout(local_size_x_id = VKA_MATMUL_SPEC_WG, local_size_y = 1, local_size_z = 1) in;

layout(std430, binding = 0) readonly buffer ABuf { float a[]; };
layout(std430, binding = 1) readonly buffer BBuf { float b[]; };
layout(std430, binding = 2) readonly buffer BiasBuf { float bias[]; };
layout(std430, binding = 3) buffer CBuf { float c[]; };

layout(push_constant) uniform Push { VKA_MATMUL_PUSH } p;

// +1 padding keeps column reads of a tile on distinct banks on GPUs
shared float As[BK * (BM + 1)];
shared float Bs[BK * (BN + 1)];

void main()
{
    const uint threads = (BM / TM) * (BN / TN);
    const uint tid = gl_LocalInvocationID.x;
    const uint row0 = p.m_begin + gl_WorkGroupID.y * BM;
    const uint col0 = gl_WorkGroupID.x * BN;
    const uint z = gl_WorkGroupID.z;
    const uint bi = z / p.heads;
    const uint hi = z % p.heads;
    const uint a_off = bi * p.a_batch + hi * p.a_head;
    const uint b_off = bi * p.b_batch + hi * p.b_head;
    const uint c_off = bi * p.c_batch + hi * p.c_head;

    // this invocation's rows: tr + i * (BM / TM). With BM == TM every invocation
    // shares all rows, so A reads are uniform (broadcasts, not gathers, on
    // SIMD-across-invocations implementations such as lavapipe).
    const uint tr = (BM == TM) ? 0 : tid / (BN / TN);
    const uint tc = tid % (BN / TN); // columns: tc + j * (BN / TN)

    float acc[TM][TN];
    for (uint i = 0; i < TM; i++)
        for (uint j = 0; j < TN; j++)
            acc[i][j] = 0.0;

    for (uint k0 = p.k_begin; k0 < p.k_end; k0 += BK) {
        // Each element of the tiles is loaded once; consecutive invocations read
        // consecutive addresses of the stored (possibly transposed) matrix.
        for (uint idx = tid; idx < BM * BK; idx += threads) {
            uint m, k;
            if (TRANS_A) { k = idx / BM; m = idx % BM; }
            else         { m = idx / BK; k = idx % BK; }
            uint gm = row0 + m, gk = k0 + k;
            float v = 0.0;
            if (gm < p.m && gk < p.k_end)
                v = TRANS_A ? a[a_off + gk * p.lda + gm] : a[a_off + gm * p.lda + gk];
            As[k * (BM + 1) + m] = v;
        }
        for (uint idx = tid; idx < BN * BK; idx += threads) {
            uint n, k;
            if (TRANS_B) { n = idx / BK; k = idx % BK; }
            else         { k = idx / BN; n = idx % BN; }
            uint gn = col0 + n, gk = k0 + k;
            float v = 0.0;
            if (gn < p.n && gk < p.k_end)
                v = TRANS_B ? b[b_off + gn * p.ldb + gk] : b[b_off + gk * p.ldb + gn];
            Bs[k * (BN + 1) + n] = v;
        }
        barrier();

        for (uint k = 0; k < BK; k++) {
            float av[TM], bv[TN];
            for (uint i = 0; i < TM; i++)
                av[i] = As[k * (BM + 1) + tr + i * (BM / TM)];
            for (uint j = 0; j < TN; j++)
                bv[j] = Bs[k * (BN + 1) + tc + j * (BN / TN)];
            for (uint i = 0; i < TM; i++)
                for (uint j = 0; j < TN; j++)
                    acc[i][j] = fma(av[i], bv[j], acc[i][j]);
        }
        barrier();
    }

    for (uint i = 0; i < TM; i++) {
        uint gm = row0 + tr + i * (BM / TM);
        if (gm >= p.m)
            continue;
        for (uint j = 0; j < TN; j++) {
            uint gn = col0 + tc + j * (BN / TN);
            if (gn >= p.n)
                continue;
            const uint ci = c_off + gm * p.ldc + gn;
            float v = p.alpha * acc[i][j];
            if (p.accumulate != 0)
                v += c[ci];
            else if (HAS_BIAS)
                v += bias[gn];
            c[ci] = v;
        }
    }
}
