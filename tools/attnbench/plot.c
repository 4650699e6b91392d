/* sweep --plot (pictures.h): a fixed 900 x 560 canvas. x is log2: each
 * doubling of the length is the same distance, so 128..8192 spreads evenly;
 * ticks sit at the lengths that were run. y is linear from 0 to a round
 * number above the largest value (bands included), ticks at 1, 2 or 5 times
 * a power of ten. Each series: a shaded band from its lo to its hi (the
 * slowest and the fastest run), the median as a line with markers. */
#include "picture_cairo.h"
#include "pictures.h"

#include <math.h>
#include <stdio.h>

#define W 900
#define H 560
#define LEFT 86
#define RIGHT 28
#define TOP 70
#define BOTTOM 64

/* distinct, from the dark and light ends of viridis and between, plus an orange */
static ab_rgb series_colour(size_t k)
{
    static const double t[AB_PLOT_MAX_SERIES] = {0.05, 0.6, 0.35, 0.85};
    return k == 3 ? (ab_rgb){230, 120, 20} : ab_viridis(t[k % AB_PLOT_MAX_SERIES]);
}

/* marker shapes: square, disc, triangle, diamond */
static void marker(cairo_t *cr, double x, double y, size_t k)
{
    switch (k % 4) {
    case 0: cairo_rectangle(cr, x - 3.5, y - 3.5, 7, 7); break;
    case 1: cairo_new_sub_path(cr), cairo_arc(cr, x, y, 4, 0, 6.283185307179586); break;
    case 2:
        cairo_move_to(cr, x, y - 5), cairo_line_to(cr, x + 4.5, y + 3.5);
        cairo_line_to(cr, x - 4.5, y + 3.5), cairo_close_path(cr);
        break;
    default:
        cairo_move_to(cr, x, y - 5), cairo_line_to(cr, x + 5, y), cairo_line_to(cr, x, y + 5);
        cairo_line_to(cr, x - 5, y), cairo_close_path(cr);
    }
    cairo_fill(cr);
}

static double nice_step(double range, int max_ticks)
{
    double raw = range / max_ticks, p = pow(10.0, floor(log10(raw)));
    for (double m = 1.0;; m = m == 1.0 ? 2.0 : m == 2.0 ? 5.0 : 10.0)
        if (m * p >= raw)
            return m * p;
}

static void label_number(double v, char *buf, size_t size)
{
    if (fabs(v) >= 1e5 || (v != 0 && fabs(v) < 1e-3))
        snprintf(buf, size, "%.2g", v);
    else
        snprintf(buf, size, "%g", v);
}

typedef struct frame {
    double x0, y0, x1, y1; /* plot area, pixels */
    double lx0, lx1;       /* log2 x range */
    double ymax;
} frame;

static double px(const frame *f, double x)
{
    double t = f->lx1 > f->lx0 ? (log2(x) - f->lx0) / (f->lx1 - f->lx0) : 0.5;
    return f->x0 + t * (f->x1 - f->x0);
}

static double py(const frame *f, double y) { return f->y1 - y / f->ymax * (f->y1 - f->y0); }

static void axes(cairo_t *cr, const ab_plot *p, const frame *f, double step)
{
    char lab[32];
    cairo_set_line_width(cr, 1);
    for (double v = 0; v <= f->ymax * (1 + 1e-9); v += step) {
        double y = floor(py(f, v)) + 0.5;
        cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
        cairo_move_to(cr, f->x0, y), cairo_line_to(cr, f->x1, y), cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        cairo_move_to(cr, f->x0 - 5, y), cairo_line_to(cr, f->x0, y), cairo_stroke(cr);
        label_number(v, lab, sizeof lab);
        ab_pic_text(cr, f->x0 - 9, y, 12, false, 1, 0.5, lab);
    }
    /* x ticks at the first series' lengths, skipping any too close to the last */
    double last = -1e9;
    const ab_series *s0 = &p->series[0];
    for (size_t i = 0; i < s0->n; i++) {
        double x = floor(px(f, s0->x[i])) + 0.5;
        snprintf(lab, sizeof lab, "%g", s0->x[i]);
        if (fabs(x - last) < ab_pic_text_width(cr, 12, false, lab) + 8)
            continue;
        last = x;
        cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
        cairo_move_to(cr, x, f->y0), cairo_line_to(cr, x, f->y1), cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        cairo_move_to(cr, x, f->y1), cairo_line_to(cr, x, f->y1 + 5), cairo_stroke(cr);
        ab_pic_text(cr, x, f->y1 + 9, 12, false, 0.5, 0, lab);
    }
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_rectangle(cr, f->x0 + 0.5, f->y0 + 0.5, f->x1 - f->x0, f->y1 - f->y0), cairo_stroke(cr);
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    ab_pic_text(cr, (f->x0 + f->x1) / 2, H - 18, 13, false, 0.5, 1, p->x_label);
    ab_pic_text_up(cr, 22, (f->y0 + f->y1) / 2, 13, 0.5, 1, p->y_label);
}

