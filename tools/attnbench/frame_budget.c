/* attnbench bench --frame-budget-us: see frame_budget.h. */
#include "frame_budget.h"

#include "bench.h"
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    if (!n)
        return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct next_slice {
    vkattn_slicer *slicer;
    bool done;
} next_slice;

static vkattn_result record_next(void *user, VkCommandBuffer cmd)
{
    next_slice *n = user;
    return vkattn_slicer_record_next(n->slicer, cmd, &n->done);
}

/* One pass, a submission per slice, each timed; appends the slice times to
 * times[*n_times] (grown: a re-split makes more slices; NULL: none kept). */
static vkattn_result run_pass(vkattn_context *ctx, vkattn_slicer *s, vkattn_timer *timer,
                              double **times, size_t *cap, size_t *n_times, uint32_t *slices,
                              double *total_ms)
{
    next_slice next = {.slicer = s};
    *slices = 0;
    *total_ms = 0;
    while (!next.done) {
        double ms = 0;
        vkattn_result r;
        if (timer) {
            r = ab_time_recording(ctx, timer, record_next, &next, &ms);
        } else { /* no timestamps: submit + wait timed on the host, as bench does */
            const double t0 = ab_now_s();
            r = ab_run_once(ctx, record_next, &next);
            ms = (ab_now_s() - t0) * 1e3;
        }
        if (r != VKATTN_SUCCESS)
            return r;
        if (times && *n_times == *cap) {
            double *t = realloc(*times, (*cap * 2 + 16) * sizeof *t);
            if (!t)
                return VKATTN_ERROR_OUT_OF_HOST_MEMORY;
            *times = t, *cap = *cap * 2 + 16;
        }
        if (times)
            (*times)[(*n_times)++] = ms;
        *total_ms += ms;
        ++*slices;
    }
    return VKATTN_SUCCESS;
}

/* Median relative error of the estimates est[i] against the pieces'
 * measured times now. */
static double estimate_error(vkattn_slicer *s, uint32_t pieces, const double *est)
{
    double *e = calloc(pieces ? pieces : 1, sizeof *e);
    size_t n = 0;
    for (uint32_t i = 0; e && i < pieces; i++) {
        vkattn_slicer_piece p;
        if (vkattn_slicer_get_piece(s, i, &p) == VKATTN_SUCCESS && p.measured_us > 0)
            e[n++] = fabs(est[i] - p.measured_us) / p.measured_us;
    }
    double m = median(e, n);
    free(e);
    return m;
}

static vkattn_result download(vkattn_tensor *t, uint64_t n, float **out)
{
    *out = malloc(n * sizeof **out);
    if (!*out)
        return VKATTN_ERROR_OUT_OF_HOST_MEMORY;
    return vkattn_tensor_download(t, *out, 0, n);
}

