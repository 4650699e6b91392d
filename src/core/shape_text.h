/* Shapes as text, for messages. */
#ifndef VKA_CORE_SHAPE_TEXT_H
#define VKA_CORE_SHAPE_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* "(2, 1, 5)" into buf (always terminated). */
void vka_shape_text(uint32_t rank, const uint32_t *dims, char *buf, size_t size);

/* "2 x 1 x 5" into buf (always terminated; cut short if it does not fit). */
void vka_dims_text(const uint64_t *dims, int n, char *buf, size_t size);

#endif /* VKA_CORE_SHAPE_TEXT_H */
