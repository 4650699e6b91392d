/* The fused SDPA backward (see ops/flash_backward.h): what it supports, tile
 * choice from the device's limits (the CPU tuning's here, the GPU tuning's in
 * ops/flash_backward_gpu_tiles.c), and the three dispatches. Calls beyond the
 * watchdog budget or the workgroup-count limits are split along the key
 * blocks / row blocks (x) and the (batch, K/V head) pairs (z); every piece
 * computes whole keys or rows, so the bits do not depend on the split. */
#include "ops/flash_backward.h"

#include <math.h>
#include <string.h>

#include "core/broadcast.h"
#include "core/check.h"
#include "core/dropout_host.h"
#include "core/dtype.h"
#include "core/error.h"
#include "common/flash_backward_iface.h"
#include "ops/flash_backward_coopmat.h"
#include "ops/flash_backward_gpu_tiles.h"
#include "ops/sdpa_shape.h"
#include "ops/variant_select.h"
#include "ops/split.h"
#include "vk/dispatch.h"
#include "vk/tensor.h"
#include "vk/view.h"
#include "vka_shaders.h"

VKA_PUSH_STRUCT(fb_push, VKA_FB_PUSH);

/* Storage buffers of flash_backward_kv.comp (the q kernel binds 9, stats 4). */
#define FB_KV_BINDINGS 10u
#define FB_Q_BINDINGS 9u
#define FB_STATS_BINDINGS 4u
#define FB_MAX_WIDTH 256u

typedef vka_fb_cpu_tiles fb_tiles;

static uint32_t vec4s(uint32_t d) { return (d + 3) / 4; }

/* Shared bytes: kv: Q and dO tiles of `rows` rows and their stats; q: K and V
 * tiles of `keys` keys and the value-mask tile. */
static uint64_t kv_shared(uint32_t rows, const vka_sdpa_shape *s)
{
    return 16ull * rows * (vec4s(s->dk) + vec4s(s->dv)) + 8ull * rows;
}
static uint64_t q_shared(uint32_t keys, const vka_sdpa_shape *s)
{
    return 16ull * keys * (vec4s(s->dk) + vec4s(s->dv)) + 4ull * keys;
}

/* The CPU tuning's kernels: 32 invocations of 4 keys for dK/dV; the dQ
 * kernel as the forward: 64 invocations, 4 rows each (a shared read then
 * feeds 4 rows; 2 for wide heads), 1 for few rows. Tiles: the largest of 32,
 * 16, 8, 4 that fits. */
static bool choose_tiles(const vkattn_context_info *info, const vka_sdpa_shape *s, fb_tiles *t)
{
    uint32_t wg_max = info->max_workgroup_invocations < info->max_workgroup_size[0]
                          ? info->max_workgroup_invocations
                          : info->max_workgroup_size[0];
    if (wg_max == 0)
        return false;
    t->kv_wg = wg_max < 32 ? wg_max : 32;
    t->q_wg = wg_max < 64 ? wg_max : 64;
    t->q_rpi = s->dk + s->dv <= 256 ? 4 : 2;
    if ((uint64_t)s->group * s->tq <= 8)
        t->q_rpi = 1;
    t->kv_tile = t->q_tile = 0;
    for (uint32_t n = 32; n >= 4; n /= 2) {
        if (!t->kv_tile && kv_shared(n, s) <= info->max_shared_memory)
            t->kv_tile = n;
        if (!t->q_tile && q_shared(n, s) <= info->max_shared_memory)
            t->q_tile = n;
    }
    return t->kv_tile && t->q_tile;
}

static bool fits_u32_indexing(const vka_sdpa_shape *s, const vkattn_mask_params *m)
{
    const uint32_t d = s->dk > s->dv ? s->dk : s->dv;
    return vka_count4(s->batch, s->heads, s->tq, d) <= UINT32_MAX &&
           vka_count4(s->batch, s->kv_heads, s->tv + 4, d) <= UINT32_MAX &&
           vka_count4(s->batch, s->heads, s->tq, 2) <= UINT32_MAX &&
           vka_sdpa_masks_fit_u32(s, m);
}

/* Loop iterations per invocation on lavapipe (65535 at most, see flash.c):
 * the kv kernel walks every query row of its group once per row tile, the q
 * kernel every 4-key group of its key tiles. */
