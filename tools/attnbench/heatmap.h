/* attnbench check --heatmap DIR: one PNG of the attention weights per case,
 * batch row and head (docs/ATTNBENCH.md, "Heatmaps"). */
#ifndef ATTNBENCH_HEATMAP_H
#define ATTNBENCH_HEATMAP_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "case.h"

/* Makes sure DIR can take the pictures before anything runs: creates it
 * when missing (its parent must exist) and checks it is a writable folder.
 * Returns 0, or ATTNBENCH_EXIT_USAGE with the reason on stderr. */
int ab_heatmap_dir_check(const char *dir);

/* Writes the heatmaps of case `index` from its scores (c->scores_dims) into
 * dir and appends each path to `paths`; log_color: a log colour scale. `taken` (a JSON object) holds the
 * file names written so far in this run: a name that is already there gets
 * the case index appended. Returns false with *err set when a file cannot
 * be written. */
bool ab_heatmap_write(const char *dir, const ab_case *c, size_t index, const float *scores,
                      bool log_color, json_t *taken, json_t *paths, char *err, size_t err_size);

#endif
