/* One call captured once and recorded across frames within a time budget:
 * see vkattn/slicer.h. The capture itself is vk/capture.h; here are the
 * pieces, their cost estimates, the timestamps that refine them, and the
 * greedy choice of each slice. */
#include "vkattn/slicer.h"

#include "core/error.h"
#include "vk/capture.h"
#include "vk/context.h"
#include "vk/prepare.h"
#include "vk/record_mode.h"
#include "vk/submit.h"
#include "vkattn/peak.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* First-estimate defaults where the app gives no measured ceilings. */
#define DEFAULT_COPY_GBPS 10.0
#define DEFAULT_FMA_GFLOPS 100.0
#define DISPATCH_OVERHEAD_US 20.0
/* The fraction of the FMA ceiling attention kernels reach: 6-22% for
 * MultiHeadAttention on lavapipe (docs/PERFORMANCE.md). Only the first
 * estimates use it; timestamps replace them. */
#define FMA_EFFICIENCY 0.15
/* Automatic split (desc.max_piece_work 0): the share of the budget one piece
 * may take by its first estimate. Half, so that a piece the first estimates
 * undercount by 2-3x (their error on lavapipe, docs/INTEGRATION.md) still
 * stays near the budget, while pieces stay as large as that allows: every
 * dispatch piece costs a fixed overhead, so finer pieces make the call
 * slower in total. */
#define AUTO_PIECE_SHARE 0.5

typedef struct piece {
    uint32_t first, end;   /* its commands: barriers, then one dispatch or copy */
    uint64_t bytes;
    bool dispatch;
    double prior_us, measured_us; /* measured_us < 0: none yet */
    uint32_t slice;
    bool pending;          /* timestamps recorded, not read back yet */
} piece;

struct vkattn_slicer {
    vkattn_context *ctx;
    vka_capture capture;
    piece *pieces;
    uint32_t n_pieces, next, slices;
    double budget_us;
    VkQueryPool queries; /* two per piece, VK_NULL_HANDLE without timestamps */
};

static vkattn_result check_budget(vkattn_context *ctx, const char *fn, const char *name, double us)
{
    if (!(us > 0) || !isfinite(us))
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is %g; must be > 0 and finite",
                        fn, name, us);
    return VKATTN_SUCCESS;
}

static vkattn_result check_desc(vkattn_context *ctx, const vkattn_slicer_desc *d, const char *fn)
{
    if (!d->record)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: desc->record is NULL", fn);
    vkattn_result r = check_budget(ctx, fn, "desc->budget_us", d->budget_us);
    if (r == VKATTN_SUCCESS && d->peak && !(d->peak->copy_gbps > 0 && isfinite(d->peak->copy_gbps)))
        r = vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                     "%s: desc->peak->copy_gbps is %g; must be > 0 (a vkattn_measure_peak result)",
                     fn, d->peak->copy_gbps);
    if (r == VKATTN_SUCCESS && d->peak && !(d->peak->fma_gflops > 0 && isfinite(d->peak->fma_gflops)))
        r = vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                     "%s: desc->peak->fma_gflops is %g; must be > 0 (a vkattn_measure_peak result)",
                     fn, d->peak->fma_gflops);
    return r;
}

/* Runs the app's record twice under the capture: dry (pipelines, scratch,
 * descriptor sets), then capturing. */
static vkattn_result capture_call(vkattn_slicer *s, const vkattn_slicer_desc *d, const char *fn)
{
    vkattn_context *ctx = s->ctx;
    vkattn_result r = vka_capture_begin(ctx, &s->capture, fn);
    if (r != VKATTN_SUCCESS)
        return r;
    r = d->record(d->user, VKA_DRY_CMD);
    if (r == VKATTN_SUCCESS)
        r = d->record(d->user, vka_capture_handle(&s->capture));
    if (r == VKATTN_SUCCESS)
        r = s->capture.error;
    vka_capture_end(ctx, &s->capture);
    if (r != VKATTN_SUCCESS)
        return vka_fail(ctx, r, "%s: desc->record failed: %s", fn, vkattn_context_last_error(ctx));
    /* a callback that records elsewhere (VKATTN_PREPARE, VKATTN_RUN_NOW, its
     * own command buffer) leaves nothing to slice: say so, not an empty pass */
    if (s->capture.n == 0)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: desc->record recorded nothing into the command buffer it was "
                        "given (pass that cmd to the *_record calls, not VKATTN_PREPARE or "
                        "VKATTN_RUN_NOW)",
                        fn);
    return VKATTN_SUCCESS;
}

