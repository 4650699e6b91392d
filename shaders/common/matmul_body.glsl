// The body of the batched matmul kernels (matmul.comp, matmul_f16.comp,
// matmul_f16_packed.comp): C[b,h] = alpha * op(A[b,h]) @ op(B[b,h]) (+ bias row).
// Tiled in shared memory (BM x BK of A, BK x BN of B per step) and register
// blocked (TM x TN outputs per invocation). Tile sizes are specialization
// constants the host picks from the device's limits; nothing here assumes a
// subgroup size. Out-of-range elements load as 0, so any M, N, K >= 1 works.
// One dispatch covers k in [k_begin, k_end); with `accumulate` it adds to C, so
// the host can split a long K over several dispatches, and rows [m_begin, M)
// start at workgroup y = 0, so it can split M for a watchdog budget (see
// src/ops/matmul.c). Either split leaves every output's sum order unchanged.
// Sums are f32 whatever the storage types.
//
// The including shader declares the specialization constants of
// matmul_iface.h, the push constants `p`, `const bool PAIRS`, and the storage
// access: float ld_a(uint), ld_b(uint), ld_bias(uint), ld_c(uint);
// void st_c(uint, float); void st_c2(uint ci, float v0, float v1, bool both)
// (elements ci and ci + 1, ci even; only v0 unless both).

// +1 padding keeps column reads of a tile on distinct banks on GPUs
shared float As[BK * (BM + 1)];
shared float Bs[BK * (BN + 1)];

// Column of output j of an invocation: strided by BN / TN, or with PAIRS in
// adjacent pairs (2 * (tc + (j / 2) * (BN / TN)) + j % 2; TN is even).
uint col_of(uint tc, uint j)
{
    return PAIRS ? 2 * (tc + (j >> 1) * (BN / TN)) + (j & 1) : tc + j * (BN / TN);
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
    const uint tc = tid % (BN / TN); // columns: col_of(tc, j)

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
                v = TRANS_A ? ld_a(a_off + gk * p.lda + gm) : ld_a(a_off + gm * p.lda + gk);
            As[k * (BM + 1) + m] = v;
        }
        for (uint idx = tid; idx < BN * BK; idx += threads) {
            uint n, k;
            if (TRANS_B) { n = idx / BK; k = idx % BK; }
            else         { k = idx / BN; n = idx % BN; }
            uint gn = col0 + n, gk = k0 + k;
            float v = 0.0;
            if (gn < p.n && gk < p.k_end)
                v = TRANS_B ? ld_b(b_off + gn * p.ldb + gk) : ld_b(b_off + gk * p.ldb + gn);
            Bs[k * (BN + 1) + n] = v;
        }
        barrier();

        for (uint k = 0; k < BK; k++) {
            float av[TM], bv[TN];
            for (uint i = 0; i < TM; i++)
                av[i] = As[k * (BM + 1) + tr + i * (BM / TM)];
            for (uint j = 0; j < TN; j++)
                bv[j] = Bs[k * (BN + 1) + col_of(tc, j)];
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
        // PAIRS: columns 2q and 2q + 1 are this invocation's, so it writes
        // whole words of a packed 16-bit C (rows start at even elements)
        for (uint j = 0; j < TN; j += (PAIRS ? 2 : 1)) {
            uint gn = col0 + col_of(tc, j);
            if (gn >= p.n)
                continue;
            const uint ci = c_off + gm * p.ldc + gn;
            float v = out_value(acc[i][j], ci, gn);
            if (PAIRS) {
                const bool both = gn + 1 < p.n;
                st_c2(ci, v, both ? out_value(acc[i][j + 1], ci + 1, gn + 1) : 0.0, both);
            } else {
                st_c(ci, v);
            }
        }
    }
}
