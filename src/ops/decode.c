/* Decode attention against a KV cache (vkattn/decode.h): the split kernel
 * shaders/decode.comp (or decode_packed.comp on devices with fewer than 6
 * storage buffers per shader) writes one partial per (row, key chunk), and
 * shaders/decode_merge.comp combines them. An int8 cache is read in place,
 * dequantized in registers (decode_body.glsl). */
#include "vkattn/decode.h"

#include <stdio.h>
#include <string.h>

#include "core/check.h"
#include "core/dropout_host.h"
#include "core/dtype.h"
#include "core/error.h"
#include "common/decode_iface.h"
#include "ops/decode_record.h"
#include "ops/gpu_tiles.h"
#include "ops/kv_cache.h"
#include "ops/scratch_kinds.h"
#include "shape/decode_plan.h"
#include "shape/sdpa_plan.h"
#include "vk/dispatch.h"
#include "vk/pack.h"
#include "vk/tensor.h"
#include "vka_shaders.h"
#include "vk/record_mode.h"
#include "vk/view.h"

VKA_PUSH_STRUCT(decode_push, VKA_DECODE_PUSH);
VKA_PUSH_STRUCT(merge_push, VKA_DECODE_MERGE_PUSH);

#define DECODE_BINDINGS 6u
#define DECODE_PACKED_BINDINGS 4u
#define MAX_WIDTH 256u
#define MAX_ROWS 8u       /* query rows per workgroup */
#define TARGET_GROUPS 256 /* workgroups the split aims for: several per core */
#define MAX_CHUNKS 64u    /* ... and the most it chooses on its own */
#define MAX_SPLITS 256u   /* the most params->num_splits asks for: partials stay small */
#define LANES_WG 32u         /* the lanes layout: invocations per workgroup */
#define LANES_RUN 64u        /* ... and the keys each aims for */
#define LANES_MAX_WIDTH 128u /* ... rows * dv and dk it keeps in registers */
#define LANES_MIN_GROUPS 16u /* ... workgroups it aims for at least */

typedef vka_decode_tiles decode_tiles;

static uint32_t pow2_floor(uint32_t x)
{
    uint32_t p = 1;
    while (p * 2 <= x)
        p *= 2;
    return p;
}

/* The resolved call (shape/decode_plan.h) against the cache and the kernels'
 * widths. */
static vkattn_result check_cache(vkattn_context *ctx, const char *fn, const vka_decode_shape *s,
                                 const vkattn_kv_cache *c)
{
    const vkattn_kv_cache_desc *d = &c->desc;
    if (d->batch != s->batch || d->kv_heads != s->kv_heads || d->capacity != s->capacity ||
        d->key_dim != s->dk || d->value_dim != s->dv)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: params (batch %u, kv_heads %u, capacity %u, dk %u, dv %u) do not "
                        "match the cache (%u, %u, %u, %u, %u)",
                        fn, s->batch, s->kv_heads, s->capacity, s->dk, s->dv, d->batch,
                        d->kv_heads, d->capacity, d->key_dim, d->value_dim);
    if (s->dk > MAX_WIDTH || s->dv > MAX_WIDTH)
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED,
                        "%s: params->dk (%u) and params->dv (%u) must be <= %u", fn, s->dk, s->dv,
                        MAX_WIDTH);
    return VKATTN_SUCCESS;
}

/* Rows per workgroup, invocations, key subsets; the shared memory they need.
 * A limit fails quietly: its code, and the sentence in why[WHY_MAX]. */
#define WHY_MAX 160
static vkattn_result choose_layout(const vkattn_context *ctx, const vka_decode_shape *s, bool i8,
                                   decode_tiles *t, char *why)
{
    const vkattn_context_info *info = vka_info(ctx);
    const uint32_t rows = s->group * s->tq;
    t->lanes = info->cpu_tuning && s->dk <= LANES_MAX_WIDTH && s->dv <= LANES_MAX_WIDTH;
    t->wg = t->lanes ? LANES_WG : 64;
    /* the split layout's rows within the register budget (ops/gpu_tiles.h) */
    const uint32_t max_rows =
        t->lanes ? LANES_MAX_WIDTH / s->dv : vka_decode_gpu_rows(info, t->wg, s->dv, MAX_ROWS);
    t->rows = rows < max_rows ? rows : max_rows;
    if (t->wg > info->max_workgroup_invocations || t->wg > info->max_workgroup_size[0]) {
        snprintf(why, WHY_MAX, "the decode kernel needs %u invocations per workgroup", t->wg);
        return VKATTN_ERROR_DEVICE_LIMIT;
    }
    t->row_blocks = (rows + t->rows - 1) / t->rows;
    const uint32_t slots = t->rows * ((s->dv + 3) / 4);
    t->ks = slots < t->wg ? pow2_floor(t->wg / slots) : 1;
    t->ns = (slots + t->wg - 1) / t->wg;
    const uint64_t shared = 16ull * t->rows * ((s->dk + 3) / 4) + 4ull * t->rows * t->wg +
                            4ull * t->rows + 16ull * t->wg +
                            (i8 ? 4ull * t->wg : 4ull); /* an int8 cache's V scales */
    if (shared > info->max_shared_memory) {
        snprintf(why, WHY_MAX, "the decode kernel needs %llu bytes of shared memory",
                 (unsigned long long)shared);
        return VKATTN_ERROR_DEVICE_LIMIT;
    }
    return VKATTN_SUCCESS;
}

