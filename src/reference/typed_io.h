/* Elements of the typed CPU reference's host arrays (vkattn/dtype.h): f32
 * floats or f16 bit patterns, read exactly and written rounded once, by the
 * type's row of core/dtype.h. No
 * Vulkan header may be included here. */
#ifndef VKA_REFERENCE_TYPED_IO_H
#define VKA_REFERENCE_TYPED_IO_H

#include <stddef.h>
#include <stdint.h>

#include "vkattn/dtype.h"
#include "vkattn/result.h"

/* Element i of an array of type t, exactly. */
double vka_ref_load(const void *x, vkattn_dtype t, size_t i);

/* Stores v as element i, rounded once to nearest even (core/dtype.h's
 * store: f16 by vka_f16_from_double, f32 as (float)v). */
void vka_ref_store(void *x, vkattn_dtype t, size_t i, double v);

/* INVALID_ARGUMENT "fn: types->name is N; must be ..." for an unknown dtype. */
vkattn_result vka_ref_check_dtype(const char *fn, const char *name, vkattn_dtype t);

/* vka_ref_check_dtype for each of n types, named by names[i]. */
vkattn_result vka_ref_check_dtypes(const char *fn, const vkattn_dtype *types,
                                   const char *const *names, int n);

/* Bytes per element of type t (core/dtype.h). */
size_t vka_ref_dtype_size(vkattn_dtype t);

#endif /* VKA_REFERENCE_TYPED_IO_H */
