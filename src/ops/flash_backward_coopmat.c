/* Choice and tiles of the fused backward's cooperative-matrix gradient
 * kernels (see flash_backward_coopmat.h and
 * shaders/common/flash_backward_coopmat_body.glsl). */
#include "ops/flash_backward_coopmat.h"

#include "common/flash_backward_coopmat_iface.h"
#include "ops/coopmat_kernels.h"
#include "ops/register_budget.h"
#include "ops/variant_select.h"
#include "vk/coopmat.h"
#include "vk/dispatch.h"
#include "vk/view.h"

#define FBC_BINDINGS 10u /* flash_backward.c's kv layout; the dQ run binds a dummy dV */
#define FBC_MAX_WIDTH 256u

static uint32_t round16(uint32_t d) { return (d + 15) / 16 * 16; }

uint32_t vka_flash_backward_coopmat_shared_bytes(const vka_flash_coopmat_tiles *t, uint32_t dk,
                                                 uint32_t dv)
{
    /* the body's arrays: uvec4 rows of eight halves padded by one (own K and
     * V, the tile's Q and dO, each warp's P and dS tiles), each warp's two f32
     * squares and dK, dV accumulators, the stats (vec2) and value mask */
    const uint32_t kld = round16(dk) / 8 + 1, vld = round16(dv) / 8 + 1, pld = t->bc / 8 + 1;
    const uint32_t own = 16 * t->warps, most = own > t->bc ? own : t->bc;
    return 16 * ((own + t->bc) * (kld + vld) + 2 * own * pld) +
           4 * (2 * own * (t->bc + 4) + own * (round16(dk) + round16(dv))) + 12 * most;
}

bool vka_flash_backward_coopmat_fits(const vkattn_context_info *info,
                                     const vka_flash_coopmat_tiles *t, uint32_t dk, uint32_t dv)
{
    const uint32_t threads = 32 * t->warps;
    return !info->cpu_tuning && dk && dv && dk <= FBC_MAX_WIDTH && dv <= FBC_MAX_WIDTH &&
           t->bc % 16 == 0 && t->bc && threads <= info->max_workgroup_invocations &&
           threads <= info->max_workgroup_size[0] &&
           info->max_storage_buffers_per_stage >= FBC_BINDINGS &&
           vka_flash_backward_coopmat_shared_bytes(t, dk, dv) <= info->max_shared_memory &&
           vka_flash_backward_coopmat_live_values() <= vka_register_budget(info);
}

bool vka_flash_backward_coopmat_choose_tiles(const vkattn_context_info *info, uint32_t dk,
                                             uint32_t dv, vka_flash_coopmat_tiles *out)
{
    static const vka_flash_coopmat_tiles candidates[] = {
        {4, 32}, {4, 16}, {2, 32}, {2, 16}, {1, 32}, {1, 16},
    };
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++)
        if (vka_flash_backward_coopmat_fits(info, &candidates[i], dk, dv)) {
            *out = candidates[i];
            return true;
        }
    return false;
}

/* Upper bound of the loop iterations one invocation of the emulated kernels
 * runs (lavapipe's limit, see flash.c), as flash_coopmat.c counts them: every
 * loop kept rolled, its exit test one more iteration. Per tile: the two
 * staging copies (eight halves each), the scores' products (an emulated
 * product: 8 elements of 16 multiply-adds), the per-element pass (four
 * masked keys, Philox's 10 rounds with dropout), the two f16 packs, the
 * accumulating products with their stores and sums; then the rows' own
 * staging, the zeroing and the stores. The larger of the two kernels. */
static uint64_t loop(uint64_t n, uint64_t body) { return n * (1 + body) + 1; }

