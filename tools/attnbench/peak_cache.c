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

static bool read_cache(const char *file, vkattn_peak_result *out)
{
    json_error_t err;
    json_t *root = json_load_file(file, 0, &err);
    if (!root)
        return false;
    json_t *f = json_object_get(root, "fma_gflops"), *c = json_object_get(root, "copy_gbps");
    bool ok = json_is_number(f) && json_is_number(c) && json_number_value(f) > 0 &&
              json_number_value(c) > 0;
    if (ok) {
        memset(out, 0, sizeof *out);
        out->fma_gflops = json_number_value(f);
        out->copy_gbps = json_number_value(c);
    }
    json_decref(root);
    return ok;
}

void ab_peak_store(vkattn_context *ctx, const vkattn_peak_result *peak)
{
    char dir[1024], file[1200];
    vkattn_context_info info;
    if (!cache_path(ctx, dir, sizeof dir, file, sizeof file) || !make_dirs(dir) ||
        vkattn_context_get_info(ctx, &info) != VKATTN_SUCCESS || !isfinite(peak->fma_gflops) ||
        !isfinite(peak->copy_gbps))
        return;
    json_t *root = json_pack("{s:s, s:f, s:f}", "device", info.device_name, "fma_gflops",
                             peak->fma_gflops, "copy_gbps", peak->copy_gbps);
    if (!root)
        return;
    /* write then rename, so a concurrent reader never sees half a file */
    char tmp[1300];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", file, (long)(ab_now_s() * 1e6) % 1000000);
    if (json_dump_file(root, tmp, JSON_INDENT(1)) == 0 && ab_replace_file(tmp, file) != 0)
        remove(tmp);
    json_decref(root);
}

bool ab_peak_get(vkattn_context *ctx, bool remeasure, vkattn_peak_result *out)
{
    char dir[1024], file[1200];
    bool have_path = cache_path(ctx, dir, sizeof dir, file, sizeof file);
    if (!remeasure && have_path && read_cache(file, out))
        return true;
    fprintf(stderr, "attnbench: measuring the device's peak (once; cached%s%s)\n",
            have_path ? " in " : "", have_path ? file : " nowhere: no $HOME");
    vkattn_result r = vkattn_measure_peak(ctx, out);
    if (r != VKATTN_SUCCESS) {
        ab_report(ctx, r, "measuring the peak");
        return false;
    }
    ab_peak_store(ctx, out);
    return true;
}
