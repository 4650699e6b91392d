/* What the kept f16 output adds to the error of an f16 MultiHeadAttention or
 * GroupedQueryAttention backward (a bf16 layer's: the same with its half
 * spacing 2^-8 in place of 2^-11, ko_call.bf16) (tests/gpu/test_mha_backward.c,
 * test_gqa_backward.c): the allowance beyond the relative bound.
 *
 * The fused backward (FlashAttention-2's) takes D_i = dO_i . O_i from the
 * kept output, which an f16 layer keeps in f16, where the exact row would
 * have dO_i . (P V)_i: each row of dS = P (dP - D) then carries
 * -P_ij dD_i with |dD_i| <= 2^-11 sum_c |dO_ic| |O_ic|. The error is of the
 * size of the output, not of the gradient, so the relative bound misses it
 * where a gradient nearly cancels: the key bias's is zero in exact
 * arithmetic (softmax ignores a shift of a row's logits), and dQ of a row
 * whose softmax is saturated (one key left by the masks) is too. Bounded
 * per row with |O_c| <= s max_j |V_jc| (a convex combination of the
 * values of the batch and head, times the dropout scale s) and dO by
 * grad_output @ Wo^T (the gate multiplies it by a sigmoid below 1); 1.25
 * roundings cover the f32 arithmetic of O in the forward and of P V in the
 * backward (at most (Tv + 4) 2^-24 of s max|V|, Tv <= 13 here):
 *
 *   dD_bih <= 1.25 2^-11 sum_c |dO_bihc| s max_j |V_bjk(h)c|
 *   dQ_bihe: scale dD_bih max_j |K_bjke|          (sum_j P_ij = 1)
 *   dK_bjke: scale sum_{i, h of k} dD_bih |Q_bihe| (P_ij <= 1)
 *   key bias: the same summed over b, once       (sum_j P_ij = 1)
 *
 * and through the projections' backward as the sums of magnitudes they take
 * (the query and key kernels, the query bias, grad_query and the key input's
 * gradient). dV = P^T dO has no D: the value and output paths add nothing.
 *
 * The gate (use_gate) keeps two more f16 tensors, the context C it scales
 * and its logits g; its gradient dg = dy C s (1 - s), s = sigmoid(g), takes
 * C's rounding (2^-11 |C|, |C_bihc| <= s max_j |V_bjk(h)c| as above) and
 * the logits' (2^-11 |g| moves s (1 - s) by at most |g| |1 - 2s| of
 * itself), per element, with dy = grad_output @ Wo^T:
 *
 *   dg_bihc: 1.25 2^-11 |dy| s max|V| s (1 - s) (1 + |g| |1 - 2s|)
 *
 * and the gate bias sums it over the rows (b, i), where it cancels as the
 * key bias does (seed 5231815221155864882 in GPU tuning: 0.73 of the bound
 * without it); the gate kernel and grad_query take its projection sums.
 * The chained backward recomputes the softmax and its rows of dS sum to f32
 * rounding, well inside these. */
#ifndef VKATTN_TEST_KEPT_OUTPUT_BOUND_H
#define VKATTN_TEST_KEPT_OUTPUT_BOUND_H

#include "random_case.h"

#include <math.h>
#include <stdlib.h>

typedef struct ko_call {
    rc_mha_widths w; /* w.Hkv key/value heads; H / Hkv query heads share one */
    uint32_t batch, tq, tv;
    float dropout; /* the layer's rate where the call trains, else 0 */
    const float *query, *value, *key; /* key NULL: the key path reads value */
    const float *grad_out;            /* (B, Tq, Dout) */
    const vkattn_mha_weights *weights; /* Keras layout; biases may be NULL */
    bool use_gate;                     /* the weights' gate kernel (and bias) are used */
    bool bf16;                         /* the layer keeps bf16 (2^-8), else f16 (2^-11) */
} ko_call;

/* 1.25 half spacings of the kept dtype (the comment above). */
static inline double ko_round(const ko_call *c)
{
    return c->bf16 ? 0x1.4p-8 : 0x1.4p-11;
}

/* The gradients the kept output reaches: of the query, of the key path's
 * input (grad_key, or grad_value when the key is the value), of the query,
 * key and gate kernels and biases. */
enum { KO_QUERY, KO_KEY_IN, KO_WQ, KO_BQ, KO_WK, KO_BK, KO_WG, KO_BG, KO_N };

typedef struct ko_allowance {
    double *a[KO_N]; /* per element, in the gradient's layout */
} ko_allowance;

static inline double *ko_zeros(size_t n)
{
    double *x = calloc(n ? n : 1, sizeof *x);
    if (!x)
        abort();
    return x;
}

