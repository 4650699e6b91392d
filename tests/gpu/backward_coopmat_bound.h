/* The extra error of the fused SDPA backward on cooperative-matrix fragments
 * (docs/SEMANTICS.md, SDPA backward; ops/flash_backward_coopmat.h): P keep
 * and dS rounded to f16 before their products. From the reference forward's
 * weights W (before dropout) and out O, s the dropout scale, A_ij =
 * W_ij (s |dO_i . V_j| + |D_i|) >= |dS_ij|, D_i = dO_i . O_i:
 *   dV_j: 2^-11 s max|dO| sum_i W_ij;
 *   dK_j: |scale| max|Q| sum_i (2^-11 A_ij + 2^-25);
 *   dQ_i: |scale| max|K| sum_j (2^-11 A_ij + 2^-25);
 * each the largest over its gradient's elements. Shared by
 * test_sdpa_backward_coopmat.c and test_sdpa_backward.c (whose all-f16
 * fused calls take the kernels on a context running them). */
#ifndef VKATTN_TEST_BACKWARD_COOPMAT_BOUND_H
#define VKATTN_TEST_BACKWARD_COOPMAT_BOUND_H

#include "harness.h"

#include <vkattn/reference.h>

#include <math.h>
#include <stdlib.h>

typedef struct bcb_inputs {
    const float *q, *k, *v, *g, *bias, *vm, *mask;
} bcb_inputs;

static inline double bcb_max_abs(const float *x, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs((double)x[i]));
    return m;
}

static inline void bcb_bound(const vkattn_sdpa_params *p,
                                                 const bcb_inputs *in,
                                                 double *xq, double *xk, double *xv)
{
    vkattn_sdpa_params rp = *p;
    rp.return_weights = true, rp.weights_after_dropout = false;
    const uint32_t h = rp.heads ? rp.heads : 1, hkv = rp.kv_heads ? rp.kv_heads : h;
    const uint32_t g = h / hkv, tv = rp.tv, dk = rp.dk, dv = rp.dv ? rp.dv : rp.dk;
    const size_t rows = (size_t)rp.batch * h * rp.tq, keys = (size_t)rp.batch * hkv * tv;
    float *out = tu_floats(rows * dv), *w = tu_floats(rows * tv);
    double *kv_p = calloc(keys, sizeof *kv_p), *kv_a = calloc(keys, sizeof *kv_a);
    assert_non_null(kv_p);
    assert_non_null(kv_a);
    const vkattn_sdpa_dtypes ty = {0};
    assert_int_equal(vkattn_reference_sdpa(&rp, &ty, in->q, in->k, in->v, in->bias, in->vm,
                                           in->mask, out, w),
                     VKATTN_SUCCESS);
    const double scale = rp.scale != 0.0f ? fabs(rp.scale) : 1.0 / sqrt((double)dk);
    const bool drop = rp.dropout.training && rp.dropout.rate > 0.0f;
    const double s = drop ? 1.0 / (1.0 - rp.dropout.rate) : 1.0;
    double max_q_row = 0.0;
    for (size_t r = 0; r < rows; r++) {
        const size_t b = r / ((size_t)h * rp.tq), head = r / rp.tq % h;
        const size_t key0 = (b * hkv + head / g) * tv;
        double d = 0.0, row = 0.0;
        for (uint32_t e = 0; e < dv; e++)
            d += (double)in->g[r * dv + e] * out[r * dv + e];
        for (uint32_t j = 0; j < tv; j++) {
            double dp = 0.0;
            for (uint32_t e = 0; e < dv; e++)
                dp += (double)in->g[r * dv + e] * in->v[(key0 + j) * dv + e];
            const double pw = w[r * tv + j];
            const double a = 0x1p-11 * pw * (s * fabs(dp) + fabs(d)) + 0x1p-25;
            row += a;
            kv_a[key0 + j] += a;
            kv_p[key0 + j] += pw;
        }
        max_q_row = fmax(max_q_row, row);
    }
    double max_a = 0.0, max_p = 0.0;
    for (size_t j = 0; j < keys; j++)
        max_a = fmax(max_a, kv_a[j]), max_p = fmax(max_p, kv_p[j]);
    *xq = scale * bcb_max_abs(in->k, keys * dk) * max_q_row;
    *xk = scale * bcb_max_abs(in->q, rows * dk) * max_a;
    *xv = 0x1p-11 * s * bcb_max_abs(in->g, rows * dv) * max_p;
    free(out), free(w), free(kv_p), free(kv_a);
}

#endif
