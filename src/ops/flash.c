/* The fused SDPA kernel: what it supports, tile choice from the device's
 * limits, and the dispatch of shaders/flash.comp, or of its 4-binding layout
 * shaders/flash_packed.comp (one kernel, shaders/common/flash_body.glsl) on
 * devices that allow fewer than 8 storage buffers per shader; under the GPU
 * tuning, of the GPU-shaped kernel shaders/flash_tiled*.comp where
 * ops/flash_tiled.c finds tiles for it (same push constants and bindings).
 * A call is split into several dispatches along its row blocks (and (batch,
 * K/V head) pairs) when it exceeds the context's watchdog budget or the workgroup-count limits;
 * each piece computes whole rows, so the bits do not depend on the split. */
#include "ops/flash.h"

#include <math.h>
#include <string.h>

#include "common/elem_iface.h"
#include "core/broadcast.h"
#include "core/check.h"
#include "core/dropout_host.h"
#include "core/dtype.h"
#include "core/error.h"
#include "common/flash_coopmat_iface.h"
#include "common/flash_iface.h"
#include "common/flash_tiled_iface.h"
#include "ops/flash_coopmat.h"
#include "ops/flash_tiled.h"
#include "ops/half_convert.h"
#include "ops/half_stage.h"
#include "ops/scratch_kinds.h"
#include "ops/sdpa_shape.h"
#include "ops/split.h"
#include "vk/dispatch.h"
#include "vk/pack.h"
#include "vk/tensor.h"
#include "vk/view.h"
#include "vka_shaders.h"

VKA_PUSH_STRUCT(flash_push, VKA_FLASH_PUSH);

/* Storage buffers of shaders/flash.comp; flash_packed.comp needs 4. */
#define FLASH_BINDINGS 8u
#define FLASH_PACKED_BINDINGS 4u

/* The two kernels share the meaning of every specialization constant but the
 * tile shapes (set by each kernel's own code below). */
_Static_assert(VKA_FLASH_TILED_SPEC_Q_TYPE == VKA_FLASH_SPEC_Q_TYPE &&
                   VKA_FLASH_TILED_SPEC_K_TYPE == VKA_FLASH_SPEC_K_TYPE &&
                   VKA_FLASH_TILED_SPEC_V_TYPE == VKA_FLASH_SPEC_V_TYPE &&
                   VKA_FLASH_TILED_SPEC_OUT_TYPE == VKA_FLASH_SPEC_OUT_TYPE,
               "flash_tiled_iface.h and flash_iface.h disagree");
/* The cooperative-matrix kernel's tile constants must miss the shared ones
 * (flash_spec.glsl), which flash.c sets for every kernel. */
_Static_assert(VKA_FLASH_COOPMAT_SPEC_VEC8 > VKA_FLASH_SPEC_WRITE_LSE &&
                   VKA_FLASH_COOPMAT_SPEC_VEC8 < VKA_FLASH_SPEC_OUT_TYPE &&
                   VKA_FLASH_COOPMAT_SPEC_DV < VKA_FLASH_SPEC_CAUSAL &&
                   VKA_FLASH_COOPMAT_SPEC_OUT_TYPE == VKA_FLASH_SPEC_OUT_TYPE,
               "flash_coopmat_iface.h overlaps flash_iface.h's shared constants");

/* Query rows one workgroup owns. */
static uint64_t rows_per_group(const vka_flash_choice *t)
{
    if (t->coopmat)
        return vka_flash_coopmat_rows(&t->cm);
    return t->tiled ? vka_flash_tiled_rows(&t->gpu) : (uint64_t)t->wg * t->rpi;
}

static uint32_t vec4s(uint32_t d) { return (d + 3) / 4; }

/* Bytes of shared memory shaders/flash.comp declares: K and V tiles as vec4
 * rows, the value-mask tile, the masked-row flag. */
static uint64_t shared_bytes(uint32_t bc, uint32_t dk, uint32_t dv)
{
    return 16ull * bc * (vec4s(dk) + vec4s(dv)) + 4ull * bc + 4;
}

