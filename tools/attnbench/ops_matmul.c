/* attnbench bench matmul: C[b] = A[b] @ op(B[b]) with packed operands; with
 * --dtype f16|bf16 (--fp16) A, B and C are tensors of that type (the inputs
 * read back after the upload rounded them, so the f32 reference sees exactly
 * what the GPU reads); with --backward, dA and dB from a random dC
 * (vkattn/matmul_backward.h), all of the dtype too. */
#include "bounds.h"
#include "common.h"
#include "ops.h"
#include "sizes.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct matmul_state {
    vkattn_matmul_params p;
    float *a, *b, *dc;
    size_t na, nb, nc;
    vkattn_tensor *ta, *tb, *tc;
    vkattn_tensor *tga, *tgb; /* --backward: tc holds dC */
    vkattn_context *ctx;
    vkattn_dtype dtype; /* --dtype: A, B, C (dC, dA, dB) */
    bool backward;
} matmul_state;

static vkattn_result tensor3(vkattn_context *ctx, uint32_t d0, uint32_t d1, uint32_t d2,
                             vkattn_dtype dtype, vkattn_tensor **out)
{
    vkattn_tensor_desc desc = {.rank = 3, .dims = {d0, d1, d2}, .dtype = dtype};
    return vkattn_tensor_create(ctx, &desc, out);
}

static void matmul_destroy(void *state)
{
    matmul_state *s = state;
    if (!s)
        return;
    vkattn_tensor_destroy(s->ta);
    vkattn_tensor_destroy(s->tb);
    vkattn_tensor_destroy(s->tc);
    vkattn_tensor_destroy(s->tga);
    vkattn_tensor_destroy(s->tgb);
    free(s->a), free(s->b), free(s->dc);
    free(s);
}

/* The sizes with matmul's defaults (512 each, batch 1). */
static void matmul_dims(const ab_args *a, uint32_t *batch, uint32_t *m, uint32_t *n, uint32_t *k)
{
    *batch = (a->given & AB_F_BATCH) ? a->batch : 1;
    *m = (a->given & AB_F_M) ? a->m : 512;
    *n = (a->given & AB_F_N) ? a->n : 512;
    *k = (a->given & AB_F_K) ? a->k : 512;
}

/* A, B and C (and dC, dA, dB, of the same sizes) must be countable, before a
 * context is made. */
static int matmul_check_args(const ab_args *a)
{
    uint32_t batch, m, n, k;
    matmul_dims(a, &batch, &m, &n, &k);
    const ab_factor B = {"--batch", batch}, M = {"--m", m}, N = {"--n", n}, K = {"--k", k};
    const bool fit = AB_FITS("matmul", "A", B, M, K) && AB_FITS("matmul", "B", B, K, N) &&
                     AB_FITS("matmul", "C", B, M, N);
    return fit ? ATTNBENCH_EXIT_OK : ATTNBENCH_EXIT_USAGE;
}

/* A host array of n floats uniform in [-1, 1), uploaded to t and, for a
 * 16-bit t, read back: the values the library rounded them to. */
static vkattn_result host_input(ab_rng *rng, size_t n, vkattn_tensor *t, float **out)
{
    if (!(*out = ab_floats(n)))
        return VKATTN_ERROR_OUT_OF_HOST_MEMORY;
    ab_fill_uniform(rng, *out, n, -1, 1);
    vkattn_result r = vkattn_tensor_upload(t, *out, 0, n);
    if (r == VKATTN_SUCCESS && vkattn_tensor_get_info(t).desc.dtype != VKATTN_DTYPE_F32)
        r = vkattn_tensor_download(t, *out, 0, n);
    return r;
}

static int matmul_setup(vkattn_context *ctx, const ab_args *a, void **state, ab_op_info *info)
{
    matmul_state *s = calloc(1, sizeof *s);
    if (!s)
        return ab_report(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "matmul setup");
    *state = s;
    s->ctx = ctx;
    uint32_t batch, m, n, k;
    matmul_dims(a, &batch, &m, &n, &k);
    if (!m || !n || !k || !batch) {
        fprintf(stderr, "attnbench: matmul: --batch, --m, --n and --k must be >= 1\n");
        return ATTNBENCH_EXIT_USAGE;
    }
    if (matmul_check_args(a)) /* bench checked them; the counts below rely on it */
        return ATTNBENCH_EXIT_USAGE;
    s->p = (vkattn_matmul_params){
        .batch = batch, .m = m, .n = n, .k = k, .transpose_b = a->transpose_b,
        .a = {.batch_stride = (uint64_t)m * k},
        .b = {.batch_stride = (uint64_t)k * n},
    };
    s->na = (size_t)batch * m * k;
    s->nb = (size_t)batch * k * n;
    s->nc = (size_t)batch * m * n;
    s->dtype = a->dtype;
    s->backward = a->backward;
    /* the tensors first: the library checks the sizes against the device
     * before any host array is allocated and filled */
    vkattn_result r;
    if ((r = tensor3(ctx, batch, m, k, s->dtype, &s->ta)) ||
        (r = tensor3(ctx, batch, a->transpose_b ? n : k, a->transpose_b ? k : n, s->dtype,
                     &s->tb)) ||
        (r = tensor3(ctx, batch, m, n, s->dtype, &s->tc)))
        return ab_setup_refused(ctx, r, "matmul", a, "matmul: creating tensors");
    if (s->backward &&
        ((r = tensor3(ctx, batch, m, k, s->dtype, &s->tga)) ||
         (r = tensor3(ctx, batch, a->transpose_b ? n : k, a->transpose_b ? k : n, s->dtype,
                      &s->tgb))))
        return ab_setup_refused(ctx, r, "matmul", a, "matmul: creating gradient tensors");
    ab_rng rng = {a->seed};
    if ((r = host_input(&rng, s->na, s->ta, &s->a)) || (r = host_input(&rng, s->nb, s->tb, &s->b)) ||
        (s->backward && (r = host_input(&rng, s->nc, s->tc, &s->dc))))
        return ab_report(ctx, r, "matmul: uploading the inputs");

    const double el = s->dtype != VKATTN_DTYPE_F32 ? 2.0 : 4.0; /* bytes per element */
    *info = (ab_op_info){
        .matmul_shape = true, .batch = batch, .m = m, .n = n, .k = k,
        .flops = 2.0 * batch * m * n * k,
        .bytes = el * ((double)s->na + s->nb + s->nc),
    };
    if (s->backward) { /* two products of the forward's size; A, B, dC read, dA, dB written */
        info->backward = true;
        info->flops = 4.0 * batch * m * n * k;
        info->bytes = el * (2.0 * s->na + 2.0 * s->nb + s->nc);
    }
    return ATTNBENCH_EXIT_OK;
}

