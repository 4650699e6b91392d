/* Batched matmul: tile choice from the device's limits, argument checks, and
 * the dispatch of shaders/matmul.comp. */
#include "vkattn/matmul.h"

#include "core/error.h"
#include "core/matmul_shape.h"
#include "vk/context.h"
#include "vk/dispatch.h"
#include "vk/submit.h"
#include "vk/tensor.h"
#include "vka_shaders.h"

typedef struct matmul_push {
    uint32_t m, n, k, heads;
    uint32_t a_batch, a_head, lda;
    uint32_t b_batch, b_head, ldb;
    uint32_t c_batch, c_head, ldc;
    float alpha;
} matmul_push;

typedef struct matmul_tiles {
    uint32_t bm, bn, bk, tm, tn;
} matmul_tiles;

static uint32_t tile_threads(const matmul_tiles *t) { return (t->bm / t->tm) * (t->bn / t->tn); }

/* Bytes of shared memory shaders/matmul.comp declares for these tiles. */
static uint32_t tile_shared_bytes(const matmul_tiles *t)
{
    return 4u * t->bk * ((t->bm + 1) + (t->bn + 1));
}

/* Largest tiles that fit the device; smaller ones for small problems, so a
 * 1 x N product does not spend 63/64 of its work on padding. Designed for 32
 * KiB of shared memory, with fallbacks down to the spec's 16 KiB minimum. */
static bool choose_tiles(const vkattn_context_info *info, uint32_t m, uint32_t n, matmul_tiles *out)
{
    static const matmul_tiles candidates[] = {
        {64, 64, 16, 4, 4}, /* 256 invocations, 8.3 KiB */
        {32, 64, 16, 2, 4}, {64, 32, 16, 4, 2},
        {32, 32, 16, 2, 2}, /* 256 invocations */
        {16, 64, 16, 1, 4}, {16, 32, 16, 1, 2},
        {32, 32, 8, 4, 4},  /* 64 invocations */
        {16, 16, 8, 2, 2},
    };
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        const matmul_tiles *t = &candidates[i];
        uint32_t threads = tile_threads(t);
        if (threads > info->max_workgroup_invocations || threads > info->max_workgroup_size[0] ||
            tile_shared_bytes(t) > info->max_shared_memory)
            continue;
        bool small_m = m <= 16 && t->bm > 16, small_n = n <= 32 && t->bn > 32;
        if ((small_m || small_n) && i + 1 < sizeof candidates / sizeof candidates[0])
            continue;
        *out = *t;
        return true;
    }
    return false;
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
    if ((r = vka_tensor_check(ctx, io->a, s->a.extent, caller, "io->a")) ||
        (r = vka_tensor_check(ctx, io->b, s->b.extent, caller, "io->b")) ||
        (r = vka_tensor_check(ctx, io->c, s->c.extent, caller, "io->c")))
        return r;
    if (p->has_bias && (r = vka_tensor_check(ctx, io->bias, s->n, caller, "io->bias")))
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
    if (groups > ctx->info.max_workgroup_count[2])
        return vka_fail(ctx, VKATTN_ERROR_DEVICE_LIMIT,
                        "%s: batch * heads = %llu exceeds the device's %u workgroups along z", caller,
                        (unsigned long long)groups, ctx->info.max_workgroup_count[2]);
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_matmul_record(vkattn_context *ctx, VkCommandBuffer cmd,
                                   const vkattn_matmul_params *params, const vkattn_matmul_io *io)
{
    const char *caller = "vkattn_matmul_record";
    if (!ctx || !cmd)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", caller,
                        !ctx ? "ctx" : "cmd");
    vka_matmul_shape s;
    vkattn_result r = vka_matmul_resolve(ctx, caller, params, &s);
    if (r == VKATTN_SUCCESS)
        r = check_io(ctx, caller, &s, params, io);
    if (r != VKATTN_SUCCESS)
        return r;

    matmul_tiles t;
    if (!choose_tiles(&ctx->info, s.m, s.n, &t))
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED,
                        "%s: no matmul tile fits this device's workgroup limits", caller);
    vka_kernel kernel = {
        .name = "matmul",
        .code = vka_spv_matmul,
        .code_size = vka_spv_matmul_size,
        .n_bindings = 4,
        .push_size = sizeof(matmul_push),
        .n_spec = 9,
        .spec = {t.bm, t.bn, t.bk, t.tm, t.tn, params->transpose_a, params->transpose_b,
                 params->has_bias, tile_threads(&t)},
    };
    matmul_push push = {
        .m = s.m, .n = s.n, .k = s.k, .heads = s.heads,
        .a_batch = (uint32_t)s.a.batch_stride, .a_head = (uint32_t)s.a.head_stride,
        .lda = (uint32_t)s.a.row_stride,
        .b_batch = (uint32_t)s.b.batch_stride, .b_head = (uint32_t)s.b.head_stride,
        .ldb = (uint32_t)s.b.row_stride,
        .c_batch = (uint32_t)s.c.batch_stride, .c_head = (uint32_t)s.c.head_stride,
        .ldc = (uint32_t)s.c.row_stride,
        .alpha = s.alpha,
    };
    vka_dispatch d = {
        .kernel = &kernel,
        .bindings = {vka_bind_tensor(io->a, false), vka_bind_tensor(io->b, false),
                     vka_bind_optional(ctx, io->bias), vka_bind_tensor(io->c, true)},
        .push = &push,
        .groups = {(uint32_t)vka_div_up(s.n, t.bn), (uint32_t)vka_div_up(s.m, t.bm),
                   s.batch * s.heads},
        .caller = caller,
    };
    return vka_record_dispatch(ctx, cmd, &d);
}

vkattn_result vkattn_matmul_run(vkattn_context *ctx, const vkattn_matmul_params *params,
                                const vkattn_matmul_io *io)
{
    if (!ctx)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "vkattn_matmul_run: ctx is NULL");
    VKA_RUN(ctx, vkattn_matmul_record(ctx, cmd, params, io));
}