/* Rows per invocation: on a CPU driver every K/V element read from shared
 * memory costs more than the FMAs it feeds, so each read serves 4 rows
 * (measured on lavapipe: 3x the speed of 1 row at d = 64 and 128), 2 for
 * widths above 128 (whose unrolled register arrays grow), 1 for at most 8 rows
 * per K/V head (decoding); on GPUs 1, keeping registers for occupancy. Invocations: 64 (eight 8-wide SIMD chunks on
 * lavapipe, two warps on a GPU), 32 while there would be fewer than 32
 * workgroups to spread over the cores; never fewer, even for a single query
 * row (decoding): the tile loads are unrolled over the invocations, and idle
 * invocations skip the math. Keys per tile: the largest of 32, 16, 8, 4 whose
 * tiles fit the shared memory: shared_bytes(bc, dk, dv), e.g. 16.6 KiB at
 * bc = 32, d = 16; 8.3 KiB at bc = 4, dk = dv = 256, so every width fits the
 * Vulkan minimum of 16 KiB with some tile. Both layouts use the same tiles. */
static bool choose_tiles(const struct vkattn_context *ctx, const vka_sdpa_shape *s,
                         bool allow_tiled, vka_flash_choice *t)
{
    const vkattn_context_info *info = vka_info(ctx);
    t->tiled = allow_tiled && vka_flash_tiled_choose(ctx, s->dk, s->dv, &t->gpu);
    if (t->tiled)
        return true;
    const uint64_t rows = (uint64_t)s->group * s->tq, heads = (uint64_t)s->batch * s->kv_heads;
    uint32_t wg_max = 64;
    if (wg_max > info->max_workgroup_invocations)
        wg_max = info->max_workgroup_invocations;
    if (wg_max > info->max_workgroup_size[0])
        wg_max = info->max_workgroup_size[0];
    t->rpi = !info->cpu_tuning ? 1 : s->dk + s->dv <= 256 ? 4 : 2;
    if (rows <= 8) /* decoding: one SIMD chunk of single rows wastes least */
        t->rpi = 1;
    t->wg = wg_max < 64 ? wg_max : 64;
    if (t->wg > 32 && vka_div_up(rows, (uint64_t)t->wg * t->rpi) * heads < 32)
        t->wg = 32;
    if (t->wg == 0)
        return false;
    for (uint32_t bc = 32; bc >= 4; bc /= 2)
        if (shared_bytes(bc, s->dk, s->dv) <= info->max_shared_memory) {
            t->bc = bc;
            return true;
        }
    return false;
}

/* Every index the shader forms stays below 2^32. */
static bool fits_u32_indexing(const vka_sdpa_shape *s, const vkattn_mask_params *m)
{
    const uint32_t d = s->dk > s->dv ? s->dk : s->dv;
    return vka_count4(s->batch, s->heads, s->tq, d) <= UINT32_MAX &&
           vka_count4(s->batch, s->kv_heads, s->tv, d) <= UINT32_MAX &&
           vka_sdpa_masks_fit_u32(s, m);
}

/* Shapes the kernel cannot serve on any device: VKATTN_ERROR_UNSUPPORTED. */
static bool shape_supported(const vka_sdpa_shape *s, const vkattn_sdpa_params *p, const char **why)
{
    if (p->return_weights)
        *why = "it does not return attention weights";
    else if (s->dk > VKA_FLASH_MAX_WIDTH)
        *why = "dk is above 256";
    else if (s->dv > VKA_FLASH_MAX_WIDTH)
        *why = "dv is above 256";
    else if (s->tq > INT32_MAX || s->tv > INT32_MAX)
        *why = "tq or tv is 2^31 or more";
    else if (!fits_u32_indexing(s, &p->mask))
        *why = "a tensor exceeds the kernel's 32-bit indexing";
    else
        return true;
    return false;
}

/* lavapipe (llvmpipe) stops every loop of an invocation once the loops of that
 * invocation have run LP_MAX_TGSI_LOOP_ITERATIONS = 65535 iterations in total,
 * silently: the output is simply wrong. Upper bound of what shaders/flash.comp
 * spends: per key tile, the tile loop and two loops over its 4-key groups (the
 * loads and every width loop are unrolled), plus the masked-row sweep over V
 * under the uniform policy, with a little slack (measured: 19 per 32-key tile,
 * counted here as 20). Every invocation walks all keys of its rows, so
 * splitting the call along rows does not help; splitting along keys would need
 * a second pass merging partial softmaxes, so such calls are refused (and the
 * SDPA op's AUTO path takes the chained kernels). */