static vkattn_matmul_backward_io backward_io(const matmul_state *s)
{
    return (vkattn_matmul_backward_io){.a = s->ta, .b = s->tb, .grad_c = s->tc,
                                       .grad_a = s->tga, .grad_b = s->tgb};
}

static vkattn_result matmul_record(void *state, VkCommandBuffer cmd)
{
    matmul_state *s = state;
    if (s->backward) {
        vkattn_matmul_backward_io io = backward_io(s);
        return vkattn_matmul_backward_record(s->ctx, cmd, &s->p, &io);
    }
    vkattn_matmul_io io = {.a = s->ta, .b = s->tb, .c = s->tc};
    return vkattn_matmul_record(s->ctx, cmd, &s->p, &io);
}

static vkattn_result matmul_prepare(void *state)
{
    matmul_state *s = state;
    if (s->backward) {
        vkattn_matmul_backward_io io = backward_io(s);
        return vkattn_matmul_backward_record(s->ctx, VKATTN_PREPARE, &s->p, &io);
    }
    vkattn_matmul_io io = {.a = s->ta, .b = s->tb, .c = s->tc};
    return vkattn_matmul_record(s->ctx, VKATTN_PREPARE, &s->p, &io);
}

/* --backward: dA and dB against vkattn_reference_matmul_backward. */
static int backward_check(vkattn_context *ctx, matmul_state *s, double *err)
{
    float *ga = ab_floats(s->na), *gb = ab_floats(s->nb);
    float *ra = ab_floats(s->na), *rb = ab_floats(s->nb);
    int status = ATTNBENCH_EXIT_CHECK;
    vkattn_result r = VKATTN_SUCCESS;
    if (!ga || !gb || !ra || !rb)
        goto done;
    if ((r = vkattn_tensor_fill(s->tga, NAN)) || (r = vkattn_tensor_fill(s->tgb, NAN)) ||
        (r = ab_run_once(ctx, matmul_record, s)) ||
        (r = vkattn_tensor_download(s->tga, ga, 0, s->na)) ||
        (r = vkattn_tensor_download(s->tgb, gb, 0, s->nb))) {
        status = ab_report(ctx, r, "matmul --backward");
        goto done;
    }
    if ((r = vkattn_reference_matmul_backward(&s->p, s->a, s->b, s->dc, ra, rb, NULL))) {
        status = ab_report(NULL, r, "matmul backward reference");
        goto done;
    }
    double ea = ab_max_rel_err(ga, ra, s->na), eb = ab_max_rel_err(gb, rb, s->nb);
    *err = ea > eb || isnan(ea) ? ea : eb;
    status = ATTNBENCH_EXIT_OK;
done:
    free(ga), free(gb), free(ra), free(rb);
    return status;
}

static int matmul_check(vkattn_context *ctx, void *state, double *err)
{
    matmul_state *s = state;
    if (s->backward)
        return backward_check(ctx, s, err);
    float *got = ab_floats(s->nc), *ref = ab_floats(s->nc);
    int status = ATTNBENCH_EXIT_CHECK;
    vkattn_result r = VKATTN_SUCCESS;
    if (!got || !ref)
        goto done;
    if ((r = vkattn_tensor_fill(s->tc, NAN)) || (r = ab_run_once(ctx, matmul_record, s)) ||
        (r = vkattn_tensor_download(s->tc, got, 0, s->nc))) {
        status = ab_report(ctx, r, "matmul");
        goto done;
    }
    if ((r = vkattn_reference_matmul(&s->p, NULL, s->a, s->b, NULL, ref))) {
        status = ab_report(NULL, r, "matmul reference");
        goto done;
    }
    *err = ab_max_rel_err(got, ref, s->nc);
    status = ATTNBENCH_EXIT_OK;
done:
    free(got), free(ref);
    return status;
}

const ab_op ab_op_matmul = {
    .name = "matmul",
    .summary = "batched C = A @ B (--transpose-b: A @ B^T; --backward: dA, dB)",
    .flags = AB_F_BATCH | AB_F_M | AB_F_N | AB_F_K | AB_F_TRANSPOSE_B | AB_F_FP16 | AB_F_BF16 |
             AB_F_BACKWARD,
    .bound = AB_BOUND_MATMUL,
    .bound_fp16 = AB_BOUND_MATMUL_FP16,
    .bound_backward_fp16 = AB_BOUND_MATMUL_FP16, /* dA, dB each rounded once, as C */
    .bound_bf16 = AB_BOUND_MATMUL_BF16,
    .bound_backward_bf16 = AB_BOUND_MATMUL_BF16,
    .setup = matmul_setup,
    .record = matmul_record,
    .prepare = matmul_prepare,
    .check = matmul_check,
    .destroy = matmul_destroy,
    .check_args = matmul_check_args,
};
