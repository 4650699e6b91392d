/* check --heatmap: pictures of the attention weights a layer returned.
 *
 * One image per case, batch row and head: query positions down, key
 * positions across, each cell coloured by viridis over the smallest to the
 * largest unmasked weight of that map, a legend bar with both labels, the
 * case name as the title. A cell is drawn masked (hatched grey) when the
 * case's masks forbid that key for that query (value_mask, the causal mask,
 * attention_mask, the sliding window, and for MultiHeadAttention and
 * GroupedQueryAttention query_mask: docs/SEMANTICS.md)
 * and its weight is exactly 0, so a weight that dropout zeroed stays a
 * colour. Small maps get cells of up to 48 px, large ones 1 px; beyond 1024
 * positions a pixel shows the mean of the cells it covers.
 *
 * The PNG's tEXt "attnbench:grid" holds "x y width height tq tv": where the
 * map sits in pixels and its size in cells, for tests and scripts. */
#include "heatmap.h"

#include "args.h"
#include "colormap.h"
#include "image.h"
#include "platform.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAP_MAX 1024     /* pixels along either axis of the map */
#define MAP_TARGET 640   /* a small map grows its cells up to this */
#define CELL_MAX 48

static const ab_rgb WHITE = {255, 255, 255}, BLACK = {0, 0, 0}, GREY = {96, 96, 96};
/* masked cells: light grey with darker diagonal hatching; never a viridis colour */
static const ab_rgb MASK_BG = {208, 208, 208}, MASK_LINE = {150, 150, 150};
static const ab_rgb NONFINITE = {255, 0, 255};

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
    if (c->kind == AB_LAYER_MHA)
        return c->desc.mha.sliding_window;
    if (c->kind == AB_LAYER_GQA)
        return c->desc.gqa.sliding_window > 0 ? (uint32_t)c->desc.gqa.sliding_window : 0;
    return 0;
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

/* ------------------------------------------------------------------ one map */

typedef struct map {
    const float *w; /* (Tq, Tv) weights of this batch row and head */
    bool *masked;   /* (Tq, Tv) */
    uint32_t tq, tv;
    double lo, hi;  /* colour range: unmasked finite weights */
    bool any_masked;
} map;

static void map_range(map *m)
{
    m->lo = INFINITY, m->hi = -INFINITY;
    for (size_t k = 0; k < (size_t)m->tq * m->tv; k++)
        if (!m->masked[k] && isfinite(m->w[k])) {
            m->lo = fmin(m->lo, m->w[k]);
            m->hi = fmax(m->hi, m->w[k]);
        }
    if (m->lo > m->hi)
        m->lo = m->hi = 0.0;
}

/* The first and one-past-last cell that pixel p of n covers, of `cells`. */
static void span(int p, int n, uint32_t cells, uint32_t *a, uint32_t *b)
{
    *a = (uint32_t)((uint64_t)p * cells / (uint64_t)n);
    *b = (uint32_t)((uint64_t)(p + 1) * cells / (uint64_t)n);
    if (*b <= *a)
        *b = *a + 1;
}

static ab_rgb colour_of(const map *m, double v)
{
    if (!isfinite(v))
        return NONFINITE;
    return ab_viridis(m->hi > m->lo ? (v - m->lo) / (m->hi - m->lo) : 0.5);
}

static ab_rgb hatch(int x, int y) { return (x + y) % 6 < 2 ? MASK_LINE : MASK_BG; }

/* Paints the map into a mw x mh rectangle at (x0, y0). */
static void paint_map(ab_image *img, const map *m, int x0, int y0, int mw, int mh)
{
    for (int py = 0; py < mh; py++) {
        uint32_t i0, i1;
        span(py, mh, m->tq, &i0, &i1);
        for (int px = 0; px < mw; px++) {
            uint32_t j0, j1;
            span(px, mw, m->tv, &j0, &j1);
            double sum = 0.0;
            size_t n = 0;
            for (uint32_t i = i0; i < i1; i++)
                for (uint32_t j = j0; j < j1; j++)
                    if (!m->masked[(size_t)i * m->tv + j])
                        sum += m->w[(size_t)i * m->tv + j], n++;
            ab_image_set(img, x0 + px, y0 + py,
                         n ? colour_of(m, sum / (double)n) : hatch(x0 + px, y0 + py));
        }
    }
}

/* A tick every `step` positions, step from 1, 2, 5, 10, ... so that labels
 * sit at least min_px apart. */
static uint32_t tick_step(double px_per_cell, int min_px)
{
    static const uint32_t base[3] = {1, 2, 5};
    for (uint32_t scale = 1;; scale *= 10)
        for (int k = 0; k < 3; k++)
            if (base[k] * scale * px_per_cell >= min_px || scale >= 100000000u)
                return base[k] * scale;
}

