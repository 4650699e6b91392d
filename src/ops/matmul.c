/* Batched matmul: tile choice from the device's limits, argument checks, the
 * choice of kernel for the tensors' element types and the tuning (f32, f16 and
 * bf16 alike under the GPU tuning: shaders/matmul_gpu.comp), and the dispatches of
 * shaders/matmul*.comp. */
#include "vkattn/matmul.h"

#include "common/elem_iface.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/matmul_shape.h"
#include "common/matmul_iface.h"
#include "ops/coopmat_kernels.h"
#include "ops/gpu_tiles.h"
#include "ops/scratch_kinds.h"
#include "ops/variant_select.h"
#include "ops/half_convert.h"
#include "ops/half_stage.h"
#include "ops/matmul_internal.h"
#include "ops/split.h"
#include "vk/dispatch.h"
#include "vk/tensor.h"
#include "vka_shaders.h"
#include "vk/record_mode.h"
#include "vk/view.h"

VKA_PUSH_STRUCT(matmul_push, VKA_MATMUL_PUSH);

typedef vka_matmul_tiles matmul_tiles;

static uint32_t tile_threads(const matmul_tiles *t) { return vka_matmul_tile_threads(t); }
static uint32_t tile_shared_bytes(const matmul_tiles *t) { return vka_matmul_tile_shared_bytes(t); }

/* Largest tiles that fit the device, smaller ones for small problems so a
 * 1 x N product does not spend most of its work on padding. 128 x 128 tiles
 * with 8 x 8 outputs per invocation need 16.5 KiB of shared memory (designed
 * for 32 KiB); the fallbacks fit the spec's 16 KiB minimum. Measured on
 * lavapipe (docs/PERFORMANCE.md): 128x128/8x8 is about 2x 64x64/4x4 at 1024^3,
 * as more outputs per invocation amortise each shared-memory read. */
static bool choose_tiles(const vkattn_context_info *info, uint32_t m, uint32_t n, matmul_tiles *out)
{
    static const matmul_tiles candidates[] = {
        {128, 128, 16, 8, 8}, /* 256 invocations, 16.5 KiB */
        {64, 64, 16, 4, 4},   /* 256 invocations, 8.3 KiB */
        {32, 64, 16, 2, 4}, {64, 32, 16, 4, 2},
        {32, 32, 16, 2, 2}, /* 256 invocations */
        {16, 64, 16, 1, 4}, {16, 32, 16, 1, 2},
        {32, 32, 8, 4, 4},  /* 64 invocations */
        {16, 16, 8, 2, 2},
    };
    const size_t count = sizeof candidates / sizeof candidates[0];
    for (size_t i = 0; i < count; i++) {
        const matmul_tiles *t = &candidates[i];
        uint32_t threads = tile_threads(t);
        if (threads > info->max_workgroup_invocations || threads > info->max_workgroup_size[0] ||
            tile_shared_bytes(t) > info->max_shared_memory)
            continue;
        bool too_big = (t->bm > 64 && m < 128) || (t->bn > 64 && n < 128) ||
                       (m <= 16 && t->bm > 16) || (n <= 32 && t->bn > 32);
        if (too_big && i + 1 < count)
            continue;
        *out = *t;
        return true;
    }
    return false;
}

/* Whether loads of `group` consecutive stored elements of an operand are
 * aligned: its binding starts on a multiple of the group's bytes and every
 * stored row, head and batch starts at a multiple of `group` elements.
 * matmul_gpu.comp loads groups of 4 (vec4; 16-bit: uvec2), the cooperative-
 * matrix kernel groups of 8 halves (uvec4). `rows_split` covers the first
 * row of a row block, for an operand whose stored rows are M (transposed A). */
static bool groups_aligned(const vkattn_tensor *t, const vka_operand *o, uint32_t group,
                           bool rows_split)
{
    const uint64_t bytes = group * t->elem;
    return t->offset % bytes == 0 && o->row_stride % group == 0 &&
           o->head_stride % group == 0 && o->batch_stride % group == 0 && rows_split;
}

