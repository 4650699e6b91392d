/* The timing loop of attnbench bench: each timed run records the op between
 * two timestamps in the context's one-shot command buffer, submits and waits
 * (one call per submission, as an app would run it), after untimed warm-up
 * runs that also compile the pipelines. Reports median, min and max, the
 * textbook GFLOP/s, the minimal-bytes GB/s, and device memory. With --cold,
 * the first call of all (pipeline creation included) is timed on its own
 * first, on a context nothing has run on yet. */
#include "bench.h"

#include "common.h"
#include "peak_cache.h"
#include "ticker.h"
#include "pipeline_file.h"

#include <vkattn/advanced.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int ab_bench_check_args(const ab_op *op, const ab_args *a)
{
    const uint32_t dtype_bit = a->dtype == VKATTN_DTYPE_F16    ? AB_F_FP16
                               : a->dtype == VKATTN_DTYPE_BF16 ? AB_F_BF16
                                                               : 0;
    if (dtype_bit && !(op->flags & dtype_bit)) {
        fprintf(stderr, "attnbench: --dtype %s: %s has no %s path yet (%s)\n",
                ab_dtype_name(a->dtype), op->name, ab_dtype_name(a->dtype),
                dtype_bit == AB_F_FP16 ? "matmul, softmax, additive, heads, dropout, sdpa, decode "
                                         "and the layers take f16 tensors so far"
                                       : "matmul, sdpa and the layers (with --backward too), "
                                         "softmax, additive, heads, dropout and decode take "
                                         "bf16 tensors so far");
        return ATTNBENCH_EXIT_USAGE;
    }
    uint32_t extra = a->given & ~op->flags;
    for (uint32_t bit = 1; extra && bit; bit <<= 1)
        if (extra & bit) {
            fprintf(stderr, "attnbench: %s does not apply to %s\n", ab_flag_name(bit), op->name);
            return ATTNBENCH_EXIT_USAGE;
        }
    /* combinations: also before a context is made (docs/ATTNBENCH.md: usage
     * errors exit 2 before any device work) */
    const bool grads = a->backward || a->train_step;
    const char *grad_flag = a->backward ? "--backward" : "--train-step";
    if (a->backward && a->train_step) {
        fprintf(stderr, "attnbench: %s: give --backward or --train-step, not both\n", op->name);
        return ATTNBENCH_EXIT_USAGE;
    }
    if (a->train_step && a->dtype != VKATTN_DTYPE_F32) {
        fprintf(stderr, "attnbench: %s: --train-step has no %s path yet: its check runs "
                        "f32 layers only (drop --dtype)\n", op->name,
                ab_dtype_name(a->dtype));
        return ATTNBENCH_EXIT_USAGE;
    }
    const double bound16 = a->dtype == VKATTN_DTYPE_BF16 ? op->bound_backward_bf16
                                                         : op->bound_backward_fp16;
    if (grads && a->dtype != VKATTN_DTYPE_F32 && !(a->backward && bound16 > 0)) {
        fprintf(stderr, "attnbench: %s: %s has no %s path yet (drop --dtype)\n", op->name,
                grad_flag, ab_dtype_name(a->dtype));
        return ATTNBENCH_EXIT_USAGE;
    }
    if (grads && a->scores) {
        fprintf(stderr, "attnbench: %s: --backward and --train-step take no --scores\n", op->name);
        return ATTNBENCH_EXIT_USAGE;
    }
    /* sizes: caught here, before a context is made or the peak measured */
    const struct { uint32_t bit, value; } sizes[] = {
        {AB_F_BATCH, a->batch}, {AB_F_HEADS, a->heads}, {AB_F_TQ, a->tq}, {AB_F_TV, a->tv},
        {AB_F_DK, a->dk}, {AB_F_DV, a->dv}, {AB_F_M, a->m}, {AB_F_N, a->n}, {AB_F_K, a->k},
        {AB_F_UNITS, a->units}, {AB_F_DMODEL, a->dmodel},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if ((a->given & sizes[i].bit) && sizes[i].value == 0) {
            fprintf(stderr, "attnbench: %s must be >= 1\n", ab_flag_name(sizes[i].bit));
            return ATTNBENCH_EXIT_USAGE;
        }
    if (op->check_args && op->check_args(a)) /* the op's own, after the generic ones */
        return ATTNBENCH_EXIT_USAGE;
    return ATTNBENCH_EXIT_OK;
}

vkattn_result ab_time_recording(vkattn_context *ctx, vkattn_timer *timer,
                                vkattn_result (*record)(void *, VkCommandBuffer), void *user,
                                double *ms)
{
    VkCommandBuffer cmd;
    vkattn_result r = vkattn_context_begin_commands(ctx, &cmd);
    if (r != VKATTN_SUCCESS)
        return r;
    if ((r = vkattn_timer_reset(timer, cmd)) == VKATTN_SUCCESS &&
        (r = vkattn_timer_mark(timer, cmd, 0)) == VKATTN_SUCCESS &&
        (r = record(user, cmd)) == VKATTN_SUCCESS)
        r = vkattn_timer_mark(timer, cmd, 1);
    vkattn_result sub = vkattn_context_submit_and_wait(ctx, cmd);
    if (r == VKATTN_SUCCESS)
        r = sub;
    if (r == VKATTN_SUCCESS)
        r = vkattn_timer_elapsed_ms(timer, 0, 1, ms);
    return r;
}

/* One timed run: GPU time between two marks, or wall time without timestamps. */
static vkattn_result time_once(vkattn_context *ctx, const ab_op *op, void *state,
                               vkattn_timer *timer, double *ms)
{
    if (timer)
        return ab_time_recording(ctx, timer, op->record, state, ms);
    double t0 = ab_now_s();
    vkattn_result r = ab_run_once(ctx, op->record, state);
    *ms = (ab_now_s() - t0) * 1e3;
    return r;
}

static int time_op(vkattn_context *ctx, const ab_op *op, void *state, const ab_args *a,
                   ab_bench_result *res)
{
    vkattn_timer *timer = NULL;
    vkattn_result r = vkattn_timer_create(ctx, 2, &timer);
    if (r == VKATTN_ERROR_UNSUPPORTED) {
        fprintf(stderr, "attnbench: the device has no timestamps; timing submit + wait on the host\n");
        res->host_timing = true;
        timer = NULL;
    } else if (r != VKATTN_SUCCESS) {
        return ab_report(ctx, r, "creating a timer");
    }
    double *t = calloc(a->repeat, sizeof *t);
    int status = ATTNBENCH_EXIT_OK;
    if (!t) {
        status = ab_report(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "timing");
        goto done;
    }
    for (uint32_t i = 0; i < a->warmup; i++) {
        ab_progress("%s: warm-up %u/%u", op->name, i + 1, a->warmup);
        if ((r = ab_run_once(ctx, op->record, state)) != VKATTN_SUCCESS) {
            status = ab_report(ctx, r, op->name);
            goto done;
        }
    }
    for (uint32_t i = 0; i < a->repeat; i++) {
        ab_progress("%s: run %u/%u", op->name, i + 1, a->repeat);
        if ((r = time_once(ctx, op, state, timer, &t[i])) != VKATTN_SUCCESS) {
            status = ab_report(ctx, r, op->name);
            goto done;
        }
    }
    qsort(t, a->repeat, sizeof *t, cmp_double);
    res->min_ms = t[0];
    res->max_ms = t[a->repeat - 1];
    res->median_ms = a->repeat % 2 ? t[a->repeat / 2]
                                   : 0.5 * (t[a->repeat / 2 - 1] + t[a->repeat / 2]);
done:
    free(t);
    vkattn_timer_destroy(timer);
    return status;
}

static uint64_t pipelines_so_far(vkattn_context *ctx)
{
    vkattn_context_stats st = {0};
    vkattn_context_get_stats(ctx, &st);
    return st.pipelines_created;
}

/* --cold: host wall time of the op's first call (record + submit + wait),
 * after its VKATTN_PREPARE recording with --prepare, and the pipelines each created. The
 * context and layer are fresh: setup only created tensors and weights. */
static int first_call(vkattn_context *ctx, const ab_op *op, void *state, const ab_args *a,
                      ab_bench_result *res)
{
    res->cold = true;
    uint64_t p0 = pipelines_so_far(ctx);
    vkattn_result r;
    if (a->prepare) {
        res->prepared = true;
        double t0 = ab_now_s();
        r = op->prepare(state);
        res->prepare_ms = (ab_now_s() - t0) * 1e3;
        if (r != VKATTN_SUCCESS)
            return ab_report(ctx, r, "--prepare");
        uint64_t p1 = pipelines_so_far(ctx);
        res->prepare_pipelines = p1 - p0;
        p0 = p1;
    }
    double t0 = ab_now_s();
    r = ab_run_once(ctx, op->record, state);
    res->first_call_ms = (ab_now_s() - t0) * 1e3;
    if (r != VKATTN_SUCCESS)
        return ab_report(ctx, r, "first call");
    res->first_call_pipelines = pipelines_so_far(ctx) - p0;
    return ATTNBENCH_EXIT_OK;
}

static void fill_rates(ab_bench_result *res, const vkattn_peak_result *peak)
{
    double s = res->median_ms * 1e-3;
    res->gflops = s > 0 ? res->info.flops / s * 1e-9 : 0.0;
    res->gbps = s > 0 ? res->info.bytes / s * 1e-9 : 0.0;
    if (peak && peak->fma_gflops > 0 && peak->copy_gbps > 0) {
        res->has_peak = true;
        res->flops_fraction = res->gflops / peak->fma_gflops;
        res->bandwidth_fraction = res->gbps / peak->copy_gbps;
    }
}

int ab_bench_run(vkattn_context *ctx, const ab_op *op, const ab_args *a,
                 const vkattn_peak_result *peak, ab_bench_result *res)
{
    memset(res, 0, sizeof *res);
    res->op = op;
    res->dtype = a->dtype;
    res->warmup = a->warmup;
    res->repeat = a->repeat;
    int status = ab_bench_check_args(op, a);
    if (status)
        return status;
    vkattn_context_info info;
    vkattn_context_get_info(ctx, &info);
    snprintf(res->device, sizeof res->device, "%s", info.device_name);

    /* device_bytes: everything allocated from here on (inputs, outputs, layer
     * weights, the op's workspace), at its peak */
    uint64_t base = 0, top = 0;
    vkattn_context_memory_usage(ctx, &base, NULL);
    vkattn_context_reset_peak_memory(ctx);

    void *state = NULL;
    status = op->setup(ctx, a, &state, &res->info);
    (void)ab_sdpa_decode_taken(); /* from here on: this op's calls */
    if (status == ATTNBENCH_EXIT_OK && a->cold)
        status = first_call(ctx, op, state, a, res);
    if (status == ATTNBENCH_EXIT_OK && a->check) {
        char what[96];
        snprintf(what, sizeof what, "%s: --check, the CPU reference", op->name);
        ab_ticker *ticker = ab_ticker_start(what); /* one long call: a thread reports */
        status = op->check(ctx, state, &res->max_rel_err);
        ab_ticker_stop(ticker);
        if (status == ATTNBENCH_EXIT_OK) {
            res->checked = true;
            const bool grads = a->backward || a->train_step;
            res->bound = ab_op_bound(op, a->dtype, grads);
            res->check_ok = res->max_rel_err <= res->bound;
        }
    }
    if (status == ATTNBENCH_EXIT_OK)
        status = time_op(ctx, op, state, a, res);
    /* AUTO's few-row route: the library's debug line says the call ran on
     * the decode kernel, which workspace_size cannot tell */
    if (ab_sdpa_decode_taken() && res->info.path && strcmp(res->info.path, "fused") == 0)
        res->info.path = "decode";
    if (status == ATTNBENCH_EXIT_OK && a->frame_budget_us)
        status = ab_frame_budget_run(ctx, op, state, a, &res->info, peak, res->median_ms,
                                     &res->frame);
    vkattn_context_memory_usage(ctx, NULL, &top);
    res->device_bytes = top > base ? top - base : 0;
    /* with everything of the call still alive: what the driver holds */
    vkattn_memory_stats ms;
    if (vkattn_context_memory_stats(ctx, &ms) == VKATTN_SUCCESS)
        res->device_allocations = ms.device_allocations;
    op->destroy(state);
    if (status != ATTNBENCH_EXIT_OK)
        return status;
    fill_rates(res, peak);
    return res->checked && !res->check_ok ? ATTNBENCH_EXIT_CHECK : ATTNBENCH_EXIT_OK;
}

/* ------------------------------------------------------------------ output */

json_t *ab_json_number(double v)
{
    if (isnan(v))
        return json_null();
    if (isinf(v))
        return json_real(v > 0 ? DBL_MAX : -DBL_MAX);
    return json_real(v);
}

void ab_json_print(json_t *v)
{
    json_dumpf(v, stdout, JSON_REAL_PRECISION(9));
    fputc('\n', stdout);
    fflush(stdout);
}

static json_t *shape_json(const ab_op_info *i)
{
    if (i->matmul_shape)
        return json_pack("{s:I, s:I, s:I, s:I}", "batch", (json_int_t)i->batch, "m",
                         (json_int_t)i->m, "n", (json_int_t)i->n, "k", (json_int_t)i->k);
    json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "batch", (json_int_t)i->batch, "heads",
                          (json_int_t)i->heads, "tq", (json_int_t)i->tq, "tv", (json_int_t)i->tv,
                          "dk", (json_int_t)i->dk, "dv", (json_int_t)i->dv);
    if (o && i->kv_heads)
        json_object_set_new(o, "kv_heads", json_integer((json_int_t)i->kv_heads));
    return o;
}

