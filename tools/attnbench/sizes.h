/* The size products of bench's flags, checked before a context is made as the
 * library checks its own (vkattn_tensor_create: an element count past
 * UINT64_MAX / 4 is VKATTN_ERROR_SIZE_OVERFLOW), so that a count that wraps
 * never sizes a host array. What a device can hold beyond that
 * (maxStorageBufferRange, ...) is the library's to say: ops create their
 * tensors and layers before they allocate and fill host arrays, and a refusal
 * there is reported by ab_setup_refused. */
#ifndef ATTNBENCH_SIZES_H
#define ATTNBENCH_SIZES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vkattn/vkattn.h>

#include "args.h"

/* One factor of a size: the flag it comes from ("--m") and its value, the
 * op's default when the flag was not given. */
typedef struct ab_factor {
    const char *flag;
    uint64_t value;
} ab_factor;

/* The most elements one array may have: what a tensor may count and what a
 * host array of floats may hold. */
#define AB_MAX_ELEMENTS                                                                        \
    ((uint64_t)SIZE_MAX / sizeof(float) < UINT64_MAX / sizeof(float)                          \
         ? (uint64_t)SIZE_MAX / sizeof(float)                                                  \
         : UINT64_MAX / sizeof(float))

/* True when the array `what` of op, of f[0] x ... x f[n-1] elements, has at
 * most AB_MAX_ELEMENTS; else false after a usage message on stderr naming
 * the flags ("attnbench: matmul: A: --batch x --m x --k = 1073741824 x
 * 1073741824 x 4 elements, more than an array holds ..."). */
bool ab_elements_fit(const char *op, const char *what, size_t n, const ab_factor *f);
/* The same for a width that a tensor dim or a desc field takes as one
 * uint32_t (H * dk of a head merge): at most UINT32_MAX, else a usage
 * message ("attnbench: heads: the merged width: --heads x --dk = ..."). */
bool ab_width_fits(const char *op, const char *what, size_t n, const ab_factor *f);

#define AB_FACTORS(...) (sizeof((ab_factor[]){__VA_ARGS__}) / sizeof(ab_factor)), (ab_factor[]){__VA_ARGS__}
/* ab_elements_fit / ab_width_fits with the factors listed: AB_FITS("matmul",
 * "A", {"--batch", b}, {"--m", m}, {"--k", k}) */
#define AB_FITS(op, what, ...) ab_elements_fit(op, what, AB_FACTORS(__VA_ARGS__))
#define AB_WIDTH_FITS(op, what, ...) ab_width_fits(op, what, AB_FACTORS(__VA_ARGS__))

/* An op's setup when the library refused to create one of its tensors or
 * layers: for VKATTN_ERROR_DEVICE_LIMIT and VKATTN_ERROR_SIZE_OVERFLOW (sizes
 * this device cannot take) a usage message naming the size flags given and
 * the library's reason, and ATTNBENCH_EXIT_USAGE; anything else as
 * ab_report (ATTNBENCH_EXIT_CHECK). */
int ab_setup_refused(vkattn_context *ctx, vkattn_result r, const char *op, const ab_args *a,
                     const char *what);

#endif
