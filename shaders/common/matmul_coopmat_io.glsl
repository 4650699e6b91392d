// The global-memory side of the cooperative-matrix matmuls
// (matmul_coopmat_body.glsl, matmul_coopmat2_nv.comp): staging of A's and B's
// groups of eight halves (zeros out of range) into the shared tiles As and
// Bs, and the output rules of a 16x16 square of C (alpha, bias, accumulate,
// bounds, f16 words). One copy, so every kernel writes C alike. Include after
// matmul_coopmat_decl.glsl, the shared arrays As, Bs and Cs, and
// coopmat_frag.glsl (LANE).

float ld_bias(uint i) { return VKA_LDW(BIAS_TYPE, bias, bias_w, i); }
float ld_c(uint i) { return VKA_LDW(C_TYPE, c, c_w, i); }

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
    if (!VKA_IS_16(C_TYPE)) {
        for (uint e = lane; e < 256; e += SG) {
            const uint gm = gm0 + e / 16, gn = gn0 + e % 16;
            if (gm < p.m && gn < p.n) {
                const uint ci = c_off + gm * p.ldc + gn;
                c[ci] = out_value(Cs[sq + e], ci, gn);
            }
        }
        return;
    }
    // 16-bit C (f16, bf16): a word (two adjacent columns) per write; the
    // host's rows_word_aligned makes every ci of an even column even, and
    // past N the high half keeps its bits
    for (uint e = lane; e < 128; e += SG) {
        const uint r = e / 8, cp = (e % 8) * 2;
        const uint gm = gm0 + r, gn = gn0 + cp;
        if (gm >= p.m || gn >= p.n)
            continue;
        const uint ci = c_off + gm * p.ldc + gn;
        const bool both = gn + 1 < p.n;
        const float lo = out_value(Cs[sq + r * 16 + cp], ci, gn);
        const float hi = both ? out_value(Cs[sq + r * 16 + cp + 1], ci + 1, gn + 1) : 0.0;
        uint w = VKA_PACK2(C_TYPE, vec2(lo, hi));
        if (!both)
            w = (c_w[ci >> 1] & 0xffff0000u) | (w & 0xffffu);
        c_w[ci >> 1] = w;
    }
}
