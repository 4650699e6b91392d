/* The device's ceilings (vkattn/peak.h): an FMA-bound kernel and a buffer
 * copy, timed with the public timestamp hook on the context's one-shot
 * command buffer. */
#include "vkattn/peak.h"

#include "vkattn/timer.h"

#include "core/error.h"
#include "common/peak_iface.h"
#include "vk/dispatch.h"
#include "vk/submit.h"
#include "vk/tensor.h"
#include "vk/view.h"
#include "vka_shaders.h"

#include <stdlib.h>
#include <string.h>

#define PEAK_TIMED_RUNS 5
#define PEAK_TARGET_MS 20.0
#define PEAK_MAX_ITERS (1u << 24)
#define PEAK_COPY_MAX_BYTES (256ull << 20)
#define PEAK_COPY_MIN_BYTES (16ull << 20)

static const char *const CALLER = "vkattn_measure_peak";

VKA_PUSH_STRUCT(fma_push, VKA_PEAK_FMA_PUSH);

VKA_PUSH_STRUCT(copy_push, VKA_PEAK_COPY_PUSH);

/* Records `d` between two timestamps, submits, waits, returns the GPU time. */
static vkattn_result time_dispatch(vkattn_context *ctx, vkattn_timer *timer, const vka_dispatch *d,
                                   double *ms)
{
    VkCommandBuffer cmd;
    vkattn_result r = vka_begin(ctx, &cmd);
    if (r != VKATTN_SUCCESS)
        return r;
    if ((r = vkattn_timer_reset(timer, cmd)) == VKATTN_SUCCESS &&
        (r = vkattn_timer_mark(timer, cmd, 0)) == VKATTN_SUCCESS &&
        (r = vka_record_dispatch(ctx, cmd, d)) == VKATTN_SUCCESS)
        r = vkattn_timer_mark(timer, cmd, 1);
    if ((r = vka_end_submit_wait(ctx, cmd, r)) != VKATTN_SUCCESS)
        return r;
    return vkattn_timer_elapsed_ms(timer, 0, 1, ms);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median GPU time of PEAK_TIMED_RUNS runs of `d`. */
static vkattn_result median_ms(vkattn_context *ctx, vkattn_timer *timer, const vka_dispatch *d,
                               double *ms)
{
    double t[PEAK_TIMED_RUNS];
    for (int i = 0; i < PEAK_TIMED_RUNS; i++) {
        vkattn_result r = time_dispatch(ctx, timer, d, &t[i]);
        if (r != VKATTN_SUCCESS)
            return r;
    }
    qsort(t, PEAK_TIMED_RUNS, sizeof t[0], cmp_double);
    *ms = t[PEAK_TIMED_RUNS / 2];
    return VKATTN_SUCCESS;
}

static uint32_t workgroup_size(const vkattn_context *ctx)
{
    uint32_t wg = 256;
    if (wg > vka_info(ctx)->max_workgroup_invocations)
        wg = vka_info(ctx)->max_workgroup_invocations;
    if (wg > vka_info(ctx)->max_workgroup_size[0])
        wg = vka_info(ctx)->max_workgroup_size[0];
    return wg;
}

/* Grows push->iters until a run of `d` takes PEAK_TARGET_MS (the first run
 * is a warm-up that compiles the pipeline), then times it: the median. */
static vkattn_result time_grown(vkattn_context *ctx, vkattn_timer *timer, const vka_dispatch *d,
                                fma_push *push, double *ms)
{
    vkattn_result r = time_dispatch(ctx, timer, d, ms);
    while (r == VKATTN_SUCCESS) {
        if ((r = time_dispatch(ctx, timer, d, ms)) != VKATTN_SUCCESS)
            return r;
        if (*ms >= PEAK_TARGET_MS || push->iters >= PEAK_MAX_ITERS)
            break;
        /* aim a little past the target so one more step usually suffices */
        double grow = *ms > 0 ? 1.25 * PEAK_TARGET_MS / *ms : 64.0;
        grow = grow < 2.0 ? 2.0 : grow > 64.0 ? 64.0 : grow;
        double next = push->iters * grow;
        push->iters = next > PEAK_MAX_ITERS ? PEAK_MAX_ITERS : (uint32_t)next;
    }
    if (r == VKATTN_SUCCESS)
        r = median_ms(ctx, timer, d, ms);
    return r;
}

/* Units (flops, bytes) per millisecond / 1e6: GFLOP/s, GB/s. */
static double rate(uint64_t amount, double ms)
{
    return ms > 0 ? (double)amount / (ms * 1e6) : 0.0;
}

/* Times an arithmetic kernel (one output binding, fma_push) over `groups`
 * workgroups, its trip count grown to the target (time_grown); *iters: the
 * trip count it settled on. */
static vkattn_result time_arith(vkattn_context *ctx, vkattn_timer *timer, const vka_kernel *kernel,
                                vkattn_tensor *out, uint32_t groups, fma_push push, double *ms,
                                uint32_t *iters)
{
    const vka_dispatch d = {
        .kernel = kernel,
        .bindings = {vka_bind_tensor(out, true)},
        .push = &push,
        .groups = {groups, 1, 1},
        .caller = CALLER,
    };
    vkattn_result r = time_grown(ctx, timer, &d, &push, ms);
    *iters = push.iters;
    return r;
}

/* One FMA variant (`chains` vec4 chains per invocation). */
static vkattn_result fma_variant(vkattn_context *ctx, vkattn_timer *timer, vkattn_tensor *out,
                                 uint32_t groups, uint32_t wg, uint32_t chains, double *gflops,
                                 double *ms_out, uint64_t *flops_out)
{
    const vka_kernel kernel = {
        VKA_KERNEL_SPV(peak_fma),
        .n_bindings = 1,
        .push_size = sizeof(fma_push),
        .n_spec = VKA_PEAK_FMA_N_SPEC,
        .spec = {[VKA_PEAK_FMA_SPEC_CHAINS] = chains, [VKA_PEAK_FMA_SPEC_WG] = wg},
    };
    const fma_push push = {.iters = 1, .a = 0.999999f, .b = 1e-6f};
    double ms;
    uint32_t iters;
    vkattn_result r = time_arith(ctx, timer, &kernel, out, groups, push, &ms, &iters);
    if (r != VKATTN_SUCCESS)
        return r;
    /* per trip and invocation: chains vec4 chains x 4 fma x 4 components x 2 flops */
    *flops_out = (uint64_t)groups * wg * iters * chains * 32u;
    *ms_out = ms;
    *gflops = rate(*flops_out, ms);
    return VKATTN_SUCCESS;
}

static vkattn_result measure_fma(vkattn_context *ctx, vkattn_timer *timer, vkattn_peak_result *res)
{
    uint32_t wg = workgroup_size(ctx);
    /* 16 and 32 independent scalar chains per invocation; 256 workgroups
     * (enough for CPU devices, where each invocation must run long to hide
     * the per-invocation overhead) and 8192 (several waves on the largest
     * GPUs). The fastest counts. */
    static const uint32_t chains[] = {4, 8};
    static const uint32_t group_counts[] = {256, 8192};
    uint32_t max_groups = 0;
    for (size_t i = 0; i < sizeof group_counts / sizeof group_counts[0]; i++)
        if (group_counts[i] <= vka_info(ctx)->max_workgroup_count[0])
            max_groups = group_counts[i];
    vkattn_tensor *out;
    vkattn_result r = vka_tensor_create_1d(ctx, (uint64_t)max_groups * wg * 4, &out);
    if (r != VKATTN_SUCCESS)
        return r;
    for (size_t c = 0; c < sizeof chains / sizeof chains[0] && r == VKATTN_SUCCESS; c++)
        for (size_t g = 0; g < sizeof group_counts / sizeof group_counts[0] && r == VKATTN_SUCCESS; g++) {
            if (group_counts[g] > max_groups)
                continue;
            double gflops = 0, ms = 0;
            uint64_t flops = 0;
            r = fma_variant(ctx, timer, out, group_counts[g], wg, chains[c], &gflops, &ms, &flops);
            if (r == VKATTN_SUCCESS && gflops > res->fma_gflops) {
                res->fma_gflops = gflops;
                res->fma_ms = ms;
                res->fma_flops = flops;
            }
        }
    vkattn_tensor_destroy(out);
    return r;
}

/* The cooperative-matrix rate: 4 subgroups per workgroup, 1024 workgroups
 * (several waves on the largest GPUs), 4 products per subgroup and trip. */
static vkattn_result measure_coopmat(vkattn_context *ctx, vkattn_timer *timer,
                                     vkattn_peak_result *res)
{
    const uint32_t sg = vka_info(ctx)->subgroup_size, groups = 1024;
    if (!vka_info(ctx)->coopmat_enabled || 4 * sg > workgroup_size(ctx))
        return VKATTN_SUCCESS;
    vkattn_tensor *out;
    vkattn_result r = vka_tensor_create_1d(ctx, (uint64_t)groups * 4 * 1024, &out);
    if (r != VKATTN_SUCCESS)
        return r;
    const vka_kernel kernel = {
        VKA_KERNEL_SPV(peak_coopmat_nv),
        .n_bindings = 1,
        .push_size = sizeof(fma_push),
        .n_spec = VKA_PEAK_COOPMAT_N_SPEC,
        .spec = {[VKA_PEAK_COOPMAT_SPEC_WG] = 4 * sg},
    };
    const fma_push push = {.iters = 1, .a = 0.001f, .b = 0.001f};
    double ms = 0;
    uint32_t iters = 0;
    r = time_arith(ctx, timer, &kernel, out, groups, push, &ms, &iters);
    if (r == VKATTN_SUCCESS) {
        res->coopmat_flops = (uint64_t)groups * 4 * iters * 4 * 8192u;
        res->coopmat_ms = ms;
        res->coopmat_gflops = rate(res->coopmat_flops, ms);
    }
    vkattn_tensor_destroy(out);
    return r;
}

/* Two buffers as large as the device allows (halved on out-of-memory). */
static vkattn_result copy_buffers(vkattn_context *ctx, vkattn_tensor **src, vkattn_tensor **dst,
                                  uint64_t *bytes_out)
{
    uint64_t bytes = PEAK_COPY_MAX_BYTES;
    if (bytes > vka_info(ctx)->max_storage_buffer_range)
        bytes = vka_info(ctx)->max_storage_buffer_range;
    for (;;) {
        bytes &= ~(uint64_t)15;
        vkattn_result r = vka_tensor_create_1d(ctx, bytes / 4, src);
        if (r == VKATTN_SUCCESS) {
            r = vka_tensor_create_1d(ctx, bytes / 4, dst);
            if (r != VKATTN_SUCCESS) {
                vkattn_tensor_destroy(*src);
                *src = NULL;
            }
        }
        if (r == VKATTN_SUCCESS) {
            *bytes_out = bytes;
            return r;
        }
        if (r != VKATTN_ERROR_OUT_OF_DEVICE_MEMORY || bytes / 2 < PEAK_COPY_MIN_BYTES)
            return r;
        bytes /= 2;
    }
}

static vkattn_result measure_copy(vkattn_context *ctx, vkattn_timer *timer, vkattn_peak_result *res)
{
    vkattn_tensor *src = NULL, *dst = NULL;
    uint64_t bytes = 0;
    vkattn_result r = copy_buffers(ctx, &src, &dst, &bytes);
    if (r != VKATTN_SUCCESS)
        return r;
    uint32_t wg = workgroup_size(ctx);
    copy_push push = {.n = (uint32_t)(bytes / 16)};
    uint64_t groups = vka_div_up(push.n, wg);
    if (groups > vka_info(ctx)->max_workgroup_count[0])
        groups = vka_info(ctx)->max_workgroup_count[0];
    vka_kernel kernel = {
        VKA_KERNEL_SPV(peak_copy),
        .n_bindings = 2,
        .push_size = sizeof(copy_push),
        .n_spec = VKA_PEAK_COPY_N_SPEC,
        .spec = {
            [VKA_PEAK_COPY_SPEC_WG] = wg,
        },
    };
    vka_dispatch d = {
        .kernel = &kernel,
        .bindings = {vka_bind_tensor(src, false), vka_bind_tensor(dst, true)},
        .push = &push,
        .groups = {(uint32_t)groups, 1, 1},
        .caller = CALLER,
    };
    double ms = 0;
    /* two warm-ups: pipeline compile, then first touch of the pages */
    for (int i = 0; i < 2 && r == VKATTN_SUCCESS; i++)
        r = time_dispatch(ctx, timer, &d, &ms);
    if (r == VKATTN_SUCCESS)
        r = median_ms(ctx, timer, &d, &ms);
    if (r == VKATTN_SUCCESS) {
        res->copy_bytes = 2 * bytes;
        res->copy_ms = ms;
        res->copy_gbps = rate(res->copy_bytes, ms);
    }
    vkattn_tensor_destroy(src);
    vkattn_tensor_destroy(dst);
    return r;
}

vkattn_result vkattn_measure_peak(vkattn_context *ctx, vkattn_peak_result *out)
{
    if (!ctx || !out)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", CALLER,
                        !ctx ? "ctx" : "out");
    memset(out, 0, sizeof *out);
    if (!vka_info(ctx)->timestamps)
        return vka_fail(ctx, VKATTN_ERROR_UNSUPPORTED,
                        "%s: the device's queue has no timestamps, so nothing can be timed", CALLER);
    vkattn_timer *timer;
    vkattn_result r = vkattn_timer_create(ctx, 2, &timer);
    if (r != VKATTN_SUCCESS)
        return r;
    vkattn_peak_result res = {0};
    r = measure_fma(ctx, timer, &res);
    if (r == VKATTN_SUCCESS)
        r = measure_coopmat(ctx, timer, &res);
    if (r == VKATTN_SUCCESS)
        r = measure_copy(ctx, timer, &res);
    vkattn_timer_destroy(timer);
    if (r == VKATTN_SUCCESS)
        *out = res;
    return r;
}