static void axes(ab_image *img, const map *m, int x0, int y0, int mw, int mh)
{
    char lab[16];
    double cw = (double)mw / m->tv, ch = (double)mh / m->tq;
    uint32_t sx = tick_step(cw, 30), sy = tick_step(ch, 12);
    for (uint32_t j = 0; j < m->tv; j += sx) {
        int x = x0 + (int)((j + 0.5) * cw);
        snprintf(lab, sizeof lab, "%u", j);
        ab_image_rect(img, x, y0 - 4, 1, 3, BLACK);
        ab_text(img, x - ab_text_width(lab, 1) / 2, y0 - 13, 1, BLACK, lab);
    }
    for (uint32_t i = 0; i < m->tq; i += sy) {
        int y = y0 + (int)((i + 0.5) * ch);
        snprintf(lab, sizeof lab, "%u", i);
        ab_image_rect(img, x0 - 4, y, 3, 1, BLACK);
        ab_text(img, x0 - 6 - ab_text_width(lab, 1), y - 3, 1, BLACK, lab);
    }
    const char *kx = "key position", *qy = "query position";
    ab_text(img, x0 + mw / 2 - ab_text_width(kx, 1) / 2, y0 - 26, 1, GREY, kx);
    ab_text_up(img, 4, y0 + mh / 2 - ab_text_width(qy, 1) / 2, 1, GREY, qy);
    ab_image_frame(img, x0 - 1, y0 - 1, mw + 2, mh + 2, BLACK);
}

static void legend(ab_image *img, const map *m, int x, int y0, int mh)
{
    char lab[32];
    int bh = mh < 120 ? 120 : mh;
    for (int py = 0; py < bh; py++)
        ab_image_rect(img, x, y0 + py, 16, 1, ab_viridis(1.0 - (double)py / (bh - 1)));
    ab_image_frame(img, x - 1, y0 - 1, 18, bh + 2, BLACK);
    snprintf(lab, sizeof lab, "%.3g", m->hi);
    ab_text(img, x + 22, y0, 1, BLACK, lab);
    snprintf(lab, sizeof lab, "%.3g", m->lo);
    ab_text(img, x + 22, y0 + bh - 7, 1, BLACK, lab);
    if (m->any_masked) {
        int y = y0 + bh + 10;
        for (int py = 0; py < 16; py++)
            for (int px = 0; px < 16; px++)
                ab_image_set(img, x + px, y + py, hatch(x + px, y + py));
        ab_image_frame(img, x - 1, y - 1, 18, 18, BLACK);
        ab_text(img, x + 22, y + 4, 1, BLACK, "masked");
    }
}

/* Lays out and writes one picture. */
static bool draw(const map *m, const char *title, const char *path, char *err, size_t err_size)
{
    uint32_t big = m->tq > m->tv ? m->tq : m->tv;
    uint32_t cell = MAP_TARGET / big;
    cell = cell > CELL_MAX ? CELL_MAX : cell < 1 ? 1 : cell;
    int mw = m->tv * cell > MAP_MAX ? MAP_MAX : (int)(m->tv * cell);
    int mh = m->tq * cell > MAP_MAX ? MAP_MAX : (int)(m->tq * cell);
    char lab[16];
    snprintf(lab, sizeof lab, "%u", m->tq);
    int x0 = 20 + ab_text_width(lab, 1) + 8, y0 = 28 + 34;
    int legend_h = (mh < 120 ? 120 : mh) + (m->any_masked ? 28 : 0);
    int w = x0 + mw + 16 + 22 + 8 * 6 + 10;
    int title_w = ab_text_width(title, 2) + 20;
    w = w < title_w ? title_w : w;
    int h = y0 + (mh > legend_h ? mh : legend_h) + 12;
    ab_image img;
    if (!ab_image_init(&img, w, h, WHITE)) {
        snprintf(err, err_size, "%s: out of host memory", path);
        return false;
    }
    ab_text(&img, 10, 8, 2, BLACK, title);
    paint_map(&img, m, x0, y0, mw, mh);
    axes(&img, m, x0, y0, mw, mh);
    legend(&img, m, x0 + mw + 16, y0, mh);
    char grid[96];
    snprintf(grid, sizeof grid, "%d %d %d %d %u %u", x0, y0, mw, mh, m->tq, m->tv);
    const char *keys[] = {"Title", "Software", "Description", "attnbench:grid"};
    const char *vals[] = {title, "attnbench check --heatmap",
                          "attention weights: query positions down, key positions across", grid};
    char why[160];
    int r = ab_image_write_png(&img, path, keys, vals, 4, why, sizeof why);
    ab_image_free(&img);
    if (r)
        snprintf(err, err_size, "%s: %s", path, why);
    return r == 0;
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
                      json_t *taken, json_t *paths, char *err, size_t err_size)
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
            map m = {.w = scores + ((size_t)b * g.heads + h) * g.tq * g.tv, .masked = masked,
                     .tq = g.tq, .tv = g.tv};
            for (uint32_t i = 0; i < g.tq; i++)
                for (uint32_t j = 0; j < g.tv; j++) {
                    size_t k = (size_t)i * g.tv + j;
                    masked[k] = m.w[k] == 0.0f && !allowed(c, &g, b, h, i, j);
                    m.any_masked = m.any_masked || masked[k];
                }
            map_range(&m);
            char file[300], path[4400], title[400];
            file_name(base, &g, b, h, "", file, sizeof file);
            snprintf(path, sizeof path, "%s/%s", dir, file);
            map_title(c->name, &g, b, h, title, sizeof title);
            if ((ok = draw(&m, title, path, err, err_size))) {
                json_object_set_new(taken, file, json_true());
                json_array_append_new(paths, json_string(path));
            }
        }
    free(masked);
    return ok;
}