/* How much of K one dispatch may cover within the device's loop budget. Per
 * step of BK the shader runs the step loop and the two tile-load loops, and at
 * most BK iterations of the product loop if the compiler keeps it rolled. */
static uint32_t k_per_dispatch(const vkattn_context *ctx, const matmul_tiles *t, bool gpu,
                               uint32_t k)
{
    const uint32_t threads = tile_threads(t);
    uint64_t per_step = 4 + vka_div_up((uint64_t)t->bm * t->bk, threads) +
                        vka_div_up((uint64_t)t->bn * t->bk, threads) + t->bk;
    /* matmul_gpu.comp: per group of four a fetch and a store, each a loop of
     * up to four where the compiler keeps it rolled */
    if (gpu)
        per_step = 4 + 10 * (vka_div_up((uint64_t)t->bm * t->bk / 4, threads) +
                             vka_div_up((uint64_t)t->bn * t->bk / 4, threads)) + t->bk;
    const uint64_t steps = vka_loop_budget(ctx) / per_step;
    if (steps >= vka_div_up(k, t->bk))
        return k;
    return (uint32_t)(steps ? steps : 1) * t->bk;
}

/* The same for the cooperative-matrix kernel, counted on its emulation
 * (shaders/common/coopmat_frag.glsl; the NV kernel runs only where there is
 * no budget), every loop as if the compiler kept it rolled and each loop's
 * exit test as one more iteration (on lavapipe, with the 64 x 64 tiles and
 * halves loaded one by one, 54 steps fit and 55 do not; this count allows
 * 52, and without the exits it allowed 56). Per BK
 * step: the step loop (1) and its two fetch and two store loops (4 exits),
 * per prefetched group of eight halves its fetch and store iterations and
 * the eight-half load loop (1 + 9 + 1); per 16 of BK the loop (1), the fm
 * and fn loads, fm rows of products and fm x fn products (each loop + 1),
 * an emulated product 8 elements of 16 multiply-adds (9 + 8 x 17); the
 * 16-of-BK loop's exit (1). Once per dispatch: zeroing the accumulators (1 +
 * 9 each), the first tiles (11 per group, 2 exits), the output (per fragment
 * 1 + 9 stores + 9 writes, per row 1 + an exit) and the step loop's exit. */
static uint32_t k_per_dispatch_coopmat(const vkattn_context *ctx, const vka_coopmat_tiles *t,
                                       uint32_t k)
{
    const uint64_t threads = (uint64_t)t->warps_m * t->warps_n * t->subgroup;
    const uint64_t fm = t->bm / (t->warps_m * 16), fn = t->bn / (t->warps_n * 16);
    const uint64_t groups = vka_div_up((uint64_t)t->bm * t->bk / 8, threads) +
                            vka_div_up((uint64_t)t->bn * t->bk / 8, threads);
    const uint64_t product = 9 + 8 * 17;
    const uint64_t per_step = 1 + 4 + 11 * groups + 1 +
                              t->bk / 16 *
                                  (1 + (fm + 1) + (fn + 1) + (fm + 1) + fm * (fn + 1) +
                                   fm * fn * product);
    const uint64_t once = 1 + fm * fn * 10 + 11 * groups + 2 + fm * (1 + fn * 19 + 1) + 2;
    const uint64_t steps = vka_loop_budget(ctx) > once ? (vka_loop_budget(ctx) - once) / per_step : 0;
    if (steps >= vka_div_up(k, t->bk))
        return k;
    return (uint32_t)(steps ? steps : 1) * t->bk;
}

static vkattn_result check_u32(vkattn_context *ctx, const char *caller, uint64_t v, const char *what)
{
    if (v > UINT32_MAX)
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: %s (%llu elements) does not fit the kernel's 32-bit indexing", caller,
                        what, (unsigned long long)v);
    return VKATTN_SUCCESS;
}

