/* Tiles of the GPU-tuning fused SDPA backward (shaders/flash_backward_
 * {stats,kv,q}_gpu{,_sg}.comp), chosen by the register budget of
 * ops/register_budget.h: live fp32 values per invocation, at most 128, 64
 * under the "mali" and "adreno" profiles.
 *
 * lavapipe has no register file, so a kernel that spills on a GPU runs at
 * full speed in CI: the CPU-shaped backward kept 4 keys x (dk + dv) fp32
 * accumulators per invocation, 255 registers on an H100 (spilling) and 22-73x
 * its forward's time there. So these kernels spread a key's (or a query
 * row's) head widths over L lanes, and L is chosen here, from the live-value
 * count of each kernel, as the fewest lanes that keep within the budget. Each
 * count (ops/register_budget.h) is an upper estimate from the shader's source
 * (its header comment says what it counts), not a compiler's figure:
 * `attnbench --pipeline-stats` on a GPU confirms it. Shared memory per workgroup is computed here from the
 * same constants and kept within min(maxComputeSharedMemorySize, 32 KiB).
 *
 * Pure functions, no Vulkan: tests/unit/test_register_budget.c compiles this
 * file and checks every width against the budget under every profile. */
#ifndef VKA_OPS_FLASH_BACKWARD_GPU_TILES_H
#define VKA_OPS_FLASH_BACKWARD_GPU_TILES_H

#include <stdbool.h>
#include <stdint.h>

#include "vkattn/context.h"

#define VKA_FB_SHARED_DESIGN 32768u /* shared bytes the tiles are designed for */
#define VKA_FB_GPU_MAX_WIDTH 256u
#define VKA_FB_GPU_MAX_LANES 64u

typedef struct vka_fb_gpu_tiles {
    uint32_t kv_wg, kv_lanes, kv_rows; /* invocations, lanes per key, query rows per tile */
    uint32_t q_wg, q_lanes, q_keys;   /* invocations, lanes per query row, keys per tile */
    uint32_t st_wg, st_lanes;         /* stats: invocations, lanes per row */
    bool kv_sg, q_sg, st_sg;          /* lane sums by subgroup shuffles */
} vka_fb_gpu_tiles;

/* Shared bytes per workgroup, from the spec constants: kv: the Q and dO
 * tiles of `rows` rows and their stats; q: the K and V tiles of `keys` keys
 * and the value-mask tile; stats: nothing with shuffles. Without shuffles
 * (and lanes > 1) the lane sums' slots: 2 vec4s (kv, q) or 1 float (stats)
 * per invocation. */
uint64_t vka_flash_backward_kv_shared(uint32_t wg, uint32_t lanes, uint32_t rows, bool sg,
                                      uint32_t dk, uint32_t dv);
uint64_t vka_flash_backward_q_shared(uint32_t wg, uint32_t lanes, uint32_t keys, bool sg,
                                     uint32_t dk, uint32_t dv);
uint64_t vka_flash_backward_stats_shared(uint32_t wg, uint32_t lanes, bool sg);

/* Chooses *t for widths dk, dv (1..256) on a device with these limits and
 * profile (info), `shuffle` telling whether subgroup shuffles may be used.
 * Lanes: the fewest of 1, 2, 4, ..., 64 within vka_register_budget(info); invocations: 128
 * or the device's power-of-two maximum, at least the lanes; tiles: the
 * largest of 32, 16, 8, 4 whose shared memory fits. Shuffles where allowed
 * and the device's smallest subgroup holds a group's lanes. false when
 * nothing fits (then the caller uses another path). */
bool vka_flash_backward_gpu_choose(const vkattn_context_info *info, bool shuffle, uint32_t dk,
                                   uint32_t dv, vka_fb_gpu_tiles *t);

/* Loop iterations one invocation may run (lavapipe's 65535 budget), counting
 * every loop of the three bodies, unrolled or not, the most of the three:
 * rows = query heads per K/V head * Tq, stat_rows = B * H * Tq, the stats
 * grid being at most max_groups workgroups wide. */
uint64_t vka_flash_backward_gpu_loop_iterations(const vka_fb_gpu_tiles *t, uint32_t dk,
                                                uint32_t dv, uint64_t rows, uint32_t tv,
                                                bool dropout, uint64_t stat_rows,
                                                uint32_t max_groups);

#endif /* VKA_OPS_FLASH_BACKWARD_GPU_TILES_H */
