/* See shape_text.h. */
#include "core/shape_text.h"

#include <stdio.h>

void vka_shape_text(uint32_t rank, const uint32_t *dims, char *buf, size_t size)
{
    size_t len = 0;
    if (!size)
        return;
    buf[0] = '\0';
    for (uint32_t i = 0; i < rank && len < size; i++) {
        int n = snprintf(buf + len, size - len, "%s%u", i ? ", " : "(", dims[i]);
        if (n < 0)
            return;
        len += (size_t)n;
    }
    if (len < size)
        snprintf(buf + len, size - len, rank ? ")" : "()");
}

void vka_dims_text(const uint64_t *dims, int n, char *buf, size_t size)
{
    size_t len = 0;
    if (!size)
        return;
    buf[0] = '\0';
    for (int i = 0; i < n && len < size; i++) {
        int w = snprintf(buf + len, size - len, "%s%llu", i ? " x " : "",
                         (unsigned long long)dims[i]);
        if (w < 0)
            return;
        len += (size_t)w;
    }
}
