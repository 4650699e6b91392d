/* attnbench sweep: the bench of one op at each length of --tq, on one
 * context (a fresh one per point with --cold), with a progress line per
 * point on stderr. Its own flags (--tq LIST, --csv, --plot FILE, --fused
 * together with --unfused) are taken out of argv; everything else is parsed
 * by bench's parser, so every bench option means the same here. */
#include "sweep.h"

#include "args.h"
#include "bench.h"
#include "common.h"
#include "peak_cache.h"
#include "pipeline_file.h"
#include "platform.h"
#include "pictures.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LENGTHS 64

typedef struct sweep_opts {
    uint32_t tq[MAX_LENGTHS];
    size_t n_tq;
    bool fused, unfused, csv, json;
    const char *plot;
} sweep_opts;

static int usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("attnbench: sweep: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\n(run `attnbench help` for usage)\n", stderr);
    va_end(ap);
    return ATTNBENCH_EXIT_USAGE;
}

#define TQ_USAGE "--tq needs a comma-separated list of lengths >= 1 (128,256,512), got '%s'"

/* "128,256,512": 1..MAX_LENGTHS integers >= 1, no blanks */
static int parse_lengths(const char *s, sweep_opts *o)
{
    const char *p = s;
    o->n_tq = 0;
    while (*p) {
        char *end;
        errno = 0;
        unsigned long long v = *p >= '0' && *p <= '9' ? strtoull(p, &end, 10) : 0;
        if (v == 0 || errno || v > UINT32_MAX || (*end && *end != ',') || (*end == ',' && !end[1]))
            return usage(TQ_USAGE, s);
        if (o->n_tq == MAX_LENGTHS)
            return usage("--tq: at most %d lengths", MAX_LENGTHS);
        o->tq[o->n_tq++] = (uint32_t)v;
        p = *end ? end + 1 : end;
    }
    if (o->n_tq == 0)
        return usage(TQ_USAGE, s);
    return 0;
}

/* The folder --plot writes into must exist and be writable, checked before
 * any run. */
static int check_plot_path(const char *path)
{
#ifndef ATTNBENCH_HAVE_PICTURES /* no_pictures.c */
    return usage("--plot %s: attnbench was built without pictures (cairo)", path);
#endif
    if (!*path)
        return usage("--plot needs a file name");
    /* a folder (or a name ending in '/') passes the test of its parent
     * below, and would fail only when the plot is written, after the sweep */
    bool is_dir = false;
    if (path[strlen(path) - 1] == '/' || (ab_path_kind(path, &is_dir) == 0 && is_dir))
        return usage("--plot %s: is a folder; --plot needs a file name (FILE.png)", path);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    if (ab_dir_writable(dir) != 0)
        return usage("--plot %s: cannot write into '%s': %s", path, dir, strerror(errno));
    return 0;
}

/* Splits argv into sweep's own flags (*o) and bench's: out_argv gets
 * "attnbench bench OP <the rest> --tq 1" (the placeholder --tq lets bench's
 * parser reject an op without a query length). */
static int split_args(int argc, char **argv, sweep_opts *o, char **out, int *out_n)
{
    int n = 0;
    bool have_tq = false;
    if (argc < 3 || argv[2][0] == '-')
        return usage("needs an OP (attnbench sweep OP --tq 128,256,..)");
    out[n++] = argv[0];
    out[n++] = "bench";
    out[n++] = argv[2];
    for (int i = 3; i < argc; i++) {
        const char *s = argv[i], *eq = strchr(s, '=');
        size_t len = eq ? (size_t)(eq - s) : strlen(s);
        bool is_tq = len == 4 && !strncmp(s, "--tq", 4);
        bool is_plot = len == 6 && !strncmp(s, "--plot", 6);
        bool takes_value = is_tq || is_plot;
        const char *value = eq ? eq + 1 : NULL;
        if (takes_value && !value) {
            if (i + 1 >= argc)
                return usage("%.*s needs a value", (int)len, s);
            value = argv[++i];
        }
        int r = 0;
        if (is_tq)
            r = parse_lengths(value, o), have_tq = true;
        else if (is_plot)
            r = check_plot_path(value), o->plot = value;
        else if (!strcmp(s, "--csv"))
            o->csv = true;
        else if (!strcmp(s, "--json"))
            o->json = true;
        else if (!strcmp(s, "--fused"))
            o->fused = true;
        else if (!strcmp(s, "--unfused"))
            o->unfused = true;
        else if ((len == 17 && !strncmp(s, "--frame-budget-us", 17)) ||
                 (len == 12 && !strncmp(s, "--piece-work", 12)))
            return usage("%.*s is bench's, not sweep's (a sweep reports no slices)", (int)len, s);
        else
            out[n++] = argv[i];
        if (r)
            return r;
    }
    if (!have_tq)
        return usage("needs --tq with the lengths to run (--tq 128,256,512)");
    if (o->csv && o->json)
        return usage("--csv and --json exclude each other");
    out[n++] = "--tq";
    out[n++] = "1";
    *out_n = n;
    return 0;
}

