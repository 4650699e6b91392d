/* Peak cache (see peak_cache.h). Every failure to read or write the cache
 * just means measuring again: a cache must never break a benchmark. */
#include "peak_cache.h"

#include "common.h"
#include "platform.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* mkdir -p for the cache folder; returns false if it cannot exist */
static bool make_dirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int r = ab_mkdir(path);
        *p = '/';
        if (r != 0 && errno != EEXIST)
            return false;
    }
    return ab_mkdir(path) == 0 || errno == EEXIST;
}

/* The cache file for ctx's device, or false if no cache folder is known. */
static bool cache_path(vkattn_context *ctx, char *dir, size_t dir_size, char *file, size_t file_size)
{
    if (!ab_user_cache_dir(dir, dir_size))
        return false;
    vkattn_context_info info;
    if (vkattn_context_get_info(ctx, &info) != VKATTN_SUCCESS)
        return false;
    /* the name as a file-name-safe slug */
    char slug[64];
    size_t j = 0;
    for (const char *c = info.device_name; *c && j + 1 < sizeof slug; c++) {
        bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9');
        if (ok)
            slug[j++] = *c;
        else if (j > 0 && slug[j - 1] != '_')
            slug[j++] = '_';
    }
    while (j > 0 && slug[j - 1] == '_')
        j--;
    slug[j] = '\0';
    int n = snprintf(file, file_size, "%s/peak-%s-%04x-%04x-%08x.json", dir, slug, info.vendor_id,
                     info.device_id, info.driver_version);
    return n > 0 && (size_t)n < file_size;
}

/* One kept measurement. */
typedef struct measurement {
    double fma_gflops, copy_gbps;
    char date[32]; /* "" = unknown */
} measurement;

/* The file's measurements, oldest first; a first-format file gives one of
 * unknown date. Returns how many (0 if none could be read). */
static unsigned read_cache(const char *file, measurement m[AB_PEAK_KEPT])
{
    json_error_t err;
    json_t *root = json_load_file(file, 0, &err);
    if (!root)
        return 0;
    unsigned n = 0;
    json_t *list = json_object_get(root, "measurements"), *e;
    size_t i;
    if (json_is_array(list)) {
        /* the newest AB_PEAK_KEPT, should a file hold more */
        size_t first = json_array_size(list) > AB_PEAK_KEPT ? json_array_size(list) - AB_PEAK_KEPT : 0;
        json_array_foreach(list, i, e) {
            json_t *f = json_object_get(e, "fma_gflops"), *c = json_object_get(e, "copy_gbps");
            json_t *d = json_object_get(e, "date");
            if (i < first || !json_is_number(f) || !json_is_number(c) ||
                !(json_number_value(f) > 0) || !(json_number_value(c) > 0))
                continue;
            m[n].fma_gflops = json_number_value(f);
            m[n].copy_gbps = json_number_value(c);
            snprintf(m[n].date, sizeof m[n].date, "%s", json_is_string(d) ? json_string_value(d) : "");
            n++;
        }
    } else {
        json_t *f = json_object_get(root, "fma_gflops"), *c = json_object_get(root, "copy_gbps");
        if (json_is_number(f) && json_is_number(c) && json_number_value(f) > 0 &&
            json_number_value(c) > 0) {
            m[0] = (measurement){json_number_value(f), json_number_value(c), ""};
            n = 1;
        }
    }
    json_decref(root);
    return n;
}

/* The best FMA and copy rates of m[0..n-1] (n >= 1), each with its date. */
static void best_of(const measurement *m, unsigned n, vkattn_context *ctx, ab_peak_note *note)
{
    memset(note, 0, sizeof *note);
    unsigned bf = 0, bc = 0;
    for (unsigned i = 1; i < n; i++) {
        if (m[i].fma_gflops > m[bf].fma_gflops)
            bf = i;
        if (m[i].copy_gbps > m[bc].copy_gbps)
            bc = i;
    }
    note->fma_gflops = m[bf].fma_gflops;
    note->copy_gbps = m[bc].copy_gbps;
    snprintf(note->fma_date, sizeof note->fma_date, "%s", m[bf].date);
    snprintf(note->copy_date, sizeof note->copy_date, "%s", m[bc].date);
    note->measurements = n;
    vkattn_context_info info;
    if (vkattn_context_get_info(ctx, &info) == VKATTN_SUCCESS) {
        snprintf(note->device, sizeof note->device, "%s", info.device_name);
        ab_driver_text(info.vendor_id, info.driver_version, note->driver, sizeof note->driver);
    }
}

