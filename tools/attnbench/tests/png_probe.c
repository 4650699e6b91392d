/* Test helper for attnbench's pictures: checks that a file is a PNG (the
 * signature and the IHDR chunk, read byte by byte), that cairo decodes it to
 * the IHDR's size, and optionally the colour of heatmap cells.
 *
 *   attnbench_png_probe FILE.png [--min-size W H] [masked I J | unmasked I J]...
 *
 * Cells are located through the "attnbench:grid" tEXt chunk ("x y width
 * height tq tv", docs/ATTNBENCH.md); a masked cell's centre must be one of the
 * two hatching greys, an unmasked one must not be grey. Exit 0 when every
 * check holds, else 1 with the reason on stderr. */
#include <cairo.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *file, const char *what)
{
    fprintf(stderr, "png_probe: %s: %s\n", file, what);
    return 1;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The whole file in memory (the pictures are small). */
static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    unsigned char *buf = NULL;
    size_t cap = 0;
    *n = 0;
    for (;;) {
        if (*n == cap) {
            unsigned char *nb = realloc(buf, cap = cap ? 2 * cap : 65536);
            if (!nb)
                break;
            buf = nb;
        }
        size_t got = fread(buf + *n, 1, cap - *n, f);
        if (!got)
            break;
        *n += got;
    }
    fclose(f);
    return buf;
}

/* The text of the tEXt chunk with that key, found by walking the chunks. */
static bool find_text(const unsigned char *b, size_t n, const char *key, char *out, size_t size)
{
    for (size_t p = 8; p + 12 <= n;) {
        uint32_t len = be32(b + p);
        if (p + 12 + len > n)
            return false;
        const unsigned char *data = b + p + 8;
        size_t klen = strlen(key);
        bool match = len > klen && !memcmp(data, key, klen) && !data[klen];
        if (!memcmp(b + p + 4, "tEXt", 4) && match) {
            size_t tlen = len - klen - 1 < size - 1 ? len - klen - 1 : size - 1;
            memcpy(out, data + klen + 1, tlen);
            out[tlen] = '\0';
            return true;
        }
        p += 12 + len;
    }
    return false;
}

typedef struct cursor_bytes {
    const unsigned char *p;
    size_t left;
} cursor_bytes;

static cairo_status_t read_bytes(void *closure, unsigned char *data, unsigned int len)
{
    cursor_bytes *c = closure;
    if (len > c->left)
        return CAIRO_STATUS_READ_ERROR;
    memcpy(data, c->p, len);
    c->p += len, c->left -= len;
    return CAIRO_STATUS_SUCCESS;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return fail("(none)", "usage: attnbench_png_probe FILE.png [--min-size W H] "
                              "[masked|unmasked I J]...");
    const char *file = argv[1];
    size_t n = 0;
    unsigned char *b = slurp(file, &n);
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (!b || n < 33)
        return fail(file, "cannot read it, or shorter than a PNG header");
    if (memcmp(b, sig, 8) || be32(b + 8) != 13 || memcmp(b + 12, "IHDR", 4))
        return fail(file, "no PNG signature followed by an IHDR chunk");
    uint32_t w = be32(b + 16), h = be32(b + 20);

    /* cairo reads from a file or a stream; the bytes are already here */
    cursor_bytes cur = {b, n};
    cairo_surface_t *img = cairo_image_surface_create_from_png_stream(read_bytes, &cur);
    if (cairo_surface_status(img))
        return fail(file, cairo_status_to_string(cairo_surface_status(img)));
    if ((uint32_t)cairo_image_surface_get_width(img) != w ||
        (uint32_t)cairo_image_surface_get_height(img) != h)
        return fail(file, "cairo's size differs from the IHDR bytes");
    cairo_format_t fmt = cairo_image_surface_get_format(img);
    if (fmt != CAIRO_FORMAT_RGB24 && fmt != CAIRO_FORMAT_ARGB32)
        return fail(file, "not an RGB picture");
    const unsigned char *px = cairo_image_surface_get_data(img);
    int stride = cairo_image_surface_get_stride(img);
    printf("%s: PNG %u x %u\n", file, w, h);

    int gx = 0, gy = 0, gw = 0, gh = 0;
    unsigned tq = 0, tv = 0;
    char grid[128];
    bool have_grid = find_text(b, n, "attnbench:grid", grid, sizeof grid) &&
                     sscanf(grid, "%d %d %d %d %u %u", &gx, &gy, &gw, &gh, &tq, &tv) == 6;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--min-size") && i + 2 < argc) {
            if (w < (uint32_t)atoi(argv[i + 1]) || h < (uint32_t)atoi(argv[i + 2]))
                return fail(file, "smaller than --min-size");
            i += 2;
            continue;
        }
        bool want_masked = !strcmp(argv[i], "masked");
        if ((!want_masked && strcmp(argv[i], "unmasked")) || i + 2 >= argc)
            return fail(file, "bad arguments");
        if (!have_grid)
            return fail(file, "no attnbench:grid text chunk");
        unsigned ci = (unsigned)atoi(argv[i + 1]), cj = (unsigned)atoi(argv[i + 2]);
        i += 2;
        if (ci >= tq || cj >= tv)
            return fail(file, "cell outside the grid");
        int x = gx + (int)((cj + 0.5) * gw / tv), y = gy + (int)((ci + 0.5) * gh / tq);
        /* cairo's pixels: 0xAARRGGBB in native byte order (opaque: no premultiplying) */
        uint32_t v = *((const uint32_t *)(px + (size_t)y * (size_t)stride) + x);
        unsigned r = v >> 16 & 255, g = v >> 8 & 255, bl = v & 255;
        bool grey = r == g && g == bl && (r == 208 || r == 150);
        printf("  cell (%u, %u) at (%d, %d): rgb %u %u %u\n", ci, cj, x, y, r, g, bl);
        if (grey != want_masked)
            return fail(file, want_masked ? "a masked cell is not drawn in the masked greys"
                                          : "an unmasked cell is drawn in the masked greys");
    }
    cairo_surface_destroy(img);
    free(b);
    return 0;
}