static vkattn_result check_io(vkattn_context *ctx, const char *caller, const vka_matmul_shape *s,
                              const vkattn_matmul_params *p, const vkattn_matmul_io *io)
{
    if (!io)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: io is NULL", caller);
    vkattn_result r;
    const unsigned both = VKA_DTYPES_FLOAT; /* each operand on its own */
    if ((r = vka_tensor_check_types(ctx, io->a, s->a.extent, caller, "io->a", both)) ||
        (r = vka_tensor_check_types(ctx, io->b, s->b.extent, caller, "io->b", both)) ||
        (r = vka_tensor_check_types(ctx, io->c, s->c.extent, caller, "io->c", both)))
        return r;
    if (p->has_bias &&
        (r = vka_tensor_check_types(ctx, io->bias, s->n, caller, "io->bias", both)))
        return r;
    if (!p->has_bias && io->bias)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->bias is given but params->has_bias is false", caller);
    if (io->c == io->a || io->c == io->b || io->c == io->bias)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: io->c must not be an input tensor (no in-place matmul)", caller);
    const vka_operand *ops[] = {&s->a, &s->b, &s->c};
    static const char *names[] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++)
        if ((r = check_u32(ctx, caller, ops[i]->extent, names[i])))
            return r;
    uint64_t groups = (uint64_t)s->batch * s->heads;
    if (groups > vka_info(ctx)->max_workgroup_count[2])
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: batch * heads = %llu exceeds the device's %u workgroups along z", caller,
                        (unsigned long long)groups, vka_info(ctx)->max_workgroup_count[2]);
    return VKATTN_SUCCESS;
}

/* Whether every row of C starts at an even element, so that the packed
 * 16-bit kernel's pairs of columns (2q, 2q + 1) are whole words. */
static bool rows_word_aligned(const vka_matmul_shape *s)
{
    return s->c.row_stride % 2 == 0 && (s->heads == 1 || s->c.head_stride % 2 == 0) &&
           (s->batch == 1 || s->c.batch_stride % 2 == 0);
}

/* How the kernels take the operands (ops/half_stage.h). */
static vka_path16 matmul_path(const vkattn_context *ctx, const vkattn_matmul_io *io)
{
    const vkattn_tensor *const ts[] = {io->a, io->b, io->bias, io->c};
    return vka_path16_of(ctx, ts, sizeof ts / sizeof ts[0]);
}

/* 16-bit elements (f16, bf16). */
static bool is_16bit(const vkattn_tensor *t)
{
    return vka_dtype_info_of(t->dtype)->is_16bit;
}

/* Whether the outputs fill C's span [0, extent) with no gap. */
static bool c_dense(const vka_matmul_shape *s)
{
    return s->c.extent == (uint64_t)s->batch * s->heads * s->m * s->n;
}

vkattn_result vkattn_matmul_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                   const vkattn_matmul_params *params, const vkattn_matmul_io *io)
{
    VKA_RECORD_MODES(ctx, ctx, cmd, vkattn_matmul_record(ctx, cmd, params, io));
    return vka_matmul_record_as(ctx, cmd, __func__, params, io);
}

/* The kernel of one product: matmul_gpu.comp under the GPU tuning, else the
 * f32 kernel or one of its typed twins (float16_t views, or packed words of
 * two 16-bit elements: bf16, or no 16-bit storage). */
/* shaders/matmul_coopmat_<family>.comp (one body, ops/coopmat_kernels.h)
 * for tiles *ct: f16 A and B. */
