/* Decode attention against a KV cache (vkattn/decode.h): the split kernel
 * shaders/decode.comp (or decode_packed.comp on devices with fewer than 6
 * storage buffers per shader) writes one partial per (row, key chunk), and
 * shaders/decode_merge.comp combines them. */
#include "vkattn/decode.h"

#include <math.h>
#include <string.h>

#include "core/check.h"
#include "core/dropout_host.h"
#include "core/error.h"
#include "common/decode_iface.h"
#include "ops/gpu_tiles.h"
#include "ops/kv_cache.h"
#include "shape/sdpa_plan.h"
#include "vk/context.h"
#include "vk/dispatch.h"
#include "vk/pack.h"
#include "vk/scratch.h"
#include "vk/tensor.h"
#include "vka_shaders.h"
#include "vk/record_mode.h"

VKA_PUSH_STRUCT(decode_push, VKA_DECODE_PUSH);
VKA_PUSH_STRUCT(merge_push, VKA_DECODE_MERGE_PUSH);

#define DECODE_BINDINGS 6u
#define DECODE_PACKED_BINDINGS 4u
#define MAX_WIDTH 256u
#define MAX_ROWS 8u       /* query rows per workgroup */
#define TARGET_GROUPS 256 /* workgroups the split aims for: several per core */
#define MAX_CHUNKS 64u
#define LANES_WG 32u         /* the lanes layout: invocations per workgroup */
#define LANES_RUN 64u        /* ... and the keys each aims for */
#define LANES_MAX_WIDTH 128u /* ... rows * dv and dk it keeps in registers */
#define LANES_MIN_GROUPS 16u /* ... workgroups it aims for at least */

typedef struct decode_plan {
    uint32_t batch, heads, kv_heads, group, tq, capacity, dk, dv;
    uint32_t wg, rows, ks, ns, row_blocks, n_chunks;
    uint32_t groups_x; /* workgroups per row block: n_chunks, or n_chunks / wg for lanes */
    bool lanes;        /* the lanes layout (decode_body.glsl) */
} decode_plan;

static uint32_t pow2_floor(uint32_t x)
{
    uint32_t p = 1;
    while (p * 2 <= x)
        p *= 2;
    return p;
}

/* The arguments, against each other and against the cache. */
static vkattn_result check_params(vkattn_context *ctx, const char *fn,
                                  const vkattn_sdpa_decode_params *p, const vkattn_kv_cache *c,
                                  decode_plan *s)
{
    if (!p)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: params is NULL", fn);
    *s = (decode_plan){.batch = p->batch, .heads = p->heads, .tq = p->tq,
                       .kv_heads = vka_default_u32(p->kv_heads, p->heads),
                       .capacity = p->capacity, .dk = p->dk, .dv = vka_default_u32(p->dv, p->dk)};
    const char *zero = !p->batch ? "batch" : !p->heads ? "heads" : !p->tq ? "tq" : NULL;
    if (zero)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: params->%s is 0; must be >= 1",
                        fn, zero);
    if (p->tq > VKATTN_DECODE_MAX_TQ)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: tq is %u; must be <= %u", fn,
                        p->tq, VKATTN_DECODE_MAX_TQ);
    if (s->heads % s->kv_heads)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: kv_heads is %u; must divide heads (%u)", fn, s->kv_heads, s->heads);
    if (!isfinite(p->scale))
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: scale is not finite", fn);
    vkattn_result r = vka_check_dropout_rate(ctx, fn, "dropout.rate", p->dropout.rate);
    if (r != VKATTN_SUCCESS)
        return r;
    if (!vka_window_fits(p->sliding_window, p->tq, p->capacity))
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: sliding_window with tq + capacity = %llu exceeds the kernel's "
                        "32-bit window arithmetic",
                        fn, (unsigned long long)p->tq + p->capacity);
    const vkattn_kv_cache_desc *d = &c->desc;
    if (d->batch != s->batch || d->kv_heads != s->kv_heads || d->capacity != s->capacity ||
        d->key_dim != s->dk || d->value_dim != s->dv)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: params (batch %u, kv_heads %u, capacity %u, dk %u, dv %u) do not "
                        "match the cache (%u, %u, %u, %u, %u)",
                        fn, s->batch, s->kv_heads, s->capacity, s->dk, s->dv, d->batch,
                        d->kv_heads, d->capacity, d->key_dim, d->value_dim);
    if (s->dk > MAX_WIDTH || s->dv > MAX_WIDTH)
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED, "%s: dk and dv must be <= %u", fn,
                        MAX_WIDTH);
    return VKATTN_SUCCESS;
}