json_t *ab_bench_json(const ab_bench_result *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "op", json_string(r->op->name));
    if (r->info.backward) /* beyond the contract: only with --backward */
        json_object_set_new(o, "backward", json_true());
    if (r->info.train_step) /* likewise: only with --train-step */
        json_object_set_new(o, "train_step", json_true());
    if (r->dtype != VKATTN_DTYPE_F32) /* likewise: only with --dtype f16|bf16 (--fp16) */
        json_object_set_new(o, "dtype", json_string(ab_dtype_name(r->dtype)));
    json_object_set_new(o, "device", json_string(r->device));
    json_object_set_new(o, "path", r->info.path ? json_string(r->info.path) : json_null());
    json_object_set_new(o, "shape", shape_json(&r->info));
    json_object_set_new(o, "median_ms", ab_json_number(r->median_ms));
    json_object_set_new(o, "min_ms", ab_json_number(r->min_ms));
    json_object_set_new(o, "max_ms", ab_json_number(r->max_ms));
    json_object_set_new(o, "gflops", ab_json_number(r->gflops));
    json_object_set_new(o, "gbps", ab_json_number(r->gbps));
    json_object_set_new(o, "device_bytes", json_integer((json_int_t)r->device_bytes));
    json_object_set_new(o, "device_allocations",
                        json_integer((json_int_t)r->device_allocations));
    json_object_set_new(o, "max_rel_err", r->checked ? ab_json_number(r->max_rel_err) : json_null());
    json_object_set_new(o, "flops_fraction",
                        r->has_peak ? ab_json_number(r->flops_fraction) : json_null());
    json_object_set_new(o, "bandwidth_fraction",
                        r->has_peak ? ab_json_number(r->bandwidth_fraction) : json_null());
    /* beyond the contract: what the figures were computed from */
    json_object_set_new(o, "bound", r->checked ? ab_json_number(r->bound) : json_null());
    json_object_set_new(o, "flops", ab_json_number(r->info.flops));
    json_object_set_new(o, "bytes", ab_json_number(r->info.bytes));
    json_object_set_new(o, "warmup", json_integer(r->warmup));
    json_object_set_new(o, "repeat", json_integer(r->repeat));
    json_object_set_new(o, "timing", json_string(r->host_timing ? "host" : "gpu"));
    if (r->has_peak_note) /* what the fractions divide by, measured when and where */
        json_object_set_new(o, "peak", ab_peak_note_json(&r->peak_note));
    if (r->stats_asked)
        json_object_set(o, "pipeline_stats", r->pipeline_stats ? r->pipeline_stats : json_null());
    if (r->cold) {
        json_object_set_new(o, "first_call_ms", ab_json_number(r->first_call_ms));
        json_object_set_new(o, "first_call_pipelines",
                            json_integer((json_int_t)r->first_call_pipelines));
    }
    if (r->prepared) {
        json_object_set_new(o, "prepare_ms", ab_json_number(r->prepare_ms));
        json_object_set_new(o, "prepare_pipelines", json_integer((json_int_t)r->prepare_pipelines));
    }
    if (r->frame.asked)
        json_object_set_new(o, "frame_budget", ab_frame_json(&r->frame));
    if (r->cache_file) {
        json_object_set_new(o, "pipeline_cache_bytes_loaded",
                            json_integer((json_int_t)r->pipeline_cache_bytes_loaded));
        json_object_set_new(o, "pipeline_cache_bytes_saved",
                            json_integer((json_int_t)r->pipeline_cache_bytes_saved));
    }
    return o;
}

