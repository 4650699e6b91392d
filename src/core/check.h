/* Overflow-checked size arithmetic and argument checks shared by every module. */
#ifndef VKA_CORE_CHECK_H
#define VKA_CORE_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* *out = a * b; false on overflow (then *out is unspecified). */
static inline bool vka_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    if (a != 0 && b > UINT64_MAX / a)
        return false;
    *out = a * b;
    return true;
}

static inline bool vka_add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    if (b > UINT64_MAX - a)
        return false;
    *out = a + b;
    return true;
}

/* Product of n dims; false on overflow. */
static inline bool vka_product_u64(const uint64_t *dims, int n, uint64_t *out)
{
    uint64_t p = 1;
    for (int i = 0; i < n; i++)
        if (!vka_mul_u64(p, dims[i], &p))
            return false;
    *out = p;
    return true;
}

/* a * b * c * d, or UINT64_MAX on overflow: for limits checks, where any
 * count beyond a limit fails alike. */
static inline uint64_t vka_count4(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    const uint64_t dims[4] = {a, b, c, d};
    uint64_t n;
    return vka_product_u64(dims, 4, &n) ? n : UINT64_MAX;
}

/* a zero field means `def` */
static inline uint32_t vka_default_u32(uint32_t v, uint32_t def) { return v ? v : def; }
static inline float vka_default_f32(float v, float def) { return v != 0.0f ? v : def; }

/* The sliding window as the kernels read it (shaders/common/mask.glsl): 0 =
 * none; a window of at least Tq + Tv allows every key, so it is clamped
 * there. The kernels' window sums reach 2 (Tq + Tv): vka_window_fits says
 * whether they stay below 2^32 (always true without a window). */
static inline uint32_t vka_window_clamp(uint32_t w, uint32_t tq, uint32_t tv)
{
    const uint64_t all = (uint64_t)tq + tv;
    return (uint64_t)w > all ? (uint32_t)all : w;
}
static inline bool vka_window_fits(uint32_t w, uint32_t tq, uint32_t tv)
{
    return w == 0 || 2 * ((uint64_t)tq + tv) <= UINT32_MAX;
}

#endif /* VKA_CORE_CHECK_H */