/* Rows per workgroup, invocations, key subsets; the shared memory they need. */
static vkattn_result choose_layout(vkattn_context *ctx, const char *fn, decode_plan *s)
{
    const vkattn_context_info *info = &ctx->info;
    s->group = s->heads / s->kv_heads;
    const uint32_t rows = s->group * s->tq;
    s->lanes = info->cpu_tuning && s->dk <= LANES_MAX_WIDTH && s->dv <= LANES_MAX_WIDTH;
    s->wg = s->lanes ? LANES_WG : 64;
    /* the split layout's rows within the register budget (ops/gpu_tiles.h) */
    const uint32_t max_rows =
        s->lanes ? LANES_MAX_WIDTH / s->dv : vka_decode_gpu_rows(info, s->wg, s->dv, MAX_ROWS);
    s->rows = rows < max_rows ? rows : max_rows;
    if (s->wg > info->max_workgroup_invocations || s->wg > info->max_workgroup_size[0])
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: the decode kernel needs %u invocations per workgroup", fn, s->wg);
    s->row_blocks = (rows + s->rows - 1) / s->rows;
    const uint32_t slots = s->rows * ((s->dv + 3) / 4);
    s->ks = slots < s->wg ? pow2_floor(s->wg / slots) : 1;
    s->ns = (slots + s->wg - 1) / s->wg;
    const uint64_t shared = 16ull * s->rows * ((s->dk + 3) / 4) + 4ull * s->rows * s->wg +
                            4ull * s->rows + 16ull * s->wg;
    if (shared > info->max_shared_memory)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: the decode kernel needs %llu bytes of shared memory", fn,
                        (unsigned long long)shared);
    return VKATTN_SUCCESS;
}

/* Chunks per row: the keys of the capacity (or of the window's band) split
 * over workgroups, within the loop budget. Returns the chunk count. */
static uint64_t choose_chunks(const vkattn_context *ctx, const vkattn_sdpa_decode_params *p,
                              decode_plan *s)
{
    const uint64_t heads = (uint64_t)s->batch * s->kv_heads * s->row_blocks;
    /* the keys the chunks split: the whole capacity, or with a sliding window
     * at most the rows' band, w + Tq - 1 keys from a multiple of 4 */
    const uint64_t span = p->sliding_window && (uint64_t)p->sliding_window + s->tq + 3 < s->capacity
                              ? (uint64_t)p->sliding_window + s->tq + 3
                              : s->capacity;
    uint64_t chunks;
    if (s->lanes) {
        /* runs of about LANES_RUN keys (at least 4), at least LANES_MIN_GROUPS
         * workgroups where the capacity allows, each run within the loop
         * budget (one iteration per 4 keys) */
        const uint64_t max_groups = vka_div_up(span, 4ull * s->wg);
        chunks = vka_div_up(span, (uint64_t)LANES_RUN * s->wg);
        if (chunks * heads < LANES_MIN_GROUPS)
            chunks = vka_div_up(LANES_MIN_GROUPS, heads);
        if (chunks > max_groups)
            chunks = max_groups;
        const uint64_t budget = ctx->loop_budget > 64 ? ctx->loop_budget - 64 : 1;
        if (vka_div_up(vka_div_up(span, chunks * s->wg), 4) > budget)
            chunks = vka_div_up(span, 4 * budget * s->wg);
        s->groups_x = chunks > UINT32_MAX ? UINT32_MAX : (uint32_t)chunks;
        chunks *= s->wg;
    } else {
        const uint64_t tiles = vka_div_up(span, s->wg);
        chunks = vka_div_up(TARGET_GROUPS, heads);
        if (chunks > MAX_CHUNKS)
            chunks = MAX_CHUNKS;
        if (chunks > tiles)
            chunks = tiles;
        if (vka_div_up(tiles, chunks) + 64 > ctx->loop_budget)
            chunks = vka_div_up(tiles, ctx->loop_budget > 64 ? ctx->loop_budget - 64 : 1);
        s->groups_x = chunks > UINT32_MAX ? UINT32_MAX : (uint32_t)chunks;
    }
    return chunks;
}

/* Shape checks against the cache, then the layout and the split. Under the
 * CPU tuning, for widths up to LANES_MAX_WIDTH, the lanes layout: a run of
 * keys per invocation, as many rows per workgroup as keep rows * dv within
 * LANES_MAX_WIDTH, runs of about LANES_RUN keys. Otherwise the tiles layout:
 * rows per workgroup (the group's rows share K/V reads), key subsets for P V
 * where the rows' output vec4s leave invocations idle, and chunks per row so
 * that the grid holds about TARGET_GROUPS workgroups, each chunk at least one
 * 64-key tile of the capacity. Both keep within lavapipe's loop budget. */
