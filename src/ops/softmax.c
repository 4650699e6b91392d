/* Masked softmax: argument checks, the choice of workgroup shape and path from
 * the device's limits, the overflow-free logit scaling, and the dispatch of
 * shaders/softmax.comp (under the GPU tuning shaders/softmax_sg.comp on
 * devices with subgroup shuffles, and shaders/softmax_split.comp for rows
 * too long for shared memory), of shaders/softmax_packed.comp on devices with
 * fewer than 5 storage buffers per stage, or of shaders/softmax_f16.comp for
 * f16 tensors with 16-bit storage (all are shaders/common/softmax_body.glsl,
 * whose header explains the algorithm). */
#include "vkattn/softmax.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/elem_iface.h"
#include "core/broadcast.h"
#include "core/check.h"
#include "core/dtype.h"
#include "core/error.h"
#include "common/softmax_iface.h"
#include "ops/scratch_kinds.h"
#include "ops/softmax_rows.h"
#include "vk/dispatch.h"
#include "vk/pack.h"
#include "vk/tensor.h"
#include "ops/half_stage.h"
#include "vka_shaders.h"
#include "vk/record_mode.h"
#include "vk/view.h"

/* Matches the push-constant block of shaders/common/softmax_body.glsl. */
VKA_PUSH_STRUCT(softmax_push, VKA_SOFTMAX_PUSH);

/* Bindings of shaders/softmax.comp; shaders/softmax_packed.comp reads bias,
 * value mask and mask from one binding and so needs 3. */
#define SOFTMAX_BINDINGS 5u
#define SOFTMAX_PACKED_BINDINGS 3u
/* shaders/softmax_split.comp: softmax.comp's and the chunks' statistics */
#define SOFTMAX_SPLIT_BINDINGS 6u
/* Keys per invocation of one chunk of a split row: enough work per
 * workgroup to pay for its share of the merge (a read of every chunk's pair). */
#define SOFTMAX_SPLIT_KEYS_PER_INVOCATION 16u

/* Specialization of one pipeline: see the constants of shaders/softmax.comp. */
typedef struct softmax_shape {
    uint32_t wg;    /* invocations per workgroup, a power of two */
    uint32_t g;     /* invocations per row, a power of two dividing wg */
    uint32_t cache; /* floats of shared memory per row; 0 = multi-pass */
} softmax_shape;

/* Shared memory softmax.comp declares for a shape: red_m, red_s, cache. */
static uint64_t shape_shared_bytes(const softmax_shape *s)
{
    return 4u * (2u * (uint64_t)s->wg + (uint64_t)(s->wg / s->g) * s->cache + 1u);
}

static uint32_t pow2_floor(uint32_t v)
{
    uint32_t p = 1;
    while (p <= v / 2)
        p *= 2;
    return p;
}

/* Aim for this many keys per invocation before widening a row's group. */
#define SOFTMAX_KEYS_PER_INVOCATION 4u
/* Designed for 32 KiB of shared memory; works down to the spec's 16 KiB. */
#define SOFTMAX_SHARED_BUDGET 32768u
/* loop iterations per invocation the CPU shape aims for: half of lavapipe's limit */
#define SOFTMAX_CPU_LOOP_BUDGET 32768u

/* Workgroup of up to 256 invocations; rows of up to the shared budget are
 * cached (one read of the inputs), longer ones take the multi-pass path. Short
 * rows share a workgroup, ~4 keys per invocation. The cache per row is a power
 * of two when it fits, so the set of pipelines stays small and a workgroup
 * does not hold more shared memory than its rows need (occupancy on GPUs). */