/* x (rows, k) @ kernel (k, n) + bias, as doubles. */
static inline double *ko_dense(const float *x, size_t rows, uint32_t k, const float *kernel,
                               const float *bias, uint32_t n)
{
    double *y = ko_zeros(rows * n);
    for (size_t r = 0; r < rows; r++)
        for (uint32_t col = 0; col < n; col++) {
            double acc = bias ? bias[col] : 0.0;
            for (uint32_t a = 0; a < k; a++)
                acc += (double)x[r * k + a] * kernel[(size_t)a * n + col];
            y[r * n + col] = acc;
        }
    return y;
}

/* s max_j |V_bjkc|, the bound on |O_bihc| (and the gate's |C_bihc|),
 * (B, Hkv * dv). */
static inline double *ko_value_max(const ko_call *c, const double *vproj)
{
    const uint32_t nv = c->w.Hkv * c->w.dv;
    const double s = c->dropout > 0.0f ? 1.0 / (1.0 - c->dropout) : 1.0;
    double *vmax = ko_zeros((size_t)c->batch * nv);
    for (uint32_t b = 0; b < c->batch; b++)
        for (uint32_t j = 0; j < c->tv; j++)
            for (uint32_t col = 0; col < nv; col++)
                vmax[b * nv + col] = fmax(vmax[b * nv + col],
                                          s * fabs(vproj[((size_t)b * c->tv + j) * nv + col]));
    return vmax;
}

/* |dO|, dO = grad_output @ Wo^T, (B * Tq, H * dv): the gradient reaching
 * the (gated) context. */
static inline double *ko_context_grad(const ko_call *c)
{
    const rc_mha_widths w = c->w;
    const uint32_t n = w.H * w.dv;
    double *d = ko_zeros((size_t)c->batch * c->tq * n);
    for (size_t r = 0; r < (size_t)c->batch * c->tq; r++)
        for (uint32_t col = 0; col < n; col++) {
            double acc = 0.0;
            for (uint32_t o = 0; o < w.Dout; o++)
                acc += (double)c->grad_out[r * w.Dout + o] *
                       c->weights->output_kernel[(size_t)col * w.Dout + o];
            d[r * n + col] = fabs(acc);
        }
    return d;
}

/* dD_bih of the comment above, (B * Tq, H). */
static inline double *ko_row_errors(const ko_call *c, const double *vmax, const double *dctx)
{
    const rc_mha_widths w = c->w;
    const uint32_t nv = w.Hkv * w.dv, group = w.H / w.Hkv;
    double *dd = ko_zeros((size_t)c->batch * c->tq * w.H);
    for (size_t r = 0; r < (size_t)c->batch * c->tq; r++)
        for (uint32_t h = 0; h < w.H; h++) {
            double sum = 0.0; /* sum_c |dO_c| |O_c| */
            for (uint32_t col = 0; col < w.dv; col++)
                sum += dctx[r * w.H * w.dv + h * w.dv + col] *
                       vmax[(r / c->tq) * nv + (h / group) * w.dv + col];
            dd[r * w.H + h] = ko_round(c) * sum;
        }
    return dd;
}

/* The gate's part (the comment above) into out's query, gate kernel and
 * gate bias allowances. */
static inline void ko_gate(const ko_call *c, const double *vmax, const double *dctx,
                           ko_allowance *out)
{
    const rc_mha_widths w = c->w;
    const vkattn_mha_weights *wt = c->weights;
    const uint32_t n = w.H * w.dv, nv = w.Hkv * w.dv, group = w.H / w.Hkv;
    double *g = ko_dense(c->query, (size_t)c->batch * c->tq, w.Dq, wt->gate_kernel,
                         wt->gate_bias, n);
    for (size_t r = 0; r < (size_t)c->batch * c->tq; r++)
        for (uint32_t col = 0; col < n; col++) {
            const double x = g[r * n + col], s = 1.0 / (1.0 + exp(-x));
            const double cmax = vmax[(r / c->tq) * nv + (col / w.dv / group) * w.dv + col % w.dv];
            const double a = ko_round(c) * dctx[r * n + col] * cmax * s * (1.0 - s) *
                             (1.0 + fabs(x) * fabs(1.0 - 2.0 * s));
            out->a[KO_BG][col] += a;
            for (uint32_t k = 0; k < w.Dq; k++) {
                out->a[KO_WG][(size_t)k * n + col] += fabs(c->query[r * w.Dq + k]) * a;
                out->a[KO_QUERY][r * w.Dq + k] += a * fabs(wt->gate_kernel[(size_t)k * n + col]);
            }
        }
    free(g);
}

