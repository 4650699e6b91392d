/* The cooperative-matrix self-test (ops/coopmat_selftest.h). */
#include "ops/coopmat_selftest.h"

#include "core/error.h"
#include "core/half.h"
#include "core/threads.h"
#include "vk/coopmat.h"
#include "vk/view.h"
#include "vkattn/matmul.h"
#include "vkattn/sdpa.h"
#include "vkattn/sdpa_backward.h"
#include "vkattn/tensor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What one family's test found: the kernels that agreed with the scalar
 * ones (vka_coopmat_kernel bits) and the report. */
typedef struct outcome {
    unsigned passed;
    vkattn_coopmat_check check;
} outcome;

/* ------------------------------------------------------------ the checks */

/* The products: sizes off the 16 grid and the tiles' edges, both transposes,
 * a broadcast B, a strided A, a bias, f16 and f32 outputs, alpha. */
typedef struct matmul_case {
    uint32_t batch, heads, m, n, k;
    bool transpose_a, transpose_b, bias, c16, broadcast_b;
    uint32_t a_pad; /* A's row stride exceeds its stored columns by this */
    float alpha;
} matmul_case;

static const matmul_case matmul_cases[] = {
    {2, 1, 37, 29, 45, false, false, true, false, true, 0, 1.0f},
    {1, 3, 64, 48, 72, true, true, false, true, false, 0, 0.5f},
    {1, 1, 130, 70, 33, false, false, false, false, false, 7, 1.0f},
};

/* The attention tiles: masks (explicit with a head broadcast, value mask),
 * both causal alignments, GQA, Tq and Tv off the tiles, dk and dv that load
 * as single halves and as groups of eight, both masked-row policies, f32
 * and f16 outputs. */
typedef struct flash_case {
    uint32_t batch, heads, kv_heads, tq, tv, dk, dv;
    vkattn_causal causal;
    bool mask, value_mask, out16;
    vkattn_masked_row masked_row;
} flash_case;

static const flash_case flash_cases[] = {
    {1, 4, 2, 45, 70, 40, 24, VKATTN_CAUSAL_BOTTOM_RIGHT, true, false, false,
     VKATTN_MASKED_ROW_ZERO},
    {2, 2, 2, 33, 48, 64, 64, VKATTN_CAUSAL_TOP_LEFT, false, true, true,
     VKATTN_MASKED_ROW_UNIFORM},
};

/* Inputs in [-1, 1) (or 0/1 masks, 80% ones), the same on every device. */
static void fill(float *x, uint64_t n, uint32_t seed, bool mask)
{
    uint32_t s = seed * 2654435761u + 1u;
    for (uint64_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        const float u = (float)(s >> 8) / 16777216.0f;
        x[i] = mask ? (float)(u < 0.8f) : 2.0f * u - 1.0f;
    }
}

/* A tensor of `n` elements, filled as above when `seed` is nonzero. */
static vkattn_result input(vkattn_context *ctx, uint64_t n, bool f16, uint32_t seed, bool mask,
                           vkattn_tensor **out)
{
    const vkattn_tensor_desc d = {
        .rank = 1, .dims = {(uint32_t)n}, .dtype = f16 ? VKATTN_DTYPE_F16 : VKATTN_DTYPE_F32};
    vkattn_result r = vkattn_tensor_create(ctx, &d, out);
    if (r != VKATTN_SUCCESS || !seed)
        return r;
    float *x = malloc(n * sizeof *x);
    if (!x)
        return VKATTN_ERROR_OUT_OF_HOST_MEMORY;
    fill(x, n, seed, mask);
    r = vkattn_tensor_upload(*out, x, 0, n);
    free(x);
    return r;
}

/* One call run on `family` (0 = the scalar kernels), its output downloaded;
 * *taken (if given) says whether it took a kernel of the family. */
typedef vkattn_result (*run_fn)(vkattn_context *ctx, const void *c, vkattn_tensor *const *in,
                                vkattn_tensor *out);

