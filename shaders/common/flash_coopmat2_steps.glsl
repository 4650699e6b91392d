// Steps 1 and 3 of flash_coopmat_body.glsl (S = Q K^T, o += P V) on
// GL_NV_cooperative_matrix2 workgroup-scope matrices, for
// shaders/flash_coopmat2_nv.comp; the body includes this file in place of its
// fragment versions and keeps everything else (Q staged in Qs, the softmax
// from Ss in plain code, P rounded to f16 in Ps, the output in o[]), so the
// masks, dropout, masked-row policies, LSE and output rules are the body's.
//
// Why workgroup scope: the body's warps each read the whole K and V tile, so
// one matrix per workgroup lets the implementation stage each tile once (as
// its own shared-memory copies) rather than per warp. Where VEC8 holds
// (rows of K and V whole 16-byte uvec4s, bindings aligned: a tensor load
// must start 16-byte aligned) K and V come straight from global memory
// through tensor layouts that zero-fill keys past Tv and columns past DK or
// DV, as the body's staging does; otherwise load_tile stages them as the
// body does and the products load them from Ks and Vs.
//
// The results go through Ss exactly as the body's fragments go: S row-major
// with rows SLD floats apart (warp w's rows are its square), P V 16 columns
// at a time, added into o[] by the invocations that own them.
//
// Register budget (vka_flash_coopmat_live_values counts the body's
// fragments), per invocation of WG = 32 NW: Q is multiplied 16 columns at a
// time, so Q's and K's shares are 8 and BC / (2 NW) halves (at most 4 + 4
// words, the body's two operand fragments); S is BC / 2 floats (the body's
// logits, which it becomes); in step 3 P's share is BC / 2 halves (8 words
// at BC 32), V's strip at most 4 words and the P V strip 8 floats, while the
// logits are dead: within the body's BC / 2 + 8 + 8.
//
// Needs from the body: Qs, Ks, Vs, Ps, Ss, QLD, KLD, VLD, PLD, SLD, DK, DV,
// DKP, VF, BC, BR, STAGE_KV, tile_kv_head, tile_j0 (set by load_tile), o[],
// warp, lane, half_, k_w4, v_w4, p.tv.

#define S_ACC coopmat<float, gl_ScopeWorkgroup, BR, BC, gl_MatrixUseAccumulator>
#define Q_A coopmat<float16_t, gl_ScopeWorkgroup, BR, 16, gl_MatrixUseA>
#define K_B coopmat<float16_t, gl_ScopeWorkgroup, 16, BC, gl_MatrixUseB>
#define P_A coopmat<float16_t, gl_ScopeWorkgroup, BR, BC, gl_MatrixUseA>
#define V_B coopmat<float16_t, gl_ScopeWorkgroup, BC, 16, gl_MatrixUseB>
#define O_ACC coopmat<float, gl_ScopeWorkgroup, BR, 16, gl_MatrixUseAccumulator>
#define CLAMP gl_CooperativeMatrixClampModeConstantNV // out of range: 0 (clampValue)

// Step 1: S = Q K^T for the workgroup's rows into Ss (raw dot products).
void tile_scores()
{
    // K of this K/V head: Tv rows of DK halves (read only where VEC8: DK % 8
    // == 0, so the head starts on a uvec4)
    tensorLayoutNV<2, CLAMP> lk = createTensorLayoutNV(2, CLAMP);
    lk = setTensorLayoutDimensionNV(lk, p.tv, DK);
    lk = setTensorLayoutStrideNV(lk, DK, 1);
    tensorViewNV<2, false, 1, 0> transposed = createTensorViewNV(2, false, 1, 0);
    const uint k_head = tile_kv_head * p.tv * (DK / 8u); // in uvec4s

    S_ACC s = S_ACC(0.0);
    [[unroll]] for (uint k = 0u; k < DKP; k += 16u) {
        Q_A qa;
        coopMatLoad(qa, Qs, k / 8u, QLD, gl_CooperativeMatrixLayoutRowMajor);
        // B(d, key) = K[key][d]
        K_B kb;
        if (STAGE_KV)
            coopMatLoad(kb, Ks, k / 8u, KLD, gl_CooperativeMatrixLayoutColumnMajor);
        else
            coopMatLoadTensorNV(kb, k_w4, k_head, sliceTensorLayoutNV(lk, tile_j0, BC, k, 16u),
                                transposed);
        s = coopMatMulAdd(qa, kb, s);
    }
    coopMatStore(s, Ss, 0u, SLD, gl_CooperativeMatrixLayoutRowMajor);
}

// Step 3: o += P V, 16 columns of V at a time, through Ss.
void accumulate_pv()
{
    tensorLayoutNV<2, CLAMP> lv = createTensorLayoutNV(2, CLAMP);
    lv = setTensorLayoutDimensionNV(lv, p.tv, DV);
    lv = setTensorLayoutStrideNV(lv, DV, 1);
    const uint v_head = tile_kv_head * p.tv * (DV / 8u); // in uvec4s
    const uint mine = (warp * 16u + lane / 2u) * SLD + half_ * 8u;

    P_A pa;
    coopMatLoad(pa, Ps, 0u, PLD, gl_CooperativeMatrixLayoutRowMajor);
    [[unroll]] for (uint n = 0u; n < VF; n++) {
        V_B vb;
        if (STAGE_KV)
            coopMatLoad(vb, Vs, n * 2u, VLD, gl_CooperativeMatrixLayoutRowMajor);
        else
            coopMatLoadTensorNV(vb, v_w4, v_head,
                                sliceTensorLayoutNV(lv, tile_j0, BC, n * 16u, 16u));
        O_ACC acc = O_ACC(0.0);
        acc = coopMatMulAdd(pa, vb, acc);
        coopMatStore(acc, Ss, 0u, SLD, gl_CooperativeMatrixLayoutRowMajor);
        warp_sync(); // a workgroup barrier (coopmat_frag.glsl)
        [[unroll]] for (uint c = 0u; c < 8u; c++)
            o[n * 8u + c] += Ss[mine + c];
        warp_sync(); // Ss is written again by the next n
    }
}
