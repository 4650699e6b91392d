/* The key bias's gradient of an f16 MultiHeadAttention or
 * GroupedQueryAttention backward: what its error may be
 * (tests/gpu/test_mha_backward.c, test_gqa_backward.c).
 *
 * In exact arithmetic it is zero: the key bias shifts every logit of query
 * row i by the same q_i . b_k, softmax ignores the shift, so the row of dS
 * sums to zero and the bias gradient, scale * sum_i (sum_j dS_ij) q_i,
 * vanishes. The fused backward (FlashAttention-2's) takes
 * D_i = dO_i . O_i from the kept output, which an f16 layer keeps in f16, so
 * the row sums to dO_i . (O_i - f16(O_i)) instead: up to
 * 2^-11 sum_c |dO_ic| |O_ic|. Its gradient is then no relative error of a
 * zero but this sum, per key/value head k and element e:
 *
 *   |got_ke| <= 2^-10 scale s max|V_k| sum_{b, i, h in k's group} (sum_c |dO_bihc|) |Q_bihe|
 *
 * with |O| <= s max|V_k| (a convex combination of the values, times the
 * dropout scale s), dO bounded by grad_output @ Wo^T (the gate multiplies it
 * by a sigmoid below 1), Q and V the projections with their biases. 2^-10,
 * twice the rounding, covers the f32 arithmetic (about 2^-20 relative) and
 * the f16 rounding of the Q and V heads the kernels read. The test adds this
 * to the gradient's relative bound. The chained backward's row sums vanish
 * to f32 rounding, well inside it. */
#ifndef VKATTN_TEST_KEY_BIAS_BOUND_H
#define VKATTN_TEST_KEY_BIAS_BOUND_H

#include "random_case.h"

#include <math.h>
#include <stdlib.h>

typedef struct kb_call {
    rc_mha_widths w; /* w.Hkv key/value heads; H / Hkv query heads share one */
    uint32_t batch, tq, tv;
    float dropout; /* the layer's rate where the call trains, else 0 */
    const float *query, *value, *grad_out; /* (B, Tq, Dq), (B, Tv, Dv), (B, Tq, Dout) */
    const vkattn_mha_weights *weights;     /* Keras layout; biases may be NULL */
} kb_call;

/* Row r of x (rows, k) @ kernel (k, n) + bias, column col. */
static inline double kb_dense(const float *x, size_t r, uint32_t k, const float *kernel,
                              const float *bias, uint32_t n, uint32_t col)
{
    double acc = bias ? bias[col] : 0.0;
    for (uint32_t a = 0; a < k; a++)
        acc += (double)x[r * k + a] * kernel[(size_t)a * n + col];
    return acc;
}

/* The bound above for each of the Hkv * dk key bias elements (malloc'd). */
static inline double *kb_bounds(const kb_call *c)
{
    const rc_mha_widths w = c->w;
    const vkattn_mha_weights *wt = c->weights;
    const uint32_t group = w.H / w.Hkv, nq = w.H * w.dk, nv = w.Hkv * w.dv;
    const double s = c->dropout > 0.0f ? 1.0 / (1.0 - c->dropout) : 1.0;
    const double scale = 1.0 / sqrt((double)w.dk);
    double *bound = calloc((size_t)w.Hkv * w.dk, sizeof *bound);
    double *vmax = calloc(w.Hkv, sizeof *vmax);
    if (!bound || !vmax)
        abort();
    for (size_t r = 0; r < (size_t)c->batch * c->tv; r++)
        for (uint32_t col = 0; col < nv; col++) {
            const double v = fabs(kb_dense(c->value, r, w.Dv, wt->value_kernel, wt->value_bias,
                                           nv, col));
            if (v > vmax[col / w.dv])
                vmax[col / w.dv] = v;
        }
    for (size_t r = 0; r < (size_t)c->batch * c->tq; r++)
        for (uint32_t h = 0; h < w.H; h++) {
            double dout = 0.0; /* sum_c |dO_c| of head h: grad_output @ Wo^T */
            for (uint32_t col = 0; col < w.dv; col++) {
                double acc = 0.0;
                for (uint32_t o = 0; o < w.Dout; o++)
                    acc += (double)c->grad_out[r * w.Dout + o] *
                           wt->output_kernel[((size_t)h * w.dv + col) * w.Dout + o];
                dout += fabs(acc);
            }
            const uint32_t k = h / group;
            for (uint32_t e = 0; e < w.dk; e++) {
                const double q = kb_dense(c->query, r, w.Dq, wt->query_kernel, wt->query_bias, nq,
                                          h * w.dk + e);
                bound[(size_t)k * w.dk + e] += dout * fabs(q);
            }
        }
    for (uint32_t k = 0; k < w.Hkv; k++)
        for (uint32_t e = 0; e < w.dk; e++)
            bound[(size_t)k * w.dk + e] *= 0x1p-10 * scale * s * vmax[k];
    free(vmax);
    return bound;
}

/* max(|got - ref| - allowed, 0) / max(max|ref|, floor): what is left of the
 * error past `allowed`, relative as tu_max_rel_err; NaN where got is. */
static inline double kb_rel_err_past(const float *got, const float *ref, const double *allowed,
                                     size_t n, double floor)
{
    double scale = floor, worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (fabs(ref[i]) > scale)
            scale = fabs(ref[i]);
        const double past = fabs((double)got[i] - ref[i]) - allowed[i];
        if (isnan(past))
            return NAN;
        if (past > worst)
            worst = past;
    }
    return worst / scale;
}

#endif /* VKATTN_TEST_KEY_BIAS_BOUND_H */