static vka_kernel coopmat_kernel(const vkattn_context *ctx, const vkattn_matmul_params *params,
                                 const vkattn_matmul_io *io, const vka_matmul_shape *s,
                                 const vka_coopmat_tiles *ct, uint32_t family, uint32_t rows,
                                 bool c16_direct)
{
    vka_kernel k = {
        .n_bindings = 4,
        .push_size = sizeof(matmul_push),
        .n_spec = VKA_COOPMAT_N_SPEC,
        .spec = {
            [VKA_COOPMAT_SPEC_BM] = ct->bm,
            [VKA_COOPMAT_SPEC_BN] = ct->bn,
            [VKA_COOPMAT_SPEC_BK] = ct->bk,
            [VKA_COOPMAT_SPEC_WARPS_M] = ct->warps_m,
            [VKA_COOPMAT_SPEC_WARPS_N] = ct->warps_n,
            [VKA_COOPMAT_SPEC_SUBGROUP] = ct->subgroup,
            [VKA_COOPMAT_SPEC_TRANS_A] = params->transpose_a,
            [VKA_COOPMAT_SPEC_TRANS_B] = params->transpose_b,
            [VKA_COOPMAT_SPEC_HAS_BIAS] = params->has_bias,
            [VKA_COOPMAT_SPEC_BIAS_TYPE] = io->bias ? vka_dtype_spec_code(io->bias->dtype) : VKA_ELEM_F32,
            [VKA_COOPMAT_SPEC_C_TYPE] = c16_direct ? vka_dtype_spec_code(io->c->dtype) : VKA_ELEM_F32,
            [VKA_COOPMAT_SPEC_VEC_A] = groups_aligned(
                io->a, &s->a, 8, !params->transpose_a || rows >= s->m || rows % 8 == 0),
            [VKA_COOPMAT_SPEC_VEC_B] = groups_aligned(io->b, &s->b, 8, true),
            [VKA_COOPMAT_SPEC_WG] = ct->warps_m * ct->warps_n * ct->subgroup,
            [VKA_COOPMAT_SPEC_FAULT] = family == VKATTN_COOPMAT_EMULATED && vka_coopmat_test_fault(ctx),
        },
    };
    vka_coopmat_module(family, VKA_COOPMAT_MATMUL, &k);
    return k;
}

static vka_kernel matmul_kernel(const vkattn_context *ctx, const vkattn_matmul_params *params,
                                const vkattn_matmul_io *io, const vka_matmul_shape *s,
                                const matmul_tiles *t, bool gpu, uint32_t rows, bool c16_direct)
{
    const uint32_t a_type = vka_dtype_spec_code(io->a->dtype), b_type = vka_dtype_spec_code(io->b->dtype);
    const uint32_t bias_type = io->bias ? vka_dtype_spec_code(io->bias->dtype) : VKA_ELEM_F32;
    /* an operand other than f32 takes a typed module: the float16_t views
     * where every 16-bit operand is f16 and the device has 16-bit storage,
     * else (bf16 anywhere) words of two elements */
    const vka_path16 path = matmul_path(ctx, io);
    const bool any16 = path != VKA_PATH_F32, views = path == VKA_PATH_NATIVE16;
    vka_kernel kernel = {
        .name = !any16 ? "matmul" : views ? "matmul_f16" : "matmul_f16_packed",
        .code = !any16 ? vka_spv_matmul : views ? vka_spv_matmul_f16 : vka_spv_matmul_f16_packed,
        .code_size = !any16  ? vka_spv_matmul_size
                     : views ? vka_spv_matmul_f16_size
                             : vka_spv_matmul_f16_packed_size,
        .n_bindings = 4,
        .push_size = sizeof(matmul_push),
        .n_spec = VKA_MATMUL_N_SPEC,
        .spec = {
            [VKA_MATMUL_SPEC_BM] = t->bm,
            [VKA_MATMUL_SPEC_BN] = t->bn,
            [VKA_MATMUL_SPEC_BK] = t->bk,
            [VKA_MATMUL_SPEC_TM] = t->tm,
            [VKA_MATMUL_SPEC_TN] = t->tn,
            [VKA_MATMUL_SPEC_TRANS_A] = params->transpose_a,
            [VKA_MATMUL_SPEC_TRANS_B] = params->transpose_b,
            [VKA_MATMUL_SPEC_HAS_BIAS] = params->has_bias,
            [VKA_MATMUL_SPEC_WG] = tile_threads(t),
            [VKA_MATMUL_SPEC_A_TYPE] = a_type,
            [VKA_MATMUL_SPEC_B_TYPE] = b_type,
            [VKA_MATMUL_SPEC_BIAS_TYPE] = bias_type,
            [VKA_MATMUL_SPEC_C_TYPE] = c16_direct ? vka_dtype_spec_code(io->c->dtype) : VKA_ELEM_F32,
        },
    };
    if (gpu) {
        kernel.name = "matmul_gpu";
        kernel.code = vka_spv_matmul_gpu;
        kernel.code_size = vka_spv_matmul_gpu_size;
        kernel.n_spec = VKA_MATMUL_GPU_N_SPEC;
        kernel.spec[VKA_MATMUL_SPEC_VEC_A] = groups_aligned(
            io->a, &s->a, 4, !params->transpose_a || rows >= s->m || rows % 4 == 0);
        kernel.spec[VKA_MATMUL_SPEC_VEC_B] = groups_aligned(io->b, &s->b, 4, true);
    }
    return kernel;
}

