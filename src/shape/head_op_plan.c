/* The head ops' params, checked and resolved once (head_op_plan.h). */
#include "shape/head_op_plan.h"

#include "core/check.h"
#include "core/error.h"
#include "shape/open_model_check.h"

vkattn_result vka_head_op_plan_make(struct vkattn_context *ctx, const char *caller,
                                    const vkattn_head_op_params *p, vka_head_op_plan *s)
{
    if (!p)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: params is NULL", caller);
    if (p->op < VKATTN_HEAD_RMS_NORM || p->op > VKATTN_HEAD_ROPE_INVERSE)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: params->op is %d; must be VKATTN_HEAD_RMS_NORM, "
                        "VKATTN_HEAD_RMS_NORM_BACKWARD, VKATTN_HEAD_ROPE or "
                        "VKATTN_HEAD_ROPE_INVERSE",
                        caller, (int)p->op);
    const struct {
        const char *name;
        uint32_t v;
    } sizes[] = {{"params->batch", p->batch},
                 {"params->heads", p->heads},
                 {"params->seq", p->seq},
                 {"params->dim", p->dim}};
    for (int i = 0; i < 4; i++)
        if (!sizes[i].v)
            return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: %s is 0; must be >= 1",
                            caller, sizes[i].name);
    vka_head_op_plan o = {
        .op = p->op, .batch = p->batch, .heads = p->heads, .seq = p->seq, .dim = p->dim,
        .norm = p->op == VKATTN_HEAD_RMS_NORM || p->op == VKATTN_HEAD_RMS_NORM_BACKWARD,
        .backward = p->op == VKATTN_HEAD_RMS_NORM_BACKWARD,
        .rope = p->op == VKATTN_HEAD_ROPE || p->op == VKATTN_HEAD_ROPE_INVERSE,
        .inverse = p->op == VKATTN_HEAD_ROPE_INVERSE,
    };
    const uint64_t dims[4] = {p->batch, p->heads, p->seq, p->dim};
    if (!vka_product_u64(dims, 4, &o.n))
        return vka_fail(ctx, VKATTN_ERROR_SIZE_OVERFLOW,
                        "%s: params->batch * heads * seq * dim (%u * %u * %u * %u) overflows",
                        caller, p->batch, p->heads, p->seq, p->dim);
    o.n_positions = (uint64_t)p->batch * p->seq;
    vkattn_result r;
    if (o.norm && (r = vka_check_norm_epsilon(ctx, caller, "params->epsilon", p->epsilon, &o.eps)))
        return r;
    if (o.rope && (r = vka_resolve_rope(ctx, caller, "params", &p->rope, p->dim, "params->dim",
                                        &o.rope_params)))
        return r;
    *s = o;
    return VKATTN_SUCCESS;
}
