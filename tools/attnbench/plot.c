/* sweep --plot: a fixed 800 x 520 canvas. x is log2: each doubling of the
 * length is the same distance, so 128..8192 spreads evenly; ticks sit at the
 * lengths that were run. y is linear from 0 to a round number above the
 * largest value, ticks at 1, 2 or 5 times a power of ten. */
#include "plot.h"

#include "colormap.h"
#include "image.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define W 800
#define H 520
#define LEFT 78
#define RIGHT 24
#define TOP 62
#define BOTTOM 58

static const ab_rgb WHITE = {255, 255, 255}, BLACK = {0, 0, 0}, GRID = {228, 228, 228},
                    GREY = {96, 96, 96};

/* distinct, from the dark and light ends of viridis and between, plus an orange */
static ab_rgb series_colour(size_t k)
{
    static const double t[AB_PLOT_MAX_SERIES] = {0.05, 0.6, 0.35, 0.85};
    return k == 3 ? (ab_rgb){230, 120, 20} : ab_viridis(t[k % AB_PLOT_MAX_SERIES]);
}

/* marker shapes: square, disc, triangle, diamond */
static void marker(ab_image *img, int x, int y, size_t k, ab_rgb c)
{
    for (int dy = -4; dy <= 4; dy++)
        for (int dx = -4; dx <= 4; dx++) {
            bool in = k % 4 == 0   ? (dx >= -3 && dx <= 3 && dy >= -3 && dy <= 3)
                      : k % 4 == 1 ? dx * dx + dy * dy <= 16
                      : k % 4 == 2 ? (dy >= -4 && dy <= 3 && 2 * abs(dx) <= dy + 4)
                                   : abs(dx) + abs(dy) <= 4;
            if (in)
                ab_image_set(img, x + dx, y + dy, c);
        }
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
    int x0, y0, x1, y1; /* plot area, pixels */
    double lx0, lx1;    /* log2 x range */
    double ymax;
} frame;

static int px(const frame *f, double x)
{
    double t = f->lx1 > f->lx0 ? (log2(x) - f->lx0) / (f->lx1 - f->lx0) : 0.5;
    return f->x0 + (int)lround(t * (f->x1 - f->x0));
}

static int py(const frame *f, double y)
{
    return f->y1 - (int)lround(y / f->ymax * (f->y1 - f->y0));
}

static void axes(ab_image *img, const ab_plot *p, const frame *f, double step)
{
    char lab[32];
    for (double v = 0; v <= f->ymax * (1 + 1e-9); v += step) {
        int y = py(f, v);
        ab_image_rect(img, f->x0, y, f->x1 - f->x0, 1, GRID);
        ab_image_rect(img, f->x0 - 5, y, 5, 1, BLACK);
        label_number(v, lab, sizeof lab);
        ab_text(img, f->x0 - 9 - ab_text_width(lab, 1), y - 3, 1, BLACK, lab);
    }
    /* x ticks at every distinct x of the series, skipping any too close to the last */
    int last = -1000;
    for (size_t s = 0; s < p->n_series; s++)
        for (size_t i = 0; i < p->series[s].n; i++) {
            int x = px(f, p->series[s].x[i]);
            snprintf(lab, sizeof lab, "%g", p->series[s].x[i]);
            if (s > 0 || abs(x - last) < ab_text_width(lab, 1) + 6)
                continue;
            last = x;
            ab_image_rect(img, x, f->y0, 1, f->y1 - f->y0, GRID);
            ab_image_rect(img, x, f->y1, 1, 5, BLACK);
            ab_text(img, x - ab_text_width(lab, 1) / 2, f->y1 + 9, 1, BLACK, lab);
        }
    ab_image_frame(img, f->x0, f->y0, f->x1 - f->x0 + 1, f->y1 - f->y0 + 1, BLACK);
    ab_text(img, (f->x0 + f->x1 - ab_text_width(p->x_label, 1)) / 2, H - 24, 1, GREY, p->x_label);
    ab_text_up(img, 10, (f->y0 + f->y1 - ab_text_width(p->y_label, 1)) / 2, 1, GREY, p->y_label);
}