static matmul_push matmul_push_of(const vka_matmul_shape *s)
{
    return (matmul_push){
        .m = s->m, .n = s->n, .k = s->k, .heads = s->heads,
        .a_batch = (uint32_t)s->a.batch_stride, .a_head = (uint32_t)s->a.head_stride,
        .lda = (uint32_t)s->a.row_stride,
        .b_batch = (uint32_t)s->b.batch_stride, .b_head = (uint32_t)s->b.head_stride,
        .ldb = (uint32_t)s->b.row_stride,
        .c_batch = (uint32_t)s->c.batch_stride, .c_head = (uint32_t)s->c.head_stride,
        .ldc = (uint32_t)s->c.row_stride,
        .alpha = s->alpha,
    };
}

static vkattn_result record_blocks(vkattn_context *ctx, VkCommandBuffer cmd, vka_dispatch *d,
                                   matmul_push *push, const vka_matmul_shape *s, uint32_t bm,
                                   uint32_t rows, uint32_t chunk)
{
    vkattn_result r = VKATTN_SUCCESS;
    /* Usually one dispatch. A K longer than the loop budget allows is split
     * into dispatches that accumulate into C (barriers between them come from
     * C's tracked access); rows are split into blocks of `rows` for the
     * watchdog budget. Row blocks compute each output exactly as one
     * dispatch would. */
    for (uint32_t m0 = 0; m0 < s->m && r == VKATTN_SUCCESS; m0 += rows) {
        push->m_begin = m0;
        push->m = s->m - m0 > rows ? m0 + rows : s->m;
        d->groups[1] = (uint32_t)vka_div_up(push->m - m0, bm);
        for (uint32_t k0 = 0; k0 < s->k && r == VKATTN_SUCCESS; k0 += chunk) {
            push->k_begin = k0;
            push->k_end = s->k - k0 > chunk ? k0 + chunk : s->k;
            push->accumulate = k0 > 0;
            d->work = (uint64_t)s->batch * s->heads * (push->m - m0) * s->n * (push->k_end - k0);
            r = vka_record_dispatch(ctx, cmd, d);
        }
    }
    return r;
}

/* The kernel, tiles and dispatch split of one call (matmul_internal.h),
 * decided once after the checks; the recording only reads it. */
typedef vka_matmul_choice matmul_choice;

static vkattn_result choose(vkattn_context *ctx, const char *caller, const vka_matmul_shape *s,
                            const vkattn_matmul_io *io, matmul_choice *c)
{
    /* The GPU tuning runs every product, f32 or f16, on matmul_gpu.comp (an
     * f16 call never takes a slower kernel family than the f32 one); a device
     * the GPU tiles do not fit keeps the kernels below. */
    c->gpu = !vka_info(ctx)->cpu_tuning && vka_select_matmul_gpu(ctx, s->m, s->n, &c->t);
    if (!c->gpu && !choose_tiles(vka_info(ctx), s->m, s->n, &c->t))
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED,
                        "%s: no matmul tile fits this device's workgroup limits", caller);
    /* Tensor cores: f16 A and B on the context's cooperative-matrix family
     * for the matmul, if any (vk/coopmat.h). */
    c->family = c->gpu ? vka_coopmat_family_now(ctx, VKA_COOPMAT_MATMUL) : 0;
    c->coopmat = c->family && io->a->dtype == VKATTN_DTYPE_F16 &&
                 io->b->dtype == VKATTN_DTYPE_F16 &&
                 vka_select_matmul_coopmat(ctx, s->m, s->n,
                                           c->family == VKATTN_COOPMAT_EMULATED, &c->ct);
    if (c->coopmat) {
        vka_coopmat_note_taken();
        c->t.bm = c->ct.bm;
        c->t.bn = c->ct.bn;
    }
    c->chunk = c->coopmat ? k_per_dispatch_coopmat(ctx, &c->ct, s->k)
                          : k_per_dispatch(ctx, &c->t, c->gpu, s->k);
    vkattn_result r = vka_split_rows(ctx, caller, "matmul", s->m, c->t.bm,
                                     (uint64_t)s->batch * s->heads * s->n * s->k, &c->rows);
    /* A 16-bit C gets f32 sums in scratch, converted at the end, where a long
     * K is split (partial sums rounded to 16 bits would lose the f32 accumulation)
     * or where packed halves cannot be written a word per invocation (a row
     * starting at an odd element; matmul_gpu.comp always writes words). */
    const bool words = c->gpu || matmul_path(ctx, io) == VKA_PATH_PACKED;
    c->c_via_f32 = is_16bit(io->c) &&
                   (c->chunk < s->k ||
                    (words && (!rows_word_aligned(s) || (!c->coopmat && c->t.tn % 2))));
    return r;
}

