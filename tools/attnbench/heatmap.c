/* check --heatmap: pictures of the attention weights a layer returned.
 *
 * One image per case, batch row and head (drawn by heatmap_picture.c), the
 * case name as the title. This file decides which cells are masked: a cell
 * is drawn masked (hatched grey) when the case's masks forbid that key for
 * that query (value_mask, the causal mask, attention_mask, the sliding
 * window, and for MultiHeadAttention and GroupedQueryAttention query_mask:
 * docs/SEMANTICS.md) and its weight is exactly 0, so a weight that dropout
 * zeroed stays a colour. It also names the files. */
#include "heatmap.h"

#include "args.h"
#include "pictures.h"
#include "platform.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ab_heatmap_dir_check(const char *dir)
{
    bool is_dir = false;
    if (!*dir) {
        fprintf(stderr, "attnbench: --heatmap needs a folder name\n");
        return ATTNBENCH_EXIT_USAGE;
    }
    if (ab_path_kind(dir, &is_dir) != 0 &&
        (errno != ENOENT || ab_mkdir(dir) != 0 || ab_path_kind(dir, &is_dir) != 0)) {
        fprintf(stderr, "attnbench: --heatmap %s: cannot create the folder: %s\n", dir,
                strerror(errno));
        return ATTNBENCH_EXIT_USAGE;
    }
    if (!is_dir) {
        fprintf(stderr, "attnbench: --heatmap %s: not a folder\n", dir);
        return ATTNBENCH_EXIT_USAGE;
    }
    if (ab_dir_writable(dir) != 0) {
        fprintf(stderr, "attnbench: --heatmap %s: cannot write there: %s\n", dir, strerror(errno));
        return ATTNBENCH_EXIT_USAGE;
    }
    return ATTNBENCH_EXIT_OK;
}

/* ------------------------------------------------------------------ masks */

/* The geometry of one case's scores: (B, H, Tq, Tv), H = 1 but for MHA. */
typedef struct geom {
    uint32_t batch, heads, tq, tv;
    bool mha;
} geom;

/* Element of a mask stored with right-aligned broadcasting against coords
 * (n of them, outermost first): an axis of size 1 reads index 0. */
static float mask_at(const ab_nd *m, const uint32_t *coords, uint32_t n)
{
    size_t idx = 0;
    for (uint32_t k = 0; k < m->rank; k++) {
        uint32_t c = coords[n - m->rank + k];
        idx = idx * m->dims[k] + (m->dims[k] == 1 ? 0 : c);
    }
    return m->data[idx];
}

/* The case's Keras sliding_window (0 = None): MultiHeadAttention and
 * GroupedQueryAttention only. */
static uint32_t window_of(const ab_case *c)
{
    const ab_layer_kind_info *kind = ab_layer_kind_of(c->kind);
    return kind->sliding_window ? kind->sliding_window(&c->desc) : 0;
}

/* Whether the case's masks let query i of (b, h) attend to key j. The window
 * is anchored as the library anchors it (vkattn_sdpa_params.sliding_window):
 * at query i, or i + Tv - Tq with bottom-right causal. */
static bool allowed(const ab_case *c, const geom *g, uint32_t b, uint32_t h, uint32_t i, uint32_t j)
{
    const uint32_t window = window_of(c);
    if (window) {
        const int64_t pos = c->call.causal == VKATTN_CAUSAL_BOTTOM_RIGHT
                                ? (int64_t)i + g->tv - g->tq
                                : (int64_t)i;
        const int64_t dist = pos > (int64_t)j ? pos - (int64_t)j : (int64_t)j - pos;
        if (dist >= (int64_t)window)
            return false;
    }

    if (c->value_mask.data && c->value_mask.data[(size_t)b * g->tv + j] == 0.0f)
        return false;
    if (g->mha && c->query_mask.data && c->query_mask.data[(size_t)b * g->tq + i] == 0.0f)
        return false;
    if (c->call.causal == VKATTN_CAUSAL_TOP_LEFT && j > i)
        return false;
    if (c->call.causal == VKATTN_CAUSAL_BOTTOM_RIGHT && (int64_t)j > (int64_t)i + g->tv - g->tq)
        return false;
    const ab_nd *am = &c->attention_mask;
    if (am->data) {
        uint32_t with_head[4] = {b, h, i, j}, without[3] = {b, i, j};
        float v = am->rank == 4 ? mask_at(am, with_head, 4)
                                : mask_at(am, without, 3);
        if (v == 0.0f)
            return false;
    }
    return true;
}

