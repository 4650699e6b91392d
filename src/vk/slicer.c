/* One call captured once and recorded across frames within a time budget:
 * see vkattn/slicer.h. The capture itself is vk/capture.h; here are the
 * pieces, their cost estimates, the timestamps that refine them, and the
 * re-capture of splits whose pieces overran the budget; the choices
 * themselves are vk/slice_plan.h. */
#include "vkattn/slicer.h"

#include "core/error.h"
#include "vk/capture.h"
#include "vk/context.h"
#include "vk/prepare.h"
#include "vk/record_mode.h"
#include "vk/slice_plan.h"
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
/* Re-captures after passes with pieces over budget (each one allocates):
 * pieces 13x over (first estimates under load, issue 37) need 26x to reach
 * VKA_RESPLIT_SHARE, two rounds of at most VKA_RESPLIT_MAX_CUT; then one
 * round net of the fixed cost, and one that may go back. Pieces that cannot
 * be cut never take a round. */
#define MAX_RESPLITS 4

typedef struct piece {
    uint32_t first, end;   /* its commands: barriers, then one dispatch or copy */
    uint64_t bytes;
    bool dispatch;
    double prior_us, measured_us; /* measured_us < 0: none yet */
    uint32_t slice;
    bool pending;          /* timestamps recorded, not read back yet */
    uint64_t stamp;        /* the start timestamp last read back (0: none) */
    bool uncut;            /* over budget at the last check, and cannot be cut */
} piece;

/* One capture of the call with its pieces and their timestamps. */
typedef struct capture_set {
    vka_capture capture;
    piece *pieces;
    double *est; /* per piece, record_next's working copy of the estimates */
    uint32_t n_pieces;
    VkQueryPool queries; /* two per piece, VK_NULL_HANDLE without timestamps */
} capture_set;

struct vkattn_slicer {
    vkattn_context *ctx;
    vkattn_record_fn record;
    void *user;
    uint64_t max_piece_work;
    double bytes_rate, macs_rate; /* the first estimates' ceilings, per us */
    capture_set cur;
    /* the capture a re-split replaced, kept until the GPU is done with it
     * (every timestamp it wrote read back) */
    capture_set retired;
    uint32_t next, slices;
    double budget_us;
    bool timestamps;
    /* re-split (vk/slice_plan.h): the finer limit of each split, re-captures
     * done, pieces re-split over them, pieces found uncut at the last check;
     * seeded: the pieces' first estimates come from an earlier capture's times */
    uint64_t *split_limits;
    uint32_t n_splits, resplits, resplit_pieces, uncut_pieces;
    /* per split (n_fit of them): its worked pieces' count and time in the
     * capture before its last re-split, and the fixed cost per piece those
     * and the current ones show (vka_plan_overhead; 0 unknown) */
    uint32_t *prev_n;
    uint64_t *prev_limit; /* its limit before that re-split */
    double *prev_us, *overhead_us;
    uint32_t n_fit;
    bool seeded;
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
static vkattn_result capture_call(vkattn_slicer *s, vka_capture *c, const char *fn)
{
    vkattn_context *ctx = s->ctx;
    c->split_limits = s->split_limits;
    c->n_split_limits = s->n_splits;
    vkattn_result r = vka_capture_begin(ctx, c, fn);
    if (r != VKATTN_SUCCESS)
        return r;
    r = s->record(s->user, VKA_DRY_CMD);
    if (r == VKATTN_SUCCESS)
        r = s->record(s->user, vka_capture_handle(c));
    if (r == VKATTN_SUCCESS)
        r = c->error;
    vka_capture_end(ctx, c);
    if (r != VKATTN_SUCCESS)
        return vka_fail(ctx, r, "%s: desc->record failed: %s", fn, vkattn_context_last_error(ctx));
    /* a callback that records elsewhere (VKATTN_PREPARE, VKATTN_RUN_NOW, its
     * own command buffer) leaves nothing to slice: say so, not an empty pass */
    if (c->n == 0)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: desc->record recorded nothing into the command buffer it was "
                        "given (pass that cmd to the *_record calls, not VKATTN_PREPARE or "
                        "VKATTN_RUN_NOW)",
                        fn);
    return VKATTN_SUCCESS;
}

/* Groups the commands into pieces: the barriers before each dispatch or copy
 * belong to it; barriers after the last one join the last piece. */
