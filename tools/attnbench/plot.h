/* Line plots for attnbench sweep --plot: series of (x, y) points on a log2 x
 * axis and a linear y axis from 0, one coloured line with markers per
 * series, a legend and a title. */
#ifndef ATTNBENCH_PLOT_H
#define ATTNBENCH_PLOT_H

#include <stdbool.h>
#include <stddef.h>

#define AB_PLOT_MAX_SERIES 4

typedef struct ab_series {
    const char *label;
    size_t n;
    const double *x, *y; /* x > 0; points with a non-finite y are left out */
} ab_series;

typedef struct ab_plot {
    const char *title, *subtitle; /* subtitle may be NULL */
    const char *x_label, *y_label;
    const ab_series *series;
    size_t n_series; /* 1..AB_PLOT_MAX_SERIES */
} ab_plot;

/* Draws the plot and writes it to path as a PNG. Returns false with *err
 * naming the file and the reason. */
bool ab_plot_write(const ab_plot *p, const char *path, char *err, size_t err_size);

#endif