/* ------------------------------------------------------------------ names */

/* Letters, digits, '.', '-', '_' stay; any run of other characters becomes
 * one '_', and so does a leading '.' (no hidden files, no ".."). At most 100
 * characters. */
static void sanitize(const char *name, size_t index, char *out, size_t size)
{
    size_t n = 0;
    for (const char *s = name; *s && n + 1 < size && n < 100; s++) {
        char ch = *s;
        bool keep = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || (ch == '.' && n > 0);
        if (keep || n == 0 || out[n - 1] != '_')
            out[n++] = keep ? ch : '_';
    }
    out[n] = '\0';
    if (n == 0)
        snprintf(out, size, "case%zu", index);
}

static void file_name(const char *base, const geom *g, uint32_t b, uint32_t h, const char *extra,
                      char *out, size_t size)
{
    char bs[24] = "", hs[24] = "";
    if (g->batch > 1)
        snprintf(bs, sizeof bs, "-b%u", b);
    if (g->mha)
        snprintf(hs, sizeof hs, "-h%u", h);
    snprintf(out, size, "%s%s%s%s.png", base, extra, bs, hs);
}

/* A base name not yet taken by an earlier case: the case's own, else with
 * "-<index>" (then "-<index>-<k>") appended. */
static void unique_base(json_t *taken, const char *base, size_t index, const geom *g, char *out,
                        size_t size)
{
    char extra[48] = "", probe[300];
    for (unsigned k = 0;; k++) {
        file_name(base, g, 0, 0, extra, probe, sizeof probe);
        if (!json_object_get(taken, probe) || k > 1000)
            break;
        if (k == 0)
            snprintf(extra, sizeof extra, "-%zu", index);
        else
            snprintf(extra, sizeof extra, "-%zu-%u", index, k);
    }
    snprintf(out, size, "%s%s", base, extra);
}

/* "name", "name  (batch 1)", "name  (head 0)", "name  (batch 1, head 0)" */
static void map_title(const char *name, const geom *g, uint32_t b, uint32_t h, char *out,
                      size_t size)
{
    char bs[24] = "", hs[24] = "";
    if (g->batch > 1)
        snprintf(bs, sizeof bs, "batch %u", b);
    if (g->mha)
        snprintf(hs, sizeof hs, "%shead %u", bs[0] ? ", " : "", h);
    if (bs[0] || hs[0])
        snprintf(out, size, "%s  (%s%s)", name, bs, hs);
    else
        snprintf(out, size, "%s", name);
}

bool ab_heatmap_write(const char *dir, const ab_case *c, size_t index, const float *scores,
                      bool log_color, json_t *taken, json_t *paths, char *err, size_t err_size)
{
    geom g = {.batch = c->scores_dims[0], .mha = c->scores_rank == 4};
    g.heads = g.mha ? c->scores_dims[1] : 1;
    g.tq = c->scores_dims[c->scores_rank - 2];
    g.tv = c->scores_dims[c->scores_rank - 1];
    char clean[128], base[180];
    sanitize(c->name, index, clean, sizeof clean);
    unique_base(taken, clean, index, &g, base, sizeof base);
    bool *masked = malloc((size_t)g.tq * g.tv * sizeof *masked);
    if (!masked) {
        snprintf(err, err_size, "heatmap: out of host memory");
        return false;
    }
    bool ok = true;
    for (uint32_t b = 0; ok && b < g.batch; b++)
        for (uint32_t h = 0; ok && h < g.heads; h++) {
            ab_heatmap_picture m = {.w = scores + ((size_t)b * g.heads + h) * g.tq * g.tv,
                                    .masked = masked, .tq = g.tq, .tv = g.tv,
                                    .log_color = log_color};
            for (uint32_t i = 0; i < g.tq; i++)
                for (uint32_t j = 0; j < g.tv; j++) {
                    size_t k = (size_t)i * g.tv + j;
                    masked[k] = m.w[k] == 0.0f && !allowed(c, &g, b, h, i, j);
                }
            char file[300], path[4400], title[400];
            file_name(base, &g, b, h, "", file, sizeof file);
            snprintf(path, sizeof path, "%s/%s", dir, file);
            map_title(c->name, &g, b, h, title, sizeof title);
            if ((ok = ab_heatmap_picture_write(&m, title, path, err, err_size))) {
                json_object_set_new(taken, file, json_true());
                json_array_append_new(paths, json_string(path));
            }
        }
    free(masked);
    return ok;
}
