/* The fused SDPA kernel: what it supports, tile choice from the device's
 * limits, and the dispatch of shaders/flash.comp. */
#include "ops/flash.h"

#include <math.h>
#include <string.h>

#include "core/check.h"
#include "core/error.h"
#include "vk/context.h"
#include "vk/dispatch.h"
#include "vk/tensor.h"
#include "vka_shaders.h"
#include "vkattn/philox.h"

typedef struct flash_push {
    uint32_t heads, group, tq, tv;
    float scale_log2;
    uint32_t mask_b, mask_h, mask_i;
    uint32_t bias_b, bias_h, bias_i;
    uint32_t seed_lo, seed_hi, offset_mix, threshold;
    float drop_scale;
} flash_push;

/* The call's shape with every default resolved. */
typedef struct flash_shape {
    uint32_t batch, heads, kv_heads, group, tq, tv, dk, dv;
} flash_shape;

typedef struct flash_tiles {
    uint32_t wg;  /* invocations per workgroup */
    uint32_t rpi; /* rows (query head, query index) per invocation */
    uint32_t bc;  /* keys per shared-memory tile */
} flash_tiles;

static flash_shape resolve(const vkattn_sdpa_params *p)
{
    flash_shape s = {
        .batch = p->batch, .heads = vka_default_u32(p->heads, 1), .tq = p->tq, .tv = p->tv,
        .dk = p->dk, .dv = vka_default_u32(p->dv, p->dk),
    };
    s.kv_heads = vka_default_u32(p->kv_heads, s.heads);
    s.group = s.kv_heads ? s.heads / s.kv_heads : 1;
    return s;
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
 * tiles fit the shared memory. */
static bool choose_tiles(const vkattn_context_info *info, const flash_shape *s, flash_tiles *t)
{
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

/* Product of dims, or UINT64_MAX on overflow. */
static uint64_t count4(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    const uint64_t dims[4] = {a, b, c, d};
    uint64_t n;
    return vka_product_u64(dims, 4, &n) ? n : UINT64_MAX;
}

/* Elements of a (B|1, H|1, Tq|1, Tv) mask or bias as stored. */
static uint64_t bcast_count(const flash_shape *s, vkattn_broadcast bc)
{
    return count4(bc.batch ? 1 : s->batch, bc.heads ? 1 : s->heads, bc.rows ? 1 : s->tq, s->tv);
}

/* Every index the shader forms stays below 2^32. */
static bool fits_u32_indexing(const flash_shape *s, const vkattn_mask_params *m)
{
    const uint32_t d = s->dk > s->dv ? s->dk : s->dv;
    if (count4(s->batch, s->heads, s->tq, d) > UINT32_MAX ||
        count4(s->batch, s->kv_heads, s->tv, d) > UINT32_MAX ||
        count4(s->batch, 1, 1, s->tv) > UINT32_MAX)
        return false;
    if (m->has_mask && bcast_count(s, m->mask_broadcast) > UINT32_MAX)
        return false;
    return !m->has_bias || bcast_count(s, m->bias_broadcast) <= UINT32_MAX;
}

static bool shape_supported(const vkattn_context_info *info, const flash_shape *s,
                            const vkattn_sdpa_params *p, const char **why)
{
    if (!s->batch || !s->tq || !s->tv || !s->dk || !s->kv_heads || s->heads % s->kv_heads)
        *why = "the shape is invalid (a zero size, or heads not a multiple of kv_heads)";
    else if (p->return_weights)
        *why = "it does not return attention weights";
    else if (s->dk > VKA_FLASH_MAX_WIDTH)
        *why = "dk is above 256";
    else if (s->dv > VKA_FLASH_MAX_WIDTH)
        *why = "dv is above 256";
    else if (s->tq > INT32_MAX || s->tv > INT32_MAX)
        *why = "tq or tv is 2^31 or more";
    else if (!fits_u32_indexing(s, &p->mask))
        *why = "a tensor exceeds the kernel's 32-bit indexing";
    else if ((uint64_t)s->batch * s->kv_heads > info->max_workgroup_count[2])
        *why = "batch * kv_heads exceeds the device's workgroup count along z";
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
 * counted here as 20). */
static uint64_t loop_iterations(const flash_shape *s, const vkattn_sdpa_params *p,
                                const flash_tiles *t)
{
    const uint64_t tiles = vka_div_up(s->tv, t->bc);
    uint64_t n = tiles * (4 + t->bc / 2);
    if (p->mask.masked_row == VKATTN_MASKED_ROW_UNIFORM)
        n += tiles * (4 + t->bc / 4);
    return n + 64;
}

bool vka_flash_supports(const struct vkattn_context *ctx, const vkattn_sdpa_params *p,
                        const char **why)
{
    const char *reason = NULL;
    flash_shape s = resolve(p);
    flash_tiles t;
    bool ok = shape_supported(&ctx->info, &s, p, &reason);
    if (ok && !choose_tiles(&ctx->info, &s, &t)) {
        reason = "no tile fits this device's shared memory and workgroup limits";
        ok = false;
    }
    if (ok && loop_iterations(&s, p, &t) > ctx->loop_budget) {
        reason = "tv is too long for lavapipe, which ends a shader invocation after 65535 "
                 "loop iterations";
        ok = false;
    }
    if (ok && vka_div_up((uint64_t)s.group * s.tq, (uint64_t)t.wg * t.rpi) >
                  ctx->info.max_workgroup_count[0]) {
        reason = "kv group * tq exceeds the device's workgroup count along x";
        ok = false;
    }
    if (why)
        *why = ok ? NULL : reason;
    return ok;
}

/* Element strides of a (B|1, H|1, Tq|1, Tv) operand along b, h and i; 0 where
 * broadcast. They fit 32 bits: fits_u32_indexing checked the stored count. */
static void bcast_strides(const flash_shape *s, vkattn_broadcast bc, uint32_t out[3])
{
    uint32_t rows = bc.rows ? 1 : s->tq, heads = bc.heads ? 1 : s->heads;
    out[2] = bc.rows ? 0 : s->tv;
    out[1] = bc.heads ? 0 : rows * s->tv;
    out[0] = bc.batch ? 0 : heads * rows * s->tv;
}

static vkattn_result check_io(struct vkattn_context *ctx, const char *caller, const flash_shape *s,
                              const vkattn_sdpa_params *p, const vkattn_sdpa_io *io,
                              struct vkattn_tensor *lse)
{
    if (!io)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: io is NULL", caller);
    const vkattn_mask_params *m = &p->mask;
    vkattn_result r;
    if ((r = vka_tensor_check(ctx, io->q, count4(s->batch, s->heads, s->tq, s->dk), caller,
                              "io->q")) ||
        (r = vka_tensor_check(ctx, io->k, count4(s->batch, s->kv_heads, s->tv, s->dk), caller,
                              "io->k")) ||
        (r = vka_tensor_check(ctx, io->v, count4(s->batch, s->kv_heads, s->tv, s->dv), caller,
                              "io->v")) ||
        (r = vka_tensor_check(ctx, io->out, count4(s->batch, s->heads, s->tq, s->dv), caller,
                              "io->out")))
        return r;
    if ((m->has_value_mask &&
         (r = vka_tensor_check(ctx, io->value_mask, count4(s->batch, 1, 1, s->tv), caller,
                               "io->value_mask"))) ||
        (m->has_mask &&
         (r = vka_tensor_check(ctx, io->mask, bcast_count(s, m->mask_broadcast), caller,
                               "io->mask"))) ||
        (m->has_bias &&
         (r = vka_tensor_check(ctx, io->bias, bcast_count(s, m->bias_broadcast), caller,
                               "io->bias"))) ||
        (lse && (r = vka_tensor_check(ctx, lse, count4(s->batch, s->heads, s->tq, 1), caller,
                                      "lse"))))
        return r;
    const struct vkattn_tensor *inputs[] = {io->q, io->k, io->v, m->has_bias ? io->bias : NULL,
                                            m->has_value_mask ? io->value_mask : NULL,
                                            m->has_mask ? io->mask : NULL};
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++)
        if (inputs[i] && (inputs[i] == io->out || inputs[i] == lse))
            return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                            "%s: an output tensor is also an input (no in-place attention)",
                            caller);
    if (lse && lse == io->out)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: lse and io->out are the same tensor", caller);
    return VKATTN_SUCCESS;
}