static vkattn_result make_pieces(vkattn_slicer *s, capture_set *cs, const char *fn)
{
    const vka_capture *c = &cs->capture;
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->n; i++)
        n += c->commands[i].kind != VKA_COMMAND_BARRIER;
    cs->pieces = n ? calloc(n, sizeof *cs->pieces) : NULL;
    cs->est = n ? calloc(n, sizeof *cs->est) : NULL;
    if (n && (!cs->pieces || !cs->est))
        return vka_fail(s->ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    uint32_t first = 0, k = 0;
    for (uint32_t i = 0; i < c->n; i++) {
        const vka_command *m = &c->commands[i];
        if (m->kind == VKA_COMMAND_BARRIER)
            continue;
        piece *p = &cs->pieces[k++];
        p->first = first;
        p->end = first = i + 1;
        p->bytes = m->bytes;
        p->dispatch = m->kind == VKA_COMMAND_DISPATCH;
        /* bound by memory or by arithmetic, whichever is slower */
        const double memory_us = (double)m->bytes / s->bytes_rate;
        const double compute_us = (double)m->work / s->macs_rate;
        p->prior_us = DISPATCH_OVERHEAD_US + (memory_us > compute_us ? memory_us : compute_us);
        p->measured_us = -1;
    }
    if (n)
        cs->pieces[n - 1].end = c->n;
    cs->n_pieces = n;
    return VKATTN_SUCCESS;
}

/* The command that makes piece i (its dispatch or copy). */
static const vka_command *piece_command(const capture_set *cs, uint32_t i)
{
    return &cs->capture.commands[cs->pieces[i].end - 1];
}

/* desc.max_piece_work 0: the multiply-adds per dispatch that make the
 * longest piece take AUTO_PIECE_SHARE of the budget by the first estimates,
 * or 0 where every piece already fits (the context's split stays). Never
 * below the work of one dispatch overhead: finer pieces would cost more in
 * overhead than they could take off a slice. */
static uint64_t auto_piece_work(const vkattn_slicer *s)
{
    const double target_us = AUTO_PIECE_SHARE * s->budget_us;
    uint64_t largest = 0;
    for (uint32_t i = 0; i < s->cur.n_pieces; i++) {
        const vka_command *m = piece_command(&s->cur, i);
        if (s->cur.pieces[i].prior_us > target_us && m->work > largest)
            largest = m->work;
    }
    if (!largest)
        return 0;
    double work = (target_us - DISPATCH_OVERHEAD_US) * s->macs_rate;
    const double floor_work = DISPATCH_OVERHEAD_US * s->macs_rate;
    if (work < floor_work)
        work = floor_work;
    return work < (double)largest ? (uint64_t)work : 0;
}

static void free_set(vkattn_context *ctx, capture_set *cs)
{
    if (cs->queries)
        ctx->vk.vkDestroyQueryPool(ctx->device, cs->queries, NULL);
    vka_capture_free(&cs->capture);
    free(cs->pieces);
    free(cs->est);
    *cs = (capture_set){0};
}

/* Captures the call and makes its pieces; with max_piece_work 0, captures it
 * again split at auto_piece_work where the context's split leaves pieces
 * longer than the budget allows. */
static vkattn_result capture_pieces(vkattn_slicer *s, const char *fn)
{
    s->cur.capture.max_piece_work = s->max_piece_work;
    vkattn_result r = capture_call(s, &s->cur.capture, fn);
    if (r == VKATTN_SUCCESS)
        r = make_pieces(s, &s->cur, fn);
    const uint64_t work = r == VKATTN_SUCCESS && !s->max_piece_work ? auto_piece_work(s) : 0;
    if (!work)
        return r;
    free_set(s->ctx, &s->cur);
    s->max_piece_work = s->cur.capture.max_piece_work = work;
    if ((r = capture_call(s, &s->cur.capture, fn)) == VKATTN_SUCCESS)
        r = make_pieces(s, &s->cur, fn);
    return r;
}

/* Two timestamps per piece, all reset once so that reading one never run
 * finds it reset (not ready) rather than uninitialized. */
