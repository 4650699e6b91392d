/* attnbench's pictures, drawn with cairo (its text API and its PNG writer):
 * the one header through which the rest of attnbench draws. The drawing
 * lives in picture.c (shared helpers), heatmap_picture.c (check --heatmap)
 * and plot.c (sweep --plot); nothing else calls cairo. */
#ifndef ATTNBENCH_PICTURES_H
#define ATTNBENCH_PICTURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- heatmaps (docs/ATTNBENCH.md, "Heatmaps") */

typedef struct ab_heatmap_picture {
    const float *w;      /* (tq, tv) attention weights of one batch row and head */
    const bool *masked;  /* (tq, tv): drawn hatched grey instead of a colour */
    uint32_t tq, tv;
    bool log_color;      /* colour by log10 of the weight (check --log-color) */
} ab_heatmap_picture;

/* Draws the map titled `title` and writes it to path as a PNG whose tEXt
 * "attnbench:grid" holds "x y width height tq tv" (where the map sits, in
 * pixels). False with *err naming the file and the reason. */
bool ab_heatmap_picture_write(const ab_heatmap_picture *m, const char *title, const char *path,
                              char *err, size_t err_size);

/* ---- line plots (sweep --plot) */

#define AB_PLOT_MAX_SERIES 4

typedef struct ab_series {
    const char *label;
    size_t n;
    const double *x, *y; /* x > 0; points with a non-finite y are left out */
    const double *lo, *hi; /* a band around y (the slowest and fastest run); NULL = none */
} ab_series;

typedef struct ab_plot {
    const char *title, *subtitle; /* subtitle may be NULL */
    const char *x_label, *y_label;
    const char *band_label; /* the legend's words for the bands; NULL = no bands */
    const ab_series *series;
    size_t n_series; /* 1..AB_PLOT_MAX_SERIES */
} ab_plot;

/* Draws the plot (log2 x, linear y from 0) and writes it to path as a PNG.
 * False with *err naming the file and the reason. */
bool ab_plot_write(const ab_plot *p, const char *path, char *err, size_t err_size);

#endif
