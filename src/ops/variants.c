/* The prepared variants' tables and fit tests (see variants.h). Each table's
 * first row is the library's own choice on a desktop GPU at the sweep's
 * target shapes (4096^3, d = 128), so the sweep times it beside the others.
 * Live values (ops/register_budget.h) at the largest, sg = 32, d = 128: in
 * each row's comment; the unit test checks them under every profile. */
#include "ops/variants.h"

#include "ops/register_budget.h"

#include <stddef.h>
#include <string.h>

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const vka_matmul_tiles matmul_rows[] = {
    {128, 64, 16, 8, 4},  /* 256 invocations, 68 live */
    {64, 64, 16, 8, 4},   /* 128 invocations, 72 live */
    {64, 64, 8, 8, 4},    /* 128 invocations, 64 live */
    {64, 64, 16, 4, 4},   /* 256 invocations, 44 live */
    {128, 128, 16, 8, 8}, /* 256 invocations, 108 live */
    {64, 128, 16, 4, 8},  /* 256 invocations, 68 live */
    {128, 128, 8, 8, 8},  /* 256 invocations, 100 live */
};

static const vka_coopmat_tiles coopmat_rows[] = {
    {128, 128, 32, 4, 2, 0}, /* 8 warps of 2 x 4 fragments, 116 live */
    {64, 64, 32, 2, 2, 0},   /* 4 warps of 2 x 2, 76 live */
    {128, 64, 32, 2, 2, 0},  /* 4 warps of 4 x 2, 124 live */
    {64, 128, 32, 2, 2, 0},  /* 4 warps of 2 x 4, 124 live */
    {128, 128, 16, 4, 2, 0}, /* 8 warps of 2 x 4, BK 16, 108 live */
    {128, 128, 32, 2, 4, 0}, /* 8 warps of 4 x 2, 116 live */
};

typedef struct tiled_row {
    uint32_t wg, lanes, bc;
} tiled_row;
static const tiled_row tiled_rows[] = {
    {128, 8, 32},  /* 86 live */
    {128, 8, 16},  /* 70 live */
    {128, 16, 32}, /* 70 live */
    {256, 8, 32},  /* 86 live */
    {64, 8, 32},   /* 86 live */
    {128, 4, 16},  /* 102 live */
};

static const vka_flash_coopmat_tiles flash_coopmat_rows[] = {
    {4, 16}, /* 102 live; 4 x 32 keys needs over 48 KiB at d = 128 */
    {4, 32}, /* 110 live */
    {2, 32}, {2, 16}, {1, 32}, {8, 16},
};

typedef struct backward_row {
    uint32_t lane_shift; /* lanes: the library's fewest, times 2^lane_shift */
    uint32_t tile_cap;   /* rows (kv) and keys (q) per tile at most (fewer where
                            the shared memory needs: 16 at d = 128) */
} backward_row;
static const backward_row backward_rows[] = {
    {0, 32}, /* the library's choice (16 rows and keys at d = 128) */
    {0, 8}, {1, 32}, {1, 8}, {2, 32}, {0, 4},
};

_Static_assert(COUNT(matmul_rows) == VKATTN_VARIANTS_MATMUL, "advanced.h's count");
_Static_assert(COUNT(coopmat_rows) == VKATTN_VARIANTS_MATMUL_COOPMAT, "advanced.h's count");
_Static_assert(COUNT(tiled_rows) == VKATTN_VARIANTS_FLASH, "advanced.h's count");
_Static_assert(COUNT(flash_coopmat_rows) == VKATTN_VARIANTS_FLASH_COOPMAT, "advanced.h's count");
_Static_assert(COUNT(backward_rows) == VKATTN_VARIANTS_FLASH_BACKWARD, "advanced.h's count");

uint32_t vka_variant_count(uint32_t family)
{
    static const uint32_t counts[VKATTN_VARIANT_FAMILIES] = {
        VKATTN_VARIANTS_MATMUL, VKATTN_VARIANTS_MATMUL_COOPMAT, VKATTN_VARIANTS_FLASH,
        VKATTN_VARIANTS_FLASH_COOPMAT, VKATTN_VARIANTS_FLASH_BACKWARD,
    };
    return family < VKATTN_VARIANT_FAMILIES ? counts[family] : 0;
}

const char *vka_variant_family_name(uint32_t family)
{
    static const char *const names[VKATTN_VARIANT_FAMILIES] = {
        "matmul", "matmul_coopmat", "flash", "flash_coopmat", "flash_backward",
    };
    return family < VKATTN_VARIANT_FAMILIES ? names[family] : NULL;
}

static uint32_t wg_limit(const vkattn_context_info *info)
{
    return info->max_workgroup_invocations < info->max_workgroup_size[0]
               ? info->max_workgroup_invocations
               : info->max_workgroup_size[0];
}

bool vka_variant_matmul_gpu(const vkattn_context_info *info, uint32_t v, vka_matmul_tiles *out)
{
    if (v < 1 || v > COUNT(matmul_rows))
        return false;
    const vka_matmul_tiles *t = &matmul_rows[v - 1];
    if (vka_matmul_tile_threads(t) > wg_limit(info) ||
        2u * vka_matmul_tile_shared_bytes(t) > info->max_shared_memory ||
        vka_matmul_gpu_live_values(t->bm, t->bn, t->bk, t->tm, t->tn) >
            vka_register_budget(info))
        return false;
    *out = *t;
    return true;
}