static flash_push make_push(const flash_shape *s, const vkattn_sdpa_params *p)
{
    const double scale = p->scale != 0.0f ? (double)p->scale : 1.0 / sqrt((double)s->dk);
    const vkattn_dropout_params *d = &p->dropout;
    const bool drop = d->training && d->rate > 0.0f;
    flash_push push = {
        .heads = s->heads, .group = s->group, .tq = s->tq, .tv = s->tv,
        .scale_log2 = (float)(scale * 1.4426950408889634),
        .seed_lo = (uint32_t)d->seed, .seed_hi = (uint32_t)(d->seed >> 32),
        /* SEMANTICS.md: the offset's high word is folded in with 0x9E3779B9 */
        .offset_mix = (uint32_t)d->offset ^ ((uint32_t)(d->offset >> 32) * 0x9E3779B9u),
        .threshold = drop ? vkattn_dropout_threshold(d->rate) : 0,
        /* the float nearest 1/(1 - rate), as the dropout op and the reference use */
        .drop_scale = !drop ? 1.0f : d->rate < 1.0f ? (float)(1.0 / (1.0 - (double)d->rate)) : 0.0f,
    };
    uint32_t st[3];
    bcast_strides(s, p->mask.mask_broadcast, st);
    push.mask_b = st[0], push.mask_h = st[1], push.mask_i = st[2];
    bcast_strides(s, p->mask.bias_broadcast, st);
    push.bias_b = st[0], push.bias_h = st[1], push.bias_i = st[2];
    return push;
}

