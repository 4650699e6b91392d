/* See matmul_shape.h. */
#include "core/matmul_shape.h"

#include <math.h>

#include "core/check.h"
#include "core/error.h"

/* extent = (batch-1)*bs + (heads-1)*hs + (rows-1)*rs + cols, overflow-checked */
static bool operand_extent(uint32_t batch, uint32_t heads, vka_operand *o)
{
    uint64_t e, t;
    if (!vka_mul_u64(batch - 1, o->batch_stride, &e))
        return false;
    if (!vka_mul_u64(heads - 1, o->head_stride, &t) || !vka_add_u64(e, t, &e))
        return false;
    if (!vka_mul_u64(o->rows - 1, o->row_stride, &t) || !vka_add_u64(e, t, &e))
        return false;
    return vka_add_u64(e, o->cols, &o->extent);
}

static vkattn_result resolve_operand(struct vkattn_context *ctx, const char *caller, char name,
                                     const vkattn_matrix_layout *l, uint64_t rows, uint64_t cols,
                                     const vka_matmul_shape *s, bool packed_batches, vka_operand *o)
{
    o->rows = rows;
    o->cols = cols;
    o->row_stride = l->row_stride ? l->row_stride : cols;
    if (o->row_stride < cols)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: %c.row_stride is %llu; must be >= %llu (its stored columns)", caller,
                        name, (unsigned long long)o->row_stride, (unsigned long long)cols);
    o->head_stride = l->head_stride;
    o->batch_stride = l->batch_stride;
    if (packed_batches) {
        uint64_t matrix;
        if (!vka_mul_u64(rows, o->row_stride, &matrix))
            return vka_fail(ctx, VKATTN_ERROR_SIZE_OVERFLOW, "%s: %c overflows", caller, name);
        if (!o->head_stride)
            o->head_stride = matrix;
        if (!o->batch_stride && !vka_mul_u64(s->heads, o->head_stride, &o->batch_stride))
            return vka_fail(ctx, VKATTN_ERROR_SIZE_OVERFLOW, "%s: %c overflows", caller, name);
    }
    if (!operand_extent(s->batch, s->heads, o))
        return vka_fail(ctx, VKATTN_ERROR_SIZE_OVERFLOW, "%s: the extent of %c overflows", caller,
                        name);
    return VKATTN_SUCCESS;
}

vkattn_result vka_matmul_resolve(struct vkattn_context *ctx, const char *caller,
                                 const vkattn_matmul_params *p, vka_matmul_shape *s)
{
    if (!p)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: params is NULL", caller);
    const char *zero = !p->m ? "m" : !p->n ? "n" : !p->k ? "k" : NULL;
    if (zero)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is 0; must be >= 1", caller, zero);
    if (!isfinite(p->alpha))
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: alpha is %g; must be finite",
                        caller, (double)p->alpha);
    s->batch = vka_default_u32(p->batch, 1);
    s->heads = vka_default_u32(p->heads, 1);
    s->m = p->m;
    s->n = p->n;
    s->k = p->k;
    s->alpha = vka_default_f32(p->alpha, 1.0f);
    vkattn_result r;
    r = resolve_operand(ctx, caller, 'a', &p->a, p->transpose_a ? p->k : p->m,
                        p->transpose_a ? p->m : p->k, s, false, &s->a);
    if (r == VKATTN_SUCCESS)
        r = resolve_operand(ctx, caller, 'b', &p->b, p->transpose_b ? p->n : p->k,
                            p->transpose_b ? p->k : p->n, s, false, &s->b);
    if (r == VKATTN_SUCCESS)
        r = resolve_operand(ctx, caller, 'c', &p->c, p->m, p->n, s, true, &s->c);
    return r;
}
