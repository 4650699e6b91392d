/* Tiles of the GPU-shaped fused attention kernel from the device's limits and
 * the head widths (see flash_tiled.h and shaders/common/flash_tiled_body.glsl). */
#include "ops/flash_tiled.h"

#include "common/flash_tiled_iface.h"
#include "vk/context.h"
#include "vka_shaders.h"

/* Storage buffers of the unpacked layout, the only one this kernel has. */
#define TILED_BINDINGS 8u

static uint32_t vec4s(uint32_t d) { return (d + 3) / 4; }

uint64_t vka_flash_tiled_shared_bytes(const vka_flash_tiled *t, uint32_t dk, uint32_t dv)
{
    /* K and V tiles, the value-mask tile, the masked-row flag, and without
     * subgroups the lanes' partial logits (one vec4 per invocation) */
    return 16ull * t->bc * (vec4s(dk) + vec4s(dv)) + 4ull * t->bc + 4 +
           (t->subgroup ? 0 : 16ull * t->wg);
}

/* Lanes per row: the fewest of 4, 8, 16 that leave each lane at most 4 vec4s
 * of the wider of q and o (16 floats each: registers stay well under 128 per
 * invocation at any width up to 256). Invocations: 128 (the Vulkan minimum
 * of maxComputeWorkGroupInvocations), 32 rows at d <= 64, 16 at 128, 8 at
 * 256. Keys per tile: the largest of 32, 16, 8, 4 whose tiles fit the shared
 * memory (16 at d = 64 and 8 at 128 within the Vulkan minimum of 16 KiB).
 * Subgroup shuffles where the device has them and its smallest subgroup holds
 * a row's lanes; else the shared-memory sums. */
bool vka_flash_tiled_choose(const struct vkattn_context *ctx, uint32_t dk, uint32_t dv,
                            vka_flash_tiled *t)
{
    const vkattn_context_info *info = &ctx->info;
    if (info->cpu_tuning || info->max_storage_buffers_per_stage < TILED_BINDINGS)
        return false;
    const uint32_t widest = vec4s(dk > dv ? dk : dv);
    t->lanes = widest <= 16 ? 4 : widest <= 32 ? 8 : 16;
    uint32_t wg = info->max_workgroup_invocations < info->max_workgroup_size[0]
                      ? info->max_workgroup_invocations
                      : info->max_workgroup_size[0];
    t->wg = 128;
    while (t->wg > wg)
        t->wg /= 2;
    if (t->wg < t->lanes)
        return false;
    t->subgroup = ctx->subgroup_shuffle && info->min_subgroup_size >= t->lanes;
    for (t->bc = 32; t->bc >= 4; t->bc /= 2)
        if (vka_flash_tiled_shared_bytes(t, dk, dv) <= info->max_shared_memory)
            return true;
    return false;
}

/* Upper bound, counting every loop of flash_tiled_body.glsl as a real loop:
 * glslc leaves the [[unroll]] loops as loops with a hint, and lavapipe does
 * not unroll all of them (measured at d = 4, BC = 32: wrong output from about
 * 57k keys, i.e. ~37 iterations per tile; this bound says 93, refusing from
 * about 22k keys there). Per tile: the tile loop; the K, V and value-mask
 * copies (4 more per slot where a width is not a multiple of 4); per four
 * keys the logits (widths, lane sum, mask), the weights (widths, Philox's 10
 * rounds with dropout); the max and rescale; the masked-row sweep again. */
uint64_t vka_flash_tiled_loop_iterations(const vka_flash_tiled *t, uint32_t dk, uint32_t dv,
                                         uint32_t tv, bool dropout, bool uniform_rows)
{
    const uint64_t dk4 = vec4s(dk), dv4 = vec4s(dv), quads = t->bc / 4;
    const uint64_t nq = (dk4 + t->lanes - 1) / t->lanes, no = (dv4 + t->lanes - 1) / t->lanes;
    uint64_t log2_lanes = 0;
    while ((1u << log2_lanes) < t->lanes)
        log2_lanes++;
    const uint64_t copy_k = (t->bc * dk4 + t->wg - 1) / t->wg * (dk % 4 ? 5 : 1);
    const uint64_t copy_v = (t->bc * dv4 + t->wg - 1) / t->wg * (dv % 4 ? 5 : 1);
    const uint64_t copy_m = (t->bc + t->wg - 1) / t->wg;
    const uint64_t weights = quads * (1 + no + (dropout ? 10 : 0));
    uint64_t per_tile = 1 + copy_k + copy_v + copy_m + quads * (1 + nq + log2_lanes + 4) + quads +
                        no + weights;
    if (uniform_rows)
        per_tile += 1 + copy_v + copy_m + weights;
    const uint64_t tiles = ((uint64_t)tv + t->bc - 1) / t->bc;
    return tiles * per_tile + 64;
}

void vka_flash_tiled_kernel(const vka_flash_tiled *t, uint32_t dk, uint32_t dv, vka_kernel *k)
{
    k->name = t->subgroup ? "flash_tiled_sg" : "flash_tiled";
    k->code = t->subgroup ? vka_spv_flash_tiled_sg : vka_spv_flash_tiled;
    k->code_size = t->subgroup ? vka_spv_flash_tiled_sg_size : vka_spv_flash_tiled_size;
    k->n_bindings = TILED_BINDINGS;
    k->n_spec = VKA_FLASH_TILED_N_SPEC;
    k->spec[VKA_FLASH_TILED_SPEC_WG] = t->wg;
    k->spec[VKA_FLASH_TILED_SPEC_BC] = t->bc;
    k->spec[VKA_FLASH_TILED_SPEC_DK] = dk;
    k->spec[VKA_FLASH_TILED_SPEC_DV] = dv;
    k->spec[VKA_FLASH_TILED_SPEC_LANES] = t->lanes;
}
