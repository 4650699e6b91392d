/* The register budget of the GPU tuning: live fp32 values per invocation.
 *
 * lavapipe has no register file, so a kernel that spills on a GPU runs at
 * full speed in CI (the fused backward held 512-1024 fp32 accumulators per
 * invocation and ran 22-73x its forward on an H100, 1.4x on lavapipe). So
 * every GPU-tuning kernel keeps to this budget by construction: its family
 * has a function here returning the live values of a tile choice, the host
 * chooses tiles within vka_register_budget(), each shader's header comment
 * states its count, and tests/unit/test_register_budget.c checks the tile
 * tables against the budget for every profile, with no GPU.
 *
 * A count is an upper estimate from the shader's source, not a compiler's
 * figure: the fp32 values (or 32-bit words) an invocation keeps alive across
 * its inner loop: accumulators, operands held for the step, prefetched loads,
 * plus VKA_REGISTER_SCALARS for indices, loop counters and addresses.
 * `attnbench --pipeline-stats` on a GPU confirms it (no spill, registers
 * under the driver's cap). Pure functions: no Vulkan, so the unit test
 * compiles this file on its own. */
#ifndef VKA_OPS_REGISTER_BUDGET_H
#define VKA_OPS_REGISTER_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#include "vkattn/context.h"

#define VKA_REGISTER_BUDGET 128u       /* desktop GPUs: half of NVIDIA's 255 cap */
#define VKA_REGISTER_BUDGET_MOBILE 64u /* the "mali" and "adreno" profiles */
#define VKA_REGISTER_SCALARS 12u       /* indices, counters, addresses per invocation */

/* The budget under this context's profile (info->profile): 64 for "mali" and
 * "adreno", 128 otherwise. */
uint32_t vka_register_budget(const vkattn_context_info *info);

/* shaders/matmul_gpu.comp with BM x BN x BK tiles, TM x TN outputs per
 * invocation: TM * TN sums, TM + TN operands per k, the prefetched vec4s of
 * the next step's tiles (ceil(BM*BK/4 / threads) + ceil(BN*BK/4 / threads),
 * 4 each), and the scalars. */
uint32_t vka_matmul_gpu_live_values(uint32_t bm, uint32_t bn, uint32_t bk, uint32_t tm,
                                    uint32_t tn);

/* shaders/matmul_coopmat_*.comp (common/matmul_coopmat_body.glsl; the
 * emulation's warps are 32 lanes): a subgroup of `sg` lanes holds fm x fn
 * 16x16 f32 accumulator fragments (256 / sg values each) and fm + fn f16
 * operand fragments (128 / sg words each); each invocation prefetches
 * `groups` uvec4s of the next step's tiles; plus the scalars. */
uint32_t vka_matmul_coopmat_live_values(uint32_t sg, uint32_t fm, uint32_t fn, uint32_t groups);

/* shaders/flash_coopmat_*.comp (flash_coopmat_body.glsl), warps of 32 with
 * `bc` keys per tile and value width dv: the invocation's output slice (8 per
 * 16 columns of dv), its logits of a tile (bc / 2), one accumulator fragment
 * (8) and two operand fragments (4 + 4), the running max and sum (2), and
 * the scalars. dk costs none (Q stays in shared memory). */
uint32_t vka_flash_coopmat_live_values(uint32_t bc, uint32_t dv);

/* shaders/flash_tiled*.comp (flash_tiled_body.glsl) with `lanes` invocations
 * per query row and `bc` keys per tile, widths dk and dv: the lane's vec4s of
 * the scaled query and of the output accumulator (4 * ceil(ceil(d/4) /
 * lanes) each), the tile's logits (bc), the partial logits of four keys and
 * the four weights (8), the running max and sum (2), and the scalars. */
uint32_t vka_flash_tiled_live_values(uint32_t lanes, uint32_t bc, uint32_t dk, uint32_t dv);

/* shaders/decode*.comp (decode_body.glsl), split layout (the GPU tuning's):
 * `rows` query rows per workgroup of `wg` invocations, value width dv: each
 * row's end, head and index (3 rows), its logit (rows), the output vec4s
 * (4 * ceil(rows * ceil(dv/4) / wg)), two key vec4s (8), the running max and
 * sum (2), and the scalars. */
uint32_t vka_decode_live_values(uint32_t rows, uint32_t wg, uint32_t dv);
/* The GPU-tuning fused backward (shaders/common/flash_backward_{kv,q,stats}_
 * gpu_body.glsl) with `lanes` invocations per key (kv) or query row (q),
 * widths dk and dv, nk = ceil(ceil(dk/4) / lanes) and nv = ceil(ceil(dv/4) /
 * lanes) the lane's vec4s:
 *   kv: K, V, dK and dV slices (8 (nk + nv)); the four rows' logits and dP
 *       (8), stats (8), P keep and dS (8); the shared vec4 in use (4);
 *   q:  the query and dQ slices (8 nk), the dO slice (4 nv); the four keys'
 *       logits and dP (8), weights then dS (4), keep factors (4), the row's
 *       stats (2); the shared vec4 in use (4);
 *   stats: the partial sum (1), the two vec4s multiplied (8), the stats (2);
 * and the scalars. */
uint32_t vka_flash_backward_kv_live_values(uint32_t lanes, uint32_t dk, uint32_t dv);
uint32_t vka_flash_backward_q_live_values(uint32_t lanes, uint32_t dk, uint32_t dv);
uint32_t vka_flash_backward_stats_live_values(void);

/* shaders/flash_backward_coopmat_*.comp (flash_backward_coopmat_body.glsl):
 * one accumulator fragment (8) and two operand fragments (4 + 4), four
 * logits and four dP (8), the row's stats (2), P keep and dS of four keys
 * (8), and the scalars: 46 at any width and tile (the accumulators live in
 * shared memory). */
uint32_t vka_flash_backward_coopmat_live_values(void);

#endif /* VKA_OPS_REGISTER_BUDGET_H */
