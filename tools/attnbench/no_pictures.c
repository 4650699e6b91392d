/* Pictures where the target has no cairo (Windows from Debian; see
 * tools/attnbench/CMakeLists.txt): compiled in place of the drawing sources
 * behind pictures.h, every entry point refuses with the same message. The
 * options that draw are refused before any device work, with exit status 2:
 * check --heatmap (check.c) and sweep --plot (sweep.c). */
#include "pictures.h"

#include <stdio.h>

#define NO_PICTURES "attnbench was built without pictures (cairo)"

bool ab_heatmap_picture_write(const ab_heatmap_picture *m, const char *title, const char *path,
                              char *err, size_t err_size)
{
    (void)m, (void)title;
    snprintf(err, err_size, "%s: " NO_PICTURES, path);
    return false;
}

bool ab_plot_write(const ab_plot *p, const char *path, char *err, size_t err_size)
{
    (void)p;
    snprintf(err, err_size, "%s: " NO_PICTURES, path);
    return false;
}