void ab_print_table_header(const ab_bench_result *res)
{
    printf("%-18s %-34s %-7s %10s %10s %10s %9s %8s %6s %6s %8s ", "op", "shape", "path",
           "median ms", "min ms", "max ms", "GFLOP/s", "GB/s", "%FMA", "%copy", "dev MiB");
    if (res && res->cold)
        printf("%10s %5s %10s ", "first ms", "pipes", "prepare ms");
    if (res && res->frame.asked)
        printf("%9s %6s %6s %9s %9s %9s %8s %4s ", "budget us", "pieces", "slices", "slice med",
               "slice max", "total ms", "overhead", "same");
    printf("max_rel_err\n");
}

static void shape_text(const ab_op_info *i, char *buf, size_t size)
{
    if (i->matmul_shape)
        snprintf(buf, size, "b%u m%u n%u k%u", i->batch, i->m, i->n, i->k);
    else
        snprintf(buf, size, "b%u h%u tq%u tv%u dk%u dv%u", i->batch, i->heads, i->tq, i->tv, i->dk,
                 i->dv);
}

static void percent(char *buf, size_t size, bool has, double fraction)
{
    if (has)
        snprintf(buf, size, "%.1f%%", 100.0 * fraction);
    else
        snprintf(buf, size, "-");
}

