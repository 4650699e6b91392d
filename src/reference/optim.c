/* CPU reference of the optimizer step: PyTorch's SGD, Adam and AdamW update
 * formulas (vkattn/optim.h) in double, one f32 rounding per value stored. */
#include "vkattn/reference_backward.h"

#include <math.h>

#include "core/error.h"
#include "reference/ref_internal.h"
#include "shape/train_shape.h"

static void sgd(const vkattn_optim_params *p, size_t n, float *param, const float *grad,
                float *buf, bool first)
{
    const double lr = p->lr, wd = p->weight_decay, mu = p->momentum, damp = p->dampening;
    for (size_t i = 0; i < n; i++) {
        double g = (double)grad[i] + wd * param[i];
        if (mu != 0.0) {
            const double b = first ? g : mu * buf[i] + (1.0 - damp) * g;
            buf[i] = (float)b;
            g = p->nesterov ? g + mu * b : b;
        }
        param[i] = (float)(param[i] - lr * g);
    }
}

static void adam(const vkattn_optim_params *p, size_t n, float *param, const float *grad,
                 float *state, double t)
{
    const double lr = p->lr, wd = p->weight_decay, b1 = p->beta1, b2 = p->beta2, eps = p->eps;
    const double bc1 = 1.0 - pow(b1, t), bc2 = 1.0 - pow(b2, t);
    const bool decoupled = p->algorithm == VKATTN_OPTIM_ADAMW;
    float *m = state, *v = state + n;
    for (size_t i = 0; i < n; i++) {
        double x = param[i], g = grad[i];
        if (decoupled)
            x *= 1.0 - lr * wd;
        else
            g += wd * x;
        const double mi = b1 * m[i] + (1.0 - b1) * g;
        const double vi = b2 * v[i] + (1.0 - b2) * g * g;
        m[i] = (float)mi;
        v[i] = (float)vi;
        param[i] = (float)(x - lr / bc1 * mi / (sqrt(vi) / sqrt(bc2) + eps));
    }
}

vkattn_result vkattn_reference_optim_step(const vkattn_optim_params *p, size_t n, float *param,
                                          const float *grad, float *state, float *step)
{
    vkattn_result r;
    if ((r = vka_optim_check_params(NULL, __func__, p)))
        return r;
    if (!n)
        return vka_fail(NULL, VKATTN_ERROR_INVALID_ARGUMENT, "%s: n is 0; must be >= 1", __func__);
    const uint32_t per = vka_optim_state_per_element(p);
    if ((r = vka_ref_require_ptr(__func__, "param", param)) ||
        (r = vka_ref_require_ptr(__func__, "grad", grad)) ||
        (r = vka_ref_require_ptr(__func__, "step", step)) ||
        (per && (r = vka_ref_require_ptr(__func__, "state", state))))
        return r;
    const uint64_t dims[2] = {n, per ? per : 1};
    if ((r = vka_ref_count(__func__, "the state", dims, 2, NULL)))
        return r;
    /* The step tensor advances as on the GPU; the update reads t. */
    const double t = (double)step[0] + 1.0;
    const bool sgd_algo = p->algorithm == VKATTN_OPTIM_SGD;
    step[0] = (float)t;
    step[1] = sgd_algo ? 0.0f : (float)pow(p->beta1, t);
    step[2] = sgd_algo ? 0.0f : (float)pow(p->beta2, t);
    if (sgd_algo)
        sgd(p, n, param, grad, state, t == 1.0);
    else
        adam(p, n, param, grad, state, t);
    return VKATTN_SUCCESS;
}