static vkattn_result plan(vkattn_context *ctx, const char *fn, const vkattn_sdpa_decode_params *p,
                          const vkattn_kv_cache *c, decode_plan *s)
{
    vkattn_result r;
    if ((r = check_params(ctx, fn, p, c, s)) || (r = choose_layout(ctx, fn, s)))
        return r;
    const vkattn_context_info *info = &ctx->info;
    const uint64_t chunks = choose_chunks(ctx, p, s);
    if (s->groups_x > info->max_workgroup_count[0] || chunks > UINT32_MAX ||
        s->row_blocks > info->max_workgroup_count[1])
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: the grid exceeds maxComputeWorkGroupCount", fn);
    s->n_chunks = (uint32_t)chunks;
    const uint32_t dmax = s->dk > s->dv ? s->dk : s->dv;
    const uint64_t part = vka_count4(s->batch, s->heads, s->tq, (uint64_t)s->n_chunks * (s->dv + 2));
    if (vka_count4(s->batch, s->kv_heads, s->capacity, dmax) > UINT32_MAX || part > UINT32_MAX ||
        vka_count4(s->batch, s->heads, s->tq, dmax) > UINT32_MAX)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: a tensor exceeds the kernel's 32-bit indexing", fn);
    return VKATTN_SUCCESS;
}

static vkattn_result check_io(vkattn_context *ctx, const char *fn, const decode_plan *s,
                              const vkattn_sdpa_decode_params *p, const vkattn_sdpa_decode_io *io)
{
    vkattn_result r;
    const unsigned both = VKA_DTYPE_BIT(VKATTN_DTYPE_F32) | VKA_DTYPE_BIT(VKATTN_DTYPE_F16);
    if ((r = vka_tensor_check_types(ctx, io->q, vka_count4(s->batch, s->heads, s->tq, s->dk), fn,
                                    "io->q", both)) ||
        (r = vka_tensor_check_types(ctx, io->out, vka_count4(s->batch, s->heads, s->tq, s->dv),
                                    fn, "io->out", both)))
        return r;
    if (p->has_value_mask &&
        (r = vka_tensor_check(ctx, io->value_mask, (uint64_t)s->batch * s->capacity, fn,
                              "io->value_mask")))
        return r;
    if (!p->has_value_mask && io->value_mask)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->value_mask is set but params->has_value_mask is false", fn);
    const vkattn_kv_cache *c = io->cache;
    if (io->out == io->q || io->out == c->keys || io->out == c->values ||
        (p->has_value_mask && io->out == io->value_mask))
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->out is also an input (no in-place attention)", fn);
    return VKATTN_SUCCESS;
}

/* The split kernel over (chunk, row block, (b, K/V head)), in pieces along z
 * where the device's watchdog budget or group counts ask for it. */
