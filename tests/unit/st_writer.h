/* The tests' own safetensors writer: independent of src/weights/, so a file
 * the library reads back was not shaped by the library's writer. Builds the
 * whole file in memory (8-byte length, JSON header by snprintf, data). */
#ifndef VKATTN_TEST_ST_WRITER_H
#define VKATTN_TEST_ST_WRITER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct st_tensor {
    const char *name;
    const char *dtype; /* "F32", "F16", "BF16", "I64", ... */
    uint32_t rank;
    uint64_t dims[4];
    const void *bytes; /* little-endian data */
    size_t nbytes;
} st_tensor;

/* A file of header text + data; caller frees. */
static inline uint8_t *st_raw(const char *header, const void *data, size_t dlen, size_t *size)
{
    size_t hlen = strlen(header);
    *size = 8 + hlen + dlen;
    uint8_t *f = malloc(*size ? *size : 1);
    if (!f)
        return NULL;
    for (int b = 0; b < 8; b++)
        f[b] = (uint8_t)((uint64_t)hlen >> (8 * b));
    memcpy(f + 8, header, hlen);
    if (dlen)
        memcpy(f + 8 + hlen, data, dlen);
    return f;
}

/* Tensors laid out in the order given; metadata a JSON object text or NULL. */
static inline uint8_t *st_build(const st_tensor *t, size_t n, const char *metadata, size_t *size)
{
    size_t cap = 256 + n * 512, o = 0, dlen = 0;
    char *h = malloc(cap);
    for (size_t i = 0; i < n; i++)
        dlen += t[i].nbytes;
    uint8_t *data = malloc(dlen ? dlen : 1);
    if (!h || !data) {
        free(h), free(data);
        return NULL;
    }
    o += (size_t)snprintf(h + o, cap - o, "{");
    if (metadata)
        o += (size_t)snprintf(h + o, cap - o, "\"__metadata__\":%s%s", metadata, n ? "," : "");
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        o += (size_t)snprintf(h + o, cap - o, "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[", i ? "," : "",
                              t[i].name, t[i].dtype);
        for (uint32_t d = 0; d < t[i].rank; d++)
            o += (size_t)snprintf(h + o, cap - o, "%s%llu", d ? "," : "",
                                  (unsigned long long)t[i].dims[d]);
        o += (size_t)snprintf(h + o, cap - o, "],\"data_offsets\":[%zu,%zu]}", off,
                              off + t[i].nbytes);
        if (t[i].nbytes)
            memcpy(data + off, t[i].bytes, t[i].nbytes);
        off += t[i].nbytes;
    }
    snprintf(h + o, cap - o, "}");
    uint8_t *f = st_raw(h, data, dlen, size);
    free(h), free(data);
    return f;
}

/* n floats as little-endian F32 bytes (4n); caller frees. */
static inline uint8_t *st_f32_bytes(const float *x, size_t n)
{
    uint8_t *b = malloc(4 * n + 1);
    for (size_t i = 0; b && i < n; i++) {
        uint32_t u;
        memcpy(&u, &x[i], 4);
        for (int k = 0; k < 4; k++)
            b[4 * i + (size_t)k] = (uint8_t)(u >> (8 * k));
    }
    return b;
}

/* n 16-bit patterns as little-endian bytes (2n); caller frees. */
static inline uint8_t *st_u16_bytes(const uint16_t *x, size_t n)
{
    uint8_t *b = malloc(2 * n + 1);
    for (size_t i = 0; b && i < n; i++) {
        b[2 * i] = (uint8_t)x[i];
        b[2 * i + 1] = (uint8_t)(x[i] >> 8);
    }
    return b;
}

static inline int st_write(const char *path, const uint8_t *bytes, size_t size)
{
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return -1;
    size_t w = fwrite(bytes, 1, size, fp);
    return fclose(fp) == 0 && w == size ? 0 : -1;
}

#endif
