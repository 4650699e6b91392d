// The attention mask predicate of docs/SEMANTICS.md ("Common rules"), shared by
// every kernel that masks logits (softmax_body.glsl, flash_body.glsl) or reads a
// mask value (mask_expand.comp, rowmask.comp), so they agree with each other
// and with vkattn_reference_softmax exactly. Include after #version and
// GL_GOOGLE_include_directive. The kernels read their own buffers: these
// helpers take the values and indices, not the buffers.
//
// A key j of query row (b, h, i) is allowed iff every enabled mask allows it:
//   causal top-left      j <= i
//   causal bottom-right  j <= i + Tv - Tq     (signed: no key for i < Tq - Tv)
//   sliding window w > 0 |pos(i) - j| < w, pos(i) = i, or i + Tv - Tq with
//                        bottom-right causal (anchored where causal is)
//   value_mask (B, Tv)   value_mask[b * Tv + j] nonzero
//   explicit mask        mask[vka_bcast_row(...) + j] nonzero, (B|1, H|1, Tq|1, Tv)
// "Nonzero" counts NaN as nonzero, as the CPU reference's `== 0.0f` test does.
//
// Broadcast operands (B|1, H|1, Tq|1, Tv) are addressed with element strides
// computed on the host (src/core/broadcast.h) from the vkattn_broadcast flags,
// 0 for a broadcast axis:
//   rows_s  = flags.rows  ? 0 : Tv
//   heads_s = flags.heads ? 0 : (flags.rows ? 1 : Tq) * Tv
//   batch_s = flags.batch ? 0 : (flags.heads ? 1 : H) * (flags.rows ? 1 : Tq) * Tv
// All index math is uint32: the host checks that every operand fits.
#ifndef VKA_MASK_GLSL
#define VKA_MASK_GLSL

#include "mask_iface.h" // VKA_CAUSAL_*, equal to vkattn_causal

// Causal masks allow a prefix of the keys: row i may see keys j < this limit
// (0 .. tv). Loops can stop there instead of testing every key. Written
// without signed math: i + tv <= Tq * Tv < 2^32 whenever the logits fit
// 32-bit indexing, so nothing wraps.
uint vka_causal_limit(uint causal, uint i, uint tq, uint tv)
{
    if (causal == VKA_CAUSAL_TOP_LEFT)
        return min(i + 1u, tv);
    if (causal == VKA_CAUSAL_BOTTOM_RIGHT)
        return i + tv >= tq ? i + tv - tq + 1u : 0u; // <= tv since i < tq
    return tv;
}

// The keys a row may see under causal and the sliding window together are one
// run [vka_key_begin, vka_key_end) (window 0 = none). Both ends grow with i,
// so the run of a block of rows spans from its first row's begin to its last
// row's end. The host clamps the window to Tq + Tv (wider changes nothing),
// so no sum below exceeds 2 (Tq + Tv) < 2^32 (checked on the host).
uint vka_key_end(uint causal, uint window, uint i, uint tq, uint tv)
{
    uint end = vka_causal_limit(causal, i, tq, tv);
    if (window == 0u)
        return end;
    // j < pos(i) + w; with bottom-right causal pos(i) + w = i + tv + w - tq
    const uint top = causal == VKA_CAUSAL_BOTTOM_RIGHT ? i + tv + window : i + window;
    const uint off = causal == VKA_CAUSAL_BOTTOM_RIGHT ? tq : 0u;
    return top > off ? min(end, top - off) : 0u;
}

uint vka_key_begin(uint causal, uint window, uint i, uint tq, uint tv)
{
    if (window == 0u)
        return 0u;
    // j > pos(i) - w, i.e. j >= pos(i) + 1 - w
    const uint top = causal == VKA_CAUSAL_BOTTOM_RIGHT ? i + tv + 1u : i + 1u;
    const uint off = causal == VKA_CAUSAL_BOTTOM_RIGHT ? tq + window : window;
    return top > off ? top - off : 0u;
}

// A mask value allows attending iff it is nonzero; NaN is nonzero, +0 and -0
// are zero. A bit test, not a float compare: a Vulkan compiler may assume no
// NaN occurs (and then fold either compare either way), but not about bits.
bool vka_mask_allows(float v)
{
    return (floatBitsToUint(v) & 0x7fffffffu) != 0u;
}

// Element offset of row (b, h, i) of a (B|1, H|1, Tq|1, Tv) operand, with
// strides = (batch_s, heads_s, rows_s) as above; add the key index j.
uint vka_bcast_row(uvec3 strides, uint b, uint h, uint i)
{
    return b * strides.x + h * strides.y + i * strides.z;
}

#endif