/* Chunks per row: the keys of the capacity (or of the window's band) split
 * over workgroups (params->num_splits of them where the caller says), within
 * the keys and the loop budget. Returns the chunk count. */
static uint64_t choose_chunks(const vkattn_context *ctx, const vka_decode_shape *s,
                              decode_tiles *t)
{
    const uint64_t heads = (uint64_t)s->batch * s->kv_heads * t->row_blocks;
    /* the keys the chunks split: the whole capacity, or with a sliding window
     * at most the rows' band, w + Tq - 1 keys from a multiple of 4 (the
     * window is clamped to Tq + capacity, which changes neither branch) */
    const uint64_t span = s->window && (uint64_t)s->window + s->tq + 3 < s->capacity
                              ? (uint64_t)s->window + s->tq + 3
                              : s->capacity;
    uint64_t chunks;
    if (t->lanes) {
        /* runs of about LANES_RUN keys (at least 4), at least LANES_MIN_GROUPS
         * workgroups where the capacity allows, each run within the loop
         * budget (one iteration per 4 keys) */
        const uint64_t max_groups = vka_div_up(span, 4ull * t->wg);
        chunks = vka_div_up(span, (uint64_t)LANES_RUN * t->wg);
        if (chunks * heads < LANES_MIN_GROUPS)
            chunks = vka_div_up(LANES_MIN_GROUPS, heads);
        if (s->splits)
            chunks = s->splits < MAX_SPLITS ? s->splits : MAX_SPLITS;
        if (chunks > max_groups)
            chunks = max_groups;
        const uint64_t budget = vka_loop_budget(ctx) > 64 ? vka_loop_budget(ctx) - 64 : 1;
        if (vka_div_up(vka_div_up(span, chunks * t->wg), 4) > budget)
            chunks = vka_div_up(span, 4 * budget * t->wg);
        t->groups_x = chunks > UINT32_MAX ? UINT32_MAX : (uint32_t)chunks;
        chunks *= t->wg;
    } else {
        const uint64_t tiles = vka_div_up(span, t->wg);
        chunks = vka_div_up(TARGET_GROUPS, heads);
        if (chunks > MAX_CHUNKS)
            chunks = MAX_CHUNKS;
        if (s->splits)
            chunks = s->splits < MAX_SPLITS ? s->splits : MAX_SPLITS;
        if (chunks > tiles)
            chunks = tiles;
        if (vka_div_up(tiles, chunks) + 64 > vka_loop_budget(ctx))
            chunks = vka_div_up(tiles, vka_loop_budget(ctx) > 64 ? vka_loop_budget(ctx) - 64 : 1);
        t->groups_x = chunks > UINT32_MAX ? UINT32_MAX : (uint32_t)chunks;
    }
    return chunks;
}

/* The call resolved once (shape/decode_plan.h), then what the device adds:
 * the cache, the layout and the split. Under the CPU tuning, for widths up
 * to LANES_MAX_WIDTH, the lanes layout: a run of keys per invocation, as many
 * rows per workgroup as keep rows * dv within LANES_MAX_WIDTH, runs of about
 * LANES_RUN keys. Otherwise the tiles layout: rows per workgroup (the group's
 * rows share K/V reads), key subsets for P V where the rows' output vec4s
 * leave invocations idle, and chunks per row so that the grid holds about
 * TARGET_GROUPS workgroups, each chunk at least one 64-key tile of the
 * capacity. Both keep within lavapipe's loop budget. */
