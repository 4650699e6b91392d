/* check --heatmap: one map of attention weights drawn (pictures.h).
 *
 * Query positions down, key positions across; each cell coloured by viridis
 * over the smallest to the largest unmasked weight of that map (with
 * --log-color: over log10 of the smallest positive to the largest, a zero
 * weight at the low end), masked cells hatched in two greys that viridis
 * never gives. Small maps get cells of up to 48 px, large ones 1 px; beyond
 * 1024 positions a pixel shows the mean of the cells it covers. The cells
 * are written into the canvas pixel by pixel, so a cell's centre holds its
 * exact colour (tests/png_probe.c reads it back); cairo draws the rest. */
#include "picture_cairo.h"
#include "pictures.h"

#include <math.h>
#include <stdio.h>

#define MAP_MAX 1024   /* pixels along either axis of the map */
#define MAP_TARGET 640 /* a small map grows its cells up to this */
#define CELL_MAX 48
#define BAR_MIN 160    /* the colour bar's height when the map is shorter */

static const ab_rgb MASK_BG = {208, 208, 208}, MASK_LINE = {150, 150, 150};
static const ab_rgb NONFINITE = {255, 0, 255};

typedef struct scale {
    double lo, hi; /* weights at the two ends of the colour bar */
    bool log;      /* lo > 0 then */
    bool any_masked;
} scale;

static scale scale_of(const ab_heatmap_picture *m)
{
    scale s = {INFINITY, -INFINITY, m->log_color, false};
    double lo_pos = INFINITY;
    for (size_t k = 0; k < (size_t)m->tq * m->tv; k++) {
        s.any_masked = s.any_masked || m->masked[k];
        if (m->masked[k] || !isfinite(m->w[k]))
            continue;
        s.lo = fmin(s.lo, m->w[k]), s.hi = fmax(s.hi, m->w[k]);
        if (m->w[k] > 0)
            lo_pos = fmin(lo_pos, m->w[k]);
    }
    if (s.lo > s.hi)
        s.lo = s.hi = 0.0;
    if (s.log) { /* no positive weight: nothing to take a log of, stay linear */
        s.log = isfinite(lo_pos) && s.hi > lo_pos;
        if (s.log)
            s.lo = lo_pos;
    }
    return s;
}

/* Where v sits on the bar, 0..1 (outside: clamped by ab_viridis). */
static double position(const scale *s, double v)
{
    if (s->log)
        return v > 0 ? (log10(v) - log10(s->lo)) / (log10(s->hi) - log10(s->lo)) : 0.0;
    return s->hi > s->lo ? (v - s->lo) / (s->hi - s->lo) : 0.5;
}

static ab_rgb hatch(int x, int y) { return (x + y) % 6 < 2 ? MASK_LINE : MASK_BG; }

static void put(unsigned char *data, int stride, int x, int y, ab_rgb c)
{
    uint32_t *p = (uint32_t *)(data + (size_t)y * (size_t)stride) + x; /* RGB24: 0x00RRGGBB */
    *p = (uint32_t)c.r << 16 | (uint32_t)c.g << 8 | c.b;
}

/* The first and one-past-last cell that pixel p of n covers, of `cells`. */
static void span(int p, int n, uint32_t cells, uint32_t *a, uint32_t *b)
{
    *a = (uint32_t)((uint64_t)p * cells / (uint64_t)n);
    *b = (uint32_t)((uint64_t)(p + 1) * cells / (uint64_t)n);
    if (*b <= *a)
        *b = *a + 1;
}

static void paint_map(cairo_surface_t *surf, const ab_heatmap_picture *m, const scale *s, int x0,
                      int y0, int mw, int mh)
{
    cairo_surface_flush(surf);
    unsigned char *data = cairo_image_surface_get_data(surf);
    int stride = cairo_image_surface_get_stride(surf);
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
            double v = n ? sum / (double)n : 0.0;
            ab_rgb c = !n            ? hatch(x0 + px, y0 + py)
                       : isfinite(v) ? ab_viridis(position(s, v))
                                     : NONFINITE;
            put(data, stride, x0 + px, y0 + py, c);
        }
    }
    cairo_surface_mark_dirty(surf);
}