void ab_print_table_row(const ab_bench_result *r)
{
    char shape[80], fma[16], bw[16], err[48];
    shape_text(&r->info, shape, sizeof shape);
    percent(fma, sizeof fma, r->has_peak, r->flops_fraction);
    percent(bw, sizeof bw, r->has_peak, r->bandwidth_fraction);
    if (r->checked)
        snprintf(err, sizeof err, "%.2e %s (bound %.0e)", r->max_rel_err,
                 r->check_ok ? "ok" : "FAIL", r->bound);
    else
        snprintf(err, sizeof err, "-");
    char name[40];
    snprintf(name, sizeof name, "%s%s", r->op->name,
             r->info.train_step ? " (train)" : r->info.backward ? " (bwd)" : "");
    printf("%-18s %-34s %-7s %10.3f %10.3f %10.3f %9.2f %8.2f %6s %6s %8.1f ", name,
           shape, r->info.path ? r->info.path : "-", r->median_ms, r->min_ms, r->max_ms, r->gflops,
           r->gbps, fma, bw, (double)r->device_bytes / (1024.0 * 1024.0));
    if (r->cold) {
        char prep[24] = "-";
        if (r->prepared)
            snprintf(prep, sizeof prep, "%.1f", r->prepare_ms);
        printf("%10.1f %5llu %10s ", r->first_call_ms, (unsigned long long)r->first_call_pipelines,
               prep);
    }
    if (r->frame.asked) {
        const ab_frame_result *f = &r->frame;
        printf("%9u %6u %6u %9.3f %9.3f %9.3f %7.1f%% %4s ", f->budget_us, f->pieces, f->slices,
               f->slice_median_ms, f->slice_max_ms, f->total_ms, 100.0 * f->overhead,
               f->identical < 0 ? "-" : f->identical ? "yes" : "NO");
    }
    printf("%s\n", err);
}

