/* Host-array elements for the typed CPU reference (typed_io.h): reads and
 * rounding are the element type's row of core/dtype.h. */
#include "reference/typed_io.h"

#include "core/dtype.h"
#include "core/error.h"

/* an unchecked type reads as f32, as before the caller's check refuses it */
static const vka_dtype_info *row(vkattn_dtype t)
{
    const vka_dtype_info *d = vka_dtype_tensor(t);
    return d ? d : vka_dtype_info_of(VKATTN_DTYPE_F32);
}

double vka_ref_load(const void *x, vkattn_dtype t, size_t i) { return row(t)->load(x, i); }

void vka_ref_store(void *x, vkattn_dtype t, size_t i, double v) { row(t)->store(x, i, v); }

vkattn_result vka_ref_check_dtype(const char *fn, const char *name, vkattn_dtype t)
{
    if (!vka_dtype_tensor(t))
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: types->%s is %d; must be " VKA_DTYPE_TENSOR_LIST, fn, name, (int)t);
    return VKATTN_SUCCESS;
}

vkattn_result vka_ref_check_dtypes(const char *fn, const vkattn_dtype *types,
                                   const char *const *names, int n)
{
    for (int i = 0; i < n; i++) {
        vkattn_result r = vka_ref_check_dtype(fn, names[i], types[i]);
        if (r)
            return r;
    }
    return VKATTN_SUCCESS;
}

size_t vka_ref_dtype_size(vkattn_dtype t) { return row(t)->size; }
