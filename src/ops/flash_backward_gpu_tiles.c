/* Shared memory and tiles of the GPU-tuning fused backward (see
 * flash_backward_gpu_tiles.h); the live-value counts are in
 * ops/register_budget.c. */
#include "ops/flash_backward_gpu_tiles.h"

#include <string.h>

#include "ops/register_budget.h"

static uint32_t div_up(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
static uint32_t vec4s(uint32_t d) { return div_up(d, 4); }

static uint64_t lane_sums(uint32_t wg, uint32_t lanes, bool sg, uint32_t bytes_each)
{
    return sg ? 0 : (uint64_t)bytes_each * (lanes > 1 ? wg : 1);
}

uint64_t vka_flash_backward_kv_shared(uint32_t wg, uint32_t lanes, uint32_t rows, bool sg,
                                      uint32_t dk, uint32_t dv)
{
    return 16ull * rows * (vec4s(dk) + vec4s(dv)) + 8ull * rows + lane_sums(wg, lanes, sg, 32);
}

uint64_t vka_flash_backward_q_shared(uint32_t wg, uint32_t lanes, uint32_t keys, bool sg,
                                     uint32_t dk, uint32_t dv)
{
    return 16ull * keys * (vec4s(dk) + vec4s(dv)) + 4ull * keys + lane_sums(wg, lanes, sg, 32);
}

uint64_t vka_flash_backward_stats_shared(uint32_t wg, uint32_t lanes, bool sg)
{
    return lane_sums(wg, lanes, sg, 4);
}

typedef uint32_t (*live_fn)(uint32_t lanes, uint32_t dk, uint32_t dv);

static uint32_t fewest_lanes(live_fn live, uint32_t dk, uint32_t dv, uint32_t budget)
{
    for (uint32_t l = 1; l <= VKA_FB_GPU_MAX_LANES; l *= 2)
        if (live(l, dk, dv) <= budget)
            return l;
    return 0;
}

static bool use_shuffle(const vkattn_context_info *info, bool shuffle, uint32_t lanes)
{
    return shuffle && lanes > 1 && info->min_subgroup_size >= lanes;
}

/* The largest tile of 32, 16, 8, 4 whose shared bytes fit, or 0. */
static uint32_t largest_tile(bool kv, const vka_fb_gpu_tiles *t, bool sg, uint32_t dk,
                             uint32_t dv, uint64_t limit)
{
    for (uint32_t n = 32; n >= 4; n /= 2) {
        const uint64_t bytes =
            kv ? vka_flash_backward_kv_shared(t->kv_wg, t->kv_lanes, n, sg, dk, dv)
               : vka_flash_backward_q_shared(t->q_wg, t->q_lanes, n, sg, dk, dv);
        if (bytes <= limit)
            return n;
    }
    return 0;
}

bool vka_flash_backward_gpu_choose(const vkattn_context_info *info, bool shuffle, uint32_t dk,
                                   uint32_t dv, vka_fb_gpu_tiles *t)
{
    memset(t, 0, sizeof *t);
    if (!dk || !dv || dk > VKA_FB_GPU_MAX_WIDTH || dv > VKA_FB_GPU_MAX_WIDTH)
        return false;
    const uint32_t budget = vka_register_budget(info);
    t->kv_lanes = fewest_lanes(vka_flash_backward_kv_live_values, dk, dv, budget);
    t->q_lanes = fewest_lanes(vka_flash_backward_q_live_values, dk, dv, budget);
    if (!t->kv_lanes || !t->q_lanes)
        return false;
    uint32_t wg_max = info->max_workgroup_invocations < info->max_workgroup_size[0]
                          ? info->max_workgroup_invocations
                          : info->max_workgroup_size[0];
    uint32_t wg = 128;
    while (wg > wg_max)
        wg /= 2;
    t->kv_wg = t->q_wg = t->st_wg = wg;
    /* stats: a lane per vec4 of dv, at most 16 lanes */
    for (t->st_lanes = 1; t->st_lanes < vec4s(dv) && t->st_lanes < 16; t->st_lanes *= 2)
        ;
    if (wg < t->kv_lanes || wg < t->q_lanes || wg < t->st_lanes)
        return false;
    t->kv_sg = use_shuffle(info, shuffle, t->kv_lanes);
    t->q_sg = use_shuffle(info, shuffle, t->q_lanes);
    t->st_sg = use_shuffle(info, shuffle, t->st_lanes);
    const uint64_t limit =
        info->max_shared_memory < VKA_FB_SHARED_DESIGN ? info->max_shared_memory
                                                       : VKA_FB_SHARED_DESIGN;
    t->kv_rows = largest_tile(true, t, t->kv_sg, dk, dv, limit);
    t->q_keys = largest_tile(false, t, t->q_sg, dk, dv, limit);
    return t->kv_rows && t->q_keys &&
           vka_flash_backward_stats_shared(t->st_wg, t->st_lanes, t->st_sg) <= limit;
}

static uint64_t log2_or_count(uint32_t lanes, bool sg)
{
    uint64_t n = 0;
    if (!sg)
        return lanes > 1 ? lanes : 0;
    while ((1u << n) < lanes)
        n++;
    return n;
}

/* Copy loop of `slots` vec4s by wg invocations (5 iterations per slot where
 * the width is not a multiple of 4: the element loop). */
static uint64_t copy_loop(uint64_t slots, uint32_t wg, uint32_t d)
{
    return (slots + wg - 1) / wg * (d % 4 ? 5 : 1);
}

uint64_t vka_flash_backward_gpu_loop_iterations(const vka_fb_gpu_tiles *t, uint32_t dk,
                                                uint32_t dv, uint64_t rows, uint32_t tv,
                                                bool dropout, uint64_t stat_rows,
                                                uint32_t max_groups)
{
    const uint64_t dk4 = vec4s(dk), dv4 = vec4s(dv), philox = dropout ? 10 : 0;
    /* kv: per row tile the copies, then per four rows the dots, the lane
     * sum, four rows' masks (4 keys each) and keep bits, the updates */
    uint64_t nk = div_up(dk4, t->kv_lanes), nv = div_up(dv4, t->kv_lanes);
    const uint64_t kv_step = 1 + 2 * (nk + nv) + log2_or_count(t->kv_lanes, t->kv_sg) +
                             4 * (2 + 4 + philox);
    const uint64_t kv_tile = 1 + copy_loop(t->kv_rows * dk4, t->kv_wg, dk) +
                             copy_loop(t->kv_rows * dv4, t->kv_wg, dv) +
                             (t->kv_rows + t->kv_wg - 1) / t->kv_wg + t->kv_rows / 4 * kv_step;
    const uint64_t kv = (rows + t->kv_rows - 1) / t->kv_rows * kv_tile + 16 * (nk + nv) + 64;
    /* q: per key tile the copies, then per four keys the same */
    nk = div_up(dk4, t->q_lanes), nv = div_up(dv4, t->q_lanes);
    const uint64_t q_step =
        1 + 2 * nk + nv + log2_or_count(t->q_lanes, t->q_sg) + 4 + philox + 4;
    const uint64_t q_tile = 1 + copy_loop(t->q_keys * dk4, t->q_wg, dk) +
                            copy_loop(t->q_keys * dv4, t->q_wg, dv) +
                            (t->q_keys + t->q_wg - 1) / t->q_wg + t->q_keys / 4 * q_step;
    const uint64_t q = ((uint64_t)tv + t->q_keys - 1) / t->q_keys * q_tile + 16 * nk + 64;
    /* stats: per grid step the width loop (x2 where a width is not a
     * multiple of 4: 4 element loads per vec4) and the lane sum */
    const uint64_t per_wg = (uint64_t)t->st_wg / t->st_lanes * (max_groups ? max_groups : 1);
    const uint64_t st = ((stat_rows + per_wg - 1) / per_wg + 1) *
                        (div_up((uint32_t)dv4, t->st_lanes) * (dv % 4 ? 9 : 1) +
                         log2_or_count(t->st_lanes, t->st_sg) + 2);
    uint64_t most = kv > q ? kv : q;
    return most > st ? most : st;
}
