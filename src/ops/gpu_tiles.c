/* Tiles of the GPU-tuning kernels (see gpu_tiles.h): limits, then the
 * register budget. */
#include "ops/gpu_tiles.h"

#include "ops/register_budget.h"

/* Limits-based, no per-vendor table: the largest tile whose invocations and
 * double-buffered tiles fit the device and whose live values fit the
 * profile's register budget, 128 invocations where that is the limit (the
 * Vulkan minimum). 8 x 4 outputs per invocation at most, so each pair of
 * shared-memory reads feeds 32 multiply-adds (68-72 live values); under the
 * 64 of the mobile profiles the 4 x 4 tiles (44). Smaller tiles for small
 * products, so a 1 x N product does not compute mostly padding. */
uint32_t vka_matmul_coopmat_shared_bytes(const vka_coopmat_tiles *t)
{
    /* two buffers of f16 tiles with rows padded by 8 halves, in the larger
     * of the two orientations, and a 16x16 f32 staging square per subgroup */
    const uint32_t a = t->bm * (t->bk + 8), a_t = t->bk * (t->bm + 8);
    const uint32_t b = t->bk * (t->bn + 8), b_t = t->bn * (t->bk + 8);
    return 4u * ((a > a_t ? a : a_t) + (b > b_t ? b : b_t)) + 1024u * t->warps_m * t->warps_n;
}

bool vka_matmul_coopmat_tiles(const vkattn_context_info *info, uint32_t m, uint32_t n,
                              bool emulated, vka_coopmat_tiles *out)
{
    /* The NV kernel indexes subgroups by gl_SubgroupID and sizes fragments by
     * the subgroup: it must be fixed (NVIDIA: 32). The emulation's warps are
     * 32 invocations whatever the subgroup. */
    const uint32_t sg = emulated ? 32 : info->subgroup_size;
    if (!emulated && (sg != info->min_subgroup_size || sg != info->max_subgroup_size || sg < 8 ||
                      sg > 256 || 256 % sg))
        return false;
    static const vka_coopmat_tiles candidates[] = {
        {128, 128, 32, 4, 2, 0}, /* 8 subgroups, each 32 x 64: 2 x 4 fragments */
        {64, 64, 32, 2, 2, 0},   /* 4 subgroups, each 32 x 32: 2 x 2 fragments */
    };
    const size_t count = sizeof candidates / sizeof candidates[0];
    const uint32_t budget = vka_register_budget(info);
    for (size_t i = 0; i < count; i++) {
        vka_coopmat_tiles t = candidates[i];
        t.subgroup = sg;
        const uint32_t threads = t.warps_m * t.warps_n * sg;
        const uint32_t fm = t.bm / (t.warps_m * 16), fn = t.bn / (t.warps_n * 16);
        const uint32_t groups = (t.bm * t.bk / 8 + threads - 1) / threads +
                                (t.bn * t.bk / 8 + threads - 1) / threads;
        if (threads > info->max_workgroup_invocations || threads > info->max_workgroup_size[0] ||
            vka_matmul_coopmat_shared_bytes(&t) > info->max_shared_memory ||
            vka_matmul_coopmat_live_values(sg, fm, fn, groups) > budget)
            continue;
        if ((m < 128 || n < 128) && i + 1 < count)
            continue;
        *out = t;
        return true;
    }
    return false;
}

bool vka_matmul_gpu_tiles(const vkattn_context_info *info, uint32_t m, uint32_t n,
                          vka_matmul_tiles *out)
{
    static const vka_matmul_tiles candidates[] = {
        {128, 64, 16, 8, 4}, /* 256 invocations, 24.8 KiB, 68 live */
        {64, 64, 16, 8, 4},  /* 128 invocations, 16.6 KiB, 72 live */
        {64, 64, 8, 8, 4},   /* 128 invocations, 8.3 KiB, 64 live */
        {64, 64, 16, 4, 4},  /* 256 invocations, 16.6 KiB, 44 live */
        {32, 64, 8, 4, 4},   /* 128 invocations, 6.2 KiB, 44 live */
        {32, 32, 8, 4, 4},   /* 64 invocations, 4.2 KiB, 44 live */
        {16, 32, 8, 4, 4},   /* 32 invocations, 3.1 KiB, 44 live */
    };
    const size_t count = sizeof candidates / sizeof candidates[0];
    const uint32_t budget = vka_register_budget(info);
    for (size_t i = 0; i < count; i++) {
        const vka_matmul_tiles *t = &candidates[i];
        const uint32_t threads = vka_matmul_tile_threads(t);
        if (threads > info->max_workgroup_invocations || threads > info->max_workgroup_size[0] ||
            2u * vka_matmul_tile_shared_bytes(t) > info->max_shared_memory ||
            vka_matmul_gpu_live_values(t->bm, t->bn, t->bk, t->tm, t->tn) > budget)
            continue;
        const bool too_big = (t->bm > 64 && m < 256) || (t->bn > 64 && n < 256) ||
                             (t->bm > 32 && m <= 32) || (t->bn > 32 && n <= 32);
        if (too_big && i + 1 < count)
            continue;
        *out = *t;
        return true;
    }
    return false;
}

/* Storage buffers of the unpacked layout, the only one the tiled and the
 * cooperative-matrix fused kernels have. */
#define TILED_BINDINGS 8u