static uint64_t loop_iterations(const vka_sdpa_shape *s, const fb_tiles *t)
{
    const uint64_t rows = (uint64_t)s->group * s->tq;
    const uint64_t kv = vka_div_up(rows, t->kv_tile) * (t->kv_tile + 4);
    const uint64_t q = vka_div_up(s->tv, t->q_tile) * (t->q_tile / 4 + 4);
    return (kv > q ? kv : q) + 64 + s->dv; /* + the stats pass's width loop */
}

/* Whether the GPU tuning's kernels serve the call: soft-capping is in the
 * CPU-shaped kernels only (flash_backward_body.glsl): the GPU-shaped ones keep
 * their register budgets (ops/register_budget.c). */
static bool gpu_shaped(const struct vkattn_context *ctx, const vkattn_sdpa_params *p)
{
    return !vka_info(ctx)->cpu_tuning && p->softcap == 0.0f;
}

/* The GPU tuning's tiles (ops/flash_backward_gpu_tiles.h) for shape s. */
static bool gpu_tiles(const struct vkattn_context *ctx, const vka_sdpa_shape *s,
                      vka_fb_gpu_tiles *t)
{
    return vka_select_flash_backward(ctx, s->dk, s->dv, t); /* advanced->variants too */
}

static vkattn_result gpu_check(const struct vkattn_context *ctx, const vka_sdpa_shape *s,
                               const vkattn_sdpa_params *p, const char **reason)
{
    vka_fb_gpu_tiles t = {0};
    if (!gpu_tiles(ctx, s, &t)) {
        *reason = "no tile of the GPU-tuning kernels fits the device's shared memory or "
                  "invocation limits within the register budget";
        return VKATTN_ERROR_DEVICE_LIMIT;
    }
    if (vka_flash_backward_gpu_loop_iterations(
            &t, s->dk, s->dv, (uint64_t)s->group * s->tq, s->tv,
            s->drop, vka_count4(s->batch, s->heads, s->tq, 1),
            vka_info(ctx)->max_workgroup_count[0]) > vka_loop_budget(ctx)) {
        *reason = "tq or tv is too long for lavapipe, which ends a shader invocation after "
                  "65535 loop iterations";
        return VKATTN_ERROR_DEVICE_LIMIT;
    }
    return VKATTN_SUCCESS;
}

vkattn_result vka_flash_backward_check(const struct vkattn_context *ctx,
                                       const vka_sdpa_shape *shape, const vkattn_sdpa_params *p,
                                       const char **why)
{
    const vka_sdpa_shape s = *shape;
    const char *reason = NULL;
    vkattn_result code = VKATTN_ERROR_UNSUPPORTED;
    fb_tiles t = {0};
    if (s.dk > FB_MAX_WIDTH || s.dv > FB_MAX_WIDTH)
        reason = "dk or dv is above 256";
    else if (s.tq > INT32_MAX || s.tv > INT32_MAX)
        reason = "tq or tv is 2^31 or more";
    else if (!fits_u32_indexing(&s, &p->mask))
        reason = "a tensor exceeds the kernels' 32-bit indexing";
    else if (vka_info(ctx)->max_storage_buffers_per_stage < FB_KV_BINDINGS)
        reason = "the device allows fewer than 10 storage buffers per shader "
                 "(maxPerStageDescriptorStorageBuffers)";
    else if (gpu_shaped(ctx, p))
        code = gpu_check(ctx, &s, p, &reason);
    else if (!choose_tiles(vka_info(ctx), &s, &t)) {
        code = VKATTN_ERROR_DEVICE_LIMIT;
        reason = "no tile fits the device's shared memory or invocation limits";
    } else if (loop_iterations(&s, &t) > vka_loop_budget(ctx)) {
        code = VKATTN_ERROR_DEVICE_LIMIT;
        reason = "tq or tv is too long for lavapipe, which ends a shader invocation after 65535 "
                 "loop iterations";
    } else
        code = VKATTN_SUCCESS;
    if (why)
        *why = reason;
    return code;
}

void vka_flash_backward_choose(const struct vkattn_context *ctx, const vka_sdpa_shape *s,
                               const vkattn_sdpa_params *p, vka_flash_backward_choice *c)
{
    *c = (vka_flash_backward_choice){.gpu = gpu_shaped(ctx, p)};
    /* cannot fail: vka_flash_backward_check chose the same tiles */
    if (c->gpu)
        gpu_tiles(ctx, s, &c->gpu_tiles);
    else
        choose_tiles(vka_info(ctx), s, &c->cpu_tiles);
}