static vkattn_result make_queries(vkattn_context *ctx, capture_set *cs)
{
    VkQueryPoolCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
        .queryType = VK_QUERY_TYPE_TIMESTAMP,
        .queryCount = 2 * cs->n_pieces,
    };
    VkResult vr = ctx->vk.vkCreateQueryPool(ctx->device, &info, NULL, &cs->queries);
    if (vr != VK_SUCCESS) {
        cs->queries = VK_NULL_HANDLE;
        return vka_vk_fail(ctx, vr, "vkattn_slicer: vkCreateQueryPool");
    }
    VkCommandBuffer cmd;
    vkattn_result r = vka_begin(ctx, &cmd);
    if (r != VKATTN_SUCCESS)
        return r;
    ctx->vk.vkCmdResetQueryPool(cmd, cs->queries, 0, info.queryCount);
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
    s->record = desc->record;
    s->user = desc->user;
    s->max_piece_work = desc->max_piece_work;
    s->bytes_rate = (desc->peak ? desc->peak->copy_gbps : DEFAULT_COPY_GBPS) * 1e3;
    s->macs_rate = (desc->peak ? desc->peak->fma_gflops : DEFAULT_FMA_GFLOPS) * 1e3 *
                   FMA_EFFICIENCY / 2.0;
    s->budget_us = desc->budget_us;
    s->timestamps = !desc->no_timestamps && ctx->info.timestamps;
    if ((r = capture_pieces(s, __func__)))
        goto fail;
    if (s->timestamps && s->cur.n_pieces && (r = make_queries(ctx, &s->cur)))
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
    free_set(s->ctx, &s->cur);
    free_set(s->ctx, &s->retired);
    free(s->split_limits);
    free(s->prev_n), free(s->prev_limit), free(s->prev_us), free(s->overhead_us);
    free(s);
}

/* Reads the timestamps of pieces whose slice has completed; true when none
 * is pending any more. */
static bool read_set(vkattn_context *ctx, capture_set *cs)
{
    if (!cs->queries)
        return true;
    const uint32_t bits = ctx->timestamp_valid_bits;
    const uint64_t mask = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    bool idle = true;
    for (uint32_t i = 0; i < cs->n_pieces; i++) {
        piece *p = &cs->pieces[i];
        if (!p->pending)
            continue;
        uint64_t v[4]; /* value, availability, twice */
        VkResult vr = ctx->vk.vkGetQueryPoolResults(
            ctx->device, cs->queries, 2 * i, 2, sizeof v, v, 2 * sizeof(uint64_t),
            VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
        /* Until the slice runs, its queries hold the last pass's results,
         * still available (the reset recorded before them has not run
         * either): the same start is no news, and the GPU is not done. */
        if ((vr != VK_SUCCESS && vr != VK_NOT_READY) || !v[1] || !v[3] || v[0] == p->stamp) {
            idle = false;
            continue;
        }
        p->stamp = v[0];
        const uint64_t ticks = ((v[2] & mask) - (v[0] & mask)) & mask;
        p->measured_us = (double)ticks * ctx->info.timestamp_period_ns * 1e-3;
        p->pending = false;
    }
    return idle;
}

/* Reads back both captures' timestamps; frees the retired one once the GPU
 * is done with it. */
static void read_back(vkattn_slicer *s)
{
    read_set(s->ctx, &s->cur);
    if (s->retired.n_pieces && read_set(s->ctx, &s->retired))
        free_set(s->ctx, &s->retired);
}

/* measured / first estimate over the pieces that ran: scales the rest. */
static double prior_scale(const capture_set *cs)
{
    double measured = 0, prior = 0;
    for (uint32_t i = 0; i < cs->n_pieces; i++)
        if (cs->pieces[i].measured_us >= 0) {
            measured += cs->pieces[i].measured_us;
            prior += cs->pieces[i].prior_us;
        }
    return prior > 0 && measured > 0 ? measured / prior : 1.0;
}

static double estimate(const piece *p, double scale)
{
    return p->measured_us >= 0 ? p->measured_us : p->prior_us * scale;
}

/* Nothing measured yet, and the first estimates (off by several times on
 * lavapipe) do not put the whole call under a tenth of the budget: the slice
 * takes one piece, whose timestamps then scale the rest. Not after a
 * re-split: its pieces' estimates come from measured times. */
static bool first_estimates_risky(const vkattn_slicer *s)
{
    if (!s->cur.queries || s->seeded)
        return false;
    double total = 0;
    for (uint32_t i = 0; i < s->cur.n_pieces; i++) {
        if (s->cur.pieces[i].measured_us >= 0)
            return false;
        total += s->cur.pieces[i].prior_us;
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
    capture_set *cs = &s->cur;
    if (s->next == cs->n_pieces) {
        *done = true;
        return VKATTN_SUCCESS;
    }
    read_back(s);
    const double scale = prior_scale(cs);
    for (uint32_t i = s->next; i < cs->n_pieces; i++)
        cs->est[i] = estimate(&cs->pieces[i], scale);
    const uint32_t end =
        vka_plan_slice_end(cs->est, cs->n_pieces, s->next, s->budget_us, first_estimates_risky(s));

    if (cs->queries)
        ctx->vk.vkCmdResetQueryPool(cmd, cs->queries, 2 * s->next, 2 * (end - s->next));
    for (uint32_t i = s->next; i < end; i++) {
        piece *p = &cs->pieces[i];
        if (cs->queries)
            ctx->vk.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, cs->queries, 2 * i);
        for (uint32_t c = p->first; c < p->end; c++)
            vka_command_replay(ctx, &cs->capture.commands[c], cmd);
        if (cs->queries)
            ctx->vk.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, cs->queries,
                                        2 * i + 1);
        p->pending = cs->queries != VK_NULL_HANDLE;
        p->slice = s->slices;
    }
    s->slices++;
    s->next = end;
    *done = end == cs->n_pieces;
    return VKATTN_SUCCESS;
}