static vkattn_result run_on(vkattn_context *ctx, uint32_t family, run_fn run, const void *c,
                            vkattn_tensor *const *in, vkattn_tensor *out, float *host,
                            uint64_t n, bool *taken)
{
    vka_coopmat_override(ctx, family);
    vkattn_result r = run(ctx, c, in, out);
    if (taken)
        *taken = vka_coopmat_taken();
    vka_coopmat_override(NULL, 0);
    return r == VKATTN_SUCCESS ? vkattn_tensor_download(out, host, 0, n) : r;
}

static vkattn_result run_matmul(vkattn_context *ctx, const void *cv, vkattn_tensor *const *in,
                                vkattn_tensor *out)
{
    const matmul_case *c = cv;
    const uint64_t a_cols = (c->transpose_a ? c->m : c->k) + c->a_pad;
    const uint64_t a_matrix = a_cols * (c->transpose_a ? c->k : c->m);
    const uint64_t b_matrix = (uint64_t)c->k * c->n;
    const vkattn_matmul_params p = {
        .batch = c->batch,
        .heads = c->heads,
        .m = c->m,
        .n = c->n,
        .k = c->k,
        .transpose_a = c->transpose_a,
        .transpose_b = c->transpose_b,
        .has_bias = c->bias,
        .alpha = c->alpha,
        .a = {.batch_stride = a_matrix * c->heads, .head_stride = a_matrix,
              .row_stride = (uint32_t)a_cols},
        .b = {.batch_stride = c->broadcast_b ? 0 : b_matrix * c->heads,
              .head_stride = c->broadcast_b ? 0 : b_matrix},
    };
    const vkattn_matmul_io io = {.a = in[0], .b = in[1], .bias = in[2], .c = out};
    return vkattn_matmul_record(ctx, VKATTN_RUN_NOW, &p, &io);
}

static vkattn_result run_flash(vkattn_context *ctx, const void *cv, vkattn_tensor *const *in,
                               vkattn_tensor *out)
{
    const flash_case *c = cv;
    const vkattn_sdpa_params p = {
        .batch = c->batch,
        .heads = c->heads,
        .kv_heads = c->kv_heads,
        .tq = c->tq,
        .tv = c->tv,
        .dk = c->dk,
        .dv = c->dv,
        .mask = {.causal = c->causal,
                 .masked_row = c->masked_row,
                 .has_mask = c->mask,
                 .mask_broadcast = {.heads = true},
                 .has_value_mask = c->value_mask},
        .path = VKATTN_SDPA_FUSED,
    };
    const vkattn_sdpa_io io = {.q = in[0], .k = in[1], .v = in[2], .mask = in[3],
                               .value_mask = in[4], .out = out};
    return vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, &p, &io);
}

/* A check's verdict: agreed, disagreed (or could not run), or the call took
 * no kernel of the family (no tile fits this context), which proves nothing. */
typedef enum verdict { AGREED, WRONG, NOT_TAKEN } verdict;

/* Runs one check on `family` and on the scalar kernels and compares them:
 * the two may differ by the order of fp32 sums, an f16 output's last bit and,
 * in attention, the f16 rounding of the weights before P V
 * (docs/SEMANTICS.md, SDPA), all below 2^-8 (|scalar| + 1) for these inputs
 * of magnitude below 1; a wrong fragment element moves a result by about 1. */
