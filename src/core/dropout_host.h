/* The host-side numbers of the Philox dropout stream (vkattn/philox.h), one
 * copy for the GPU ops (which pass them as push constants to
 * shaders/common/philox.glsl) and the CPU reference, so that masks and kept
 * values match bit for bit. Pure C. */
#ifndef VKA_CORE_DROPOUT_HOST_H
#define VKA_CORE_DROPOUT_HOST_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "vkattn/op_params.h"
#include "vkattn/philox.h"

/* One Philox4x32-10 block (vkattn/philox.h's vkattn_philox4x32_10, which
 * calls this): here so that shape/ (the layers' initial weights,
 * shape/weight_init.c) draws the same stream without reaching reference/. */
static inline void vka_philox4x32_10(const uint32_t counter[4], const uint32_t key[2],
                                     uint32_t out[4])
{
    uint32_t c0 = counter[0], c1 = counter[1], c2 = counter[2], c3 = counter[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        const uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        c0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        c1 = (uint32_t)p1;
        c2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c3 = (uint32_t)p0;
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

/* The offset word of the Philox counter: the offset's high word is folded in
 * with the golden-ratio multiplier (docs/SEMANTICS.md), so offsets differing only
 * in the high word still give different counters. */
static inline uint32_t vka_philox_offset_mix(uint64_t offset)
{
    return (uint32_t)offset ^ ((uint32_t)(offset >> 32) * 0x9E3779B9u);
}

/* ceil(rate * 2^24): an element is kept iff (x >> 8) >= this (the public
 * inline of vkattn/philox.h, the one copy). */
static inline uint32_t vka_dropout_threshold(float rate)
{
    return vkattn_dropout_threshold(rate);
}

/* The float every kept element is multiplied by: the float nearest
 * 1/(1 - rate), so one f32 multiply on the GPU matches the reference; 0 for
 * rate 1 (nothing is kept; avoids the division by zero). */
static inline float vka_dropout_scale(float rate)
{
    return rate < 1.0f ? (float)(1.0 / (1.0 - (double)rate)) : 0.0f;
}

/* A rate (the argument `what` of `caller`) must lie in [0, 1]: written so
 * that NaN fails too, and checked even when not training. */
static inline vkattn_result vka_check_dropout_rate(struct vkattn_context *ctx, const char *caller,
                                                   const char *what, float rate)
{
    if (!(rate >= 0.0f && rate <= 1.0f))
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is %g; must be in [0, 1]",
                        caller, what, (double)rate);
    return VKATTN_SUCCESS;
}

/* True when dropout changes anything: training and rate > 0. */
static inline bool vka_dropout_active(const vkattn_dropout_params *d)
{
    return d->training && d->rate > 0.0f;
}

#endif /* VKA_CORE_DROPOUT_HOST_H */