/* A group of pieces whose times carry over together: those of split k (0 =
 * before any split) whose op counts its work (it cut them), or those that do
 * not (the ops recorded after the split's, left as they were). */
static bool in_group(const vka_command *m, uint32_t k, bool worked)
{
    return m->split == k && (m->work > 0) == worked;
}

typedef struct group_sum {
    uint32_t count;
    double work, us;
} group_sum;

static group_sum sum_group(const capture_set *cs, uint32_t k, bool worked, double scale)
{
    group_sum t = {0, 0, 0};
    for (uint32_t i = 0; i < cs->n_pieces; i++) {
        const vka_command *m = piece_command(cs, i);
        if (!in_group(m, k, worked))
            continue;
        t.count++;
        t.work += (double)m->work;
        t.us += estimate(&cs->pieces[i], scale);
    }
    return t;
}

/* The new capture's pieces start from the old one's times, group by group:
 * where a group has as many pieces as before, each keeps its time (and its
 * uncut mark); else each gets the group's old time in proportion to its
 * work. Those become the first estimates. */
static void seed_estimates(capture_set *to, const capture_set *from)
{
    const double scale = prior_scale(from);
    uint32_t last = 0;
    for (uint32_t i = 0; i < to->n_pieces; i++)
        if (piece_command(to, i)->split > last)
            last = piece_command(to, i)->split;
    for (uint32_t g = 0; g < 2 * (last + 1); g++) {
        const uint32_t k = g / 2;
        const bool worked = g % 2;
        const group_sum a = sum_group(from, k, worked, scale), b = sum_group(to, k, worked, 1.0);
        uint32_t j = 0; /* the next old piece of the group */
        for (uint32_t i = 0; i < to->n_pieces; i++) {
            const vka_command *m = piece_command(to, i);
            if (!in_group(m, k, worked))
                continue;
            piece *p = &to->pieces[i];
            if (a.count == b.count) {
                while (!in_group(piece_command(from, j), k, worked))
                    j++;
                p->uncut = from->pieces[j].uncut; /* the same piece: still reported */
                p->prior_us = estimate(&from->pieces[j++], scale);
            } else if (a.count) {
                /* worked pieces by their work, the others alike */
                const double share = worked && b.work > 0 ? (double)m->work / b.work
                                                          : 1.0 / (double)b.count;
                p->prior_us = a.us * share;
            }
        }
    }
}

/* The fixed cost per piece of each split re-split before, from its pieces
 * then and now; a split whose cost leaves no room in the budget's share goes
 * back to its split before (finer pieces only added that cost), in limits.
 * True where one did. */