/* A tick every `step` positions, step from 1, 2, 5, 10, ... so that labels
 * sit at least min_px apart. */
static uint32_t tick_step(double px_per_cell, int min_px)
{
    static const uint32_t base[3] = {1, 2, 5};
    for (uint32_t sc = 1;; sc *= 10)
        for (int k = 0; k < 3; k++)
            if (base[k] * sc * px_per_cell >= min_px || sc >= 100000000u)
                return base[k] * sc;
}

static void axes(cairo_t *cr, const ab_heatmap_picture *m, int x0, int y0, int mw, int mh)
{
    char lab[16];
    double cw = (double)mw / m->tv, ch = (double)mh / m->tq;
    uint32_t sx = tick_step(cw, 34), sy = tick_step(ch, 16);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_line_width(cr, 1);
    for (uint32_t j = 0; j < m->tv; j += sx) {
        double x = floor(x0 + (j + 0.5) * cw) + 0.5;
        cairo_move_to(cr, x, y0 - 5), cairo_line_to(cr, x, y0 - 1), cairo_stroke(cr);
        snprintf(lab, sizeof lab, "%u", j);
        ab_pic_text(cr, x, y0 - 8, 11, false, 0.5, 1, lab);
    }
    for (uint32_t i = 0; i < m->tq; i += sy) {
        double y = floor(y0 + (i + 0.5) * ch) + 0.5;
        cairo_move_to(cr, x0 - 5, y), cairo_line_to(cr, x0 - 1, y), cairo_stroke(cr);
        snprintf(lab, sizeof lab, "%u", i);
        ab_pic_text(cr, x0 - 8, y, 11, false, 1, 0.5, lab);
    }
    cairo_rectangle(cr, x0 - 0.5, y0 - 0.5, mw + 1, mh + 1), cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.25, 0.25, 0.25);
    ab_pic_text(cr, x0 + mw / 2.0, y0 - 24, 12, false, 0.5, 1, "key position (j)");
    /* centred on the map, but never above its top edge (a map of one row) */
    const char *qy = "query position (i)";
    double half = ab_pic_text_width(cr, 12, false, qy) / 2;
    ab_pic_text_up(cr, 18, fmax(y0 + mh / 2.0, y0 + half), 12, 0.5, 1, qy);
}

/* Bar values: linear, 5 evenly spaced; log, each power of ten inside the
 * range (and both ends when fewer than two fall inside). */
static int bar_ticks(const scale *s, double *v, int cap)
{
    int n = 0;
    if (s->log) {
        for (double e = ceil(log10(s->lo) - 1e-9); e <= log10(s->hi) + 1e-9 && n < cap; e++)
            v[n++] = pow(10.0, e);
        if (n >= 2)
            return n;
        n = 0;
        v[n++] = s->lo, v[n++] = s->hi;
        return n;
    }
    if (!(s->hi > s->lo)) {
        v[n++] = s->lo;
        return n;
    }
    for (int k = 0; k <= 4; k++)
        v[n++] = s->lo + (s->hi - s->lo) * k / 4.0;
    return n;
}

static void colour_bar(cairo_t *cr, cairo_surface_t *surf, const scale *s, int x, int y0, int bh)
{
    cairo_surface_flush(surf);
    unsigned char *data = cairo_image_surface_get_data(surf);
    int stride = cairo_image_surface_get_stride(surf);
    for (int py = 0; py < bh; py++)
        for (int px = 0; px < 18; px++)
            put(data, stride, x + px, y0 + py, ab_viridis(1.0 - (double)py / (bh - 1)));
    cairo_surface_mark_dirty(surf);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, x - 0.5, y0 - 0.5, 19, bh + 1), cairo_stroke(cr);
    ab_pic_text(cr, x, y0 - 10, 12, false, 0, 1, s->log ? "weight (log)" : "weight");
    double v[32];
    int n = bar_ticks(s, v, 32);
    for (int k = 0; k < n; k++) {
        double t = s->hi > s->lo ? position(s, v[k]) : 0.5;
        double y = floor(y0 + (1.0 - t) * (bh - 1)) + 0.5;
        char lab[32];
        snprintf(lab, sizeof lab, "%.3g", v[k]);
        cairo_move_to(cr, x + 18, y), cairo_line_to(cr, x + 23, y), cairo_stroke(cr);
        ab_pic_text(cr, x + 27, y, 11, false, 0, 0.5, lab);
    }
}