static bool choose_shape(const vkattn_context_info *info, uint32_t tv, softmax_shape *out)
{
    uint32_t wg = 256;
    if (wg > info->max_workgroup_invocations)
        wg = pow2_floor(info->max_workgroup_invocations);
    if (wg > info->max_workgroup_size[0])
        wg = pow2_floor(info->max_workgroup_size[0]);
    const uint32_t budget = info->max_shared_memory < SOFTMAX_SHARED_BUDGET
                                ? info->max_shared_memory
                                : SOFTMAX_SHARED_BUDGET;
    while (wg > 1 && 8u * wg + 4u > budget)
        wg /= 2;
    if (8u * wg + 4u > budget)
        return false;
    /* floats left for the cache of all rows of a workgroup */
    const uint32_t cap = (budget - 8u * wg - 4u) / 4u;

    uint32_t g = 1;
    if (info->cpu_tuning) {
        /* A CPU runs a workgroup's invocations as SIMD lanes of one thread:
         * reductions across invocations cost barriers, and the shared-memory
         * cache only fits rows that many invocations share. One invocation per
         * row, two passes over global memory, measured 2.4x faster on lavapipe
         * (docs/PERFORMANCE.md). Long rows get more invocations, to stay well
         * inside a CPU driver's loop budget. */
        while (g < wg && 3 * ((uint64_t)tv / g) + 64 > SOFTMAX_CPU_LOOP_BUDGET)
            g *= 2;
        *out = (softmax_shape){.wg = wg, .g = g, .cache = 0};
        return true;
    }
    while (g < wg && (uint64_t)g * SOFTMAX_KEYS_PER_INVOCATION < tv)
        g *= 2;
    softmax_shape s = {.wg = wg, .g = wg, .cache = 0};
    if (tv <= cap) {
        while (tv > cap / (wg / g)) /* terminates: g = wg leaves one row of cap */
            g *= 2;
        uint32_t per_row = cap / (wg / g), want = 1;
        while (want < tv)
            want *= 2;
        s.g = g;
        s.cache = want <= per_row ? want : per_row;
    }
    if (shape_shared_bytes(&s) > info->max_shared_memory)
        return false;
    *out = s;
    return true;
}

/* |logit / 2^k| <= FLT_MAX / 2 for all finite inputs, so the difference of
 * any two is finite and the shader's sentinels lie below every logit:
 * |score * scale / 2^k| <= FLT_MAX / 2 (FLT_MAX / 4 with a bias) and
 * |bias / 2^k| <= FLT_MAX / 4. Powers of two scale exactly: the rounding is
 * the plain formula's. */
static void logit_scaling(float scale, bool has_bias, softmax_push *push)
{
    const double a = fabs((double)scale);
    const double need = (has_bias ? 4.0 : 2.0) * (a > 1.0 ? a : 1.0);
    int k = 0;
    while (ldexp(1.0, k) < need)
        k++;
    /* k <= 130 (|scale| < 2^128); split 2^k * log2(e) so each factor is a float */
    const int k1 = k > 100 ? k - 100 : 0;
    push->scale_y = (float)ldexp((double)scale, -k);
    push->bias_y = (float)ldexp(1.0, -k);
    push->exp_c1 = (float)ldexp(1.0, k1);
    push->exp_c2 = (float)(ldexp(1.0, k - k1) * 1.4426950408889634);
    /* below this difference exp is < 2^-160: clamped there, it stays finite */
    push->diff_min = (float)(-160.0 / (ldexp(1.0, k) * 1.4426950408889634));
}

/* The tensors of one planned call. */
static vkattn_result check_io(vkattn_context *ctx, const char *caller,
                              const vkattn_softmax_params *p, const vkattn_softmax_io *io,
                              vka_softmax_dims *d)
{
    if (!io)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: io is NULL", caller);
    vkattn_result r;
    if ((r = vka_tensor_check_types(ctx, io->scores, d->plan.total, caller, "io->scores",
                                    VKA_DTYPES_FLOAT)) ||
        (r = vka_tensor_check_types(ctx, io->out, d->plan.total, caller, "io->out",
                                    VKA_DTYPES_FLOAT)))
        return r;
    return vka_softmax_check_mask_operands(ctx, caller, p, d, io->bias, io->value_mask,
                                           io->mask, io->out, "io->out", "io->scores", true);
}

/* Elements of the bias the kernel reads (0 without one). */
static uint64_t bias_count(const vkattn_softmax_params *p, const vka_softmax_dims *d)
{
    uint64_t n = 0;
    if (p->mask.has_bias)
        vka_bcast_count(p->mask.bias_broadcast, p->batch, d->plan.heads, p->tq, p->tv, &n);
    return n;
}

/* Which kernel a call runs and how it treats f16 tensors, from the device
 * and the tensors' types. */