static bool fit_overheads(vkattn_slicer *s, const capture_set *cs, uint64_t *limits,
                          uint32_t splits)
{
    bool reverted = false;
    for (uint32_t k = 0; k < s->n_fit && k < splits; k++) {
        const group_sum now = sum_group(cs, k + 1, true, 1.0);
        const double fixed = vka_plan_overhead(s->prev_n[k], s->prev_us[k], now.count, now.us);
        if (fixed > 0)
            s->overhead_us[k] = fixed;
        if (fixed >= VKA_RESPLIT_SHARE * s->budget_us && limits[k] != s->prev_limit[k] &&
            s->resplits < MAX_RESPLITS) {
            limits[k] = s->prev_limit[k];
            s->prev_n[k] = 0; /* no fit from this pair again */
            reverted = true;
        }
    }
    return reverted;
}

/* The plan over cs's pieces (vk/slice_plan.h): lowers limits, marks the
 * pieces that cannot be cut. Past MAX_RESPLITS, whatever is over budget
 * stays as it is and is reported. */
static vka_resplit_plan plan_pieces(vkattn_slicer *s, capture_set *cs, uint64_t *limits,
                                    uint32_t splits, vka_plan_piece *plan, bool *uncut)
{
    for (uint32_t i = 0; i < cs->n_pieces; i++) {
        const vka_command *m = piece_command(cs, i);
        plan[i] = (vka_plan_piece){.measured_us = cs->pieces[i].measured_us, .work = m->work,
                                   .limit = m->limit, .split = m->split,
                                   .dispatch = cs->pieces[i].dispatch,
                                   .overhead_us = m->split >= 1 && m->split <= s->n_fit
                                                      ? s->overhead_us[m->split - 1]
                                                      : 0};
    }
    vka_resplit_plan pl = vka_plan_resplit(plan, cs->n_pieces, s->budget_us, limits, splits, uncut);
    if (pl.resplit && s->resplits == MAX_RESPLITS) {
        for (uint32_t i = 0; i < cs->n_pieces; i++)
            uncut[i] = uncut[i] || cs->pieces[i].measured_us > s->budget_us;
        pl.uncut += pl.resplit;
        pl.resplit = 0;
    }
    for (uint32_t i = 0; i < cs->n_pieces; i++)
        cs->pieces[i].uncut = uncut[i];
    s->uncut_pieces = pl.uncut;
    return pl;
}

/* Captures the call again under `limits` (taken on success; the old split
 * stays, and is not tried again, on failure), retiring the current capture. */
static vkattn_result recapture(vkattn_slicer *s, uint64_t *limits, uint32_t splits,
                               uint32_t resplit, const char *fn)
{
    capture_set *cs = &s->cur;
    uint64_t *old_limits = s->split_limits;
    const uint32_t old_splits = s->n_splits;
    s->split_limits = limits, s->n_splits = splits;
    capture_set next = {.capture.max_piece_work = s->max_piece_work};
    vkattn_result r = capture_call(s, &next.capture, fn);
    if (r == VKATTN_SUCCESS)
        r = make_pieces(s, &next, fn);
    if (r == VKATTN_SUCCESS)
        r = make_queries(s->ctx, &next);
    if (r != VKATTN_SUCCESS) {
        free_set(s->ctx, &next);
        free(limits);
        s->split_limits = old_limits, s->n_splits = old_splits;
        s->resplits = MAX_RESPLITS;
        return r;
    }
    for (uint32_t k = 0; k < s->n_fit && k < splits; k++) {
        /* the splits cut this time: their times before, for the next fit */
        const uint64_t was = k < old_splits ? old_limits[k] : 0;
        if (limits[k] != was && limits[k] != s->prev_limit[k]) {
            const group_sum before = sum_group(cs, k + 1, true, 1.0);
            s->prev_n[k] = before.count, s->prev_us[k] = before.us;
            s->prev_limit[k] = was;
        }
    }
    free(old_limits);
    seed_estimates(&next, cs);
    s->retired = *cs;
    *cs = next;
    s->seeded = true;
    s->resplits++;
    s->resplit_pieces += resplit;
    s->uncut_pieces = 0; /* those carried over; the rest are checked after their pass */
    for (uint32_t i = 0; i < cs->n_pieces; i++)
        s->uncut_pieces += cs->pieces[i].uncut;
    read_back(s); /* the retired one may be done already */
    return VKATTN_SUCCESS;
}