static uint64_t loop_iterations(const vka_sdpa_shape *s, const vkattn_sdpa_params *p,
                                const vka_flash_choice *t)
{
    if (t->tiled)
        return vka_flash_tiled_loop_iterations(&t->gpu, s->dk, s->dv, s->tv, s->drop,
                                               p->mask.masked_row == VKATTN_MASKED_ROW_UNIFORM);
    const uint64_t tiles = vka_div_up(s->tv, t->bc);
    uint64_t n = tiles * (4 + t->bc / 2);
    if (p->mask.masked_row == VKATTN_MASKED_ROW_UNIFORM)
        n += tiles * (4 + t->bc / 4);
    return n + 64;
}

/* The check for one kernel choice: the GPU-shaped one where allow_tiled and
 * the device takes it, else flash.comp / flash_packed.comp. */
static vkattn_result check_kernel(const struct vkattn_context *ctx, const vka_sdpa_shape *s,
                                  const vkattn_sdpa_params *p, bool allow_tiled, const char **why)
{
    const char *reason = NULL;
    vkattn_result code = VKATTN_SUCCESS;
    vka_flash_choice t = {0};
    if (!shape_supported(s, p, &reason))
        code = VKATTN_ERROR_UNSUPPORTED;
    else if (!choose_tiles(ctx, s, allow_tiled, &t)) {
        code = VKATTN_ERROR_DEVICE_LIMIT;
        reason = vka_info(ctx)->max_workgroup_invocations == 0 || vka_info(ctx)->max_workgroup_size[0] == 0
                     ? "the device allows no invocations per workgroup "
                       "(maxComputeWorkGroupInvocations)"
                     : "even its smallest tile (4 keys) exceeds the device's shared memory "
                       "(maxComputeSharedMemorySize)";
    } else if (loop_iterations(s, p, &t) > vka_loop_budget(ctx)) {
        code = VKATTN_ERROR_DEVICE_LIMIT;
        reason = "tv is too long for lavapipe, which ends a shader invocation after 65535 "
                 "loop iterations";
    }
    if (why)
        *why = reason;
    return code;
}

/* A call must suit both kernels: the GPU-shaped one serves every dtype alike,
 * but the device (fewer than 8 storage buffers, say) may leave it the other. */
vkattn_result vka_flash_check(const struct vkattn_context *ctx, const vka_sdpa_shape *s,
                              const vkattn_sdpa_params *p, const char **why)
{
    /* soft-capping is in flash_body.glsl only: such calls never take the
     * GPU-shaped (tiled, cooperative-matrix) kernels, whose register budgets
     * (ops/register_budget.c) leave no room for it */
    vkattn_result code = check_kernel(ctx, s, p, p->softcap == 0.0f, why);
    if (code == VKATTN_SUCCESS)
        code = check_kernel(ctx, s, p, false, why);
    return code;
}

bool vka_flash_supports(const struct vkattn_context *ctx, const vka_sdpa_shape *s,
                        const vkattn_sdpa_params *p, const char **why)
{
    return vka_flash_check(ctx, s, p, why) == VKATTN_SUCCESS;
}

