/* Choice and tiles of the cooperative-matrix fused kernel (see
 * flash_coopmat.h and shaders/common/flash_coopmat_body.glsl). */
#include "ops/flash_coopmat.h"

#include "common/flash_coopmat_iface.h"
#include "core/dropout_host.h"
#include "ops/coopmat_kernels.h"
#include "ops/variant_select.h"
#include "vk/dispatch.h"
#include "vk/tensor.h"
#include "vk/view.h"

/* Upper bound of the loop iterations one invocation of the emulated kernel
 * runs (lavapipe's limit, see flash.c): every loop counted as kept rolled,
 * its exit test as one more iteration (the matmul's emulation measured that
 * the exits count). loop(n, body) is n iterations of `body` plus the exit.
 * Per key tile: the K, V and value-mask copies (a group of eight halves
 * loaded one by one: 8), per S fragment the zeroing, the DK steps of an
 * emulated product (8 elements of 16 multiply-adds) and the store; the
 * softmax (four masked keys per quad, Philox's 10 rounds with dropout, the
 * rescale); per P V fragment the product over the tile's keys, the store and
 * the sum; the masked-row sweep over every tile again; then Q's copy and the
 * output. The hardware kernel has no such limit (its devices are not
 * lavapipe). */
static uint64_t loop(uint64_t n, uint64_t body) { return n * (1 + body) + 1; }

static uint64_t emulated_loop_iterations(const vka_flash_coopmat_tiles *t, const vka_sdpa_shape *s,
                                         bool dropout, bool uniform_rows)
{
    const uint64_t wg = 32ull * t->warps, rows = 16ull * t->warps;
    const uint64_t kf = vka_div_up(s->dk, 16), vf = vka_div_up(s->dv, 16), cf = t->bc / 16;
    const uint64_t frag = loop(8, 0), mad = loop(8, loop(16, 0)), philox = dropout ? loop(10, 0) : 0;
    const uint64_t copy_k = loop(vka_div_up(t->bc * kf * 2, wg), loop(8, 0));
    const uint64_t copy_v = loop(vka_div_up(t->bc * vf * 2, wg), loop(8, 0));
    const uint64_t copy_m = loop(vka_div_up(t->bc, wg), 0);
    const uint64_t scores = loop(cf, frag + loop(kf, mad) + frag);
    const uint64_t softmax = loop(2 * cf, loop(4, 0)) + loop(8 * vf, 0) + loop(cf, loop(2, philox));
    const uint64_t pv = loop(vf, frag + loop(cf, mad) + frag + loop(8, 0));
    const uint64_t tiles = vka_div_up(s->tv, t->bc);
    uint64_t n = loop(tiles, copy_k + copy_v + copy_m + scores + softmax + pv);
    if (uniform_rows)
        n += loop(8 * vf, 0) + loop(tiles, copy_v + copy_m + loop(cf, 2 * philox) + pv);
    const uint64_t copy_q = loop(vka_div_up(rows * kf * 2, wg), loop(8, 0));
    return n + copy_q + loop(8 * vf, 0) + loop(vf, loop(4, 0)) + 64;
}

static bool is_f16(const struct vkattn_tensor *t) { return t->dtype == VKATTN_DTYPE_F16; }

bool vka_flash_coopmat_choose(const struct vkattn_context *ctx, const vka_sdpa_shape *s,
                              const vkattn_sdpa_params *p, const vkattn_sdpa_io *io,
                              vka_flash_coopmat *out)
{
    const uint32_t family = vka_coopmat_family_now(ctx, VKA_COOPMAT_FLASH);
    const bool emulated = family == VKATTN_COOPMAT_EMULATED;
    if (!family || !is_f16(io->q) || !is_f16(io->k) || !is_f16(io->v) ||
        !vka_select_flash_coopmat(ctx, s->dk, s->dv, &out->tiles))
        return false;
    out->family = family;
    out->fault = emulated && vka_coopmat_test_fault(ctx);
    if (emulated && emulated_loop_iterations(&out->tiles, s, s->drop,
                                             p->mask.masked_row == VKATTN_MASKED_ROW_UNIFORM) >
                        vka_loop_budget(ctx))
        return false;
    vka_coopmat_note_taken();
    out->vec8 = s->dk % 8 == 0 && s->dv % 8 == 0 && io->q->offset % 16 == 0 &&
                io->k->offset % 16 == 0 && io->v->offset % 16 == 0;
    return true;
}

void vka_flash_coopmat_kernel(const vka_flash_coopmat *t, uint32_t dk, uint32_t dv, vka_kernel *k)
{
    vka_coopmat_module(t->family, VKA_COOPMAT_FLASH, k);
    k->n_bindings = 8;
    k->n_spec = VKA_FLASH_COOPMAT_N_SPEC;
    k->spec[VKA_FLASH_COOPMAT_SPEC_WG] = 32 * t->tiles.warps;
    k->spec[VKA_FLASH_COOPMAT_SPEC_BC] = t->tiles.bc;
    k->spec[VKA_FLASH_COOPMAT_SPEC_DK] = dk;
    k->spec[VKA_FLASH_COOPMAT_SPEC_DV] = dv;
    k->spec[VKA_FLASH_COOPMAT_SPEC_VEC8] = t->vec8;
    k->spec[VKA_FLASH_COOPMAT_SPEC_FAULT] = t->fault;
}