/* ------------------------------------------------------------------ command */

/* --pipeline-stats: one object per pipeline, its statistics by name. */
static void on_stat(void *user, uint32_t index, const char *pipeline, const char *stat,
                    double value)
{
    json_t *list = user;
    json_t *last = json_array_size(list) ? json_array_get(list, json_array_size(list) - 1) : NULL;
    if (!last || json_integer_value(json_object_get(last, "index")) != (json_int_t)index) {
        last = json_pack("{s:s, s:I, s:o}", "pipeline", pipeline, "index", (json_int_t)index,
                         "stats", json_object());
        json_array_append_new(list, last);
    }
    json_object_set_new(json_object_get(last, "stats"), stat, ab_json_number(value));
}

static json_t *pipeline_stats(vkattn_context *ctx)
{
    json_t *list = json_array();
    vkattn_result r = vkattn_context_pipeline_stats(ctx, on_stat, list);
    if (r == VKATTN_SUCCESS)
        return list;
    fprintf(stderr, "attnbench: --pipeline-stats: %s\n", vkattn_context_last_error(ctx));
    json_decref(list);
    return NULL;
}

static void print_pipeline_stats(const ab_bench_result *res)
{
    if (!res->pipeline_stats) {
        printf("pipeline statistics: none (the driver offers no "
               "VK_KHR_pipeline_executable_properties)\n");
        return;
    }
    size_t i;
    json_t *p;
    json_array_foreach(res->pipeline_stats, i, p) {
        printf("pipeline %s #%lld:", json_string_value(json_object_get(p, "pipeline")),
               (long long)json_integer_value(json_object_get(p, "index")));
        const char *name;
        json_t *v;
        json_object_foreach(json_object_get(p, "stats"), name, v)
            printf(" %s=%g", name, json_number_value(v));
        putchar('\n');
    }
}