static void now_utc(char *buf, size_t size)
{
    time_t t = time(NULL);
    struct tm *tm = gmtime(&t);
    if (!tm || !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", tm))
        snprintf(buf, size, "%s", "");
}

void ab_peak_store(vkattn_context *ctx, const vkattn_peak_result *peak, ab_peak_note *note)
{
    measurement m[AB_PEAK_KEPT + 1];
    unsigned n = 0;
    char dir[1024], file[1200];
    bool have_path = cache_path(ctx, dir, sizeof dir, file, sizeof file);
    bool valid = isfinite(peak->fma_gflops) && isfinite(peak->copy_gbps) &&
                 peak->fma_gflops > 0 && peak->copy_gbps > 0;
    if (have_path)
        n = read_cache(file, m);
    if (valid) {
        m[n].fma_gflops = peak->fma_gflops;
        m[n].copy_gbps = peak->copy_gbps;
        now_utc(m[n].date, sizeof m[n].date);
        n++;
    }
    const measurement *kept = n > AB_PEAK_KEPT ? m + (n - AB_PEAK_KEPT) : m;
    n = n > AB_PEAK_KEPT ? AB_PEAK_KEPT : n;
    if (note) {
        if (n)
            best_of(kept, n, ctx, note);
        else
            memset(note, 0, sizeof *note);
    }
    if (!valid || !have_path || !make_dirs(dir))
        return;
    ab_peak_note best;
    best_of(kept, n, ctx, &best);
    json_t *list = json_array();
    for (unsigned i = 0; i < n; i++)
        json_array_append_new(list, json_pack("{s:s?, s:f, s:f}", "date",
                                              kept[i].date[0] ? kept[i].date : NULL, "fma_gflops",
                                              kept[i].fma_gflops, "copy_gbps", kept[i].copy_gbps));
    json_t *root = json_pack("{s:s, s:s, s:f, s:f, s:o}", "device", best.device, "driver",
                             best.driver, "fma_gflops", best.fma_gflops, "copy_gbps",
                             best.copy_gbps, "measurements", list);
    if (!root)
        return;
    /* write then rename, so a concurrent reader never sees half a file */
    char tmp[1300];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", file, (long)(ab_now_s() * 1e6) % 1000000);
    if (json_dump_file(root, tmp, JSON_INDENT(1)) == 0 && ab_replace_file(tmp, file) != 0)
        remove(tmp);
    json_decref(root);
}

bool ab_peak_get(vkattn_context *ctx, bool remeasure, vkattn_peak_result *out, ab_peak_note *note)
{
    char dir[1024], file[1200];
    bool have_path = cache_path(ctx, dir, sizeof dir, file, sizeof file);
    measurement m[AB_PEAK_KEPT];
    unsigned n = !remeasure && have_path ? read_cache(file, m) : 0;
    ab_peak_note best;
    if (n) {
        best_of(m, n, ctx, &best);
    } else {
        fprintf(stderr, "attnbench: measuring the device's peak (once; cached%s%s)\n",
                have_path ? " in " : "", have_path ? file : " nowhere: no $HOME");
        vkattn_result r = vkattn_measure_peak(ctx, out);
        if (r != VKATTN_SUCCESS) {
            ab_report(ctx, r, "measuring the peak");
            return false;
        }
        ab_peak_store(ctx, out, &best);
        if (!best.measurements) /* a measurement of 0 or inf: nothing to divide by */
            return false;
    }
    memset(out, 0, sizeof *out);
    out->fma_gflops = best.fma_gflops;
    out->copy_gbps = best.copy_gbps;
    if (note)
        *note = best;
    return true;
}

void ab_peak_note_text(const ab_peak_note *n, char *buf, size_t size)
{
    snprintf(buf, size,
             "%.2f GFLOP/s FMA measured %s, %.2f GB/s copy measured %s, on %s (driver %s), best of "
             "%u measurement%s",
             n->fma_gflops, n->fma_date[0] ? n->fma_date : "at an unknown date", n->copy_gbps,
             n->copy_date[0] ? n->copy_date : "at an unknown date", n->device, n->driver,
             n->measurements, n->measurements == 1 ? "" : "s");
}

json_t *ab_peak_note_json(const ab_peak_note *n)
{
    return json_pack("{s:f, s:s?, s:f, s:s?, s:s, s:s, s:i}", "fma_gflops", n->fma_gflops,
                     "fma_measured", n->fma_date[0] ? n->fma_date : NULL, "copy_gbps",
                     n->copy_gbps, "copy_measured", n->copy_date[0] ? n->copy_date : NULL,
                     "device", n->device, "driver", n->driver, "measurements",
                     (int)n->measurements);
}