static verdict compare(vkattn_context *ctx, uint32_t family, run_fn run, const void *c,
                       vkattn_tensor *const *in, vkattn_tensor *out, uint64_t n,
                       const char *what, outcome *o)
{
    float *got = malloc(2 * n * sizeof *got);
    bool taken = false;
    vkattn_result r = got ? VKATTN_SUCCESS : VKATTN_ERROR_OUT_OF_HOST_MEMORY;
    if (r == VKATTN_SUCCESS)
        r = run_on(ctx, family, run, c, in, out, got, n, &taken);
    if (r == VKATTN_SUCCESS && !taken) {
        free(got);
        return NOT_TAKEN;
    }
    if (r == VKATTN_SUCCESS)
        r = run_on(ctx, 0, run, c, in, out, got + n, n, NULL);
    bool ok = r == VKATTN_SUCCESS;
    if (!ok)
        snprintf(o->check.detail, sizeof o->check.detail, "%s did not run: %s", what,
                 vkattn_last_error());
    for (uint64_t i = 0; ok && i < n; i++) {
        const float want = got[n + i];
        if (fabsf(got[i] - want) <= 0x1p-8f * (fabsf(want) + 1.0f))
            continue;
        ok = false;
        o->check.index = i;
        o->check.got = got[i];
        o->check.expected = want;
        /* the case's name (under 64 bytes) and the numbers fit here; the
         * detail keeps what fits of it */
        char line[160];
        snprintf(line, sizeof line, "%s: out[%llu] = %g, expected %g", what,
                 (unsigned long long)i, (double)got[i], (double)want);
        snprintf(o->check.detail, sizeof o->check.detail, "%.*s",
                 (int)sizeof o->check.detail - 1, line);
    }
    free(got);
    return ok ? AGREED : WRONG;
}

static verdict check_matmul(vkattn_context *ctx, uint32_t family, const matmul_case *c,
                         outcome *o)
{
    const uint64_t a_n = (uint64_t)c->batch * c->heads * (c->transpose_a ? c->k : c->m) *
                         ((c->transpose_a ? c->m : c->k) + c->a_pad);
    const uint64_t b_n = (c->broadcast_b ? 1 : (uint64_t)c->batch * c->heads) * c->k * c->n;
    const uint64_t c_n = (uint64_t)c->batch * c->heads * c->m * c->n;
    vkattn_tensor *in[3] = {NULL, NULL, NULL}, *out = NULL;
    vkattn_result r = input(ctx, a_n, true, 1, false, &in[0]);
    if (r == VKATTN_SUCCESS)
        r = input(ctx, b_n, true, 2, false, &in[1]);
    if (r == VKATTN_SUCCESS && c->bias)
        r = input(ctx, c->n, true, 3, false, &in[2]);
    if (r == VKATTN_SUCCESS)
        r = input(ctx, c_n, c->c16, 0, false, &out);
    char what[64];
    snprintf(what, sizeof what, "matmul %ux%ux%ux%u%s%s", c->batch * c->heads, c->m, c->n,
             c->k, c->transpose_a ? " A^T" : "", c->transpose_b ? " B^T" : "");
    verdict v = WRONG;
    if (r != VKATTN_SUCCESS)
        snprintf(o->check.detail, sizeof o->check.detail, "%s: no tensors: %s", what,
                 vkattn_last_error());
    else
        v = compare(ctx, family, run_matmul, c, in, out, c_n, what, o);
    for (int i = 0; i < 3; i++)
        vkattn_tensor_destroy(in[i]);
    vkattn_tensor_destroy(out);
    return v;
}

static verdict check_flash(vkattn_context *ctx, uint32_t family, const flash_case *c, outcome *o)
{
    const uint64_t q_n = (uint64_t)c->batch * c->heads * c->tq * c->dk;
    const uint64_t k_n = (uint64_t)c->batch * c->kv_heads * c->tv * c->dk;
    const uint64_t v_n = (uint64_t)c->batch * c->kv_heads * c->tv * c->dv;
    const uint64_t o_n = (uint64_t)c->batch * c->heads * c->tq * c->dv;
    vkattn_tensor *in[5] = {NULL, NULL, NULL, NULL, NULL}, *out = NULL;
    vkattn_result r = input(ctx, q_n, true, 4, false, &in[0]);
    if (r == VKATTN_SUCCESS)
        r = input(ctx, k_n, true, 5, false, &in[1]);
    if (r == VKATTN_SUCCESS)
        r = input(ctx, v_n, true, 6, false, &in[2]);
    if (r == VKATTN_SUCCESS && c->mask)
        r = input(ctx, (uint64_t)c->batch * c->tq * c->tv, false, 7, true, &in[3]);
    if (r == VKATTN_SUCCESS && c->value_mask)
        r = input(ctx, (uint64_t)c->batch * c->tv, false, 8, true, &in[4]);
    if (r == VKATTN_SUCCESS)
        r = input(ctx, o_n, c->out16, 0, false, &out);
    char what[64];
    snprintf(what, sizeof what, "attention B%u H%u/%u %ux%u d%u/%u%s", c->batch, c->heads,
             c->kv_heads, c->tq, c->tv, c->dk, c->dv,
             c->causal == VKATTN_CAUSAL_BOTTOM_RIGHT ? " causal-br" : " causal");
    verdict v = WRONG;
    if (r != VKATTN_SUCCESS)
        snprintf(o->check.detail, sizeof o->check.detail, "%s: no tensors: %s", what,
                 vkattn_last_error());
    else
        v = compare(ctx, family, run_flash, c, in, out, o_n, what, o);
    for (int i = 0; i < 5; i++)
        vkattn_tensor_destroy(in[i]);
    vkattn_tensor_destroy(out);
    return v;
}