static int unknown_op(const char *name)
{
    fprintf(stderr, "attnbench: unknown op '%s'; this build has:", name);
    for (const ab_op *const *op = ab_all_ops(); *op; op++)
        fprintf(stderr, " %s", (*op)->name);
    fputc('\n', stderr);
    return ATTNBENCH_EXIT_USAGE;
}

/* Output of one bench run: the JSON object or the table. */
static void print_result(const ab_args *a, const ab_bench_result *res)
{
    if (a->json) {
        json_t *o = ab_bench_json(res);
        ab_json_print(o);
        json_decref(o);
    } else {
        ab_print_table_header(res);
        ab_print_table_row(res);
        if (res->has_peak_note) {
            char text[512];
            ab_peak_note_text(&res->peak_note, text, sizeof text);
            printf("%%FMA and %%copy of the peak %s\n", text);
        }
        if (res->cache_file)
            printf("pipeline cache: %llu bytes loaded from %s, %llu bytes saved\n",
                   (unsigned long long)res->pipeline_cache_bytes_loaded, a->pipeline_cache,
                   (unsigned long long)res->pipeline_cache_bytes_saved);
        if (res->stats_asked)
            print_pipeline_stats(res);
        if (res->frame.asked) {
            const ab_frame_result *f = &res->frame;
            printf("cost model: median piece error %.0f%% for the first estimates, %.0f%% refined "
                   "by the learning pass's timestamps\n",
                   100.0 * f->first_error, 100.0 * f->refined_error);
            printf("re-split: %u piece%s over the budget cut finer in %u re-capture%s; ",
                   f->resplit_pieces, f->resplit_pieces == 1 ? "" : "s", f->resplits,
                   f->resplits == 1 ? "" : "s");
            if (!f->n_uncut)
                printf("none left that cannot be cut\n");
            /* the first few; the JSON lists all */
            const uint32_t shown = f->n_uncut < 12 ? f->n_uncut : 12;
            for (uint32_t i = 0; i < shown; i++)
                printf("%s%u", i ? ", " : "over the budget and cannot be cut: piece ", f->uncut[i]);
            if (f->n_uncut > shown)
                printf(", ... (%u in all)", f->n_uncut);
            if (f->n_uncut)
                printf("\n");
        }
    }
}

