/* Tiles of the GPU-tuning kernels from the device's limits, its profile's
 * register budget (ops/register_budget.h) and the problem's widths: pure
 * functions of vkattn_context_info, so tests/unit/test_register_budget.c
 * checks them against the budget for every profile with no GPU. The ops
 * (matmul.c, flash_tiled.c) call them and dispatch what they choose. */
#ifndef VKA_OPS_GPU_TILES_H
#define VKA_OPS_GPU_TILES_H

#include <stdbool.h>
#include <stdint.h>

#include "vkattn/context.h"

/* shaders/matmul*.comp tiles: BM x BN outputs per workgroup, BK deep steps,
 * TM x TN outputs per invocation. */
typedef struct vka_matmul_tiles {
    uint32_t bm, bn, bk, tm, tn;
} vka_matmul_tiles;

static inline uint32_t vka_matmul_tile_threads(const vka_matmul_tiles *t)
{
    return (t->bm / t->tm) * (t->bn / t->tn);
}

/* Bytes of shared memory shaders/matmul.comp declares for these tiles
 * (matmul_gpu.comp declares twice this: two buffers). */
static inline uint32_t vka_matmul_tile_shared_bytes(const vka_matmul_tiles *t)
{
    return 4u * t->bk * ((t->bm + 1) + (t->bn + 1));
}

/* Tiles of shaders/matmul_gpu.comp for an M x N product, or false when none
 * fits the device (then the op keeps shaders/matmul*.comp). */
bool vka_matmul_gpu_tiles(const vkattn_context_info *info, uint32_t m, uint32_t n,
                          vka_matmul_tiles *out);

/* shaders/matmul_coopmat_*.comp tiles: BM x BN outputs per workgroup of
 * warps_m x warps_n warps (subgroups) of `subgroup` lanes, BK deep steps. */
typedef struct vka_coopmat_tiles {
    uint32_t bm, bn, bk, warps_m, warps_n, subgroup;
} vka_coopmat_tiles;

/* Bytes of shared memory the kernel declares with these tiles (either
 * orientation of A and B: the larger). */
uint32_t vka_matmul_coopmat_shared_bytes(const vka_coopmat_tiles *t);

/* Tiles of the cooperative-matrix matmul for an M x N product, or false when
 * none fits the device (a varying subgroup size, limits, the budget);
 * `emulated`: for matmul_coopmat_emu.comp, whose warps are 32 invocations on
 * any subgroup size. */
bool vka_matmul_coopmat_tiles(const vkattn_context_info *info, uint32_t m, uint32_t n,
                              bool emulated, vka_coopmat_tiles *out);

/* shaders/flash_coopmat_*.comp tiles: `warps` warps of 32 invocations, 16
 * query rows each, and `bc` keys per shared-memory tile (a multiple of 16). */
typedef struct vka_flash_coopmat_tiles {
    uint32_t warps, bc;
} vka_flash_coopmat_tiles;

/* Bytes of shared memory the kernel declares with these tiles. */
uint32_t vka_flash_coopmat_shared_bytes(const vka_flash_coopmat_tiles *t, uint32_t dk,
                                        uint32_t dv);

/* Tiles of the cooperative-matrix fused kernel for widths dk (<= 256) and dv
 * (<= 128), or false when none fits (limits, the budget, the widths, the
 * CPU tuning, fewer than 8 storage buffers). */
bool vka_flash_coopmat_choose_tiles(const vkattn_context_info *info, uint32_t dk, uint32_t dv,
                                    vka_flash_coopmat_tiles *out);

/* shaders/flash_tiled*.comp tiles. */
typedef struct vka_flash_tiled {
    uint32_t wg;    /* invocations per workgroup */
    uint32_t lanes; /* invocations per query row, splitting dk and dv */
    uint32_t bc;    /* keys per shared-memory tile */
    bool subgroup;  /* lanes reduced by subgroup shuffles (flash_tiled_sg.comp) */
} vka_flash_tiled;

/* Bytes of shared memory the kernel declares with these tiles. */
uint64_t vka_flash_tiled_shared_bytes(const vka_flash_tiled *t, uint32_t dk, uint32_t dv);

/* Tiles for widths dk, dv (each <= 256) on a device with these limits
 * (`subgroup_shuffle`: the device runs subgroup shuffles in compute), or
 * false when the tiled kernel is not to serve it (CPU tuning, fewer than 8
 * storage buffers, limits too small). */
bool vka_flash_tiled_tiles(const vkattn_context_info *info, bool subgroup_shuffle, uint32_t dk,
                           uint32_t dv, vka_flash_tiled *t);

/* Query rows per workgroup of shaders/decode*.comp's split layout (`wg`
 * invocations, value width dv): the most, up to max_rows, whose live values
 * fit the register budget; at least 1. */
uint32_t vka_decode_gpu_rows(const vkattn_context_info *info, uint32_t wg, uint32_t dv,
                             uint32_t max_rows);

#endif /* VKA_OPS_GPU_TILES_H */
