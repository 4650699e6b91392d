/* What the picture files (picture.c, heatmap_picture.c, plot.c) share: a
 * white canvas, text in the fontconfig "sans-serif" face, PNG output with
 * tEXt chunks. Only those files include this header (it pulls in cairo). */
#ifndef ATTNBENCH_PICTURE_CAIRO_H
#define ATTNBENCH_PICTURE_CAIRO_H

#include <cairo.h>
#include <stdbool.h>
#include <stddef.h>

#include "colormap.h"

/* A w x h RGB canvas painted white, with its context; false when cairo
 * cannot make it (out of memory, a size over cairo's 32767). */
bool ab_pic_begin(int w, int h, cairo_surface_t **s, cairo_t **cr);
void ab_pic_end(cairo_surface_t *s, cairo_t *cr);

void ab_pic_colour(cairo_t *cr, ab_rgb c);

/* Text of `size` px at (x, y): ax is where x sits along the text (0 left,
 * 0.5 centre, 1 right), ay the same vertically (0 top, 0.5 middle, 1 the
 * baseline). Bytes outside printable ASCII are drawn as '?' (case names are
 * not known to be UTF-8) and a text over 200 characters is cut. */
void ab_pic_text(cairo_t *cr, double x, double y, double size, bool bold, double ax, double ay,
                 const char *s);
/* The same, reading upwards, (x, y) placed as ab_pic_text places it before
 * the turn. */
void ab_pic_text_up(cairo_t *cr, double x, double y, double size, double ax, double ay,
                    const char *s);
double ab_pic_text_width(cairo_t *cr, double size, bool bold, const char *s);

/* Writes the canvas to path as a PNG with tEXt chunks (keys[i], values[i],
 * n_text <= 8). False with *err = "PATH: reason". */
bool ab_pic_write_png(cairo_surface_t *s, const char *path, const char *const *keys,
                      const char *const *values, size_t n_text, char *err, size_t err_size);

#endif