/* The device's rates the first estimates use: bytes and multiply-adds per us. */
static double bytes_per_us(const vkattn_slicer_desc *d)
{
    return (d->peak ? d->peak->copy_gbps : DEFAULT_COPY_GBPS) * 1e3;
}

static double macs_per_us(const vkattn_slicer_desc *d)
{
    return (d->peak ? d->peak->fma_gflops : DEFAULT_FMA_GFLOPS) * 1e3 * FMA_EFFICIENCY / 2.0;
}

/* Groups the commands into pieces: the barriers before each dispatch or copy
 * belong to it; barriers after the last one join the last piece. */
static vkattn_result make_pieces(vkattn_slicer *s, const vkattn_slicer_desc *d, const char *fn)
{
    const vka_capture *c = &s->capture;
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->n; i++)
        n += c->commands[i].kind != VKA_COMMAND_BARRIER;
    s->pieces = n ? calloc(n, sizeof *s->pieces) : NULL;
    if (n && !s->pieces)
        return vka_fail(s->ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    const double bytes_rate = bytes_per_us(d), macs_rate = macs_per_us(d);
    uint32_t first = 0, k = 0;
    for (uint32_t i = 0; i < c->n; i++) {
        const vka_command *m = &c->commands[i];
        if (m->kind == VKA_COMMAND_BARRIER)
            continue;
        piece *p = &s->pieces[k++];
        p->first = first;
        p->end = first = i + 1;
        p->bytes = m->bytes;
        p->dispatch = m->kind == VKA_COMMAND_DISPATCH;
        /* bound by memory or by arithmetic, whichever is slower */
        const double memory_us = (double)m->bytes / bytes_rate;
        const double compute_us = (double)m->work / macs_rate;
        p->prior_us = DISPATCH_OVERHEAD_US + (memory_us > compute_us ? memory_us : compute_us);
        p->measured_us = -1;
    }
    if (n)
        s->pieces[n - 1].end = c->n;
    s->n_pieces = n;
    return VKATTN_SUCCESS;
}

/* desc.max_piece_work 0: the multiply-adds per dispatch that make the
 * longest piece take AUTO_PIECE_SHARE of the budget by the first estimates,
 * or 0 where every piece already fits (the context's split stays). Never
 * below the work of one dispatch overhead: finer pieces would cost more in
 * overhead than they could take off a slice. */
static uint64_t auto_piece_work(const vkattn_slicer *s, const vkattn_slicer_desc *d)
{
    const double target_us = AUTO_PIECE_SHARE * s->budget_us;
    uint64_t largest = 0;
    for (uint32_t i = 0; i < s->n_pieces; i++) {
        const vka_command *m = &s->capture.commands[s->pieces[i].end - 1];
        if (s->pieces[i].prior_us > target_us && m->work > largest)
            largest = m->work;
    }
    if (!largest)
        return 0;
    double work = (target_us - DISPATCH_OVERHEAD_US) * macs_per_us(d);
    const double floor_work = DISPATCH_OVERHEAD_US * macs_per_us(d);
    if (work < floor_work)
        work = floor_work;
    return work < (double)largest ? (uint64_t)work : 0;
}

/* Captures the call and makes its pieces; with max_piece_work 0, captures it
 * again split at auto_piece_work where the context's split leaves pieces
 * longer than the budget allows. */
static vkattn_result capture_pieces(vkattn_slicer *s, const vkattn_slicer_desc *d, const char *fn)
{
    s->capture.max_piece_work = d->max_piece_work;
    vkattn_result r = capture_call(s, d, fn);
    if (r == VKATTN_SUCCESS)
        r = make_pieces(s, d, fn);
    const uint64_t work = r == VKATTN_SUCCESS && !d->max_piece_work ? auto_piece_work(s, d) : 0;
    if (!work)
        return r;
    vka_capture_free(&s->capture);
    free(s->pieces);
    s->pieces = NULL;
    s->n_pieces = 0;
    s->capture.max_piece_work = work;
    if ((r = capture_call(s, d, fn)) == VKATTN_SUCCESS)
        r = make_pieces(s, d, fn);
    return r;
}