/* The per-split arrays, once: the splits are the same on every capture. */
static bool alloc_fit(vkattn_slicer *s, uint32_t splits)
{
    if (s->n_fit || !splits)
        return true;
    s->prev_n = calloc(splits, sizeof *s->prev_n);
    s->prev_limit = calloc(splits, sizeof *s->prev_limit);
    s->prev_us = calloc(splits, sizeof *s->prev_us);
    s->overhead_us = calloc(splits, sizeof *s->overhead_us);
    if (!s->prev_n || !s->prev_limit || !s->prev_us || !s->overhead_us) {
        free(s->prev_n), free(s->prev_limit), free(s->prev_us), free(s->overhead_us);
        s->prev_n = NULL, s->prev_limit = NULL, s->prev_us = s->overhead_us = NULL;
        return false;
    }
    s->n_fit = splits;
    return true;
}

/* After a pass whose every piece was measured: marks the pieces over budget
 * that cannot be cut, and where others can (or a split goes back), captures
 * the call again. The old capture is retired until the GPU is done with it;
 * one at a time, so a re-split waits while one is. */
static vkattn_result resplit(vkattn_slicer *s, const char *fn)
{
    capture_set *cs = &s->cur;
    read_back(s);
    /* the new query pool is reset on the context's one-shot command buffer:
     * while the app has it open, a later reset re-splits */
    if (!cs->queries || s->retired.n_pieces || s->ctx->command_buffer_open)
        return VKATTN_SUCCESS;
    uint32_t splits = 0;
    for (uint32_t i = 0; i < cs->n_pieces; i++) {
        if (cs->pieces[i].measured_us < 0)
            return VKATTN_SUCCESS; /* a pass still to finish */
        if (piece_command(cs, i)->split > splits)
            splits = piece_command(cs, i)->split;
    }
    vka_plan_piece *plan = calloc(cs->n_pieces, sizeof *plan);
    bool *uncut = calloc(cs->n_pieces, sizeof *uncut);
    uint64_t *limits = splits ? calloc(splits, sizeof *limits) : NULL;
    if (!plan || !uncut || (splits && !limits) || !alloc_fit(s, splits)) {
        free(plan), free(uncut), free(limits);
        return vka_fail(s->ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    }
    for (uint32_t k = 0; k < splits && k < s->n_splits; k++)
        limits[k] = s->split_limits[k];
    const bool reverted = fit_overheads(s, cs, limits, splits);
    const vka_resplit_plan pl = plan_pieces(s, cs, limits, splits, plan, uncut);
    free(plan), free(uncut);
    if (!pl.resplit && !reverted) {
        free(limits);
        return VKATTN_SUCCESS;
    }
    return recapture(s, limits, splits, pl.resplit, fn);
}

vkattn_result vkattn_slicer_reset(vkattn_slicer *s)
{
    if (!s)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: slicer is NULL", __func__);
    s->next = 0;
    s->slices = 0;
    return resplit(s, __func__);
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
    const capture_set *cs = &s->cur;
    const double scale = prior_scale(cs);
    *info = (vkattn_slicer_info){
        .pieces = cs->n_pieces,
        .next_piece = s->next,
        .slices = s->slices,
        .budget_us = s->budget_us,
        .timestamps = cs->queries != VK_NULL_HANDLE,
        .resplits = s->resplits,
        .resplit_pieces = s->resplit_pieces,
        .uncut_pieces = s->uncut_pieces,
    };
    for (uint32_t i = 0; i < cs->n_pieces; i++) {
        info->measured_pieces += cs->pieces[i].measured_us >= 0;
        info->estimated_us += estimate(&cs->pieces[i], scale);
    }
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_slicer_get_piece(vkattn_slicer *s, uint32_t index, vkattn_slicer_piece *out)
{
    if (!s || !out)
        return vka_fail(s ? s->ctx : NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", __func__,
                        !s ? "slicer" : "piece");
    if (index >= s->cur.n_pieces)
        return vka_fail(s->ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: index %u is out of range (%u pieces)", __func__, index,
                        s->cur.n_pieces);
    read_back(s);
    const piece *p = &s->cur.pieces[index];
    *out = (vkattn_slicer_piece){
        .estimated_us = estimate(p, prior_scale(&s->cur)),
        .prior_us = p->prior_us,
        .measured_us = p->measured_us,
        .bytes = p->bytes,
        .slice = p->slice,
        .dispatch = p->dispatch,
        .uncut = p->uncut,
    };
    return VKATTN_SUCCESS;
}