static flash_push make_push(const vka_sdpa_shape *s, const vkattn_sdpa_params *p)
{
    const vkattn_dropout_params *d = &p->dropout;
    flash_push push = {
        .heads = s->heads, .group = s->group, .tq = s->tq, .tv = s->tv,
        .scale_log2 = s->scale_log2,
        .seed_lo = (uint32_t)d->seed, .seed_hi = (uint32_t)(d->seed >> 32),
        .offset_mix = vka_philox_offset_mix(d->offset),
        .threshold = s->drop_threshold, .drop_scale = s->drop_scale,
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

/* Where the kernel reads and writes: binding i of the dispatch, and for the
 * packed layout the element offsets in the push constants. */
typedef struct flash_io {
    vka_binding bindings[FLASH_BINDINGS];
    uint32_t n_bindings;
    struct vkattn_tensor *scratch; /* out in f32 (then the LSE when packed), copied out after */
} flash_io;

static bool is_16(const struct vkattn_tensor *t) { return vka_dtype_info_of(t->dtype)->is_16bit; }

/* Whether flash_f16.comp (float16_t views) runs the call: every 16-bit
 * operand f16 on a device with 16-bit storage (vka_path16_of), in the
 * unpacked layout; a bf16 operand takes flash.comp's words. */
static bool f16_views(const struct vkattn_context *ctx, const vkattn_sdpa_io *io, bool packed)
{
    const vkattn_tensor *const ts[] = {io->q, io->k, io->v, io->out};
    return !packed && vka_path16_of(ctx, ts, 4) == VKA_PATH_NATIVE16;
}

/* Whether out is written into f32 scratch and copied (or converted) after:
 * in the packed layout with an LSE (out and LSE share binding 3), and for a
 * 16-bit out with an odd dv where halves are written as words (a row would
 * start inside a word another invocation writes): outside flash_f16.comp,
 * i.e. always in the tiled kernel, which writes words on every device. */
static bool out_via_scratch(const struct vkattn_context *ctx, const vka_sdpa_shape *s,
                            const vkattn_sdpa_io *io, bool packed, bool tiled, bool lse)
{
    const bool views = !tiled && f16_views(ctx, io, packed);
    return (packed && lse) || (is_16(io->out) && !views && s->dv % 2);
}

/* out in f32 scratch, then LSE when packed: binding 3 (packed) or 6. */
static vkattn_result bind_scratch_out(struct vkattn_context *ctx, const char *caller,
                                      const vka_sdpa_shape *s, bool with_lse, flash_push *push,
                                      flash_io *f, vka_binding *out)
{
    const uint64_t n_out = vka_count4(s->batch, s->heads, s->tq, s->dv);
    const uint64_t total = n_out + (with_lse ? vka_count4(s->batch, s->heads, s->tq, 1) : 0);
    if (total > UINT32_MAX || total * sizeof(float) > vka_max_range(ctx))
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: the fused kernel writes out (and lse) as f32 into one scratch "
                        "buffer here; it exceeds maxStorageBufferRange (%llu bytes) or 2^32 "
                        "elements",
                        caller, (unsigned long long)vka_max_range(ctx));
    vkattn_result r = vka_growable_get(ctx, VKA_SCRATCH_WORKSPACE, total, caller, &f->scratch);
    if (r != VKATTN_SUCCESS)
        return r;
    *out = vka_bind_tensor(f->scratch, true);
    out->size = total * sizeof(float);
    if (with_lse)
        push->lse_off = (uint32_t)n_out;
    return VKATTN_SUCCESS;
}

static vkattn_result bind_unpacked(struct vkattn_context *ctx, const char *caller,
                                   const vka_sdpa_shape *s, const vkattn_sdpa_io *io,
                                   const vkattn_mask_params *m, struct vkattn_tensor *lse,
                                   bool tiled, flash_push *push, flash_io *f)
{
    vka_binding b[FLASH_BINDINGS] = {
        vka_bind_tensor(io->q, false), vka_bind_tensor(io->k, false),
        vka_bind_tensor(io->v, false), vka_bind_optional(ctx, m->has_bias ? io->bias : NULL),
        vka_bind_optional(ctx, m->has_value_mask ? io->value_mask : NULL),
        vka_bind_optional(ctx, m->has_mask ? io->mask : NULL), vka_bind_tensor(io->out, true),
        vka_bind_optional_output(ctx, lse)};
    vkattn_result r;
    if (out_via_scratch(ctx, s, io, false, tiled, lse != NULL) &&
        (r = bind_scratch_out(ctx, caller, s, false, push, f, &b[6])))
        return r;
    memcpy(f->bindings, b, sizeof b);
    f->n_bindings = FLASH_BINDINGS;
    return VKATTN_SUCCESS;
}

/* The 4-binding layout: Q and the side inputs packed behind binding 0 (Q
 * alone needs no copy), K, V, and out, or a scratch holding out then the LSE. */
static vkattn_result bind_packed(struct vkattn_context *ctx, VkCommandBuffer cmd,
                                 const char *caller, const vka_sdpa_shape *s,
                                 const vkattn_sdpa_io *io, const vkattn_mask_params *m,
                                 struct vkattn_tensor *lse, flash_push *push, flash_io *f)
{
    vkattn_result r;
    f->n_bindings = FLASH_PACKED_BINDINGS;
    /* the output first: its checks fail before any copy is recorded */
    if (!out_via_scratch(ctx, s, io, true, false, lse != NULL))
        f->bindings[3] = vka_bind_tensor(io->out, true);
    else if ((r = bind_scratch_out(ctx, caller, s, lse != NULL, push, f, &f->bindings[3])))
        return r;
    f->bindings[1] = vka_bind_tensor(io->k, false);
    f->bindings[2] = vka_bind_tensor(io->v, false);
    struct vkattn_tensor *const side[VKA_MAX_PACKED] = {
        io->q, m->has_bias ? io->bias : NULL, m->has_value_mask ? io->value_mask : NULL,
        m->has_mask ? io->mask : NULL};
    if (!side[1] && !side[2] && !side[3]) {
        f->bindings[0] = vka_bind_tensor(io->q, false);
        return VKATTN_SUCCESS;
    }
    vka_packed pk;
    if ((r = vka_pack_inputs(ctx, cmd, caller, side, VKA_MAX_PACKED, &pk)))
        return r;
    f->bindings[0] = pk.binding; /* Q at element 0: vka_pack_inputs keeps the order */
    push->bias_off = pk.offset[1], push->vmask_off = pk.offset[2], push->mask_off = pk.offset[3];
    return VKATTN_SUCCESS;
}

/* One dispatch per piece: the grid is gx row blocks by gz (batch, K/V head)
 * pairs; pieces cover x first, then z, each within the device's workgroup
 * counts and, where whole workgroups allow, the watchdog budget (a piece is at
 * least one workgroup: WG * RPI rows of one K/V head, all their keys). */
static vkattn_result record_pieces(struct vkattn_context *ctx, VkCommandBuffer cmd,
                                   const vka_sdpa_shape *s, const vka_flash_choice *t,
                                   vka_dispatch *d, flash_push *push)
{
    const uint64_t gx = vka_div_up((uint64_t)s->group * s->tq, rows_per_group(t));
    const uint64_t gz = (uint64_t)s->batch * s->kv_heads;
    const uint64_t rows = vka_count4(s->batch, s->heads, s->tq, 1);
    const uint64_t per_row = (uint64_t)s->tv * (s->dk + s->dv);
    const uint64_t work = rows > UINT64_MAX / per_row ? UINT64_MAX : rows * per_row;
    return vka_record_grid_pieces(ctx, cmd, gx, gz, work, d, &push->x_base, &push->z_base);
}

void vka_flash_choose(const struct vkattn_context *ctx, const vka_sdpa_shape *s,
                      const vkattn_sdpa_params *p, vka_flash_choice *c)
{
    *c = (vka_flash_choice){0};
    /* f32 and 16-bit calls take the same kernel family: the GPU-shaped one under
     * the GPU tuning where the device takes it (16-bit read as words);
     * cannot fail where vka_flash_check, which chooses the same way, passed */
    choose_tiles(ctx, s, p->softcap == 0.0f, c);
}

void vka_flash_choose_coopmat(const struct vkattn_context *ctx, const vka_sdpa_shape *s,
                              const vkattn_sdpa_params *p, const vkattn_sdpa_io *io,
                              vka_flash_choice *c)
{
    /* where the tiled kernel would run, the cooperative-matrix one may
     * instead (all-f16 q, k, v on a context that runs it: flash_coopmat.h) */
    c->coopmat = c->tiled && vka_flash_coopmat_choose(ctx, s, p, io, &c->cm);
}

vkattn_result vka_flash_record_lse(struct vkattn_context *ctx, VkCommandBuffer cmd,
                                   const vka_sdpa_shape *shape, const vkattn_sdpa_params *p,
                                   const vka_flash_choice *choice, const vkattn_sdpa_io *io,
                                   struct vkattn_tensor *lse, const char *caller)
{
    /* the caller's plan chose this kernel and its tiles (vka_flash_check,
     * vka_flash_choose, vka_flash_choose_coopmat) and checked every tensor:
     * nothing is re-checked or re-chosen here */
    const vka_sdpa_shape s = *shape;
    const vka_flash_choice t = *choice;
    vkattn_result r;

    const vkattn_mask_params *m = &p->mask;
    /* the tiled kernel has only the unpacked layout (flash_tiled.c) */
    const bool packed = vka_info(ctx)->max_storage_buffers_per_stage < FLASH_BINDINGS;
    /* float16_t views for f16 where the device has them; words of two 16-bit
     * elements otherwise (bf16 always; the packed layout always: it is for
     * minimal devices) */
    const bool storage16 = f16_views(ctx, io, packed);
    flash_push push = make_push(&s, p);
    flash_io f = {0};
    r = packed ? bind_packed(ctx, cmd, caller, &s, io, m, lse, &push, &f)
               : bind_unpacked(ctx, caller, &s, io, m, lse, t.tiled, &push, &f);
    if (r != VKATTN_SUCCESS)
        return r;
    vka_kernel kernel = {
        .name = packed ? "flash_packed" : storage16 ? "flash_f16" : "flash",
        .code = packed ? vka_spv_flash_packed : storage16 ? vka_spv_flash_f16 : vka_spv_flash,
        .code_size = packed      ? vka_spv_flash_packed_size
                     : storage16 ? vka_spv_flash_f16_size
                                 : vka_spv_flash_size,
        .n_bindings = f.n_bindings,
        .push_size = sizeof(flash_push),
        .n_spec = VKA_FLASH_N_SPEC,
        .spec = {
            [VKA_FLASH_SPEC_WG] = t.wg,
            [VKA_FLASH_SPEC_BC] = t.bc,
            [VKA_FLASH_SPEC_DK] = s.dk,
            [VKA_FLASH_SPEC_DV] = s.dv,
            [VKA_FLASH_SPEC_CAUSAL] = (uint32_t)m->causal,
            [VKA_FLASH_SPEC_HAS_VALUE_MASK] = m->has_value_mask,
            [VKA_FLASH_SPEC_HAS_MASK] = m->has_mask,
            [VKA_FLASH_SPEC_HAS_BIAS] = m->has_bias,
            [VKA_FLASH_SPEC_DROPOUT] = s.drop,
            [VKA_FLASH_SPEC_UNIFORM_ROWS] = m->masked_row == VKATTN_MASKED_ROW_UNIFORM,
            [VKA_FLASH_SPEC_WRITE_LSE] = lse != NULL,
            [VKA_FLASH_SPEC_RPI] = t.rpi,
            [VKA_FLASH_SPEC_Q_TYPE] = vka_dtype_spec_code(io->q->dtype),
            [VKA_FLASH_SPEC_K_TYPE] = vka_dtype_spec_code(io->k->dtype),
            [VKA_FLASH_SPEC_V_TYPE] = vka_dtype_spec_code(io->v->dtype),
            [VKA_FLASH_SPEC_OUT_TYPE] = f.scratch ? VKA_ELEM_F32 : vka_dtype_spec_code(io->out->dtype),
        },
    };
    if (t.coopmat)
        vka_flash_coopmat_kernel(&t.cm, s.dk, s.dv, &kernel);
    else if (t.tiled)
        vka_flash_tiled_kernel(&t.gpu, s.dk, s.dv, &kernel);
    vka_dispatch dispatch = {.kernel = &kernel, .push = &push, .caller = caller};
    memcpy(dispatch.bindings, f.bindings, sizeof f.bindings[0] * f.n_bindings);
    if ((r = record_pieces(ctx, cmd, &s, &t, &dispatch, &push)))
        return r;
    if (!f.scratch)
        return VKATTN_SUCCESS;
    const uint64_t n_out = vka_count4(s.batch, s.heads, s.tq, s.dv);
    r = is_16(io->out) ? vka_half_convert_record(ctx, cmd, caller, io->out, f.scratch, n_out, true)
                       : vka_copy_floats(ctx, cmd, f.scratch, 0, io->out, 0, n_out);
    if (r != VKATTN_SUCCESS || !packed || !lse)
        return r;
    return vka_copy_floats(ctx, cmd, f.scratch, n_out, lse, 0, vka_count4(s.batch, s.heads, s.tq, 1));
}
