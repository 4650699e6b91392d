/* Choice and tiles of the cooperative-matrix fused kernel (see
 * flash_coopmat.h and shaders/common/flash_coopmat_body.glsl). */
#include "ops/flash_coopmat.h"

#include "common/flash_coopmat_iface.h"
#include "core/dropout_host.h"
#include "vk/context.h"
#include "vk/tensor.h"
#include "vka_shaders.h"

static uint32_t div_up(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

/* Upper bound of the loop iterations one invocation of the emulated kernel
 * runs (lavapipe's limit, see flash.c), counting every [[unroll]] loop as a
 * loop: per key tile, the tile loop, the K, V and value-mask copies (eight
 * more per group where halves load one by one), per S fragment the DK steps
 * of an emulated product (8 elements x 16 products, plus the loop heads) and
 * its store, the softmax (four masked keys, Philox's 10 rounds, the
 * rescale), per P V fragment the key steps, the store and the sum; the
 * masked-row sweep again; then Q's copy. The hardware kernel has no such
 * limit (its devices are not lavapipe). */
static uint64_t emulated_loop_iterations(const vka_flash_coopmat_tiles *t, const vka_sdpa_shape *s,
                                         bool dropout, bool uniform_rows)
{
    const uint64_t wg = 32ull * t->warps, mad = 8 * (1 + 16);
    const uint64_t kf = div_up(s->dk, 16), vf = div_up(s->dv, 16), cf = t->bc / 16;
    const uint64_t copy_k = div_up(t->bc * kf * 2, wg) * 9, copy_v = div_up(t->bc * vf * 2, wg) * 9;
    const uint64_t copy_m = div_up(t->bc, wg);
    const uint64_t scores = cf * (1 + kf * (1 + mad) + 8);
    const uint64_t softmax = cf * 2 * (1 + 4 + (dropout ? 10 : 0)) + vf * 8 + cf * 3;
    const uint64_t pv = vf * (1 + cf * (1 + mad) + 8 + 8);
    uint64_t per_tile = 1 + copy_k + copy_v + copy_m + scores + softmax + pv;
    if (uniform_rows)
        per_tile += 1 + copy_v + copy_m + cf * (1 + (dropout ? 20 : 0)) + pv;
    const uint64_t copy_q = div_up(16 * t->warps * kf * 2, wg) * 9;
    return div_up(s->tv, t->bc) * per_tile + copy_q + 64;
}

static bool is_f16(const struct vkattn_tensor *t) { return t->dtype == VKATTN_DTYPE_F16; }

bool vka_flash_coopmat_choose(const struct vkattn_context *ctx, const vka_sdpa_shape *s,
                              const vkattn_sdpa_params *p, const vkattn_sdpa_io *io,
                              vka_flash_coopmat *out)
{
    const bool emulated = ctx->coopmat_emulate;
    if (!ctx->info.coopmat_attention || !is_f16(io->q) || !is_f16(io->k) || !is_f16(io->v) ||
        !vka_flash_coopmat_choose_tiles(&ctx->info, s->dk, s->dv, &out->tiles))
        return false;
    out->emulated = emulated;
    if (emulated && emulated_loop_iterations(&out->tiles, s, vka_dropout_active(&p->dropout),
                                             p->mask.masked_row == VKATTN_MASKED_ROW_UNIFORM) >
                        ctx->loop_budget)
        return false;
    out->vec8 = s->dk % 8 == 0 && s->dv % 8 == 0 && io->q->offset % 16 == 0 &&
                io->k->offset % 16 == 0 && io->v->offset % 16 == 0;
    return true;
}

void vka_flash_coopmat_kernel(const vka_flash_coopmat *t, uint32_t dk, uint32_t dv, vka_kernel *k)
{
    k->name = t->emulated ? "flash_coopmat_emu" : "flash_coopmat_nv";
    k->code = t->emulated ? vka_spv_flash_coopmat_emu : vka_spv_flash_coopmat_nv;
    k->code_size = t->emulated ? vka_spv_flash_coopmat_emu_size : vka_spv_flash_coopmat_nv_size;
    k->n_bindings = 8;
    k->n_spec = VKA_FLASH_COOPMAT_N_SPEC;
    k->spec[VKA_FLASH_COOPMAT_SPEC_WG] = 32 * t->tiles.warps;
    k->spec[VKA_FLASH_COOPMAT_SPEC_BC] = t->tiles.bc;
    k->spec[VKA_FLASH_COOPMAT_SPEC_DK] = dk;
    k->spec[VKA_FLASH_COOPMAT_SPEC_DV] = dv;
    k->spec[VKA_FLASH_COOPMAT_SPEC_VEC8] = t->vec8;
}