static vkattn_result record_split(vkattn_context *ctx, VkCommandBuffer cmd, const char *fn,
                                  const decode_plan *s, const vkattn_sdpa_decode_params *p,
                                  const vkattn_sdpa_decode_io *io, vkattn_tensor *part)
{
    const bool packed = ctx->info.max_storage_buffers_per_stage < DECODE_BINDINGS;
    const bool drop = vka_dropout_active(&p->dropout);
    decode_push push = {
        .heads = s->heads, .group = s->group, .tq = s->tq, .capacity = s->capacity,
        .n_chunks = s->n_chunks, .scale_log2 = vka_sdpa_scale_log2(p->scale, s->dk),
        .seed_lo = (uint32_t)p->dropout.seed, .seed_hi = (uint32_t)(p->dropout.seed >> 32),
        .offset_mix = vka_philox_offset_mix(p->dropout.offset),
        .threshold = drop ? vka_dropout_threshold(p->dropout.rate) : 0,
        .window = vka_window_clamp(p->sliding_window, s->tq, s->capacity),
    };
    vka_kernel kernel = {
        .name = packed ? "decode_packed" : "decode",
        .code = packed ? vka_spv_decode_packed : vka_spv_decode,
        .code_size = packed ? vka_spv_decode_packed_size : vka_spv_decode_size,
        .n_bindings = packed ? DECODE_PACKED_BINDINGS : DECODE_BINDINGS,
        .push_size = sizeof push,
        .n_spec = VKA_DECODE_N_SPEC,
        .spec = {
            [VKA_DECODE_SPEC_WG] = s->wg, [VKA_DECODE_SPEC_DK] = s->dk,
            [VKA_DECODE_SPEC_DV] = s->dv, [VKA_DECODE_SPEC_R] = s->rows,
            [VKA_DECODE_SPEC_KS] = s->ks, [VKA_DECODE_SPEC_NS] = s->ns,
            [VKA_DECODE_SPEC_HAS_VALUE_MASK] = p->has_value_mask,
            [VKA_DECODE_SPEC_DROPOUT] = drop,
            [VKA_DECODE_SPEC_K_F16] = io->cache->keys->dtype == VKATTN_DTYPE_F16,
            [VKA_DECODE_SPEC_V_F16] = io->cache->values->dtype == VKATTN_DTYPE_F16,
            [VKA_DECODE_SPEC_LANES] = s->lanes,
            [VKA_DECODE_SPEC_Q_F16] = io->q->dtype == VKATTN_DTYPE_F16,
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
        d.bindings[4] = vka_bind_tensor(c->lengths, false);
        d.bindings[5] = vka_bind_optional(ctx, p->has_value_mask ? io->value_mask : NULL);
    }
    const uint64_t gz = (uint64_t)s->batch * s->kv_heads;
    const uint64_t work = vka_count4(s->batch, s->heads, s->tq, (uint64_t)s->capacity * (s->dk + s->dv));
    uint64_t pieces = vka_dispatch_pieces(ctx, work);
    uint64_t cz = vka_div_up(gz, pieces < gz ? pieces : gz);
    if (cz > ctx->info.max_workgroup_count[2])
        cz = ctx->info.max_workgroup_count[2];
    d.groups[0] = s->groups_x, d.groups[1] = s->row_blocks;
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
                                  const decode_plan *s, const vkattn_sdpa_decode_params *p,
                                  vkattn_tensor *part, vkattn_tensor *out)
{
    const uint64_t n = vka_count4(s->batch, s->heads, s->tq, s->dv);
    const bool out16 = out->dtype == VKATTN_DTYPE_F16; /* one invocation per word */
    const vka_kernel kernel = {
        VKA_KERNEL_SPV(decode_merge), .n_bindings = 2,
        .push_size = sizeof(merge_push), .n_spec = VKA_DECODE_MERGE_N_SPEC,
        .spec = {[VKA_DECODE_MERGE_SPEC_DV] = s->dv, [VKA_DECODE_MERGE_SPEC_OUT_F16] = out16},
    };
    merge_push push = {
        .total = (uint32_t)n, .n_chunks = s->n_chunks,
        .drop_scale = vka_dropout_active(&p->dropout) ? vka_dropout_scale(p->dropout.rate) : 1.0f,
    };
    const vka_dispatch d = {
        .bindings = {vka_bind_tensor(part, false), vka_bind_tensor(out, true)},
        .push = &push, .caller = fn,
    };
    return vka_record_grid_1d(ctx, cmd, kernel, VKA_DECODE_MERGE_SPEC_WG,
                              out16 ? vka_div_up(n, 2) : n, d);
}

static vkattn_result decode_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *fn,
                                   const vkattn_sdpa_decode_params *p,
                                   const vkattn_sdpa_decode_io *io)
{
    if (!ctx || !cmd || !io || !io->cache)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                        !ctx ? "ctx" : !cmd ? "cmd" : !io ? "io" : "io->cache");
    if (io->cache->ctx != ctx)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->cache belongs to another context", fn);
    decode_plan s;
    vkattn_result r;
    if ((r = plan(ctx, fn, p, io->cache, &s)) || (r = check_io(ctx, fn, &s, p, io)))
        return r;
    vkattn_tensor *part;
    const uint64_t n_part = vka_count4(s.batch, s.heads, s.tq, (uint64_t)s.n_chunks * (s.dv + 2));
    if ((r = vka_growable_get(ctx, VKA_SCRATCH_WORKSPACE, n_part, fn, &part)) ||
        (r = record_split(ctx, cmd, fn, &s, p, io, part)))
        return r;
    return record_merge(ctx, cmd, fn, &s, p, part, io->out);
}

vkattn_result vkattn_sdpa_decode_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                        const vkattn_sdpa_decode_params *params,
                                        const vkattn_sdpa_decode_io *io)
{
    VKA_RECORD_MODES(ctx, ctx, cmd, vkattn_sdpa_decode_record(ctx, cmd, params, io));
    return decode_record(ctx, cmd, __func__, params, io);
}
