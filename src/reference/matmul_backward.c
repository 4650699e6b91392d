/* CPU reference of the batched matmul's gradients: naive loops, double
 * accumulation; gradients of operands that several matrices (b, h) reach are
 * summed in double before the one rounding to float. */
#include "vkattn/reference_backward.h"

#include <stdlib.h>

#include "core/error.h"
#include "core/matmul_shape.h"
#include "reference/ref_internal.h"

static const char fn[] = "vkattn_reference_matmul_backward";

/* Element of a stored operand for op-index (r, c) of matrix (b, h). */
static size_t at(const vka_operand *o, bool transposed, size_t b, size_t h, size_t r, size_t c)
{
    if (transposed) {
        size_t t = r;
        r = c, c = t;
    }
    return b * o->batch_stride + h * o->head_stride + r * o->row_stride + c;
}

/* A gradient in the operand's stored layout: double sums plus which elements
 * some matrix reaches, written back once. */
typedef struct grad_acc {
    double *sum;
    unsigned char *hit;
} grad_acc;

static vkattn_result acc_alloc(const vka_operand *o, grad_acc *g)
{
    g->sum = calloc(o->extent, sizeof *g->sum);
    g->hit = calloc(o->extent, 1);
    if (!g->sum || !g->hit) {
        free(g->sum), free(g->hit);
        return vka_fail(NULL, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
    }
    return VKATTN_SUCCESS;
}

static void acc_store(const vka_operand *o, grad_acc *g, float *out)
{
    for (size_t e = 0; e < o->extent; e++)
        if (g->hit[e])
            out[e] = (float)g->sum[e];
    free(g->sum), free(g->hit);
}

static vkattn_result check(const vkattn_matmul_params *p, const float *a, const float *b,
                           const float *grad_c, const float *grad_a, const float *grad_b,
                           const float *grad_bias, vka_matmul_shape *s)
{
    vkattn_result r;
    if ((r = vka_ref_require_ptr(fn, "p", p)) || (r = vka_ref_require_ptr(fn, "grad_c", grad_c)))
        return r;
    if ((r = vka_matmul_resolve(NULL, fn, p, s)))
        return r;
    const vka_operand *ops[] = {&s->a, &s->b, &s->c};
    for (int i = 0; i < 3; i++)
        if (ops[i]->extent >= SIZE_MAX / sizeof(double))
            return vka_fail(NULL, VKATTN_ERROR_SIZE_OVERFLOW, "%s: an operand's extent overflows",
                            fn);
    if (grad_a && (r = vka_ref_require_ptr(fn, "b (needed for grad_a)", b)))
        return r;
    if (grad_b && (r = vka_ref_require_ptr(fn, "a (needed for grad_b)", a)))
        return r;
    if (grad_bias && !p->has_bias)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: grad_bias is given but p->has_bias is false", fn);
    const void *ins[] = {a, b, grad_c};
    const void *outs[] = {grad_a, grad_b, grad_bias};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3 && outs[i]; j++)
            if (outs[i] == ins[j] || (j > i && outs[i] == outs[j]))
                return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT,
                                "%s: a gradient array must not be an input or another gradient",
                                fn);
    return VKATTN_SUCCESS;
}

vkattn_result vkattn_reference_matmul_backward(const vkattn_matmul_params *p, const float *a,
                                               const float *b, const float *grad_c, float *grad_a,
                                               float *grad_b, float *grad_bias)
{
    vka_matmul_shape s;
    vkattn_result r = check(p, a, b, grad_c, grad_a, grad_b, grad_bias, &s);
    if (r)
        return r;
    const double alpha = s.alpha;
    const bool ta = p->transpose_a, tb = p->transpose_b;
    grad_acc ga = {0}, gb = {0};
    if (grad_a && (r = acc_alloc(&s.a, &ga)))
        return r;
    if (grad_b && (r = acc_alloc(&s.b, &gb))) {
        free(ga.sum), free(ga.hit);
        return r;
    }
    for (size_t bi = 0; bi < s.batch; bi++)
        for (size_t hi = 0; hi < s.heads; hi++) {
            /* d op(A)(i, kk) = alpha sum_n dC(i, n) op(B)(kk, n) */
            for (size_t i = 0; grad_a && i < s.m; i++)
                for (size_t kk = 0; kk < s.k; kk++) {
                    double sum = 0.0;
                    for (size_t n = 0; n < s.n; n++)
                        sum += (double)grad_c[at(&s.c, false, bi, hi, i, n)] *
                               b[at(&s.b, tb, bi, hi, kk, n)];
                    const size_t e = at(&s.a, ta, bi, hi, i, kk);
                    ga.sum[e] += alpha * sum;
                    ga.hit[e] = 1;
                }
            /* d op(B)(kk, n) = alpha sum_i op(A)(i, kk) dC(i, n) */
            for (size_t kk = 0; grad_b && kk < s.k; kk++)
                for (size_t n = 0; n < s.n; n++) {
                    double sum = 0.0;
                    for (size_t i = 0; i < s.m; i++)
                        sum += (double)a[at(&s.a, ta, bi, hi, i, kk)] *
                               grad_c[at(&s.c, false, bi, hi, i, n)];
                    const size_t e = at(&s.b, tb, bi, hi, kk, n);
                    gb.sum[e] += alpha * sum;
                    gb.hit[e] = 1;
                }
        }
    if (grad_a)
        acc_store(&s.a, &ga, grad_a);
    if (grad_b)
        acc_store(&s.b, &gb, grad_b);
    for (size_t n = 0; grad_bias && n < s.n; n++) {
        double sum = 0.0;
        for (size_t bi = 0; bi < s.batch; bi++)
            for (size_t hi = 0; hi < s.heads; hi++)
                for (size_t i = 0; i < s.m; i++)
                    sum += grad_c[at(&s.c, false, bi, hi, i, n)];
        grad_bias[n] = (float)sum;
    }
    return VKATTN_SUCCESS;
}