/* The fused backward's check (ops/flash_backward_coopmat.h): one small f16
 * call, GQA, causal bottom-right, sizes off the 16-row and 16-key fragments,
 * its forward (out, lse) from the scalar kernels, against the host's known
 * answer (backward_answer). About 0.35 s on lavapipe's emulation. */
static const vkattn_sdpa_params backward_case = {
    .batch = 1, .heads = 2, .kv_heads = 1, .tq = 21, .tv = 37, .dk = 24, .dv = 16,
    .mask = {.causal = VKATTN_CAUSAL_BOTTOM_RIGHT},
    .path = VKATTN_SDPA_FUSED,
};

enum { BQ, BK, BV, BG, BOUT, BLSE, BDQ, BDK, BDV, BN }; /* the call's tensors */

/* Element counts of the call's tensors. */
static void backward_sizes(const vkattn_sdpa_params *p, uint64_t n[BN])
{
    const uint64_t rows = (uint64_t)p->batch * p->heads * p->tq;
    const uint64_t keys = (uint64_t)p->batch * p->kv_heads * p->tv;
    n[BQ] = n[BDQ] = rows * p->dk;
    n[BK] = n[BDK] = keys * p->dk;
    n[BV] = n[BDV] = keys * p->dv;
    n[BG] = n[BOUT] = rows * p->dv;
    n[BLSE] = rows;
}

/* The check's known answer and each gradient's allowed error, in double on
 * the host. ops/ may not call reference/ (scripts/check-symbols.sh), so this
 * is vkattn_reference_sdpa_backward's arithmetic for the one case (causal
 * bottom-right with Tq <= Tv: no empty row; no mask, bias or dropout):
 * W = softmax(scale Q K^T), O = W V, D_i = dO_i . O_i, dS = W (dO V^T - D),
 * dQ = scale dS K, dK = scale dS^T Q, dV = W^T dO. The error allowed
 * (docs/SEMANTICS.md, SDPA backward; tests/gpu/backward_coopmat_bound.h):
 * 1e-4 of the gradient's scale (the f32 backward's bound; the scale at least
 * 1e-2 and a tenth of the largest gradient) plus the f16 roundings of P and
 * dS: A_ij = W_ij (|dO_i . V_j| + |D_i|); dV: 2^-11 max|dO| max_j sum_i
 * W_ij; dK: scale max|Q| max_j sum_i (2^-11 A_ij + 2^-25); dQ: scale max|K|
 * max_i sum_j (same). A wrong fragment element moves a gradient by about
 * its inputs' size, 1. h[BDQ..BDV] get the answer; false without memory. */
