/* CPU reference of the batched matmul op: naive loops, double accumulation.
 * Strides are validated up front so the loops index without further checks. */
#include "vkattn/reference.h"

#include <math.h>

#include "core/check.h"
#include "core/error.h"
#include "reference/ref_internal.h"
#include "reference/typed_io.h"

static const char fn[] = "vkattn_reference_matmul";

/* One operand with its defaults resolved: element strides of batch, head, row. */
typedef struct operand {
    uint64_t bs, hs, ld;
} operand;

static vkattn_result overflow(const char *name)
{
    return vka_fail(NULL, VKATTN_ERROR_SIZE_OVERFLOW,
                    "%s: the strides of %s overflow the address space", fn, name);
}

/* Resolves a layout for a stored rows x cols matrix and checks that its last
 * element, (batch-1)*bs + (heads-1)*hs + (rows-1)*ld + cols-1, is addressable.
 * For C (packed defaults) zero strides mean packed; for A and B, zero batch and
 * head strides broadcast. */
static vkattn_result resolve(const char *name, const vkattn_matrix_layout *l, uint64_t rows,
                             uint64_t cols, uint64_t batch, uint64_t heads, bool packed_defaults,
                             operand *o)
{
    if (l->row_stride != 0 && l->row_stride < cols)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %s.row_stride is %u; must be 0 or >= %llu (its stored column count)",
                        fn, name, l->row_stride, (unsigned long long)cols);
    o->ld = l->row_stride ? l->row_stride : cols;
    o->hs = l->head_stride;
    o->bs = l->batch_stride;
    if (packed_defaults && o->hs == 0 && !vka_mul_u64(rows, o->ld, &o->hs))
        return overflow(name);
    if (packed_defaults && o->bs == 0 && !vka_mul_u64(heads * rows, o->ld, &o->bs))
        return overflow(name);
    uint64_t t, last = cols - 1;
    if (!vka_mul_u64(rows - 1, o->ld, &t) || !vka_add_u64(last, t, &last) ||
        !vka_mul_u64(heads - 1, o->hs, &t) || !vka_add_u64(last, t, &last) ||
        !vka_mul_u64(batch - 1, o->bs, &t) || !vka_add_u64(last, t, &last) ||
        last >= SIZE_MAX / sizeof(float))
        return overflow(name);
    return VKATTN_SUCCESS;
}

static vkattn_result check(const vkattn_matmul_params *p, const void *a, const void *b,
                           const void *bias, const void *c)
{
    vkattn_result r;
    if ((r = vka_ref_require_ptr(fn, "p", p)))
        return r;
    if ((r = vka_ref_require_dim(fn, "m", p->m)) || (r = vka_ref_require_dim(fn, "n", p->n)) ||
        (r = vka_ref_require_dim(fn, "k", p->k)) ||
        (r = vka_ref_require_finite(fn, "alpha", p->alpha)) ||
        (r = vka_ref_require_ptr(fn, "a", a)) || (r = vka_ref_require_ptr(fn, "b", b)) ||
        (r = vka_ref_require_ptr(fn, "c", c)))
        return r;
    return vka_ref_require_flagged(fn, "bias", "has_bias", p->has_bias, bias);
}

static vkattn_result check_types(const vkattn_matmul_dtypes *t)
{
    const vkattn_dtype all[4] = {t->a, t->b, t->bias, t->c};
    static const char *const names[4] = {"a", "b", "bias", "c"};
    return vka_ref_check_dtypes(__func__, all, names, 4);
}

vkattn_result vkattn_reference_matmul(const vkattn_matmul_params *p,
                                            const vkattn_matmul_dtypes *types, const void *a,
                                            const void *b, const void *bias, void *c)
{
    const vkattn_matmul_dtypes ty = types ? *types : (vkattn_matmul_dtypes){0};
    vkattn_result r;
    if ((r = check(p, a, b, bias, c)) || (r = check_types(&ty)))
        return r;
    const uint64_t batch = vka_default_u32(p->batch, 1), heads = vka_default_u32(p->heads, 1);
    const uint64_t m = p->m, n = p->n, k = p->k;
    operand oa, ob, oc;
    if ((r = resolve("a", &p->a, p->transpose_a ? k : m, p->transpose_a ? m : k, batch, heads,
                     false, &oa)) ||
        (r = resolve("b", &p->b, p->transpose_b ? n : k, p->transpose_b ? k : n, batch, heads,
                     false, &ob)) ||
        (r = resolve("c", &p->c, m, n, batch, heads, true, &oc)))
        return r;

    /* Element (r, s) of op(X) lives at r*ld + s, or s*ld + r when transposed. */
    const size_t a_row = p->transpose_a ? 1 : oa.ld, a_col = p->transpose_a ? oa.ld : 1;
    const size_t b_row = p->transpose_b ? 1 : ob.ld, b_col = p->transpose_b ? ob.ld : 1;
    const double alpha = vka_default_f32(p->alpha, 1.0f);
    for (uint64_t bi = 0; bi < batch; bi++)
        for (uint64_t h = 0; h < heads; h++) {
            const size_t ab = bi * oa.bs + h * oa.hs, bb = bi * ob.bs + h * ob.hs;
            const size_t cb = bi * oc.bs + h * oc.hs;
            for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j < n; j++) {
                    double s = 0.0;
                    for (size_t q = 0; q < k; q++)
                        s += vka_ref_load(a, ty.a, ab + i * a_row + q * a_col) *
                             vka_ref_load(b, ty.b, bb + q * b_row + j * b_col);
                    s *= alpha;
                    if (p->has_bias)
                        s += vka_ref_load(bias, ty.bias, j);
                    vka_ref_store(c, ty.c, cb + i * oc.ld + j, s);
                }
        }
    return VKATTN_SUCCESS;
}