static void legend(cairo_t *cr, const ab_plot *p, const frame *f)
{
    double w = p->band_label ? ab_pic_text_width(cr, 12, false, p->band_label) : 0;
    for (size_t s = 0; s < p->n_series; s++)
        w = fmax(w, ab_pic_text_width(cr, 12, false, p->series[s].label));
    size_t rows = p->n_series + (p->band_label ? 1 : 0);
    double bw = w + 54, bh = (double)rows * 20 + 10, x = f->x0 + 12, y = f->y0 + 12;
    cairo_set_source_rgba(cr, 1, 1, 1, 0.9);
    cairo_rectangle(cr, x, y, bw, bh), cairo_fill(cr);
    cairo_set_source_rgb(cr, 0.55, 0.55, 0.55);
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, x + 0.5, y + 0.5, bw, bh), cairo_stroke(cr);
    for (size_t s = 0; s < p->n_series; s++) {
        double ly = y + 15 + (double)s * 20;
        ab_pic_colour(cr, series_colour(s));
        cairo_set_line_width(cr, 2);
        cairo_move_to(cr, x + 8, ly), cairo_line_to(cr, x + 38, ly), cairo_stroke(cr);
        marker(cr, x + 23, ly, s);
        cairo_set_source_rgb(cr, 0, 0, 0);
        ab_pic_text(cr, x + 46, ly, 12, false, 0, 0.5, p->series[s].label);
    }
    if (p->band_label) {
        double ly = y + 15 + (double)p->n_series * 20;
        cairo_set_source_rgba(cr, 0.3, 0.3, 0.3, 0.25);
        cairo_rectangle(cr, x + 8, ly - 6, 30, 12), cairo_fill(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        ab_pic_text(cr, x + 46, ly, 12, false, 0, 0.5, p->band_label);
    }
}

/* The band of series s: hi forward, lo back, over the points where all
 * three values are finite (a gap ends a piece). */
static void band(cairo_t *cr, const frame *f, const ab_series *sr, ab_rgb c)
{
    ab_rgb fill = c;
    cairo_set_source_rgba(cr, fill.r / 255.0, fill.g / 255.0, fill.b / 255.0, 0.22);
    size_t i = 0;
    while (i < sr->n) {
        size_t a = i;
        while (i < sr->n && isfinite(sr->lo[i]) && isfinite(sr->hi[i]) && isfinite(sr->y[i]))
            i++;
        if (i > a) {
            for (size_t k = a; k < i; k++)
                (k == a ? cairo_move_to : cairo_line_to)(cr, px(f, sr->x[k]), py(f, sr->hi[k]));
            for (size_t k = i; k-- > a;)
                cairo_line_to(cr, px(f, sr->x[k]), py(f, sr->lo[k]));
            cairo_close_path(cr);
            if (i - a == 1) { /* one point: a short vertical bar instead of no area */
                cairo_new_path(cr);
                cairo_rectangle(cr, px(f, sr->x[a]) - 3, py(f, sr->hi[a]), 6,
                                py(f, sr->lo[a]) - py(f, sr->hi[a]));
            }
            cairo_fill(cr);
        }
        i++;
    }
}

bool ab_plot_write(const ab_plot *p, const char *path, char *err, size_t err_size)
{
    frame f = {LEFT, TOP, W - RIGHT, H - BOTTOM, INFINITY, -INFINITY, 0.0};
    for (size_t s = 0; s < p->n_series; s++) {
        const ab_series *sr = &p->series[s];
        for (size_t i = 0; i < sr->n; i++) {
            f.lx0 = fmin(f.lx0, log2(sr->x[i]));
            f.lx1 = fmax(f.lx1, log2(sr->x[i]));
            if (isfinite(sr->y[i]))
                f.ymax = fmax(f.ymax, sr->y[i]);
            if (sr->hi && isfinite(sr->hi[i]))
                f.ymax = fmax(f.ymax, sr->hi[i]);
        }
    }
    /* a little room either side in x, a round top in y */
    double pad = f.lx1 > f.lx0 ? 0.04 * (f.lx1 - f.lx0) : 0.5;
    f.lx0 -= pad, f.lx1 += pad;
    if (!(f.ymax > 0))
        f.ymax = 1.0;
    double step = nice_step(f.ymax * 1.05, 6);
    f.ymax = ceil(f.ymax * 1.05 / step) * step;

    cairo_surface_t *surf;
    cairo_t *cr;
    if (!ab_pic_begin(W, H, &surf, &cr)) {
        snprintf(err, err_size, "%s: cairo cannot make a canvas", path);
        return false;
    }
    cairo_set_source_rgb(cr, 0, 0, 0);
    ab_pic_text(cr, LEFT, 12, 17, true, 0, 0, p->title);
    if (p->subtitle) {
        cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
        ab_pic_text(cr, LEFT, 38, 12, false, 0, 0, p->subtitle);
    }
    axes(cr, p, &f, step);
    cairo_save(cr);
    cairo_rectangle(cr, f.x0, f.y0, f.x1 - f.x0, f.y1 - f.y0);
    cairo_clip(cr);
    for (size_t s = 0; s < p->n_series; s++)
        if (p->band_label && p->series[s].lo && p->series[s].hi)
            band(cr, &f, &p->series[s], series_colour(s));
    for (size_t s = 0; s < p->n_series; s++) {
        const ab_series *sr = &p->series[s];
        ab_pic_colour(cr, series_colour(s));
        cairo_set_line_width(cr, 2);
        cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
        bool have = false;
        for (size_t i = 0; i < sr->n; i++) {
            if (!isfinite(sr->y[i])) {
                have = false;
                continue;
            }
            (have ? cairo_line_to : cairo_move_to)(cr, px(&f, sr->x[i]), py(&f, sr->y[i]));
            have = true;
        }
        cairo_stroke(cr);
        for (size_t i = 0; i < sr->n; i++)
            if (isfinite(sr->y[i]))
                marker(cr, px(&f, sr->x[i]), py(&f, sr->y[i]), s);
    }
    cairo_restore(cr);
    legend(cr, p, &f);
    const char *keys[] = {"Title", "Software"};
    const char *vals[] = {p->title, "attnbench sweep --plot"};
    bool ok = ab_pic_write_png(surf, path, keys, vals, 2, err, err_size);
    ab_pic_end(surf, cr);
    return ok;
}
