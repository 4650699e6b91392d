/* Picture output where the target has no libpng (Windows from Debian; see
 * tools/attnbench/CMakeLists.txt): compiled in place of the picture sources,
 * every entry point refuses with the same message. check --heatmap stops
 * before any device work (its folder is checked first); sweep --plot is
 * refused while its flags are read (sweep.c). */
#include <stdio.h>

#include "args.h" /* ATTNBENCH_EXIT_USAGE */
#include "heatmap.h"
#include "plot.h"

#define NO_PICTURES "attnbench was built without pictures (libpng)"

int ab_heatmap_dir_check(const char *dir)
{
    fprintf(stderr, "attnbench: --heatmap %s: " NO_PICTURES "\n", dir);
    return ATTNBENCH_EXIT_USAGE;
}

bool ab_heatmap_write(const char *dir, const ab_case *c, size_t index, const float *scores,
                      json_t *taken, json_t *paths, char *err, size_t err_size)
{
    (void)dir, (void)c, (void)index, (void)scores, (void)taken, (void)paths;
    snprintf(err, err_size, NO_PICTURES);
    return false;
}

bool ab_plot_write(const ab_plot *p, const char *path, char *err, size_t err_size)
{
    (void)p, (void)path;
    snprintf(err, err_size, NO_PICTURES);
    return false;
}