static inline void ko_allowances(const ko_call *c, ko_allowance *out)
{
    const rc_mha_widths w = c->w;
    const vkattn_mha_weights *wt = c->weights;
    const uint32_t B = c->batch, Tq = c->tq, Tv = c->tv, group = w.H / w.Hkv, dk = w.dk;
    const uint32_t nq = w.H * dk, nk = w.Hkv * dk;
    const double scale = 1.0 / sqrt((double)dk);
    const float *key = c->key ? c->key : c->value;
    double *q = ko_dense(c->query, (size_t)B * Tq, w.Dq, wt->query_kernel, wt->query_bias, nq);
    double *k = ko_dense(key, (size_t)B * Tv, w.Dk, wt->key_kernel, wt->key_bias, nk);
    double *v = ko_dense(c->value, (size_t)B * Tv, w.Dv, wt->value_kernel, wt->value_bias,
                         w.Hkv * w.dv);
    double *vmax = ko_value_max(c, v), *dctx = ko_context_grad(c);
    double *dd = ko_row_errors(c, vmax, dctx);
    double *aq = ko_zeros((size_t)B * Tq * nq); /* dQ's, (B * Tq, H * dk) */
    double *ak = ko_zeros((size_t)B * nk);      /* dK's, any row j of batch b */
    double *kmax = ko_zeros((size_t)B * nk), *inmax = ko_zeros((size_t)B * w.Dk);
    for (uint32_t b = 0; b < B; b++)
        for (uint32_t j = 0; j < Tv; j++) {
            const size_t r = (size_t)b * Tv + j;
            for (uint32_t col = 0; col < nk; col++)
                kmax[b * nk + col] = fmax(kmax[b * nk + col], fabs(k[r * nk + col]));
            for (uint32_t a = 0; a < w.Dk; a++)
                inmax[b * w.Dk + a] = fmax(inmax[b * w.Dk + a], fabs(key[r * w.Dk + a]));
        }
    for (uint32_t b = 0; b < B; b++)
        for (uint32_t i = 0; i < Tq; i++)
            for (uint32_t h = 0; h < w.H; h++)
                for (uint32_t e = 0; e < dk; e++) {
                    const size_t r = (size_t)b * Tq + i, kc = (h / group) * dk + e;
                    const double d = scale * dd[r * w.H + h];
                    aq[r * nq + h * dk + e] = d * kmax[b * nk + kc];
                    ak[b * nk + kc] += d * fabs(q[r * nq + h * dk + e]);
                }
    for (int g = 0; g < KO_N; g++)
        out->a[g] = NULL;
    out->a[KO_QUERY] = ko_zeros((size_t)B * Tq * w.Dq);
    out->a[KO_KEY_IN] = ko_zeros((size_t)B * Tv * w.Dk);
    out->a[KO_WQ] = ko_zeros((size_t)w.Dq * nq);
    out->a[KO_BQ] = ko_zeros(nq);
    out->a[KO_WK] = ko_zeros((size_t)w.Dk * nk);
    out->a[KO_BK] = ko_zeros(nk);
    out->a[KO_WG] = ko_zeros((size_t)w.Dq * w.H * w.dv);
    out->a[KO_BG] = ko_zeros((size_t)w.H * w.dv);
    if (c->use_gate)
        ko_gate(c, vmax, dctx, out);
    for (size_t r = 0; r < (size_t)B * Tq; r++)
        for (uint32_t col = 0; col < nq; col++) {
            const double x = aq[r * nq + col];
            out->a[KO_BQ][col] += x;
            for (uint32_t a = 0; a < w.Dq; a++) {
                out->a[KO_WQ][(size_t)a * nq + col] += fabs(c->query[r * w.Dq + a]) * x;
                out->a[KO_QUERY][r * w.Dq + a] += x * fabs(wt->query_kernel[(size_t)a * nq + col]);
            }
        }
    for (uint32_t b = 0; b < B; b++)
        for (uint32_t col = 0; col < nk; col++) {
            const double x = ak[b * nk + col];
            out->a[KO_BK][col] += x;
            for (uint32_t a = 0; a < w.Dk; a++) {
                out->a[KO_WK][(size_t)a * nk + col] += inmax[b * w.Dk + a] * x;
                for (uint32_t j = 0; j < Tv; j++)
                    out->a[KO_KEY_IN][((size_t)b * Tv + j) * w.Dk + a] +=
                        x * fabs(wt->key_kernel[(size_t)a * nk + col]);
            }
        }
    free(q), free(k), free(v), free(vmax), free(dctx), free(dd), free(aq), free(ak), free(kmax);
    free(inmax);
}

static inline void ko_free(ko_allowance *x)
{
    for (int g = 0; g < KO_N; g++)
        free(x->a[g]);
}

/* The allowance of gradient `grad` in the multi-head tests' order (query,
 * value, key, then the weights from query_kernel, the gate's last); NULL
 * where none. */
static inline const double *ko_of(const ko_allowance *x, int grad, bool key_given)
{
    switch (grad) {
    case 0: return x->a[KO_QUERY];
    case 1: return key_given ? NULL : x->a[KO_KEY_IN];
    case 2: return x->a[KO_KEY_IN];
    case 3: return x->a[KO_WQ];
    case 4: return x->a[KO_BQ];
    case 5: return x->a[KO_WK];
    case 6: return x->a[KO_BK];
    case 11: return x->a[KO_WG];
    case 12: return x->a[KO_BG];
    default: return NULL;
    }
}

#endif /* VKATTN_TEST_KEPT_OUTPUT_BOUND_H */