static void mask_key(cairo_t *cr, cairo_surface_t *surf, int x, int y)
{
    cairo_surface_flush(surf);
    unsigned char *data = cairo_image_surface_get_data(surf);
    int stride = cairo_image_surface_get_stride(surf);
    for (int py = 0; py < 18; py++)
        for (int px = 0; px < 18; px++)
            put(data, stride, x + px, y + py, hatch(x + px, y + py));
    cairo_surface_mark_dirty(surf);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_rectangle(cr, x - 0.5, y - 0.5, 19, 19), cairo_stroke(cr);
    ab_pic_text(cr, x + 25, y + 9, 12, false, 0, 0.5, "masked");
}

bool ab_heatmap_picture_write(const ab_heatmap_picture *m, const char *title, const char *path,
                              char *err, size_t err_size)
{
    scale s = scale_of(m);
    uint32_t big = m->tq > m->tv ? m->tq : m->tv;
    uint32_t cell = MAP_TARGET / big;
    cell = cell > CELL_MAX ? CELL_MAX : cell < 1 ? 1 : cell;
    int mw = m->tv * cell > MAP_MAX ? MAP_MAX : (int)(m->tv * cell);
    int mh = m->tq * cell > MAP_MAX ? MAP_MAX : (int)(m->tq * cell);
    int x0 = 72, y0 = 86;
    int bh = mh < BAR_MIN ? BAR_MIN : mh;
    int w = x0 + mw + 24 + 18 + 80, h = y0 + bh + (s.any_masked ? 34 : 0) + 16;
    char sub[96];
    snprintf(sub, sizeof sub, "attention weights, %u queries x %u keys; colour: %s scale", m->tq,
             m->tv, s.log ? "log" : "linear");
    cairo_surface_t *surf;
    cairo_t *cr;
    /* measured on a scratch canvas so the title fits the width */
    if (!ab_pic_begin(1, 1, &surf, &cr)) {
        snprintf(err, err_size, "%s: cairo cannot make a canvas", path);
        return false;
    }
    double tw = fmax(ab_pic_text_width(cr, 16, true, title), ab_pic_text_width(cr, 12, false, sub));
    ab_pic_end(surf, cr);
    w = w < (int)tw + 24 ? (int)tw + 24 : w;
    if (!ab_pic_begin(w, h, &surf, &cr)) {
        snprintf(err, err_size, "%s: cairo cannot make a %d x %d canvas", path, w, h);
        return false;
    }
    cairo_set_source_rgb(cr, 0, 0, 0);
    ab_pic_text(cr, 12, 10, 16, true, 0, 0, title);
    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
    ab_pic_text(cr, 12, 32, 12, false, 0, 0, sub);
    paint_map(surf, m, &s, x0, y0, mw, mh);
    axes(cr, m, x0, y0, mw, mh);
    colour_bar(cr, surf, &s, x0 + mw + 24, y0, bh);
    if (s.any_masked)
        mask_key(cr, surf, x0 + mw + 24, y0 + bh + 14);
    char grid[96];
    snprintf(grid, sizeof grid, "%d %d %d %d %u %u", x0, y0, mw, mh, m->tq, m->tv);
    const char *keys[] = {"Title", "Software", "Description", "attnbench:grid"};
    const char *vals[] = {title, "attnbench check --heatmap", sub, grid};
    bool ok = ab_pic_write_png(surf, path, keys, vals, 4, err, err_size);
    ab_pic_end(surf, cr);
    return ok;
}