bool vka_variant_matmul_coopmat(const vkattn_context_info *info, uint32_t v, bool emulated,
                                vka_coopmat_tiles *out)
{
    if (v < 1 || v > COUNT(coopmat_rows))
        return false;
    /* as vka_matmul_coopmat_tiles: a fixed subgroup size for the hardware */
    const uint32_t sg = emulated ? 32 : info->subgroup_size;
    if (!emulated && (sg != info->min_subgroup_size || sg != info->max_subgroup_size || sg < 8 ||
                      sg > 256 || 256 % sg))
        return false;
    vka_coopmat_tiles t = coopmat_rows[v - 1];
    t.subgroup = sg;
    const uint32_t threads = t.warps_m * t.warps_n * sg;
    const uint32_t fm = t.bm / (t.warps_m * 16), fn = t.bn / (t.warps_n * 16);
    const uint32_t groups = (t.bm * t.bk / 8 + threads - 1) / threads +
                            (t.bn * t.bk / 8 + threads - 1) / threads;
    if (threads > wg_limit(info) || vka_matmul_coopmat_shared_bytes(&t) > info->max_shared_memory ||
        vka_matmul_coopmat_live_values(sg, fm, fn, groups) > vka_register_budget(info))
        return false;
    *out = t;
    return true;
}

#define TILED_BINDINGS 8u /* as gpu_tiles.c: the unpacked layout */

bool vka_variant_flash_tiled(const vkattn_context_info *info, uint32_t v, bool shuffle,
                             uint32_t dk, uint32_t dv, vka_flash_tiled *out)
{
    if (v < 1 || v > COUNT(tiled_rows) || info->cpu_tuning ||
        info->max_storage_buffers_per_stage < TILED_BINDINGS)
        return false;
    const tiled_row *r = &tiled_rows[v - 1];
    vka_flash_tiled t = {.wg = r->wg, .lanes = r->lanes, .bc = r->bc};
    t.subgroup = shuffle && info->min_subgroup_size >= t.lanes;
    if (t.wg > wg_limit(info) || vka_flash_tiled_shared_bytes(&t, dk, dv) > info->max_shared_memory ||
        vka_flash_tiled_live_values(t.lanes, t.bc, dk, dv) > vka_register_budget(info))
        return false;
    *out = t;
    return true;
}

bool vka_variant_flash_coopmat(const vkattn_context_info *info, uint32_t v, uint32_t dk,
                               uint32_t dv, vka_flash_coopmat_tiles *out)
{
    /* the widths and the tuning as vka_flash_coopmat_choose_tiles */
    if (v < 1 || v > COUNT(flash_coopmat_rows) || info->cpu_tuning ||
        info->max_storage_buffers_per_stage < TILED_BINDINGS || !dk || !dv || dk > 256 || dv > 128)
        return false;
    const vka_flash_coopmat_tiles *t = &flash_coopmat_rows[v - 1];
    if (32 * t->warps > wg_limit(info) ||
        vka_flash_coopmat_shared_bytes(t, dk, dv) > info->max_shared_memory ||
        vka_flash_coopmat_live_values(t->bc, dv) > vka_register_budget(info))
        return false;
    *out = *t;
    return true;
}

bool vka_variant_flash_coopmat_row(uint32_t v, vka_flash_coopmat_tiles *out)
{
    if (v < 1 || v > COUNT(flash_coopmat_rows))
        return false;
    *out = flash_coopmat_rows[v - 1];
    return true;
}

bool vka_variant_flash_backward(const vkattn_context_info *info, uint32_t v, bool shuffle,
                                uint32_t dk, uint32_t dv, vka_fb_gpu_tiles *out)
{
    vka_fb_gpu_tiles t;
    if (v < 1 || v > COUNT(backward_rows) ||
        !vka_flash_backward_gpu_choose(info, shuffle, dk, dv, &t))
        return false;
    /* more lanes only lower the live values; fewer rows or keys only the
     * shared bytes: the library's choice fitting, the variant needs only its
     * lanes within the workgroup and its tiles within the shared memory */
    const backward_row *r = &backward_rows[v - 1];
    t.kv_lanes <<= r->lane_shift;
    t.q_lanes <<= r->lane_shift;
    if (t.kv_lanes > VKA_FB_GPU_MAX_LANES || t.q_lanes > VKA_FB_GPU_MAX_LANES ||
        t.kv_lanes > t.kv_wg || t.q_lanes > t.q_wg)
        return false;
    t.kv_sg = shuffle && t.kv_lanes > 1 && info->min_subgroup_size >= t.kv_lanes;
    t.q_sg = shuffle && t.q_lanes > 1 && info->min_subgroup_size >= t.q_lanes;
    const uint64_t limit =
        info->max_shared_memory < VKA_FB_SHARED_DESIGN ? info->max_shared_memory
                                                       : VKA_FB_SHARED_DESIGN;
    /* the largest tiles of tile_cap, tile_cap / 2, .. 4 that fit, as the library's */
    for (t.kv_rows = r->tile_cap;
         t.kv_rows > 4 &&
         vka_flash_backward_kv_shared(t.kv_wg, t.kv_lanes, t.kv_rows, t.kv_sg, dk, dv) > limit;
         t.kv_rows /= 2)
        ;
    for (t.q_keys = r->tile_cap;
         t.q_keys > 4 &&
         vka_flash_backward_q_shared(t.q_wg, t.q_lanes, t.q_keys, t.q_sg, dk, dv) > limit;
         t.q_keys /= 2)
        ;
    if (vka_flash_backward_kv_shared(t.kv_wg, t.kv_lanes, t.kv_rows, t.kv_sg, dk, dv) > limit ||
        vka_flash_backward_q_shared(t.q_wg, t.q_lanes, t.q_keys, t.q_sg, dk, dv) > limit ||
        vka_flash_backward_kv_live_values(t.kv_lanes, dk, dv) > vka_register_budget(info) ||
        vka_flash_backward_q_live_values(t.q_lanes, dk, dv) > vka_register_budget(info))
        return false;
    *out = t;
    return true;
}