vkattn_result vka_matmul_plan(vkattn_context *ctx, const char *caller,
                              const vkattn_matmul_params *params, const vkattn_matmul_io *io,
                              vka_matmul_call *call)
{
    *call = (vka_matmul_call){0};
    vkattn_result r = vka_matmul_resolve(ctx, caller, params, &call->s);
    if (r == VKATTN_SUCCESS)
        r = check_io(ctx, caller, &call->s, params, io);
    return r ? r : choose(ctx, caller, &call->s, io, &call->c);
}

vkattn_result vka_matmul_record_planned(vkattn_context *ctx, VkCommandBuffer cmd,
                                        const char *caller, const vkattn_matmul_params *params,
                                        const vkattn_matmul_io *io, const vka_matmul_call *call)
{
    const vka_matmul_shape *s = &call->s;
    const matmul_choice *c = &call->c;
    vkattn_result r;
    vkattn_tensor *out = io->c;
    if (c->c_via_f32 &&
        (r = vka_growable_get(ctx, VKA_SCRATCH_F32_SUMS, s->c.extent, caller, &out)))
        return r;
    if (c->c_via_f32 && !c_dense(s) &&
        (r = vka_half_convert_record(ctx, cmd, caller, io->c, out, s->c.extent, false)))
        return r; /* elements of C's span that are no output keep their values */
    const bool c16_direct = is_16bit(io->c) && !c->c_via_f32;
    const vka_kernel kernel =
        c->coopmat
            ? coopmat_kernel(ctx, params, io, s, &c->ct, c->family, c->rows, c16_direct)
            : matmul_kernel(ctx, params, io, s, &c->t, c->gpu, c->rows, c16_direct);
    matmul_push push = matmul_push_of(s);
    vka_dispatch d = {
        .kernel = &kernel,
        .bindings = {vka_bind_tensor(io->a, false), vka_bind_tensor(io->b, false),
                     vka_bind_optional(ctx, io->bias), vka_bind_tensor(out, true)},
        .push = &push,
        .groups = {(uint32_t)vka_div_up(s->n, c->t.bn), (uint32_t)vka_div_up(s->m, c->t.bm),
                   s->batch * s->heads},
        .caller = caller,
    };
    r = record_blocks(ctx, cmd, &d, &push, s, c->t.bm, c->rows, c->chunk);
    if (r == VKATTN_SUCCESS && c->c_via_f32)
        r = vka_half_convert_record(ctx, cmd, caller, io->c, out, s->c.extent, true);
    return r;
}

vkattn_result vka_matmul_record_as(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                   const vkattn_matmul_params *params, const vkattn_matmul_io *io)
{
    if (!ctx || !cmd)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", caller,
                        !ctx ? "ctx" : "cmd");
    vka_matmul_call call;
    vkattn_result r = vka_matmul_plan(ctx, caller, params, io, &call);
    return r ? r : vka_matmul_record_planned(ctx, cmd, caller, params, io, &call);
}
