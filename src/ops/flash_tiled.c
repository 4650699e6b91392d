/* Tiles of the GPU-shaped fused attention kernel from the device's limits and
 * the head widths (see flash_tiled.h and shaders/common/flash_tiled_body.glsl). */
#include "ops/flash_tiled.h"

#include "common/flash_tiled_iface.h"
#include "ops/variant_select.h"
#include "vk/view.h"
#include "vka_shaders.h"

/* Storage buffers of the unpacked layout, the only one this kernel has. */
#define TILED_BINDINGS 8u

static uint32_t vec4s(uint32_t d) { return (d + 3) / 4; }

bool vka_flash_tiled_choose(const struct vkattn_context *ctx, uint32_t dk, uint32_t dv,
                            vka_flash_tiled *t)
{
    return vka_select_flash_tiled(ctx, dk, dv, t); /* advanced->variants too */
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
