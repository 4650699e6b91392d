/* RGB images for attnbench's pictures (check --heatmap, sweep --plot): a
 * pixel buffer, a few drawing primitives, text in a built-in 5x7 bitmap font
 * (font.c), and PNG output through libpng with tEXt metadata. Drawing clips
 * to the image, so callers never check bounds. */
#ifndef ATTNBENCH_IMAGE_H
#define ATTNBENCH_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ab_rgb {
    uint8_t r, g, b;
} ab_rgb;

typedef struct ab_image {
    int w, h;
    uint8_t *px; /* w * h * 3 bytes, row-major RGB */
} ab_image;

/* Allocates a w x h image filled with bg; false when out of memory. */
bool ab_image_init(ab_image *img, int w, int h, ab_rgb bg);
void ab_image_free(ab_image *img);

void ab_image_set(ab_image *img, int x, int y, ab_rgb c);
void ab_image_rect(ab_image *img, int x, int y, int w, int h, ab_rgb c);     /* filled */
void ab_image_frame(ab_image *img, int x, int y, int w, int h, ab_rgb c);    /* 1 px outline */
/* A line of the given thickness (1 or more pixels) from (x0, y0) to (x1, y1). */
void ab_image_line(ab_image *img, int x0, int y0, int x1, int y1, int thick, ab_rgb c);

/* Text in the 5x7 font, each font pixel drawn as scale x scale; (x, y) is the
 * top left. Characters outside printable ASCII are drawn as '?'. */
void ab_text(ab_image *img, int x, int y, int scale, ab_rgb c, const char *s);
int ab_text_width(const char *s, int scale); /* pixels, 6 per character */
int ab_text_height(int scale);               /* 7 * scale */
/* Text rotated 90 degrees counter-clockwise (reading upwards); (x, y) is the
 * top left of its bounding box. */
void ab_text_up(ab_image *img, int x, int y, int scale, ab_rgb c, const char *s);

/* Writes img to path as an 8-bit RGB PNG with tEXt chunks (keys[i],
 * values[i]). Returns 0, or errno-style failure with *why set to a
 * sentence ("cannot open: Permission denied"). */
int ab_image_write_png(const ab_image *img, const char *path, const char *const *keys,
                       const char *const *values, size_t n_text, char *why, size_t why_size);

#endif
