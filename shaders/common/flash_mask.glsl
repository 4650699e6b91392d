// The per-(query row, key) rules of the fused attention kernels, one copy for
// flash_body.glsl, flash_tiled_body.glsl and flash_backward_body.glsl, so the
// forward and the backward see, mask, bias and drop exactly the same elements:
// the causal key range of a block of rows, the masks and bias on four logits,
// and the Philox keep bits of four keys. The predicates themselves are
// mask.glsl's (docs/SEMANTICS.md, "Common rules").
//
// These functions read the kernel's own declarations by name, so include this
// file after them:
//   spec constants  CAUSAL (uint), HAS_MASK, HAS_BIAS (bool)
//   push constants  p.tq, p.tv, p.window, p.mask_b, p.mask_h, p.mask_i, p.bias_b,
//                   p.bias_h, p.bias_i, p.seed_lo, p.seed_hi, p.offset_mix,
//                   p.threshold (the layout of flash_iface.h)
//   buffers         float mask_in[], float bias_in[]
//   macros          MASK_OFF, BIAS_OFF: element offsets of the mask and the
//                   bias in their buffers (the packed layout); 0u if undefined
//
// Logits are in log2 units (Q and bias pre-multiplied by log2(e)). A masked
// key gets exactly the finite logit MASKED, recognized by its bits: no inf
// is relied on (a compiler may assume none occurs).
#ifndef VKA_FLASH_MASK_GLSL
#define VKA_FLASH_MASK_GLSL

#include "mask.glsl"
#include "philox.glsl"

#ifndef MASK_OFF
#define MASK_OFF 0u
#endif
#ifndef BIAS_OFF
#define BIAS_OFF 0u
#endif

const float LOG2E = 1.4426950408889634;
// The logit of a masked key, and the start of the forward's running max:
// finite, and far enough above -FLT_MAX that the first rescale,
// exp2(MASKED - m), stays finite for any logit m below 4e37.
const float MASKED = -3.0e38;

bvec4 is_masked(vec4 x) { return equal(floatBitsToUint(x), uvec4(floatBitsToUint(MASKED))); }

// The keys row i may see under causal and the sliding window: [begin, end),
// end at most Tv (mask.glsl).
uint flash_row_begin(uint i) { return vka_key_begin(CAUSAL, p.window, i, p.tq, p.tv); }
uint flash_row_end(uint i) { return vka_key_end(CAUSAL, p.window, i, p.tq, p.tv); }

// The keys any of the rows r0 <= r1 of one (batch, K/V head) may see, rows
// being (query head of the group, query index) pairs flattened (r -> i =
// r % Tq): keys from flash_key_end on are above every row's causal diagonal
// or past every row's window, keys below flash_key_begin before every row's
// window. Both ends grow with i, so the block's lowest and highest i decide.
uint flash_key_end(uint r0, uint r1)
{
    // Rows spanning two query heads cover every i up to Tq - 1.
    const uint i_max = (r0 / p.tq == r1 / p.tq) ? r1 % p.tq : p.tq - 1u;
    return flash_row_end(i_max);
}
uint flash_key_begin(uint r0, uint r1)
{
    const uint i_min = (r0 / p.tq == r1 / p.tq) ? r0 % p.tq : 0u;
    return flash_row_begin(i_min);
}

// The first key tile (of `tile` keys, a multiple of 4) a block of rows must
// visit: the one holding flash_key_begin, so a window of w keys costs O(w)
// tiles per block, not O(Tv).
uint flash_tile_begin(uint r0, uint r1, uint tile)
{
    return flash_key_begin(r0, r1) / tile * tile;
}

// Masks and bias on the raw logits x of keys j..j+3 of row (b, h, i). Keys
// from `limit` on (flash_row_end(i), at most Tv, so keys past Tv too), keys
// before flash_row_begin(i) (the sliding window), and keys whose vm is false (the value mask; all true without one) are
// masked, and so are logits at or below MASKED (a -inf bias); NaN stays a
// logit.
vec4 flash_mask_logits(uint b, uint h, uint i, uint j, uint limit, bvec4 vm, vec4 x)
{
    const uint mask_row = vka_bcast_row(uvec3(p.mask_b, p.mask_h, p.mask_i), b, h, i);
    const uint bias_row = vka_bcast_row(uvec3(p.bias_b, p.bias_h, p.bias_i), b, h, i);
    const uint begin = flash_row_begin(i);
    [[unroll]] for (uint c = 0u; c < 4u; c++) {
        // Clamped: a tile's tail past Tv must not read past the row (or the
        // buffer) even where the compiler evaluates both sides of &&.
        const uint jc = min(j + c, p.tv - 1u);
        bool ok = j + c >= begin && j + c < limit && vm[c];
        if (HAS_MASK)
            ok = ok && vka_mask_allows(mask_in[MASK_OFF + mask_row + jc]);
        if (HAS_BIAS && ok)
            x[c] += bias_in[BIAS_OFF + bias_row + jc] * LOG2E;
        x[c] = (ok && !(x[c] <= MASKED)) ? x[c] : MASKED;
    }
    return x;
}

// The value mask's verdict on four keys from their mask values.
bvec4 flash_value_mask4(float v0, float v1, float v2, float v3)
{
    return bvec4(vka_mask_allows(v0), vka_mask_allows(v1), vka_mask_allows(v2),
                 vka_mask_allows(v3));
}

// Keep bits (1 kept, 0 dropped) of keys j..j+3 (j a multiple of 4) of row
// (bh, i), bh = b * H + h: one Philox call per four keys, so every fused
// kernel, forward or backward, drops the same elements.
vec4 flash_keep4(uint bh, uint i, uint j)
{
    uvec4 x = philox4x32_10(uvec4(j >> 2u, i, bh, p.offset_mix), uvec2(p.seed_lo, p.seed_hi));
    return vec4(greaterThanEqual(x >> 8u, uvec4(p.threshold)));
}

#endif