static void legend(ab_image *img, const ab_plot *p, const frame *f)
{
    int w = 0;
    for (size_t s = 0; s < p->n_series; s++) {
        int tw = ab_text_width(p->series[s].label, 1);
        w = tw > w ? tw : w;
    }
    int bw = w + 44, bh = (int)p->n_series * 16 + 8, x = f->x0 + 12, y = f->y0 + 12;
    ab_image_rect(img, x, y, bw, bh, WHITE);
    ab_image_frame(img, x, y, bw, bh, GREY);
    for (size_t s = 0; s < p->n_series; s++) {
        int ly = y + 12 + (int)s * 16;
        ab_rgb c = series_colour(s);
        ab_image_line(img, x + 6, ly, x + 30, ly, 2, c);
        marker(img, x + 18, ly, s, c);
        ab_text(img, x + 38, ly - 3, 1, BLACK, p->series[s].label);
    }
}

bool ab_plot_write(const ab_plot *p, const char *path, char *err, size_t err_size)
{
    frame f = {LEFT, TOP, W - RIGHT, H - BOTTOM, INFINITY, -INFINITY, 0.0};
    for (size_t s = 0; s < p->n_series; s++)
        for (size_t i = 0; i < p->series[s].n; i++) {
            f.lx0 = fmin(f.lx0, log2(p->series[s].x[i]));
            f.lx1 = fmax(f.lx1, log2(p->series[s].x[i]));
            if (isfinite(p->series[s].y[i]))
                f.ymax = fmax(f.ymax, p->series[s].y[i]);
        }
    /* a little room either side in x, a round top in y */
    double pad = f.lx1 > f.lx0 ? 0.04 * (f.lx1 - f.lx0) : 0.5;
    f.lx0 -= pad, f.lx1 += pad;
    if (!(f.ymax > 0))
        f.ymax = 1.0;
    double step = nice_step(f.ymax * 1.05, 6);
    f.ymax = ceil(f.ymax * 1.05 / step) * step;

    ab_image img;
    if (!ab_image_init(&img, W, H, WHITE)) {
        snprintf(err, err_size, "%s: out of host memory", path);
        return false;
    }
    /* the title at double size when it fits */
    int ts = ab_text_width(p->title, 2) <= W - LEFT - 8 ? 2 : 1;
    ab_text(&img, LEFT, ts == 2 ? 10 : 16, ts, BLACK, p->title);
    if (p->subtitle)
        ab_text(&img, LEFT, 34, 1, GREY, p->subtitle);
    axes(&img, p, &f, step);
    for (size_t s = 0; s < p->n_series; s++) {
        const ab_series *sr = &p->series[s];
        ab_rgb c = series_colour(s);
        int lx = 0, ly = 0;
        bool have = false;
        for (size_t i = 0; i < sr->n; i++) {
            if (!isfinite(sr->y[i]))
                continue;
            int x = px(&f, sr->x[i]), y = py(&f, sr->y[i]);
            if (have)
                ab_image_line(&img, lx, ly, x, y, 2, c);
            lx = x, ly = y, have = true;
        }
        for (size_t i = 0; i < sr->n; i++)
            if (isfinite(sr->y[i]))
                marker(&img, px(&f, sr->x[i]), py(&f, sr->y[i]), s, c);
    }
    legend(&img, p, &f);
    const char *keys[] = {"Title", "Software"};
    const char *vals[] = {p->title, "attnbench sweep --plot"};
    char why[160];
    int r = ab_image_write_png(&img, path, keys, vals, 2, why, sizeof why);
    ab_image_free(&img);
    if (r)
        snprintf(err, err_size, "%s: %s", path, why);
    return r == 0;
}
