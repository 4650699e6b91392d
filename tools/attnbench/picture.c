/* Canvas, text and PNG output for attnbench's pictures (picture_cairo.h). */
#include "picture_cairo.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool ab_pic_begin(int w, int h, cairo_surface_t **s, cairo_t **cr)
{
    *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
    *cr = cairo_create(*s);
    if (cairo_surface_status(*s) || cairo_status(*cr)) {
        ab_pic_end(*s, *cr);
        return false;
    }
    cairo_set_source_rgb(*cr, 1, 1, 1);
    cairo_paint(*cr);
    return true;
}

void ab_pic_end(cairo_surface_t *s, cairo_t *cr)
{
    cairo_destroy(cr);
    cairo_surface_destroy(s);
}

void ab_pic_colour(cairo_t *cr, ab_rgb c)
{
    cairo_set_source_rgb(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0);
}

static void printable(const char *s, char *out, size_t size)
{
    size_t n = 0;
    for (; *s && n + 4 < size; s++)
        out[n++] = (unsigned char)*s >= 32 && (unsigned char)*s <= 126 ? *s : '?';
    if (*s)
        memcpy(out + n, "...", 3), n += 3;
    out[n] = '\0';
}

static void face(cairo_t *cr, double size, bool bold)
{
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
}

double ab_pic_text_width(cairo_t *cr, double size, bool bold, const char *s)
{
    char t[204];
    printable(s, t, sizeof t);
    face(cr, size, bold);
    cairo_text_extents_t e;
    cairo_text_extents(cr, t, &e);
    return e.x_advance;
}

/* Draws at the current origin after placing by (ax, ay): vertical placing
 * uses the font's ascent so that digits and letters line up. */
static void show(cairo_t *cr, double size, bool bold, double ax, double ay, const char *s)
{
    char t[204];
    printable(s, t, sizeof t);
    face(cr, size, bold);
    cairo_text_extents_t e;
    cairo_font_extents_t fe;
    cairo_text_extents(cr, t, &e);
    cairo_font_extents(cr, &fe);
    cairo_move_to(cr, -ax * e.x_advance, (1.0 - ay) * fe.ascent * 0.8);
    cairo_show_text(cr, t);
}

void ab_pic_text(cairo_t *cr, double x, double y, double size, bool bold, double ax, double ay,
                 const char *s)
{
    cairo_save(cr);
    cairo_translate(cr, x, y);
    show(cr, size, bold, ax, ay, s);
    cairo_restore(cr);
}

void ab_pic_text_up(cairo_t *cr, double x, double y, double size, double ax, double ay,
                    const char *s)
{
    cairo_save(cr);
    cairo_translate(cr, x, y);
    cairo_rotate(cr, -1.5707963267948966);
    show(cr, size, false, ax, ay, s);
    cairo_restore(cr);
}

/* ------------------------------------------------------------ PNG + tEXt */

/* cairo writes no tEXt chunk; its PNG is taken in memory and the chunks are
 * put right after IHDR (PNG 1.2, section 5.6: tEXt may go anywhere before
 * IEND). */
typedef struct buffer {
    unsigned char *p;
    size_t n, cap;
} buffer;

static cairo_status_t append(void *closure, const unsigned char *data, unsigned int len)
{
    buffer *b = closure;
    if (b->n + len > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->n + len)
            cap *= 2;
        unsigned char *np = realloc(b->p, cap);
        if (!np)
            return CAIRO_STATUS_NO_MEMORY;
        b->p = np, b->cap = cap;
    }
    memcpy(b->p + b->n, data, len);
    b->n += len;
    return CAIRO_STATUS_SUCCESS;
}

static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t n)
{
    /* bitwise CRC-32 (ISO 3309, as PNG uses): a few short chunks, no table */
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = crc & 1 ? 0xedb88320u ^ (crc >> 1) : crc >> 1;
    }
    return crc;
}

static void be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

static bool write_text_chunk(FILE *f, const char *key, const char *value)
{
    size_t kl = strlen(key), vl = strlen(value);
    unsigned char head[8], crc[4];
    be32(head, (uint32_t)(kl + 1 + vl));
    memcpy(head + 4, "tEXt", 4);
    uint32_t c = crc32_update(0xffffffffu, head + 4, 4);
    c = crc32_update(c, (const unsigned char *)key, kl + 1); /* with its NUL separator */
    c = crc32_update(c, (const unsigned char *)value, vl);
    be32(crc, c ^ 0xffffffffu);
    return fwrite(head, 1, 8, f) == 8 && fwrite(key, 1, kl + 1, f) == kl + 1 &&
           fwrite(value, 1, vl, f) == vl && fwrite(crc, 1, 4, f) == 4;
}

bool ab_pic_write_png(cairo_surface_t *s, const char *path, const char *const *keys,
                      const char *const *values, size_t n_text, char *err, size_t err_size)
{
    buffer b = {0};
    cairo_surface_flush(s);
    cairo_status_t st = cairo_surface_write_to_png_stream(s, append, &b);
    /* the signature (8 bytes) and IHDR (4 + 4 + 13 + 4) come first */
    if (st || b.n < 33) {
        snprintf(err, err_size, "%s: cairo cannot encode it: %s", path,
                 cairo_status_to_string(st ? st : CAIRO_STATUS_WRITE_ERROR));
        free(b.p);
        return false;
    }
    FILE *f = fopen(path, "wb");
    if (!f) {
        snprintf(err, err_size, "%s: cannot open: %s", path, strerror(errno));
        free(b.p);
        return false;
    }
    bool ok = fwrite(b.p, 1, 33, f) == 33;
    for (size_t i = 0; ok && i < n_text; i++)
        ok = write_text_chunk(f, keys[i], values[i]);
    ok = ok && fwrite(b.p + 33, 1, b.n - 33, f) == b.n - 33;
    int e = errno;
    if (fclose(f) != 0 && ok)
        ok = false, e = errno;
    if (!ok)
        snprintf(err, err_size, "%s: cannot write: %s", path, strerror(e ? e : EIO));
    free(b.p);
    return ok;
}