typedef struct softmax_variant {
    softmax_shape shape;
    bool packed;      /* fewer than 5 storage buffers: side inputs in one binding */
    bool s16, b16, o16; /* scores, bias, out are 16-bit (f16 or bf16) */
    uint32_t s_type, b_type, o_type; /* their spec codes (no bias: f32) */
    bool native16;    /* softmax_f16 reads and writes them as float16_t */
    bool out_via_f32; /* an f16 out written as f32 scratch, then rounded */
    bool in_place;
    bool sg;          /* subgroup-shuffle reductions */
    bool split;       /* one row spread over several workgroups */
    uint32_t split_len;
} softmax_variant;

/* One call as planned: the rows (vka_softmax_plan) and, once the tensors are
 * checked, the kernel (choose_variant); the recording only reads them. */
typedef struct softmax_op {
    const vkattn_softmax_params *params;
    const vkattn_softmax_io *io;
    vka_softmax_dims dims;
    softmax_variant v;
} softmax_op;

static vkattn_result choose_variant(vkattn_context *ctx, const char *caller,
                                    const vkattn_softmax_params *params,
                                    const vkattn_softmax_io *io, softmax_variant *v)
{
    vkattn_result r;
    if (!choose_shape(vka_info(ctx), params->tv, &v->shape))
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: no softmax workgroup fits maxComputeSharedMemorySize (%u bytes)",
                        caller, vka_info(ctx)->max_shared_memory);
    /* each invocation walks its row's keys in strides of shape.g, at most three
     * times (statistics, then weights; plus the reload of the uncached path) */
    if ((r = vka_check_loop_budget(ctx, caller, 3 * vka_div_up(params->tv, v->shape.g) + 64,
                                   "params->tv")))
        return r;
    v->packed = vka_info(ctx)->max_storage_buffers_per_stage < SOFTMAX_BINDINGS;
    if (v->packed && vka_info(ctx)->max_storage_buffers_per_stage < SOFTMAX_PACKED_BINDINGS)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: the softmax kernel needs %u storage buffers per shader stage; "
                        "maxPerStageDescriptorStorageBuffers is %u",
                        caller, SOFTMAX_PACKED_BINDINGS, vka_info(ctx)->max_storage_buffers_per_stage);
    /* 16-bit tensors: all f16, with 16-bit storage and 5 bindings,
     * softmax_f16 reads and writes them as float16_t (vka_path16_of: never
     * bf16). Otherwise 16-bit scores (and, with 5 bindings, bias) are read as
     * packed words, a 16-bit bias to be packed is converted to f32 scratch
     * first (the pack is f32), and a 16-bit out is written as f32 scratch and
     * then rounded into out (ops/half_stage.h), so no two invocations ever
     * write one word. */
    const vkattn_tensor *const ts[3] = {io->scores, io->bias, io->out};
    v->s16 = vka_dtype_info_of(io->scores->dtype)->is_16bit;
    v->b16 = io->bias && vka_dtype_info_of(io->bias->dtype)->is_16bit;
    v->o16 = vka_dtype_info_of(io->out->dtype)->is_16bit;
    v->s_type = vka_dtype_spec_code(io->scores->dtype);
    v->b_type = io->bias ? vka_dtype_spec_code(io->bias->dtype) : VKA_ELEM_F32;
    v->o_type = vka_dtype_spec_code(io->out->dtype);
    v->native16 = !v->packed && vka_path16_of(ctx, ts, 3) == VKA_PATH_NATIVE16;
    v->out_via_f32 = v->o16 && !v->native16;
    v->in_place = io->out == io->scores && !v->out_via_f32;
    /* The GPU tuning reduces rows with subgroup shuffles where the device has
     * them (any subgroup size); the 16-bit-storage and packed variants keep
     * the shared-memory reduction. */
    const bool generic = !vka_info(ctx)->cpu_tuning && !v->packed && !v->native16;
    v->sg = generic && vka_subgroup_shuffle(ctx);
    /* Rows too long for shared memory are split across workgroups under the
     * GPU tuning (the single-workgroup path would leave a GPU idle when rows
     * are few), where the device has the 6th binding. */
    v->split_len = v->shape.wg * SOFTMAX_SPLIT_KEYS_PER_INVOCATION;
    v->split = generic && v->shape.cache == 0 &&
               vka_info(ctx)->max_storage_buffers_per_stage >= SOFTMAX_SPLIT_BINDINGS &&
               params->tv > v->split_len && params->tv <= UINT32_MAX - v->split_len;
    return VKATTN_SUCCESS;
}