/* Two timestamps per piece, all reset once so that reading one never run
 * finds it reset (not ready) rather than uninitialized. */
static vkattn_result make_queries(vkattn_slicer *s)
{
    vkattn_context *ctx = s->ctx;
    VkQueryPoolCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
        .queryType = VK_QUERY_TYPE_TIMESTAMP,
        .queryCount = 2 * s->n_pieces,
    };
    VkResult vr = ctx->vk.vkCreateQueryPool(ctx->device, &info, NULL, &s->queries);
    if (vr != VK_SUCCESS) {
        s->queries = VK_NULL_HANDLE;
        return vka_vk_fail(ctx, vr, "vkattn_slicer_create: vkCreateQueryPool");
    }
    VkCommandBuffer cmd;
    vkattn_result r = vka_begin(ctx, &cmd);
    if (r != VKATTN_SUCCESS)
        return r;
    ctx->vk.vkCmdResetQueryPool(cmd, s->queries, 0, info.queryCount);
    return vka_end_submit_wait(ctx, cmd, VKATTN_SUCCESS);
}

vkattn_result vkattn_slicer_create(vkattn_context *ctx, const vkattn_slicer_desc *desc,
                                   vkattn_slicer **out)
{
    if (!ctx || !desc || !out)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", __func__,
                        !ctx ? "ctx" : !desc ? "desc" : "out");
    *out = NULL;
    vkattn_result r = check_desc(ctx, desc, __func__);
    if (r != VKATTN_SUCCESS)
        return r;
    vkattn_slicer *s = calloc(1, sizeof *s);
    if (!s)
        return vka_fail(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", __func__);
    s->ctx = ctx;
    s->budget_us = desc->budget_us;
    if ((r = capture_pieces(s, desc, __func__)))
        goto fail;
    if (!desc->no_timestamps && ctx->info.timestamps && s->n_pieces &&
        (r = make_queries(s)))
        goto fail;
    *out = s;
    return VKATTN_SUCCESS;
fail:
    vkattn_slicer_destroy(s);
    return r;
}

void vkattn_slicer_destroy(vkattn_slicer *s)
{
    if (!s)
        return;
    if (s->queries)
        s->ctx->vk.vkDestroyQueryPool(s->ctx->device, s->queries, NULL);
    vka_capture_free(&s->capture);
    free(s->pieces);
    free(s);
}

