/* vkattn/decode.h - attention of new queries against a KV cache (decoding).
 *
 * vkattn_sdpa_decode computes vkattn_sdpa_decode_params's formula
 * (vkattn/op_params.h) for Tq (1..64) new queries per sequence against the
 * first L_b keys of a vkattn_kv_cache, L_b read on the device when the
 * command buffer runs: append the new tokens' K/V first (vkattn/kv_cache.h),
 * then decode their queries; the pair can be recorded once and replayed step
 * after step. With the same keys, it equals vkattn_sdpa with
 * VKATTN_CAUSAL_BOTTOM_RIGHT, masked rows ZERO, to fp32 rounding, and drops
 * the same weights under dropout.
 *
 * Flash-decoding: a split kernel gives each workgroup one chunk of a
 * sequence's keys for a block of up to 8 query rows of one K/V head (the
 * query heads of a group share every K/V read); inside it, invocations split
 * the keys for Q K^T and the value width (and keys) for P V. The chunks are
 * sized on the device from L_b, so the split does not depend on what the host
 * knows: the host dispatches n_chunks per row from the capacity and the
 * device's parallelism (or params->num_splits of them, a knob for tuning a
 * device: FlashAttention's num_splits), and chunks past L_b exit at once. Under the CPU
 * tuning (vkattn/advanced.h; lavapipe), for dk and dv up to 128, each
 * invocation instead owns a run of about 64 keys with its own online softmax
 * and partial (no barrier or shared memory in the loop; a CPU driver pays per
 * element for every storage or shared access whatever the pattern, so each
 * K/V element is read once and nothing else is). A merge kernel combines the
 * partials. The partials live in the context's library
 * workspace (B * H * Tq * n_chunks * (dv + 2) floats; n_chunks is about
 * capacity / 64 in the CPU layout), shared as in
 * vkattn/sdpa.h: command buffers executing at the same time must not both use
 * it.
 *
 * Element types: the cache may hold f16 or bf16 (vkattn_kv_cache_desc.dtype),
 * and q and out may each be f32, f16 or bf16 tensors. The kernels read 16-bit
 * K, V and q as 32-bit words of two elements and write a 16-bit out one word
 * per invocation (no 16-bit storage needed on any device); all arithmetic,
 * the partials and the merge are fp32. So against the exact attention over
 * the (exactly converted) 16-bit values (ref: vkattn_reference_sdpa_decode,
 * out f32):
 *   max|out - ref| <= 2e-5 max|ref|             f32 out
 *   max|out - ref| <= (2e-5 + 2^-10) max|ref|   f16 out (one rounding of the
 *                                               f32 result, 2^-10 relative on
 *                                               devices whose packHalf2x16
 *                                               truncates, 2^-11 to nearest)
 *   max|out - ref| <= (2e-5 + 2^-8 (1 + 2e-5)) max|ref|   bf16 out (vkattn's
 *                    own rounding to nearest even: half a bf16 spacing,
 *                    2^-8 of |y| <= (1 + 2e-5) max|ref|, on every device)
 * A 16-bit cache halves the bytes a step reads; against the unquantized f32
 * values a bf16 cache adds docs/SEMANTICS.md's "bf16 KV cache" bound. An int8 cache (about a quarter)
 * is read in place, four int8 per word, and dequantized in registers (the QK
 * dot scaled once per key, the P V weight times the value's scale); against
 * the reference on the dequantized cache (k = q * scale) the bounds above
 * hold, and against the unquantized f32 values docs/SEMANTICS.md's int8 bound.
 * Masks stay f32 (an f16 value_mask is VKATTN_ERROR_UNSUPPORTED).
 * Soft-capping (params->softcap c > 0): each scaled score s becomes
 * c tanh(s / c) before the masks (the split kernel; tanh_robust.glsl, a few
 * ulps), as vkattn_sdpa; the reference does the same. Sinks
 * (params->has_sinks, io->sinks (H) f32): query head h's sink_h joins the
 * softmax denominator with no value, added once per row by the merge kernel
 * (its running max starts at sink_h, its sum at 1); a row with no key is
 * zeros. vkattn_reference_sdpa_decode refuses has_sinks
 * (VKATTN_ERROR_UNSUPPORTED): tests check sinks against vkattn_reference_sdpa
 * with one prepended key k = 0, v = 0 of bias sink_h.
 *
 * Recording contract: as in vkattn/matmul.h; reads q, the cache's K, V and
 * lengths and value_mask; writes out (compute shader).
 * Results: VKATTN_ERROR_INVALID_ARGUMENT (NULL argument; a zero batch, heads,
 * tq, capacity or dk; tq above 64; heads not a multiple of kv_heads; a
 * non-finite scale; a negative or non-finite softcap; io->sinks missing with
 * has_sinks or set without it; a dropout rate outside [0, 1]; batch, kv_heads,
 * capacity, dk or dv different from the cache's; a missing, unexpected or
 * too small tensor; out aliasing an input), VKATTN_ERROR_UNSUPPORTED (dk or
 * dv above 256; an f16 value_mask), VKATTN_ERROR_DEVICE_LIMIT (a sliding
 * window with tq + capacity beyond the kernels' 32-bit window arithmetic; a
 * tensor beyond their 32-bit indexing; the device's workgroup limits),
 * VKATTN_ERROR_SIZE_OVERFLOW, VKATTN_ERROR_OUT_OF_DEVICE_MEMORY, Vulkan
 * failures; reported before anything is recorded. The params are checked
 * before the cache, and as vkattn_reference_sdpa_decode checks them: the two
 * refuse the same params with the same message ("params->tq is 65; must be
 * <= 64").
 * Thread safety: externally synchronized on cmd, the cache and the tensors.
 */
#ifndef VKATTN_DECODE_H
#define VKATTN_DECODE_H

#include "vkattn/context.h"
#include "vkattn/kv_cache.h"
#include "vkattn/op_params.h"
#include "vkattn/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vkattn_sdpa_decode_io {
    vkattn_tensor *q;          /* (B, H, Tq, dk) */
    vkattn_kv_cache *cache;    /* K, V and the lengths */
    vkattn_tensor *value_mask; /* (B, capacity) iff params->has_value_mask, else NULL */
    vkattn_tensor *out;        /* (B, H, Tq, dv), written */
    vkattn_tensor *sinks;      /* (H) f32 iff params->has_sinks, else NULL */
} vkattn_sdpa_decode_io;

VKATTN_API vkattn_result vkattn_sdpa_decode_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                                   const vkattn_sdpa_decode_params *params,
                                                   const vkattn_sdpa_decode_io *io);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_DECODE_H */
