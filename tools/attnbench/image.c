/* Pixel buffer, drawing primitives and PNG output (see image.h). */
#include "image.h"

#include <errno.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool ab_image_init(ab_image *img, int w, int h, ab_rgb bg)
{
    img->w = w;
    img->h = h;
    img->px = w > 0 && h > 0 ? malloc((size_t)w * (size_t)h * 3) : NULL;
    if (!img->px)
        return false;
    ab_image_rect(img, 0, 0, w, h, bg);
    return true;
}

void ab_image_free(ab_image *img)
{
    free(img->px);
    img->px = NULL;
}

void ab_image_set(ab_image *img, int x, int y, ab_rgb c)
{
    if (x < 0 || y < 0 || x >= img->w || y >= img->h)
        return;
    uint8_t *p = img->px + ((size_t)y * (size_t)img->w + (size_t)x) * 3;
    p[0] = c.r, p[1] = c.g, p[2] = c.b;
}

void ab_image_rect(ab_image *img, int x, int y, int w, int h, ab_rgb c)
{
    int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
    int x1 = x + w > img->w ? img->w : x + w, y1 = y + h > img->h ? img->h : y + h;
    for (int j = y0; j < y1; j++)
        for (int i = x0; i < x1; i++)
            ab_image_set(img, i, j, c);
}

void ab_image_frame(ab_image *img, int x, int y, int w, int h, ab_rgb c)
{
    ab_image_rect(img, x, y, w, 1, c);
    ab_image_rect(img, x, y + h - 1, w, 1, c);
    ab_image_rect(img, x, y, 1, h, c);
    ab_image_rect(img, x + w - 1, y, 1, h, c);
}

void ab_image_line(ab_image *img, int x0, int y0, int x1, int y1, int thick, ab_rgb c)
{
    /* Bresenham; each point stamped as a thick x thick square */
    int dx = abs(x1 - x0), dy = -abs(y1 - y0);
    int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1, e = dx + dy;
    int off = (thick - 1) / 2;
    for (;;) {
        ab_image_rect(img, x0 - off, y0 - off, thick, thick, c);
        if (x0 == x1 && y0 == y1)
            break;
        int e2 = 2 * e;
        if (e2 >= dy)
            e += dy, x0 += sx;
        if (e2 <= dx)
            e += dx, y0 += sy;
    }
}

/* libpng reports errors through longjmp; this keeps the frame that calls
 * setjmp free of locals that change after it. */
static int write_rows(FILE *f, const ab_image *img, png_text *text, int n_text, char *why,
                      size_t why_size)
{
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_write_struct(&png, NULL);
        snprintf(why, why_size, "out of memory");
        return ENOMEM;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        snprintf(why, why_size, "libpng failed to write it");
        return EIO;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)img->w, (png_uint_32)img->h, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(png, 9);
    if (n_text > 0)
        png_set_text(png, info, text, n_text);
    png_write_info(png, info);
    for (int y = 0; y < img->h; y++)
        png_write_row(png, img->px + (size_t)y * (size_t)img->w * 3);
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    return 0;
}

int ab_image_write_png(const ab_image *img, const char *path, const char *const *keys,
                       const char *const *values, size_t n_text, char *why, size_t why_size)
{
    png_text text[8];
    if (n_text > sizeof text / sizeof text[0])
        n_text = sizeof text / sizeof text[0];
    memset(text, 0, sizeof text);
    for (size_t i = 0; i < n_text; i++) {
        text[i].compression = PNG_TEXT_COMPRESSION_NONE;
        text[i].key = (png_charp)keys[i];
        text[i].text = (png_charp)values[i];
        text[i].text_length = strlen(values[i]);
    }
    FILE *f = fopen(path, "wb");
    if (!f) {
        int e = errno;
        snprintf(why, why_size, "cannot open: %s", strerror(e));
        return e ? e : EIO;
    }
    int r = write_rows(f, img, text, (int)n_text, why, why_size);
    if (fclose(f) != 0 && r == 0) {
        r = errno ? errno : EIO;
        snprintf(why, why_size, "cannot write: %s", strerror(r));
    }
    return r;
}