/* Up-front usage errors: bench's own, for every point of the sweep. */
static int check_op(const ab_args *a, const sweep_opts *o, const ab_op **op)
{
    if (!(*op = ab_find_op(a->op))) {
        fprintf(stderr, "attnbench: unknown op '%s'; this build has:", a->op);
        for (const ab_op *const *p = ab_all_ops(); *p; p++)
            fprintf(stderr, " %s", (*p)->name);
        fputc('\n', stderr);
        return ATTNBENCH_EXIT_USAGE;
    }
    ab_args b = *a;
    b.given |= (o->fused ? AB_F_FUSED : 0) | (o->unfused ? AB_F_UNFUSED : 0);
    int st = 0;
    for (size_t i = 0; i < o->n_tq && !st; i++) {
        b.tq = o->tq[i];
        st = ab_bench_check_args(*op, &b);
    }
    return st;
}

/* ------------------------------------------------------------------ output */

static void csv_field(const char *s)
{
    putchar('"');
    for (; *s; s++)
        fputs(*s == '"' ? "\"\"" : (char[2]){*s, 0}, stdout);
    putchar('"');
}

static void csv_number(bool present, double v)
{
    if (present && isfinite(v))
        printf(",%.9g", v);
    else
        printf(",");
}

static void print_csv(ab_bench_result *r, size_t n)
{
    printf("op,device,path,batch,heads,tq,tv,dk,dv,median_ms,min_ms,max_ms,gflops,gbps,"
           "device_bytes,device_allocations,max_rel_err,flops_fraction,bandwidth_fraction\n");
    for (size_t i = 0; i < n; i++) {
        const ab_op_info *f = &r[i].info;
        printf("%s,", r[i].op->name);
        csv_field(r[i].device);
        printf(",%s,%u,%u,%u,%u,%u,%u", f->path ? f->path : "", f->batch, f->heads, f->tq, f->tv,
               f->dk, f->dv);
        csv_number(true, r[i].median_ms), csv_number(true, r[i].min_ms);
        csv_number(true, r[i].max_ms), csv_number(true, r[i].gflops), csv_number(true, r[i].gbps);
        printf(",%llu,%llu", (unsigned long long)r[i].device_bytes,
               (unsigned long long)r[i].device_allocations);
        csv_number(r[i].checked, r[i].max_rel_err);
        csv_number(r[i].has_peak, r[i].flops_fraction);
        csv_number(r[i].has_peak, r[i].bandwidth_fraction);
        putchar('\n');
    }
    fflush(stdout);
}

/* One series per path asked for: "fused", "unfused", or the library's
 * choice (labelled "auto") and the op's name for ops without paths. */
static bool write_plot(const sweep_opts *o, const ab_args *a, ab_bench_result *r, size_t n,
                       size_t n_paths)
{
    bool flops = r[0].info.flops > 0;
    double xs[AB_PLOT_MAX_SERIES][MAX_LENGTHS], ys[AB_PLOT_MAX_SERIES][MAX_LENGTHS];
    double lo[AB_PLOT_MAX_SERIES][MAX_LENGTHS], hi[AB_PLOT_MAX_SERIES][MAX_LENGTHS];
    ab_series series[AB_PLOT_MAX_SERIES] = {{0}};
    for (size_t i = 0; i < n; i++) {
        size_t s = i % n_paths;
        ab_series *sr = &series[s];
        xs[s][sr->n] = r[i].info.tq;
        ys[s][sr->n] = flops ? r[i].gflops : r[i].gbps;
        /* the band: the rate of the slowest and of the fastest run (work / time) */
        lo[s][sr->n] = ys[s][sr->n] * r[i].median_ms / r[i].max_ms;
        hi[s][sr->n] = ys[s][sr->n] * r[i].median_ms / r[i].min_ms;
        sr->x = xs[s], sr->y = ys[s], sr->lo = lo[s], sr->hi = hi[s], sr->n++;
        sr->label = n_paths > 1 || o->fused || o->unfused ? r[i].info.path
                    : r[i].info.path                     ? "auto (the library's choice)"
                                                         : r[i].op->name;
    }
    char title[400], sub[400];
    snprintf(title, sizeof title, "%s on %s", r[0].op->name, r[0].device);
    const ab_op_info *f = &r[0].info;
    char widths[64] = "";
    if (f->dk)
        snprintf(widths, sizeof widths, ", dk %u, dv %u", f->dk, f->dv);
    snprintf(sub, sizeof sub, "%s against length: batch %u, heads %u, %s%s; median of %u runs",
             flops ? "GFLOP/s" : "GB/s", f->batch, f->heads,
             a->given & AB_F_TV ? "tv fixed" : "tv = tq", widths, r[0].repeat);
    char band[96];
    snprintf(band, sizeof band, "shaded: slowest to fastest of the %u runs", r[0].repeat);
    ab_plot p = {.title = title, .subtitle = sub,
                 .x_label = "tq, query length in positions (log2 scale)",
                 .y_label = flops ? "throughput, GFLOP/s" : "bandwidth, GB/s",
                 .band_label = r[0].repeat > 1 ? band : NULL, .series = series,
                 .n_series = n_paths};
    char err[512];
    if (ab_plot_write(&p, o->plot, err, sizeof err))
        return true;
    fprintf(stderr, "attnbench: --plot: %s\n", err);
    return false;
}

