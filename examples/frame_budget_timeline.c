/* The frame-budget timeline (frame_budget_timeline.h), with cairo: its text
 * API in fontconfig's "sans-serif", its PNG writer. */
#include "frame_budget_timeline.h"

#include <cairo.h>
#include <math.h>
#include <stdio.h>

enum { W = 960, H = 480, LEFT = 78, RIGHT = 24, TOP = 84, BOTTOM = 122 };
enum { ROWS_EXTRA = 180, GAP = 28 }; /* two rows: a taller picture, a gap between them */
#define CLIP 3.0 /* the y axis ends at CLIP x the budget: one outlier must not flatten the rest */

static const double RENDER[3] = {0.36, 0.56, 0.85}, SLICE[3] = {0.95, 0.6, 0.15},
                    OVER[3] = {0.84, 0.1, 0.1}, BUDGET[3] = {0.75, 0.0, 0.0};

static void rgb(cairo_t *cr, const double *c) { cairo_set_source_rgb(cr, c[0], c[1], c[2]); }

/* Text at (x, y): ax 0 / 0.5 / 1 = left / centre / right of it; the
 * baseline at y + up * size (up 0.35 centres digits on y). */
static void text(cairo_t *cr, double x, double y, double size, bool bold, double ax, double up,
                 const char *s)
{
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
    cairo_text_extents_t e;
    cairo_text_extents(cr, s, &e);
    cairo_move_to(cr, x - ax * e.x_advance, y + up * size);
    cairo_show_text(cr, s);
}

static double nice_step(double range, int ticks)
{
    double raw = range / ticks, p = pow(10.0, floor(log10(raw)));
    return raw <= p ? p : raw <= 2 * p ? 2 * p : raw <= 5 * p ? 5 * p : 10 * p;
}

typedef struct axes {
    double x0, x1, y0, y1; /* plot area */
    double t_ms, top_us;   /* x range 0..t_ms, y range 0..top_us */
} axes;

static double X(const axes *a, double ms) { return a->x0 + ms / a->t_ms * (a->x1 - a->x0); }
static double Y(const axes *a, double us) { return a->y1 - us / a->top_us * (a->y1 - a->y0); }

/* A row's grid and tick labels; the time labels under the lowest row only. */
static void grid(cairo_t *cr, const axes *a, bool time_labels)
{
    char lab[32];
    cairo_set_line_width(cr, 1);
    double xs = nice_step(a->t_ms, 10), ys = nice_step(a->top_us / 1000.0, 6);
    for (double ms = 0; ms <= a->t_ms * (1 + 1e-9); ms += xs) {
        double x = floor(X(a, ms)) + 0.5;
        cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
        cairo_move_to(cr, x, a->y0), cairo_line_to(cr, x, a->y1), cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        cairo_move_to(cr, x, a->y1), cairo_line_to(cr, x, a->y1 + 5), cairo_stroke(cr);
        snprintf(lab, sizeof lab, "%g", ms);
        if (time_labels)
            text(cr, x, a->y1 + 8, 12, false, 0.5, 0.8, lab);
    }
    for (double ms = 0; ms * 1000.0 <= a->top_us * (1 + 1e-9); ms += ys) {
        double y = floor(Y(a, ms * 1000.0)) + 0.5;
        cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
        cairo_move_to(cr, a->x0, y), cairo_line_to(cr, a->x1, y), cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        cairo_move_to(cr, a->x0 - 5, y), cairo_line_to(cr, a->x0, y), cairo_stroke(cr);
        snprintf(lab, sizeof lab, "%g", ms);
        text(cr, a->x0 - 8, y, 12, false, 1, 0.35, lab);
    }
}

/* The axis names, once for the whole plot area a. */
static void axis_names(cairo_t *cr, const axes *a, bool two)
{
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    text(cr, (a->x0 + a->x1) / 2, a->y1 + 38, 13, false, 0.5, 0,
         two ? "GPU time, ms (the frames back to back, each as long as its longer bar; "
               "the host's time between them left out)"
             : "GPU time, ms (the frames back to back; the host's time between them left out)");
    cairo_save(cr);
    cairo_translate(cr, 24, (a->y0 + a->y1) / 2);
    cairo_rotate(cr, -1.5707963267948966); /* reading upwards */
    text(cr, 0, 0, 13, false, 0.5, 0, "time of one render or slice, ms");
    cairo_restore(cr);
}