int ab_frame_budget_run(vkattn_context *ctx, const ab_op *op, void *state, const ab_args *a,
                        const ab_op_info *info, const vkattn_peak_result *peak,
                        double unsliced_ms, ab_frame_result *f)
{
    *f = (ab_frame_result){.asked = true, .budget_us = a->frame_budget_us, .identical = -1};
    vkattn_slicer *s = NULL;
    vkattn_timer *timer = NULL;
    float *ref = NULL, *got = NULL;
    double *times = NULL, *totals = NULL, *est = NULL;
    const char *what = "frame budget";
    vkattn_result r;
    /* the unsliced output, to compare with */
    if (info->output && ((r = ab_run_once(ctx, op->record, state)) ||
                         (r = download(info->output, info->output_count, &ref))))
        goto fail;
    vkattn_slicer_desc d = {.record = op->record, .user = state, .budget_us = a->frame_budget_us,
                            .peak = peak, .max_piece_work = a->piece_work};
    if ((r = vkattn_slicer_create(ctx, &d, &s)))
        goto fail;
    /* Without timestamps (mobile-min, some phones) slices are timed on the
     * host, like bench's own timing, and the slicer keeps its first
     * estimates. */
    if ((r = vkattn_timer_create(ctx, 2, &timer)) == VKATTN_ERROR_UNSUPPORTED) {
        fprintf(stderr, "attnbench: the device has no timestamps; timing each slice's "
                        "submit + wait on the host\n");
        timer = NULL;
    } else if (r) {
        goto fail;
    }
    vkattn_slicer_info si;
    vkattn_slicer_get_info(s, &si);
    f->pieces = si.pieces;
    size_t cap = 0;
    totals = calloc(a->repeat, sizeof *totals);
    est = calloc(si.pieces + 1, sizeof *est);
    if (!totals || !est) {
        r = VKATTN_ERROR_OUT_OF_HOST_MEMORY;
        goto fail;
    }
    for (uint32_t i = 0; i < si.pieces; i++) {
        vkattn_slicer_piece p;
        vkattn_slicer_get_piece(s, i, &p);
        est[i] = p.prior_us;
    }
    size_t n_times = 0, discard = 0;
    double total;
    ab_progress("%s: learning pass", what);
    if ((r = run_pass(ctx, s, timer, NULL, &cap, &discard, &f->slices, &total)))
        goto fail;
    f->first_error = estimate_error(s, si.pieces, est);
    for (uint32_t pass = 0; pass < a->repeat; pass++) {
        ab_progress("%s: pass %u/%u", what, pass + 1, a->repeat);
        const bool last = pass + 1 == a->repeat;
        if (last && ref && (r = vkattn_tensor_fill(info->output, NAN)))
            goto fail;
        /* a reset re-splits pieces that overran the budget: new pieces */
        if ((r = vkattn_slicer_reset(s)) || (r = vkattn_slicer_get_info(s, &si)))
            goto fail;
        if (pass == 0) { /* the estimates the first timed pass plans on */
            double *e = realloc(est, (si.pieces + 1) * sizeof *e);
            if (!e) {
                r = VKATTN_ERROR_OUT_OF_HOST_MEMORY;
                goto fail;
            }
            est = e;
            for (uint32_t i = 0; i < si.pieces; i++) {
                vkattn_slicer_piece p;
                vkattn_slicer_get_piece(s, i, &p);
                est[i] = p.estimated_us;
            }
        }
        if ((r = run_pass(ctx, s, timer, &times, &cap, &n_times, &f->slices, &totals[pass])))
            goto fail;
        if (pass == 0)
            f->refined_error = estimate_error(s, si.pieces, est);
    }
    /* the last pass's pieces, and what the slicer found over the budget */
    vkattn_slicer_get_info(s, &si);
    f->pieces = si.pieces;
    f->resplits = si.resplits;
    f->resplit_pieces = si.resplit_pieces;
    f->uncut = calloc(si.uncut_pieces + 1, sizeof *f->uncut);
    for (uint32_t i = 0; f->uncut && i < si.pieces; i++) {
        vkattn_slicer_piece p;
        if (vkattn_slicer_get_piece(s, i, &p) == VKATTN_SUCCESS && p.uncut &&
            f->n_uncut < si.uncut_pieces)
            f->uncut[f->n_uncut++] = i;
    }
    f->total_ms = median(totals, a->repeat);
    f->overhead = unsliced_ms > 0 ? f->total_ms / unsliced_ms - 1 : NAN;
    f->slice_max_ms = 0;
    for (size_t i = 0; i < n_times; i++)
        f->slice_max_ms = times[i] > f->slice_max_ms ? times[i] : f->slice_max_ms;
    f->slice_median_ms = median(times, n_times);
    f->piece_list = json_array();
    for (uint32_t i = 0; i < si.pieces; i++) {
        vkattn_slicer_piece p;
        vkattn_slicer_get_piece(s, i, &p);
        json_t *o = json_object();
        json_object_set_new(o, "bytes", json_integer((json_int_t)p.bytes));
        json_object_set_new(o, "first_estimate_us", ab_json_number(p.prior_us));
        json_object_set_new(o, "measured_us", p.measured_us >= 0 ? ab_json_number(p.measured_us)
                                                                  : json_null());
        json_array_append_new(f->piece_list, o);
    }
    if (ref) {
        if ((r = download(info->output, info->output_count, &got)))
            goto fail;
        f->identical = !memcmp(got, ref, info->output_count * sizeof *got);
    }
    r = VKATTN_SUCCESS;
fail:
    free(ref), free(got), free(times), free(totals), free(est);
    vkattn_timer_destroy(timer);
    vkattn_slicer_destroy(s);
    return r ? ab_report(ctx, r, what) : ATTNBENCH_EXIT_OK;
}

json_t *ab_frame_json(const ab_frame_result *f)
{
    json_t *o = json_object();
    json_object_set_new(o, "budget_us", json_integer(f->budget_us));
    json_object_set_new(o, "pieces", json_integer(f->pieces));
    json_object_set_new(o, "slices", json_integer(f->slices));
    json_object_set_new(o, "slice_median_ms", ab_json_number(f->slice_median_ms));
    json_object_set_new(o, "slice_max_ms", ab_json_number(f->slice_max_ms));
    json_object_set_new(o, "total_ms", ab_json_number(f->total_ms));
    json_object_set_new(o, "overhead", ab_json_number(f->overhead));
    json_object_set_new(o, "first_estimate_error", ab_json_number(f->first_error));
    json_object_set_new(o, "refined_estimate_error", ab_json_number(f->refined_error));
    json_object_set_new(o, "identical", f->identical < 0 ? json_null() : json_boolean(f->identical));
    json_object_set_new(o, "resplits", json_integer(f->resplits));
    json_object_set_new(o, "resplit_pieces", json_integer(f->resplit_pieces));
    json_t *uncut = json_array();
    for (uint32_t i = 0; i < f->n_uncut; i++)
        json_array_append_new(uncut, json_integer(f->uncut[i]));
    json_object_set_new(o, "uncut_pieces", uncut);
    json_object_set(o, "piece_times", f->piece_list ? f->piece_list : json_null());
    return o;
}

void ab_frame_free(ab_frame_result *f)
{
    json_decref(f->piece_list);
    f->piece_list = NULL;
    free(f->uncut);
    f->uncut = NULL;
}