static bool backward_answer(const vkattn_sdpa_params *p, float *const *h, const uint64_t *n,
                            double tol[3])
{
    const uint32_t tq = p->tq, tv = p->tv, dk = p->dk, dv = p->dv, g = p->heads / p->kv_heads;
    const uint64_t keys = n[BV] / dv;
    const double scale = 1.0 / sqrt((double)dk);
    double *w = malloc(tv * sizeof *w), *dp = malloc(tv * sizeof *dp), *o = malloc(dv * sizeof *o);
    double *col = calloc(2 * keys, sizeof *col); /* per key: sum_i W_ij, sum_i A_ij */
    double *grad = calloc(n[BQ] + n[BK] + n[BV], sizeof *grad);
    const bool ok = w && dp && o && col && grad;
    double *dq = grad, *dkk = grad + n[BQ], *dvv = dkk + n[BK], row_a = 0.0;
    for (uint64_t r = 0; ok && r < n[BLSE]; r++) {
        const uint32_t i = (uint32_t)(r % tq), seen = i + tv - tq + 1; /* keys j < seen */
        const uint64_t key0 = r / tq / g * tv;
        const float *q = h[BQ] + r * dk, *dout = h[BG] + r * dv;
        double top = -INFINITY, sum = 0.0, d = 0.0, row = 0.0;
        for (uint32_t j = 0; j < seen; j++) {
            w[j] = 0.0;
            for (uint32_t e = 0; e < dk; e++)
                w[j] += (double)q[e] * h[BK][(key0 + j) * dk + e];
            w[j] *= scale;
            top = fmax(top, w[j]);
        }
        for (uint32_t j = 0; j < seen; j++)
            sum += w[j] = exp(w[j] - top);
        memset(o, 0, dv * sizeof *o);
        for (uint32_t j = 0; j < seen; j++) {
            w[j] /= sum;
            dp[j] = 0.0;
            for (uint32_t e = 0; e < dv; e++) {
                o[e] += w[j] * h[BV][(key0 + j) * dv + e];
                dp[j] += (double)dout[e] * h[BV][(key0 + j) * dv + e];
            }
        }
        for (uint32_t e = 0; e < dv; e++)
            d += dout[e] * o[e];
        for (uint32_t j = 0; j < seen; j++) {
            const uint64_t key = key0 + j;
            const double ds = w[j] * (dp[j] - d), a = 0x1p-11 * w[j] * (fabs(dp[j]) + fabs(d));
            for (uint32_t e = 0; e < dk; e++) {
                dq[r * dk + e] += scale * ds * h[BK][key * dk + e];
                dkk[key * dk + e] += scale * ds * q[e];
            }
            for (uint32_t e = 0; e < dv; e++)
                dvv[key * dv + e] += w[j] * dout[e];
            col[2 * key] += w[j];
            col[2 * key + 1] += a + 0x1p-25;
            row += a + 0x1p-25;
        }
        row_a = fmax(row_a, row);
    }
    double max_in[BN] = {0}, max_grad = 0.0, col_w = 0.0, col_a = 0.0;
    for (uint64_t j = 0; ok && j < keys; j++)
        col_w = fmax(col_w, col[2 * j]), col_a = fmax(col_a, col[2 * j + 1]);
    for (int t = BQ; ok && t <= BDV; t++) {
        const double *x = t >= BDQ ? grad + (t == BDQ ? 0 : t == BDK ? n[BQ] : n[BQ] + n[BK])
                                   : NULL;
        for (uint64_t e = 0; (x || h[t]) && e < n[t]; e++) {
            if (x)
                h[t][n[t] + e] = (float)x[e];
            max_in[t] = fmax(max_in[t], fabs(x ? x[e] : (double)h[t][e]));
        }
        if (t >= BDQ)
            max_grad = fmax(max_grad, max_in[t]);
    }
    const double x[3] = {scale * max_in[BK] * row_a, scale * max_in[BQ] * col_a,
                         0x1p-11 * max_in[BG] * col_w};
    for (int t = 0; ok && t < 3; t++)
        tol[t] = 1e-4 * fmax(max_in[BDQ + t], fmax(1e-2, 0.1 * max_grad)) + x[t];
    free(w), free(dp), free(o), free(col), free(grad);
    return ok;
}