int ab_cmd_bench(const ab_args *a)
{
    const ab_op *op = ab_find_op(a->op);
    if (!op)
        return unknown_op(a->op);
    int status = ab_bench_check_args(op, a);
    if (status)
        return status;
    void *cache = NULL;
    size_t cache_size = 0;
    if (a->pipeline_cache && (status = ab_pipeline_file_load(a->pipeline_cache, &cache, &cache_size)))
        return status;
    vkattn_context *ctx;
    status = ab_open_context_seeded(a, cache, cache_size, &ctx);
    free(cache); /* the context copied it */
    if (status)
        return status;
    /* --cold: the peak (which may run its own shaders) only after the first call */
    vkattn_peak_result peak;
    ab_peak_note note;
    bool have_peak = !a->no_peak && !a->cold && ab_peak_get(ctx, a->remeasure, &peak, &note);
    ab_bench_result res;
    status = ab_bench_run(ctx, op, a, have_peak ? &peak : NULL, &res);
    bool have_result = status == ATTNBENCH_EXIT_OK || (status == ATTNBENCH_EXIT_CHECK && res.checked);
    if (have_result && a->cold && !a->no_peak &&
        (have_peak = ab_peak_get(ctx, a->remeasure, &peak, &note)))
        fill_rates(&res, &peak);
    if (have_result && have_peak) {
        res.has_peak_note = true;
        res.peak_note = note;
    }
    if (a->pipeline_cache && have_result) {
        res.cache_file = true;
        /* bytes the library ignored (another device, a bad header) were not loaded */
        const char *ignored = cache_size ? ab_pipeline_cache_ignored() : NULL;
        res.pipeline_cache_bytes_loaded = ignored ? 0 : cache_size;
        if (ignored)
            fprintf(stderr, "attnbench: --pipeline-cache %s: its %zu bytes were not loaded: %s\n",
                    a->pipeline_cache, cache_size, ignored);
        size_t saved = 0;
        int st = ab_pipeline_file_save(ctx, a->pipeline_cache, &saved);
        res.pipeline_cache_bytes_saved = saved;
        if (st && status == ATTNBENCH_EXIT_OK)
            status = st;
    }
    if (have_result && a->pipeline_stats) {
        res.stats_asked = true;
        res.pipeline_stats = pipeline_stats(ctx);
    }
    /* --variant that did not fit: another kernel ran, not to be timed as it */
    const char *unfit = ab_variant_unfit();
    if (unfit) {
        fprintf(stderr, "attnbench: --variant: %s\n", unfit);
        have_result = false;
        status = ATTNBENCH_EXIT_USAGE;
    }
    if (have_result) {
        print_result(a, &res);
        if (res.checked && !res.check_ok)
            fprintf(stderr, "attnbench: %s: max_rel_err %.3g exceeds the bound %.3g\n", op->name,
                    res.max_rel_err, res.bound);
    }
    json_decref(res.pipeline_stats);
    ab_frame_free(&res.frame);
    vkattn_context_destroy(ctx);
    if (a->validation && ab_validation_messages() > 0) {
        fprintf(stderr, "attnbench: the validation layer reported %u message(s)\n",
                ab_validation_messages());
        return ATTNBENCH_EXIT_CHECK;
    }
    return status;
}
