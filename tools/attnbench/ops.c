/* The table of ops and layers in this build. */
#include "ops.h"

#include <stdio.h>
#include <string.h>

static const ab_op *const OPS[] = {
    &ab_op_matmul,
    &ab_op_softmax,
    &ab_op_additive,
    &ab_op_heads,
    &ab_op_dropout,
    &ab_op_sdpa,
    &ab_op_decode,
    &ab_op_attention,
    &ab_op_additive_attention,
    &ab_op_bahdanau,
    &ab_op_mha,
    &ab_op_gqa,
    NULL,
};

const ab_op *const *ab_all_ops(void) { return OPS; }

double ab_op_bound(const ab_op *op, vkattn_dtype dtype, bool grads)
{
    if (dtype == VKATTN_DTYPE_BF16)
        return grads ? op->bound_backward_bf16 : op->bound_bf16;
    if (dtype == VKATTN_DTYPE_F16)
        return grads ? op->bound_backward_fp16 : op->bound_fp16;
    return grads && op->bound_backward > 0 ? op->bound_backward : op->bound;
}

const ab_op *ab_find_op(const char *name)
{
    for (const ab_op *const *op = OPS; *op; op++)
        if (!strcmp((*op)->name, name))
            return *op;
    return NULL;
}

int ab_attention_dims(const char *op, const ab_args *a, uint32_t default_heads, ab_dims *d)
{
    d->batch = (a->given & AB_F_BATCH) ? a->batch : 1;
    d->heads = (a->given & AB_F_HEADS) ? a->heads : default_heads;
    d->tq = (a->given & AB_F_TQ) ? a->tq : 512;
    d->tv = (a->given & AB_F_TV) ? a->tv : d->tq;
    d->dk = (a->given & AB_F_DK) ? a->dk : 64;
    d->dv = (a->given & AB_F_DV) ? a->dv : d->dk;
    if (!d->batch || !d->heads || !d->tq || !d->tv || !d->dk || !d->dv) {
        fprintf(stderr, "attnbench: %s: --batch, --heads, --tq, --tv, --dk and --dv must be >= 1\n",
                op);
        return ATTNBENCH_EXIT_USAGE;
    }
    return ATTNBENCH_EXIT_OK;
}