static vka_kernel variant_kernel(const softmax_variant *v, const vkattn_mask_params *m)
{
    return (vka_kernel){
        .name = v->packed     ? "softmax_packed"
                : v->native16 ? "softmax_f16"
                : v->split    ? "softmax_split"
                : v->sg       ? "softmax_sg"
                              : "softmax",
        .code = v->packed     ? vka_spv_softmax_packed
                : v->native16 ? vka_spv_softmax_f16
                : v->split    ? vka_spv_softmax_split
                : v->sg       ? vka_spv_softmax_sg
                              : vka_spv_softmax,
        .code_size = v->packed     ? vka_spv_softmax_packed_size
                     : v->native16 ? vka_spv_softmax_f16_size
                     : v->split    ? vka_spv_softmax_split_size
                     : v->sg       ? vka_spv_softmax_sg_size
                                   : vka_spv_softmax_size,
        .n_bindings = v->packed  ? SOFTMAX_PACKED_BINDINGS
                      : v->split ? SOFTMAX_SPLIT_BINDINGS
                                 : SOFTMAX_BINDINGS,
        .push_size = sizeof(softmax_push),
        .n_spec = VKA_SOFTMAX_N_SPEC,
        .spec = {
            [VKA_SOFTMAX_SPEC_WG] = v->shape.wg,
            [VKA_SOFTMAX_SPEC_G] = v->shape.g,
            [VKA_SOFTMAX_SPEC_CACHE] = v->shape.cache,
            [VKA_SOFTMAX_SPEC_IN_PLACE] = v->in_place,
            [VKA_SOFTMAX_SPEC_HAS_BIAS] = m->has_bias,
            [VKA_SOFTMAX_SPEC_HAS_VMASK] = m->has_value_mask,
            [VKA_SOFTMAX_SPEC_HAS_MASK] = m->has_mask,
            [VKA_SOFTMAX_SPEC_SCORES_TYPE] = v->s_type,
            [VKA_SOFTMAX_SPEC_BIAS_TYPE] = v->packed ? VKA_ELEM_F32 : v->b_type,
            [VKA_SOFTMAX_SPEC_OUT_TYPE] = v->native16 ? v->o_type : VKA_ELEM_F32,
        },
    };
}

static softmax_push variant_push(const vkattn_softmax_params *params, const vka_softmax_dims *dims)
{
    const vkattn_mask_params *m = &params->mask;
    softmax_push push = {
        .rows = (uint32_t)(dims->plan.total / params->tv), .heads = dims->plan.heads,
        .tq = params->tq, .tv = params->tv, .causal = (uint32_t)m->causal,
        .bias_b = (uint32_t)dims->bias_s[0], .bias_h = (uint32_t)dims->bias_s[1],
        .bias_i = (uint32_t)dims->bias_s[2],
        .mask_b = (uint32_t)dims->mask_s[0], .mask_h = (uint32_t)dims->mask_s[1],
        .mask_i = (uint32_t)dims->mask_s[2],
        .window = dims->plan.window,
        /* the reference fills masked rows with (float)(1.0 / tv) */
        .masked_w = m->masked_row == VKATTN_MASKED_ROW_UNIFORM ? (float)(1.0 / params->tv) : 0.0f,
    };
    logit_scaling(dims->plan.scale, m->has_bias, &push);
    return push;
}

/* Everything after the checks: the staging passes, the pack and the dispatch
 * (vka_f16_record). */