static vkattn_result device_tiles(const vkattn_context *ctx, const vka_decode_shape *s, bool i8,
                                  decode_tiles *t, char *why)
{
    vkattn_result r = choose_layout(ctx, s, i8, t, why);
    if (r != VKATTN_SUCCESS)
        return r;
    const vkattn_context_info *info = vka_info(ctx);
    const uint64_t chunks = choose_chunks(ctx, s, t);
    if (t->groups_x > info->max_workgroup_count[0] || chunks > UINT32_MAX ||
        t->row_blocks > info->max_workgroup_count[1]) {
        snprintf(why, WHY_MAX, "the grid exceeds maxComputeWorkGroupCount");
        return VKATTN_ERROR_DEVICE_LIMIT;
    }
    t->n_chunks = (uint32_t)chunks;
    t->n_part = vka_count4(s->batch, s->heads, s->tq, (uint64_t)t->n_chunks * (s->dv + 2));
    if (s->k > UINT32_MAX || s->v > UINT32_MAX || s->q > UINT32_MAX || s->out > UINT32_MAX ||
        t->n_part > UINT32_MAX) {
        snprintf(why, WHY_MAX, "a tensor exceeds the kernel's 32-bit indexing");
        return VKATTN_ERROR_DEVICE_LIMIT;
    }
    /* the partials are one scratch binding; packed inputs, one more */
    const uint64_t range = vka_max_range(ctx) / sizeof(float);
    const bool packed = info->max_storage_buffers_per_stage < DECODE_BINDINGS;
    if (t->n_part > range || (packed && s->q + s->value_mask + 8 > range)) { /* + alignment */
        snprintf(why, WHY_MAX, "the decode kernel's %s exceed maxStorageBufferRange",
                 t->n_part > range ? "partials" : "packed inputs");
        return VKATTN_ERROR_DEVICE_LIMIT;
    }
    return VKATTN_SUCCESS;
}

static vkattn_result plan(vkattn_context *ctx, const char *fn, const vkattn_sdpa_decode_params *p,
                          const vkattn_kv_cache *c, vka_decode_shape *s, decode_tiles *t)
{
    vkattn_result r;
    char why[WHY_MAX];
    if ((r = vka_decode_plan(ctx, fn, p, s)) || (r = check_cache(ctx, fn, s, c)))
        return r;
    if ((r = device_tiles(ctx, s, c->desc.dtype == VKATTN_DTYPE_I8, t, why)))
        return vka_fail(ctx, r, "%s: %s", fn, why);
    return VKATTN_SUCCESS;
}

bool vka_decode_fits(const vkattn_context *ctx, const vkattn_sdpa_decode_params *p,
                     vkattn_dtype kv_dtype, vka_decode_call *call)
{
    *call = (vka_decode_call){0};
    char why[WHY_MAX];
    /* NULL context: nothing logged (SDPA's few-row params pass decode's plan:
     * shape/sdpa_plan.c keeps to its bounds, so this thread's last-error
     * text is not touched either) */
    return vka_decode_plan(NULL, "vka_decode_fits", p, &call->s) == VKATTN_SUCCESS &&
           call->s.dk <= MAX_WIDTH && call->s.dv <= MAX_WIDTH &&
           device_tiles(ctx, &call->s, kv_dtype == VKATTN_DTYPE_I8, &call->t, why) ==
               VKATTN_SUCCESS;
}

static vkattn_result check_io(vkattn_context *ctx, const char *fn, const vka_decode_shape *s,
                              const vkattn_sdpa_decode_params *p, const vkattn_sdpa_decode_io *io)
{
    vkattn_result r;
    if ((r = vka_tensor_check_types(ctx, io->q, s->q, fn, "io->q", VKA_DTYPES_FLOAT)) ||
        (r = vka_tensor_check_types(ctx, io->out, s->out, fn, "io->out", VKA_DTYPES_FLOAT)))
        return r;
    if (p->has_value_mask &&
        (r = vka_tensor_check(ctx, io->value_mask, s->value_mask, fn, "io->value_mask")))
        return r;
    if (!p->has_value_mask && io->value_mask)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->value_mask is set but params->has_value_mask is false", fn);
    if (p->has_sinks && (r = vka_tensor_check(ctx, io->sinks, s->heads, fn, "io->sinks (H)")))
        return r;
    if (!p->has_sinks && io->sinks)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->sinks is set but params->has_sinks is false", fn);
    const vkattn_kv_cache *c = io->cache;
    if (io->out == io->q || io->out == c->keys || io->out == c->values ||
        (p->has_value_mask && io->out == io->value_mask) ||
        (p->has_sinks && io->out == io->sinks))
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->out is also an input (no in-place attention)", fn);
    return VKATTN_SUCCESS;
}