/* Reads the timestamps of pieces whose slice has completed. */
static void read_back(vkattn_slicer *s)
{
    if (!s->queries)
        return;
    vkattn_context *ctx = s->ctx;
    const uint32_t bits = ctx->timestamp_valid_bits;
    const uint64_t mask = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    for (uint32_t i = 0; i < s->n_pieces; i++) {
        piece *p = &s->pieces[i];
        if (!p->pending)
            continue;
        uint64_t v[4]; /* value, availability, twice */
        VkResult vr = ctx->vk.vkGetQueryPoolResults(
            ctx->device, s->queries, 2 * i, 2, sizeof v, v, 2 * sizeof(uint64_t),
            VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
        if ((vr != VK_SUCCESS && vr != VK_NOT_READY) || !v[1] || !v[3])
            continue;
        const uint64_t ticks = ((v[2] & mask) - (v[0] & mask)) & mask;
        p->measured_us = (double)ticks * ctx->info.timestamp_period_ns * 1e-3;
        p->pending = false;
    }
}

/* measured / first estimate over the pieces that ran: scales the rest. */
static double prior_scale(const vkattn_slicer *s)
{
    double measured = 0, prior = 0;
    for (uint32_t i = 0; i < s->n_pieces; i++)
        if (s->pieces[i].measured_us >= 0) {
            measured += s->pieces[i].measured_us;
            prior += s->pieces[i].prior_us;
        }
    return prior > 0 && measured > 0 ? measured / prior : 1.0;
}

static double estimate(const piece *p, double scale)
{
    return p->measured_us >= 0 ? p->measured_us : p->prior_us * scale;
}

/* Nothing measured yet, and the first estimates (off by several times on
 * lavapipe) do not put the whole call under a tenth of the budget: the slice
 * takes one piece, whose timestamps then scale the rest. */
static bool first_estimates_risky(const vkattn_slicer *s)
{
    if (!s->queries)
        return false;
    double total = 0;
    for (uint32_t i = 0; i < s->n_pieces; i++) {
        if (s->pieces[i].measured_us >= 0)
            return false;
        total += s->pieces[i].prior_us;
    }
    return total > s->budget_us / 10;
}

vkattn_result vkattn_slicer_record_next(vkattn_slicer *s, VkCommandBuffer cmd, bool *done)
{
    if (!s || !cmd || !done)
        return vka_fail(s ? s->ctx : NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", __func__,
                        !s ? "slicer" : !cmd ? "cmd" : "done");
    vkattn_context *ctx = s->ctx;
    vkattn_result r = vka_require_command_buffer(ctx, __func__, cmd);
    if (r != VKATTN_SUCCESS)
        return r;
    if (vka_is_dry(cmd) || vka_capture_of(ctx, cmd))
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: cmd is a slicer's capture, not a command buffer (slicers do not nest)",
                        __func__);
    if (s->next == s->n_pieces) {
        *done = true;
        return VKATTN_SUCCESS;
    }
    read_back(s);
    const double scale = prior_scale(s);
    const bool probe = first_estimates_risky(s);
    uint32_t end = s->next;
    double used = 0;
    do {
        used += estimate(&s->pieces[end], scale);
        end++;
    } while (!probe && end < s->n_pieces &&
             used + estimate(&s->pieces[end], scale) <= s->budget_us);

    if (s->queries)
        ctx->vk.vkCmdResetQueryPool(cmd, s->queries, 2 * s->next, 2 * (end - s->next));
    for (uint32_t i = s->next; i < end; i++) {
        piece *p = &s->pieces[i];
        if (s->queries)
            ctx->vk.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, s->queries, 2 * i);
        for (uint32_t c = p->first; c < p->end; c++)
            vka_command_replay(ctx, &s->capture.commands[c], cmd);
        if (s->queries)
            ctx->vk.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, s->queries,
                                        2 * i + 1);
        p->pending = s->queries != VK_NULL_HANDLE;
        p->slice = s->slices;
    }
    s->slices++;
    s->next = end;
    *done = end == s->n_pieces;
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_slicer_reset(vkattn_slicer *s)
{
    if (!s)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: slicer is NULL", __func__);
    s->next = 0;
    s->slices = 0;
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_slicer_set_budget(vkattn_slicer *s, double budget_us)
{
    if (!s)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: slicer is NULL", __func__);
    vkattn_result r = check_budget(s->ctx, __func__, "budget_us", budget_us);
    if (r == VKATTN_SUCCESS)
        s->budget_us = budget_us;
    return r;
}

vkattn_result vkattn_slicer_get_info(vkattn_slicer *s, vkattn_slicer_info *info)
{
    if (!s || !info)
        return vka_fail(s ? s->ctx : NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s is NULL", __func__, !s ? "slicer" : "info");
    read_back(s);
    const double scale = prior_scale(s);
    *info = (vkattn_slicer_info){
        .pieces = s->n_pieces,
        .next_piece = s->next,
        .slices = s->slices,
        .budget_us = s->budget_us,
        .timestamps = s->queries != VK_NULL_HANDLE,
    };
    for (uint32_t i = 0; i < s->n_pieces; i++) {
        info->measured_pieces += s->pieces[i].measured_us >= 0;
        info->estimated_us += estimate(&s->pieces[i], scale);
    }
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_slicer_get_piece(vkattn_slicer *s, uint32_t index, vkattn_slicer_piece *out)
{
    if (!s || !out)
        return vka_fail(s ? s->ctx : NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", __func__,
                        !s ? "slicer" : "piece");
    if (index >= s->n_pieces)
        return vka_fail(s->ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: index %u is out of range (%u pieces)", __func__, index, s->n_pieces);
    read_back(s);
    const piece *p = &s->pieces[index];
    *out = (vkattn_slicer_piece){
        .estimated_us = estimate(p, prior_scale(s)),
        .prior_us = p->prior_us,
        .measured_us = p->measured_us,
        .bytes = p->bytes,
        .slice = p->slice,
        .dispatch = p->dispatch,
    };
    return VKATTN_SUCCESS;
}