static uint64_t emulated_loop_iterations(const vka_flash_coopmat_tiles *t, const vka_sdpa_shape *s,
                                         bool dropout)
{
    const uint64_t wg = 32ull * t->warps, own = 16ull * t->warps, bc = t->bc;
    const uint64_t kf = vka_div_up(s->dk, 16), vf = vka_div_up(s->dv, 16), cf = bc / 16;
    const uint64_t frag = loop(8, 0), mad = loop(8, loop(16, 0));
    const uint64_t stage = loop(vka_div_up(bc * 2 * (kf + vf), wg), loop(8, 0)) * 2 +
                           loop(vka_div_up(bc, wg), 0);
    const uint64_t scores =
        loop(cf, frag + loop(kf, mad) + frag) + loop(cf, frag + loop(vf, mad) + frag);
    const uint64_t elems = loop(bc / 8, loop(4, 0) + (dropout ? loop(10, 0) : 0) + loop(4, 0));
    const uint64_t pack = 2 * loop(vka_div_up(2 * bc, 32), 0);
    const uint64_t acc = loop(kf + vf, frag + loop(cf, mad) + frag + loop(8, 0));
    const uint64_t per_tile = stage + scores + elems + pack + acc;
    const uint64_t rows = (uint64_t)s->group * s->tq;
    const uint64_t tiles = vka_div_up(rows > s->tv ? rows : s->tv, bc);
    const uint64_t own_stage = loop(vka_div_up(own * 2 * (kf + vf), wg), loop(8, 0)) * 2;
    const uint64_t ends = 3 * loop(vka_div_up(own * 16 * (kf + vf), wg), 0) + loop(own, 0);
    return loop(tiles, per_tile) + own_stage + ends + 64;
}

/* The family's module (ops/coopmat_kernels.h): none for NV2, nor for a
 * family this build's glslc could not compile (size 0). */
static bool module_of(uint32_t family, bool f16, vka_kernel *m)
{
    if (family != VKATTN_COOPMAT_NV && family != VKATTN_COOPMAT_KHR &&
        family != VKATTN_COOPMAT_EMULATED)
        return false;
    vka_coopmat_backward_module(family, f16, m);
    return m->code_size != 0;
}

bool vka_flash_backward_coopmat_choose(const struct vkattn_context *ctx, const vka_sdpa_shape *s,
                                       const vkattn_sdpa_params *p, bool f16_operands,
                                       vka_fb_coopmat *out)
{
    /* the family whose backward check passed (coopmat_selftest.c; never NV2:
     * its forward multiplies workgroup-scope matrices, there is no NV2
     * backward), or the self-test's override */
    const uint32_t family = vka_coopmat_family_now(ctx, VKA_COOPMAT_BACKWARD);
    /* f16 operands read as they are wherever the device can bind them */
    const bool f16 = vka_info(ctx)->storage_buffer_16bit;
    vka_kernel m = {0};
    if (!family || !f16_operands || p->softcap != 0.0f || !module_of(family, f16, &m) ||
        !vka_select_flash_backward_coopmat(ctx, s->dk, s->dv, &out->tiles))
        return false;
    const bool emulated = family == VKATTN_COOPMAT_EMULATED;
    if (emulated && emulated_loop_iterations(&out->tiles, s, s->drop) > vka_loop_budget(ctx))
        return false;
    out->family = family;
    out->f16 = f16;
    out->fault = emulated && vka_coopmat_test_fault(ctx);
    vka_coopmat_note_taken();
    return true;
}

static void make_kernel(const vka_fb_coopmat *t, const vka_kernel *m, bool kv, vka_kernel *k)
{
    vka_kernel out = {.name = m->name, .code = m->code, .code_size = m->code_size,
                      .n_bindings = FBC_BINDINGS, .push_size = k->push_size,
                      .n_spec = VKA_FBC_N_SPEC};
    for (uint32_t i = VKA_FB_SPEC_DK; i <= VKA_FB_SPEC_UNIFORM_ROWS; i++)
        out.spec[i] = k->spec[i];
    out.spec[VKA_FB_SPEC_WG] = 32 * t->tiles.warps;
    out.spec[VKA_FB_SPEC_TILE] = t->tiles.bc;
    out.spec[VKA_FBC_SPEC_KV] = kv;
    out.spec[VKA_FBC_SPEC_FAULT] = t->fault;
    *k = out;
}

void vka_flash_backward_coopmat_kernels(const vka_fb_coopmat *t, vka_kernel *kv, vka_kernel *q)
{
    vka_kernel m = {0};
    module_of(t->family, t->f16, &m); /* cannot fail: chosen */
    make_kernel(t, &m, true, kv);
    make_kernel(t, &m, false, q);
}