static bool is_f16(const struct vkattn_tensor *t) { return t->dtype == VKATTN_DTYPE_F16; }
static bool is_bf16(const struct vkattn_tensor *t) { return t && t->dtype == VKATTN_DTYPE_BF16; }

void vka_flash_backward_choose_coopmat(const struct vkattn_context *ctx,
                                       const vka_sdpa_shape *s, const vkattn_sdpa_params *p,
                                       const vkattn_sdpa_backward_io *io,
                                       vka_flash_backward_choice *c)
{
    /* f16 fragments hold f16 operands exactly, not bf16 ones; and a bf16 out
     * or gradient stages every operand into f32 (sdpa_backward.c), which the
     * module chosen for 16-bit storage (cm.f16) would read as halves */
    const bool f16_operands = is_f16(io->q) && is_f16(io->k) && is_f16(io->v) &&
                              is_f16(io->grad_out) && !is_bf16(io->out) &&
                              !is_bf16(io->grad_q) && !is_bf16(io->grad_k) && !is_bf16(io->grad_v);
    c->coopmat = vka_flash_backward_coopmat_choose(ctx, s, p, f16_operands, &c->cm);
}

static fb_push make_push(const vka_sdpa_shape *s, const vkattn_sdpa_params *p)
{
    const vkattn_dropout_params *d = &p->dropout;
    fb_push push = {
        .heads = s->heads, .group = s->group, .tq = s->tq, .tv = s->tv,
        .scale_log2 = s->scale_log2, .scale = s->scale,
        .seed_lo = (uint32_t)d->seed, .seed_hi = (uint32_t)(d->seed >> 32),
        .offset_mix = vka_philox_offset_mix(d->offset),
        .threshold = s->drop_threshold, .drop_scale = s->drop_scale,
        .inv_tv = (float)(1.0 / s->tv),
        .rows = (uint32_t)vka_count4(s->batch, s->heads, s->tq, 1),
        .window = s->window,
        .softcap_log2 = (float)((double)p->softcap * 1.4426950408889634),
    };
    uint32_t st[3];
    vka_sdpa_bcast_strides(s, p->mask.mask_broadcast, st);
    push.mask_b = st[0], push.mask_h = st[1], push.mask_i = st[2];
    vka_sdpa_bcast_strides(s, p->mask.bias_broadcast, st);
    push.bias_b = st[0], push.bias_h = st[1], push.bias_i = st[2];
    return push;
}

/* A gx by gz grid in pieces (ops/split.h). */
static vkattn_result record_pieces(struct vkattn_context *ctx, VkCommandBuffer cmd, uint64_t gx,
                                   uint64_t gz, uint64_t work, vka_dispatch *d, fb_push *push)
{
    return vka_record_grid_pieces(ctx, cmd, gx, gz, work, d, &push->x_base, &push->z_base);
}

/* The three kernels of this call: the CPU tuning's (flash_backward_body.glsl)
 * or the GPU tuning's (flash_backward_{stats,kv,q}_gpu_body.glsl), with
 * their workgroup geometry: keys per kv workgroup, query rows per q workgroup,
 * rows per stats workgroup. */
typedef struct fb_kernels {
    vka_kernel stats, kv, q;
    uint32_t kv_keys, q_rows, stats_rows;
} fb_kernels;

/* kname, or its _f16 variant (FB_F16: q, k, v and out read as f16 where
 * they are, shaders/common/flash_backward_io.glsl) where `f16` */
