/* vkattn/philox.h - the Philox4x32-10 dropout stream, on the CPU.
 *
 * Every vkattn kernel that applies dropout draws its keep/drop decisions from
 * this stream (shaders/common/philox.glsl is the GPU twin), so the same seed
 * and offset give the same mask on every device and on the CPU reference, bit
 * for bit. These functions let an application reproduce a mask exactly:
 *
 *   uint32_t t = vkattn_dropout_threshold(rate);          once per call
 *   bool kept = vkattn_dropout_keep(seed, offset, t, b * H + h, i, j);
 *
 * For a (B, H, Tq, Tv) weight tensor element (b, h, i, j) and 64-bit seed and
 * offset (see docs/SEMANTICS.md, "Philox dropout stream"):
 *   key     = (seed_lo, seed_hi)
 *   counter = (j / 4, i, b*H + h, offset_lo ^ (offset_hi * 0x9E3779B9))   all uint32
 *   x       = philox4x32_10(counter, key)[j % 4]
 *   keep    = (x >> 8) >= threshold
 * The decision depends only on seed, offset and indices, never on tiling.
 *
 * Thread safety: every function here is pure and may be called from any thread.
 */
#ifndef VKATTN_PHILOX_H
#define VKATTN_PHILOX_H

#include <stdbool.h>
#include <stdint.h>

#include "vkattn/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One Philox4x32-10 block (Salmon et al., SC'11; the Random123 reference):
 * multipliers 0xD2511F53 and 0xCD9E8D57, key increments 0x9E3779B9 and
 * 0xBB67AE85, 10 rounds. Reads counter[4] and key[2], writes out[4]; out may
 * alias counter. All pointers are required (not checked: this is the hot path). */
VKATTN_API void vkattn_philox4x32_10(const uint32_t counter[4], const uint32_t key[2],
                                     uint32_t out[4]);

/* The integer drop threshold for a dropout rate: ceil(rate * 2^24), computed in
 * double. rate <= 0 or NaN gives 0 (keep everything); rate >= 1 gives 2^24
 * (drop everything, since x >> 8 < 2^24). The op functions reject rates outside
 * [0, 1]; this one clamps, so it never fails. Inline (no export; 0.4): a few
 * lines of arithmetic, no libm (rate * 2^24 is exact in double, so the
 * integer part plus one where a fraction remains is the ceiling). */
static inline uint32_t vkattn_dropout_threshold(float rate)
{
    if (!(rate > 0.0f)) /* also NaN */
        return 0;
    if (rate >= 1.0f)
        return 1u << 24;
    const double x = (double)rate * 16777216.0;
    const uint32_t t = (uint32_t)x;
    return t + ((double)t < x);
}

/* Whether element (b, h, i, j) of a (B, H, Tq, Tv) weight tensor is kept, with
 * bh = b * H + h (computed modulo 2^32, as the GPU does) and threshold from
 * vkattn_dropout_threshold(). Cost: one Philox block per call; callers that
 * need all four words of a block can call vkattn_philox4x32_10() directly. */
VKATTN_API bool vkattn_dropout_keep(uint64_t seed, uint64_t offset, uint32_t threshold,
                                    uint32_t bh, uint32_t i, uint32_t j);

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_PHILOX_H */