static vkattn_result record_checked(vkattn_context *ctx, VkCommandBuffer cmd, const void *op_)
{
    const char *caller = "vkattn_softmax_record";
    const softmax_op *op = op_;
    const vkattn_softmax_params *params = op->params;
    const vkattn_softmax_io *io = op->io;
    const softmax_variant v = op->v;
    vkattn_result r;
    /* two dispatches: the whole record dry first (unless a dry pass already
     * checked it), so that a failure records nothing */
    if (v.split && !vka_record_checked(ctx, cmd))
        return vka_record_dry_first(ctx, cmd, record_checked, op_);
    const vka_kernel kernel = variant_kernel(&v, &params->mask);
    softmax_push push = variant_push(params, &op->dims);
    vka_dispatch d = {.kernel = &kernel, .push = &push, .caller = caller};
    const uint64_t rows = push.rows;
    const uint32_t chunks = v.split ? (uint32_t)vka_div_up(params->tv, v.split_len) : 1;
    if (v.split)
        push.split_chunks = chunks, push.split_len = v.split_len;
    if ((r = vka_softmax_spread_groups(ctx, caller, rows * chunks, v.shape.wg / v.shape.g,
                                       d.groups)))
        return r;
    push.groups_x = d.groups[0];
    vkattn_tensor *parts = NULL;
    if (v.split && (r = vka_growable_get(ctx, VKA_SCRATCH_SOFTMAX_PARTS, 2 * rows * chunks,
                                         caller, &parts)))
        return r;
    vkattn_tensor *bias = io->bias, *out = io->out;
    if ((v.packed && v.b16 &&
         (r = vka_f16_stage_in(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE0, io->bias,
                               bias_count(params, &op->dims), &bias))) ||
        (v.out_via_f32 && (r = vka_f16_stage_out(ctx, cmd, caller, VKA_SCRATCH_F16_STAGE1,
                                                 io->out, op->dims.plan.total, false, &out))))
        return r;
    /* In place the scores are read through the written out binding (a
     * binding is read-only or written per dispatch); binding 0 is unused. */
    d.bindings[0] = v.in_place ? vka_bind_optional(ctx, NULL) : vka_bind_tensor(io->scores, false);
    d.bindings[1] = vka_bind_optional(ctx, bias);
    d.bindings[2] = vka_bind_optional(ctx, io->value_mask);
    d.bindings[3] = vka_bind_optional(ctx, io->mask);
    d.bindings[4] = vka_bind_tensor(out, true);
    if (v.packed) {
        vkattn_tensor *const side[3] = {bias, io->value_mask, io->mask};
        vka_packed pk;
        if ((r = vka_pack_inputs(ctx, cmd, caller, side, 3, &pk)))
            return r;
        push.bias_off = pk.offset[0], push.vmask_off = pk.offset[1], push.mask_off = pk.offset[2];
        d.bindings[1] = pk.binding;
        d.bindings[2] = d.bindings[4];
    }
    if (v.split) { /* phase 0 reads (in place: from out) and writes parts */
        d.bindings[4] = vka_bind_tensor(out, false);
        d.bindings[5] = vka_bind_tensor(parts, true);
        if ((r = vka_record_dispatch(ctx, cmd, &d)))
            return r;
        push.split_phase = 1;
        d.bindings[4] = vka_bind_tensor(out, true);
        d.bindings[5] = vka_bind_tensor(parts, false);
    }
    if ((r = vka_record_dispatch(ctx, cmd, &d)))
        return r;
    return vka_f16_stage_finish(ctx, cmd, caller, io->out, out, op->dims.plan.total);
}

vkattn_result vkattn_softmax_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                    const vkattn_softmax_params *params,
                                    const vkattn_softmax_io *io)
{
    VKA_RECORD_MODES(ctx, ctx, cmd, vkattn_softmax_record(ctx, cmd, params, io));
    softmax_op op = {.params = params, .io = io};
    /* The shader's key loop steps up to 1024 past the last index: keep that in
     * range of uint32 too. */
    vkattn_result r = vka_softmax_plan(ctx, __func__, params, "scores", UINT32_MAX - 1024u,
                                       &op.dims);
    if (r == VKATTN_SUCCESS)
        r = check_io(ctx, __func__, params, io, &op.dims);
    if (r == VKATTN_SUCCESS)
        r = choose_variant(ctx, __func__, params, io, &op.v);
    if (r != VKATTN_SUCCESS)
        return r;
    /* staged: any 16-bit tensor may go through scratch (decided with the kernel) */
    return vka_f16_record(ctx, cmd, op.v.s16 || op.v.o16 || op.v.b16, record_checked, &op);
}