vkattn_result vka_flash_record_lse(struct vkattn_context *ctx, VkCommandBuffer cmd,
                                   const vkattn_sdpa_params *p, const vkattn_sdpa_io *io,
                                   struct vkattn_tensor *lse, const char *caller)
{
    if (!ctx || !cmd || !p)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", caller,
                        !ctx ? "ctx" : !cmd ? "cmd" : "params");
    const char *why = NULL;
    if (!vka_flash_supports(ctx, p, &why))
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED,
                        "%s: the fused attention kernel cannot serve this call: %s", caller, why);
    const flash_shape s = resolve(p);
    vkattn_result r = check_io(ctx, caller, &s, p, io, lse);
    if (r != VKATTN_SUCCESS)
        return r;
    flash_tiles t;
    choose_tiles(&ctx->info, &s, &t); /* cannot fail: vka_flash_supports chose them */

    const vkattn_mask_params *m = &p->mask;
    const vkattn_dropout_params *d = &p->dropout;
    vka_kernel kernel = {
        .name = "flash",
        .code = vka_spv_flash,
        .code_size = vka_spv_flash_size,
        .n_bindings = 8,
        .push_size = sizeof(flash_push),
        .n_spec = 12,
        .spec = {t.wg, t.bc, s.dk, s.dv, (uint32_t)m->causal, m->has_value_mask, m->has_mask,
                 m->has_bias, d->training && d->rate > 0.0f,
                 m->masked_row == VKATTN_MASKED_ROW_UNIFORM, lse != NULL, t.rpi},
    };
    const flash_push push = make_push(&s, p);
    vka_dispatch dispatch = {
        .kernel = &kernel,
        .bindings = {vka_bind_tensor(io->q, false), vka_bind_tensor(io->k, false),
                     vka_bind_tensor(io->v, false),
                     vka_bind_optional(ctx, m->has_bias ? io->bias : NULL),
                     vka_bind_optional(ctx, m->has_value_mask ? io->value_mask : NULL),
                     vka_bind_optional(ctx, m->has_mask ? io->mask : NULL),
                     vka_bind_tensor(io->out, true),
                     vka_bind_optional_output(ctx, lse)},
        .push = &push,
        .groups = {(uint32_t)vka_div_up((uint64_t)s.group * s.tq, (uint64_t)t.wg * t.rpi), 1,
                   s.batch * s.kv_heads},
        .caller = caller,
    };
    return vka_record_dispatch(ctx, cmd, &dispatch);
}

vkattn_result vka_flash_record(struct vkattn_context *ctx, VkCommandBuffer cmd,
                               const vkattn_sdpa_params *p, const vkattn_sdpa_io *io,
                               const char *caller)
{
    return vka_flash_record_lse(ctx, cmd, p, io, NULL, caller);
}
