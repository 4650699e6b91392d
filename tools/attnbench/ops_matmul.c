/* attnbench bench matmul: C[b] = A[b] @ op(B[b]) with packed operands. */
#include "bounds.h"
#include "common.h"
#include "ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct matmul_state {
    vkattn_matmul_params p;
    float *a, *b;
    size_t na, nb, nc;
    vkattn_tensor *ta, *tb, *tc;
    vkattn_context *ctx;
} matmul_state;

static void matmul_destroy(void *state)
{
    matmul_state *s = state;
    if (!s)
        return;
    vkattn_tensor_destroy(s->ta);
    vkattn_tensor_destroy(s->tb);
    vkattn_tensor_destroy(s->tc);
    free(s->a), free(s->b);
    free(s);
}

static int matmul_setup(vkattn_context *ctx, const ab_args *a, void **state, ab_op_info *info)
{
    matmul_state *s = calloc(1, sizeof *s);
    if (!s)
        return ab_report(ctx, VKATTN_ERROR_OUT_OF_HOST_MEMORY, "matmul setup");
    *state = s;
    s->ctx = ctx;
    uint32_t batch = a->batch ? a->batch : 1;
    uint32_t m = (a->given & AB_F_M) ? a->m : 512;
    uint32_t n = (a->given & AB_F_N) ? a->n : 512;
    uint32_t k = (a->given & AB_F_K) ? a->k : 512;
    if (!m || !n || !k || ((a->given & AB_F_BATCH) && !a->batch)) {
        fprintf(stderr, "attnbench: matmul: --batch, --m, --n and --k must be >= 1\n");
        return ATTNBENCH_EXIT_USAGE;
    }
    s->p = (vkattn_matmul_params){
        .batch = batch, .m = m, .n = n, .k = k, .transpose_b = a->transpose_b,
        .a = {.batch_stride = (uint64_t)m * k},
        .b = {.batch_stride = (uint64_t)k * n},
    };
    s->na = (size_t)batch * m * k;
    s->nb = (size_t)batch * k * n;
    s->nc = (size_t)batch * m * n;
    ab_rng rng = {a->seed};
    if (!(s->a = ab_floats(s->na)) || !(s->b = ab_floats(s->nb)))
        return ATTNBENCH_EXIT_CHECK;
    ab_fill_uniform(&rng, s->a, s->na, -1, 1);
    ab_fill_uniform(&rng, s->b, s->nb, -1, 1);
    vkattn_result r;
    if ((r = ab_tensor4(ctx, batch, m, k, 0, s->a, &s->ta)) ||
        (r = ab_tensor4(ctx, batch, a->transpose_b ? n : k, a->transpose_b ? k : n, 0, s->b, &s->tb)) ||
        (r = ab_tensor4(ctx, batch, m, n, 0, NULL, &s->tc)))
        return ab_report(ctx, r, "matmul: creating tensors");

    *info = (ab_op_info){
        .matmul_shape = true, .batch = batch, .m = m, .n = n, .k = k,
        .flops = 2.0 * batch * m * n * k,
        .bytes = 4.0 * ((double)s->na + s->nb + s->nc),
    };
    return ATTNBENCH_EXIT_OK;
}

static vkattn_result matmul_record(void *state, VkCommandBuffer cmd)
{
    matmul_state *s = state;
    vkattn_matmul_io io = {.a = s->ta, .b = s->tb, .c = s->tc};
    return vkattn_matmul_record(s->ctx, cmd, &s->p, &io);
}

static vkattn_result matmul_prepare(void *state)
{
    matmul_state *s = state;
    vkattn_matmul_io io = {.a = s->ta, .b = s->tb, .c = s->tc};
    return vkattn_matmul_prepare(s->ctx, &s->p, &io);
}

static int matmul_check(vkattn_context *ctx, void *state, double *err)
{
    matmul_state *s = state;
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
    if ((r = vkattn_reference_matmul(&s->p, s->a, s->b, NULL, ref))) {
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
    .summary = "batched C = A @ B (--transpose-b: A @ B^T)",
    .flags = AB_F_BATCH | AB_F_M | AB_F_N | AB_F_K | AB_F_TRANSPOSE_B,
    .bound = AB_BOUND_MATMUL,
    .setup = matmul_setup,
    .record = matmul_record,
    .prepare = matmul_prepare,
    .check = matmul_check,
    .destroy = matmul_destroy,
};