/* The split kernel over (chunk, row block, (b, K/V head)), in pieces along z
 * where the device's watchdog budget or group counts ask for it. */
static vkattn_result record_split(vkattn_context *ctx, VkCommandBuffer cmd, const char *fn,
                                  const vka_decode_shape *s, const decode_tiles *t,
                                  const vkattn_sdpa_decode_params *p,
                                  const vkattn_sdpa_decode_io *io, vkattn_tensor *part)
{
    const bool packed = vka_info(ctx)->max_storage_buffers_per_stage < DECODE_BINDINGS;
    const bool i8 = io->cache->desc.dtype == VKATTN_DTYPE_I8;
    decode_push push = {
        .heads = s->heads, .group = s->group, .tq = s->tq, .capacity = s->capacity,
        .n_chunks = t->n_chunks, .scale_log2 = s->scale_log2,
        .seed_lo = (uint32_t)p->dropout.seed, .seed_hi = (uint32_t)(p->dropout.seed >> 32),
        .offset_mix = vka_philox_offset_mix(p->dropout.offset),
        .threshold = s->drop_threshold,
        .window = s->window,
        /* an int8 cache: where the row scales start in K's and V's words */
        .k_scale_off = i8 ? (uint32_t)vka_kv_i8_scale_offset(&io->cache->desc, s->dk) : 0,
        .v_scale_off = i8 ? (uint32_t)vka_kv_i8_scale_offset(&io->cache->desc, s->dv) : 0,
        .softcap_log2 = s->softcap * 1.44269504f,
    };
    vka_kernel kernel = {
        .name = packed ? "decode_packed" : "decode",
        .code = packed ? vka_spv_decode_packed : vka_spv_decode,
        .code_size = packed ? vka_spv_decode_packed_size : vka_spv_decode_size,
        .n_bindings = packed ? DECODE_PACKED_BINDINGS : DECODE_BINDINGS,
        .push_size = sizeof push,
        .n_spec = VKA_DECODE_N_SPEC,
        .spec = {
            [VKA_DECODE_SPEC_WG] = t->wg, [VKA_DECODE_SPEC_DK] = s->dk,
            [VKA_DECODE_SPEC_DV] = s->dv, [VKA_DECODE_SPEC_R] = t->rows,
            [VKA_DECODE_SPEC_KS] = t->ks, [VKA_DECODE_SPEC_NS] = t->ns,
            [VKA_DECODE_SPEC_HAS_VALUE_MASK] = p->has_value_mask,
            [VKA_DECODE_SPEC_DROPOUT] = s->drop,
            [VKA_DECODE_SPEC_K_TYPE] = vka_dtype_spec_code(io->cache->desc.dtype),
            [VKA_DECODE_SPEC_V_TYPE] = vka_dtype_spec_code(io->cache->desc.dtype),
            [VKA_DECODE_SPEC_KV_I8] = i8,
            [VKA_DECODE_SPEC_SOFTCAP] = s->softcap != 0.0f,
            [VKA_DECODE_SPEC_LANES] = t->lanes,
            [VKA_DECODE_SPEC_Q_TYPE] = vka_dtype_spec_code(io->q->dtype),
            [VKA_DECODE_SPEC_FULL] = io->cache->lengths == NULL,
        },
    };
    vka_dispatch d = {.kernel = &kernel, .push = &push, .caller = fn};
    vkattn_kv_cache *c = io->cache;
    d.bindings[1] = vka_bind_tensor(c->keys, false);
    d.bindings[2] = vka_bind_tensor(c->values, false);
    d.bindings[3] = vka_bind_tensor(part, true);
    if (packed) {
        struct vkattn_tensor *const side[VKA_MAX_PACKED] = {
            io->q, c->lengths, p->has_value_mask ? io->value_mask : NULL, NULL};
        vka_packed pk;
        vkattn_result r = vka_pack_inputs(ctx, cmd, fn, side, VKA_MAX_PACKED, &pk);
        if (r != VKATTN_SUCCESS)
            return r;
        d.bindings[0] = pk.binding;
        push.len_off = pk.offset[1], push.vmask_off = pk.offset[2];
    } else {
        d.bindings[0] = vka_bind_tensor(io->q, false);
        d.bindings[4] = vka_bind_optional(ctx, c->lengths);
        d.bindings[5] = vka_bind_optional(ctx, p->has_value_mask ? io->value_mask : NULL);
    }
    const uint64_t gz = (uint64_t)s->batch * s->kv_heads;
    const uint64_t work = vka_count4(s->batch, s->heads, s->tq, (uint64_t)s->capacity * (s->dk + s->dv));
    uint64_t pieces = vka_dispatch_pieces(ctx, work);
    uint64_t cz = vka_div_up(gz, pieces < gz ? pieces : gz);
    if (cz > vka_info(ctx)->max_workgroup_count[2])
        cz = vka_info(ctx)->max_workgroup_count[2];
    d.groups[0] = t->groups_x, d.groups[1] = t->row_blocks;
    for (uint64_t z0 = 0; z0 < gz; z0 += cz) {
        push.z_base = (uint32_t)z0;
        d.groups[2] = (uint32_t)(gz - z0 < cz ? gz - z0 : cz);
        /* this piece's share, for a slicer's estimate (at the cache's
         * capacity: the filled length is on the GPU) */
        d.work = (uint64_t)((double)work * d.groups[2] / (double)gz);
        d.touched = (double)d.groups[2] / (double)gz; /* its sequences and heads */
        vkattn_result r = vka_record_dispatch(ctx, cmd, &d);
        if (r != VKATTN_SUCCESS)
            return r;
    }
    return VKATTN_SUCCESS;
}