#define FB_KERNEL(k, kname, n)                                                                     \
    ((k) = f16 ? (vka_kernel){VKA_KERNEL_SPV(kname##_f16), .n_bindings = (n)}                      \
               : (vka_kernel){VKA_KERNEL_SPV(kname), .n_bindings = (n)})

static void cpu_kernels(const fb_tiles *tiles, bool f16, fb_kernels *k)
{
    const fb_tiles t = *tiles;
    FB_KERNEL(k->stats, flash_backward_stats, FB_STATS_BINDINGS);
    FB_KERNEL(k->kv, flash_backward_kv, FB_KV_BINDINGS);
    FB_KERNEL(k->q, flash_backward_q, FB_Q_BINDINGS);
    k->stats.spec[VKA_FB_SPEC_WG] = t.q_wg < 64 ? t.q_wg : 64;
    k->kv.spec[VKA_FB_SPEC_WG] = t.kv_wg, k->kv.spec[VKA_FB_SPEC_TILE] = t.kv_tile;
    k->kv.spec[VKA_FB_SPEC_RPI] = 1;
    k->q.spec[VKA_FB_SPEC_WG] = t.q_wg, k->q.spec[VKA_FB_SPEC_TILE] = t.q_tile;
    k->q.spec[VKA_FB_SPEC_RPI] = t.q_rpi;
    k->kv_keys = 4 * t.kv_wg, k->q_rows = t.q_wg * t.q_rpi;
    k->stats_rows = k->stats.spec[VKA_FB_SPEC_WG];
}

static void gpu_kernels(const vka_fb_gpu_tiles *tiles, bool f16, fb_kernels *k)
{
    const vka_fb_gpu_tiles t = *tiles;
    if (t.st_sg)
        FB_KERNEL(k->stats, flash_backward_stats_gpu_sg, FB_STATS_BINDINGS);
    else
        FB_KERNEL(k->stats, flash_backward_stats_gpu, FB_STATS_BINDINGS);
    if (t.kv_sg)
        FB_KERNEL(k->kv, flash_backward_kv_gpu_sg, FB_KV_BINDINGS);
    else
        FB_KERNEL(k->kv, flash_backward_kv_gpu, FB_KV_BINDINGS);
    if (t.q_sg)
        FB_KERNEL(k->q, flash_backward_q_gpu_sg, FB_Q_BINDINGS);
    else
        FB_KERNEL(k->q, flash_backward_q_gpu, FB_Q_BINDINGS);
    k->stats.spec[VKA_FB_SPEC_WG] = t.st_wg, k->stats.spec[VKA_FB_SPEC_LANES] = t.st_lanes;
    k->kv.spec[VKA_FB_SPEC_WG] = t.kv_wg, k->kv.spec[VKA_FB_SPEC_TILE] = t.kv_rows;
    k->kv.spec[VKA_FB_SPEC_LANES] = t.kv_lanes;
    k->q.spec[VKA_FB_SPEC_WG] = t.q_wg, k->q.spec[VKA_FB_SPEC_TILE] = t.q_keys;
    k->q.spec[VKA_FB_SPEC_LANES] = t.q_lanes;
    k->kv_keys = t.kv_wg / t.kv_lanes, k->q_rows = t.q_wg / t.q_lanes;
    k->stats_rows = t.st_wg / t.st_lanes;
}

/* The chosen kernels, their spec constants set from the call: the shape,
 * the masks, and which bound tensors are f16. */
static void make_kernels(const struct vkattn_context *ctx, const vka_sdpa_shape *s,
                         const vkattn_sdpa_params *p, const vka_flash_backward_choice *c,
                         const vkattn_sdpa_backward_io *io, uint32_t push_size, fb_kernels *k)
{
    *k = (fb_kernels){0};
    /* f16 q, k, v, out or (for the fragment kernels, whose stats pass reads
     * it too) grad_out: read as they are where the device has 16-bit storage
     * (the caller staged them otherwise, and bf16 ones always) */
    const vkattn_context_info *info = vka_info(ctx);
    const bool f16 = info->storage_buffer_16bit &&
                     (is_f16(io->q) || is_f16(io->k) || is_f16(io->v) || is_f16(io->out) ||
                      is_f16(io->grad_out));
    if (c->gpu)
        gpu_kernels(&c->gpu_tiles, f16, k);
    else
        cpu_kernels(&c->cpu_tiles, f16, k);
    const vkattn_mask_params *m = &p->mask;
    k->stats.spec[VKA_FB_SPEC_DV] = s->dv;
    vka_kernel *grad[2] = {&k->kv, &k->q};
    for (int g = 0; g < 2; g++) {
        uint32_t *spec = grad[g]->spec;
        spec[VKA_FB_SPEC_DK] = s->dk;
        spec[VKA_FB_SPEC_DV] = s->dv;
        spec[VKA_FB_SPEC_CAUSAL] = (uint32_t)m->causal;
        spec[VKA_FB_SPEC_HAS_VALUE_MASK] = m->has_value_mask;
        spec[VKA_FB_SPEC_HAS_MASK] = m->has_mask;
        spec[VKA_FB_SPEC_HAS_BIAS] = m->has_bias;
        spec[VKA_FB_SPEC_DROPOUT] = s->drop;
        spec[VKA_FB_SPEC_UNIFORM_ROWS] = m->masked_row == VKATTN_MASKED_ROW_UNIFORM;
    }
    vka_kernel *all[3] = {&k->stats, &k->kv, &k->q};
    for (int i = 0; i < 3; i++) {
        all[i]->push_size = push_size;
        all[i]->n_spec = f16 ? VKA_FB_N_SPEC_F16 : VKA_FB_N_SPEC;
        /* (read only by the _f16 modules: n_spec ends before them elsewhere) */
        all[i]->spec[VKA_FB_SPEC_Q_TYPE] = vka_dtype_spec_code(io->q->dtype);
        all[i]->spec[VKA_FB_SPEC_K_TYPE] = vka_dtype_spec_code(io->k->dtype);
        all[i]->spec[VKA_FB_SPEC_V_TYPE] = vka_dtype_spec_code(io->v->dtype);
        all[i]->spec[VKA_FB_SPEC_O_TYPE] = vka_dtype_spec_code(io->out->dtype);
        all[i]->spec[VKA_FB_SPEC_DO_TYPE] = vka_dtype_spec_code(io->grad_out->dtype);
    }
}

vkattn_result vka_flash_backward_record(struct vkattn_context *ctx, VkCommandBuffer cmd,
                                        const vka_sdpa_shape *shape,
                                        const vkattn_sdpa_params *p,
                                        const vka_flash_backward_choice *choice,
                                        const vkattn_sdpa_backward_io *io,
                                        struct vkattn_tensor *stats, const char *caller)
{
    /* the caller's plan chose these kernels and tiles (vka_flash_backward_choose) */
    vkattn_result r;
    const vka_sdpa_shape s = *shape;
    const vkattn_mask_params *m = &p->mask;
    fb_push push = make_push(&s, p);
    fb_kernels k;
    make_kernels(ctx, &s, p, choice, io, sizeof push, &k);
    /* the gradient kernels on cooperative matrices where the plan chose them */
    const bool coopmat = choice->coopmat;
    if (coopmat) {
        vka_flash_backward_coopmat_kernels(&choice->cm, &k.kv, &k.q);
        k.kv_keys = k.q_rows = vka_flash_backward_coopmat_rows(&choice->cm);
    }

    /* 1: row statistics (a grid-stride loop covers rows past the grid) */
    uint64_t sg = vka_div_up(push.rows, k.stats_rows);
    if (sg > vka_info(ctx)->max_workgroup_count[0])
        sg = vka_info(ctx)->max_workgroup_count[0];
    vka_dispatch sd = {
        .kernel = &k.stats, .push = &push, .caller = caller,
        .bindings = {vka_bind_tensor(io->grad_out, false), vka_bind_tensor(io->out, false),
                     vka_bind_tensor(io->lse, false), vka_bind_tensor(stats, true)},
        .groups = {(uint32_t)sg, 1, 1},
    };
    if ((r = vka_record_dispatch(ctx, cmd, &sd)))
        return r;

    /* 2 and 3: dK, dV and dQ */
    vka_dispatch d = {.kernel = &k.kv, .push = &push, .caller = caller};
    const vka_binding common[8] = {
        vka_bind_tensor(io->q, false), vka_bind_tensor(io->k, false),
        vka_bind_tensor(io->v, false), vka_bind_tensor(io->grad_out, false),
        vka_bind_tensor(stats, false), vka_bind_optional(ctx, m->has_bias ? io->bias : NULL),
        vka_bind_optional(ctx, m->has_value_mask ? io->value_mask : NULL),
        vka_bind_optional(ctx, m->has_mask ? io->mask : NULL)};
    memcpy(d.bindings, common, sizeof common);
    d.bindings[8] = vka_bind_tensor(io->grad_k, true);
    d.bindings[9] = vka_bind_tensor(io->grad_v, true);
    const uint64_t gz = (uint64_t)s.batch * s.kv_heads;
    const uint64_t work = vka_count4(s.batch, s.heads, s.tq, s.tv) * (2ull * s.dk + 2ull * s.dv);
    if ((r = record_pieces(ctx, cmd, vka_div_up(s.tv, k.kv_keys), gz, work, &d, &push)))
        return r;
    d.kernel = &k.q;
    d.bindings[8] = vka_bind_tensor(io->grad_q, true);
    d.bindings[9] = coopmat ? vka_bind_optional(ctx, NULL) : (vka_binding){0};
    const uint64_t gx = vka_div_up((uint64_t)s.group * s.tq, k.q_rows);
    return record_pieces(ctx, cmd, gx, gz, work, &d, &push);
}