/* Runs the backward on `family`, its forward on the scalar kernels. */
static vkattn_result run_backward(vkattn_context *ctx, uint32_t family, vkattn_tensor *const *t,
                                  bool *taken)
{
    const vkattn_sdpa_params *p = &backward_case;
    const vkattn_sdpa_io fio = {.q = t[BQ], .k = t[BK], .v = t[BV], .out = t[BOUT],
                                .lse = t[BLSE]};
    const vkattn_sdpa_backward_io bio = {.q = t[BQ], .k = t[BK], .v = t[BV], .out = t[BOUT],
                                         .lse = t[BLSE], .grad_out = t[BG], .grad_q = t[BDQ],
                                         .grad_k = t[BDK], .grad_v = t[BDV]};
    vka_coopmat_override(ctx, 0);
    vkattn_result r = vkattn_sdpa_record(ctx, VKATTN_RUN_NOW, p, &fio);
    vka_coopmat_override(ctx, family);
    if (r == VKATTN_SUCCESS)
        r = vkattn_sdpa_backward_record(ctx, VKATTN_RUN_NOW, p, &bio);
    *taken = vka_coopmat_taken();
    vka_coopmat_override(NULL, 0);
    return r;
}

static verdict check_backward(vkattn_context *ctx, uint32_t family, outcome *o)
{
    static const char *const names[3] = {"grad_q", "grad_k", "grad_v"};
    const vkattn_sdpa_params *p = &backward_case;
    uint64_t n[BN];
    backward_sizes(p, n);
    vkattn_tensor *t[BN] = {NULL};
    float *h[BN] = {NULL};
    char what[64];
    snprintf(what, sizeof what, "backward B%u H%u/%u %ux%u d%u/%u", p->batch, p->heads,
             p->kv_heads, p->tq, p->tv, p->dk, p->dv);
    vkattn_result r = VKATTN_SUCCESS;
    for (int i = 0; i < BN && r == VKATTN_SUCCESS; i++) {
        const bool in = i <= BG, out = i >= BDQ;
        h[i] = in || out ? malloc(2 * n[i] * sizeof *h[i]) : NULL; /* gradients: got, ref */
        if ((in || out) && !h[i]) {
            r = VKATTN_ERROR_OUT_OF_HOST_MEMORY;
            break;
        }
        if (in) { /* the f16 values the device stores */
            fill(h[i], n[i], 9 + (uint32_t)i, false);
            for (uint64_t e = 0; e < n[i]; e++)
                h[i][e] = vka_f16_to_f32(vka_f32_to_f16(h[i][e]));
        }
        r = input(ctx, n[i], in, 0, false, &t[i]);
        if (r == VKATTN_SUCCESS && in)
            r = vkattn_tensor_upload(t[i], h[i], 0, n[i]);
    }
    bool taken = false;
    if (r == VKATTN_SUCCESS)
        r = run_backward(ctx, family, t, &taken);
    for (int i = BDQ; r == VKATTN_SUCCESS && i <= BDV; i++)
        r = vkattn_tensor_download(t[i], h[i], 0, n[i]);
    verdict v = r == VKATTN_SUCCESS && !taken ? NOT_TAKEN : WRONG;
    double tol[3];
    if (r == VKATTN_SUCCESS && taken) {
        v = backward_answer(p, h, n, tol) ? AGREED : WRONG;
        if (v == WRONG)
            snprintf(o->check.detail, sizeof o->check.detail, "%s: out of host memory", what);
    } else if (r != VKATTN_SUCCESS) {
        snprintf(o->check.detail, sizeof o->check.detail, "%s did not run: %s", what,
                 vkattn_last_error());
    }
    for (int g = 0; v == AGREED && g < 3; g++) {
        const float *got = h[BDQ + g], *want = got + n[BDQ + g];
        for (uint64_t i = 0; v == AGREED && i < n[BDQ + g]; i++) {
            if (fabs((double)got[i] - want[i]) <= tol[g])
                continue;
            v = WRONG;
            o->check.index = i;
            o->check.got = got[i];
            o->check.expected = want[i];
            char line[160];
            snprintf(line, sizeof line, "%s: %s[%llu] = %g, expected %g", what, names[g],
                     (unsigned long long)i, (double)got[i], (double)want[i]);
            snprintf(o->check.detail, sizeof o->check.detail, "%.*s",
                     (int)sizeof o->check.detail - 1, line);
        }
    }
    for (int i = 0; i < BN; i++) {
        vkattn_tensor_destroy(t[i]);
        free(h[i]);
    }
    return v;
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The checks of one kernel: how many agreed, and whether one disagreed (its
 * report in *o, the first of this kernel's). */
typedef struct tally {
    unsigned agreed;
    bool wrong;
} tally;

static void count(tally *t, verdict v)
{
    t->agreed += v == AGREED;
    t->wrong |= v == WRONG;
}

/* The whole test of one family: its matmul, its attention kernel where the
 * context could run it, and its fused backward likewise. A kernel passes
 * when every check that took it agreed and at least one did; the first wrong
 * element is reported (the matmul's, else the attention's, else the
 * backward's). */
static void test_family(vkattn_context *ctx, uint32_t family, outcome *o)
{
    memset(o, 0, sizeof *o);
    tally mm = {0}, fl = {0}, bw = {0};
    for (size_t i = 0; i < COUNT(matmul_cases) && !mm.wrong; i++)
        count(&mm, check_matmul(ctx, family, &matmul_cases[i], o));
    const bool flash = vka_coopmat_candidates(ctx, VKA_COOPMAT_FLASH) & family;
    outcome flash_o = *o, backward_o = *o;
    for (size_t i = 0; flash && i < COUNT(flash_cases) && !fl.wrong; i++)
        count(&fl, check_flash(ctx, family, &flash_cases[i], &flash_o));
    if (vka_coopmat_candidates(ctx, VKA_COOPMAT_BACKWARD) & family)
        count(&bw, check_backward(ctx, family, &backward_o));
    if (!mm.wrong && fl.wrong)
        o->check = flash_o.check;
    else if (!mm.wrong && bw.wrong)
        o->check = backward_o.check;
    o->passed = (!mm.wrong && mm.agreed ? VKA_COOPMAT_MATMUL : 0) |
                (!fl.wrong && fl.agreed ? VKA_COOPMAT_FLASH : 0) |
                (!bw.wrong && bw.agreed ? VKA_COOPMAT_BACKWARD : 0);
    if (mm.wrong || fl.wrong || bw.wrong) {
        o->check.state = VKATTN_COOPMAT_FAILED;
    } else if (!o->passed) {
        o->check.state = VKATTN_COOPMAT_NOT_TRIED;
        snprintf(o->check.detail, sizeof o->check.detail,
                 "no tile of its kernels fits this context");
    } else {
        o->check.state = VKATTN_COOPMAT_PASSED;
        char line[160]; /* the detail keeps what fits of it */
        snprintf(line, sizeof line,
                 "%u products, %u attention tiles agree with the scalar kernels, %u backward "
                 "with the CPU answer%s",
                 mm.agreed, fl.agreed, bw.agreed,
                 flash && !fl.agreed ? " (attention: no tile fits)" : "");
        snprintf(o->check.detail, sizeof o->check.detail, "%.*s",
                 (int)sizeof o->check.detail - 1, line);
    }
}

/* The WARN's end for a family that failed: which of its kernels still run. */
static const char *still_running(unsigned passed)
{
    static const char *const says[8] = {
        "the scalar kernels run instead",
        "only its matmul runs",
        "only its attention runs",
        "its matmul and attention run",
        "only its backward runs",
        "its matmul and backward run",
        "its attention and backward run",
        "all its kernels run",
    };
    return says[passed & 7u];
}

/* ------------------------------------------------------------ the cache */

/* What decides an outcome: the device and driver, the context's shape of
 * it (profile, limits, subgroups, 16-bit storage), the family, and the
 * test-only fault. */
typedef struct cache_key {
    char device_name[256];
    char profile[32];
    uint32_t vendor_id, device_id, driver_version, subgroup[3], shared_memory, family;
    bool storage16, subgroups, flash, backward, fault;
} cache_key;

typedef struct cache_entry {
    cache_key key;
    outcome outcome;
} cache_entry;

enum { CACHE_SIZE = 16 };
static cache_entry cache[CACHE_SIZE];
static unsigned cache_used;
static vka_mutex cache_lock;
static vka_once cache_once = VKA_ONCE_INIT;
static bool cache_ready;

static void cache_init(void) { cache_ready = vka_mutex_init(&cache_lock); }

static void key_of(const vkattn_context *ctx, uint32_t family, cache_key *k)
{
    const vkattn_context_info *i = vka_info(ctx);
    memset(k, 0, sizeof *k);
    memcpy(k->device_name, i->device_name, sizeof k->device_name);
    memcpy(k->profile, i->profile, sizeof k->profile);
    k->vendor_id = i->vendor_id;
    k->device_id = i->device_id;
    k->driver_version = i->driver_version;
    k->subgroup[0] = i->subgroup_size;
    k->subgroup[1] = i->min_subgroup_size;
    k->subgroup[2] = i->max_subgroup_size;
    k->shared_memory = i->max_shared_memory;
    k->family = family;
    k->storage16 = i->storage_buffer_16bit;
    k->subgroups = i->subgroup_operations;
    k->flash = vka_coopmat_candidates(ctx, VKA_COOPMAT_FLASH) & family;
    k->backward = vka_coopmat_candidates(ctx, VKA_COOPMAT_BACKWARD) & family;
    k->fault = vka_coopmat_test_fault(ctx);
}

static bool cache_find(const cache_key *k, outcome *o)
{
    bool found = false;
    vka_mutex_lock(&cache_lock);
    for (unsigned i = 0; i < cache_used && !found; i++)
        if (memcmp(&cache[i].key, k, sizeof *k) == 0) {
            *o = cache[i].outcome;
            found = true;
        }
    vka_mutex_unlock(&cache_lock);
    return found;
}

static void cache_put(const cache_key *k, const outcome *o)
{
    vka_mutex_lock(&cache_lock);
    cache_entry *e = &cache[cache_used < CACHE_SIZE ? cache_used++ : CACHE_SIZE - 1];
    e->key = *k;
    e->outcome = *o;
    vka_mutex_unlock(&cache_lock);
}

/* ------------------------------------------------------------ deciding */

void vka_coopmat_decide(vkattn_context *ctx)
{
    if (vka_coopmat_decided(ctx))
        return;
    vka_call_once(&cache_once, cache_init);
    const uint32_t candidates = vka_coopmat_candidates(ctx, VKA_COOPMAT_MATMUL) |
                                vka_coopmat_candidates(ctx, VKA_COOPMAT_FLASH) |
                                vka_coopmat_candidates(ctx, VKA_COOPMAT_BACKWARD);
    for (uint32_t p = 0; p < VKATTN_COOPMAT_FAMILIES; p++) {
        const uint32_t family = vka_coopmat_preference[p];
        if (!(candidates & family))
            continue;
        cache_key key;
        key_of(ctx, family, &key);
        outcome o;
        const bool cached = cache_ready && cache_find(&key, &o);
        if (!cached) {
            test_family(ctx, family, &o);
            if (cache_ready)
                cache_put(&key, &o);
        }
        o.check.cached = cached;
        vka_coopmat_record(ctx, family, &o.check, o.passed);
        if (o.check.state == VKATTN_COOPMAT_FAILED)
            vka_log(ctx, VKATTN_LOG_WARN,
                    "cooperative matrices: the %s family failed its self-test (%s); %s",
                    vka_coopmat_name(family), o.check.detail, still_running(o.passed));
        else if (!cached && o.passed)
            vka_log(ctx, VKATTN_LOG_INFO, "cooperative matrices: the %s family passed its "
                                          "self-test (%s)",
                    vka_coopmat_name(family), o.check.detail);
    }
    vka_coopmat_finish(ctx);
}
