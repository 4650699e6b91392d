/* Hyper-parameter checks of the optimizer step and the MSE loss (one copy for
 * the GPU ops and the CPU references). */
#include "shape/train_shape.h"

#include <math.h>

#include "core/error.h"

/* "fn: params->name is v; must be <rule>" unless ok (written so NaN fails). */
static vkattn_result need(struct vkattn_context *ctx, const char *fn, bool ok, const char *name,
                          float v, const char *rule)
{
    if (ok)
        return VKATTN_SUCCESS;
    return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: params->%s is %g; must be %s", fn,
                    name, (double)v, rule);
}

static bool nonneg(float v) { return v >= 0.0f && isfinite(v); }
static bool unit(float v) { return v >= 0.0f && v < 1.0f; }

vkattn_result vka_optim_check_params(struct vkattn_context *ctx, const char *fn,
                                     const vkattn_optim_params *p)
{
    if (!p)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: params is NULL", fn);
    if (p->algorithm != VKATTN_OPTIM_SGD && p->algorithm != VKATTN_OPTIM_ADAM &&
        p->algorithm != VKATTN_OPTIM_ADAMW)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                        "%s: params->algorithm is %d; not a vkattn_optim_algorithm", fn,
                        (int)p->algorithm);
    vkattn_result r;
    if ((r = need(ctx, fn, nonneg(p->lr), "lr", p->lr, "finite and >= 0")) ||
        (r = need(ctx, fn, nonneg(p->weight_decay), "weight_decay", p->weight_decay,
                  "finite and >= 0")))
        return r;
    if (p->algorithm == VKATTN_OPTIM_SGD) {
        if ((r = need(ctx, fn, nonneg(p->momentum), "momentum", p->momentum,
                      "finite and >= 0")) ||
            (r = need(ctx, fn, isfinite(p->dampening), "dampening", p->dampening, "finite")))
            return r;
        if (p->nesterov && !(p->momentum > 0.0f && p->dampening == 0.0f))
            return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT,
                            "%s: params->nesterov needs momentum > 0 and dampening 0 (momentum "
                            "%g, dampening %g)",
                            fn, (double)p->momentum, (double)p->dampening);
        return VKATTN_SUCCESS;
    }
    if ((r = need(ctx, fn, unit(p->beta1), "beta1", p->beta1, "in [0, 1)")) ||
        (r = need(ctx, fn, unit(p->beta2), "beta2", p->beta2, "in [0, 1)")) ||
        (r = need(ctx, fn, nonneg(p->eps), "eps", p->eps, "finite and >= 0")))
        return r;
    return VKATTN_SUCCESS;
}

uint32_t vka_optim_state_per_element(const vkattn_optim_params *p)
{
    if (p->algorithm != VKATTN_OPTIM_SGD)
        return 2;
    return p->momentum != 0.0f ? 1 : 0;
}

vkattn_result vka_mse_check_params(struct vkattn_context *ctx, const char *fn,
                                   const vkattn_mse_params *p)
{
    if (!p)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: params is NULL", fn);
    if (!p->count)
        return vka_fail(ctx, VKATTN_ERROR_INVALID_ARGUMENT, "%s: params->count is 0; must be >= 1",
                        fn);
    return need(ctx, fn, isfinite(p->loss_scale), "loss_scale", p->loss_scale, "finite");
}