static uint32_t round16(uint32_t d) { return (d + 15) / 16 * 16; }

uint32_t vka_flash_coopmat_shared_bytes(const vka_flash_coopmat_tiles *t, uint32_t dk,
                                        uint32_t dv)
{
    /* uvec4 rows of eight halves padded by one: Q (16 rows a warp), K, V and
     * each warp's P; each warp's f32 square (bc + 4 floats a row); the
     * value-mask tile, the pair exchange (a float per invocation), a flag */
    const uint32_t qk_row = round16(dk) / 8 + 1, v_row = round16(dv) / 8 + 1;
    const uint32_t p_row = t->bc / 8 + 1, rows = 16 * t->warps;
    return 16 * (rows * qk_row + t->bc * (qk_row + v_row) + rows * p_row) +
           4 * (rows * (t->bc + 4)) + 4 * t->bc + 4 * 32 * t->warps + 4;
}

/* Four warps (64 rows) and 32 keys where they fit (d <= 64 in 48 KiB), then
 * 16 keys (d = 128), then two warps, then one. */
bool vka_flash_coopmat_choose_tiles(const vkattn_context_info *info, uint32_t dk, uint32_t dv,
                                    vka_flash_coopmat_tiles *out)
{
    if (info->cpu_tuning || info->max_storage_buffers_per_stage < TILED_BINDINGS || dk == 0 ||
        dv == 0 || dk > 256 || dv > 128)
        return false;
    static const vka_flash_coopmat_tiles candidates[] = {
        {4, 32}, {4, 16}, {2, 32}, {2, 16}, {1, 16},
    };
    const uint32_t budget = vka_register_budget(info);
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        const vka_flash_coopmat_tiles *t = &candidates[i];
        const uint32_t threads = 32 * t->warps;
        if (threads > info->max_workgroup_invocations || threads > info->max_workgroup_size[0] ||
            vka_flash_coopmat_shared_bytes(t, dk, dv) > info->max_shared_memory ||
            vka_flash_coopmat_live_values(t->bc, dv) > budget)
            continue;
        *out = *t;
        return true;
    }
    return false;
}

static uint32_t vec4s(uint32_t d) { return (d + 3) / 4; }

uint64_t vka_flash_tiled_shared_bytes(const vka_flash_tiled *t, uint32_t dk, uint32_t dv)
{
    /* K and V tiles, the value-mask tile, the masked-row flag, and without
     * subgroups the lanes' partial logits (one vec4 per invocation) */
    return 16ull * t->bc * (vec4s(dk) + vec4s(dv)) + 4ull * t->bc + 4 +
           (t->subgroup ? 0 : 16ull * t->wg);
}

/* Lanes per row: the fewest of 4, 8, 16 that leave each lane at most 4 vec4s
 * of the wider of q and o (16 floats each). Invocations: 128 (the Vulkan
 * minimum of maxComputeWorkGroupInvocations), 32 rows at d <= 64, 16 at 128,
 * 8 at 256. Keys per tile: the largest of 32, 16, 8, 4 whose tiles fit the
 * shared memory (16 at d = 64 and 8 at 128 within the Vulkan minimum of 16
 * KiB) and whose live values fit the register budget, with more lanes per
 * row where that keeps a larger tile under it (under the mobile profiles'
 * 64: 32 keys with 16 lanes at d = 64, 8 keys at d = 256). On desktop
 * profiles the first choice always fits: 86 live values at most.
 * Subgroup shuffles where the device has them and its smallest subgroup
 * holds a row's lanes; else the shared-memory sums. */
bool vka_flash_tiled_tiles(const vkattn_context_info *info, bool subgroup_shuffle, uint32_t dk,
                           uint32_t dv, vka_flash_tiled *t)
{
    if (info->cpu_tuning || info->max_storage_buffers_per_stage < TILED_BINDINGS)
        return false;
    const uint32_t widest = vec4s(dk > dv ? dk : dv);
    const uint32_t base_lanes = widest <= 16 ? 4 : widest <= 32 ? 8 : 16;
    const uint32_t wg_max = info->max_workgroup_invocations < info->max_workgroup_size[0]
                                ? info->max_workgroup_invocations
                                : info->max_workgroup_size[0];
    const uint32_t budget = vka_register_budget(info);
    t->wg = 128;
    while (t->wg > wg_max)
        t->wg /= 2;
    for (t->bc = 32; t->bc >= 4; t->bc /= 2)
        for (t->lanes = base_lanes; t->lanes <= 16 && t->lanes <= t->wg; t->lanes *= 2) {
            t->subgroup = subgroup_shuffle && info->min_subgroup_size >= t->lanes;
            if (vka_flash_tiled_shared_bytes(t, dk, dv) <= info->max_shared_memory &&
                vka_flash_tiled_live_values(t->lanes, t->bc, dk, dv) <= budget)
                return true;
        }
    return false;
}

/* 8 rows (the most decode takes) hold 86 live values at dv = 256 within 128;
 * under 64, 4 rows there. */
uint32_t vka_decode_gpu_rows(const vkattn_context_info *info, uint32_t wg, uint32_t dv,
                             uint32_t max_rows)
{
    const uint32_t budget = vka_register_budget(info);
    uint32_t rows = max_rows;
    while (rows > 1 && vka_decode_live_values(rows, wg, dv) > budget)
        rows--;
    return rows;
}