static vkattn_result record_merge(vkattn_context *ctx, VkCommandBuffer cmd, const char *fn,
                                  const vka_decode_shape *s, const decode_tiles *t,
                                  const vkattn_sdpa_decode_params *p, vkattn_tensor *part,
                                  vkattn_tensor *out, vkattn_tensor *sinks)
{
    const uint64_t n = s->out;
    const bool out16 = vka_dtype_info_of(out->dtype)->is_16bit; /* one invocation per word */
    const vka_kernel kernel = {
        VKA_KERNEL_SPV(decode_merge), .n_bindings = 3,
        .push_size = sizeof(merge_push), .n_spec = VKA_DECODE_MERGE_N_SPEC,
        .spec = {[VKA_DECODE_MERGE_SPEC_DV] = s->dv, [VKA_DECODE_MERGE_SPEC_OUT_TYPE] = vka_dtype_spec_code(out->dtype),
                 [VKA_DECODE_MERGE_SPEC_SINKS] = s->sinks},
    };
    merge_push push = {
        .total = (uint32_t)n, .n_chunks = t->n_chunks,
        .drop_scale = s->drop_scale,
        .heads = s->heads, .tq = s->tq,
    };
    const vka_dispatch d = {
        .bindings = {vka_bind_tensor(part, false), vka_bind_tensor(out, true),
                     vka_bind_optional(ctx, s->sinks ? sinks : NULL)},
        .push = &push, .caller = fn,
    };
    return vka_record_grid_1d(ctx, cmd, kernel, VKA_DECODE_MERGE_SPEC_WG,
                              out16 ? vka_div_up(n, 2) : n, d);
}

vkattn_result vka_decode_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *fn,
                                const vkattn_sdpa_decode_params *p, const vkattn_sdpa_decode_io *io)
{
    if (!ctx || !cmd || !io || !io->cache)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                        !ctx ? "ctx" : !cmd ? "cmd" : !io ? "io" : "io->cache");
    if (io->cache->ctx != ctx)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->cache belongs to another context", fn);
    vka_decode_call call = {0};
    vkattn_result r = plan(ctx, fn, p, io->cache, &call.s, &call.t);
    return r ? r : vka_decode_record_planned(ctx, cmd, fn, p, &call, io);
}

vkattn_result vka_decode_record_planned(vkattn_context *ctx, VkCommandBuffer cmd, const char *fn,
                                        const vkattn_sdpa_decode_params *p,
                                        const vka_decode_call *call,
                                        const vkattn_sdpa_decode_io *io)
{
    const vka_decode_shape *s = &call->s;
    const decode_tiles *t = &call->t;
    vkattn_tensor *part;
    vkattn_result r;
    if ((r = check_io(ctx, fn, s, p, io)) ||
        (r = vka_growable_get(ctx, VKA_SCRATCH_WORKSPACE, t->n_part, fn, &part)) ||
        (r = record_split(ctx, cmd, fn, s, t, p, io, part)))
        return r;
    return record_merge(ctx, cmd, fn, s, t, p, part, io->out, io->sinks);
}

vkattn_result vkattn_sdpa_decode_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                        const vkattn_sdpa_decode_params *params,
                                        const vkattn_sdpa_decode_io *io)
{
    VKA_RECORD_MODES(ctx, ctx, cmd, vkattn_sdpa_decode_record(ctx, cmd, params, io));
    return vka_decode_record(ctx, cmd, __func__, params, io);
}