/* ------------------------------------------------------------------ runs */

static void fractions(ab_bench_result *r, const vkattn_peak_result *peak)
{
    if (peak->fma_gflops > 0 && peak->copy_gbps > 0) {
        r->has_peak = true;
        r->flops_fraction = r->gflops / peak->fma_gflops;
        r->bandwidth_fraction = r->gbps / peak->copy_gbps;
    }
}

/* Runs every point into res[]; *done = how many produced a result. */
static int run_points(const ab_args *base, const sweep_opts *o, const ab_op *op, size_t n_paths,
                      const void *cache, size_t cache_size, ab_bench_result *res, size_t *done)
{
    size_t total = o->n_tq * n_paths;
    vkattn_context *ctx = NULL;
    vkattn_peak_result peak;
    bool have_peak = false, tried_peak = false;
    int status = ATTNBENCH_EXIT_OK;
    *done = 0;
    for (size_t k = 0; k < total; k++) {
        ab_args a = *base;
        a.tq = o->tq[k / n_paths];
        bool fused = o->fused && (!o->unfused || k % n_paths == 0);
        bool unfused = o->unfused && !fused;
        a.fused = fused, a.unfused = unfused;
        a.given |= (fused ? AB_F_FUSED : 0) | (unfused ? AB_F_UNFUSED : 0);
        if (!ctx || a.cold) { /* --cold: every first call on a fresh context */
            vkattn_context_destroy(ctx);
            int st = ab_open_context_seeded(&a, cache, cache_size, &ctx);
            if (st) {
                ctx = NULL;
                status = st;
                break;
            }
        }
        if (!tried_peak && !a.no_peak && !a.cold) {
            tried_peak = true;
            have_peak = ab_peak_get(ctx, a.remeasure, &peak, NULL);
        }
        fprintf(stderr, "attnbench: sweep %zu/%zu: %s tq %u%s\n", k + 1, total, op->name, a.tq,
                fused ? " fused" : unfused ? " unfused" : "");
        int st = ab_bench_run(ctx, op, &a, have_peak ? &peak : NULL, &res[k]);
        if (st != ATTNBENCH_EXIT_OK && !(st == ATTNBENCH_EXIT_CHECK && res[k].checked)) {
            status = st;
            break;
        }
        if (a.cold && !a.no_peak && !have_peak) {
            have_peak = ab_peak_get(ctx, a.remeasure && !tried_peak, &peak, NULL);
            tried_peak = true;
        }
        if (a.cold && have_peak)
            fractions(&res[k], &peak);
        fprintf(stderr, "attnbench:   %.3f ms, %.2f GFLOP/s, %.2f GB/s%s\n", res[k].median_ms,
                res[k].gflops, res[k].gbps, st ? " (max_rel_err above the bound)" : "");
        if (st)
            status = st;
        *done = k + 1;
    }
    if (ctx && base->pipeline_cache && *done > 0) {
        size_t saved = 0;
        int st = ab_pipeline_file_save(ctx, base->pipeline_cache, &saved);
        if (st && !status)
            status = st;
    }
    vkattn_context_destroy(ctx);
    return status;
}

int ab_cmd_sweep(int argc, char **argv)
{
    sweep_opts o = {0};
    char **bargv = calloc((size_t)argc + 4, sizeof *bargv);
    if (!bargv)
        return ATTNBENCH_EXIT_CHECK;
    int bargc = 0, status;
    ab_args a;
    const ab_op *op = NULL;
    if ((status = split_args(argc, argv, &o, bargv, &bargc)) ||
        (status = ab_parse_args(bargc, bargv, &a)) || (status = check_op(&a, &o, &op))) {
        free(bargv);
        return status;
    }
    size_t n_paths = o.fused && o.unfused ? 2 : 1;
    ab_bench_result *res = calloc(o.n_tq * n_paths, sizeof *res);
    void *cache = NULL;
    size_t cache_size = 0, done = 0;
    if (!res)
        status = ab_report(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "sweep");
    else if (!a.pipeline_cache ||
             !(status = ab_pipeline_file_load(a.pipeline_cache, &cache, &cache_size)))
        status = run_points(&a, &o, op, n_paths, cache, cache_size, res, &done);
    free(cache);
    if (done > 0 && o.csv) {
        print_csv(res, done);
    } else if (done > 0) {
        json_t *arr = json_array();
        for (size_t i = 0; i < done; i++)
            json_array_append_new(arr, ab_bench_json(&res[i]));
        ab_json_print(arr);
        json_decref(arr);
    }
    if (done > 0 && o.plot && !write_plot(&o, &a, res, done, n_paths) && !status)
        status = ATTNBENCH_EXIT_CHECK;
    free(res);
    free(bargv);
    if (a.validation && ab_validation_messages() > 0) {
        fprintf(stderr, "attnbench: the validation layer reported %u message(s)\n",
                ab_validation_messages());
        return ATTNBENCH_EXIT_CHECK;
    }
    return status;
}