/* A legend swatch and its words; returns the x after them. */
static double key(cairo_t *cr, double x, double y, const double *c, int kind, const char *s)
{
    rgb(cr, c);
    if (kind == 0) {
        cairo_rectangle(cr, x, y - 6, 16, 12), cairo_fill(cr);
    } else if (kind == 1) { /* the budget: a dashed line */
        double dash[] = {6, 3};
        cairo_set_dash(cr, dash, 2, 0);
        cairo_set_line_width(cr, 2);
        cairo_move_to(cr, x, y), cairo_line_to(cr, x + 16, y), cairo_stroke(cr);
        cairo_set_dash(cr, NULL, 0, 0);
    } else { /* a clipped bar: its top cut by a white zigzag, a triangle above */
        cairo_rectangle(cr, x + 3, y - 4, 10, 10), cairo_fill(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        cairo_move_to(cr, x + 8, y - 9), cairo_line_to(cr, x + 12, y - 4);
        cairo_line_to(cr, x + 4, y - 4), cairo_close_path(cr), cairo_fill(cr);
    }
    cairo_set_source_rgb(cr, 0, 0, 0);
    text(cr, x + 22, y, 12, false, 0, 0.35, s);
    cairo_text_extents_t e;
    cairo_text_extents(cr, s, &e);
    return x + 22 + e.x_advance + 22;
}

/* A frame's width along x, ms: render then slice on one row, side by side
 * on two. */
static double frame_ms(const frame_times *f, bool two)
{
    return (two ? fmax(f->render_us, f->slice_us) : f->render_us + f->slice_us) / 1000.0;
}

bool frame_timeline_write(const char *path, const char *title, const char *subtitle,
                          const frame_times *f, unsigned n, double budget_us,
                          const char *compute_row)
{
    const bool two = compute_row != NULL;
    const int height = two ? H + ROWS_EXTRA : H;
    double total_ms = 0, largest = 0;
    for (unsigned i = 0; i < n; i++) {
        total_ms += frame_ms(&f[i], two);
        largest = fmax(largest, fmax(f[i].render_us, f[i].slice_us));
    }
    axes a = {LEFT, W - RIGHT, TOP, height - BOTTOM, total_ms > 0 ? total_ms : 1.0, 0};
    /* a round top above the largest bar and at least 1.25x the budget (room
     * above its line); exactly CLIP x the budget when a bar goes past that */
    double want = fmax(largest, 1.25 * budget_us);
    double step = nice_step(want / 1000.0 * 1.05, 6) * 1000.0;
    a.top_us = largest > CLIP * budget_us ? CLIP * budget_us : ceil(want * 1.05 / step) * step;

    /* row[0] the renders, row[1] the slices: the same area on one row */
    axes row[2] = {a, a};
    if (two)
        row[0].y1 = (a.y0 + a.y1 - GAP) / 2, row[1].y0 = (a.y0 + a.y1 + GAP) / 2;
    const axes *slices = &row[1];

    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, W, height);
    cairo_t *cr = cairo_create(s);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    text(cr, LEFT, 14, 16, true, 0, 1, title);
    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
    text(cr, LEFT, 38, 12, false, 0, 1, subtitle);
    if (two)
        grid(cr, &row[0], false);
    grid(cr, slices, true);
    axis_names(cr, &a, two);

    /* the bars, clipped to their row; each render then its slice, or side
     * by side on two rows */
    double t = 0;
    unsigned over = 0, clipped = 0;
    for (unsigned i = 0; i < n; i++) {
        const double us[2] = {f[i].render_us, f[i].slice_us};
        for (int k = 0; k < 2; k++) {
            const axes *r = &row[k];
            double start = t + (two || k == 0 ? 0.0 : us[0] / 1000.0);
            double x0 = X(r, start), x1 = X(r, start + us[k] / 1000.0);
            bool is_over = k == 1 && us[k] > budget_us, cut = us[k] > a.top_us;
            over += is_over, clipped += cut;
            rgb(cr, k == 0 ? RENDER : is_over ? OVER : SLICE);
            double h = fmin(us[k], a.top_us);
            /* at least 1 px wide, with a hairline gap where there is room */
            double w = x1 - x0 > 3 ? x1 - x0 - 0.8 : fmax(x1 - x0, 1.0);
            cairo_rectangle(cr, x0, Y(r, h), w, r->y1 - Y(r, h)), cairo_fill(cr);
            if (cut) { /* a white zigzag below the top, the time above it */
                double xm = x0 + w / 2, yt = Y(r, a.top_us);
                cairo_set_source_rgb(cr, 1, 1, 1);
                cairo_set_line_width(cr, 1.5);
                cairo_move_to(cr, x0, yt + 10), cairo_line_to(cr, xm, yt + 6);
                cairo_line_to(cr, x0 + w, yt + 10), cairo_stroke(cr);
                cairo_set_source_rgb(cr, 0, 0, 0);
                cairo_move_to(cr, xm, yt - 9), cairo_line_to(cr, xm + 4, yt - 2);
                cairo_line_to(cr, xm - 4, yt - 2), cairo_close_path(cr), cairo_fill(cr);
                char lab[32];
                snprintf(lab, sizeof lab, "%.2f ms", us[k] / 1000.0);
                text(cr, xm, yt - 12, 10, false, 0.5, 0, lab);
            }
        }
        t += frame_ms(&f[i], two);
        /* a pass starts: a dotted line and its name */
        if (i + 1 == n || f[i + 1].pass == f[i].pass)
            continue;
        double x = floor(X(&a, t)) + 0.5;
        double dash[] = {2, 3};
        cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
        cairo_set_dash(cr, dash, 2, 0);
        cairo_set_line_width(cr, 1);
        cairo_move_to(cr, x, a.y0 - 14), cairo_line_to(cr, x, a.y1), cairo_stroke(cr);
        cairo_set_dash(cr, NULL, 0, 0);
    }
    /* pass names, above the plot at each pass's start */
    t = 0;
    for (unsigned i = 0; i < n; i++) {
        if (i == 0 || f[i].pass != f[i - 1].pass) {
            char lab[48];
            snprintf(lab, sizeof lab, f[i].pass == 0 ? "pass %d (learning)" : "pass %d",
                     f[i].pass + 1);
            cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
            text(cr, X(&a, t) + 4, a.y0 - 6, 11, false, 0, 0, lab);
        }
        t += frame_ms(&f[i], two);
    }
    /* the budget, on the slices' row, labelled at the right end */
    double yb = Y(slices, budget_us), dash[] = {6, 3};
    rgb(cr, BUDGET);
    cairo_set_dash(cr, dash, 2, 0);
    cairo_set_line_width(cr, 2);
    cairo_move_to(cr, a.x0, yb), cairo_line_to(cr, a.x1, yb), cairo_stroke(cr);
    cairo_set_dash(cr, NULL, 0, 0);
    char lab[96];
    snprintf(lab, sizeof lab, "budget %.0f us", budget_us);
    cairo_set_font_size(cr, 12);
    cairo_text_extents_t e;
    cairo_text_extents(cr, lab, &e);
    cairo_set_source_rgba(cr, 1, 1, 1, 0.85); /* readable over the bars */
    cairo_rectangle(cr, a.x1 - 10 - e.x_advance, yb - 21, e.x_advance + 10, 16), cairo_fill(cr);
    rgb(cr, BUDGET);
    text(cr, a.x1 - 5, yb - 8, 12, true, 1, 0, lab);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_line_width(cr, 1);
    for (int k = two ? 0 : 1; k < 2; k++)
        cairo_rectangle(cr, row[k].x0 + 0.5, row[k].y0 + 0.5, row[k].x1 - row[k].x0,
                        row[k].y1 - row[k].y0), cairo_stroke(cr);
    if (two) { /* each row's queue, top left inside it */
        text(cr, row[0].x0 + 6, row[0].y0 + 6, 12, true, 0, 1, "graphics queue: render");
        text(cr, row[1].x0 + 6, row[1].y0 + 6, 12, true, 0, 1, compute_row);
    }

    /* the legend, two rows under the axis label */
    double ly = height - 42, lx = LEFT;
    lx = key(cr, lx, ly, RENDER, 0, "render (the app's scene)");
    lx = key(cr, lx, ly, SLICE, 0, "attention slice within the budget");
    snprintf(lab, sizeof lab, "slice over the budget (%u)", over);
    key(cr, lx, ly, OVER, 0, lab);
    lx = key(cr, LEFT, ly + 22, BUDGET, 1, "budget");
    snprintf(lab, sizeof lab, "bar cut at %.0fx the budget, its time above it (%u)", CLIP,
             clipped);
    key(cr, lx, ly + 22, OVER, 2, lab);

    cairo_surface_flush(s);
    bool ok = cairo_status(cr) == CAIRO_STATUS_SUCCESS &&
              cairo_surface_write_to_png(s, path) == CAIRO_STATUS_SUCCESS;
    cairo_destroy(cr);
    cairo_surface_destroy(s);
    return ok;
}
