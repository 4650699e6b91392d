/* CPU reference of the batched matmul op: naive loops, double accumulation.
 * The params are resolved as the GPU op resolves them (core/matmul_shape.h), so
 * the loops index without further checks. */
#include "vkattn/reference.h"

#include <stdint.h>

#include "core/error.h"
#include "core/matmul_shape.h"
#include "reference/ref_internal.h"
#include "reference/typed_io.h"

static const char fn[] = "vkattn_reference_matmul";

/* The pointers and the bias flag; the params themselves are resolved by
 * vka_matmul_resolve, as the GPU op resolves them, so the two accept the
 * same calls. */
static vkattn_result check(const vkattn_matmul_params *p, const void *a, const void *b,
                           const void *bias, const void *c, vka_matmul_shape *s)
{
    vkattn_result r;
    if ((r = vka_matmul_resolve(NULL, fn, p, s)) || /* params NULL too, as the op says */
        (r = vka_ref_require_ptr(fn, "a", a)) || (r = vka_ref_require_ptr(fn, "b", b)) ||
        (r = vka_ref_require_ptr(fn, "c", c)) ||
        (r = vka_ref_require_flagged(fn, "bias", "has_bias", p->has_bias, bias)))
        return r;
    /* the loops index the arrays with size_t */
    const vka_operand *ops[] = {&s->a, &s->b, &s->c};
    for (int i = 0; i < 3; i++)
        if (ops[i]->extent > SIZE_MAX / sizeof(float))
            return vka_fail(NULL, VKATTN_ERROR_SIZE_OVERFLOW,
                            "%s: the strides of %c overflow the address space", fn, "abc"[i]);
    return VKATTN_SUCCESS;
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
    vka_matmul_shape sh;
    vkattn_result r;
    if ((r = check(p, a, b, bias, c, &sh)) || (r = check_types(&ty)))
        return r;
    const uint64_t batch = sh.batch, heads = sh.heads, m = sh.m, n = sh.n, k = sh.k;
    const vka_operand oa = sh.a, ob = sh.b, oc = sh.c;

    /* Element (r, s) of op(X) lives at r*ld + s, or s*ld + r when transposed. */
    const size_t a_row = p->transpose_a ? 1 : oa.row_stride;
    const size_t a_col = p->transpose_a ? oa.row_stride : 1;
    const size_t b_row = p->transpose_b ? 1 : ob.row_stride;
    const size_t b_col = p->transpose_b ? ob.row_stride : 1;
    const double alpha = sh.alpha;
    for (uint64_t bi = 0; bi < batch; bi++)
        for (uint64_t h = 0; h < heads; h++) {
            const size_t ab = bi * oa.batch_stride + h * oa.head_stride;
            const size_t bb = bi * ob.batch_stride + h * ob.head_stride;
            const size_t cb = bi * oc.batch_stride + h * oc.head_stride;
            for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j < n; j++) {
                    double s = 0.0;
                    for (size_t q = 0; q < k; q++)
                        s += vka_ref_load(a, ty.a, ab + i * a_row + q * a_col) *
                             vka_ref_load(b, ty.b, bb + q * b_row + j * b_col);
                    s *= alpha;
                    if (p->has_bias)
                        s += vka_ref_load(bias, ty.bias, j);
                    vka_ref_store(c, ty.c, cb + i * oc.row_stride + j, s);
                }
        }
    return VKATTN_SUCCESS;
}

